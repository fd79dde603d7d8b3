"""Relation extraction corpora -> spaCy Docs with entities and gold ``doc._.relations``.

Formats (all mirrored under ``shared/data/re/``):

* ``biobert``: the BioBERT RE TSVs of GAD and EU-ADR (10 folds). ``train.tsv`` is
  ``sentence<TAB>label``, ``test.tsv`` has an ``index<TAB>sentence<TAB>label`` header; the target
  gene and disease are already anonymised as ``@GENE$`` and ``@DISEASE$``. Each row becomes one Doc
  whose placeholder tokens are the entities (``@GENE$`` labelled ``GENE``, ``@DISEASE$``
  ``DISEASE``) and, for label 1, one ``ASSOCIATION`` relation gene -> disease. Anonymising the Doc
  again gives back the original sentence exactly, and the fast mode pools the same tokens.
* ``chemprot``: Bio-ELECTRA's ChemProt TSV (``sentence<TAB>label`` with header): the target
  chemical is ``BC6ENTC`` (``CHEMICAL``), the gene ``BC6ENTG`` (``GENE``), other entities
  ``BC6OTHER`` (left as text); label ``CPR:3``..``CPR:9`` or ``False`` (no relation).
  ``group=True`` merges the rows of one sentence (same text once the placeholders are
  normalised) into one Doc with all its chemicals, genes and relations: the multi-pair input the
  fast mode is built for.
* ``scibert``: SciBERT's ChemProt JSON lines, ``{"text": ... << e1 >> ... [[ e2 ]] ..., "label"}``
  (positives only, 13 fine-grained labels): markers are removed, the two spans become
  ``ENTITY`` entities and one relation ``e1 -> e2``.

Rows that cannot hold a relation (a target placeholder missing, unknown label) raise
``CorpusFormatError`` naming ``path:line``; with ``skip_invalid=True`` they are left out and
reported in the returned statistics (line numbers and labels), never dropped silently.

Also the ``spacy-biolm.RelationCorpus.v1`` reader. Imported through the ``spacy_readers`` entry
point: spaCy only, no torch.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from itertools import islice
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import get_words_and_spaces, registry

from ..errors import CorpusFormatError
from ..doc_data import Relation, give_entities, set_relations
from .chemprot_text import MASK, SCIBERT_MARKERS, SciBertTexts, WrittenSentences, load_scibert_texts
from .corpus_files import check_limit, existing_corpus_file, first, read_docbin, unannotated_copy

__all__ = [
    "FORMATS",
    "ConversionStats",
    "read_biobert_re",
    "read_chemprot_tsv",
    "DATASETS",
    "dataset_overrides",
    "read_scibert_chemprot",
    "read_relations",
    "convert_relations",
    "RelationCorpus",
    "create_relation_reader",
]

PathLike = Union[str, Path]
FORMATS = ("biobert", "chemprot", "scibert")

BIOBERT_PLACEHOLDERS = {"@GENE$": "GENE", "@DISEASE$": "DISEASE"}
CHEMPROT_PLACEHOLDERS = {"BC6ENTC": "CHEMICAL", "BC6ENTG": "GENE"}
CHEMPROT_OTHER = "BC6OTHER"
CHEMPROT_LABELS = ("CPR:3", "CPR:4", "CPR:5", "CPR:6", "CPR:9")

#: What the relation_extractor of configs/relations_{anonymised,fast}.cfg is set to for each corpus
#: (the configs carry GAD's): its labels, the entity-type pairs it classifies and, in the anonymised
#: mode, the placeholders its encoder reads (ChemProt's own, as Bio-ELECTRA trained on them).
DATASETS = {
    "gad": {"labels": ["ASSOCIATION"], "pair_types": [["GENE", "DISEASE"]], "placeholders": {}, "other_placeholder": None},
    "chemprot": {"labels": list(CHEMPROT_LABELS), "pair_types": [["CHEMICAL", "GENE"]],
                 "placeholders": {label: mark for mark, label in CHEMPROT_PLACEHOLDERS.items()},
                 "other_placeholder": CHEMPROT_OTHER},
}


def dataset_overrides(dataset: str, anonymised: bool) -> Dict[str, object]:
    """Config overrides that switch a relations config to ``dataset`` (a key of :data:`DATASETS`);
    the placeholders only where the model reads them (``anonymised``)."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown relation dataset {dataset!r}; expected one of {sorted(DATASETS)}")
    settings, prefix = DATASETS[dataset], "components.relation_extractor."
    overrides = {prefix + "labels": settings["labels"], prefix + "pair_types": settings["pair_types"]}
    if anonymised:
        overrides.update({prefix + "model.placeholders": settings["placeholders"],
                          prefix + "model.other_placeholder": settings["other_placeholder"]})
    return overrides


