"""Relations on a Doc: the ``Relation`` record and ``doc._.relations``.

Relations are stored in ``doc.user_data`` as plain token offsets
(``[head_start, head_end, tail_start, tail_end, label, score]``), so they survive
``DocBin(store_user_data=True)`` and ``Doc.to_bytes``; ``doc._.relations`` (registered by
:func:`spacy_biolm.doc_data.register_extensions`) turns them into ``Relation`` objects with real
``Span``s. Gold relations ride on the reference Doc the same way. A candidate pair without a
stored relation is a negative ("no relation"), unless the Doc's relations are marked missing
(:func:`mark_relations_missing`: a Doc of another task's corpus in multi-task training), when
none of its pairs is a negative or a positive: the relation extractor neither learns from nor
scores it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, List, Tuple

from spacy.tokens import Doc, Span

__all__ = [
    "RELATIONS_EXTENSION",
    "RELATIONS_USER_DATA_KEY",
    "Relation",
    "get_relations",
    "mark_relations_missing",
    "relations_annotated",
    "set_relations",
]

RELATIONS_EXTENSION = "relations"
RELATIONS_USER_DATA_KEY = "spacy_biolm.relations"


@dataclass(frozen=True)
class Relation:
    """One relation between two spans of a Doc.

    ``head`` and ``tail`` are the two entity spans (for typed pairs the head is the entity of the
    first type in ``pair_types``, e.g. the gene of a gene-disease pair); ``label`` the relation
    type (``"CPR:4"``, ``"ASSOCIATION"``); ``score`` the model's probability of that label (1.0
    for gold relations).
    """

    head: Span
    tail: Span
    label: str
    score: float = 1.0

    @property
    def key(self) -> Tuple[int, int, int, int]:
        """Character offsets (head start, head end, tail start, tail end): tokenisation-free."""
        return (self.head.start_char, self.head.end_char, self.tail.start_char, self.tail.end_char)


def _check_pair(doc: Doc, head: Span, tail: Span, label: str) -> None:
    if head.doc is not doc or tail.doc is not doc:
        raise ValueError(f"relation {label!r}: head and tail must be spans of the Doc they are stored on")
    if head.start < tail.end and tail.start < head.end:
        raise ValueError(
            f"relation {label!r}: overlapping entity spans {head.text!r} [{head.start}:{head.end}] and "
            f"{tail.text!r} [{tail.start}:{tail.end}] in doc {doc.text[:80]!r}"
        )


def set_relations(doc: Doc, relations: Iterable[Relation]) -> None:
    """Store ``relations`` on ``doc`` (replacing what was there), as serialisable offsets."""
    rows = []
    for rel in relations:
        if not isinstance(rel.label, str) or not rel.label:
            raise ValueError(f"relation label must be a non-empty string, got {rel.label!r}")
        _check_pair(doc, rel.head, rel.tail, rel.label)
        rows.append([rel.head.start, rel.head.end, rel.tail.start, rel.tail.end, rel.label, float(rel.score)])
    doc.user_data[RELATIONS_USER_DATA_KEY] = rows


def get_relations(doc: Doc) -> List[Relation]:
    """The relations stored on ``doc`` as ``Relation`` objects (empty list when none)."""
    rows = doc.user_data.get(RELATIONS_USER_DATA_KEY) or ()
    return [Relation(doc[hs:he], doc[ts:te], label, float(score)) for hs, he, ts, te, label, score in rows]


def mark_relations_missing(doc: Doc) -> None:
    """Mark ``doc``'s relations as not annotated (neither relations nor their absence are known)."""
    doc.user_data[RELATIONS_USER_DATA_KEY] = None


def relations_annotated(doc: Doc) -> bool:
    """Whether ``doc``'s relations are annotated: anything but :func:`mark_relations_missing`,
    so a Doc with no relations stored has none (every candidate pair is a negative)."""
    return doc.user_data.get(RELATIONS_USER_DATA_KEY, ()) is not None
