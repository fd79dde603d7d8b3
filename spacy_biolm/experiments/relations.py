"""Relation extraction training: one config with ``spacy train``, and 10-fold cross-validation.

The input mode is the config: ``configs/relations_<task>_fast.cfg`` (spacy-biolm.RelationFast.v1 on
the shared ``transformer``) or ``configs/relations_<task>_anonymised.cfg``
(spacy-biolm.RelationAnonymised.v1 with its own PairEncoder). Training goes through spaCy's own
``spacy.cli.train.train`` (the Python API of ``spacy train``) on the config file as it is, with
``overrides`` for paths and budgets; each fold is scored by
:func:`~spacy_biolm.evaluation.relations.evaluate_relations`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..evaluation.relations import METRICS, cv_markdown, evaluate_relations, relation_architecture, summarise_folds

__all__ = ["train_relations", "cross_validate"]


def train_relations(
    config_path: Path,
    output_dir: Path,
    overrides: Optional[Dict[str, object]] = None,
    use_gpu: int = -1,
    quiet: bool = False,
) -> Path:
    """Train ``config_path`` with ``spacy train`` (``overrides`` as ``{"paths.train": ...}``) on
    GPU ``use_gpu`` (-1: CPU). Returns the ``model-last`` directory."""
    from spacy.cli.train import train

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if quiet:
        import logging

        logging.getLogger("spacy").setLevel(logging.WARNING)
    train(Path(config_path), output_dir, use_gpu=use_gpu, overrides=dict(overrides or {}))
    return output_dir / "model-last"


def cross_validate(
    config_path: Path,
    folds_dir: Path,
    output_dir: Path,
    folds: Sequence[int] = tuple(range(1, 11)),
    overrides: Optional[Dict[str, object]] = None,
    dev_fraction: float = 0.1,
    positive_label: str = "ASSOCIATION",
    use_gpu: int = -1,
) -> Dict[str, object]:
    """k-fold cross-validation of ``config_path`` on BioBERT RE folds (``folds_dir/<k>/{train,test}.tsv``).

    Per fold: convert (``dev_fraction`` of train held out as dev for monitoring; the test split is
    never seen in training), train, score ``model-last`` on the fold's test split. Writes
    ``output_dir/fold_<k>/test_scores.json``, ``cv.json`` (per fold, mean, std) and ``cv.md``.
    """
    from ..corpora.relations import convert_relations

    output_dir = Path(output_dir)
    results: List[Dict[str, object]] = []
    for fold in folds:
        fold_src = Path(folds_dir) / str(fold)
        work = output_dir / f"fold_{fold}"
        corpus = work / "corpus"
        convert_relations(fold_src / "train.tsv", corpus / "train.spacy", "biobert",
                          dev_output=corpus / "dev.spacy", dev_fraction=dev_fraction, positive_label=positive_label)
        convert_relations(fold_src / "test.tsv", corpus / "test.spacy", "biobert", positive_label=positive_label)
        fold_overrides = dict(overrides or {})
        fold_overrides.update({"paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy")})
        model = train_relations(config_path, work / "training", overrides=fold_overrides, use_gpu=use_gpu)
        scores = evaluate_relations(model, corpus / "test.spacy", work / "test_scores.json", use_gpu=use_gpu)
        results.append({"fold": fold, **{k: scores[k] for k in METRICS}, "pairs": scores["pairs"],
                        "baselines": scores["baselines"]})
    summary = summarise_folds(results)
    summary.update({"architecture": relation_architecture(config_path), "config": str(config_path), "folds_dir": str(folds_dir),
                    "overrides": {k: str(v) for k, v in (overrides or {}).items()}})
    from ..run_record import RUN_KEY, stamp_json, with_run_comment

    summary = stamp_json(summary, device="gpu" if use_gpu >= 0 else "cpu")  # this run's commit and date
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "cv.json").write_text(json.dumps(summary, indent=2), encoding="utf8")
    (output_dir / "cv.md").write_text(with_run_comment(cv_markdown(summary), summary[RUN_KEY]), encoding="utf8")
    return summary
