"""The ``typed_ner`` pipeline component: spaCy's ``ner`` for a fixed set of entity types.

Three things set it apart from ``ner``, and all are for corpora that each annotate some types:

* **It learns only from Docs that annotate all of its types.** A Doc whose corpus recorded other
  types (:func:`~spacy_biolm.doc_data.annotated_entity_types`: NCBI-disease annotates DISEASE)
  is, for a GENE ``typed_ner``, a Doc whose entity tags are all missing: its ``O`` tokens say
  "no disease here", not "no gene here". One ``ner`` for DISEASE and GENE cannot tell the two
  apart (spaCy's missing value is per token), so each corpus taught it that the other's type is
  no entity. Entities of other types in a Doc it learns from are ``O`` for it (a flat annotation:
  a gene is not a disease). A Doc that records no types annotates every type. Its model reads
  only the Docs it learns from, not the whole multi-task batch (:func:`~spacy_biolm.pipes.listening.listening_to`).
* **It adds its entities beside those already on the Doc.** ``ner`` treats earlier entities as
  presets it must reproduce, which a component without their labels cannot do; ``typed_ner``
  parses as if the Doc had none (and no ``sentencizer`` boundaries, which it never saw in
  training) and keeps each earlier entity where its own would overlap, so a pipeline can run one
  ``typed_ner`` per group of types (each listening to one ``transformer``).
* **It loses none of them.** ``doc.ents`` cannot overlap, so an entity that overlaps an earlier one
  is left out of it; ``doc.spans[spans_key]`` (``"entities"``) keeps every entity of the Doc's
  ``typed_ner`` components, overlaps included, and is what their scorer counts.

Its labels are ``entity_types`` (config), never learnt from the data.
"""

from contextlib import contextmanager
from itertools import islice
from typing import Callable, Iterator, List, Optional, Sequence

import numpy
from spacy.attrs import ENT_IOB, ENT_KB_ID, ENT_TYPE, SENT_START
from spacy.language import Language
from spacy.pipeline.ner import DEFAULT_NER_MODEL, EntityRecognizer
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model

from ...doc_data import ENTITIES_SPANS_KEY, annotated_entity_types
from ..listening import listening_to

__all__ = ["TypedEntityRecognizer", "make_typed_ner", "learning_view"]

#: How many training Examples ``initialize`` reads: spaCy's parser, given its labels, sizes the
#: model on its first 10 Docs, but validates every Example of the stream it is given first (a
#: full pass over all of a multi-task pipeline's corpora, for each ``typed_ner``).
INIT_SAMPLE_SIZE = 10

_ENT_ATTRS = [ENT_IOB, ENT_TYPE, ENT_KB_ID]


@contextmanager
def _parsed_as_in_training(docs: Sequence[Doc]) -> Iterator[None]:
    """Inside the block every token's entity tag is missing and, where no dependency parse sets
    them, no sentence boundary is known; both are restored exactly after it. That is how a Doc
    looks when the component learns: spaCy's training does not run a ``sentencizer`` before it,
    whose boundaries at every full stop would stop a gene such as BC2GM's ``PU . 1`` at its ``.``."""
    hidden = [_ENT_ATTRS if doc.has_annotation("DEP") else [*_ENT_ATTRS, SENT_START] for doc in docs]
    saved = [doc.to_array(attrs) for doc, attrs in zip(docs, hidden)]
    for doc, attrs in zip(docs, hidden):
        doc.set_ents([], default="missing")
        if SENT_START in attrs:
            doc.from_array([SENT_START], numpy.zeros((len(doc),), dtype="uint64"))
    try:
        yield
    finally:
        for doc, attrs, array in zip(docs, hidden, saved):
            doc.from_array(attrs, array)


def learning_view(reference: Doc, entity_types: Sequence[str]) -> Doc:
    """What a ``typed_ner`` of ``entity_types`` learns from ``reference``: a copy whose entity
    tags are all missing when its corpus does not annotate every one of the types, else whose
    entities of other types are ``O``. Returns ``reference`` itself when nothing changes."""
    annotated = annotated_entity_types(reference)
    if annotated is not None and not set(entity_types) <= annotated:
        if not reference.has_annotation("ENT_IOB"):
            return reference
        view = reference.copy()
        view.set_ents([], default="missing")
        return view
    foreign = [e for e in reference.ents if e.label_ not in entity_types]
    if not foreign:
        return reference
    view = reference.copy()
    view.set_ents([], outside=[view[e.start:e.end] for e in foreign], default="unmodified")
    return view


