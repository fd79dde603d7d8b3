"""Answer-sentence reranking score, as Bio-ELECTRA reports it: mean reciprocal rank per question,
next to what a random order of the same candidates would score.

The candidate sentences of one question (Docs sharing ``doc._.question_id``; a question's
candidates may be split over several Docs) are ranked by their predicted score; a question's
reciprocal rank is 1/rank of its first gold relevant sentence. Tied scores are ranked in random
order and the reciprocal rank is its exact expectation over those orders (tie-aware MRR), so a
ranking gains nothing from the order the candidates happen to have in the file. Questions without
any relevant candidate have no rank and are left out (``rerank_questions`` counts those scored).
"""

from math import comb
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ...doc_data import question_group

__all__ = [
    "make_answer_reranker_scorer",
    "score_reranking",
    "question_reciprocal_ranks",
    "reciprocal_rank",
    "random_order_reciprocal_rank",
    "gold_sentence_offsets",
    "GOLD_KEY",
]

# Where gold Docs mark their relevant sentences (the QA converters write it).
GOLD_KEY = "relevant_sents"


def gold_sentence_offsets(doc: Doc) -> Set[Tuple[int, int]]:
    """(start_char, end_char) of the gold relevant sentences of ``doc`` (empty when none)."""
    return {(s.start_char, s.end_char) for s in doc.spans[GOLD_KEY]} if GOLD_KEY in doc.spans else set()


def _expected_first_hit(n_before: int, n_tied: int, n_relevant_tied: int) -> float:
    """E[1/rank] of the first relevant item when ``n_before`` items rank ahead and the next
    ``n_tied`` items, ``n_relevant_tied`` of them relevant, come in uniformly random order.

    The first relevant item is at position j of the tied block with probability
    C(n_tied - j, k - 1) / C(n_tied, k) (k = ``n_relevant_tied``).
    """
    k = n_relevant_tied
    orders = comb(n_tied, k)
    return sum(comb(n_tied - j, k - 1) / orders / (n_before + j) for j in range(1, n_tied - k + 2))


def reciprocal_rank(scored: List[Tuple[float, bool]]) -> Optional[float]:
    """1/rank of the first relevant item when sorted by score, best first; None when no item is
    relevant. Items tied with the best-scored relevant item are taken in random order: the
    result is the exact expectation over those orders."""
    relevant_scores = [score for score, relevant in scored if relevant]
    if not relevant_scores:
        return None
    best = max(relevant_scores)
    ahead = sum(1 for score, _ in scored if score > best)
    tied = [relevant for score, relevant in scored if score == best]
    return _expected_first_hit(ahead, len(tied), sum(tied))


def random_order_reciprocal_rank(relevant: List[bool]) -> Optional[float]:
    """The expected reciprocal rank of the first relevant item when the items are put in a
    uniformly random order (exact, not simulated): with one relevant item among n it is
    (1 + 1/2 + ... + 1/n) / n. None when no item is relevant."""
    n_relevant = sum(relevant)
    return _expected_first_hit(0, len(relevant), n_relevant) if n_relevant else None


def _question_candidates(examples: Iterable[Example], spans_key: str) -> Dict[str, List[Tuple[float, bool]]]:
    """(score, relevant) of every ranked candidate per question (Docs sharing a question id
    together), for the questions with a relevant candidate."""
    groups: Dict[str, List[Tuple[float, bool]]] = {}
    for eg in examples:
        gold = gold_sentence_offsets(eg.reference)
        items = groups.setdefault(question_group(eg.reference), [])
        if spans_key not in eg.predicted.spans:
            continue
        ranked = eg.predicted.spans[spans_key]
        for span, score in zip(ranked, ranked.attrs.get("scores", [])):
            items.append((float(score), (span.start_char, span.end_char) in gold))
    return {question: items for question, items in groups.items() if any(relevant for _, relevant in items)}


def question_reciprocal_ranks(examples: Iterable[Example], spans_key: str = "ranked_sents") -> Dict[str, float]:
    """The reciprocal rank of each question's first relevant candidate (their mean is
    ``rerank_mrr``): per question, for paired comparisons of two rankers."""
    return {question: reciprocal_rank(items) for question, items in _question_candidates(examples, spans_key).items()}


def score_reranking(examples: Iterable[Example], spans_key: str = "ranked_sents", **kwargs: Any) -> Dict[str, Optional[float]]:
    """``rerank_mrr`` (fraction), ``rerank_mrr_random`` (the expected MRR of a random order of
    the same candidates, the baseline any ranking must beat) and ``rerank_questions`` (how many
    questions were scored)."""
    scored = list(_question_candidates(examples, spans_key).values())
    ranks = [reciprocal_rank(items) for items in scored]
    random_ranks = [random_order_reciprocal_rank([relevant for _, relevant in items]) for items in scored]
    return {
        "rerank_mrr": sum(ranks) / len(ranks) if ranks else None,
        "rerank_mrr_random": sum(random_ranks) / len(random_ranks) if random_ranks else None,
        "rerank_questions": float(len(ranks)),
    }


@registry.scorers("spacy-biolm.answer_reranker_scorer.v1")
def make_answer_reranker_scorer() -> Callable[..., Dict[str, Optional[float]]]:
    """Scorer of ``answer_reranker``: mean reciprocal rank of the first relevant sentence per
    question (``rerank_mrr``, tie-aware), the sentences of Docs sharing a question id ranked
    together, and the expected MRR of a random order of the same candidates
    (``rerank_mrr_random``)."""
    return score_reranking