@dataclass
class ConversionStats:
    """What a conversion read and wrote; ``skipped`` lists ``(line, reason)`` of rows left out."""

    rows: int = 0
    docs: int = 0
    relations: Counter = field(default_factory=Counter)
    negatives: int = 0
    skipped: List[Tuple[int, str]] = field(default_factory=list)
    without_text: int = 0  # ChemProt with its text: sentences not in SciBERT's file

    def to_dict(self) -> dict:
        return {
            "rows": self.rows,
            "docs": self.docs,
            "relations": dict(sorted(self.relations.items())),
            "negative_pairs": self.negatives,
            **({"sentences_without_text": self.without_text} if self.without_text else {}),
            "skipped_rows": len(self.skipped),
            "skipped": [{"line": line, "reason": reason} for line, reason in self.skipped],
        }


def _make_doc(nlp: Language, text: str, entities: Sequence[Tuple[int, int, str]]) -> Doc:
    """Tokenise ``text`` so every entity (start_char, end_char, label) is exactly a token span;
    ``doc.text == text``."""
    words: List[str] = []
    cursor = 0
    for start, end, _ in sorted(entities):
        words += [t.text for t in nlp.tokenizer(text[cursor:start])]
        words += [t.text for t in nlp.tokenizer(text[start:end])]
        cursor = end
    words += [t.text for t in nlp.tokenizer(text[cursor:])]
    words = [w for w in words if not w.isspace()]
    words, spaces = get_words_and_spaces(words, text)
    doc = Doc(nlp.vocab, words=words, spaces=spaces)
    spans = []
    for start, end, label in entities:
        span = doc.char_span(start, end, label=label)
        if span is None:  # cannot happen with the segment-wise tokenisation above
            raise ValueError(f"entity {text[start:end]!r} at {start}:{end} does not align with tokens")
        spans.append(span)
    doc.ents = spans
    return doc


def _placeholder_spans(text: str, placeholders: Dict[str, str]) -> List[Tuple[int, int, str, str]]:
    pattern = re.compile("|".join(re.escape(p) for p in sorted(placeholders, key=len, reverse=True)))
    return [(m.start(), m.end(), placeholders[m.group()], m.group()) for m in pattern.finditer(text)]


def _one_each(path, line: int, text: str, placeholders: Dict[str, str]) -> List[Tuple[int, int, str]]:
    """The spans of exactly one of each placeholder, or a CorpusFormatError."""
    found = _placeholder_spans(text, placeholders)
    counts = Counter(p for *_, p in found)
    wrong = {p: counts.get(p, 0) for p in placeholders if counts.get(p, 0) != 1}
    if wrong:
        detail = ", ".join(f"{p} x{n}" for p, n in wrong.items())
        raise CorpusFormatError(path, line, f"expected each of {list(placeholders)} exactly once, found {detail}")
    return [(s, e, label) for s, e, label, _ in found]


def _rows(path: Path, header: Optional[Sequence[str]] = None) -> Iterator[Tuple[int, List[str]]]:
    with path.open(encoding="utf8") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            fields = line.split("\t")
            if number == 1 and header is not None and [x.strip().lower() for x in fields] in header:
                continue
            yield number, fields


def _add_doc(nlp, text, ents, relation_specs, stats: ConversionStats) -> Doc:
    """Make a Doc and its gold relations from (head_index, tail_index, label) over ``ents``."""
    doc = _make_doc(nlp, text, ents)
    by_start = {span.start_char: span for span in doc.ents}
    relations = []
    for head_i, tail_i, label in relation_specs:
        relations.append(Relation(by_start[ents[head_i][0]], by_start[ents[tail_i][0]], label))
        stats.relations[label] += 1
    set_relations(doc, relations)
    stats.docs += 1
    return doc


