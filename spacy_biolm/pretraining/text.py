"""Collect raw biomedical text into the pretraining text format.

The format (as BERT's and ELECTRA's pretraining data): UTF-8, one sentence per line, a blank line
between documents. Sources are read by file type:

- ``*.txt``: one document per line (PubMed abstract dumps), split into sentences here;
- ``*.csv``: one document per row, from the column ``abstract`` or ``text``;
- ``*.jsonl``: one document per object, from ``sentences`` (a list) or ``text``;
- ``*.tsv`` / ``*.conll``: a CoNLL token file (token<TAB>tag, blank line between sentences); tokens
  are joined with spaces, ``-DOCSTART-`` lines start a new document. Only ever pass *training*
  splits of task corpora here: dev/test text in pretraining leaks the evaluation.
"""

import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..errors import CorpusFormatError, PretrainingDataError

__all__ = ["TextStats", "read_documents", "collect_text", "split_sentences"]

# Documents of CoNLL files without -DOCSTART- lines are cut every this many sentences, so packed
# pretraining sequences still get multi-sentence context without spanning unrelated abstracts.
CONLL_SENTENCES_PER_DOC = 10


@dataclass
class TextStats:
    """What a collection run wrote, per source file."""

    documents: Dict[str, int] = field(default_factory=dict)
    sentences: Dict[str, int] = field(default_factory=dict)
    words: Dict[str, int] = field(default_factory=dict)
    # Sentences left out because an evaluation set has them (collect_text's ``exclude``).
    excluded: Dict[str, int] = field(default_factory=dict)

    def total(self, what: str) -> int:
        return sum(getattr(self, what).values())

    def to_dict(self) -> dict:
        return {
            "sources": {
                src: {
                    "documents": self.documents[src],
                    "sentences": self.sentences[src],
                    "words": self.words[src],
                    "excluded_sentences": self.excluded.get(src, 0),
                }
                for src in self.documents
            },
            "documents": self.total("documents"),
            "sentences": self.total("sentences"),
            "words": self.total("words"),
            "excluded_sentences": self.total("excluded"),
        }


def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(texts: Iterable[str], batch_size: int = 64) -> Iterator[List[str]]:
    """Split each text into sentences with spaCy's rule-based sentencizer (fast, no model)."""
    nlp = _sentencizer()
    for doc in nlp.pipe(texts, batch_size=batch_size):
        sents = [" ".join(s.text.split()) for s in doc.sents]
        yield [s for s in sents if s]


def _read_txt(path: Path) -> Iterator[str]:
    with path.open(encoding="utf8") as f:
        for line in f:
            if line.strip():
                yield line.strip()


def _read_csv(path: Path) -> Iterator[str]:
    csv.field_size_limit(sys.maxsize)
    with path.open(encoding="utf8", newline="") as f:
        reader = csv.DictReader(f)
        column = next((c for c in ("abstract", "text") if c in (reader.fieldnames or [])), None)
        if column is None:
            raise CorpusFormatError(
                path, 1, f"CSV needs a column 'abstract' or 'text', found {reader.fieldnames}"
            )
        for row in reader:
            text = (row.get(column) or "").strip()
            if text:
                yield text


def _read_jsonl_sentences(path: Path) -> Iterator[List[str]]:
    from ..corpora.corpus_files import json_lines

    for i, record in json_lines(path):
        if isinstance(record.get("sentences"), list):
            yield [" ".join(str(s).split()) for s in record["sentences"] if str(s).strip()]
        elif isinstance(record.get("text"), str):
            yield [record["text"]]
        else:
            raise CorpusFormatError(path, i, "JSON line needs 'sentences' (list) or 'text'")


def _read_conll_sentences(path: Path) -> Iterator[List[str]]:
    """Documents (lists of sentences) of a CoNLL NER file, read (and validated) by the corpus
    converter; tags are not needed here."""
    from ..corpora.conll import read_conll_ner

    doc: List[str] = []
    for sentence in read_conll_ner(path):
        if doc and (sentence.doc_start or len(doc) >= CONLL_SENTENCES_PER_DOC):
            yield doc
            doc = []
        doc.append(" ".join(sentence.words))
    if doc:
        yield doc


def read_documents(path: Path) -> Iterator[List[str]]:
    """Yield the documents of one source file, each as a list of sentences."""
    path = Path(path)
    if not path.is_file():
        raise PretrainingDataError(f"Pretraining source not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".txt":
        yield from split_sentences(_read_txt(path))
    elif suffix == ".csv":
        yield from split_sentences(_read_csv(path))
    elif suffix == ".jsonl":
        for sents in _read_jsonl_sentences(path):
            if len(sents) == 1:  # a 'text' record: still needs splitting
                yield from split_sentences(sents)
            else:
                yield sents
    elif suffix in (".tsv", ".conll", ".iob"):
        yield from _read_conll_sentences(path)
    else:
        raise PretrainingDataError(
            f"{path}: unknown pretraining source type '{suffix}' "
            "(expected .txt, .csv, .jsonl, .tsv/.conll)"
        )


def collect_text(sources: Sequence[Path], output: Path,
                 exclude: Optional[AbstractSet[Tuple[str, ...]]] = None) -> TextStats:
    """Write every document of ``sources`` to ``output`` in the pretraining text format.

    ``exclude``: sentences of evaluation sets as word tuples (:func:`leakage.words_of`); a source
    sentence with the same words (whatever its tokenisation) is left out, since benchmarks repeat
    sentences across their own and each other's splits (a JNLPBA training sentence can be a test
    sentence too)."""
    from .leakage import words_of

    if not sources:
        raise PretrainingDataError("No pretraining sources given")
    stats = TextStats()
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf8") as out:
        for source in sources:
            key = str(source)
            stats.documents[key] = stats.sentences[key] = stats.words[key] = stats.excluded[key] = 0
            for sents in read_documents(Path(source)):
                if exclude:
                    kept = [s for s in sents if tuple(words_of(s)) not in exclude]
                    stats.excluded[key] += len(sents) - len(kept)
                    sents = kept
                if not sents:
                    continue
                # A newline inside a sentence would break the one-sentence-per-line format.
                out.write("\n".join(" ".join(s.split()) for s in sents) + "\n\n")
                stats.documents[key] += 1
                stats.sentences[key] += len(sents)
                stats.words[key] += sum(len(s.split()) for s in sents)
            if stats.documents[key] == 0:
                raise PretrainingDataError(f"Pretraining source has no text: {source}")
    return stats
