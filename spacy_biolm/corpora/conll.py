"""Read CoNLL-style BIO NER files and convert them to spaCy ``Doc`` objects / ``DocBin`` files.

Two layouts of the same one-token-per-line format are supported (both are mirrored under
``shared/data/ner/<NAME>/``):

* ``typed`` (the MTL-Bioinformatics-2016 ``*-IOB`` files, ``mtl_iob/``):
  ``token<TAB>B-Type|I-Type|O``; JNLPBA also has ``-DOCSTART-<TAB>O`` document separators.
* ``untyped`` (the BioBERT files, ``biobert/``): ``token<TAB>B|I|O``; the entity type is not in
  the file, so the caller supplies it as ``label``.

Sentences are separated by blank lines. Every malformed line raises
:class:`spacy_biolm.errors.CorpusFormatError` naming the file and the 1-based line number.

:func:`convert_ner` writes a file's Docs as a DocBin, with its labels renamed (``relabel``) or
mapped to the release's entity types by the corpus's table (``corpus``: :mod:`.entity_types`;
a label the table lacks is an error naming its line), and without the sentences that share a
13-word span with a test set (``exclude``: :func:`conll_ngram_index`).

Only spaCy is imported here: this module is loaded through the ``spacy_readers`` entry point,
so it must stay cheap to import (no torch, no transformers).
"""

from collections import Counter
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..doc_data import set_annotated_entity_types
from ..errors import CorpusFormatError
from .decontamination import DEFAULT_NGRAM, NamedNgramIndex
from .entity_types import MISSING, OUTSIDE, annotated_types, label_fates

__all__ = [
    "SCHEMES",
    "DOCSTART",
    "ConllSentence",
    "read_conll_ner",
    "group_sentences",
    "sentences_to_doc",
    "conll_to_docs",
    "conll_ngram_index",
    "convert_ner",
]

#: Accepted values of ``scheme``; ``mtl_iob`` / ``biobert`` are aliases named after the data folders.
SCHEMES: Dict[str, str] = {
    "auto": "auto",
    "typed": "typed",
    "untyped": "untyped",
    "mtl_iob": "typed",
    "biobert": "untyped",
}

#: Token of a document-boundary line (CoNLL convention); such lines are not tokens.
DOCSTART = "-DOCSTART-"
#: How many dropped sentences' first lines the conversion statistics list.
DROPPED_LINES_SHOWN = 10
# The tag a token of a label gets when the label's fate is not an entity type.
_FATE_TAGS = {OUTSIDE: OUTSIDE, MISSING: ""}

PathLike = Union[str, Path]


@dataclass(frozen=True)
class ConllSentence:
    """One sentence of a CoNLL NER file.

    Attributes:
        words: the tokens, exactly as in the file.
        tags: one tag per token, normalised to typed BIO (``"B-Disease"``, ``"I-Disease"``,
            ``"O"``) whatever the file's scheme.
        first_line: 1-based line number of the sentence's first token (for error messages).
        doc_start: True for the first sentence of the file and the first sentence after each
            ``-DOCSTART-`` line.
    """

    words: Tuple[str, ...]
    tags: Tuple[str, ...]
    first_line: int
    doc_start: bool


def _resolve_scheme(scheme: str) -> str:
    """Map a user-facing scheme name to ``auto`` / ``typed`` / ``untyped``."""
    try:
        return SCHEMES[scheme]
    except KeyError:
        raise ValueError(
            f"Unknown NER scheme {scheme!r}; expected one of {sorted(SCHEMES)}"
        ) from None


def _check_label(label: str) -> None:
    """Reject labels that could not round-trip through a BIO tag or spaCy's ent labels."""
    if not isinstance(label, str) or not label or label != label.strip() or label == "O":
        raise ValueError(
            f"Invalid entity label {label!r}: need a non-empty string without surrounding spaces"
        )


def _split_line(path: Path, lineno: int, line: str) -> Tuple[str, str]:
    """Split a non-blank line into (token, tag), checking the column count and the token."""
    columns = line.split("\t")
    if len(columns) != 2:
        raise CorpusFormatError(
            path,
            lineno,
            f"expected 2 TAB-separated columns (token, tag), found {len(columns)}: {line!r}",
        )
    token, tag = columns
    if not token or token.isspace():
        raise CorpusFormatError(path, lineno, "empty token")
    # A token with whitespace inside would be split differently when the Doc text is re-tokenised.
    if any(ch.isspace() for ch in token):
        raise CorpusFormatError(path, lineno, f"token contains whitespace: {token!r}")
    return token, tag


