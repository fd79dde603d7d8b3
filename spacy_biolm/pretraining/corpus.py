"""Tokenise pretraining text once into packed id sequences on disk, then stream them.

Sentences of a document are packed greedily into sequences ``[CLS] s1 s2 ... [SEP]`` of at most
``max_seq_length`` ids; a new document always starts a new sequence, and a sentence longer than
one sequence is cut into consecutive pieces (nothing is dropped). The ids live in a flat binary
file read through ``numpy.memmap``, so memory does not grow with the corpus.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Sequence

import numpy as np

from ..errors import PretrainingDataError

__all__ = ["PackedCorpus", "iter_text_documents", "pack_documents", "build_packed_corpus"]

META_FILE = "meta.json"
IDS_FILE = "ids.bin"


def iter_text_documents(path: Path) -> Iterator[List[str]]:
    """Documents (lists of sentences) of a file in the pretraining text format."""
    path = Path(path)
    if not path.is_file():
        raise PretrainingDataError(f"Pretraining text not found: {path}")
    doc: List[str] = []
    with path.open(encoding="utf8") as f:
        for line in f:
            line = line.strip()
            if line:
                doc.append(line)
            elif doc:
                yield doc
                doc = []
    if doc:
        yield doc


def pack_documents(
    docs_ids: Iterator[List[List[int]]], max_seq_length: int, cls_id: int, sep_id: int
) -> Iterator[List[int]]:
    """Pack tokenised documents (lists of sentence id lists) into full-length sequences."""
    room = max_seq_length - 2
    if room < 1:
        raise ValueError("max_seq_length must be at least 3")
    for sentences in docs_ids:
        current: List[int] = []
        for ids in sentences:
            # Long sentences are cut, never dropped.
            for start in range(0, max(len(ids), 1), room):
                piece = ids[start : start + room]
                if not piece:
                    continue
                if len(current) + len(piece) > room and current:
                    yield [cls_id] + current + [sep_id]
                    current = []
                current.extend(piece)
        if current:
            yield [cls_id] + current + [sep_id]


@dataclass
class PackedCorpus:
    """Fixed-length id sequences (right-padded with ``pad_id``) memory-mapped from disk."""

    path: Path
    ids: np.ndarray  # [n_sequences, max_seq_length], a read-only memmap
    pad_id: int
    vocab_size: int

    @classmethod
    def load(cls, path: Path) -> "PackedCorpus":
        path = Path(path)
        meta_path = path / META_FILE
        if not meta_path.is_file():
            raise PretrainingDataError(
                f"No packed corpus at {path} (missing {META_FILE}); build it with build_packed_corpus"
            )
        meta = json.loads(meta_path.read_text(encoding="utf8"))
        n, length = meta["n_sequences"], meta["max_seq_length"]
        if n == 0:
            raise PretrainingDataError(f"Packed corpus at {path} is empty")
        ids = np.memmap(path / IDS_FILE, dtype=meta["dtype"], mode="r", shape=(n, length))
        return cls(path=path, ids=ids, pad_id=meta["pad_id"], vocab_size=meta["vocab_size"])

    def __len__(self) -> int:
        return self.ids.shape[0]

    @property
    def max_seq_length(self) -> int:
        return self.ids.shape[1]

    def n_tokens(self) -> int:
        """Non-padding ids in the corpus (streamed in blocks)."""
        total = 0
        for start in range(0, len(self), 65536):
            total += int((self.ids[start : start + 65536] != self.pad_id).sum())
        return total


def build_packed_corpus(
    texts: Sequence[Path],
    tokenizer,
    output_dir: Path,
    max_seq_length: int,
    batch_docs: int = 256,
) -> PackedCorpus:
    """Tokenise ``texts`` (pretraining text format) with a fast HF tokenizer into ``output_dir``."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    dtype = np.uint16 if len(tokenizer) <= np.iinfo(np.uint16).max else np.int32
    pad_id = tokenizer.pad_token_id
    n_sequences = 0

    def tokenised_docs() -> Iterator[List[List[int]]]:
        batch: List[List[str]] = []
        for text in texts:
            for doc in iter_text_documents(Path(text)):
                batch.append(doc)
                if len(batch) >= batch_docs:
                    yield from _tokenise_batch(tokenizer, batch)
                    batch = []
        if batch:
            yield from _tokenise_batch(tokenizer, batch)

    with (output_dir / IDS_FILE).open("wb") as out:
        for seq in pack_documents(
            tokenised_docs(), max_seq_length, tokenizer.cls_token_id, tokenizer.sep_token_id
        ):
            row = np.full(max_seq_length, pad_id, dtype=dtype)
            row[: len(seq)] = seq
            out.write(row.tobytes())
            n_sequences += 1
    if n_sequences == 0:
        raise PretrainingDataError(f"No text to pretrain on in {[str(t) for t in texts]}")
    meta = {
        "n_sequences": n_sequences,
        "max_seq_length": max_seq_length,
        "dtype": np.dtype(dtype).name,
        "pad_id": pad_id,
        "vocab_size": len(tokenizer),
        "sources": [str(t) for t in texts],
    }
    (output_dir / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf8")
    return PackedCorpus.load(output_dir)


def _tokenise_batch(tokenizer, docs: List[List[str]]) -> Iterator[List[List[int]]]:
    flat = [s for doc in docs for s in doc]
    # verbose=False: long sentences are expected here; packing cuts them, the model never sees them whole.
    encoded = tokenizer(flat, add_special_tokens=False, verbose=False)["input_ids"]
    i = 0
    for doc in docs:
        yield encoded[i : i + len(doc)]
        i += len(doc)
