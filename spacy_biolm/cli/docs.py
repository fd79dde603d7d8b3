"""``spacy-biolm docs``: documentation generated from the project, so that it cannot drift."""

from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import sub_app, user_errors

__all__ = ["app"]

app = sub_app("Documentation generated from the project (README's steps, scores and encoders tables, the results it quotes).")


@app.command("steps-table")
def steps_table_cli(
    project_dir: Path = typer.Argument(Path("."), help="Project directory (with project.yml)"),
    readme: Path = typer.Option(Path("README.md"), "--readme", help="Markdown file with the steps-table markers"),
    check: bool = typer.Option(False, "--check", help="Only report whether the table is up to date (exit 1 if not)"),
):
    """Write the table of what `spacy project run all` does (from project.yml's stage workflows)
    between the steps-table markers of README.md."""
    from ..project_steps import load_project, replace_steps_table, steps_table, update_readme

    with user_errors():
        if check:
            text = readme.read_text(encoding="utf8")
            if replace_steps_table(text, steps_table(load_project(project_dir))) != text:
                msg.fail(f"The steps table in {readme} differs from {project_dir / 'project.yml'}: "
                         "run `spacy-biolm docs steps-table`", exits=1)
            msg.good(f"The steps table in {readme} matches project.yml")
            return
        changed = update_readme(readme, project_dir)
    msg.good(f"{'Updated' if changed else 'Already up to date:'} the steps table in {readme}")


