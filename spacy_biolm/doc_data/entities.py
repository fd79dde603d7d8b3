"""Which entity types a Doc's gold ``doc.ents`` annotate.

One ``ner`` finds every entity type of the release (DISEASE, GENE, ...), but each NER corpus
annotates only its own: in NCBI-disease a gene is not marked, so it is not a negative of GENE
either. A reference Doc records the types its ``doc.ents`` are complete for in ``doc.user_data``
(it survives ``DocBin(store_user_data=True)``); the NER scorer then counts, in each Doc, only
entities of those types, predicted or gold. A Doc without the record annotates every type (spaCy's
convention for ``doc.ents``).
"""

from __future__ import annotations

from typing import FrozenSet, Iterable, Optional

from spacy.tokens import Doc

__all__ = ["ENTITY_TYPES_USER_DATA_KEY", "annotated_entity_types", "set_annotated_entity_types"]

ENTITY_TYPES_USER_DATA_KEY = "spacy_biolm.entity_types"


def set_annotated_entity_types(doc: Doc, types: Iterable[str]) -> None:
    """Record that ``doc.ents`` annotate exactly ``types``: every mention of them, no other type."""
    types = sorted(set(types))
    if not types or not all(isinstance(t, str) and t for t in types):
        raise ValueError(f"annotated entity types must be non-empty label strings, got {types!r}")
    doc.user_data[ENTITY_TYPES_USER_DATA_KEY] = types


def annotated_entity_types(doc: Doc) -> Optional[FrozenSet[str]]:
    """The entity types ``doc.ents`` annotate, or None when not recorded (then: every type)."""
    types = doc.user_data.get(ENTITY_TYPES_USER_DATA_KEY)
    return None if types is None else frozenset(types)
