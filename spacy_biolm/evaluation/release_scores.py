"""The release's scores: what each component of en_bio_electra scores on which test set, beside
its baseline and the paper, gathered from the task evaluations the project wrote
(``metrics/*.json``), and their tables. :mod:`spacy_biolm.release_meta` writes them into the
wheel's meta.json and README. ``results/release.json`` (committed) holds
per component its headline metric: ours, every baseline measured in the same run, the strongest of
them, the paper's value, its training time, and the run's encoder, profile and device; README's score table is
generated from it (``spacy-biolm docs scores-table``). Each component's row (task, test set,
scores, headline metric, the paper's value, the baselines its scorer reports) is defined beside the
component and gathered in :data:`spacy_biolm.pipes.release_rows.RELEASE_ROWS`.
"""

import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ..pipes.release_rows import RELEASE_ROWS
from .tables import markdown_table

__all__ = ["paper_value", "release_rows", "release_table", "release_results", "results_table",
           "one_encoder_table", "seeds_comparison", "dev_scores_table"]


def paper_value(paper: Dict[str, object], component: str) -> Optional[Dict[str, object]]:
    """``{"name", "value"}`` (value as a fraction, like ours) of the paper's headline number for
    ``component``, or None when ``paper`` lacks it."""
    if RELEASE_ROWS[component].paper is None:
        return None
    source, path, indices = RELEASE_ROWS[component].paper
    node: object = paper.get(source, {})
    for key in path:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    rows = [node] if isinstance(node, list) else [v for k, v in sorted(node.items()) if k.startswith("batch")]
    if not rows or any(not isinstance(row, list) or max(indices) >= len(row) for row in rows):
        return None
    value = sum(row[i] for row in rows for i in indices) / (len(indices) * len(rows))
    model = paper[source].get("models", {}).get(path[-1]) or paper[source].get("paper", path[-1])
    return {"name": f"{model} ({source})", "value": value if component == "answer_reranker" else value / 100}


def release_results(
    metric_paths: Dict[str, Path],
    baseline_paths: Optional[Dict[str, Dict[str, Path]]] = None,
    paper_results: Optional[Path] = None,
    run: Optional[Dict[str, object]] = None,
    train_times: Optional[Path] = None,
) -> Dict[str, object]:
    """The release's results: per component of ``metric_paths`` its headline metric, ours, each
    baseline (those in its evaluation JSON under ``baselines``, those its scorer reports, and the
    trained baselines of ``baseline_paths``: ``{component: {title: evaluation JSON}}``), the
    strongest baseline, ``at_or_above_baseline``, the paper's value, the row's scores, and its
    training's wall time in seconds (``train_seconds``: the entry of ``train_times``, the JSON
    project.yml's timed training steps write, named by the component or by a comma-separated list
    of the components one training trains together; None if there is none). ``run`` (encoder, profile, device,
    seeds, ...) is recorded as given."""
    paper = json.loads(Path(paper_results).read_text(encoding="utf8")) if paper_results else {}
    timings = json.loads(Path(train_times).read_text(encoding="utf8")) if train_times else {}
    components = []
    for row in release_rows(metric_paths):
        component = row["component"]
        key, title = RELEASE_ROWS[component].headline, RELEASE_ROWS[component].headline_title
        scores = json.loads(Path(metric_paths[component]).read_text(encoding="utf8"))
        baselines = {name: values.get(key) for name, values in scores.get("baselines", {}).items()}
        baselines.update({name: scores.get(k) for name, k in RELEASE_ROWS[component].scorer_baselines.items()})
        for name, path in (baseline_paths or {}).get(component, {}).items():
            baselines[name] = json.loads(Path(path).read_text(encoding="utf8")).get(key)
        measured = {name: value for name, value in baselines.items() if value is not None}
        strongest = max(measured, key=measured.get) if measured else None
        ours = scores.get(key)
        components.append({
            "component": component, "task": row["task"], "test_set": row["test_set"], "metric": title, "key": key,
            "ours": ours, "baselines": baselines,
            "baseline": {"name": strongest, "value": measured[strongest]} if strongest else None,
            "at_or_above_baseline": None if strongest is None or ours is None else ours >= measured[strongest],
            "paper": paper_value(paper, component), "scores": row["scores"],
            **({"doc_ents": scores["doc_ents"]} if "doc_ents" in scores else {}),  # typed_ner: doc.ents beside the span group
            **({"reranker_choice": scores["reranker_choice"]} if "reranker_choice" in scores else {}),
            **_training(timings, component),
        })
    return {**dict(run or {}), "components": components}