def _labelled_rows(
    path: Path, header: Sequence[str], layouts: Dict[int, str], labels: Sequence[str], placeholders: Dict[str, str],
    skip_invalid: bool, stats: ConversionStats,
) -> Iterator[Tuple[int, str, str, List[Tuple[int, int, str]]]]:
    """(line, sentence, label, entity spans) of each row of an anonymised relation TSV whose last
    two fields are the sentence and its label; ``layouts`` names the fields of each accepted field
    count (``{2: "sentence, label"}``), ``labels`` the accepted labels, ``placeholders`` the entities
    each sentence must hold exactly once. A bad row raises CorpusFormatError naming ``path:line``, or with
    ``skip_invalid`` is left out and recorded in ``stats.skipped``."""
    expected = " or ".join(f"{count} ({names})" for count, names in layouts.items())
    for line, fields in _rows(path, header=[list(header)]):
        stats.rows += 1
        try:
            if len(fields) not in layouts:
                raise CorpusFormatError(path, line, f"expected {expected} tab-separated fields, got {len(fields)}")
            text, label = fields[-2], fields[-1].strip()
            if label not in labels:
                raise CorpusFormatError(path, line, f"label {label!r} is not one of {sorted(labels)}")
            ents = _one_each(path, line, text, placeholders)
        except CorpusFormatError as err:
            if not skip_invalid:
                raise
            stats.skipped.append((line, err.reason))
            continue
        yield line, text, label, ents


def read_biobert_re(
    path: PathLike, nlp: Language, positive_label: str = "ASSOCIATION", skip_invalid: bool = False,
    stats: Optional[ConversionStats] = None,
) -> Iterator[Doc]:
    """Docs from a BioBERT RE TSV (GAD, EU-ADR): gene and disease entities, a
    ``positive_label`` relation gene -> disease for label 1, none for label 0."""
    path = Path(path)
    stats = stats if stats is not None else ConversionStats()
    layouts = {2: "sentence, label", 3: "index, sentence, label"}
    rows = _labelled_rows(path, ["index", "sentence", "label"], layouts, ["0", "1"], BIOBERT_PLACEHOLDERS,
                          skip_invalid, stats)
    for _, text, label, ents in rows:
        gene = next(i for i, e in enumerate(ents) if e[2] == "GENE")
        disease = 1 - gene
        if label == "0":
            stats.negatives += 1
        yield _add_doc(nlp, text, ents, [(gene, disease, positive_label)] if label == "1" else [], stats)


def read_chemprot_tsv(
    path: PathLike, nlp: Language, group: bool = False, skip_invalid: bool = False,
    stats: Optional[ConversionStats] = None, text_from: Optional[PathLike] = None,
) -> Iterator[Doc]:
    """Docs from Bio-ELECTRA's ChemProt TSV: ``CHEMICAL`` (``BC6ENTC``) and ``GENE`` (``BC6ENTG``)
    entities and a ``CPR:n`` relation chemical -> gene, none for ``False``. With ``group=True``
    the rows of one sentence become one Doc (see the module docstring); ``text_from`` (SciBERT's
    ChemProt file of the same split, implies ``group``) gives each its words back
    (:mod:`~spacy_biolm.corpora.chemprot_text`): sentences without a relation or not found there
    are left out and counted (``sentences_without_text``)."""
    path = Path(path)
    texts = SciBertTexts(load_scibert_texts(text_from)) if text_from is not None else None
    group = group or texts is not None
    stats = stats if stats is not None else ConversionStats()
    rows = []
    labelled = _labelled_rows(path, ["sentence", "label"], {2: "sentence, label"}, [*CHEMPROT_LABELS, "False"],
                              CHEMPROT_PLACEHOLDERS, skip_invalid, stats)
    for line, text, label, ents in labelled:
        chem = next(i for i, e in enumerate(ents) if e[2] == "CHEMICAL")
        if label == "False":
            stats.negatives += 1
        if not group:
            yield _add_doc(nlp, text, ents, [] if label == "False" else [(chem, 1 - chem, label)], stats)
        else:
            rows.append((line, text, label))
    if group:
        yield from _grouped_chemprot(rows, nlp, stats, texts)


_ANY_CHEMPROT = re.compile(r"BC6ENTC|BC6ENTG|BC6OTHER")


