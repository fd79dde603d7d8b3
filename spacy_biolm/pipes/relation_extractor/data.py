"""Candidate pairs and anonymisation: how the relation extractor turns a Doc's entities into
encoder inputs. The Doc contract (``Relation``, ``doc._.relations``) lives in
:mod:`spacy_biolm.doc_data`.

Imported on every ``spacy.blank`` through the factory entry point: spaCy and the standard
library only.
"""

from __future__ import annotations

from itertools import product
from typing import Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Span

__all__ = ["candidate_pairs", "anonymise", "PairLimitExceeded"]


class PairLimitExceeded(UserWarning):
    """A document had more candidate pairs than ``max_pairs_per_doc``; the rest were skipped."""


def candidate_pairs(
    entities: Sequence[Span],
    pair_types: Optional[Sequence[Sequence[str]]] = None,
    max_pairs: int = 0,
) -> Tuple[List[Tuple[Span, Span]], int]:
    """Candidate (head, tail) pairs among ``entities``; returns (pairs, number skipped).

    ``pair_types`` lists allowed ``[head_label, tail_label]`` combinations, e.g.
    ``[["GENE", "DISEASE"]]``; the head is always the entity of the first label. Without
    ``pair_types`` every two entities form a pair. When head and tail labels are the same (or
    unrestricted) each unordered pair appears once, the earlier entity as head. ``max_pairs``
    (0 = unlimited) keeps the pairs of closest entities first, so a document with hundreds of
    entities stays bounded; the number skipped is returned for the caller to warn about.
    """
    pairs: List[Tuple[Span, Span]] = []
    seen = set()
    if pair_types:
        by_label: Dict[str, List[Span]] = {}
        for ent in entities:
            by_label.setdefault(ent.label_, []).append(ent)
        for head_label, tail_label in pair_types:
            for head, tail in product(by_label.get(head_label, ()), by_label.get(tail_label, ())):
                if head_label == tail_label and head.start >= tail.start:
                    continue
                key = (head.start, head.end, tail.start, tail.end)
                if key not in seen and not (head.start < tail.end and tail.start < head.end):
                    seen.add(key)
                    pairs.append((head, tail))
    else:
        ordered = sorted(entities, key=lambda e: (e.start, e.end))
        for i, head in enumerate(ordered):
            for tail in ordered[i + 1:]:
                if not (head.start < tail.end and tail.start < head.end):
                    pairs.append((head, tail))
    skipped = 0
    if max_pairs and len(pairs) > max_pairs:
        pairs.sort(key=lambda p: (abs(p[0].start - p[1].start), p[0].start, p[1].start))
        skipped = len(pairs) - max_pairs
        pairs = pairs[:max_pairs]
    pairs.sort(key=lambda p: (p[0].start, p[1].start))
    return pairs, skipped


def anonymise(
    doc: Doc,
    head: Span,
    tail: Span,
    placeholders: Dict[str, str],
    other_placeholder: Optional[str] = None,
    style: str = "replace",
    markers: Sequence[str] = ("<< ", " >>", "[[ ", " ]]"),
    window: Optional[Tuple[int, int]] = None,
) -> str:
    """The text of ``doc`` prepared for one pair, as the papers fed it to the encoder.

    ``style="replace"`` (BioBERT, Bio-ELECTRA): the head and tail are replaced by their label's
    placeholder (``placeholders["GENE"] == "@GENE$"``; a label without one keeps ``@LABEL$``),
    every other entity by ``other_placeholder`` when given (ChemProt's ``BC6OTHER``).
    ``style="mark"`` (SciBERT): head and tail keep their text, wrapped in ``markers``
    (head open, head close, tail open, tail close).
    Only the sentence(s) holding the pair are used when the Doc has sentence boundaries, or the
    token range ``window`` when given (it must contain both entities).
    """
    if style not in ("replace", "mark"):
        raise ValueError(f"unknown anonymisation style {style!r}; expected 'replace' or 'mark'")
    start, end = 0, len(doc)
    if doc.has_annotation("SENT_START"):
        start = min(head.sent.start, tail.sent.start)
        end = max(head.sent.end, tail.sent.end)
    if window is not None:
        start, end = window
        if start > min(head.start, tail.start) or end < max(head.end, tail.end):
            raise ValueError(f"window {window} does not contain the pair {head.text!r}, {tail.text!r}")
    edits = []  # (start_char, end_char, replacement)
    if style == "replace":
        for span in (head, tail):
            edits.append((span.start_char, span.end_char, placeholders.get(span.label_, f"@{span.label_}$")))
        if other_placeholder:
            for ent in doc.ents:
                if ent.end <= start or ent.start >= end:
                    continue
                if not (ent.start < head.end and head.start < ent.end) and not (ent.start < tail.end and tail.start < ent.end):
                    edits.append((ent.start_char, ent.end_char, other_placeholder))
    else:
        head_open, head_close, tail_open, tail_close = markers
        edits.append((head.start_char, head.end_char, f"{head_open}{head.text}{head_close}"))
        edits.append((tail.start_char, tail.end_char, f"{tail_open}{tail.text}{tail_close}"))
    text = doc.text
    base = doc[start].idx if len(doc) else 0
    stop = doc[end - 1].idx + len(doc[end - 1].text) if len(doc) else 0
    pieces, cursor = [], base
    for s, e, replacement in sorted(edits):
        pieces.append(text[cursor:s])
        pieces.append(replacement)
        cursor = e
    pieces.append(text[cursor:stop])
    return "".join(pieces)
