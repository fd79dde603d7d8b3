"""Answer-sentence reranking score, as Bio-ELECTRA reports it: mean reciprocal rank per question.

The candidate sentences of one question (Docs sharing ``doc._.question_id``; a question's
candidates may be split over several Docs) are ranked by their predicted relevance; a question's
reciprocal rank is 1/rank of its first gold relevant sentence. Questions without any relevant
candidate have no rank and are left out (``rerank_questions`` counts those scored).
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ...doc_data import question_group

__all__ = ["make_answer_reranker_scorer", "score_reranking", "reciprocal_rank", "gold_sentence_offsets", "GOLD_KEY"]

# Where gold Docs mark their relevant sentences (the QA converters write it).
GOLD_KEY = "relevant_sents"


def gold_sentence_offsets(doc: Doc) -> Set[Tuple[int, int]]:
    """(start_char, end_char) of the gold relevant sentences of ``doc`` (empty when none)."""
    return {(s.start_char, s.end_char) for s in doc.spans[GOLD_KEY]} if GOLD_KEY in doc.spans else set()


def reciprocal_rank(scored: List[Tuple[float, bool]]) -> Optional[float]:
    """1/rank of the first relevant item when sorted by score (ties: the earlier item first);
    None when no item is relevant."""
    ranked = sorted(enumerate(scored), key=lambda item: (-item[1][0], item[0]))
    for rank, (_, (_, relevant)) in enumerate(ranked, start=1):
        if relevant:
            return 1.0 / rank
    return None


def score_reranking(examples: Iterable[Example], spans_key: str = "ranked_sents", **kwargs: Any) -> Dict[str, Optional[float]]:
    """``rerank_mrr`` (fraction) and ``rerank_questions`` (how many questions were scored)."""
    groups: Dict[str, List[Tuple[float, bool]]] = {}
    for eg in examples:
        gold = gold_sentence_offsets(eg.reference)
        items = groups.setdefault(question_group(eg.reference), [])
        if spans_key not in eg.predicted.spans:
            continue
        ranked = eg.predicted.spans[spans_key]
        for span, score in zip(ranked, ranked.attrs.get("scores", [])):
            items.append((float(score), (span.start_char, span.end_char) in gold))
    ranks = [rr for rr in (reciprocal_rank(items) for items in groups.values()) if rr is not None]
    return {"rerank_mrr": sum(ranks) / len(ranks) if ranks else None, "rerank_questions": float(len(ranks))}


@registry.scorers("spacy-biolm.answer_reranker_scorer.v1")
def make_answer_reranker_scorer() -> Callable[..., Dict[str, Optional[float]]]:
    """Scorer of ``answer_reranker``: mean reciprocal rank of the first relevant sentence per
    question (``rerank_mrr``), the sentences of Docs sharing a question id ranked together."""
    return score_reranking
