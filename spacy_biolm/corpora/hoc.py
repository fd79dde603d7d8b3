"""The Hallmarks of Cancer corpus (HoC; Baker et al. 2016) as DocBins for document classification.

The corpus comes in two forms, read alike by :func:`read_hoc`:

- its upstream repository's tree (sb895/Hallmarks-of-Cancer, the project asset ``assets/hoc_raw``):
  ``text/<PMID>.txt`` holds an abstract's tokenised sentences, one a line (each line ending in a
  newline), and ``labels/<PMID>.txt`` its label string (below), one line without a newline;
  :func:`read_hoc_raw` reads it, the abstracts sorted by PMID;
- the mirror's ``hoc.jsonl``, converted from that tree: one abstract per line: ``pmid``, ``sentences`` (tokenised, spaces
between tokens) and ``labels``, a one-element list holding the corpus's own label notation for all
sentences at once (the labels file's content). That string is a ``<`` before every sentence's labels (so it splits into one
more part than there are sentences; the first part is empty), a sentence's classes joined by
``AND`` (with or without a space after it: ``"...Receptors ANDSustaining ..."``), each class a
path through the 37-class taxonomy joined by ``--`` (``"Resisting cell death--Apoptosis"``),
sometimes with a trailing ``--`` (``"Cellular energetics--"``: the hallmark itself), padded with
spaces, and ``NULL`` or blank for a sentence without a class.

Both forms give the same abstracts (the same PMIDs, sentences and label strings; checked on the
whole corpus by ``corpora/tests/test_hoc.py`` when the mirror is there), hence the same Docs.

A Doc is one abstract, its sentences as given (tokens kept, sentence starts set):

- ``doc.cats``: the 10 hallmarks (the top level of every class path), 1.0 when any sentence has a
  class under it, else 0.0 (the document label is the union of its sentences' labels);
- ``doc.spans["hoc_sentences"]``: one span per (sentence, hallmark) pair, labelled with the
  hallmark; a sentence without a class has no span;
- ``doc.user_data["hoc_pmid"]`` and ``doc.user_data["hoc_sentence_classes"]`` (one list of full
  class paths per sentence, e.g. ``["Resisting cell death--Apoptosis"]``): the fine-grained labels.

No split ships with the corpus: :func:`make_split` draws one by PMID (70/10/20, seeded); the split
the project uses is committed as ``configs/splits/hoc_split.json`` and read by
:func:`convert_hoc`, so every run trains and tests on the same abstracts.
"""

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab

from ..errors import CorpusFormatError
from .corpus_files import json_lines

__all__ = [
    "HALLMARKS",
    "SPANS_KEY",
    "SPLITS",
    "HocAbstract",
    "parse_label_string",
    "hallmark_of",
    "read_hoc",
    "read_hoc_raw",
    "make_split",
    "write_split",
    "read_split",
    "hoc_to_doc",
    "convert_hoc",
]

PathLike = Union[str, Path]

#: The ten hallmarks of cancer (Hanahan & Weinberg 2011), the top level of HoC's taxonomy, as the
#: corpus spells them; these are the ``doc.cats`` labels.
HALLMARKS: Tuple[str, ...] = (
    "Activating invasion and metastasis",
    "Avoiding immune destruction",
    "Cellular energetics",
    "Enabling replicative immortality",
    "Evading growth suppressors",
    "Genomic instability and mutation",
    "Inducing angiogenesis",
    "Resisting cell death",
    "Sustaining proliferative signaling",
    "Tumor promoting inflammation",
)

#: ``doc.spans`` key of the sentence-level labels.
SPANS_KEY = "hoc_sentences"
#: Split names, in the order of the split fractions.
SPLITS = ("train", "dev", "test")
DEFAULT_FRACTIONS = (0.7, 0.1, 0.2)

_NO_CLASS = "NULL"
# "AND" between two classes; the corpus sometimes omits the space after it ("ANDSustaining").
# Class names never contain an upper-case "AND" (hallmark names use "and").
_AND = re.compile(r"\s*AND\s*")