def _grouped_chemprot(rows, nlp, stats: ConversionStats, texts: Optional[SciBertTexts] = None) -> Iterator[Doc]:
    groups: Dict[str, list] = {}
    for line, text, label in rows:
        groups.setdefault(_ANY_CHEMPROT.sub(MASK, text), []).append((line, text, label))
    written = WrittenSentences()
    for key, members in groups.items():
        roles: Dict[int, str] = {}  # placeholder occurrence -> BC6ENTC / BC6ENTG
        pairs = []
        for line, text, label in members:
            tokens = [m.group() for m in _ANY_CHEMPROT.finditer(text)]
            chem, gene = tokens.index("BC6ENTC"), tokens.index("BC6ENTG")
            pairs.append((chem, gene, label, line))
            for index, role in ((chem, "BC6ENTC"), (gene, "BC6ENTG")):
                if roles.setdefault(index, role) != role:
                    roles[index] = "conflict"
        if texts is not None:
            _add_written(written, key, members[0][0], roles, pairs, texts, stats)
            continue
        if "conflict" in roles.values():  # one mention used as chemical and as gene: keep rows apart
            for line, text, label in members:
                ents = _one_each(None, line, text, CHEMPROT_PLACEHOLDERS)
                chem = next(i for i, e in enumerate(ents) if e[2] == "CHEMICAL")
                yield _add_doc(nlp, text, ents, [] if label == "False" else [(chem, 1 - chem, label)], stats)
            continue
        pieces, ents, index_of, cursor = [], [], {}, 0
        occurrence = 0
        for part in re.split(f"({MASK})", key):
            if part != MASK:
                pieces.append(part)
                cursor += len(part)
                continue
            token = roles.get(occurrence, CHEMPROT_OTHER)
            if token != CHEMPROT_OTHER:
                index_of[occurrence] = len(ents)
                ents.append((cursor, cursor + len(token), CHEMPROT_PLACEHOLDERS[token]))
            pieces.append(token)
            cursor += len(token)
            occurrence += 1
        specs = [(index_of[c], index_of[g], label) for c, g, label, _ in pairs if label != "False"]
        yield _add_doc(nlp, "".join(pieces), ents, specs, stats)
    for text, ents, specs, nested in written.sentences():
        stats.skipped += [(line, "a relation on a mention nested in another (doc.ents cannot hold both)") for line in nested]
        yield _add_doc(nlp, text, ents, specs, stats)


def _add_written(written: WrittenSentences, key: str, line: int, roles, pairs, texts: SciBertTexts,
                 stats: ConversionStats) -> None:
    """The masked sentence ``key`` (first row ``line``) as SciBERT wrote it, if it has a relation and is found."""
    if all(label == "False" for _, _, label, _ in pairs):
        stats.without_text += 1  # SciBERT keeps sentences with a relation only
        return
    if "conflict" in roles.values():
        stats.skipped.append((line, "one mention is the target chemical of a row and the target gene of another"))
        return
    found = texts.find(key)
    if found is None:
        stats.without_text += 1
        return
    text, spans = found
    mentions = {occurrence: (*spans[occurrence], CHEMPROT_PLACEHOLDERS[mask]) for occurrence, mask in roles.items()}
    written.add(text, mentions.values(), [(mentions[c], mentions[g], label, row) for c, g, label, row in pairs if label != "False"])


def read_scibert_chemprot(
    path: PathLike, nlp: Language, skip_invalid: bool = False, stats: Optional[ConversionStats] = None,
) -> Iterator[Doc]:
    """Docs from SciBERT's ChemProt JSON lines: the ``<< >>`` and ``[[ ]]`` spans become
    ``ENTITY`` entities (markers removed from the text) with one relation ``<<e1>> -> [[e2]]``."""
    path = Path(path)
    stats = stats if stats is not None else ConversionStats()
    with path.open(encoding="utf8") as f:
        for line, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            stats.rows += 1
            try:
                try:
                    record = json.loads(raw)
                except json.JSONDecodeError as err:
                    raise CorpusFormatError(path, line, f"not valid JSON: {err}") from None
                if not isinstance(record, dict) or not isinstance(record.get("text"), str) or not record.get("label"):
                    raise CorpusFormatError(path, line, "expected an object with string fields 'text' and 'label'")
                marked = record["text"]
                found = list(SCIBERT_MARKERS.finditer(marked))
                kinds = [m.group(1) is not None for m in found]
                if len(found) != 2 or kinds.count(True) != 1:
                    raise CorpusFormatError(path, line, "expected one '<< ... >>' and one '[[ ... ]]' entity")
            except CorpusFormatError as err:
                if not skip_invalid:
                    raise
                stats.skipped.append((line, err.reason))
                continue
            pieces, ents, cursor, out = [], [None, None], 0, 0
            for match in found:
                before = marked[cursor:match.start()]
                pieces.append(before)
                out += len(before)
                inner = match.group(1) if match.group(1) is not None else match.group(2)
                ents[0 if match.group(1) is not None else 1] = (out, out + len(inner), "ENTITY")
                pieces.append(inner)
                out += len(inner)
                cursor = match.end()
            pieces.append(marked[cursor:])
            yield _add_doc(nlp, "".join(pieces), ents, [(0, 1, str(record["label"]))], stats)