class TypedEntityRecognizer(EntityRecognizer):
    """spaCy's ``EntityRecognizer`` restricted to ``entity_types``: learns only from Docs that
    annotate them all and adds its entities beside the Doc's earlier ones."""

    def __init__(self, vocab, model, name: str = "typed_ner", *, entity_types: Sequence[str],
                 spans_key: str = ENTITIES_SPANS_KEY, **kwargs):
        if not entity_types or not all(isinstance(t, str) and t for t in entity_types):
            raise ValueError(f"typed_ner '{name}': entity_types must name at least one entity label, got {entity_types!r}")
        super().__init__(vocab, model, name, **kwargs)
        self.entity_types = tuple(sorted(set(entity_types)))
        self.cfg["spans_key"] = spans_key  # in cfg: saved with the component and given to its scorer

    def add_label(self, label: str) -> int:
        if label not in self.entity_types:
            raise ValueError(f"typed_ner '{self.name}' recognises only {list(self.entity_types)} (its config's "
                             f"entity_types), not '{label}'")
        return super().add_label(label)

    def _ensure_labels_are_added(self, docs):
        # spaCy's parser adds every label it sees on a Doc; these labels are fixed by the config.
        return None

    def initialize(self, get_examples: Callable[[], Sequence[Example]], nlp: Optional[Language] = None, labels=None):
        """Initialize with ``entity_types`` as the labels (``labels`` must be None or the same)."""
        if labels is not None and set(labels) != set(self.entity_types):
            raise ValueError(f"typed_ner '{self.name}': initialize labels {sorted(labels)} differ from its "
                             f"entity_types {list(self.entity_types)}")
        actions = self.moves.get_actions(entity_types=self.entity_types)
        sample = [self._learning_example(eg) for eg in islice(get_examples(), INIT_SAMPLE_SIZE)]
        super().initialize(lambda: sample, nlp=nlp, labels=actions)

    def _learning_example(self, eg: Example) -> Example:
        view = learning_view(eg.reference, self.entity_types)
        # A view has the reference's tokens: the Example's alignment holds, computed once for
        # every typed_ner of the pipeline rather than once each.
        return eg if view is eg.reference else Example(eg.predicted, view, alignment=eg.alignment)

    def update(self, examples: Sequence[Example], *, drop: float = 0.0, sgd=None, losses=None):
        """spaCy's update on the :func:`learning_view` of each Example that teaches these types,
        parsed from a Doc without entities; the model reads only those Docs (:func:`listening_to`)."""
        examples = [self._learning_example(eg) for eg in examples]
        taught = [i for i, eg in enumerate(examples) if len(eg.predicted) and self.moves.has_gold(eg)]
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        with listening_to(self.model, [eg.predicted for eg in examples], taught) as docs:
            if taught:
                with _parsed_as_in_training(docs):
                    super().update([examples[i] for i in taught], drop=drop, sgd=sgd, losses=losses)
        return losses

    def predict(self, docs: Sequence[Doc]):
        with _parsed_as_in_training(docs):
            return super().predict(docs)

    def set_annotations(self, docs: Sequence[Doc], states) -> None:
        """Add the parsed entities to each Doc's ``doc.ents`` where they overlap none of its earlier
        entities, and to ``doc.spans[spans_key]`` (begun from ``doc.ents``) in place of any of
        the same types found before."""
        with _parsed_as_in_training(docs):
            super().set_annotations(docs, states)
            found = [list(doc.ents) for doc in docs]
        key = self.cfg["spans_key"]
        for doc, own in zip(docs, found):
            earlier = list(doc.ents)
            others = [s for s in (doc.spans[key] if key in doc.spans else earlier) if s.label_ not in self.entity_types]
            doc.spans[key] = sorted(others + own, key=lambda span: (span.start, span.end, span.label_))
            taken = numpy.zeros(len(doc) + 1, dtype=bool)
            for ent in earlier:
                taken[ent.start:ent.end] = True
            added = [e for e in own if not taken[e.start:e.end].any()]
            doc.set_ents(earlier + added, default="outside")


@Language.factory(
    "typed_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type", "doc.spans"],
    default_config={
        "model": DEFAULT_NER_MODEL,
        "entity_types": [],
        "spans_key": ENTITIES_SPANS_KEY,
        "update_with_oracle_cut_size": 100,
        "incorrect_spans_key": None,
        "scorer": {"@scorers": "spacy-biolm.annotated_entities_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_typed_ner(
    nlp: Language,
    name: str,
    model: Model,
    entity_types: List[str],
    spans_key: str,
    update_with_oracle_cut_size: int,
    incorrect_spans_key: Optional[str],
    scorer: Optional[Callable],
) -> TypedEntityRecognizer:
    """An ``ner`` for exactly ``entity_types``: trained only on Docs that annotate all of them
    (:func:`learning_view`), its entities added beside the Doc's earlier ones in ``doc.ents`` and
    all of them, overlaps included, in ``doc.spans[spans_key]``. The model and the other settings
    are spaCy ``ner``'s; the scorer counts in each Doc the types it annotates."""
    return TypedEntityRecognizer(
        nlp.vocab, model, name, entity_types=entity_types, spans_key=spans_key,
        update_with_oracle_cut_size=update_with_oracle_cut_size,
        incorrect_spans_key=incorrect_spans_key, scorer=scorer,
    )
