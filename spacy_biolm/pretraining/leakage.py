"""Find evaluation text inside pretraining text (leakage), whatever the tokenisation.

Evaluation corpora are often tokenised (``"receptor ( GHS-R ) ."``) where the pretraining text
is not (``"receptor (GHS-R)."``), and the two split sentences differently. Both sides are
therefore compared as runs of lower-cased letters and digits (``receptor ghs r``), and the
pretraining text is indexed as the set of its word n-grams per document (across sentence
boundaries). An evaluation sentence of at least ``min_words`` such words has leaked when every one
of its n-grams is in the index: the whole sentence occurs in the pretraining text.
"""

import re
from pathlib import Path
from typing import Iterable, Iterator, List, Sequence, Set, Tuple, Union

from .sources import open_text

__all__ = ["words_of", "ngram_index", "find_leaks", "evaluation_sentences", "evaluation_files_sentences"]

PathLike = Union[str, Path]
_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> List[str]:
    """The runs of letters and digits of ``text``, lower-cased."""
    return _WORD.findall(text.lower())


def _documents(path: PathLike) -> Iterator[str]:
    """The documents of a pretraining text file (a sentence per line, a blank line between
    documents; plain or .xz), each as one string."""
    lines: List[str] = []
    with open_text(path) as f:
        for line in f:
            if line.strip():
                lines.append(line)
            elif lines:
                yield " ".join(lines)
                lines = []
    if lines:
        yield " ".join(lines)


def ngram_index(paths: Sequence[PathLike], n: int = 8) -> Set[int]:
    """Hashes of every word n-gram of every document of ``paths`` (pretraining text files)."""
    index: Set[int] = set()
    for path in paths:
        for document in _documents(path):
            words = words_of(document)
            index.update(hash(tuple(words[i:i + n])) for i in range(len(words) - n + 1))
    return index


def find_leaks(
    index: Set[int],
    sentences: Iterable[Tuple[str, str]],
    n: int = 8,
    min_words: int = 10,
) -> List[Tuple[str, str]]:
    """The (source, sentence) pairs of ``sentences`` whose every word n-gram is in ``index``
    (built with the same ``n``); sentences shorter than ``min_words`` words are not checked
    (short formulaic sentences recur in unrelated texts)."""
    leaked = []
    for source, sentence in sentences:
        words = words_of(sentence)
        if len(words) < max(min_words, n):
            continue
        if all(hash(tuple(words[i:i + n])) in index for i in range(len(words) - n + 1)):
            leaked.append((source, sentence))
    return leaked


def evaluation_sentences(hoc: Sequence[PathLike] = (), conll: Sequence[PathLike] = ()) -> Iterator[Tuple[str, str]]:
    """(source, sentence) for every sentence of the HoC files (all of it is evaluation data) and
    of CoNLL NER files (pass their dev and test splits)."""
    from ..corpora.conll import read_conll_ner
    from ..corpora.hoc import read_hoc

    for path in hoc:
        for abstract in read_hoc(path):
            for sentence in abstract.sentences:
                yield f"{path} PMID {abstract.pmid}", sentence
    for path in conll:
        for sentence in read_conll_ner(path):
            yield f"{path}:{sentence.first_line}", " ".join(sentence.words)


def evaluation_files_sentences(paths: Sequence[PathLike]) -> Iterator[Tuple[str, str]]:
    """:func:`evaluation_sentences` of files told apart by suffix: ``.jsonl`` HoC (or a folder:
    HoC's upstream tree, ``assets/hoc_raw``), ``.tsv`` / ``.conll`` / ``.iob`` CoNLL NER; another
    suffix is a ValueError naming the file."""
    hoc = [p for p in paths if Path(p).suffix == ".jsonl" or Path(p).is_dir()]
    conll = [p for p in paths if Path(p).suffix in (".tsv", ".conll", ".iob")]
    unknown = [str(p) for p in paths if p not in hoc and p not in conll]
    if unknown:
        raise ValueError(f"{', '.join(unknown)}: evaluation text must be HoC .jsonl (or its tree) or CoNLL .tsv")
    return evaluation_sentences(hoc=hoc, conll=conll)