def read_relations(
    path: PathLike, fmt: str, nlp: Language, stats: Optional[ConversionStats] = None, **options
) -> Iterator[Doc]:
    """Dispatch on ``fmt`` (one of ``FORMATS``)."""
    readers = {"biobert": read_biobert_re, "chemprot": read_chemprot_tsv, "scibert": read_scibert_chemprot}
    if fmt not in readers:
        raise ValueError(f"unknown relation corpus format {fmt!r}; expected one of {list(readers)}")
    return readers[fmt](path, nlp, stats=stats, **options)


def _blank_nlp() -> Language:
    import spacy

    return spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})


def convert_relations(
    input_path: PathLike,
    output_path: PathLike,
    fmt: str,
    dev_output: Optional[PathLike] = None,
    dev_fraction: float = 0.0,
    seed: int = 0,
    nlp: Optional[Language] = None,
    limit: int = 0,
    **options,
) -> dict:
    """Convert a relation corpus to a DocBin (user data kept, so the gold relations travel).

    With ``dev_output`` and ``dev_fraction`` a seeded random share of the Docs goes to a second
    DocBin (GAD and EU-ADR ship no development split). ``limit`` > 0 stops after that many Docs
    (quick runs). Returns the conversion statistics.
    """
    if dev_output is not None and not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in (0, 1) when dev_output is given, got {dev_fraction}")
    nlp = nlp or _blank_nlp()
    stats = ConversionStats()
    docs = list(islice(read_relations(input_path, fmt, nlp, stats=stats, **options), limit or None))
    dev_docs: List[Doc] = []
    if dev_output is not None:
        order = list(range(len(docs)))
        random.Random(seed).shuffle(order)
        dev_ids = set(order[: max(1, round(len(docs) * dev_fraction))])
        dev_docs = [d for i, d in enumerate(docs) if i in dev_ids]
        docs = [d for i, d in enumerate(docs) if i not in dev_ids]
    result = stats.to_dict()
    for docs_out, out_path in ((docs, output_path), (dev_docs, dev_output)):
        if out_path is None:
            continue
        out_path = Path(out_path)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        DocBin(docs=docs_out, store_user_data=True).to_disk(out_path)
    result["written"] = {str(output_path): len(docs), **({str(dev_output): len(dev_docs)} if dev_output else {})}
    return result


class RelationCorpus:
    """Callable corpus over a relation DocBin: yields Examples whose predicted Doc has the
    reference's tokens and, with ``gold_entities``, its entities, given to it (so the relation
    extractor is trained and evaluated on gold entities, also behind a ``ner``: see
    :func:`~spacy_biolm.doc_data.give_entities`)."""

    def __init__(self, path: PathLike, gold_entities: bool = True, limit: int = 0):
        self.path = existing_corpus_file(path, "RelationCorpus", "relation corpus")
        self.gold_entities = gold_entities
        self.limit = check_limit(limit)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for reference in first(read_docbin(self.path, nlp.vocab), self.limit):
            predicted = unannotated_copy(reference)
            if self.gold_entities:
                give_entities(predicted, reference.ents)
            yield Example(predicted, reference)


@registry.readers("spacy-biolm.RelationCorpus.v1")
def create_relation_reader(path: Path, gold_entities: bool = True, limit: int = 0) -> Callable[[Language], Iterable[Example]]:
    """Read a relation DocBin (from ``spacy-biolm relations convert``) for training or evaluation.

    Example config::

        [corpora.train]
        @readers = "spacy-biolm.RelationCorpus.v1"
        path = ${paths.train}
        gold_entities = true
        limit = 0

    Args:
        path: a ``.spacy`` file written with user data (gold relations ride in ``doc.user_data``).
        gold_entities: copy the reference entities onto the predicted Doc (train/evaluate the
            relation extractor on gold entities, as the papers do). Set false when an upstream
            ``ner`` in the pipeline predicts the entities (end-to-end evaluation).
        limit: stop after this many Examples; 0 reads everything.
    """
    return RelationCorpus(path, gold_entities=gold_entities, limit=limit)
