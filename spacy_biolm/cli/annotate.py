"""``spacy-biolm annotate``: run a pipeline over a corpus into JSONL shards, on one machine or on Ray."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import gpu_option, user_errors

__all__ = ["annotate_cli"]


def annotate_cli(
    paths: List[Path] = typer.Argument(..., metavar="INPUT... OUTPUT", help="Input shards or folders (*.jsonl, *.txt, PubMed *.xml.gz), then the output folder"),
    model: str = typer.Option("en_bio_electra", "--model", "-m", help="Pipeline package name or folder"),
    batch_size: int = typer.Option(64, "--batch-size", "-b", help="Documents per nlp.pipe batch"),
    n_process: int = typer.Option(1, "--n-process", "-n", help="Processes on this machine, one torch thread each (whole shards each when there are several)"),
    threads: int = typer.Option(0, "--threads", help="Torch threads of a single process (0: torch's default)"),
    int8: bool = typer.Option(False, "--int8", help="Quantise the encoders' Linear layers to int8 at load (CPU; faster, see the README for its accuracy)"),
    gpu_id: int = gpu_option(),
    docbin: bool = typer.Option(False, "--docbin", help="Also write each shard's Docs as a DocBin (.spacy)"),
    ray: bool = typer.Option(False, "--ray", help="Run on Ray: actors that each hold the pipeline (spacy-biolm[ray])"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster to join ('auto', 'ray://head:10001'); implies --ray; default a local runtime"),
    workers: int = typer.Option(2, "--workers", "-w", help="Ray actors (one pipeline each)"),
    gpus_per_worker: float = typer.Option(0, "--gpus-per-worker", help="GPUs per Ray actor"),
    min_free_mb: float = typer.Option(64, "--min-free-mb", help="Fail before any work when the output disk has less free space (MiB)"),
    summary_path: Optional[Path] = typer.Option(None, "--summary", help="Write the run's summary as JSON"),
):
    """Annotate documents with a pipeline: one JSONL output shard (entities, relations, sentences by
    character offsets) per input shard, written atomically, so a rerun of a killed run skips the
    finished shards and loses nothing. Unreadable records go to `<shard>.rejects.jsonl` with their
    file and line.

    Example: `spacy-biolm annotate baseline/ annotations/ --model en_bio_electra --n-process 2`
    """
    if len(paths) < 2:
        raise typer.BadParameter("give at least one input and the output folder: INPUT... OUTPUT")
    *inputs, output = paths
    with user_errors(ValueError, FileNotFoundError, OSError, ImportError):
        if ray or ray_address:
            from ..annotate.ray_runner import annotate_on_ray

            summary = annotate_on_ray(inputs, output, model, workers=workers, ray_address=ray_address,
                                      batch_size=batch_size, gpus_per_worker=gpus_per_worker, int8=int8, docbin=docbin,
                                      min_free_mb=min_free_mb)
        else:
            from ..annotate import annotate

            summary = annotate(inputs, output, model, n_process=n_process, batch_size=batch_size, gpu_id=gpu_id,
                               threads=threads, int8=int8, docbin=docbin, min_free_mb=min_free_mb)
    if summary_path:
        summary_path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf8")
    msg.good(f"{summary['documents']} documents in {summary['shards_written']} shards "
             f"({summary['docs_per_second']} docs/s), {summary['shards_skipped']} shards already done, "
             f"{summary['rejects']} rejects -> {output}")
