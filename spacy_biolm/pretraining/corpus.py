"""Tokenise pretraining text once into packed id shards on disk, then stream them.

Sentences of a document are packed greedily into sequences ``[CLS] s1 s2 ... [SEP]`` of at most
``max_seq_length`` ids; a new document always starts a new sequence, and a sentence longer than
one sequence is cut into consecutive pieces (nothing is dropped). ALBERT's sentence-order
objective packs segment pairs instead (``[CLS] A [SEP] B [SEP]``) and also stores len(A).

The ids are written in shards of fixed-length rows (``ids-00000.bin``, ...) read through
``numpy.memmap``, and batches are drawn by :func:`batch_indices`, a pseudo-random permutation
computed per index: neither building nor training holds anything proportional to the corpus in
memory, so a 10x larger corpus needs no more RAM.
"""

import json
import lzma
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import PretrainingDataError
from .sources import describe_sources, open_text

__all__ = [
    "PackedCorpus",
    "iter_text_documents",
    "pack_documents",
    "build_packed_corpus",
    "batch_indices",
    "permute_indices",
]

META_FILE = "meta.json"
FORMAT_VERSION = 2
# Rows per shard: 64k rows of 128 uint16 ids is a 16 MiB file.
DEFAULT_SHARD_ROWS = 65536

# A packed row: ids, or (ids, length of the first segment) for segment-pair packing.
PackedRow = Union[List[int], Tuple[List[int], int]]
Packer = Callable[[Iterator[List[List[int]]]], Iterator[PackedRow]]


def iter_text_documents(path: Path) -> Iterator[List[str]]:
    """Documents (lists of sentences) of a file in the pretraining text format, plain or
    ``.xz``-compressed, read streamed."""
    path = Path(path)
    doc: List[str] = []
    with open_text(path) as f:
        try:
            for line in f:
                line = line.strip()
                if line:
                    doc.append(line)
                elif doc:
                    yield doc
                    doc = []
        except (UnicodeDecodeError, lzma.LZMAError, EOFError) as err:
            raise PretrainingDataError(f"{path}: unreadable pretraining text ({err})") from err
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