@dataclass(frozen=True)
class HocAbstract:
    """One abstract of the corpus: its sentences (tokens separated by spaces) and, per sentence,
    the full class paths it has (empty for none); ``line``: 1-based line in the JSON-lines file
    (None for the raw tree); ``path``: the file it was read from (the raw tree's text file)."""

    pmid: str
    sentences: Tuple[str, ...]
    sentence_classes: Tuple[Tuple[str, ...], ...]
    line: Optional[int]
    path: Optional[str] = None

    @property
    def hallmarks(self) -> Tuple[str, ...]:
        """The document's hallmarks: the union over its sentences, in HALLMARKS order."""
        found = {hallmark_of(c) for classes in self.sentence_classes for c in classes}
        return tuple(h for h in HALLMARKS if h in found)


def parse_label_string(raw: str, n_sentences: int) -> List[List[str]]:
    """The classes of each of ``n_sentences`` sentences, from the corpus's label string.

    Class paths come back stripped, without a trailing ``--`` and without duplicates, in the order
    written. ValueError (saying what was expected) when the string does not start with ``<`` or
    does not hold one part per sentence; an unknown hallmark is an error in :func:`hallmark_of`.
    """
    if not raw.startswith("<"):
        raise ValueError(f"label string must start with '<', got {raw[:40]!r}")
    parts = raw.split("<")[1:]
    if len(parts) != n_sentences:
        raise ValueError(f"label string has {len(parts)} '<'-separated parts for {n_sentences} sentences")
    parsed = []
    for part in parts:
        classes: List[str] = []
        for item in _AND.split(part.strip()):
            item = item.strip().rstrip("-").strip()
            if item and item != _NO_CLASS and item not in classes:
                hallmark_of(item)  # validate
                classes.append(item)
        parsed.append(classes)
    return parsed


def hallmark_of(class_path: str) -> str:
    """The hallmark (top level) of a class path such as ``"Resisting cell death--Apoptosis"``;
    ValueError naming the path when its top level is not one of HALLMARKS."""
    top = class_path.split("--", 1)[0].strip()
    if top not in HALLMARKS:
        raise ValueError(f"unknown hallmark {top!r} in class {class_path!r}")
    return top


def read_hoc(path: PathLike) -> Iterator[HocAbstract]:
    """The abstracts of a HoC JSON-lines file, or of the raw tree when ``path`` is a directory
    (:func:`read_hoc_raw`); every malformed line is a CorpusFormatError naming ``path:line``
    (a line that is no JSON object, a missing field, a label string that does not fit the sentences, an unknown
    hallmark, a PMID seen before)."""
    path = Path(path)
    if path.is_dir():
        yield from read_hoc_raw(path)
        return
    seen: Dict[str, int] = {}
    for lineno, record in json_lines(path):
        pmid, sentences, labels = record.get("pmid"), record.get("sentences"), record.get("labels")
        if not isinstance(pmid, (str, int)) or not str(pmid).strip():
            raise CorpusFormatError(path, lineno, "missing 'pmid'")
        pmid = str(pmid).strip()
        if not isinstance(sentences, list) or not sentences or not all(isinstance(s, str) and s.strip() for s in sentences):
            raise CorpusFormatError(path, lineno, f"PMID {pmid}: 'sentences' must be a list of non-empty strings")
        if not isinstance(labels, list) or len(labels) != 1 or not isinstance(labels[0], str):
            raise CorpusFormatError(path, lineno, f"PMID {pmid}: 'labels' must be a list holding one label string")
        if pmid in seen:
            raise CorpusFormatError(path, lineno, f"PMID {pmid} already on line {seen[pmid]}")
        seen[pmid] = lineno
        try:
            classes = parse_label_string(labels[0], len(sentences))
        except ValueError as err:
            raise CorpusFormatError(path, lineno, f"PMID {pmid}: {err}") from None
        yield HocAbstract(pmid, tuple(sentences), tuple(tuple(c) for c in classes), lineno, str(path))


