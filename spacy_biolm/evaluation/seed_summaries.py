"""Multi-seed results: mean (std) of each metric over seeds, tables beside the published numbers,
and plots of the per-seed scores.

The papers report fine-tuning results as mean (standard deviation) over 10 runs with different
seeds; a single run of a small encoder can differ by a point or more. The runs themselves are
trained by :mod:`spacy_biolm.experiments.seeds`, which writes each run folder's
``seeds_summary.json``; this module summarises, tabulates and plots them.
"""

import json
import math
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

from .tables import markdown_table, paper_ner_scores

__all__ = [
    "write_datasets_table",
    "summarise",
    "format_mean_std",
    "seeds_table",
    "datasets_table",
    "summarise_score_files",
    "plot_seed_scores",
    "plot_datasets",
    "SUMMARY_FILE",
    "NER_METRICS",
]

SUMMARY_FILE = "seeds_summary.json"
# The NER scores a seeds run reports: {key in `spacy evaluate` scores: column title}.
NER_METRICS = {"ents_p": "P", "ents_r": "R", "ents_f": "F1"}
# Paper models shown beside ours in the datasets table, when the paper has their scores.
PAPER_NER_MODELS = ("bio_electra", "electra_small_pp", "bert_base")


def write_datasets_table(
    output: Path,
    runs: Dict[str, Path],
    paper_results: Optional[Path] = None,
    name: str = "ours",
    row_title: str = "dataset",
) -> str:
    """One NER table over the :func:`evaluate_seeds` runs in ``runs`` ({row name: run folder}; rows are
    datasets, or configs compared on one dataset): our mean (std) test P/R/F1 (and dev F1 when every
    run has it) beside the paper's F1. Writes ``output`` (Markdown), the runs' results beside it
    (``.json``) and a plot of the per-seed F1 per row (``.png``); returns the table."""
    output = Path(output)
    results = {}
    for row, run_dir in runs.items():
        summary_path = Path(run_dir) / SUMMARY_FILE
        if not summary_path.is_file():
            raise FileNotFoundError(f"{summary_path} is missing: run `spacy-biolm evaluate seeds` for {row} first")
        results[row] = json.loads(summary_path.read_text(encoding="utf8"))
    paper_scores, paper_models = (paper_ner_scores(paper_results) if paper_results and Path(paper_results).is_file()
                                  else ({}, {}))
    shown = {m: paper_models.get(m, m).split(" (")[0] for m in PAPER_NER_MODELS
             if any(m in scores for scores in paper_scores.values())}
    metrics = dict(NER_METRICS)
    if all("dev_ents_f" in result["summary"] for result in results.values()):
        metrics["dev_ents_f"] = "dev F1"
    table = datasets_table(results, paper_scores, shown, metrics, row_title)
    from ..run_record import RUN_KEY, stamp_json, with_run_comment

    stamped = stamp_json(results)  # this run's commit and date, beside the rows
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(with_run_comment(f"NER test sets, entity-level, percent: {name}, mean (std) over seeds.\n\n{table}",
                                       stamped[RUN_KEY]), encoding="utf8")
    output.with_suffix(".json").write_text(json.dumps(stamped, indent=2), encoding="utf8")
    bio_electra_f1 = {d: s["bio_electra"][-1] for d, s in paper_scores.items() if "bio_electra" in s}
    plot_datasets(results, "ents_f", output.with_suffix(".png"), f"{name}: NER test F1 per seed", bio_electra_f1,
                  "Bio-ELECTRA (paper)")
    return table


def summarise(runs: Sequence[Dict[str, float]], metrics: Iterable[str]) -> Dict[str, Dict[str, float]]:
    """Mean and sample standard deviation (n - 1; 0 for one run) of each metric over runs."""
    summary = {}
    for metric in metrics:
        values = [float(run[metric]) for run in runs if run.get(metric) is not None]
        if not values:
            raise KeyError(f"No run has the metric {metric!r}; runs have {sorted(set().union(*runs))}")
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
        summary[metric] = {"mean": mean, "std": math.sqrt(var), "n": len(values), "values": values}
    return summary


def summarise_score_files(rows: Dict[str, Sequence[Path]], metrics: Iterable[str]) -> Dict[str, Dict[str, object]]:
    """Mean (std) over seeds of test scores already written, one evaluation JSON per seed (runs
    trained side by side on a GPU rather than by ``evaluate seeds``, say): ``rows`` maps a row name
    to its seeds' files. Returns ``{row: {"files", "summary"}}``; a row without files, or a file
    without one of the ``metrics``, is named in the error."""
    metrics = list(metrics)
    results: Dict[str, Dict[str, object]] = {}
    for row, paths in rows.items():
        if not paths:
            raise ValueError(f"{row}: no score files")
        runs = []
        for path in paths:
            scores = json.loads(Path(path).read_text(encoding="utf8"))
            missing = [key for key in metrics if scores.get(key) is None]
            if missing:
                raise KeyError(f"{path}: no {missing} among its scores {sorted(scores)}")
            runs.append({key: scores[key] for key in metrics})
        results[row] = {"files": [str(p) for p in paths], "summary": summarise(runs, metrics)}
    return results


