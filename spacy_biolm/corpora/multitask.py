"""Multi-task training data: the tasks' corpora interleaved, each Doc annotated for its own tasks.

Each task of the release has its own corpus (NCBI-disease for diseases, BC2GM for genes, GAD for
relations, HoC for the hallmarks), and no Doc is annotated for all of them. A
:class:`TaskCorpus` reads one corpus and marks on every reference Doc which annotations are
*missing*, in the ways the components already understand, so that a Doc gives no loss (and no
score) to a task it was not annotated for:

* ``entities`` not annotated: every token's entity tag is missing (spaCy's ``ner`` learns nothing
  from it). Annotated: its ``entity_types`` are recorded on the Doc
  (:func:`~spacy_biolm.doc_data.set_annotated_entity_types`); tokens outside its entities are
  ``O``, i.e. negatives of those types, and the NER scorer counts only those types there.
* ``cats`` not annotated: ``doc.cats`` is empty (``textcat_multilabel`` masks absent labels).
* ``relations`` not annotated: :func:`~spacy_biolm.doc_data.mark_relations_missing`.

:class:`MultiTaskCorpus` interleaves the task corpora on a schedule: ``proportional`` (each
corpus by its size), ``temperature`` (by size to the power 1/T: small corpora sampled more often)
or ``round_robin`` (equal shares). An epoch is ``size`` Examples (0: the corpora's total), shared
out by the schedule and interleaved so that every stretch of the stream has the same mixture;
a corpus shorter than its share is read again, a longer one continues where the last epoch
stopped.

spaCy only: imported through the ``spacy_readers`` entry points.
"""

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import registry

from ..doc_data import give_entities, mark_relations_missing, set_annotated_entity_types
from ..errors import CorpusFormatError
from .corpus_files import check_limit, existing_corpus_file, first, read_docbin, unannotated_copy
from .entity_types import annotated_types

__all__ = ["ANNOTATIONS", "SCHEDULES", "TaskCorpus", "MultiTaskCorpus", "schedule_shares", "create_task_corpus",
           "create_multitask_corpus", "teaches", "entity_type_corpora", "create_entity_type_corpora"]

#: What a task corpus can annotate: ``doc.ents``, ``doc.cats``, ``doc._.relations``.
ANNOTATIONS = ("entities", "cats", "relations")
#: How :class:`MultiTaskCorpus` shares an epoch out between its corpora.
SCHEDULES = ("proportional", "temperature", "round_robin")


