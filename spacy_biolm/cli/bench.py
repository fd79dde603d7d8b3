"""``spacy-biolm bench``: run the project's benchmark scripts (benchmarks/*.py of a checkout).

The benchmarks are scripts of the repository, not of the installed package (they compare against
reference implementations and write benchmarks/results/); this finds and runs them with the
interpreter that runs the CLI."""

import subprocess
import sys
from pathlib import Path
from typing import List

import typer
from wasabi import msg

from ._common import PASS_OVERRIDES, sub_app

__all__ = ["app", "benchmark_scripts"]

app = sub_app("Benchmarks: list and run the scripts in benchmarks/ (speed, memory).")

PROJECT_OPTION = typer.Option(Path("."), "--project-dir", help="Checkout with a benchmarks/ folder")


def benchmark_scripts(project_dir: Path) -> List[Path]:
    """The runnable benchmarks of ``project_dir/benchmarks``: scripts with a ``__main__`` block
    (the shared helper modules beside them have none)."""
    folder = Path(project_dir) / "benchmarks"
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} not found: run from a checkout of spacy-biolm or pass --project-dir")
    return sorted(p for p in folder.glob("*.py") if 'if __name__ == "__main__"' in p.read_text(encoding="utf8"))


@app.command("list")
def list_cli(project_dir: Path = PROJECT_OPTION):
    """The benchmarks and what each measures (the first line of its docstring)."""
    import ast

    for script in benchmark_scripts(project_dir):
        doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf8"))) or ""
        print(f"{script.stem:24} {doc.splitlines()[0] if doc else ''}")


@app.command("run", context_settings=PASS_OVERRIDES)
def run_cli(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Benchmark name (see `spacy-biolm bench list`), e.g. inference"),
    project_dir: Path = PROJECT_OPTION,
):
    """Run one benchmark; the options after NAME go to the script (see its --help)."""
    scripts = {script.stem: script for script in benchmark_scripts(project_dir)}
    if name not in scripts:
        raise typer.BadParameter(f"no benchmark {name!r}; expected one of {', '.join(scripts)}")
    result = subprocess.run([sys.executable, str(scripts[name]), *ctx.args], cwd=project_dir)
    if result.returncode != 0:
        msg.fail(f"{name} failed (exit {result.returncode})", exits=result.returncode)
