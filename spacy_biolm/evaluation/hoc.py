"""Hallmarks of Cancer evaluation: thresholds tuned on dev, test scores, the table.

The metrics of the HoC literature: micro F1 over all (document, hallmark) decisions and macro F1
(the mean of the 10 hallmarks' F1), in percent. A pipeline's ``textcat_multilabel`` is scored with
the thresholds of its config (``spacy-biolm.multilabel_thresholds_scorer.v1``), which
:func:`tune_pipeline_thresholds` fits on dev (by default each label's F1-best cut-off; see
:data:`DEFAULT_OBJECTIVE`) and writes into the saved pipeline's ``config.cfg``.
:func:`~spacy_biolm.experiments.hoc.evaluate_hoc_seeds` trains each config once per seed and tunes
and tests it with these functions; :func:`write_hoc_results` writes mean (std) as JSON and a
Markdown table.
"""

import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..encoders.devices import describe_device
from ..loading import load_pipeline
from .seed_summaries import format_mean_std, summarise
from .tables import markdown_table

__all__ = [
    "HOC_METRICS",
    "SCORER",
    "textcat_name",
    "dev_examples",
    "tune_pipeline_thresholds",
    "score_pipeline",
    "tested_scores",
    "SUMMARY_METRICS",
    "UNRECORDED_OBJECTIVE",
    "DEFAULT_OBJECTIVE",
    "evaluate_hoc_models",
    "write_hoc_results",
    "hoc_table",
    "compare_threshold_objectives",
    "threshold_objectives_table",
    "paper_hoc_rows",
]

#: The scores a HoC row shows: {key of the scorer: column title}.
HOC_METRICS = {"cats_micro_f": "micro F1", "cats_macro_f": "macro F1"}
SCORER = "spacy-biolm.multilabel_thresholds_scorer.v1"
THRESHOLDS_FILE = "thresholds.json"
#: How the HoC tools tune thresholds on dev (spacy_biolm.pipes.multilabel_thresholds.OBJECTIVES):
#: per label, as the release does at the default budget, where it ties with one shared cut-off on
#: held-out dev; the shared cut-off carries over better for longer-trained models and bag-of-words
#: (projects/hoc-heads/results/threshold_objectives.md), which project.yml's hoc_threshold_objective chooses per profile.
DEFAULT_OBJECTIVE = "label_f1"


def textcat_name(nlp) -> str:
    """The name of the pipeline's one ``textcat_multilabel`` component; ValueError otherwise."""
    names = [name for name, pipe in nlp.pipeline if pipe.__class__.__name__ == "MultiLabel_TextCategorizer"]
    if len(names) != 1:
        raise ValueError(f"expected one textcat_multilabel component, found {names or 'none'} in {nlp.pipe_names}")
    return names[0]


def dev_examples(nlp, path: Path) -> list:
    """Examples of a DocBin with the pipeline's predictions: gold Docs as reference, the pipeline
    run on copies of their tokens (not re-tokenised, so nothing shifts)."""
    from spacy.tokens import DocBin
    from spacy.training import Example

    from ..corpora.corpus_files import existing_corpus_file, unannotated_copy

    path = existing_corpus_file(path, "HoC evaluation", "DocBin")
    gold = list(DocBin().from_disk(path).get_docs(nlp.vocab))
    predicted = nlp.pipe((unannotated_copy(doc) for doc in gold), batch_size=16)
    return [Example(p, g) for p, g in zip(predicted, gold)]


