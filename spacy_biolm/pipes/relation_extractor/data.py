"""Candidate pairs and anonymisation: how the relation extractor turns a Doc's entities into
encoder inputs. The Doc contract (``Relation``, ``doc._.relations``) lives in
:mod:`spacy_biolm.doc_data`.

Imported on every ``spacy.blank`` through the factory entry point: spaCy and the standard
library only.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

from spacy.tokens import Doc, Span

__all__ = ["candidate_pairs", "iter_candidate_pairs", "check_candidate_window", "anonymise", "PairLimitExceeded",
           "SENTENCE_WINDOW"]

#: ``candidate_window`` value: pairs of entities in the same sentence.
SENTENCE_WINDOW = "sentence"

CandidateWindow = Union[str, int]


class PairLimitExceeded(UserWarning):
    """A document had more candidate pairs than ``max_pairs_per_doc``; the rest were skipped."""


def check_candidate_window(window: CandidateWindow) -> CandidateWindow:
    """``window`` if it is a valid ``candidate_window`` ("sentence" or a number of tokens >= 0),
    else a ValueError naming the setting."""
    if window == SENTENCE_WINDOW or (isinstance(window, int) and not isinstance(window, bool) and window >= 0):
        return window
    raise ValueError(
        f"candidate_window must be {SENTENCE_WINDOW!r} (entities in the same sentence) or a number of tokens "
        f">= 0 (at most that many tokens between the two entities), got {window!r}"
    )


def iter_candidate_pairs(
    entities: Sequence[Span],
    pair_types: Optional[Sequence[Sequence[str]]] = None,
    window: CandidateWindow = SENTENCE_WINDOW,
) -> Iterator[Tuple[Span, Span]]:
    """Candidate (head, tail) pairs among ``entities``, generated lazily in document order
    (by head start, then tail start).

    ``window`` bounds which entities pair up: ``"sentence"``, both in the same sentence (a Doc
    without sentence boundaries is one sentence: the whole Doc); an int N, at most N tokens
    between the two entities (0: adjacent). Overlapping entities never pair. ``pair_types``
    lists allowed ``[head_label, tail_label]`` combinations, e.g. ``[["GENE", "DISEASE"]]``; the
    head is always the entity of the first label. Without ``pair_types`` every two entities form
    a pair. When head and tail labels are the same (or unrestricted) each unordered pair appears
    once, the earlier entity as head.

    A sweep over the entities sorted by position: each head looks only at its neighbours inside
    the window, so the cost is O(n·k) for n entities with k in a window, never n² for a whole
    long document split into sentences or bounded by tokens.
    """
    check_candidate_window(window)
    ordered = sorted(entities, key=lambda e: (e.start, e.end))
    if not ordered:
        return
    starts = [e.start for e in ordered]
    # Sentence index of each entity (of its first token); one block for the whole Doc without
    # sentence boundaries or with a token window.
    blocks = _sentence_index(ordered) if window == SENTENCE_WINDOW else [0] * len(ordered)
    max_gap = None if window == SENTENCE_WINDOW else window
    # How far back a tail may start and still end within the window before the head.
    longest = max(e.end - e.start for e in ordered)
    tails_of: Optional[Dict[str, Set[str]]] = None
    if pair_types:
        tails_of = {}
        for head_label, tail_label in pair_types:
            tails_of.setdefault(head_label, set()).add(tail_label)
    for i, head in enumerate(ordered):
        if tails_of is not None and head.label_ not in tails_of:
            continue
        block = blocks[i]
        if tails_of is None:
            before = range(0)  # unordered pairs: the earlier entity is the head
        else:
            first = 0 if max_gap is None else bisect_left(starts, head.start - max_gap - longest)
            before = range(i - 1, first - 1, -1)
        earlier = []
        for j in before:  # walking back from the head
            if blocks[j] != block:
                break
            tail = ordered[j]
            if max_gap is None or head.start - tail.end <= max_gap:
                earlier.append(tail)
        for tail in reversed(earlier):
            if _pairs_with(head, tail, tails_of):
                yield head, tail
        for j in range(i + 1, len(ordered)):
            tail = ordered[j]
            if blocks[j] != block or (max_gap is not None and tail.start - head.end > max_gap):
                break
            if _pairs_with(head, tail, tails_of):
                yield head, tail


def _sentence_index(ordered: Sequence[Span]) -> List[int]:
    doc: Doc = ordered[0].doc
    if not doc.has_annotation("SENT_START"):
        return [0] * len(ordered)
    starts = [sent.start for sent in doc.sents]
    return [bisect_left(starts, e.start + 1) - 1 for e in ordered]


def _pairs_with(head: Span, tail: Span, tails_of: Optional[Dict[str, Set[str]]]) -> bool:
    if head.start < tail.end and tail.start < head.end:
        return False
    if tails_of is None:
        return True
    if tail.label_ not in tails_of.get(head.label_, ()):
        return False
    # Same labels: each unordered pair once, the earlier entity as head.
    return head.label_ != tail.label_ or head.start < tail.start


def candidate_pairs(
    entities: Sequence[Span],
    pair_types: Optional[Sequence[Sequence[str]]] = None,
    max_pairs: int = 0,
    window: CandidateWindow = SENTENCE_WINDOW,
) -> Tuple[List[Tuple[Span, Span]], int]:
    """The candidate pairs of :func:`iter_candidate_pairs` as a list in document order, and the
    number skipped over ``max_pairs``.

    ``max_pairs`` (0 = unlimited) is a safety cap: beyond it the pairs of the closest entities
    (by start token) are kept, selected with a heap of ``max_pairs`` entries, so memory stays
    bounded however many pairs the window lets through; the number skipped is returned for the
    caller to warn about.
    """
    generated = iter_candidate_pairs(entities, pair_types, window)
    if not max_pairs:
        return list(generated), 0
    seen = 0

    def counted() -> Iterator[Tuple[Span, Span]]:
        nonlocal seen
        for pair in generated:
            seen += 1
            yield pair

    kept = heapq.nsmallest(max_pairs, counted(), key=lambda p: (abs(p[0].start - p[1].start), p[0].start, p[1].start))
    kept.sort(key=lambda p: (p[0].start, p[1].start))
    return kept, seen - len(kept)


def anonymise(
    doc: Doc,
    head: Span,
    tail: Span,
    placeholders: Dict[str, str],
    other_placeholder: Optional[str] = None,
    style: str = "replace",
    markers: Sequence[str] = ("<< ", " >>", "[[ ", " ]]"),
    window: Optional[Tuple[int, int]] = None,
    entities: Optional[Sequence[Span]] = None,
    max_context: Optional[int] = None,
) -> str:
    """The text of ``doc`` prepared for one pair, as the papers fed it to the encoder.

    ``style="replace"`` (BioBERT, Bio-ELECTRA): the head and tail are replaced by their label's
    placeholder (``placeholders["GENE"] == "@GENE$"``; a label without one keeps ``@LABEL$``),
    every other entity by ``other_placeholder`` when given (ChemProt's ``BC6OTHER``).
    ``style="mark"`` (SciBERT): head and tail keep their text, wrapped in ``markers``
    (head open, head close, tail open, tail close).
    Only the sentence(s) holding the pair are used when the Doc has sentence boundaries, or the
    token range ``window`` when given (it must contain both entities). ``entities``: the Doc's
    ``doc.ents`` when the caller classifies many pairs of one Doc (built once, not per pair).
    ``max_context``: at most that many tokens of that text before and after the pair (a Doc
    without sentence boundaries, or one huge sentence, would otherwise give its whole text).
    The cost is that of the text used, not of the whole Doc.
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
    if max_context is not None:
        start = max(start, min(head.start, tail.start) - max_context)
        end = min(end, max(head.end, tail.end) + max_context)
    edits = []  # (start_char, end_char, replacement)
    if style == "replace":
        for span in (head, tail):
            edits.append((span.start_char, span.end_char, placeholders.get(span.label_, f"@{span.label_}$")))
        if other_placeholder:
            ents = doc.ents if entities is None else entities
            # Entities do not overlap, so their ends are sorted: skip to the first one ending
            # inside the text.
            for k in range(bisect_left(ents, start + 1, key=lambda e: e.end), len(ents)):
                ent = ents[k]
                if ent.start >= end:
                    break
                if not (ent.start < head.end and head.start < ent.end) and not (ent.start < tail.end and tail.start < ent.end):
                    edits.append((ent.start_char, ent.end_char, other_placeholder))
    else:
        head_open, head_close, tail_open, tail_close = markers
        edits.append((head.start_char, head.end_char, f"{head_open}{head.text}{head_close}"))
        edits.append((tail.start_char, tail.end_char, f"{tail_open}{tail.text}{tail_close}"))
    used = doc[start:end]
    text, base = used.text, used.start_char  # not doc.text: the whole text of a long Doc per pair
    pieces, cursor = [], 0
    for s, e, replacement in sorted(edits):
        pieces.append(text[cursor:s - base])
        pieces.append(replacement)
        cursor = e - base
    pieces.append(text[cursor:])
    return "".join(pieces)