class _TagNormaliser:
    """Validates tags of one file and turns them into typed BIO.

    With ``scheme="auto"`` the first entity tag (B/I) of the file fixes whether the file is typed
    or untyped; a later tag of the other kind is an error, so mixed files are rejected.
    """

    def __init__(self, path: Path, scheme: str, label: str):
        self.path = path
        self.scheme = _resolve_scheme(scheme)
        self.label = label
        # Line that fixed the scheme under "auto", for a helpful mixing error.
        self.decided_at: Optional[int] = None

    def normalise(self, lineno: int, tag: str) -> str:
        """Return the typed BIO form of ``tag`` or raise CorpusFormatError."""
        if tag == "O":
            return tag
        prefix, sep, etype = tag.partition("-")
        if prefix not in ("B", "I") or (sep and not etype):
            raise CorpusFormatError(
                self.path, lineno, f"unknown tag {tag!r}: expected O, B, I, B-<type> or I-<type>"
            )
        kind = "typed" if sep else "untyped"
        self._check_kind(lineno, tag, kind)
        return tag if kind == "typed" else f"{prefix}-{self.label}"

    def _check_kind(self, lineno: int, tag: str, kind: str) -> None:
        """Make sure typed and untyped tags are not mixed (or contradict an explicit scheme)."""
        if self.scheme == "auto":
            self.scheme, self.decided_at = kind, lineno
            return
        if kind == self.scheme:
            return
        if self.decided_at is not None:
            why = f"line {self.decided_at} made this file {self.scheme} (mixed schemes)"
        else:
            why = f"scheme={self.scheme!r} was requested"
        raise CorpusFormatError(
            self.path, lineno, f"unknown tag {tag!r}: {kind} tag in a file read as {self.scheme}; {why}"
        )


def _check_continuation(path: Path, lineno: int, tag: str, previous: str) -> None:
    """An ``I-x`` tag must follow ``B-x`` or ``I-x`` of the same type in the same sentence."""
    if not tag.startswith("I-"):
        return
    if previous == "O" or previous[2:] != tag[2:]:
        where = "at sentence start" if previous == "" else f"after {previous!r}"
        raise CorpusFormatError(
            path, lineno, f"tag {tag!r} {where} does not continue an entity of the same type"
        )


def read_conll_ner(
    path: PathLike, scheme: str = "auto", label: str = "ENTITY"
) -> Iterator[ConllSentence]:
    """Stream the sentences of a CoNLL BIO NER file.

    Args:
        path: a ``token<TAB>tag`` file, blank lines between sentences.
        scheme: ``"typed"`` (``B-Type``/``I-Type``/``O``; alias ``"mtl_iob"``), ``"untyped"``
            (``B``/``I``/``O``; alias ``"biobert"``) or ``"auto"`` (decided by the file's first
            entity tag).
        label: entity type given to untyped tags; ignored for typed tags.

    Yields:
        ConllSentence objects in file order; empty sentences (e.g. around ``-DOCSTART-``) are
        skipped. The file is read line by line, never whole.

    Raises:
        CorpusFormatError: on a wrong column count, an empty token, an unknown tag (including
            typed/untyped mixing) or an ``I-`` tag that does not continue an entity of its type.
        ValueError: on an unknown ``scheme`` or an invalid ``label``.
    """
    path = Path(path)
    _check_label(label)
    normaliser = _TagNormaliser(path, scheme, label)
    words: List[str] = []
    tags: List[str] = []
    first_line = 0
    doc_start = True
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for lineno, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            is_docstart = line.split("\t", 1)[0] == DOCSTART
            if line and not is_docstart:
                token, tag = _split_line(path, lineno, line)
                tag = normaliser.normalise(lineno, tag)
                _check_continuation(path, lineno, tag, tags[-1] if tags else "")
                if not words:
                    first_line = lineno
                words.append(token)
                tags.append(tag)
                continue
            # Blank line or -DOCSTART-: close the current sentence (a DOCSTART without a blank line
            # before it still ends the sentence, so no sentence spans two documents).
            if words:
                yield ConllSentence(tuple(words), tuple(tags), first_line, doc_start)
                words, tags, doc_start = [], [], False
            if is_docstart:
                doc_start = True
    if words:
        yield ConllSentence(tuple(words), tuple(tags), first_line, doc_start)


def group_sentences(
    sentences: Iterable[ConllSentence], n_sents: int = 1
) -> Iterator[List[ConllSentence]]:
    """Group consecutive sentences into chunks of at most ``n_sents``, never across a doc start."""
    if not isinstance(n_sents, int) or n_sents < 1:
        raise ValueError(f"n_sents must be a positive integer, got {n_sents!r}")
    group: List[ConllSentence] = []
    for sentence in sentences:
        if group and (len(group) == n_sents or sentence.doc_start):
            yield group
            group = []
        group.append(sentence)
    if group:
        yield group


