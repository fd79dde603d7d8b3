"""README's scores block: the release's results (``results/release.json``) as a table, its wheel's
size and CPU speed (``benchmarks/results/release_encoders.json``), and what the release prints on
README's example text (:mod:`.sample`), rewritten by ``spacy-biolm docs scores-table``."""

import json
from pathlib import Path
from typing import Optional

from ..evaluation.release_scores import results_table

__all__ = ["readme_scores", "speed_sentence", "SCORES_START", "SCORES_END", "SPEED_RESULTS"]

SCORES_START = "<!-- scores-table start: generated from results/release.json by `spacy-biolm docs scores-table`; do not edit -->"
SCORES_END = "<!-- scores-table end -->"
SPEED_RESULTS = Path("benchmarks/results/release_encoders.json")
SPEED_ENTRY = "one multi-task encoder"  # the shipped release's row of benchmarks/release_encoders.py


def speed_sentence(speed_path: Path) -> str:
    """The release's CPU speed as benchmarks/release_encoders.py measured it (its ``one multi-task
    encoder`` row), or "" when no such measurement exists."""
    if not Path(speed_path).is_file():
        return ""
    speed = json.loads(Path(speed_path).read_text(encoding="utf8"))
    entry = speed.get("pipelines", {}).get(SPEED_ENTRY)
    if entry is None:
        return ""
    commit = ((speed.get("run") or {}).get("commit") or "")[:7]  # none outside a git checkout
    threads = speed["torch_threads"]
    return (f"On CPU ({threads} torch thread{'' if threads == 1 else 's'}) its default-on components read "
            f"{entry['words_per_second']:,.0f} words/s, {entry['pipeline_over_raw_forward']:.2f} of one raw forward of its "
            f"encoder, {entry['encoder_passes_per_token']:.2f} encoder passes per token (`{SPEED_RESULTS}`"
            + (f", commit {commit})." if commit else ")."))


def readme_scores(results_path: Path, speed_path: Optional[Path] = None) -> str:
    """README's score block: :func:`~spacy_biolm.evaluation.release_scores.results_table` of
    ``results_path`` with :func:`speed_sentence` of ``speed_path`` (default: the benchmark's
    result in the checkout of ``results/release.json``), or a line saying that no run has written
    it yet."""
    if not Path(results_path).is_file():
        return "No release results yet: the `assemble` step of `spacy project run all` writes `results/release.json`.\n"
    from ..run_record import with_run_comment
    from .sample import sample_markdown

    results = json.loads(Path(results_path).read_text(encoding="utf8"))
    table = results_table(results)
    if "wheel" in results:  # written by the package step
        table += f"\nThe pipeline wheel `{results['wheel']['file']}`: {results['wheel']['bytes'] / 1e6:.1f} MB.\n"
    speed = speed_sentence(speed_path or Path(results_path).resolve().parents[1] / SPEED_RESULTS)
    if speed:
        table += ("" if "wheel" in results else "\n") + speed + "\n"
    # The last line names the run's commit and date (an HTML comment), when release.json records them.
    return with_run_comment(table + ("\n" + sample_markdown(results["sample"]) if "sample" in results else ""), results.get("run"))
