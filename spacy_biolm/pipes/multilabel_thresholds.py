"""A threshold per label for spaCy's ``textcat_multilabel``, tuned on dev and kept in its config.

spaCy's ``textcat_multilabel`` writes a probability per label to ``doc.cats`` and has one
``threshold`` that only its scorer reads. Rare labels of a multi-label task (HoC's "Avoiding immune
destruction" is on 6% of the abstracts) are best cut lower than frequent ones, so this module adds
the smallest piece that gives every label its own cut-off: a registered scorer whose config holds
``{label: threshold}``. The component itself stays spaCy's, and since a component's scorer is part
of its config, the tuned thresholds travel with the pipeline (``config.cfg``, the packaged wheel)
and ``nlp.evaluate`` / ``spacy evaluate`` score with them. Applications read the decision with
:func:`assigned_labels` (``doc.cats`` keeps the probabilities, as spaCy's convention is).

:func:`tune_thresholds` picks the cut-offs on dev: each label's F1-best (``label_f1``), or one
cut-off shared by all labels, the micro-F1-best (``micro_f1``). :func:`cross_validate_thresholds`
measures on dev alone which of the two carries over to documents it was not tuned on.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.scorer import PRFScore, Scorer
from spacy.training import Example
from spacy.util import registry

from .release_row import ReleaseRow

__all__ = [
    "HALLMARKS_RELEASE_ROW",
    "DEFAULT_GRID",
    "OBJECTIVES",
    "cross_validate_thresholds",
    "assigned_labels",
    "score_multilabel",
    "tune_thresholds",
    "make_multilabel_thresholds_scorer",
]

#: Candidate thresholds of :func:`tune_thresholds`: 0.05, 0.10, ..., 0.95.
DEFAULT_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))
#: What :func:`tune_thresholds` maximises on dev: each label's own F1, or micro F1 with one shared cut-off.
OBJECTIVES = ("label_f1", "micro_f1")
#: The release's row of ``hallmarks`` (spaCy's textcat_multilabel scored by this module's scorer).
#: BioALBERT evaluates on HoC, but paper_results.json has no HoC number: no paper value.
HALLMARKS_RELEASE_ROW = ReleaseRow("hallmarks of cancer (document classes, `doc.cats`)", "HoC test (fixed PMID split)",
                                   (("cats_micro_f", "micro F1"), ("cats_macro_f", "macro F1")), "cats_micro_f", "micro F1",
                                   None)


def assigned_labels(cats: Dict[str, float], thresholds: Dict[str, float], default: float = 0.5) -> List[str]:
    """The labels of ``cats`` whose probability reaches its threshold (``default`` for a label
    without one), in the order of ``cats``."""
    return [label for label, p in cats.items() if p >= thresholds.get(label, default)]


def _counts(pairs: Sequence[Tuple[float, bool]], threshold: float) -> Tuple[int, int, int]:
    """(tp, fp, fn) of the (probability, gold) ``pairs`` cut at ``threshold``."""
    tp = sum(1 for p, g in pairs if g and p >= threshold)
    fp = sum(1 for p, g in pairs if not g and p >= threshold)
    return tp, fp, sum(1 for _, g in pairs if g) - tp


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _pairs(probabilities: Sequence[Dict[str, float]], gold: Sequence[Dict[str, float]], label: str) -> List[Tuple[float, bool]]:
    """(probability, gold decision) of ``label`` in each document whose gold cats have it: a
    label missing from the gold cats is not annotated there (spaCy's convention), not negative."""
    return [(p.get(label, 0.0), g[label] > 0.5) for p, g in zip(probabilities, gold) if label in g]


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
    predicted, gold = [eg.predicted.cats for eg in examples], [eg.reference.cats for eg in examples]
    per_label = {label: PRFScore() for label in labels}
    for label, score in per_label.items():
        score.tp, score.fp, score.fn = _counts(_pairs(predicted, gold, label), thresholds.get(label, default_threshold))
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
    objective: str = "label_f1",
) -> Dict[str, float]:
    """A threshold for every label from ``grid`` (``probabilities[i]``: predicted ``doc.cats`` of
    document i, ``gold[i]``: its gold cats), chosen by ``objective``:

    - ``"label_f1"``: per label, the cut-off that maximises that label's F1 (what macro F1 rewards);
    - ``"micro_f1"``: one cut-off for all labels, the one that maximises micro F1 over every
      (document, label) decision. For micro F1 the best cut-off of calibrated probabilities is the
      same for every label (half the best F1 reachable; Lipton et al. 2014), and one value fit on
      all decisions varies far less than one per label fit on its few positives.

    Ties go to the threshold nearest 0.5 (the untuned default), so a label the data cannot decide
    on (no positive example, or every threshold equally good) keeps 0.5.
    """
    if len(probabilities) != len(gold):
        raise ValueError(f"{len(probabilities)} predictions for {len(gold)} gold documents")
    if not grid:
        raise ValueError("empty threshold grid")
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown threshold objective {objective!r}; choose one of {list(OBJECTIVES)}")
    candidates = sorted(grid, key=lambda t: (abs(t - 0.5), t))

    def best(pairs: Sequence[Tuple[float, bool]]) -> float:
        # max keeps the first of equal scores: the candidate nearest 0.5.
        f1, threshold = max(((_f1(*_counts(pairs, t)), t) for t in candidates), key=lambda scored: scored[0])
        return threshold if f1 > 0 else 0.5

    if objective == "micro_f1":
        shared = best([pair for label in labels for pair in _pairs(probabilities, gold, label)])
        return {label: shared for label in labels}
    return {label: best(_pairs(probabilities, gold, label)) for label in labels}