def _training(timings: Dict[str, dict], component: str) -> Dict[str, object]:
    """``train_seconds`` of the timed training that trained ``component``, and ``trained_with``
    (the components trained with it in that one training) where it was not alone. A first stage
    timed as ``<component>_transfer`` (the training the component started from) is part of its
    training: counted in ``train_seconds`` and recorded as ``first_stage_seconds``."""
    for name, record in timings.items():
        together = name.split(",")
        if component in together and isinstance(record, dict):
            others = [c for c in together if c != component]
            found = {"train_seconds": record.get("seconds"), **({"trained_with": others} if others else {})}
            first = timings.get(f"{component}_transfer")
            if isinstance(first, dict) and first.get("seconds") is not None and found["train_seconds"] is not None:
                found.update(train_seconds=round(found["train_seconds"] + first["seconds"], 1), first_stage_seconds=first["seconds"])
            return found
    return {"train_seconds": None}


def _shown(value: Optional[float], metric: str) -> str:
    """A headline in percent (MRR as is), n/a when missing."""
    return "n/a" if value is None else (f"{value:.3f}" if metric == "MRR" else f"{100 * value:.1f}")


def _verdict(at_or_above: Optional[bool]) -> str:
    """The "≥ baseline" cell: yes, **no**, or n/a when no baseline was measured."""
    return {True: "yes", False: "**no**", None: "n/a"}[at_or_above]


def results_table(results: Dict[str, object]) -> str:
    """Markdown table of :func:`release_results`: ours (with the scores its row shows beside the
    headline), the strongest baseline, the paper (percent; MRR as is), and the run it came from."""

    rows = []
    for c in results["components"]:
        baseline = c["baseline"] or {"name": "none measured", "value": None}
        paper = c["paper"] or {"name": "n/a", "value": None}
        verdict = _verdict(c["at_or_above_baseline"])
        minutes = "n/a" if c.get("train_seconds") is None else f"{c['train_seconds'] / 60:.1f}"
        if c.get("trained_with") and c.get("train_seconds") is not None:
            minutes += " (one training with " + ", ".join(f"`{other}`" for other in c["trained_with"]) + ")"
        if c.get("first_stage_seconds") is not None:
            minutes += f" (first stage {c['first_stage_seconds'] / 60:.1f})"
        choice = c.get("reranker_choice") or {}
        if choice.get("chosen") == "untrained start":
            minutes += (f" (ships untrained: training's dev gain {choice['trained_minus_start_mrr']:+.3f} MRR over "
                        f"{choice['questions']} questions, p {choice['p_not_better']:.2f})")
        row = RELEASE_ROWS.get(c["component"])
        beside = [(key, dict(row.metrics)[key]) for key in row.beside if key in c.get("scores", {})] if row else []
        ours = _shown(c["ours"], c["metric"]) + "".join(f"; {title} {_shown(c['scores'][key], c['metric'])}" for key, title in beside)
        rows.append([f"`{c['component']}`", c["test_set"], c["metric"], ours,
                     f"{_shown(baseline['value'], c['metric'])} ({baseline['name']})", verdict,
                     f"{_shown(paper['value'], c['metric'])} ({paper['name']})", minutes])
    header = ["component", "test set", "metric", "ours", "strongest baseline, same run", "≥ baseline", "paper", "training (min)"]
    run = ", ".join(f"{k.replace('_', ' ')} {results[k]}" for k in ("profile", "device", "encoder", "sentence_encoder", "seeds")
                    if results.get(k) is not None)
    return (f"Run: {run}.\n\n" if run else "") + markdown_table(header, rows, numeric=False)


