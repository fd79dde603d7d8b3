"""Decontamination of training data against test texts: word n-gram overlap.

A training example is contaminated when its question or its passage shares a run of ``n``
consecutive words (13 by default, the GPT-3 / ``../shared/data`` README rule) with any text of the
test files: their questions, passages, snippets, candidate sentences and answers. Words are
lower-cased ``\\w+`` runs, so punctuation, case and dashes do not hide an overlap. The test texts'
n-grams are indexed once in a set: checking a passage costs one set look-up per word.
:class:`NamedNgramIndex` keeps one index per test file, so a dropped example names the test sets
it overlaps (the NER converter's report).
"""

import csv
import json
import re
from pathlib import Path
from typing import Iterable, Iterator, List, Mapping, Sequence, Set, Tuple, Union

from ..errors import CorpusFormatError

__all__ = ["DEFAULT_NGRAM", "words", "ngrams", "file_texts", "NgramIndex", "NamedNgramIndex"]

DEFAULT_NGRAM = 13
_WORDS = re.compile(r"\w+")


def words(text: str) -> List[str]:
    """The lower-cased words of ``text`` (``\\w+`` runs)."""
    return _WORDS.findall(text.lower())


def _spans(tokens: List[str], n: int) -> Iterator[Tuple[str, ...]]:
    return (tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def ngrams(text: str, n: int = DEFAULT_NGRAM) -> Set[Tuple[str, ...]]:
    """The ``n``-word spans of ``text`` (of its :func:`words`)."""
    return set(_spans(words(text), n))


def _json_strings(value) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _json_strings(item)


def file_texts(path: Union[str, Path]) -> Iterator[str]:
    """Every text of a test file: all string values of a JSON file (SQuAD, BioASQ golden) or of
    each line of a JSON-lines file, all fields of a TSV."""
    path = Path(path)
    raw = path.read_text(encoding="utf8")
    if path.suffix == ".json":
        try:
            yield from _json_strings(json.loads(raw))
        except json.JSONDecodeError as err:
            raise CorpusFormatError(path, err.lineno, f"not valid JSON: {err.msg}") from None
    elif path.suffix == ".jsonl":
        for number, line in enumerate(raw.split("\n"), start=1):
            if line.strip():
                try:
                    yield from _json_strings(json.loads(line))
                except json.JSONDecodeError as err:
                    raise CorpusFormatError(path, number, f"not valid JSON: {err.msg}") from None
    else:
        for row in csv.reader(raw.split("\n"), delimiter="\t", quoting=csv.QUOTE_NONE):
            yield from row


class NgramIndex:
    """The ``n``-word spans of a set of (test) texts; ``overlaps(text)`` tells whether a text
    shares one of them. ``n`` = 0 gives an index that matches nothing."""

    def __init__(self, texts: Iterable[str] = (), n: int = DEFAULT_NGRAM):
        if n < 0:
            raise ValueError(f"n must be 0 (off) or positive, got {n}")
        self.n = n
        self.ngrams: Set[Tuple[str, ...]] = set()
        if n:
            for text in texts:
                self.ngrams.update(_spans(words(text), n))

    @classmethod
    def from_files(cls, paths: Sequence[Union[str, Path]], n: int = DEFAULT_NGRAM) -> "NgramIndex":
        """The index of every text of ``paths`` (see ``file_texts``)."""
        return cls((text for path in paths for text in file_texts(path)), n=n) if n else cls(n=0)

    def overlaps(self, text: str) -> bool:
        """Whether ``text`` shares an ``n``-word span with the indexed texts."""
        if not self.n or not self.ngrams:
            return False
        return any(gram in self.ngrams for gram in _spans(words(text), self.n))

    def __len__(self) -> int:
        return len(self.ngrams)


class NamedNgramIndex:
    """An :class:`NgramIndex` per name (a test file each, say): called with a text, it gives the
    names whose texts share an ``n``-word span with it, in the order given (empty: no overlap)."""

    def __init__(self, named_texts: Mapping[str, Iterable[str]], n: int = DEFAULT_NGRAM):
        if n < 1:
            raise ValueError(f"n must be positive, got {n}")
        self.n = n
        self.indexes = {name: NgramIndex(texts, n=n) for name, texts in named_texts.items()}

    def __call__(self, text: str) -> List[str]:
        spans = ngrams(text, self.n)
        return [name for name, index in self.indexes.items() if not spans.isdisjoint(index.ngrams)]
