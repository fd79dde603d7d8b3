"""From start/end logits of windows to the n best answer spans, as character offsets of the passage.

Candidates are the ``n_best`` highest start and ``n_best`` highest end logits of each window's
passage wordpieces; a (start, end) pair is kept when end >= start and it spans at most
``max_answer_length`` wordpieces. A span's score is start logit + end logit; the same character
span found in two overlapping windows keeps its best score. The n best spans of a passage get
probabilities by a softmax over their scores (as BERT/BioBERT's n-best output does).

Given the passage's ``text``, answers are whole words: a span may not start or end inside a word
(a letter or digit on both sides of its boundary). Without it, a wordpiece-level reader answers
"isk" for "Risk" or "ount2" for "recount2"; BERT's SQuAD decoding avoids the same by mapping
answers to whole input tokens. Boundaries at punctuation stay open: "FBN1" in "(FBN1)", "HIV"
in "HIV-1".
"""

from typing import Dict, List, Optional, Tuple

import numpy

__all__ = ["Answer", "decode_windows", "gold_token_positions", "word_boundaries"]

Answer = Tuple[int, int, float]  # (start_char, end_char, probability)


def decode_windows(
    start_logits: numpy.ndarray,
    end_logits: numpy.ndarray,
    offsets: numpy.ndarray,
    passage_mask: numpy.ndarray,
    n_best: int = 20,
    max_answer_length: int = 30,
    text: Optional[str] = None,
) -> List[Answer]:
    """The ``n_best`` answers of one passage from its windows (arrays of shape (n_windows, length));
    with the passage's ``text``, whole-word answers only (see the module's docstring).

    Returns ``(start_char, end_char, probability)`` tuples, best first.
    """
    can_start, can_end = (passage_mask, passage_mask) if text is None else word_boundaries(text, offsets, passage_mask)
    best: Dict[Tuple[int, int], float] = {}
    for w in range(start_logits.shape[0]):
        start_positions, end_positions = numpy.flatnonzero(can_start[w]), numpy.flatnonzero(can_end[w])
        if start_positions.size == 0 or end_positions.size == 0:
            continue
        starts = start_positions[numpy.argsort(-start_logits[w, start_positions], kind="stable")[:n_best]]
        ends = end_positions[numpy.argsort(-end_logits[w, end_positions], kind="stable")[:n_best]]
        for s in starts:
            for e in ends:
                if e < s or e - s + 1 > max_answer_length:
                    continue
                span = (int(offsets[w, s, 0]), int(offsets[w, e, 1]))
                if span[1] <= span[0]:
                    continue
                score = float(start_logits[w, s] + end_logits[w, e])
                if score > best.get(span, -numpy.inf):
                    best[span] = score
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:n_best]
    if not ranked:
        return []
    scores = numpy.asarray([score for _, score in ranked])
    probs = numpy.exp(scores - scores.max())
    probs /= probs.sum()
    return [(start, end, float(p)) for ((start, end), _), p in zip(ranked, probs)]


def word_boundaries(text: str, offsets: numpy.ndarray, passage_mask: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Boolean arrays (n_windows, length): passage wordpieces that begin a word (no letter or digit
    right before their first character and at it) and those that end one (likewise after their
    last character)."""
    alnum = numpy.fromiter((c.isalnum() for c in text), dtype=bool, count=len(text))
    alnum = numpy.concatenate([[False], alnum, [False]])  # alnum[i + 1] is text[i]; the edges are not
    starts, ends = offsets[..., 0], offsets[..., 1]
    inside_start = alnum[numpy.clip(starts, 0, len(text))] & alnum[numpy.clip(starts, 0, len(text)) + 1]
    inside_end = alnum[numpy.clip(ends, 0, len(text))] & alnum[numpy.clip(ends, 0, len(text)) + 1]
    return passage_mask & ~inside_start, passage_mask & ~inside_end


def gold_token_positions(
    offsets: numpy.ndarray, passage_mask: numpy.ndarray, start_char: int, end_char: int
) -> Tuple[int, int]:
    """Wordpiece (start, end) of a gold character span within one window, or (0, 0) — the
    ``[CLS]`` position, "no answer here" — when the window does not hold the whole span."""
    positions = numpy.flatnonzero(passage_mask)
    if positions.size == 0:
        return 0, 0
    first, last = positions[0], positions[-1]
    if offsets[first, 0] > start_char or offsets[last, 1] < end_char:
        return 0, 0
    covering_start = positions[offsets[positions, 1] > start_char]
    covering_end = positions[offsets[positions, 0] < end_char]
    if covering_start.size == 0 or covering_end.size == 0:
        return 0, 0
    start, end = int(covering_start[0]), int(covering_end[-1])
    return (start, end) if end >= start else (0, 0)
