"""Yes/no scores as the Bio-ELECTRA paper reports them: precision, recall and F1 of each class."""

from typing import Any, Callable, Dict, Iterable, List

from spacy.scorer import PRFScore
from spacy.training import Example
from spacy.util import registry

__all__ = ["score_yes_no", "make_yes_no_scorer", "yes_no_answer"]

LABELS = ("yes", "no")


def yes_no_answer(cats: Dict[str, float], where: str) -> str:
    """ "yes" or "no", whichever of ``cats`` is larger; an error naming ``where`` without either."""
    if "yes" not in cats and "no" not in cats:
        raise ValueError(f"no yes/no category on {where}")
    yes = cats.get("yes", 1.0 - cats.get("no", 0.0))
    no = cats.get("no", 1.0 - yes)
    return "yes" if yes >= no else "no"


def score_yes_no(examples: Iterable[Example], **kwargs: Any) -> Dict[str, float]:
    """``yes_no_{p,r,f}_{yes,no}``, ``yes_no_acc`` and ``yes_no_macro_f`` (fractions)."""
    gold: List[str] = []
    pred: List[str] = []
    for eg in examples:
        qid = eg.reference._.question_id if eg.reference.has_extension("question_id") else None
        gold.append(yes_no_answer(eg.reference.cats, f"the gold Doc of question {qid!r}"))
        pred.append(yes_no_answer(eg.predicted.cats, f"the predicted Doc of question {qid!r}"))
    scores: Dict[str, float] = {}
    for label in LABELS:
        score = PRFScore(
            tp=sum(g == p == label for g, p in zip(gold, pred)),
            fp=sum(p == label != g for g, p in zip(gold, pred)),
            fn=sum(g == label != p for g, p in zip(gold, pred)),
        )
        for key, value in score.to_dict().items():
            scores[f"yes_no_{key}_{label}"] = value
    scores["yes_no_acc"] = sum(g == p for g, p in zip(gold, pred)) / len(gold) if gold else 0.0
    scores["yes_no_macro_f"] = (scores["yes_no_f_yes"] + scores["yes_no_f_no"]) / 2
    return scores


@registry.scorers("spacy-biolm.yes_no_scorer.v1")
def make_yes_no_scorer() -> Callable[..., Dict[str, float]]:
    """Scorer of ``yes_no``: per-class P/R/F1 (``yes_no_p_yes`` ... ``yes_no_f_no``), accuracy and
    macro F1, from ``doc.cats`` (the larger of "yes"/"no" is the answer)."""
    return score_yes_no