def sentences_to_doc(
    vocab: Vocab, sentences: List[ConllSentence], set_sent_starts: bool = False
) -> Doc:
    """Build one Doc from sentences: words separated by single spaces, ``doc.ents`` from the tags.

    With ``set_sent_starts`` every sentence's first token gets ``is_sent_start=True`` and the others
    ``False``, so ``doc.sents`` reproduces the file's sentences.
    """
    words: List[str] = []
    tags: List[str] = []
    sent_starts: List[bool] = []
    for sentence in sentences:
        words.extend(sentence.words)
        tags.extend(sentence.tags)
        sent_starts.extend([True] + [False] * (len(sentence.words) - 1))
    spaces = [True] * len(words)
    spaces[-1] = False
    return Doc(
        vocab,
        words=words,
        spaces=spaces,
        ents=tags,  # "O" marks tokens as known non-entities (complete gold annotation), "" as missing
        sent_starts=sent_starts if set_sent_starts else None,
    )


def conll_to_docs(path: PathLike, vocab: Vocab, scheme: str = "auto", label: str = "ENTITY",
                  n_sents: int = 1) -> Iterator[Doc]:
    """Stream Docs from a CoNLL BIO NER file.

    Args:
        path, scheme, label: as for :func:`read_conll_ner`.
        vocab: vocabulary of the Docs (``nlp.vocab`` when the Docs meet a pipeline).
        n_sents: sentences per Doc. 1 (default) gives one Doc per sentence, the BioBERT evaluation
            unit. Larger values join consecutive sentences, never across a ``-DOCSTART-``
            boundary, and set ``is_sent_start`` so ``doc.sents`` gives the original sentences.

    Yields:
        Docs whose words are the file's tokens separated by single spaces and whose ``doc.ents``
        come from the BIO tags.
    """
    for group in group_sentences(read_conll_ner(path, scheme=scheme, label=label), n_sents):
        yield sentences_to_doc(vocab, group, set_sent_starts=n_sents > 1)


def conll_ngram_index(paths: Sequence[PathLike], n: int = DEFAULT_NGRAM) -> NamedNgramIndex:
    """The ``n``-word spans of CoNLL NER test files, each sentence read as its tokens joined by
    spaces, one index per file named by its path: :func:`convert_ner`'s ``exclude``."""
    return NamedNgramIndex({str(path): (" ".join(s.words) for s in read_conll_ner(path)) for path in paths}, n=n)


def _mapped(path: Path, sentence: ConllSentence, fates: Dict[str, str], corpus: Optional[str]) -> ConllSentence:
    """``sentence`` with each entity label replaced by its fate: another label, :data:`OUTSIDE` or
    :data:`MISSING` (the missing tag ``""``). A label without a fate is kept, unless the fates are
    ``corpus``'s table: then it is a CorpusFormatError naming its line."""
    tags = []
    for offset, tag in enumerate(sentence.tags):
        prefix, _, etype = tag.partition("-")
        fate = fates.get(etype, None if corpus else etype) if etype else OUTSIDE
        if fate is None:
            raise CorpusFormatError(path, sentence.first_line + offset, (
                f"entity label {etype!r} is not in the {corpus} table of spacy_biolm.corpora.entity_types "
                f"({', '.join(sorted(fates))}); add it there with its fate"))
        tags.append(_FATE_TAGS.get(fate, f"{prefix}-{fate}"))
    return replace(sentence, tags=tuple(tags))


def _written(sentences: Iterable[ConllSentence], path: Path, fates: Dict[str, str], corpus: Optional[str],
             exclude: Optional[Callable[[str], Sequence[str]]], tally: Dict[str, Any]) -> Iterator[ConllSentence]:
    """The sentences to write, their labels mapped (every sentence's checked) and those sharing a span
    with a test set (``exclude``) dropped; a dropped document start moves to the next sentence.
    ``tally`` counts the written sentences' file labels and the dropped sentences (by first line and by test set)."""
    doc_start = False
    for sentence in sentences:
        mapped = _mapped(path, sentence, fates, corpus) if fates else sentence
        tests = exclude(" ".join(sentence.words)) if exclude is not None else ()
        doc_start = doc_start or sentence.doc_start
        if tests:
            tally["dropped_lines"].append(sentence.first_line)
            tally["dropped_by_test"].update(tests)
            continue
        tally["file_labels"].update(tag[2:] for tag in sentence.tags if tag.startswith("B-"))
        yield replace(mapped, doc_start=doc_start)
        doc_start = False