def tune_pipeline_thresholds(model_dir: Path, dev_path: Path, use_gpu: int = -1,
                             objective: str = DEFAULT_OBJECTIVE) -> Dict[str, object]:
    """Fit the thresholds on ``dev_path`` by ``objective`` (see
    :func:`~spacy_biolm.pipes.multilabel_thresholds.tune_thresholds`) and store them in
    ``model_dir/config.cfg`` as the textcat's scorer (so ``spacy.load`` and ``spacy evaluate`` use
    them); also writes ``model_dir/thresholds.json``. Returns the thresholds, the dev scores before
    and after, and every objective's cross-validated dev scores (``dev_cross_validated``: tuned on
    half of dev, scored on the other half), the evidence for the choice of objective."""
    from spacy.util import load_config

    from ..pipes.multilabel_thresholds import cross_validate_thresholds, score_multilabel, tune_thresholds

    model_dir = Path(model_dir)
    nlp = load_pipeline(model_dir, use_gpu)
    name = textcat_name(nlp)
    labels = list(nlp.get_pipe(name).labels)
    examples = dev_examples(nlp, dev_path)
    predicted, gold = [eg.predicted.cats for eg in examples], [eg.reference.cats for eg in examples]
    thresholds = tune_thresholds(predicted, gold, labels, objective=objective)
    before = score_multilabel(examples, labels=labels)
    after = score_multilabel(examples, thresholds=thresholds, labels=labels)
    config = load_config(model_dir / "config.cfg", interpolate=False)
    config["components"][name]["scorer"] = {"@scorers": SCORER, "thresholds": thresholds, "default_threshold": 0.5}
    config.to_disk(model_dir / "config.cfg")
    result = {
        "component": name, "dev": str(dev_path), "objective": objective, "thresholds": thresholds,
        "dev_untuned": {k: before[k] for k in HOC_METRICS}, "dev_tuned": {k: after[k] for k in HOC_METRICS},
        "dev_cross_validated": cross_validate_thresholds(predicted, gold, labels) if len(examples) >= 4 else {},
    }
    (model_dir / THRESHOLDS_FILE).write_text(json.dumps(result, indent=2), encoding="utf8")
    return result


def score_pipeline(model_dir: Path, test_path: Path, use_gpu: int = -1) -> Dict[str, object]:
    """The textcat's scores on ``test_path`` with the thresholds of its config (fractions), plus
    the per-hallmark P/R/F (``cats_f_per_type``) and the number of documents."""
    nlp = load_pipeline(model_dir, use_gpu)
    name = textcat_name(nlp)
    examples = dev_examples(nlp, test_path)
    scores = nlp.get_pipe(name).score(examples)
    keep = [k for k, v in scores.items() if isinstance(v, (int, float))]
    return {**{k: scores[k] for k in keep}, "cats_f_per_type": scores["cats_f_per_type"], "documents": len(examples)}


def evaluate_hoc_models(models: Dict[str, Sequence[Path]], test: Path, use_gpu: int = -1) -> Dict[str, object]:
    """Score already trained and tuned pipelines ({row name: model dirs}, each tuned by
    :func:`tune_pipeline_thresholds`) on ``test``, in the structure :func:`~spacy_biolm.experiments.hoc.evaluate_hoc_seeds`
    returns: a row's pipelines (e.g. one per seed, trained with ``spacy train``) are its runs, as
    mean (std). Each run records its model dir and the seed of its config."""
    rows, dev, seeds = {}, None, set()
    for name, model_dirs in models.items():
        runs = []
        for model_dir in model_dirs:
            run = {"model": str(model_dir), "seed": _trained_seed(Path(model_dir)), **tested_scores(Path(model_dir), test, use_gpu)}
            dev = run.get("dev", dev)
            runs.append(run)
        if len(runs) > 1:  # a single pipeline's seed says nothing about spread; the caption then says so
            seeds.update(run["seed"] for run in runs if run["seed"] is not None)
        rows[name] = {"models": [str(m) for m in model_dirs], "runs": runs, "summary": summarise(runs, SUMMARY_METRICS)}
    objectives = sorted({run["objective"] for row in rows.values() for run in row["runs"]})
    return {"test": str(test), "dev": str(dev), "seeds": sorted(seeds), "objective": ", ".join(objectives),
            "overrides": {}, "device": describe_device(use_gpu), "rows": rows}


def _trained_seed(model_dir: Path) -> Optional[int]:
    """The ``[system] seed`` a saved pipeline was trained with (its ``config.cfg``; None if unset)."""
    from spacy.util import load_config

    return load_config(model_dir / "config.cfg", interpolate=False).get("system", {}).get("seed")


SUMMARY_METRICS = [*HOC_METRICS, *(f"dev_{k}" for k in HOC_METRICS)]
#: The objective of thresholds.json files written before the objective was recorded.
UNRECORDED_OBJECTIVE = "label_f1"


def tested_scores(model_dir: Path, test: Path, use_gpu: int) -> Dict[str, object]:
    """Test scores of a tuned pipeline, with its tuned dev scores and thresholds beside them."""
    tuned_path = Path(model_dir) / THRESHOLDS_FILE
    if not tuned_path.is_file():
        raise FileNotFoundError(f"{tuned_path} missing: tune the thresholds first (spacy-biolm release tune-thresholds)")
    tuned = json.loads(tuned_path.read_text(encoding="utf8"))
    scores = score_pipeline(model_dir, test, use_gpu=use_gpu)
    scores.update({f"dev_{k}": v for k, v in tuned["dev_tuned"].items()})
    return {**scores, "thresholds": tuned["thresholds"], "objective": tuned.get("objective", UNRECORDED_OBJECTIVE),
            "dev_cross_validated": tuned.get("dev_cross_validated", {}), "dev": tuned["dev"]}


