"""``spacy-biolm timed NAME -- COMMAND``: run a command and record its wall time and peak memory."""

from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

__all__ = ["timed_cli"]


def timed_cli(
    ctx: typer.Context,
    name: str = typer.Argument(..., help='What the record calls the run: a component ("ner") or "make all"'),
    results: Path = typer.Option(Path("metrics/train_times.json"), "--results", help="JSON the measurement is added to (the release's training times by default)"),
    readme: Optional[Path] = typer.Option(None, "--readme", help="Also rewrite this Markdown file's runtimes line (make all / make test)"),
):
    """Run the command after `--`, record its wall time and peak memory under NAME in --results
    (and README's runtimes line with --readme); exit with the command's status."""
    from ..runtimes import run_timed

    if not ctx.args:
        msg.fail("Give the command to time after --, e.g. `spacy-biolm timed ner -- python -m spacy train configs/ner.cfg`", exits=1)
    raise typer.Exit(run_timed(name, ctx.args, results, readme))
