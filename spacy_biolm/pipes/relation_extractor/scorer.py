"""Relation extraction scores as the papers report them.

Micro-averaged precision, recall and F1 over the *positive* relation labels: a gold relation is
found when the prediction has the same head, tail (character offsets) and label; predictions of
"no relation" are not stored, so the negative class never counts. Docs whose gold relations are
missing (another task's Docs in multi-task evaluation) are not scored. With one positive label (GAD,
EU-ADR: ``ASSOCIATION``) this is the binary P/R/F1 of the positive class; for ChemProt it is the
micro average over CPR:3,4,5,6,9 used by Bio-ELECTRA and BioBERT.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Dict, Iterable, Optional, Sequence

from spacy.scorer import PRFScore
from spacy.training import Example
from spacy.util import registry

from ...doc_data import get_relations, relations_annotated

__all__ = ["DEFAULT_PREFIX", "configured_prefix", "score_relations", "make_relations_scorer"]

DEFAULT_PREFIX = "rel"


def configured_prefix(component_config: Dict[str, Any]) -> str:
    """The score-key prefix a relation_extractor's config block gives its scorer (``rel`` unless set)."""
    return component_config.get("scorer", {}).get("prefix", DEFAULT_PREFIX)


def score_relations(
    examples: Iterable[Example], labels: Optional[Sequence[str]] = None, prefix: str = DEFAULT_PREFIX
) -> Dict[str, Any]:
    """Score predicted ``doc._.relations`` against the reference Docs' relations.

    ``labels`` restricts scoring to these relation labels (default: every label seen). Returns
    ``{prefix}_micro_p/_r/_f`` (fractions, as spaCy's scorers do) and ``{prefix}_f_per_type``
    (label -> {p, r, f}), plus ``{prefix}_counts`` (tp/fp/fn per label).
    """
    counts: Dict[str, Counter] = {}
    for eg in examples:
        if not relations_annotated(eg.reference):
            continue
        gold = {(r.key, r.label) for r in get_relations(eg.reference)}
        pred = {(r.key, r.label) for r in get_relations(eg.predicted)}
        for item, kind in [(g, "tp" if g in pred else "fn") for g in gold] + [(p, "fp") for p in pred - gold]:
            label = item[1]
            if labels is not None and label not in labels:
                continue
            counts.setdefault(label, Counter())[kind] += 1
    per_type = {label: PRFScore(tp=c["tp"], fp=c["fp"], fn=c["fn"]) for label, c in sorted(counts.items())}
    micro = PRFScore()
    for score in per_type.values():
        micro += score
    return {
        f"{prefix}_micro_p": micro.precision,
        f"{prefix}_micro_r": micro.recall,
        f"{prefix}_micro_f": micro.fscore,
        f"{prefix}_f_per_type": {label: score.to_dict() for label, score in per_type.items()},
        f"{prefix}_counts": {label: dict(c) for label, c in sorted(counts.items())},
    }


@registry.scorers("spacy-biolm.relations_scorer.v1")
def make_relations_scorer(labels: Optional[Sequence[str]] = None, prefix: str = DEFAULT_PREFIX) -> Callable[..., Dict[str, Any]]:
    """Scorer for ``relation_extractor``: micro P/R/F1 over the positive relation labels.

    Keys: ``rel_micro_p``, ``rel_micro_r``, ``rel_micro_f``, ``rel_f_per_type``, ``rel_counts``.
    ``labels`` (optional) limits scoring to those labels; by default the component's own labels
    count. ``prefix`` replaces ``rel`` in the keys: a second extractor in the pipeline (the
    release's ``relation_chemprot``) needs keys of its own, or ``nlp.evaluate`` keeps one set.
    """
    if not prefix or not isinstance(prefix, str):
        raise ValueError(f"the relations scorer's prefix must be a non-empty string, got {prefix!r}")

    def scorer(examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        return score_relations(examples, labels=labels if labels is not None else kwargs.get("labels"), prefix=prefix)

    return scorer