def paper_hoc_rows(paper_results: Optional[Path]) -> List[List[str]]:
    """Rows for the published HoC scores in ``paper_results`` (an entry ``"hoc"`` of any paper,
    ``{model: [micro F1, macro F1]}`` in percent, with ``"models"`` naming them); none when the
    file has no HoC numbers."""
    if not paper_results or not Path(paper_results).is_file():
        return []
    rows = []
    for paper in json.loads(Path(paper_results).read_text(encoding="utf8")).values():
        if not isinstance(paper, dict) or not isinstance(paper.get("hoc"), dict):
            continue
        names = paper.get("models", {})
        for model, values in paper["hoc"].items():
            if isinstance(values, list):
                cells = [f"{v:.2f}" if isinstance(v, (int, float)) else "–" for v in values[:2]]
                rows.append([f"{names.get(model, model)} (paper)"] + cells + ["", ""][: 2 - len(cells)] + ["", ""])
    return rows


def hoc_table(result: Dict[str, object], paper_results: Optional[Path] = None) -> str:
    """Markdown: one row per config, test micro/macro F1 and tuned dev micro/macro F1 as mean
    (std) in percent over the seeds, then the published rows (or a line saying there are none).
    When every run records it, a last column holds the held-out dev micro F1 of the run's
    objective (thresholds tuned on one half of dev, scored on the other): the dev columns score
    the thresholds on the documents they were tuned on, so only this one can choose between rows
    without looking at test."""
    held_out = _held_out_dev_micro_fs(result)
    header = ["model", "seeds", "test micro F1", "test macro F1", "dev micro F1", "dev macro F1"]
    header += ["held-out dev micro F1"] if held_out is not None else []
    rows = []
    for name, row in result["rows"].items():
        summary = row["summary"]
        cells = [format_mean_std(summary[k]["mean"], summary[k]["std"]) for k in
                 ("cats_micro_f", "cats_macro_f", "dev_cats_micro_f", "dev_cats_macro_f")]
        if held_out is not None:
            spread = summarise([{"micro_f": value} for value in held_out[name]], ["micro_f"])["micro_f"]
            cells.append(format_mean_std(spread["mean"], spread["std"]))
        rows.append([f"{name} (ours)", str(summary["cats_micro_f"]["n"]), *cells])
    paper = paper_hoc_rows(paper_results)
    published = [[r[0], "", r[1], r[2], *[""] * (len(header) - 4)] for r in paper]
    table = markdown_table(header, rows + published)
    if paper_results and not paper:
        table += f"\n\nNo published HoC scores in {paper_results}."
    return table


def _held_out_dev_micro_fs(result: Dict[str, object]) -> Optional[Dict[str, List[float]]]:
    """{row name: each run's cross-validated dev micro F1 under the run's own threshold objective},
    or None when a run did not record it (tuned before cross-validation was)."""
    held_out = {}
    for name, row in result["rows"].items():
        scores = [(run.get("dev_cross_validated") or {}).get(run.get("objective", UNRECORDED_OBJECTIVE)) for run in row["runs"]]
        if not all(scores):
            return None
        held_out[name] = [score["micro_f"] for score in scores]
    return held_out