class TaskCorpus:
    """One task's DocBin, its reference Docs marked missing for what it does not annotate."""

    def __init__(
        self,
        path: Path,
        annotates: Sequence[str],
        entity_types: Sequence[str] = (),
        gold_entities: bool = False,
        limit: int = 0,
        annotated_types: Optional[Sequence[str]] = None,
    ):
        self.path = existing_corpus_file(path, "TaskCorpus", "task DocBin")
        unknown = sorted(set(annotates) - set(ANNOTATIONS))
        if unknown or not annotates:
            raise ValueError(f"TaskCorpus {self.path}: annotates must name some of {list(ANNOTATIONS)}, got {list(annotates)}")
        if ("entities" in annotates) != bool(entity_types):
            raise ValueError(
                f"TaskCorpus {self.path}: entity_types names the entity labels a corpus annotating entities marks "
                f"(and only such a corpus), got annotates={list(annotates)}, entity_types={list(entity_types)}"
            )
        self.annotates = tuple(annotates)
        self.entity_types = tuple(entity_types)
        # The types its Docs record as annotated completely: all it marks, unless other corpora alone
        # teach some (an ablation, or a corpus added for its other types): its mentions of those then
        # teach no typed_ner.
        self.annotated_types = self.entity_types if annotated_types is None else tuple(annotated_types)
        if not set(self.annotated_types) <= set(self.entity_types):
            raise ValueError(f"TaskCorpus {self.path}: annotated_types {list(self.annotated_types)} must be among "
                             f"its entity_types {list(self.entity_types)}")
        self.gold_entities = gold_entities
        self.limit = check_limit(limit)
        n_docs = len(DocBin().from_disk(self.path))
        self.n_docs = n_docs if not self.limit else min(n_docs, self.limit)
        if not self.n_docs:
            raise ValueError(f"TaskCorpus {self.path}: the DocBin has no Docs")

    def __len__(self) -> int:
        return self.n_docs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        """Yield one Example per Doc: the predicted Doc has the reference's tokens (and with
        ``gold_entities`` its entities, given to it: see :func:`~spacy_biolm.doc_data.give_entities`); the reference is marked missing for what it does not annotate."""
        for index, reference in enumerate(first(read_docbin(self.path, nlp.vocab), self.limit)):
            predicted = unannotated_copy(reference)
            if self.gold_entities:
                give_entities(predicted, reference.ents)
            self.mark_missing(reference, index)
            yield Example(predicted, reference)

    def mark_missing(self, doc: Doc, index: int) -> None:
        """Mark on ``doc`` (Doc ``index`` of the file) the annotations this corpus does not have."""
        if "entities" in self.annotates:
            unknown = sorted({e.label_ for e in doc.ents} - set(self.entity_types))
            if unknown:
                raise CorpusFormatError(
                    self.path, None, f"Doc {index}: entity labels {unknown} are not among the corpus's entity_types "
                    f"{list(self.entity_types)}; add them there or map them at conversion")
            set_annotated_entity_types(doc, self.annotated_types)
        else:
            doc.set_ents([], default="missing")
        if "cats" not in self.annotates:
            doc.cats = {}
        if "relations" not in self.annotates:
            mark_relations_missing(doc)


def schedule_shares(sizes: Dict[str, int], schedule: str, temperature: float = 1.0) -> Dict[str, float]:
    """Each corpus's share of an epoch (summing to 1) under ``schedule``."""
    if schedule not in SCHEDULES:
        raise ValueError(f"unknown schedule {schedule!r}; expected one of {list(SCHEDULES)}")
    if schedule == "temperature" and not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    power = {"proportional": 1.0, "temperature": 1.0 / temperature, "round_robin": 0.0}[schedule]
    weights = {name: float(n) ** power for name, n in sizes.items()}
    total = sum(weights.values())
    return {name: w / total for name, w in weights.items()}


def _counts(shares: Dict[str, float], total: int) -> Dict[str, int]:
    """``total`` split by ``shares`` into whole numbers (largest remainders), each at least 1."""
    exact = {name: share * total for name, share in shares.items()}
    counts = {name: max(1, int(x)) for name, x in exact.items()}
    by_remainder = sorted(exact, key=lambda name: exact[name] - int(exact[name]), reverse=True)
    for name in by_remainder[: max(0, total - sum(counts.values()))]:
        counts[name] += 1
    return counts


def _interleaved(counts: Dict[str, int]) -> Iterator[str]:
    """The corpus names, each ``counts[name]`` times, spread evenly (smooth weighted round robin)."""
    total = sum(counts.values())
    credit = {name: 0 for name in counts}
    for _ in range(total):
        for name, n in counts.items():
            credit[name] += n
        chosen = max(credit, key=credit.__getitem__)
        credit[chosen] -= total
        yield chosen


