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
    results: Optional[Path] = typer.Option(None, "--results", help="Also record the pipeline wheel's file name and size in bytes (`wheel`) in this results JSON (results/release.json)"),
):
    """Build the pipeline wheel (`spacy package`, its meta requiring exactly this spacy-biolm
    version) and the spacy-biolm wheel beside it; install both with
    `pip install DIST/spacy_biolm-*.whl PACKAGES/en_NAME-VERSION/dist/*.whl`."""
    from ..wheels import build_release_wheels, record_wheel_size

    with user_errors(ValueError, KeyError, FileNotFoundError, RuntimeError):
        pipeline_wheel, library_wheel = build_release_wheels(pipeline_dir, packages_dir, dist_dir, name, version, meta_path)
        if results is not None:
            record_wheel_size(results, pipeline_wheel)
    msg.good(f"Built {pipeline_wheel} and {library_wheel}")


@app.command("halve")
def halve_cli(
    pipeline_dir: Path = typer.Argument(..., help="A saved pipeline (e.g. training/release)", exists=True),
    output_dir: Path = typer.Argument(..., help="New directory for its copy with float16 encoder weights"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace OUTPUT_DIR if it holds a saved pipeline (an earlier copy)"),
):
    """Copy a pipeline with every encoder's weights stored in float16 (half the bytes); it loads
    and runs in float32 as before, with the weights rounded."""
    from ..encoders.half_precision import halve_pipeline

    with user_errors(FileNotFoundError, FileExistsError, ValueError):
        sizes = halve_pipeline(pipeline_dir, output_dir, overwrite=overwrite)
    for component, (before, after) in sizes.items():
        msg.good(f"{component}: {before:,} -> {after:,} bytes")
    if not sizes:
        msg.warn(f"{pipeline_dir} has no encoder weights to halve")


@app.command("share-encoder")
def share_encoder_cli(
    config_path: Path = typer.Argument(..., help="A task config with a `transformer` and components listening to it (configs/ner.cfg, hoc.cfg, relations_fast.cfg)", exists=True),
    source: Path = typer.Argument(..., help="The trained pipeline whose transformer is shared (e.g. training/ner/model-best)", exists=True),
    output: Path = typer.Argument(..., help="The config to write; `python -m spacy train` trains it"),
    adapter_depth: int = typer.Option(0, "--adapter-depth", help="Residual maxout layers between the frozen encoder and each head (0: none)"),
):
    """Write `config_path` with its transformer sourced from `source`, frozen and annotating: its
    heads train on the shared encoder's vectors, and the release built from such pipelines
    (configs/release_one_encoder.cfg) runs that one encoder once per token."""
    from spacy.util import load_config

    from ..training.shared_encoder import encoder_width, share_encoder

    with user_errors():
        width = encoder_width(source) if adapter_depth else 0
        config = share_encoder(load_config(config_path, interpolate=False), source, adapter_depth, width)
    output.parent.mkdir(parents=True, exist_ok=True)
    config.to_disk(output)
    msg.good(f"Wrote {output}: {config_path.name} on the frozen transformer of {source}")