def compare_threshold_objectives(models: Dict[str, Path], dev: Path, test: Path, use_gpu: int = -1) -> Dict[str, object]:
    """Which threshold objective to use, for each trained pipeline of ``models`` ({row name: model
    dir}): the untuned 0.5 cut-off and every objective of
    :data:`~spacy_biolm.pipes.multilabel_thresholds.OBJECTIVES`, each tuned on all of ``dev`` and
    scored on ``test``, beside its cross-validated dev scores (tuned on half of dev, scored on the
    other half: the evidence a user has before looking at test). The pipelines are not changed.
    Returns ``{"rows": {name: {"model", "objectives": {objective: {"thresholds", "held_out_dev",
    "test"}}}}, ...}``, scores as fractions."""
    from ..pipes.multilabel_thresholds import OBJECTIVES, cross_validate_thresholds, score_multilabel, tune_thresholds

    def micro_macro(scores: Dict[str, float]) -> Dict[str, float]:
        return {"micro_f": scores["cats_micro_f"], "macro_f": scores["cats_macro_f"]}

    rows = {}
    for name, model_dir in models.items():
        nlp = load_pipeline(model_dir, use_gpu)
        labels = list(nlp.get_pipe(textcat_name(nlp)).labels)
        on_dev, on_test = dev_examples(nlp, dev), dev_examples(nlp, test)
        predicted, gold = [eg.predicted.cats for eg in on_dev], [eg.reference.cats for eg in on_dev]
        untuned = {label: 0.5 for label in labels}
        # Nothing is tuned at 0.5, so all of dev is held out.
        compared = {"untuned": {"thresholds": untuned, "held_out_dev": micro_macro(score_multilabel(on_dev, untuned, labels=labels)),
                                "test": micro_macro(score_multilabel(on_test, untuned, labels=labels))}}
        held_out = cross_validate_thresholds(predicted, gold, labels, OBJECTIVES)
        for objective in OBJECTIVES:
            thresholds = tune_thresholds(predicted, gold, labels, objective=objective)
            compared[objective] = {"thresholds": thresholds, "held_out_dev": held_out[objective],
                                   "test": micro_macro(score_multilabel(on_test, thresholds, labels=labels))}
        rows[name] = {"model": str(model_dir), "objectives": compared}
    return {"dev": str(dev), "test": str(test), "device": describe_device(use_gpu), "rows": rows}


def threshold_objectives_table(result: Dict[str, object], paper_results: Optional[Path] = None) -> str:
    """Markdown for :func:`compare_threshold_objectives`: a row per model and objective, held-out
    dev and test micro/macro F1 in percent, then the published rows (or a line saying there are none)."""
    rows = [[f"{name} (ours)", objective,
             *(f"{100 * scores[split][k]:.2f}" for split in ("held_out_dev", "test") for k in ("micro_f", "macro_f"))]
            for name, row in result["rows"].items() for objective, scores in row["objectives"].items()]
    paper = paper_hoc_rows(paper_results)
    rows += [[r[0], "", "", "", r[1], r[2]] for r in paper]
    missing = f"\n\nNo published HoC scores in {paper_results}." if paper_results and not paper else ""
    return (f"Hallmarks of Cancer: decision thresholds tuned on dev ({result['dev']}) by each objective, percent. "
            "Held-out dev: tuned on one half of dev, scored on the other (20 random halvings, both ways; "
            f"untuned: all of dev); test: tuned on all of dev, scored on {result['test']}.\n\n"
            + markdown_table(["model", "thresholds", "held-out dev micro F1", "held-out dev macro F1", "test micro F1", "test macro F1"], rows)
            + missing)


_OBJECTIVE_WORDS = {"label_f1": "per hallmark, each for its own F1",
                    "micro_f1": "as one cut-off shared by the hallmarks, for micro F1"}


def _objective_words(result: Dict[str, object]) -> str:
    objective = result.get("objective", UNRECORDED_OBJECTIVE)
    return _OBJECTIVE_WORDS.get(objective, f"by each row's objective ({objective})")


def write_hoc_results(result: Dict[str, object], output_json: Path, table_path: Optional[Path] = None,
                      paper_results: Optional[Path] = None) -> Tuple[str, Path]:
    """Write ``result`` as JSON and its table (when ``table_path``); returns (table, json path)."""
    from ..run_record import RUN_KEY, stamp_json, with_run_comment

    result = stamp_json(result, device=result.get("device"))  # this run's commit and date
    output_json = Path(output_json)
    output_json.parent.mkdir(parents=True, exist_ok=True)
    output_json.write_text(json.dumps(result, indent=2), encoding="utf8")
    table = hoc_table(result, paper_results)
    if table_path:
        runs = f"mean (std) over seeds {result['seeds']}" if result["seeds"] else "one trained pipeline each"
        Path(table_path).parent.mkdir(parents=True, exist_ok=True)
        Path(table_path).write_text(with_run_comment(
            f"Hallmarks of Cancer, test split ({result['test']}), percent, {runs}; "
            f"thresholds tuned on dev ({result['dev']}) {_objective_words(result)}. Overrides: {result['overrides'] or 'none'}."
            + (" Held-out dev: tuned on one half of dev, scored on the other (20 random halvings, both ways)."
               if _held_out_dev_micro_fs(result) else "") + "\n\n"
            f"{table}\n", result[RUN_KEY]), encoding="utf8")
    return table, output_json
