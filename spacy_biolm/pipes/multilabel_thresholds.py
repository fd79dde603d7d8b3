"""A threshold per label for spaCy's ``textcat_multilabel``, tuned on dev and kept in its config.

spaCy's ``textcat_multilabel`` writes a probability per label to ``doc.cats`` and has one
``threshold`` that only its scorer reads. Rare labels of a multi-label task (HoC's "Avoiding immune
destruction" is on 6% of the abstracts) are best cut lower than frequent ones, so this module adds
the smallest piece that gives every label its own cut-off: a registered scorer whose config holds
``{label: threshold}``. The component itself stays spaCy's, and since a component's scorer is part
of its config, the tuned thresholds travel with the pipeline (``config.cfg``, the packaged wheel)
and ``nlp.evaluate`` / ``spacy evaluate`` score with them. Applications read the decision with
:func:`assigned_labels` (``doc.cats`` keeps the probabilities, as spaCy's convention is).

:func:`tune_thresholds` picks, per label, the cut-off that maximises that label's F1 on dev.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from spacy.scorer import PRFScore, Scorer
from spacy.training import Example
from spacy.util import registry

__all__ = [
    "DEFAULT_GRID",
    "assigned_labels",
    "score_multilabel",
    "tune_thresholds",
    "make_multilabel_thresholds_scorer",
]

#: Candidate thresholds of :func:`tune_thresholds`: 0.05, 0.10, ..., 0.95.
DEFAULT_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))


def assigned_labels(cats: Dict[str, float], thresholds: Dict[str, float], default: float = 0.5) -> List[str]:
    """The labels of ``cats`` whose probability reaches its threshold (``default`` for a label
    without one), in the order of ``cats``."""
    return [label for label, p in cats.items() if p >= thresholds.get(label, default)]


def score_multilabel(
    examples: Iterable[Example],
    thresholds: Optional[Dict[str, float]] = None,
    default_threshold: float = 0.5,
    labels: Sequence[str] = (),
    **kwargs: Any,
) -> Dict[str, Any]:
    """spaCy's multi-label ``cats_*`` scores, with P/R/F decided per label by ``thresholds``.

    ``cats_micro_{p,r,f}``: over all (document, label) decisions; ``cats_macro_{p,r,f}``: the mean
    over labels of each label's P/R/F; ``cats_f_per_type``: per label; ``cats_score`` is
    ``cats_macro_f`` as in spaCy; ``cats_macro_auc`` (threshold-free) is spaCy's. Labels are
    ``labels`` or, when empty, those of the gold Docs. Fractions, not percent.
    """
    examples = list(examples)
    thresholds = dict(thresholds or {})
    labels = list(labels) or sorted({label for eg in examples for label in eg.reference.cats})
    unknown = sorted(set(thresholds) - set(labels))
    if unknown and labels:
        raise ValueError(f"thresholds for labels the data does not have: {unknown}; labels: {labels}")
    scores = Scorer.score_cats(examples, "cats", labels=labels, multi_label=True, threshold=default_threshold)
    per_label = {label: PRFScore() for label in labels}
    for eg in examples:
        for label in labels:
            gold = eg.reference.cats.get(label, 0.0) > 0.5
            predicted = eg.predicted.cats.get(label, 0.0) >= thresholds.get(label, default_threshold)
            per_label[label].tp += int(gold and predicted)
            per_label[label].fp += int(predicted and not gold)
            per_label[label].fn += int(gold and not predicted)
    micro = PRFScore()
    for score in per_label.values():
        micro += score
    n = max(len(labels), 1)
    scores.update({
        "cats_micro_p": micro.precision, "cats_micro_r": micro.recall, "cats_micro_f": micro.fscore,
        "cats_macro_p": sum(s.precision for s in per_label.values()) / n,
        "cats_macro_r": sum(s.recall for s in per_label.values()) / n,
        "cats_macro_f": sum(s.fscore for s in per_label.values()) / n,
        "cats_f_per_type": {label: s.to_dict() for label, s in per_label.items()},
    })
    scores["cats_score"] = scores["cats_macro_f"]
    scores["cats_score_desc"] = "macro F (per-label thresholds)" if thresholds else "macro F"
    return scores


def tune_thresholds(
    probabilities: Sequence[Dict[str, float]],
    gold: Sequence[Dict[str, float]],
    labels: Sequence[str],
    grid: Sequence[float] = DEFAULT_GRID,
) -> Dict[str, float]:
    """Per label, the threshold of ``grid`` that maximises its F1 over the documents
    (``probabilities[i]``: predicted ``doc.cats`` of document i, ``gold[i]``: its gold cats).

    Ties go to the threshold nearest 0.5 (the untuned default), so a label the data cannot decide
    on (no positive example, or every threshold equally good) keeps 0.5.
    """
    if len(probabilities) != len(gold):
        raise ValueError(f"{len(probabilities)} predictions for {len(gold)} gold documents")
    if not grid:
        raise ValueError("empty threshold grid")
    tuned = {}
    for label in labels:
        pairs = [(p.get(label, 0.0), g.get(label, 0.0) > 0.5) for p, g in zip(probabilities, gold)]
        best = None
        for threshold in sorted(grid, key=lambda t: (abs(t - 0.5), t)):
            tp = sum(1 for p, g in pairs if g and p >= threshold)
            fp = sum(1 for p, g in pairs if not g and p >= threshold)
            fn = sum(1 for p, g in pairs if g and p < threshold)
            f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
            if best is None or f1 > best[0]:
                best = (f1, threshold)
        tuned[label] = best[1] if best[0] > 0 else 0.5
    return tuned


@registry.scorers("spacy-biolm.multilabel_thresholds_scorer.v1")
def make_multilabel_thresholds_scorer(
    thresholds: Dict[str, float] = {},
    default_threshold: float = 0.5,
) -> Callable[..., Dict[str, Any]]:
    """Scorer for ``textcat_multilabel``: spaCy's ``cats_*`` keys, with every label decided by its
    own threshold (``thresholds``: {label: cut-off}, e.g. tuned on dev by ``spacy-biolm evaluate
    hoc-thresholds``; ``default_threshold`` for the others). Micro P/R/F over (document, label)
    decisions, macro over labels."""
    for label, value in thresholds.items():
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"threshold of {label!r} must be in [0, 1], got {value!r}")

    def scorer(examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        kwargs.pop("threshold", None)
        return score_multilabel(examples, thresholds=thresholds, default_threshold=default_threshold, **kwargs)

    return scorer
