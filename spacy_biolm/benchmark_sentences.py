"""README's benchmark sentences: what annotating with workers, int8 encoders and the prepared GPU
pretraining run measured, quoted from their result files under ``benchmarks/results/`` between
markers in README.md (``<!-- NAME start ... -->``), rewritten by ``spacy-biolm docs
benchmark-sentences``. README's prose may not type a measured number; these blocks are how it
quotes one."""

import json
from pathlib import Path
from typing import Callable, Dict, List, Optional

from .project_steps import replace_generated

__all__ = ["annotate_sentence", "pretraining_sentence", "update_benchmark_sentences", "SENTENCES", "markers"]

RESULTS = Path("benchmarks/results")


def _load(root: Path, name: str) -> Optional[dict]:
    path = root / RESULTS / name
    return json.loads(path.read_text(encoding="utf8")) if path.is_file() else None


def _commit(result: dict) -> str:
    commit = ((result.get("run") or {}).get("commit") or "")[:7]
    return f", commit {commit}" if commit else ""


def annotate_sentence(root: Path) -> str:
    """``spacy-biolm annotate``'s docs/s with one process, ``--n-process 2`` and Ray
    (annotate.json), and what ``--int8`` buys and costs (int8.json); "" without annotate.json."""
    annotate = _load(root, "annotate.json")
    if annotate is None:
        return ""
    configs, speedup = annotate["configs"], annotate["speedup_over_1_process"]
    load = annotate["machine"]["load_average_at_start"][0]
    text = (f"Measured on the release `make all` builds (`{RESULTS}/annotate.json`{_commit(annotate)}): "
            f"{annotate['input']['documents']:,} PubMed abstracts on {annotate['machine']['cores']} cores, "
            f"{annotate['torch_threads_per_process']} torch thread a process, load average {load:.2f} at the start: "
            f"one process {configs['pipe_1_process']['docs_per_second']:.1f} docs/s, "
            f"`--n-process {configs['pipe_n_process']['n_process']}` {configs['pipe_n_process']['docs_per_second']:.1f} "
            f"({speedup['pipe_n_process']:.2f}x), Ray with {configs['ray_workers']['workers']} workers "
            f"{configs['ray_workers']['docs_per_second']:.1f} ({speedup['ray_workers']:.2f}x); "
            + ("the same output from all three." if annotate["same_output"] else "**their outputs differ**."))
    int8 = _load(root, "int8.json")
    if int8 is not None:
        speed = int8["speed"]
        changes = ", ".join(f"{change:+.2f} {label}" for label, change in int8["f1_change"].items())
        verdict = ("offered" if int8["offered"]
                   else f"not recommended: the rule is an F1 change of at least {int8['max_drop']}")
        text += (f" `--int8` reads {speed['int8_words_per_second'] / speed['float32_words_per_second']:.2f}x the words/s "
                 f"at entity F1 {changes}, {verdict} (`{RESULTS}/int8.json`{_commit(int8)}).")
    return text


def pretraining_sentence(root: Path) -> str:
    """The released encoder's GPU pretraining speed (pretrain_gpu.json) and the prepared GPU run's
    measurement (pretrain_gpu_script_cpu.json, or pretrain_gpu_script.json once a GPU ran it); ""
    without either."""
    released = _load(root, "pretrain_gpu.json")
    parts = []
    if released is not None:
        run = released["runs"][0]
        parts.append(f"The released encoder was continued on {released['hardware'].split(',')[0].replace('one ', 'an ')} at "
                     f"{run['tokens_per_second']:,.0f} WordPieces/s, model FLOPs utilisation "
                     f"{100 * run['model_flops_utilization']:.2f}% (`{RESULTS}/pretrain_gpu.json`).")
    for name in ("pretrain_gpu_script.json", "pretrain_gpu_script_cpu.json"):
        script = _load(root, name)
        if script is None:
            continue
        this_run, baseline = script["this_run"], script["baseline"]
        mfu = this_run.get("model_flops_utilization")
        ran = ("has had no GPU yet (docs/PRETRAINING.md); on " if script["device"] == "cpu" else "measured on ")
        parts.append(f"`benchmarks/pretrain_gpu.py`, the prepared device run, {ran}{script['device_name']}: "
                     f"{this_run['tokens_per_second']:,.1f} WordPieces/s against {baseline['tokens_per_second']:,.1f} for "
                     f"today's loop on the same batches ({script['speedup_vs_baseline']:.2f}x"
                     + (f", model FLOPs utilisation {100 * mfu:.1f}%" if mfu is not None else "")
                     + f"; `{RESULTS}/{name}`{_commit(script)}).")
        break
    return " ".join(parts)


# README block name: the function that writes it from the repository root.
SENTENCES: Dict[str, Callable[[Path], str]] = {"annotate-speed": annotate_sentence,
                                               "pretraining-speed": pretraining_sentence}


def markers(name: str) -> tuple:
    """The start and end lines of README's block ``name``."""
    return (f"<!-- {name} start: generated from {RESULTS}/ by `spacy-biolm docs benchmark-sentences`; do not edit -->",
            f"<!-- {name} end -->")


def update_benchmark_sentences(readme: Path, root: Optional[Path] = None, check: bool = False) -> List[str]:
    """Rewrite each :data:`SENTENCES` block ``readme`` has from the result files under ``root``
    (default: the README's folder); returns the names of the blocks that were stale (with
    ``check`` nothing is written)."""
    readme = Path(readme)
    root = Path(root) if root is not None else readme.parent
    text = original = readme.read_text(encoding="utf8")
    stale = []
    for name, sentence in SENTENCES.items():
        start, end = markers(name)
        if start not in text:
            continue
        updated = replace_generated(text, sentence(root) + "\n", start, end)
        if updated != text:
            stale.append(name)
            text = updated
    if text != original and not check:
        readme.write_text(text, encoding="utf8")
    return stale