def read_hoc_raw(root: PathLike) -> Iterator[HocAbstract]:
    """The abstracts of the corpus's upstream tree ``root`` (``text/<PMID>.txt``, a tokenised
    sentence a line; ``labels/<PMID>.txt``, the label string), sorted by PMID. CorpusFormatError
    naming the file (and line) for a missing ``text/`` or ``labels/`` folder, a PMID with a text
    file and no labels file or the other way round, a file that is not UTF-8, an empty file or
    blank line, and a label string that does not fit the sentences."""
    root = Path(root)
    text_dir, labels_dir = root / "text", root / "labels"
    for folder in (text_dir, labels_dir):
        if not folder.is_dir():
            raise CorpusFormatError(folder, None, "no such folder: the HoC tree has text/ and labels/, a <PMID>.txt in each per abstract")
    texts = {p.stem: p for p in text_dir.glob("*.txt")}
    labels = {p.stem: p for p in labels_dir.glob("*.txt")}
    for pmid in sorted(set(texts) ^ set(labels)):
        present, missing = (texts[pmid], labels_dir) if pmid in texts else (labels[pmid], text_dir)
        raise CorpusFormatError(present, None, f"PMID {pmid} has no {missing.name}/{pmid}.txt")
    for pmid in sorted(texts):
        text_path, labels_path = texts[pmid], labels[pmid]
        text, label_string = _read_utf8(text_path), _read_utf8(labels_path)
        if text.endswith("\n"):
            text = text[:-1]
        sentences = [line.rstrip("\r") for line in text.split("\n")]
        for lineno, sentence in enumerate(sentences, start=1):
            if not sentence.strip():
                raise CorpusFormatError(text_path, lineno, f"PMID {pmid}: blank sentence")
        try:
            classes = parse_label_string(label_string.rstrip("\r\n"), len(sentences))
        except ValueError as err:
            raise CorpusFormatError(labels_path, 1, f"PMID {pmid}: {err}") from None
        yield HocAbstract(pmid, tuple(sentences), tuple(tuple(c) for c in classes), None, str(text_path))


def _read_utf8(path: Path) -> str:
    try:
        return path.read_text(encoding="utf8")
    except UnicodeDecodeError as err:
        raise CorpusFormatError(path, None, f"not UTF-8 ({err.reason} at byte {err.start})") from None


def make_split(pmids: Sequence[str], seed: int = 0, fractions: Sequence[float] = DEFAULT_FRACTIONS) -> Dict[str, List[str]]:
    """``{"train", "dev", "test"}`` lists of PMIDs: the sorted PMIDs shuffled with ``seed`` and cut
    at the ``fractions`` (rounded; test takes the rest). Each list is sorted, so the file reads
    well and diffs stay small. The same PMIDs and seed always give the same split."""
    if len(fractions) != len(SPLITS) or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"fractions must be {len(SPLITS)} non-negative numbers summing to 1, got {list(fractions)}")
    unique = sorted(set(pmids))
    if len(unique) != len(pmids):
        raise ValueError("PMIDs must be unique")
    random.Random(seed).shuffle(unique)
    n_train = round(fractions[0] * len(unique))
    n_dev = round(fractions[1] * len(unique))
    cuts = {"train": unique[:n_train], "dev": unique[n_train:n_train + n_dev], "test": unique[n_train + n_dev:]}
    return {split: sorted(cuts[split]) for split in SPLITS}