def cross_validate_thresholds(
    probabilities: Sequence[Dict[str, float]],
    gold: Sequence[Dict[str, float]],
    labels: Sequence[str],
    objectives: Sequence[str] = OBJECTIVES,
    repeats: int = 20,
    seed: int = 0,
) -> Dict[str, Dict[str, float]]:
    """How well each objective's thresholds carry over to documents they were not tuned on:
    ``repeats`` random halvings of the documents, tuned on one half and scored on the other (both
    ways). Returns ``{objective: {"micro_f", "macro_f", "micro_f_std"}}``, means over the
    ``2 * repeats`` held-out halves, fractions. Run on dev, this chooses an objective without
    looking at test."""
    import random

    import numpy

    if len(probabilities) < 4:
        raise ValueError(f"{len(probabilities)} documents are too few to halve for cross-validation")
    rng = random.Random(seed)
    held_out: Dict[str, List[Tuple[float, float]]] = {objective: [] for objective in objectives}
    for _ in range(repeats):
        order = list(range(len(probabilities)))
        rng.shuffle(order)
        halves = (order[: len(order) // 2], order[len(order) // 2:])
        for tune_on, score_on in (halves, halves[::-1]):
            for objective in objectives:
                thresholds = tune_thresholds([probabilities[i] for i in tune_on], [gold[i] for i in tune_on], labels, objective=objective)
                held_out[objective].append(
                    _micro_macro_f1([probabilities[i] for i in score_on], [gold[i] for i in score_on], labels, thresholds))
    return {
        objective: {"micro_f": float(numpy.mean([m for m, _ in scores])), "macro_f": float(numpy.mean([m for _, m in scores])),
                    "micro_f_std": float(numpy.std([m for m, _ in scores]))}
        for objective, scores in held_out.items()
    }


def _micro_macro_f1(probabilities, gold, labels, thresholds) -> Tuple[float, float]:
    counts = [_counts(_pairs(probabilities, gold, label), thresholds[label]) for label in labels]
    micro = _f1(*(sum(c[i] for c in counts) for i in range(3)))
    return micro, sum(_f1(*c) for c in counts) / max(len(labels), 1)


@registry.scorers("spacy-biolm.multilabel_thresholds_scorer.v1")
def make_multilabel_thresholds_scorer(
    thresholds: Dict[str, float] = {},
    default_threshold: float = 0.5,
) -> Callable[..., Dict[str, Any]]:
    """Scorer for ``textcat_multilabel``: spaCy's ``cats_*`` keys, with every label decided by its
    own threshold (``thresholds``: {label: cut-off}, e.g. tuned on dev by ``spacy-biolm release
    tune-thresholds``; ``default_threshold`` for the others). Micro P/R/F over (document, label)
    decisions, macro over labels."""
    for label, value in thresholds.items():
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"threshold of {label!r} must be in [0, 1], got {value!r}")

    def scorer(examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        kwargs.pop("threshold", None)
        return score_multilabel(examples, thresholds=thresholds, default_threshold=default_threshold, **kwargs)

    return scorer
