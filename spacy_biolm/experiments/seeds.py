"""Multi-seed runs: train and test one config over several seeds, report mean (std).

The papers report fine-tuning results as mean (standard deviation) over 10 runs with different
seeds; a single run of a small encoder can differ by a point or more. This trains the config once
per seed with ``spacy train``, scores ``model-best`` on the test set with ``spacy evaluate``, and
writes every run's scores plus the summary (JSON), a Markdown table beside the published numbers,
and a plot of the per-seed scores (tables and plots: :mod:`spacy_biolm.evaluation.seed_summaries`).
"""

import json
import time
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence

from ..evaluation.seed_summaries import NER_METRICS, SUMMARY_FILE, plot_seed_scores, seeds_table, summarise
from ..evaluation.tables import paper_ner_rows

__all__ = ["evaluate_seeds", "run_seeds", "recipe_fingerprint", "scored_run"]

TABLE_FILE = "seeds_table.md"
PLOT_FILE = "seeds.png"


def evaluate_seeds(
    config_path: Path,
    output_dir: Path,
    corpora: Dict[str, Path],
    seeds: Sequence[int],
    overrides: Optional[Dict[str, object]] = None,
    name: str = "model",
    paper_results: Optional[Path] = None,
    use_gpu: int = -1,
) -> Dict[str, str]:
    """Train and test ``config_path`` over ``seeds`` on each corpus of ``corpora`` ({dataset: folder
    with train.spacy, devel.spacy and test.spacy}) into ``output_dir/<dataset>``: the runs and their
    summary (:func:`run_seeds`), a Markdown table beside the paper's rows for that dataset
    (``seeds_table.md``) and a per-seed plot (``seeds.png``). Returns ``{dataset: table}``."""
    output_dir = Path(output_dir)
    splits = {dataset: {split: Path(folder) / f"{split}.spacy" for split in ("train", "devel", "test")}
              for dataset, folder in corpora.items()}
    missing = [str(path) for paths in splits.values() for path in paths.values() if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing: convert the corpus first (spacy-biolm data convert-splits)")
    tables = {}
    for dataset, paths in splits.items():
        run_dir = output_dir / dataset
        dataset_overrides = {**(overrides or {}), "paths.train": str(paths["train"]), "paths.dev": str(paths["devel"])}
        result = run_seeds(config_path, run_dir, paths["test"], seeds, dataset_overrides, metrics=list(NER_METRICS),
                           use_gpu=use_gpu)
        paper_rows = paper_ner_rows(paper_results, dataset) if paper_results and Path(paper_results).is_file() else []
        table = seeds_table(name, result["summary"], NER_METRICS, paper_rows)
        (run_dir / TABLE_FILE).write_text(f"{dataset} test set, mean (std) over seeds {list(seeds)}.\n\n{table}",
                                          encoding="utf8")
        plot_seed_scores(result["runs"], NER_METRICS, run_dir / PLOT_FILE, f"{name}: {dataset}, {len(seeds)} seeds")
        tables[dataset] = table
    return tables


def run_seeds(
    config_path: Path,
    output_dir: Path,
    test_path: Path,
    seeds: Sequence[int],
    overrides: Optional[Dict[str, object]] = None,
    metrics: Sequence[str] = ("ents_p", "ents_r", "ents_f"),
    use_gpu: int = -1,
    score: Optional[Callable[[Path, Path], Dict[str, object]]] = None,
) -> Dict[str, object]:
    """Train ``config_path`` once per seed into ``output_dir/seed_<n>``, score each ``model-best`` on
    ``test_path`` (with ``score(model_dir, test_path)``; default ``spacy evaluate``, whose reader
    suits NER); write ``output_dir/seeds_summary.json`` and return it. Each run records its
    training and test wall time (``train_seconds``, ``test_seconds``). Runs already scored
    (``seed_<n>/test_scores.json`` present) are reused, so an interrupted evaluation resumes."""
    from spacy.cli.evaluate import evaluate
    from spacy.cli.train import train

    if score is None:
        def score(model_dir: Path, data: Path) -> Dict[str, object]:
            return evaluate(model_dir, data, use_gpu=use_gpu, silent=True)

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    if not seeds:
        raise ValueError("No seeds to run")
    runs = []
    for seed in seeds:
        run_dir = output_dir / f"seed_{seed}"
        scores_path = run_dir / "test_scores.json"
        run_overrides = {**(overrides or {}), "system.seed": seed}
        recipe = recipe_fingerprint(config_path, run_overrides)
        scores = scored_run(scores_path, recipe, config_path, run_overrides)
        if scores is None:
            start = time.perf_counter()
            train(config_path, run_dir, use_gpu=use_gpu, overrides=run_overrides)
            trained = time.perf_counter()
            scores = dict(score(run_dir / "model-best", test_path))
            scores.update(train_seconds=round(trained - start, 1), test_seconds=round(time.perf_counter() - trained, 1),
                          recipe=recipe)
            text = json.dumps(_plain(scores), indent=2)
            scores_path.write_text(text, encoding="utf8")
            scores = json.loads(text)  # as a reused run reads it back (tuples as lists, keys as strings)
        # Dev scores the scorer reports (HoC's, with tuned thresholds) win over those spacy train recorded.
        runs.append({"seed": seed, **_dev_scores(run_dir), **scores})
    dev_metrics = [f"dev_{m}" for m in metrics if all(f"dev_{m}" in run for run in runs)]
    result = {
        "config": str(config_path),
        "test": str(test_path),
        "overrides": {k: str(v) for k, v in (overrides or {}).items()},
        "runs": runs,
        "summary": summarise(runs, [*metrics, *dev_metrics]),
    }
    from ..run_record import stamp_json

    result = stamp_json(result)  # this run's commit and date
    (output_dir / SUMMARY_FILE).write_text(json.dumps(result, indent=2), encoding="utf8")
    return result


def scored_run(scores_path: Path, recipe: str, config_path: Path, overrides: Dict[str, object]) -> Optional[Dict[str, object]]:
    """The scores a finished run wrote to ``scores_path`` (None if it has not), which must carry the
    ``recipe`` fingerprint the run would be trained with now: a run of another recipe is an error,
    not a result to reuse."""
    if not scores_path.is_file():
        return None
    scores = json.loads(scores_path.read_text(encoding="utf8"))
    # Runs scored before fingerprints were recorded carry none and are taken as they are.
    if scores.get("recipe", recipe) != recipe:
        raise ValueError(f"{scores_path.parent} was trained with another recipe than {config_path} with {overrides} "
                         "(the config or an override changed): delete the run or pick another output directory")
    return scores


def recipe_fingerprint(config_path: Path, overrides: Dict[str, object]) -> str:
    """SHA-256 of the config as it trains (``overrides`` applied, comments and layout ignored): a
    reused run must have been trained with the same recipe, or the comparison it enters is void."""
    import hashlib

    from spacy.util import load_config

    text = load_config(config_path, overrides=dict(overrides), interpolate=False).to_str()
    return hashlib.sha256(text.encode("utf8")).hexdigest()


def _dev_scores(run_dir: Path) -> Dict[str, float]:
    """The dev-set scores ``spacy train`` recorded for ``model-best`` (its meta.json), as ``dev_<key>``."""
    meta_path = run_dir / "model-best" / "meta.json"
    if not meta_path.is_file():
        return {}
    performance = json.loads(meta_path.read_text(encoding="utf8")).get("performance", {})
    return {f"dev_{k}": v for k, v in performance.items() if isinstance(v, (int, float))}


def _plain(scores: Dict[str, object]) -> Dict[str, object]:
    """JSON-safe copy of a scorer's scores: numbers, strings and tables of them (spaCy's per-type
    tables, HoC's thresholds); anything else (e.g. numpy arrays) is dropped."""
    def safe(value: object) -> bool:
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            return False
        return True

    return {k: v for k, v in scores.items() if safe(v)}