def release_rows(metric_paths: Dict[str, Path]) -> List[Dict[str, object]]:
    """One row per component in ``metric_paths`` ({component: evaluation JSON}): its task, test
    set and ``{title: score}``. An unknown component or a missing metric is an error naming it."""
    rows = []
    for component, path in metric_paths.items():
        if component not in RELEASE_ROWS:
            raise KeyError(f"{component!r} is not a release component; expected one of {list(RELEASE_ROWS)}")
        definition = RELEASE_ROWS[component]
        task, test_set, metrics = definition.task, definition.test_set, definition.metrics
        scores = json.loads(Path(path).read_text(encoding="utf8"))
        missing = [key for key, _ in metrics if key not in scores]
        if missing:
            raise KeyError(f"{path} has no {missing} (scores of {component!r}); it has {sorted(scores)}")
        rows.append({"component": component, "task": task, "test_set": test_set,
                     "scores": {key: scores[key] for key, _ in metrics}})
    return rows


def release_table(rows: Sequence[Dict[str, object]]) -> str:
    """Markdown table: component, task, test set, and its scores in percent (MRR as is)."""
    table_rows = []
    for row in rows:
        titles = dict(RELEASE_ROWS[row["component"]].metrics)
        shown = []
        for key, value in row["scores"].items():
            title = titles[key]
            text = "n/a" if value is None else (f"{value:.3f}" if title == "MRR" else f"{100 * value:.2f}")
            shown.append(f"{title} {text}")
        table_rows.append([f"`{row['component']}`", row["task"], row["test_set"], ", ".join(shown)])
    return markdown_table(["component", "task", "test set", "scores"], table_rows, numeric=False)


def one_encoder_table(per_task: Path, one_encoder: Path, speed: Optional[Path] = None,
                      labels: Tuple[str, str] = ("an encoder per task", "one encoder")) -> str:
    """Markdown: what one shared encoder costs. Per component of the ``one_encoder`` run's results
    (the root's release, or workflow one-encoder's), its headline with an encoder per task
    (``per_task``: projects/one-encoder's results/per_task.json, the same run), on the one encoder,
    the change in points, the strongest baseline (the per-task release's, so named, where the
    one-encoder run measured none) and whether the one-encoder score is at or above it. With
    ``speed`` (benchmarks/results/release_encoders.json), each release's words/s, its ratio to one
    raw forward of its encoder and the encoder passes per token. ``labels`` name the two score
    columns (any two results of the same components: float32 and float16 weights, ...). A
    component ``per_task`` lacks (the release's entity types that never had a pipeline of their
    own) shows – there and no change, and a note under the table names it."""
    results = {name: json.loads(Path(path).read_text(encoding="utf8")) for name, path in
               [("per task", per_task), ("one", one_encoder)]}
    before = {c["component"]: c for c in results["per task"]["components"]}
    rows, borrowed, absent = [], False, []
    for c in results["one"]["components"]:
        old, metric = before.get(c["component"]), c["metric"]
        if old is None:
            absent.append(c["component"])
            old = {"ours": None}
        change = None if old["ours"] is None or c["ours"] is None else c["ours"] - old["ours"]
        change_text = "n/a" if change is None else (f"{change:+.3f}" if metric == "MRR" else f"{100 * change:+.1f}")
        baseline, at_or_above = c["baseline"], c["at_or_above_baseline"]
        if baseline is None and old.get("baseline"):  # run apart from the per-task release: its baseline, so named
            baseline = {"name": f"{old['baseline']['name']}, the per-task release's run", "value": old["baseline"]["value"]}
            at_or_above = None if c["ours"] is None else c["ours"] >= baseline["value"]
            borrowed = True
        baseline = baseline or {"name": "none measured", "value": None}
        verdict = _verdict(at_or_above)
        before_cell = "–" if c["component"] in absent else _shown(old["ours"], metric)
        rows.append([f"`{c['component']}`", c["test_set"], metric, before_cell, _shown(c["ours"], metric), change_text,
                     f"{_shown(baseline['value'], metric)} ({baseline['name']})", verdict])
    header = ["component", "test set", "metric", *labels, "change",
              "strongest baseline" if borrowed else "strongest baseline, same run", f"{labels[1]} ≥ baseline"]
    run = results["one"]
    text = (f"Run: profile {run.get('profile')}, device {run.get('device')}, encoder {run.get('encoder')}.\n\n"
            + markdown_table(header, rows, numeric=False))
    if absent:
        text += f"\n– {labels[0]} has no {', '.join(f'`{name}`' for name in absent)}.\n"
    if speed is not None:
        bench = json.loads(Path(speed).read_text(encoding="utf8"))
        speed_rows = [[name, f"{p['words_per_second']:.0f}", f"{p['raw_forward_words_per_second']:.0f}",
                       f"{p['pipeline_over_raw_forward']:.2f}", str(len(p["encoders"])), f"{p['encoder_passes_per_token']:.2f}"]
                      for name, p in bench["pipelines"].items()]
        threads = bench["torch_threads"]
        text += (f"\nCPU inference, default-on components ({threads} thread{'' if threads == 1 else 's'}, {bench['machine']['cpu']}; "
                 f"`{bench['command']}`; target ≥ {bench['target_pipeline_over_raw_forward']} of the raw forward):\n\n"
                 + markdown_table(["release", "words/s", "raw forward of its encoder, words/s", "ratio", "encoders",
                                   "encoder passes per token"], speed_rows))
    return text


