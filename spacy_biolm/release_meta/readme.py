"""README's scores block: the release's results (``results/release.json``) as a table, and what the
release prints on README's example text (:mod:`.sample`), rewritten by ``spacy-biolm docs scores-table``."""

import json
from pathlib import Path

from ..evaluation.release_scores import results_table

__all__ = ["readme_scores", "SCORES_START", "SCORES_END"]

SCORES_START = "<!-- scores-table start: generated from results/release.json by `spacy-biolm docs scores-table`; do not edit -->"
SCORES_END = "<!-- scores-table end -->"


def readme_scores(results_path: Path) -> str:
    """README's score block: :func:`~spacy_biolm.evaluation.release_scores.results_table` of ``results_path``, or a line saying that no
    run has written it yet."""
    if not Path(results_path).is_file():
        return "No release results yet: the `assemble` step of `spacy project run all` writes `results/release.json`.\n"
    from ..run_record import with_run_comment
    from .sample import sample_markdown

    results = json.loads(Path(results_path).read_text(encoding="utf8"))
    table = results_table(results)
    if "wheel" in results:  # written by the package step
        table += f"\nThe pipeline wheel `{results['wheel']['file']}`: {results['wheel']['bytes'] / 1e6:.1f} MB.\n"
    # The last line names the run's commit and date (an HTML comment), when release.json records them.
    return with_run_comment(table + ("\n" + sample_markdown(results["sample"]) if "sample" in results else ""), results.get("run"))
