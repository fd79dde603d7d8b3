"""``spacy-biolm profile``: run the project with a named budget (configs/profiles/<name>.yml)."""

import os
from pathlib import Path

import typer
from wasabi import msg

from ._common import PASS_OVERRIDES, sub_app, user_errors

__all__ = ["app"]

app = sub_app("Run profiles: `default` (project.yml's budgets, 2 CPU cores) and those in configs/profiles/ (`full`: the papers' epochs).")


@app.command("show")
def show_cli(
    name: str = typer.Argument(..., help="Profile name: default, or a file stem in configs/profiles/"),
    project_dir: Path = typer.Option(Path("."), "--project", help="Project directory (with project.yml)"),
):
    """Print every variable whose value the profile changes, beside the default."""
    from ..profiles import load_profile
    from ..project_steps import load_project

    with user_errors():
        overrides = load_profile(name, project_dir)
        defaults = load_project(project_dir).get("vars", {})
    changed = {key: value for key, value in overrides.items() if str(value) != str(defaults.get(key))}
    if not changed:
        msg.info(f"Profile {name!r} is project.yml's own variables")
    for key, value in changed.items():
        print(f"{key}: {defaults.get(key)} -> {value}")


@app.command("run", context_settings=PASS_OVERRIDES)
def run_cli(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Profile name: default, or a file stem in configs/profiles/"),
    workflow: str = typer.Argument("all", help="The project.yml workflow or command to run"),
    project_dir: Path = typer.Option(Path("."), "--project", help="Project directory (with project.yml)"),
):
    """`spacy project run WORKFLOW` with the profile's variables, step by step, the steps named in the
    project variable `beside` beside the others (spacy_biolm/workflow.py); further `--vars.KEY VALUE`
    options (e.g. `--vars.gpu_id 0`) pass through and win."""
    from ..profiles import profile_args
    from ..run_record import PROFILE_ENV
    from ..workflow import run_workflow

    with user_errors():
        args = profile_args(name, project_dir, ctx.args)
    msg.info(f"spacy project run {workflow} {project_dir} {' '.join(args)}")
    # Every result file the run writes records the profile (spacy_biolm/run_record.py).
    os.environ[PROFILE_ENV] = name
    raise typer.Exit(run_workflow(workflow, project_dir, args))