def seeds_comparison(per_task: Sequence[Path], multi_task: Sequence[Path],
                     tolerance: float = 0.005) -> Tuple[Dict[str, object], str]:
    """The one-encoder target over seeds: each component's headline with an encoder per task
    (``per_task``: results/per_task.json of projects/one-encoder, one file per seed) and on the one
    multi-task encoder (``multi_task``: release results of the multi-task pipeline, one per seed),
    as mean (std) over the files given, whether the multi-task mean is at most ``tolerance`` (0.5
    points) below the per-task mean, and whether every multi-task seed is at or above the strongest
    baseline of its run. Returns the summary (for JSON) and its Markdown table. A component the
    multi-task results have and a per-task file lacks is an error naming the file."""
    from .seed_summaries import format_mean_std, summarise

    def mean_cell(stats: Dict[str, object], scale: float, digits: int) -> str:
        # One seed has no spread to show.
        if stats["n"] > 1:
            return format_mean_std(stats["mean"], stats["std"], scale, digits)
        return f"{stats['mean'] * scale:.{digits}f}"

    runs = {side: [(Path(p), json.loads(Path(p).read_text(encoding="utf8"))) for p in paths]
            for side, paths in (("per_task", per_task), ("multi_task", multi_task))}
    if not runs["per_task"] or not runs["multi_task"]:
        raise ValueError("give at least one per-task and one multi-task results file")
    for path, result in runs["per_task"] + runs["multi_task"]:
        if "components" not in result:
            raise ValueError(f"{path}: no 'components': not a release results file (evaluate release-meta --results)")

    def headlines(side: str, component: str) -> List[Tuple[Path, Dict[str, object]]]:
        found = []
        for path, result in runs[side]:
            rows = {c["component"]: c for c in result["components"]}
            if component not in rows:
                raise KeyError(f"{path} has no {component!r}: every results file must score the same components")
            found.append((path, rows[component]))
        return found

    components, table = [], []
    for first in runs["multi_task"][0][1]["components"]:
        name, metric = first["component"], first["metric"]
        sides = {side: headlines(side, name) for side in runs}
        summary = {side: {**summarise([{"ours": row["ours"]} for _, row in found], ["ours"])["ours"],
                          "seeds": [result.get("seed") for _, result in runs[side]]}
                   for side, found in sides.items()}
        # typed_ner rows score doc.spans["entities"]; doc.ents, which drops overlapped entities, beside.
        in_doc_ents = [row["doc_ents"]["ents_f"] for _, row in sides["multi_task"] if "doc_ents" in row]
        if in_doc_ents and len(in_doc_ents) == len(sides["multi_task"]):
            summary["multi_task"]["doc_ents"] = summarise([{"ents_f": f} for f in in_doc_ents], ["ents_f"])["ents_f"]
        change = summary["multi_task"]["mean"] - summary["per_task"]["mean"]
        baselines = [row["baseline"] for _, row in sides["multi_task"] if row.get("baseline")]
        above = [row["at_or_above_baseline"] for _, row in sides["multi_task"] if row.get("baseline")]
        components.append({"component": name, "test_set": first["test_set"], "metric": metric, **summary,
                           "change": change, "within_target": change >= -tolerance,
                           "baseline": baselines[0] if baselines else None,
                           "every_seed_at_or_above_baseline": all(above) if above else None})
        scale, digits = (1.0, 3) if metric == "MRR" else (100.0, 1)
        shown = {side: f"{mean_cell(s, scale, digits)}, n={s['n']}" for side, s in summary.items()}
        table.append([f"`{name}`", first["test_set"], metric, shown["per_task"], shown["multi_task"],
                      f"{change * scale:+.{digits}f}", "yes" if change >= -tolerance else "**no**",
                      "n/a" if not baselines else f"{_shown(baselines[0]['value'], metric)} ({baselines[0]['name']})",
                      _verdict(all(above) if above else None)])
    header = ["component", "test set", "metric", "an encoder per task, mean (std)", "one encoder, mean (std)",
              "change", f"≥ per task − {tolerance * 100:g}", "strongest baseline", "every seed ≥ baseline"]
    files = {side: [str(path) for path, _ in found] for side, found in runs.items()}
    in_doc_ents = [f"`{c['component']}` {mean_cell(c['multi_task']['doc_ents'], 100.0, 1)}"
                   for c in components if "doc_ents" in c["multi_task"]]
    text = ("Mean (sample std) over the runs listed in the JSON beside this table; n = the number of seeds.\n\n"
            + markdown_table(header, table, numeric=False).rstrip("\n")
            + ("\n\nOne encoder's entities are scored from `doc.spans[\"entities\"]`; in `doc.ents`, which leaves out "
               "an entity that overlaps one found before it, F1 is " + ", ".join(in_doc_ents) + "." if in_doc_ents else ""))
    return {"target_points_below": tolerance * 100, "files": files, "components": components}, text


