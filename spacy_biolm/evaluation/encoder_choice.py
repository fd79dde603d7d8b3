"""Which encoder ships, decided from an encoder ablation's results, and its table.

The ablation (:mod:`spacy_biolm.experiments.encoders`) fine-tunes each candidate encoder with the
project's own task configs and budgets, once per seed, and writes ``encoders.json``. The encoder to
ship is the one with the best mean **dev** score over the tasks (the test sets only report) unless
a ``reference`` is named (the published checkpoint that needs no pretraining): then a candidate
replaces it only when its lead in mean dev score is larger than the seed standard deviation of that
score (each seed's mean over the tasks), the rule for replacing a released encoder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, Optional

from .seed_summaries import format_mean_std, summarise
from .tables import markdown_table

__all__ = ["mean_dev", "choose_encoder", "ablation_table", "readme_encoders", "ENCODERS_START", "ENCODERS_END"]


def mean_dev(record: Dict[str, object]) -> Optional[Dict[str, object]]:
    """:func:`~spacy_biolm.evaluation.seed_summaries.summarise` of each seed's dev score averaged over the
    tasks of one encoder's ``record`` (None unless every task has a dev score for every seed)."""
    per_task = [task["dev"]["values"] for task in record["tasks"].values() if task.get("dev")]
    if not per_task or len(per_task) != len(record["tasks"]) or len({len(v) for v in per_task}) != 1:
        return None
    return summarise([{"dev": sum(scores) / len(scores)} for scores in zip(*per_task)], ["dev"])["dev"]


def choose_encoder(results: Dict[str, object], reference: Optional[str] = None) -> Optional[str]:
    """The encoder with the best dev score averaged over the tasks (None without dev scores). With a
    ``reference`` encoder, the best replaces it only when its lead is larger than the standard
    deviation over seeds of the mean dev score, of either encoder."""
    devs = {name: mean_dev(record) for name, record in results["encoders"].items()}
    devs = {name: dev for name, dev in devs.items() if dev}
    if not devs:
        return None
    best = max(devs, key=lambda name: devs[name]["mean"])
    if reference is None or reference not in devs or best == reference:
        return best
    spread = max(devs[best]["std"], devs[reference]["std"])
    return best if devs[best]["mean"] - devs[reference]["mean"] > spread else reference


def ablation_table(results: Dict[str, object]) -> str:
    """Markdown: one row per encoder; held-out losses, test mean (std) per task, mean dev (std over
    seeds of each seed's mean), times."""
    tasks = results["tasks"]
    header = ["encoder", "held-out RTD / MLM loss", *(f"{t['title']} (test)" for t in tasks.values()), "mean dev (seed std)",
              "pretraining s", "fine-tuning s"]
    rows = []
    for name, record in results["encoders"].items():
        heldout = record["pretraining"].get("heldout", {})
        # ELECTRA logs the discriminator's RTD loss and its generator's masked-LM loss; ALBERT its MLM loss.
        rtd, mlm = heldout.get("disc_loss"), heldout.get("gen_loss", heldout.get("mlm_loss"))
        losses = " / ".join("n/a" if v is None else f"{v:.3f}" for v in (rtd, mlm))
        # One seed has no spread to show: its score alone.
        cells = [f"{100 * test['mean']:.2f}" if test.get("n") == 1 else format_mean_std(test["mean"], test["std"])
                 for test in (record["tasks"][t]["test"] for t in tasks)]
        # Each seed's mean over the tasks: its spread is what choose_encoder weighs a lead against.
        dev = mean_dev(record)
        dev_cell = format_mean_std(dev["mean"], dev["std"]) if dev else "n/a"
        seconds = record["pretraining"].get("seconds")
        shown = f"**{name}** (chosen)" if name == results.get("chosen") else name
        rows.append([shown, losses, *cells, dev_cell, "n/a" if seconds is None else f"{seconds:,.0f}",
                     f"{sum(record['tasks'][t]['fine_tuning_seconds'] for t in tasks):,.0f}"])
    return markdown_table(header, rows)


ENCODERS_START = "<!-- encoders-table start: generated from results/encoders.json by `spacy-biolm docs encoders-table`; do not edit -->"
ENCODERS_END = "<!-- encoders-table end -->"


def readme_encoders(results_path: Path) -> str:
    """README's ablation block: the seeds and budgets, :func:`ablation_table`, and the encoder
    chosen on dev; or a line saying that no ablation has written ``results_path`` yet."""
    if not Path(results_path).is_file():
        return "No ablation results yet: workflow `encoders-ablation` of projects/encoder-ablation writes `results/encoders.json` there.\n"
    results = json.loads(Path(results_path).read_text(encoding="utf8"))
    budgets = "; ".join(f"{t['title']}: " + (", ".join(f"{k} {v}" for k, v in t["overrides"].items()) or "its config's")
                        for t in results["tasks"].values())
    seeds = results["seeds"]
    chosen, best = results.get("chosen"), results.get("best_on_dev", results.get("chosen"))
    reference = results.get("reference")
    if reference and best != chosen:
        verdict = (f"Best mean dev score: **{best}**, by less than the seed std of that score over "
                   f"**{reference}**, the reference, which stays the choice: **{chosen}**.")
    elif reference and best != reference:
        verdict = f"Best mean dev score: **{best}**, by more than the seed std over the reference {reference}; it is the choice."
    else:
        verdict = f"Best mean dev score: **{best or 'n/a'}**; it is the choice."
    from ..run_record import with_run_comment

    return with_run_comment(f"Seeds {', '.join(map(str, seeds))} ({len(seeds)} per encoder and task), test mean (std) in percent; "
                            f"budgets: {budgets}.\n\n{ablation_table(results)}\n{verdict}\n", results.get("run"))