@app.command("scores-table")
def scores_table_cli(
    results: Path = typer.Argument(Path("results/release.json"), help="The release's results (written by the assemble step)"),
    readme: Path = typer.Option(Path("README.md"), "--readme", help="Markdown file with the scores-table markers"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the table to this file instead (e.g. another profile's run, for README to include)"),
    speed: Optional[Path] = typer.Option(None, "--speed", help="The release's CPU speed (default: benchmarks/results/release_encoders.json beside RESULTS' folder)"),
):
    """Write the release's scores beside their baselines and the papers (from results/release.json),
    its wheel's size and CPU speed between the scores-table markers of README.md, or into --output."""
    from ..release_meta.readme import SCORES_END, SCORES_START, readme_scores

    _write_block(lambda path: readme_scores(path, speed), results, readme, output, SCORES_START, SCORES_END, "the scores table")


@app.command("encoders-table")
def encoders_table_cli(
    results: Path = typer.Argument(Path("results/encoders.json"), help="The encoder ablation's results (`spacy-biolm evaluate encoders`)"),
    readme: Path = typer.Option(Path("README.md"), "--readme", help="Markdown file with the encoders-table markers"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the block to this file instead (e.g. another ablation, for README to include)"),
):
    """Write the encoder ablation's table (from results/encoders.json) between the encoders-table
    markers of README.md, or into --output."""
    from ..evaluation.encoder_choice import ENCODERS_END, ENCODERS_START, readme_encoders

    _write_block(readme_encoders, results, readme, output, ENCODERS_START, ENCODERS_END, "the encoders table")


def _write_block(block, results: Path, readme: Path, output: Optional[Path], start: str, end: str, what: str) -> None:
    """``block(results)`` between README's ``start``/``end`` markers, or as the whole of ``output``."""
    from ..project_steps import rewrite_generated

    with user_errors():
        if output is None:
            changed = rewrite_generated(readme, block(results), start, end)
        elif not results.is_file():
            raise FileNotFoundError(f"{results} not found: the run that makes it writes it")
        else:
            output.write_text(block(results), encoding="utf8")
    if output is not None:
        msg.good(f"Wrote {what} of {results} to {output}")
    else:
        msg.good(f"{'Updated' if changed else 'Already up to date:'} {what} in {readme}")


@app.command("includes")
def includes_cli(
    readme: Path = typer.Option(Path("README.md"), "--readme", help="Markdown file with include markers"),
    check: bool = typer.Option(False, "--check", help="Only report whether every included file is up to date (exit 1 if not)"),
):
    """Copy the results tables README includes (between `<!-- include PATH start ... -->` and
    `<!-- include PATH end -->`, PATH relative to the README) into it, so they are quoted, never
    retyped."""
    from ..project_steps import update_includes

    with user_errors():
        stale = update_includes(readme, check=check)
    if check and stale:
        msg.fail(f"{readme} quotes stale copies of {', '.join(stale)}: run `spacy-biolm docs includes`", exits=1)
    msg.good(f"{'Updated ' + ', '.join(stale) if stale and not check else 'Every included file is up to date'} in {readme}")


@app.command("entity-corpora-table")
def entity_corpora_table_cli(
    output: Path = typer.Argument(..., help="Markdown file to write"),
    results: List[str] = typer.Argument(..., help="COLUMN=JSON pairs: `evaluate entity-corpora` results, one column each (e.g. 'multi-corpus=metrics/multi_corpus.json')"),
    corpus: List[str] = typer.Option([], "--corpus", help="Only this test set's rows (repeatable; default: every test set a result scored)"),
):
    """Per entity type, every test set's F1 for each pipeline, † where it never learnt the type from
    that corpus, and the type's macro F1 over the test sets all were scored on. The table carries
    the run record of its newest column."""
    from ..evaluation.entities import entity_corpora_table
    from ..evaluation.tables import parse_named_paths
    from ..run_record import read_record, with_run_comment

    with user_errors(ValueError, OSError):
        named = parse_named_paths(results)
        records = [record for record in map(read_record, named.values()) if record]
        newest = max(records, key=lambda record: str(record.get("date", "")), default=None)
        text = with_run_comment(entity_corpora_table(named, corpus), newest)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    msg.good(f"Wrote {output}")


@app.command("one-encoder-table")
def one_encoder_table_cli(
    per_task: Path = typer.Argument(Path("projects/one-encoder/results/per_task.json"), help="Results of the pipelines with an encoder per task (projects/one-encoder, workflow per-task)"),
    one_encoder: Path = typer.Argument(Path("results/release.json"), help="Results of a release on one encoder (the root's, or an experiment's)"),
    speed: Optional[Path] = typer.Option(None, "--speed", help="benchmarks/results/release_encoders.json: both releases' CPU speed"),
    output: Path = typer.Option(Path("projects/one-encoder/results/per_task_comparison.md"), "--output", help="Markdown file to write"),
    labels: str = typer.Option("an encoder per task,one encoder", "--labels", help="The two score columns' names, comma-separated"),
):
    """What one shared encoder costs against an encoder per task: each component's test score in
    both releases beside the same run's baseline, and (with --speed) their words/s against one
    raw forward of their encoder."""
    from ..evaluation.release_scores import one_encoder_table

    with user_errors():
        names = tuple(name.strip() for name in labels.split(","))
        if len(names) != 2 or not all(names):
            raise ValueError(f"--labels expects two names separated by a comma, got {labels!r}")
        text = one_encoder_table(per_task, one_encoder, speed, names)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf8")
    msg.good(f"Wrote {output}")


def _write_table_and_json(output: Path, table: str, data: dict) -> None:
    """A generated Markdown table at ``output`` and its data beside it as JSON, with the run's record."""
    from ..run_record import write_json

    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(table, encoding="utf8")
    write_json(output.with_suffix(".json"), data)
    msg.good(f"Wrote {output} and {output.with_suffix('.json')}")


@app.command("seeds-comparison")
def seeds_comparison_cli(
    output: Path = typer.Argument(..., help="Markdown table to write; its JSON summary goes beside it (.json)"),
    per_task: List[str] = typer.Option(..., "--per-task", help="projects/one-encoder's results/per_task.json of one seed, or a glob of them (repeatable)"),
    multi_task: List[str] = typer.Option(..., "--multi-task", help="The multi-task pipeline's results of one seed, or a glob of them (repeatable)"),
):
    """Issue 43's target over seeds: each default-on component with an encoder per task and on one
    multi-task encoder, mean (std) over the seeds' results files, whether one encoder is within 0.5
    points of the per-task mean and whether every seed is at or above its run's baseline."""
    import glob

    from ..evaluation.release_scores import seeds_comparison

    def expand(patterns: List[str]) -> List[Path]:
        # A glob may match nothing yet (no extra seed run so far); a plain path must exist.
        paths = []
        for pattern in patterns:
            if not glob.has_magic(pattern) and not Path(pattern).is_file():
                raise FileNotFoundError(f"{pattern} does not exist")
            paths.extend(Path(p) for p in sorted(glob.glob(pattern)))
        return paths

    with user_errors():
        summary, text = seeds_comparison(expand(per_task), expand(multi_task))
    _write_table_and_json(output, text, summary)


@app.command("dev-scores")
def dev_scores_cli(
    output: Path = typer.Argument(..., help="Markdown table to write; the scores go beside it as JSON"),
    models: List[str] = typer.Argument(..., help="NAME=DIR: a trained pipeline (model-best) and its row name"),
):
    """The dev scores that chose each pipeline's model-best (its meta.json), the weighted score of
    its config's score_weights first: two recipes are compared here, on dev, before test."""
    from ..evaluation.release_scores import dev_scores_table
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        scores, text = dev_scores_table(parse_named_paths(models))
    _write_table_and_json(output, text, scores)


@app.command("benchmark-sentences")
def benchmark_sentences_cli(
    readme: Path = typer.Option(Path("README.md"), "--readme", help="Markdown file with the benchmark sentences' markers"),
    check: bool = typer.Option(False, "--check", help="Only report whether the sentences are up to date (exit 1 if not)"),
):
    """Write README's sentences that quote benchmarks/results/ (annotation workers and int8, the
    GPU pretraining runs) between their markers, from the result files beside the README."""
    from ..benchmark_sentences import update_benchmark_sentences

    with user_errors():
        stale = update_benchmark_sentences(readme, check=check)
    if check and stale:
        msg.fail(f"{readme}: the sentences {', '.join(stale)} differ from benchmarks/results/: "
                 "run `spacy-biolm docs benchmark-sentences`", exits=1)
    msg.good(f"{'Updated' if stale else 'Already up to date:'} {readme}'s benchmark sentences")


@app.command("results-index")
def results_index_cli(
    root: Path = typer.Argument(Path("."), help="Repository root (results/, benchmarks/results/, projects/*/results/, released/*/)"),
    check: bool = typer.Option(False, "--check", help="Only report whether results/README.md is up to date (exit 1 if not)"),
    backfill: bool = typer.Option(False, "--backfill", help="First write the `git log` record (commit, date) into each JSON result that records no run"),
):
    """Write results/README.md: one row per result file (the logs of a folder share one), with
    what it is (its own description, else results/descriptions.yml), the commit and date of its
    run, profile, device, and whether it is current, an experiment's or superseded."""
    from ..results_index import INDEX_PATH, backfill_records, write_results_index

    with user_errors():
        if backfill and not check:
            written, undated = backfill_records(root)
            msg.info(f"Recorded the git-log run in {len(written)} JSON result(s)" + (f": {', '.join(written)}" if written else ""))
            if undated:
                msg.warn(f"git cannot date {len(undated)} JSON result(s) (changed or never committed: commit them, "
                         f"then run again): {', '.join(undated)}")
        stale, unused = write_results_index(root, check=check)
    if unused:
        msg.warn(f"results/descriptions.yml globs that match no result file: {', '.join(unused)}")
    if check and stale:
        msg.fail(f"{root / INDEX_PATH} is stale: run `spacy-biolm docs results-index`", exits=1)
    msg.good(f"{'Wrote' if stale and not check else 'Up to date:'} {root / INDEX_PATH}")