class MultiTaskCorpus:
    """The task corpora interleaved by a schedule; ``corpus(nlp)`` yields one epoch of Examples."""

    def __init__(self, corpora: Dict[str, TaskCorpus], schedule: str = "temperature", temperature: float = 2.0,
                 size: int = 0):
        if not corpora:
            raise ValueError("MultiTaskCorpus needs at least one task corpus")
        for name, corpus in corpora.items():
            if not isinstance(corpus, TaskCorpus):
                raise TypeError(f"MultiTaskCorpus corpus {name!r} must be a spacy-biolm.TaskCorpus.v1, got {type(corpus).__name__}")
        self.corpora = dict(corpora)
        self.size = check_limit(size)
        self.shares = schedule_shares({name: len(c) for name, c in self.corpora.items()}, schedule, temperature)
        self.counts = _counts(self.shares, self.size or sum(len(c) for c in self.corpora.values()))
        self._streams: Dict[str, Iterator[Example]] = {}

    def _stream(self, name: str, nlp: Language) -> Iterator[Example]:
        while True:
            yield from self.corpora[name](nlp)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        streams = self._streams
        for name in self.corpora:
            if name not in streams:
                streams[name] = self._stream(name, nlp)
        for name in _interleaved(self.counts):
            yield next(streams[name])


@registry.readers("spacy-biolm.TaskCorpus.v1")
def create_task_corpus(
    path: Path,
    annotates: List[str],
    entity_types: List[str] = [],
    gold_entities: bool = False,
    limit: int = 0,
    annotated_types: Optional[List[str]] = None,
) -> Callable[[Language], Iterable[Example]]:
    """One task's corpus inside a ``spacy-biolm.MultiTaskCorpus.v1``: a DocBin whose Docs are
    annotated for ``annotates`` and marked missing for the rest.

    Args:
        path: the DocBin (what the project's converters write).
        annotates: what its Docs annotate, among ``entities`` (``doc.ents``), ``cats``
            (``doc.cats``) and ``relations`` (``doc._.relations``).
        entity_types: with ``entities``: the labels its ``doc.ents`` mark every mention of
            (e.g. ``["DISEASE"]`` for NCBI-disease); another label in the file is an error.
        gold_entities: copy the gold entities onto the predicted Doc, as
            ``spacy-biolm.RelationCorpus.v1`` does (a relation corpus whose entities the
            relation extractor pairs; the ``ner`` keeps them and adds none).
        limit: read at most this many Docs (0: all).
        annotated_types: the ``entity_types`` its Docs teach (null: all of them); the others are
            recorded as not annotated, so their ``typed_ner`` learns nothing from this corpus
            (a corpus that adds new types to a release whose other types keep their own corpora).
    """
    return TaskCorpus(path, annotates, entity_types=entity_types, gold_entities=gold_entities, limit=limit,
                      annotated_types=annotated_types)


