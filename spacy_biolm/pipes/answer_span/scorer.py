"""Factoid QA scores, as the papers report them.

* SQuAD v1.1 exact match and token F1 (Bio-ELECTRA's table): per (question, passage) Doc whose gold
  Doc has answer spans, the top answer against the best-matching gold answer, after SQuAD's
  normalisation (lower case, no punctuation, no articles a/an/the, single spaces).
* BioASQ strict accuracy, lenient accuracy and MRR (BioBERT's table): per *question*. The snippets
  of one question (Docs sharing ``doc._.question_id``) have their n-best answers merged: the same
  answer (case- and space-insensitive) keeps its highest probability, and the five best are
  compared with the gold answers (``doc._.gold_answers``, the BioASQ golden synonyms, or else the
  gold spans' texts). Strict: the first is right; lenient: one of the five is; MRR: 1/rank of the
  first right one (0 if none of the five is).

Scores are fractions in [0, 1].
"""

import re
import string
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ...doc_data import question_group
from .component import gold_char_spans

__all__ = [
    "make_answer_span_scorer",
    "score_answer_spans",
    "squad_normalize",
    "squad_exact_match",
    "squad_f1",
    "bioasq_normalize",
    "merge_answers",
    "bioasq_question_scores",
]

TOP_K = 5
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def squad_normalize(text: str) -> str:
    """SQuAD v1.1 answer normalisation."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def squad_exact_match(prediction: str, gold: str) -> float:
    return float(squad_normalize(prediction) == squad_normalize(gold))


def squad_f1(prediction: str, gold: str) -> float:
    """Token-overlap F1 of normalised answers."""
    pred_tokens = squad_normalize(prediction).split()
    gold_tokens = squad_normalize(gold).split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    if same == 0:
        return 0.0
    p, r = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * p * r / (p + r)


def bioasq_normalize(text: str) -> str:
    """BioASQ factoid matching: case-insensitive, whitespace-insensitive exact match."""
    return " ".join(text.lower().split())


def predicted_answers(doc: Doc, spans_key: str = "answers") -> List[Tuple[str, float]]:
    """(text, probability) of a predicted Doc's answers, best first."""
    if spans_key not in doc.spans:
        return []
    group = doc.spans[spans_key]
    texts = group.attrs.get("texts") or [span.text for span in group]
    scores = group.attrs.get("scores") or [1.0] * len(group)
    return list(zip(texts, scores))


def gold_answer_texts(doc: Doc, spans_key: str = "answers") -> List[str]:
    """Acceptable answers of a gold Doc: ``doc._.gold_answers`` or its gold spans' texts."""
    if doc._.gold_answers:
        return list(doc._.gold_answers)
    return gold_answer_texts_from_spans(doc, spans_key)


def gold_answer_texts_from_spans(doc: Doc, spans_key: str = "answers") -> List[str]:
    """The texts of a gold Doc's answer spans (exact character offsets when stored)."""
    return [doc.text[start:end] for start, end in gold_char_spans(doc, spans_key)]


def merge_answers(answer_lists: Iterable[List[Tuple[str, float]]], top_k: int = TOP_K) -> List[str]:
    """Merge the answers of a question's snippets: best probability per normalised answer, top k."""
    best: Dict[str, Tuple[float, str]] = {}
    for answers in answer_lists:
        for text, score in answers:
            key = bioasq_normalize(text)
            if key and (key not in best or score > best[key][0]):
                best[key] = (score, text)
    ranked = sorted(best.items(), key=lambda item: (-item[1][0], item[0]))
    return [text for _, (_, text) in ranked[:top_k]]


def bioasq_question_scores(ranked: List[str], gold: Iterable[str]) -> Tuple[float, float, float]:
    """(strict, lenient, reciprocal rank) of one question's ranked answers."""
    gold_keys = {bioasq_normalize(g) for g in gold}
    for rank, text in enumerate(ranked[:TOP_K], start=1):
        if bioasq_normalize(text) in gold_keys:
            return float(rank == 1), 1.0, 1.0 / rank
    return 0.0, 0.0, 0.0


def score_answer_spans(examples: Iterable[Example], spans_key: str = "answers", **kwargs: Any) -> Dict[str, Optional[float]]:
    """``answer_em``, ``answer_f1`` (SQuAD, per Doc with gold spans) and ``answer_strict_acc``,
    ``answer_lenient_acc``, ``answer_mrr`` (BioASQ, per question). None when nothing was scorable."""
    em: List[float] = []
    f1: List[float] = []
    groups: Dict[str, Dict[str, list]] = {}
    for eg in examples:
        predicted = predicted_answers(eg.predicted, spans_key)
        gold = gold_answer_texts(eg.reference, spans_key)
        if spans_key in eg.reference.spans and len(eg.reference.spans[spans_key]):
            top = predicted[0][0] if predicted else ""
            span_gold = gold_answer_texts_from_spans(eg.reference, spans_key)
            em.append(max(squad_exact_match(top, g) for g in span_gold))
            f1.append(max(squad_f1(top, g) for g in span_gold))
        group = groups.setdefault(question_group(eg.reference), {"answers": [], "gold": []})
        group["answers"].append(predicted)
        group["gold"].extend(gold)
    per_question = [
        bioasq_question_scores(merge_answers(g["answers"]), g["gold"]) for g in groups.values() if g["gold"]
    ]

    def mean(values):
        return sum(values) / len(values) if values else None

    return {
        "answer_em": mean(em),
        "answer_f1": mean(f1),
        "answer_strict_acc": mean([s for s, _, _ in per_question]),
        "answer_lenient_acc": mean([l for _, l, _ in per_question]),
        "answer_mrr": mean([r for _, _, r in per_question]),
    }


@registry.scorers("spacy-biolm.answer_span_scorer.v1")
def make_answer_span_scorer() -> Callable[..., Dict[str, Optional[float]]]:
    """Scorer of ``answer_span``: SQuAD exact match/F1 (``answer_em``, ``answer_f1``) and BioASQ
    strict/lenient accuracy and MRR over the top 5 merged answers of each question
    (``answer_strict_acc``, ``answer_lenient_acc``, ``answer_mrr``)."""
    return score_answer_spans
