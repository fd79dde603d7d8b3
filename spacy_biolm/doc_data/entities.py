"""Which entity types a Doc's gold ``doc.ents`` annotate, and the entities given to a Doc for
relation extraction.

The release finds several entity types (DISEASE, GENE, ...), but each NER corpus annotates only
its own: in NCBI-disease a gene is not marked, so it is not a negative of GENE either. A
reference Doc records the types its ``doc.ents`` are complete for in ``doc.user_data``
(it survives ``DocBin(store_user_data=True)``); a ``typed_ner`` learns only from Docs that
annotate its types, and the NER scorer counts, in each Doc, only entities of those types,
predicted or gold. A Doc without the record annotates every type (spaCy's
convention for ``doc.ents``).

Relation extraction is trained and scored on gold entities (as the papers do). In a pipeline with
a ``ner`` before the relation extractor, ``ner`` keeps gold entities copied onto ``doc.ents`` but
adds its own around them, whose pairs the corpus never labelled (GAD and EU-ADR label one pair per
sentence), so a corpus *gives* its gold entities to the Doc (:func:`give_entities`) and the
relation extractor pairs those when present (:func:`relation_entities`), ``doc.ents`` otherwise.

A predicted Doc's ``doc.ents`` cannot overlap: where a gene overlaps a disease found before it
(``ataxia telangiectasia mutated`` over ``ataxia telangiectasia``) one of them is left out. The
``typed_ner`` components also keep every entity they find, overlaps included, in
``doc.spans[ENTITIES_SPANS_KEY]``, and the NER scorer counts that group where a Doc has it.
"""

from __future__ import annotations

from typing import FrozenSet, Iterable, Optional, Tuple

from spacy.tokens import Doc, Span

__all__ = [
    "ENTITIES_SPANS_KEY",
    "ENTITY_TYPES_USER_DATA_KEY",
    "GIVEN_ENTITIES_USER_DATA_KEY",
    "annotated_entity_types",
    "give_entities",
    "relation_entities",
    "set_annotated_entity_types",
]

ENTITIES_SPANS_KEY = "entities"
ENTITY_TYPES_USER_DATA_KEY = "spacy_biolm.entity_types"
GIVEN_ENTITIES_USER_DATA_KEY = "spacy_biolm.given_entities"


def set_annotated_entity_types(doc: Doc, types: Iterable[str]) -> None:
    """Record that ``doc.ents`` annotate exactly ``types``: every mention of them (outside tokens
    whose entity tag is missing), no other type. No types: the Doc annotates none (a corpus whose
    labels are all missing or outside for the entity types, such as AnatEM's)."""
    types = sorted(set(types))
    if not all(isinstance(t, str) and t for t in types):
        raise ValueError(f"annotated entity types must be non-empty label strings, got {types!r}")
    doc.user_data[ENTITY_TYPES_USER_DATA_KEY] = types


def annotated_entity_types(doc: Doc) -> Optional[FrozenSet[str]]:
    """The entity types ``doc.ents`` annotate, or None when not recorded (then: every type)."""
    types = doc.user_data.get(ENTITY_TYPES_USER_DATA_KEY)
    return None if types is None else frozenset(types)


def give_entities(doc: Doc, entities: Iterable[Span]) -> None:
    """Set ``entities`` (not overlapping; spans of ``doc`` or of a Doc with its tokens, such as the
    gold Doc it was copied from) as ``doc.ents`` and record them as the Doc's given entities,
    which a later ``ner`` cannot change for the relation extractor."""
    given = sorted(((e.start, e.end, e.label_) for e in entities), key=lambda e: e[0])
    misplaced = [doc[start:end].text for start, end, _ in given if end > len(doc)]
    misplaced += [e.text for e in entities if e.end <= len(doc) and doc[e.start:e.end].text != e.text]
    if misplaced:
        raise ValueError(f"given entities must be spans of the Doc's tokens, got {misplaced}")
    doc.ents = [Span(doc, start, end, label=label) for start, end, label in given]
    doc.user_data[GIVEN_ENTITIES_USER_DATA_KEY] = given


def relation_entities(doc: Doc) -> Tuple[Span, ...]:
    """The entities the relation extractor pairs: the given ones when recorded, else ``doc.ents``."""
    given = doc.user_data.get(GIVEN_ENTITIES_USER_DATA_KEY)
    if given is None:
        return tuple(doc.ents)
    return tuple(Span(doc, start, end, label=label) for start, end, label in given)
