"""Hallmarks of Cancer over several seeds: train each config once per seed, tune its per-label
thresholds on dev, score it on test (the tuning, scoring and table: :mod:`spacy_biolm.evaluation.hoc`).

:func:`evaluate_hoc_seeds` trains each config once per seed (the transformer and the bag-of-words
baseline in the same run), tunes, tests and returns mean (std) per row, which
:func:`~spacy_biolm.evaluation.hoc.write_hoc_results` writes as JSON and a Markdown table.
"""

import json
from pathlib import Path
from typing import Dict, Optional, Sequence

from ..encoders.devices import describe_device
from ..evaluation.hoc import DEFAULT_OBJECTIVE, SUMMARY_METRICS, UNRECORDED_OBJECTIVE, tested_scores, tune_pipeline_thresholds
from .seeds import run_seeds

__all__ = ["evaluate_hoc_seeds"]


def evaluate_hoc_seeds(
    configs: Dict[str, Path],
    output_dir: Path,
    train: Path,
    dev: Path,
    test: Path,
    seeds: Sequence[int],
    overrides: Optional[Dict[str, object]] = None,
    use_gpu: int = -1,
    objective: str = DEFAULT_OBJECTIVE,
) -> Dict[str, object]:
    """Train every config of ``configs`` ({row name: config}) once per seed into
    ``output_dir/<config stem>/seed_<n>`` (:func:`run_seeds`, so scored seeds are reused and each
    run records its wall time), tune its thresholds on ``dev`` by ``objective`` and score
    ``model-best`` on ``test``. A reused run tuned by another objective is re-tuned and re-tested,
    not retrained. Returns ``{"rows": {name: {"config", "runs", "summary"}}, ...}`` (scores as
    fractions)."""
    missing = [str(p) for p in (train, dev, test, *configs.values()) if not Path(p).is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing (spacy-biolm data convert-hoc writes the DocBins)")

    def tune_and_test(model_dir: Path, test_path: Path) -> Dict[str, object]:
        tune_pipeline_thresholds(model_dir, dev, use_gpu=use_gpu, objective=objective)
        return tested_scores(model_dir, test_path, use_gpu)

    rows = {}
    for name, config in configs.items():
        for seed in seeds:
            _retune_if_stale(Path(output_dir) / Path(config).stem / f"seed_{seed}", objective, tune_and_test, test)
        run = run_seeds(Path(config), Path(output_dir) / Path(config).stem, test, seeds,
                        {**(overrides or {}), "paths.train": str(train), "paths.dev": str(dev)},
                        metrics=SUMMARY_METRICS, use_gpu=use_gpu, score=tune_and_test)
        rows[name] = {"config": str(config), "runs": run["runs"], "summary": run["summary"]}
    return {"train": str(train), "dev": str(dev), "test": str(test), "seeds": list(seeds), "objective": objective,
            "overrides": {k: str(v) for k, v in (overrides or {}).items()}, "device": describe_device(use_gpu),
            "rows": rows}


def _retune_if_stale(run_dir: Path, objective: str, tune_and_test, test: Path) -> None:
    """Re-tune and re-test a scored run (``run_dir/test_scores.json``) whose thresholds were tuned
    by another objective, keeping its training record (wall time, recipe)."""
    scores_path = run_dir / "test_scores.json"
    if not scores_path.is_file():
        return
    scores = json.loads(scores_path.read_text(encoding="utf8"))
    if scores.get("objective", UNRECORDED_OBJECTIVE) == objective:
        return
    kept = {k: scores[k] for k in ("train_seconds", "recipe") if k in scores}
    scores_path.write_text(json.dumps({**tune_and_test(run_dir / "model-best", test), **kept}, indent=2), encoding="utf8")