def write_split(path: PathLike, split: Dict[str, List[str]], seed: int, source: str) -> None:
    """Write a split as JSON, with the seed and source it was drawn from."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"corpus": "Hallmarks of Cancer", "source": source, "seed": seed,
               "sizes": {name: len(split[name]) for name in SPLITS}, **{name: split[name] for name in SPLITS}}
    path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf8")


def read_split(path: PathLike) -> Dict[str, List[str]]:
    """The ``{"train", "dev", "test"}`` PMID lists of a split file; CorpusFormatError naming the
    file when a split is missing or a PMID is in two splits."""
    path = Path(path)
    payload = json.loads(path.read_text(encoding="utf8"))
    missing = [name for name in SPLITS if not isinstance(payload.get(name), list)]
    if missing:
        raise CorpusFormatError(path, None, f"split file needs PMID lists {', '.join(missing)}")
    owner: Dict[str, str] = {}
    for name in SPLITS:
        for pmid in payload[name]:
            if str(pmid) in owner:
                raise CorpusFormatError(path, None, f"PMID {pmid} is in both {owner[str(pmid)]} and {name}")
            owner[str(pmid)] = name
    return {name: [str(p) for p in payload[name]] for name in SPLITS}


def hoc_to_doc(vocab: Vocab, abstract: HocAbstract) -> Doc:
    """The Doc of one abstract (see the module docstring for what it carries)."""
    words: List[str] = []
    sent_starts: List[bool] = []
    bounds: List[Tuple[int, int]] = []
    for sentence in abstract.sentences:
        tokens = sentence.split()
        bounds.append((len(words), len(words) + len(tokens)))
        words.extend(tokens)
        sent_starts.extend([True] + [False] * (len(tokens) - 1))
    doc = Doc(vocab, words=words, spaces=[True] * (len(words) - 1) + [False], sent_starts=sent_starts)
    spans = []
    for (start, end), classes in zip(bounds, abstract.sentence_classes):
        for hallmark in dict.fromkeys(hallmark_of(c) for c in classes):
            spans.append(Span(doc, start, end, label=hallmark))
    doc.spans[SPANS_KEY] = spans
    present = set(abstract.hallmarks)
    doc.cats = {h: float(h in present) for h in HALLMARKS}
    doc.user_data["hoc_pmid"] = abstract.pmid
    doc.user_data["hoc_sentence_classes"] = [list(c) for c in abstract.sentence_classes]
    return doc


def convert_hoc(input_path: PathLike, split_path: PathLike, output_dir: PathLike, limit: int = 0) -> Dict[str, Dict[str, object]]:
    """The corpus (the raw tree, ``assets/hoc_raw``, or ``hoc.jsonl``) ->
    ``output_dir/{train,dev,test}.spacy`` by the split file. Every PMID of the
    corpus must be in the split and every PMID of the split in the corpus (CorpusFormatError
    naming the file and the PMIDs otherwise, before anything is written). ``limit``: the first N
    PMIDs of each split only (0: all; smoke runs). Returns per split the number of documents, of
    documents without a hallmark, and the documents per hallmark."""
    split = read_split(split_path)
    abstracts = {a.pmid: a for a in read_hoc(input_path)}
    assigned = {pmid for pmids in split.values() for pmid in pmids}
    unassigned = sorted(set(abstracts) - assigned)
    absent = sorted(assigned - set(abstracts))
    if unassigned:
        first = abstracts[unassigned[0]]
        raise CorpusFormatError(first.path or input_path, first.line,
                                f"{len(unassigned)} PMIDs not in the split {split_path}: {', '.join(unassigned[:5])}")
    if absent:
        raise CorpusFormatError(split_path, None, f"{len(absent)} PMIDs of the split not in {input_path}: {', '.join(absent[:5])}")
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    vocab = Vocab()
    report: Dict[str, Dict[str, object]] = {}
    for name in SPLITS:
        docbin = DocBin(store_user_data=True)
        per_hallmark = dict.fromkeys(HALLMARKS, 0)
        pmids = split[name][:limit] if limit else split[name]
        for pmid in pmids:
            doc = hoc_to_doc(vocab, abstracts[pmid])
            docbin.add(doc)
            for hallmark in abstracts[pmid].hallmarks:
                per_hallmark[hallmark] += 1
        out = output_dir / f"{name}.spacy"
        docbin.to_disk(out)
        report[name] = {"output": str(out), "documents": len(pmids),
                        "without_hallmark": sum(not abstracts[p].hallmarks for p in pmids),
                        "per_hallmark": per_hallmark}
    return report