def convert_ner(input_path: PathLike, output_path: PathLike, scheme: str = "auto", label: str = "ENTITY",
                n_sents: int = 1, relabel: Optional[Dict[str, str]] = None, corpus: Optional[str] = None,
                exclude: Optional[Callable[[str], Sequence[str]]] = None, limit: int = 0) -> Dict[str, object]:
    """Convert a CoNLL BIO NER file into a spaCy ``DocBin`` (``.spacy``) file.

    Args:
        input_path: the CoNLL file.
        output_path: where to write the DocBin; parent folders are created.
        scheme, label, n_sents: as for :func:`conll_to_docs`.
        relabel: entity labels to rename, ``{file label: label to write}`` (e.g.
            ``{"Disease": "DISEASE"}`` to match the relation extractor's entity types); other
            labels are kept. ``O`` writes a label's tokens as outside, ``MISSING`` as missing.
        corpus: a corpus of :data:`~spacy_biolm.corpora.entity_types.ENTITY_TYPES` (instead of
            ``relabel``): its labels become the release's types, missing or outside as its table
            says, a label not in the table is an error, and every Doc records the types the corpus
            annotates completely (:func:`~spacy_biolm.doc_data.set_annotated_entity_types`, kept in
            the DocBin's user data).
        exclude: called with each sentence's text (its tokens joined by spaces), the names of the
            test sets it shares a 13-word span with (:func:`conll_ngram_index`); such sentences are
            dropped. For training and development files only: a test file is never filtered.
        limit: write only the first ``limit`` Docs (0: all); the rest of the file is not read (for
            smoke runs of the project).

    Returns:
        Statistics: ``sentences``, ``docs``, ``tokens``, ``entities``, ``labels`` (entity count
        per label, sorted by label), ``documents`` (``-DOCSTART-``-delimited documents; 1 for a file
        without separators), ``input`` and ``output`` (paths as strings), all of the sentences
        written. With ``corpus`` also ``corpus``, ``annotated_types``, ``file_labels`` (mentions per
        label of the file) and ``missing_tokens``; with ``exclude`` also ``dropped`` (sentences),
        ``dropped_lines`` (the first lines of the first :data:`DROPPED_LINES_SHOWN`) and
        ``dropped_by_test`` (dropped sentences per test set they overlap).

    Raises:
        CorpusFormatError: on malformed input (nothing is written then).
        ValueError: on an unknown ``corpus``, or one given with ``relabel``.
    """
    if corpus is not None and relabel:
        raise ValueError("relabel and corpus both map the entity labels: give one of them")
    input_path, output_path = Path(input_path), Path(output_path)
    fates = label_fates(corpus) if corpus is not None else dict(relabel or {})
    types = annotated_types(corpus) if corpus is not None else None
    vocab = Vocab()
    doc_bin = DocBin(store_user_data=types is not None)
    stats = {"sentences": 0, "docs": 0, "tokens": 0, "entities": 0, "documents": 0}
    labels: Counter = Counter()
    missing = 0
    tally: Dict[str, Any] = {"file_labels": Counter(), "dropped_lines": [], "dropped_by_test": Counter()}
    sentences = _written(read_conll_ner(input_path, scheme=scheme, label=label), input_path, fates, corpus, exclude, tally)
    for group in islice(group_sentences(sentences, n_sents), limit or None):
        doc = sentences_to_doc(vocab, group, set_sent_starts=n_sents > 1)
        if types is not None:
            set_annotated_entity_types(doc, types)
        doc_bin.add(doc)
        stats["sentences"] += len(group)
        stats["documents"] += sum(sentence.doc_start for sentence in group)
        stats["docs"] += 1
        stats["tokens"] += len(doc)
        stats["entities"] += len(doc.ents)
        missing += sum(tag == "" for sentence in group for tag in sentence.tags)
        labels.update(ent.label_ for ent in doc.ents)
    # Written only after the whole file parsed, so a format error leaves no partial output.
    output_path.parent.mkdir(parents=True, exist_ok=True)
    doc_bin.to_disk(output_path)
    report: Dict[str, object] = {**stats, "labels": dict(sorted(labels.items())), "input": str(input_path),
                                 "output": str(output_path)}
    if corpus is not None:
        report.update(corpus=corpus, annotated_types=list(types), file_labels=dict(sorted(tally["file_labels"].items())),
                      missing_tokens=missing)
    if exclude is not None:
        report.update(dropped=len(tally["dropped_lines"]), dropped_lines=tally["dropped_lines"][:DROPPED_LINES_SHOWN],
                      dropped_by_test=dict(tally["dropped_by_test"]))
    return report
