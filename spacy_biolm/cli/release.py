"""``spacy-biolm release``: the release's wheels (the pipeline and the spacy-biolm library it needs)."""

from pathlib import Path
from typing import Optional

import typer
from wasabi import msg

from ._common import sub_app, user_errors

__all__ = ["app"]

app = sub_app("The release: the pipeline wheel beside the spacy-biolm wheel it requires.")


@app.command("package")
def package_cli(
    pipeline_dir: Path = typer.Argument(..., help="The assembled pipeline (e.g. training/release)", exists=True),
    packages_dir: Path = typer.Argument(..., help="Where `spacy package` writes en_NAME-VERSION/"),
    dist_dir: Path = typer.Argument(Path("dist"), help="Where the spacy-biolm wheel goes"),
    name: str = typer.Option(..., "--name", help="Package name without the language prefix (bio_electra)"),
    version: str = typer.Option(..., "--version", help="Package version"),
    meta_path: Optional[Path] = typer.Option(None, "--meta-path", help="meta.json for the package (default: the pipeline's)"),
):
    """Build the pipeline wheel (`spacy package`, its meta requiring exactly this spacy-biolm
    version) and the spacy-biolm wheel beside it; install both with
    `pip install DIST/spacy_biolm-*.whl PACKAGES/en_NAME-VERSION/dist/*.whl`."""
    from ..wheels import build_release_wheels

    with user_errors(ValueError, KeyError, FileNotFoundError, RuntimeError):
        pipeline_wheel, library_wheel = build_release_wheels(pipeline_dir, packages_dir, dist_dir, name, version, meta_path)
    msg.good(f"Built {pipeline_wheel} and {library_wheel}")
