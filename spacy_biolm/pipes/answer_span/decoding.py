"""From start/end logits of windows to the n best answer spans, as character offsets of the passage.

Candidates are the ``n_best`` highest start and ``n_best`` highest end logits of each window's
passage wordpieces; a (start, end) pair is kept when end >= start and it spans at most
``max_answer_length`` wordpieces. A span's score is start logit + end logit; the same character
span found in two overlapping windows keeps its best score. The n best spans of a passage get
probabilities by a softmax over their scores (as BERT/BioBERT's n-best output does).
"""

from typing import Dict, List, Tuple

import numpy

__all__ = ["Answer", "decode_windows", "gold_token_positions"]

Answer = Tuple[int, int, float]  # (start_char, end_char, probability)


def decode_windows(
    start_logits: numpy.ndarray,
    end_logits: numpy.ndarray,
    offsets: numpy.ndarray,
    passage_mask: numpy.ndarray,
    n_best: int = 20,
    max_answer_length: int = 30,
) -> List[Answer]:
    """The ``n_best`` answers of one passage from its windows (arrays of shape (n_windows, length)).

    Returns ``(start_char, end_char, probability)`` tuples, best first.
    """
    best: Dict[Tuple[int, int], float] = {}
    for w in range(start_logits.shape[0]):
        positions = numpy.flatnonzero(passage_mask[w])
        if positions.size == 0:
            continue
        starts = positions[numpy.argsort(-start_logits[w, positions], kind="stable")[:n_best]]
        ends = positions[numpy.argsort(-end_logits[w, positions], kind="stable")[:n_best]]
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
