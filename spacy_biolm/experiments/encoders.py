"""The encoder ablation: the same fine-tuning recipe on each candidate encoder, several seeds, on
the tasks that decide which encoder ships (the choice and its table:
:mod:`spacy_biolm.evaluation.encoder_choice`).

Each encoder (a name and an HF directory: a pretraining run's ``model/``, a published checkpoint)
is fine-tuned with the project's own task configs and budgets, once per seed, and scored on the
test set; ``model-best`` is chosen on dev as usual, and its dev score is kept too.
When an encoder directory sits in a pretraining run (``<run>/model``), the run's
``pretrain_summary.json`` gives its held-out losses and pretraining time.

Runs are resumable: a (encoder, task, seed) already scored is read back, not trained again, so an
ablation can be spread over several sessions or machines sharing the output folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence

from ..evaluation.encoder_choice import choose_encoder
from .seeds import run_seeds

__all__ = ["AblationTask", "ABLATION_TASKS", "run_encoder_ablation", "pretraining_record", "check_last_update_evaluated"]

RESULTS_FILE = "encoders.json"


@dataclass(frozen=True)
class AblationTask:
    """One fine-tuning task of the ablation: its config, DocBins, metric and reader."""

    title: str
    config: str
    train: str
    dev: str
    test: str
    metric: str
    reader: str  # "ner" (spacy evaluate), "relations" (gold entities) or "qa" (Docs with their question)


ABLATION_TASKS: Dict[str, AblationTask] = {
    "ncbi": AblationTask("NCBI-disease F1", "configs/ner.cfg", "corpus/ner/NCBI-disease/train.spacy",
                         "corpus/ner/NCBI-disease/devel.spacy", "corpus/ner/NCBI-disease/test.spacy", "ents_f", "ner"),
    "bc2gm": AblationTask("BC2GM F1", "configs/ner.cfg", "corpus/ner/BC2GM/train.spacy",
                          "corpus/ner/BC2GM/devel.spacy", "corpus/ner/BC2GM/test.spacy", "ents_f", "ner"),
    "gad": AblationTask("GAD fold 1 F1", "configs/relations_fast.cfg", "corpus/relations/GAD/1/train.spacy",
                        "corpus/relations/GAD/1/dev.spacy", "corpus/relations/GAD/1/test.spacy", "rel_micro_f", "relations"),
    "yes_no": AblationTask("yes/no F1(no)", "configs/yes_no.cfg", "corpus/qa/yesno/train.spacy",
                           "corpus/qa/yesno/dev.spacy", "corpus/qa/yesno/test.spacy", "yes_no_f_no", "qa"),
}


def _scorer(reader: str, use_gpu: int) -> Optional[Callable[[Path, Path], Dict[str, object]]]:
    if reader == "ner":
        return None  # run_seeds' default: spacy evaluate
    if reader == "relations":
        from ..evaluation.relations import evaluate_relations

        return lambda model, data: evaluate_relations(model, data, use_gpu=use_gpu)
    if reader == "qa":
        from ..evaluation.qa import evaluate_qa
        from ..loading import load_pipeline

        return lambda model, data: evaluate_qa(load_pipeline(model, gpu_id=use_gpu), data)
    raise ValueError(f"unknown reader {reader!r}; expected ner, relations or qa")


def pretraining_record(encoder: Path) -> Dict[str, object]:
    """Held-out RTD/MLM loss, steps, tokens and wall time of the pretraining run that wrote
    ``encoder`` (``<run>/model`` beside ``<run>/pretrain_summary.json``, or a released encoder's
    directory with the summary inside); empty when there is none."""
    from ..pretraining.loop import read_summary

    summary = read_summary(Path(encoder))
    if summary is None:
        return {}
    heldout = summary.get("heldout", {})
    return {
        "heldout": {k: v for k, v in heldout.items() if "loss" in k or "acc" in k},
        "steps": summary.get("steps"),
        "tokens_per_second": summary.get("tokens_per_second"),
        "seconds": summary.get("seconds_this_run"),
        "device": summary.get("device"),
        "continued_from": summary.get("continued_from"),
    }


def run_encoder_ablation(
    encoders: Dict[str, Path],
    output_dir: Path,
    tasks: Sequence[str] = tuple(ABLATION_TASKS),
    seeds: Sequence[int] = (0, 1, 2),
    overrides: Optional[Dict[str, Dict[str, object]]] = None,
    project_dir: Path = Path("."),
    use_gpu: int = -1,
    inits: Optional[Dict[str, str]] = None,
    reference: Optional[str] = None,
) -> Dict[str, object]:
    """Fine-tune every encoder of ``encoders`` ({name: HF directory}) on every task of ``tasks``
    (keys of :data:`ABLATION_TASKS`, paths relative to ``project_dir``) once per seed, with
    ``overrides[task]`` (budgets) on top of the task's config, into
    ``output_dir/<encoder>/<task>/seed_<n>``. Writes and returns ``output_dir/encoders.json``: per
    encoder its pretraining record, ``init`` (as ``inits`` names it: a package or a path) and per
    task the test and dev mean (std); the encoder with the best mean dev score (``best_on_dev``)
    and the one to ship (``chosen``, :func:`choose_encoder` with ``reference``)."""
    output_dir, project_dir = Path(output_dir), Path(project_dir)
    unknown = [t for t in tasks if t not in ABLATION_TASKS]
    if unknown:
        raise KeyError(f"unknown ablation tasks {unknown}; expected some of {sorted(ABLATION_TASKS)}")
    missing = [str(p) for p in encoders.values() if not (Path(p) / "config.json").is_file()]
    missing += [str(project_dir / getattr(ABLATION_TASKS[t], split)) for t in tasks for split in ("train", "dev", "test")
                if not (project_dir / getattr(ABLATION_TASKS[t], split)).is_file()]
    if reference is not None and reference not in encoders:
        missing.append(f"the reference encoder {reference!r} (not among {sorted(encoders)})")
    if missing:
        raise FileNotFoundError(f"missing: {', '.join(missing)} (encoders need config.json; convert the corpora first)")
    for task_name in tasks:
        check_last_update_evaluated(project_dir / ABLATION_TASKS[task_name].config, (overrides or {}).get(task_name, {}), task_name)
    results: Dict[str, object] = {"seeds": list(seeds), "tasks": {}, "encoders": {}}
    for task_name in tasks:
        task = ABLATION_TASKS[task_name]
        results["tasks"][task_name] = {"title": task.title, "metric": task.metric, "config": task.config,
                                       "overrides": {k: str(v) for k, v in (overrides or {}).get(task_name, {}).items()}}
    for name, encoder in encoders.items():
        record: Dict[str, object] = {"path": str(encoder), "init": (inits or {}).get(name, str(encoder)),
                                     "pretraining": pretraining_record(Path(encoder)), "tasks": {}}
        for task_name in tasks:
            task = ABLATION_TASKS[task_name]
            task_overrides = {"paths.encoder": str(encoder), "paths.train": str(project_dir / task.train),
                              "paths.dev": str(project_dir / task.dev), **(overrides or {}).get(task_name, {})}
            run = run_seeds(project_dir / task.config, output_dir / name / task_name, project_dir / task.test, seeds,
                            task_overrides, metrics=[task.metric], use_gpu=use_gpu, score=_scorer(task.reader, use_gpu))
            record["tasks"][task_name] = {
                "test": run["summary"][task.metric],
                "dev": run["summary"].get(f"dev_{task.metric}"),
                "fine_tuning_seconds": sum(r.get("train_seconds", 0.0) for r in run["runs"]),
            }
        results["encoders"][name] = record
    results["best_on_dev"] = choose_encoder(results)
    results["reference"] = reference
    results["chosen"] = choose_encoder(results, reference)
    output_dir.mkdir(parents=True, exist_ok=True)
    from ..run_record import stamp_json

    results = stamp_json(results, device="gpu" if use_gpu >= 0 else "cpu")  # this run's commit and date
    (output_dir / RESULTS_FILE).write_text(json.dumps(results, indent=2), encoding="utf8")
    return results


def check_last_update_evaluated(config_path: Path, overrides: Dict[str, object], task: str) -> None:
    """ValueError unless ``[training] eval_frequency`` divides ``max_steps`` (after ``overrides``):
    spaCy evaluates every eval_frequency updates only, so otherwise the last updates are never
    scored and ``model-best`` is an earlier state (with max_steps below eval_frequency, the
    untrained one)."""
    from spacy.util import load_config

    training = load_config(config_path, overrides=dict(overrides), interpolate=False)["training"]
    steps, frequency = int(training["max_steps"]), int(training["eval_frequency"])
    if steps > 0 and steps % frequency:
        raise ValueError(f"{task}: training.eval_frequency {frequency} does not divide training.max_steps {steps}, so "
                         f"its last update would not be evaluated; give {task}:training.eval_frequency=N with N dividing {steps}")