@registry.readers("spacy-biolm.MultiTaskCorpus.v1")
def create_multitask_corpus(
    tasks: Dict[str, Any],
    schedule: str = "temperature",
    temperature: float = 2.0,
    size: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Train (or evaluate) every component of a pipeline at once from corpora that each annotate
    one task: the ``spacy-biolm.TaskCorpus.v1`` readers in ``tasks``, interleaved.

    Example config::

        [corpora.train]
        @readers = "spacy-biolm.MultiTaskCorpus.v1"
        schedule = "temperature"
        temperature = 2.0
        size = 0

        [corpora.train.tasks.diseases]
        @readers = "spacy-biolm.TaskCorpus.v1"
        path = "corpus/ner/NCBI-disease/train.spacy"
        annotates = ["entities"]
        entity_types = ["DISEASE"]

    Args:
        tasks: name -> task corpus.
        schedule: ``proportional`` (a corpus's share is its size), ``temperature`` (size to the
            power ``1/temperature``) or ``round_robin`` (equal shares).
        temperature: the ``temperature`` schedule's T; 1 is proportional, larger evens out.
        size: Examples per epoch (per call); 0: the corpora's total number of Docs. With
            ``proportional`` and 0, an epoch is every Doc of every corpus once.
    """
    return MultiTaskCorpus(tasks, schedule=schedule, temperature=temperature, size=size)


def teaches(corpus: str, entity_type: str, type_corpora: Optional[Dict[str, Sequence[str]]] = None) -> bool:
    """Whether ``corpus`` teaches ``entity_type`` (one it annotates) under a reader's ``type_corpora``:
    a type named there is taught by those corpora alone."""
    return corpus in (type_corpora or {}).get(entity_type, [corpus])


def entity_type_corpora(directory: Path, corpora: Sequence[str], split: str, limit: int = 0,
                        held_out: str = "", type_corpora: Optional[Dict[str, Sequence[str]]] = None) -> Dict[str, TaskCorpus]:
    """``{corpus: TaskCorpus}`` of NER corpora converted to the release's entity types
    (``directory/<corpus>/<split>.spacy``, as projects/entity-types writes them), each annotating
    the types :data:`~spacy_biolm.corpora.entity_types.ENTITY_TYPES` maps its labels to;
    ``held_out`` names one of ``corpora`` to leave out (a leave-one-corpus-out run);
    ``type_corpora`` maps a type to the only corpora that teach it (the others are read as before,
    but their Docs record the type as not annotated, so its ``typed_ner`` learns nothing from them)."""
    type_corpora = dict(type_corpora or {})
    for entity_type, teachers in type_corpora.items():
        wrong = [corpus for corpus in teachers if corpus not in corpora or entity_type not in annotated_types(corpus)]
        if wrong or not teachers:
            raise ValueError(f"type_corpora {entity_type!r}: {list(teachers)} must be corpora of the reader "
                             f"{list(corpora)} that annotate {entity_type} (not: {wrong})")
    if held_out:
        if held_out not in corpora:
            raise ValueError(f"held_out corpus {held_out!r} is not among the reader's corpora {list(corpora)}")
        corpora = [corpus for corpus in corpora if corpus != held_out]
    if not corpora:
        raise ValueError("entity_type_corpora needs at least one corpus name")
    tasks = {}
    for corpus in corpora:
        types = annotated_types(corpus)
        if not types:
            raise ValueError(f"{corpus} annotates no entity type completely (spacy_biolm/corpora/entity_types.py): "
                             f"it would teach no typed_ner, leave it out")
        taught = [t for t in types if teaches(corpus, t, type_corpora)]
        tasks[corpus] = TaskCorpus(Path(directory) / corpus / f"{split}.spacy", ["entities"], entity_types=types, limit=limit,
                                   annotated_types=taught)
    return tasks


@registry.readers("spacy-biolm.EntityTypeCorpora.v1")
def create_entity_type_corpora(
    directory: Path,
    corpora: List[str],
    split: str,
    schedule: str = "temperature",
    temperature: float = 2.0,
    size: int = 0,
    limit: int = 0,
    held_out: str = "",
    type_corpora: Dict[str, List[str]] = {},
) -> Callable[[Language], Iterable[Example]]:
    """NER corpora of different entity types interleaved, for one ``typed_ner`` per type: a
    ``spacy-biolm.MultiTaskCorpus.v1`` of one ``spacy-biolm.TaskCorpus.v1`` per corpus, whose
    entity types are the ones the project's table maps its labels to
    (``spacy_biolm/corpora/entity_types.py``), so a corpus never teaches that another's type is
    no entity.

    Args:
        directory: where ``<corpus>/<split>.spacy`` are (projects/entity-types: ``corpus/ner``).
        corpora: the corpora's names in the table (e.g. ``["NCBI-disease", "BC2GM", "LINNAEUS"]``).
        split: ``train``, ``devel`` or ``test``.
        schedule, temperature, size: as ``spacy-biolm.MultiTaskCorpus.v1``.
        limit: read at most this many Docs of each corpus (0: all).
        held_out: one of ``corpora`` not to read (``""``: none), for leave-one-corpus-out runs
            (``spacy-biolm evaluate held-out`` sets it in the train and dev readers).
        type_corpora: an ablation: a type named here is taught only by these corpora, e.g.
            ``{"GENE": ["BC2GM"]}``; the others are still read, and teach their other types.
    """
    tasks = entity_type_corpora(directory, corpora, split, limit=limit, held_out=held_out, type_corpora=type_corpora)
    return MultiTaskCorpus(tasks, schedule=schedule, temperature=temperature, size=size)