def permute_indices(positions: np.ndarray, n: int, key: int, rounds: int = 4) -> np.ndarray:
    """A pseudo-random permutation of ``range(n)`` evaluated at ``positions`` only.

    A Feistel network over the smallest even power of two >= n is a bijection; positions that
    land outside ``range(n)`` are pushed through it again ("cycle walking") until they fall
    inside, which keeps it a bijection of ``range(n)``. Memory is O(len(positions)), whatever n.
    """
    if n <= 1:
        return np.zeros_like(np.asarray(positions, dtype=np.uint64))
    half_bits = max(1, (int(n - 1).bit_length() + 1) // 2)
    half_mask = np.uint64((1 << half_bits) - 1)
    keys = [np.uint64(_mix64(key * 1000003 + r)) for r in range(rounds)]
    shift = np.uint64(half_bits)

    def encrypt(x: np.ndarray) -> np.ndarray:
        left, right = x >> shift, x & half_mask
        for k in keys:
            left, right = right, left ^ (_mix64_array(right ^ k) & half_mask)
        return (left << shift) | right

    out = encrypt(np.asarray(positions, dtype=np.uint64))
    outside = out >= np.uint64(n)
    while outside.any():
        out[outside] = encrypt(out[outside])
        outside = out >= np.uint64(n)
    return out


def _mix64(value: int) -> int:
    """splitmix64 finaliser on a Python int (round keys)."""
    z = (value + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def _mix64_array(z: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, vectorised (uint64 arithmetic wraps, as intended)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def batch_indices(n_items: int, batch_size: int, step: int, seed: int) -> np.ndarray:
    """Rows of the ``step``-th batch. Every epoch is its own seeded permutation, so any step is
    reproducible from (step, seed) alone (a resumed run sees exactly the batches it would have
    seen), and nothing of size ``n_items`` is ever allocated."""
    per_epoch = max(1, n_items // batch_size)  # the ragged tail of each epoch is skipped
    epoch, offset = divmod(step, per_epoch)
    start = offset * batch_size
    positions = np.arange(start, min(start + batch_size, n_items), dtype=np.uint64)
    return np.sort(permute_indices(positions, n_items, key=_mix64(seed) ^ epoch)).astype(np.int64)


@dataclass
class PackedCorpus:
    """Fixed-length id rows (right-padded with ``pad_id``) memory-mapped from shards on disk."""

    path: Path
    shards: List[np.ndarray]  # [rows, max_seq_length] read-only memmaps
    pad_id: int
    vocab_size: int
    n_tokens: int
    max_seq_length: int
    # Per shard: length of the first segment ([CLS] A [SEP] counted) of each row, for
    # segment-pair corpora; None for plain sequences.
    segment_shards: Optional[List[np.ndarray]] = None
    _offsets: np.ndarray = field(default=None, repr=False)

    def __post_init__(self):
        self._offsets = np.cumsum([0] + [len(s) for s in self.shards])

    @classmethod
    def load(cls, path: Path) -> "PackedCorpus":
        path = Path(path)
        meta_path = path / META_FILE
        if not meta_path.is_file():
            raise PretrainingDataError(
                f"No packed corpus at {path} (missing {META_FILE}); build it with build_packed_corpus"
            )
        meta = json.loads(meta_path.read_text(encoding="utf8"))
        if meta.get("format") != FORMAT_VERSION:
            raise PretrainingDataError(f"Packed corpus at {path} has an old format; rebuild it")
        if meta["n_sequences"] == 0:
            raise PretrainingDataError(f"Packed corpus at {path} is empty")
        length = meta["max_seq_length"]
        shards = [
            np.memmap(path / s["ids"], dtype=meta["dtype"], mode="r", shape=(s["rows"], length))
            for s in meta["shards"]
        ]
        segments = None
        if meta.get("segment_pairs"):
            segments = [
                np.memmap(path / s["len_a"], dtype=np.uint16, mode="r", shape=(s["rows"],))
                for s in meta["shards"]
            ]
        return cls(
            path=path,
            shards=shards,
            pad_id=meta["pad_id"],
            vocab_size=meta["vocab_size"],
            n_tokens=meta["n_tokens"],
            max_seq_length=length,
            segment_shards=segments,
        )

    def __len__(self) -> int:
        return int(self._offsets[-1])

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """Copy of the given rows, ``[len(rows), max_seq_length]``."""
        return self._gather(self.shards, rows)

    def first_segment_lengths(self, rows: np.ndarray) -> np.ndarray:
        """len([CLS] A [SEP]) of the given rows of a segment-pair corpus."""
        if self.segment_shards is None:
            raise PretrainingDataError(f"Corpus at {self.path} was not packed as segment pairs")
        return self._gather(self.segment_shards, rows).astype(np.int64)

    def _gather(self, shards: List[np.ndarray], rows: np.ndarray) -> np.ndarray:
        """Global ``rows`` of per-shard arrays, read shard by shard."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"Row out of range for a corpus of {len(self)} sequences")
        shard_of = np.searchsorted(self._offsets, rows, side="right") - 1
        local = rows - self._offsets[shard_of]
        out = np.empty((len(rows),) + shards[0].shape[1:], dtype=shards[0].dtype)
        for shard in np.unique(shard_of):
            where = shard_of == shard
            out[where] = shards[shard][local[where]]
        return out


class _ShardWriter:
    """Streams fixed-length rows into numbered shard files."""

    def __init__(self, output_dir: Path, max_seq_length: int, dtype, pad_id: int, shard_rows: int,
                 segment_pairs: bool):
        self.output_dir, self.length, self.dtype, self.pad_id = output_dir, max_seq_length, dtype, pad_id
        self.shard_rows, self.segment_pairs = shard_rows, segment_pairs
        self.shards: List[dict] = []
        self.n_rows = self.n_tokens = 0
        self._ids = self._len_a = None
        self._rows_in_shard = 0

    def _open_shard(self) -> None:
        index = len(self.shards)
        entry = {"ids": f"ids-{index:05d}.bin", "rows": 0}
        self._ids = (self.output_dir / entry["ids"]).open("wb")
        if self.segment_pairs:
            entry["len_a"] = f"len_a-{index:05d}.bin"
            self._len_a = (self.output_dir / entry["len_a"]).open("wb")
        self.shards.append(entry)
        self._rows_in_shard = 0

    def write(self, ids: List[int], len_a: Optional[int]) -> None:
        if self._ids is None or self._rows_in_shard == self.shard_rows:
            self.close()
            self._open_shard()
        row = np.full(self.length, self.pad_id, dtype=self.dtype)
        row[: len(ids)] = ids
        self._ids.write(row.tobytes())
        if self.segment_pairs:
            self._len_a.write(np.array([len_a], dtype=np.uint16).tobytes())
        self._rows_in_shard += 1
        self.shards[-1]["rows"] = self._rows_in_shard
        self.n_rows += 1
        self.n_tokens += len(ids)

    def close(self) -> None:
        for f in (self._ids, self._len_a):
            if f is not None:
                f.close()
        self._ids = self._len_a = None


def build_packed_corpus(
    texts: Sequence[Path],
    tokenizer,
    output_dir: Path,
    max_seq_length: int,
    packer: Optional[Packer] = None,
    shard_rows: int = DEFAULT_SHARD_ROWS,
    batch_docs: int = 256,
) -> PackedCorpus:
    """Tokenise ``texts`` (pretraining text format) with a fast HF tokenizer into shards in
    ``output_dir``. ``packer`` turns tokenised documents into rows; by default
    :func:`pack_documents`. A packer that yields ``(ids, len_a)`` makes a segment-pair corpus."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    for old in list(output_dir.glob("ids-*.bin")) + list(output_dir.glob("len_a-*.bin")) + [output_dir / META_FILE]:
        old.unlink(missing_ok=True)  # a rebuild never mixes in shards of an earlier build
    if packer is None:
        def packer(docs):
            return pack_documents(docs, max_seq_length, tokenizer.cls_token_id, tokenizer.sep_token_id)

    dtype = np.uint16 if len(tokenizer) <= np.iinfo(np.uint16).max else np.int32

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

    writer: Optional[_ShardWriter] = None
    try:
        for packed in packer(tokenised_docs()):
            ids, len_a = (packed, None) if isinstance(packed, list) else packed
            if len(ids) > max_seq_length:
                raise ValueError(f"Packer yielded {len(ids)} ids for max_seq_length {max_seq_length}")
            if writer is None:
                writer = _ShardWriter(output_dir, max_seq_length, dtype, tokenizer.pad_token_id,
                                      shard_rows, segment_pairs=len_a is not None)
            writer.write(ids, len_a)
    finally:
        if writer is not None:
            writer.close()
    if writer is None or writer.n_rows == 0:
        raise PretrainingDataError(f"No text to pretrain on in {[str(t) for t in texts]}")
    meta = {
        "format": FORMAT_VERSION,
        "n_sequences": writer.n_rows,
        "n_tokens": writer.n_tokens,
        "max_seq_length": max_seq_length,
        "dtype": np.dtype(dtype).name,
        "pad_id": tokenizer.pad_token_id,
        "vocab_size": len(tokenizer),
        "segment_pairs": writer.segment_pairs,
        "shards": writer.shards,
        # Name, size and SHA-1 of every source: which texts (and licences) went in.
        "sources": describe_sources(texts),
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