def dev_scores_table(models: Dict[str, Path]) -> Tuple[Dict[str, object], str]:
    """The dev scores each trained pipeline (``{row name: model-best directory}``) recorded when
    spaCy chose it: the weighted score of its config's ``[training.score_weights]`` (what picked
    ``model-best``), each score with a weight, and each entity type's F1. Where two training
    recipes differ, the one to keep is the one that wins here, not on test. Returns the scores (for
    JSON) and a Markdown table in percent; a directory without meta.json or config.cfg is named."""
    from spacy.util import load_config

    rows, columns = {}, []
    for name, model in models.items():
        meta_path, config_path = Path(model) / "meta.json", Path(model) / "config.cfg"
        for path in (meta_path, config_path):
            if not path.is_file():
                raise FileNotFoundError(f"{path} is missing: {name}'s directory is not a trained spaCy pipeline")
        performance = json.loads(meta_path.read_text(encoding="utf8")).get("performance", {})
        weights = {key: weight for key, weight in load_config(config_path)["training"]["score_weights"].items() if weight}
        scores = {"weighted": sum(weight * (performance.get(key) or 0.0) for key, weight in weights.items())}
        scores.update({key: performance.get(key) for key in weights})
        scores.update({f"{label} F1": values["f"] for label, values in (performance.get("ents_per_type") or {}).items()})
        rows[name] = scores
        columns += [key for key in scores if key not in columns]
    table = [[name] + ["n/a" if scores.get(key) is None else f"{100 * scores[key]:.1f}" for key in columns]
             for name, scores in rows.items()]
    header = ["pipeline", *(("weighted dev score (model-best's)" if key == "weighted" else key) for key in columns)]
    return {"models": {name: str(path) for name, path in models.items()}, "dev": rows}, markdown_table(header, table)