def format_mean_std(mean: float, std: float, scale: float = 100.0, digits: int = 2) -> str:
    """``"78.32 (0.45)"``: a score and its spread in percent, as the papers print them."""
    return f"{mean * scale:.{digits}f} ({std * scale:.{digits}f})"


def seeds_table(
    name: str,
    summary: Dict[str, Dict[str, float]],
    metrics: Dict[str, str],
    paper_rows: Optional[List[List[str]]] = None,
) -> str:
    """Markdown table: our mean (std) row for ``metrics`` ({key: column title}) and the paper's rows."""
    n = next(iter(summary.values()))["n"]
    header = ["model"] + list(metrics.values())
    rows = [[f"{name} (ours, {n} seed{'s' if n != 1 else ''})"]
            + [format_mean_std(summary[k]["mean"], summary[k]["std"]) for k in metrics]]
    rows += paper_rows or []
    return markdown_table(header, rows)


def datasets_table(
    results: Dict[str, Dict[str, object]],
    paper_scores: Dict[str, Dict[str, List[float]]],
    paper_models: Dict[str, str],
    metrics: Dict[str, str],
    row_title: str = "dataset",
) -> str:
    """Markdown table, one row per dataset (or config): our mean (std) for ``metrics`` ({key: column
    title}) from each ``run_seeds`` result, then the F1 of each paper model in ``paper_models``
    ({key: column title}); ``paper_scores[dataset][model]`` is the paper's (P, R, F1), and a dataset
    the paper did not report shows a dash."""
    header = [row_title, "seeds"] + [f"{title} (ours)" for title in metrics.values()]
    header += [f"{title} F1 (paper)" for title in paper_models.values()]
    rows = []
    for dataset, result in results.items():
        summary = result["summary"]
        row = [dataset, str(next(iter(summary.values()))["n"])]
        row += [format_mean_std(summary[k]["mean"], summary[k]["std"]) for k in metrics]
        published = paper_scores.get(dataset, {})
        row += [f"{published[m][-1]:.2f}" if m in published else "–" for m in paper_models]
        rows.append(row)
    return markdown_table(header, rows)


def plot_seed_scores(runs: Sequence[Dict[str, float]], metrics: Dict[str, str], path: Path, title: str) -> Path:
    """One dot per seed per metric, with the mean and +-1 std as a bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = summarise(runs, metrics)
    fig, ax = plt.subplots(figsize=(1.8 + 1.4 * len(metrics), 3.6))
    for i, key in enumerate(metrics):
        values = [100 * v for v in summary[key]["values"]]
        ax.scatter([i] * len(values), values, alpha=0.7, zorder=3)
        ax.errorbar(i + 0.15, 100 * summary[key]["mean"], yerr=100 * summary[key]["std"], fmt="_", color="black",
                    capsize=6, markersize=14)
    ax.set_xticks(range(len(metrics)), list(metrics.values()))
    ax.set_xlim(-0.5, len(metrics) - 0.5)
    ax.set_ylabel("percent")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_datasets(
    results: Dict[str, Dict[str, object]],
    metric: str,
    path: Path,
    title: str,
    paper_scores: Optional[Dict[str, float]] = None,
    paper_label: str = "paper",
) -> Path:
    """Per-seed ``metric`` per dataset (dots), our mean +-1 std, and the paper's score (a star)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.8 + 1.5 * len(results), 3.8))
    for i, (dataset, result) in enumerate(results.items()):
        entry = result["summary"][metric]
        ax.scatter([i] * len(entry["values"]), [100 * v for v in entry["values"]], alpha=0.7, zorder=3,
                   color="tab:blue", label="ours, per seed" if i == 0 else None)
        ax.errorbar(i + 0.12, 100 * entry["mean"], yerr=100 * entry["std"], fmt="_", color="black", capsize=6,
                    markersize=14, label="ours, mean (std)" if i == 0 else None)
    marked = False
    for i, dataset in enumerate(results):
        if paper_scores and dataset in paper_scores:
            ax.scatter([i - 0.12], [paper_scores[dataset]], marker="*", s=140, color="tab:red", zorder=4,
                       label=None if marked else paper_label)
            marked = True
    ax.set_xticks(range(len(results)), list(results))
    ax.set_xlim(-0.6, len(results) - 0.4)
    ax.set_ylabel(f"{metric} (percent)")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
