"""Annotate a corpus on one machine: each input shard through ``nlp.pipe`` into its output shard.

Shards run one after another (a PubMed baseline file is ~30,000 abstracts, so the per-shard start
of ``n_process`` workers is small beside its work), each with the same ``nlp.pipe`` batches a Ray
worker uses for it (:mod:`.ray_runner`), so both runners write the same files.
"""

import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Tuple, Union

from .readers import Record, find_input_shards, read_shard
from .shards import DEFAULT_MIN_FREE_MB, OutputShard, ShardWriter, plan_output_shards, prepare_output_dir

__all__ = ["annotate", "annotate_shard", "load_pipeline", "plan_annotation", "progress_bar"]


def load_pipeline(model: Union[str, Path], gpu_id: int = -1):
    """``spacy.load(model)`` (a package name or a pipeline folder), on GPU ``gpu_id`` when >= 0."""
    import spacy

    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    return spacy.load(model)


def plan_annotation(inputs: Iterable[Union[str, Path]], output_dir: Path,
                    min_free_mb: float = DEFAULT_MIN_FREE_MB) -> Tuple[List[OutputShard], List[OutputShard]]:
    """Check everything that can be checked before any work (inputs exist and have known formats,
    output names do not collide, the output folder is writable and not full) and return the shards
    still to do and those a previous run finished."""
    shards = plan_output_shards(find_input_shards(inputs), Path(output_dir))
    prepare_output_dir(output_dir, min_free_mb)
    return [s for s in shards if not s.done], [s for s in shards if s.done]


def annotate_shard(nlp, shard: OutputShard, batch_size: int = 64, n_process: int = 1, docbin: bool = False,
                   progress=None) -> dict:
    """Annotate one input shard into its output shard (atomically); returns its counts. ``progress``:
    a tqdm bar to advance by one per document."""
    writer = ShardWriter(shard, docbin=docbin)
    try:
        texts = _texts_routing_rejects(read_shard(shard.input), writer)
        for doc, record_id in nlp.pipe(texts, as_tuples=True, batch_size=batch_size, n_process=n_process):
            writer.add(record_id, doc)
            if progress is not None:
                progress.update(1)
        return writer.commit()
    except BaseException:
        writer.abort()
        raise


def _texts_routing_rejects(items, writer: ShardWriter) -> Iterator[Tuple[str, str]]:
    for item in items:
        if isinstance(item, Record):
            yield item.text, item.id
        else:
            writer.reject(item)


def progress_bar(disable: bool = False):
    """The documents/s progress bar both runners show."""
    from tqdm import tqdm

    return tqdm(unit="doc", desc="annotate", disable=disable, smoothing=0.1, dynamic_ncols=True)


def annotate(inputs: Iterable[Union[str, Path]], output_dir: Path, model, *, n_process: int = 1,
             batch_size: int = 64, gpu_id: int = -1, docbin: bool = False,
             min_free_mb: float = DEFAULT_MIN_FREE_MB, show_progress: bool = True,
             on_shard: Optional[Callable[[dict], None]] = None) -> dict:
    """Annotate every input shard not finished yet into ``output_dir``; returns a summary.

    model: a pipeline package name, a pipeline folder or a loaded ``Language``. ``on_shard`` is
    called with each finished shard's counts (a log line, a test's hook).
    """
    if n_process < 1 or batch_size < 1:
        raise ValueError(f"--n-process and --batch-size must be >= 1, got {n_process} and {batch_size}")
    todo, finished = plan_annotation(inputs, output_dir, min_free_mb)
    started = time.perf_counter()
    written = []
    if todo:
        nlp = model if hasattr(model, "pipe") else load_pipeline(model, gpu_id)
        with progress_bar(disable=not show_progress) as bar:
            for shard in todo:
                counts = annotate_shard(nlp, shard, batch_size, n_process, docbin, progress=bar)
                written.append(counts)
                if on_shard is not None:
                    on_shard(counts)
    return summarise(written, finished, time.perf_counter() - started)


def summarise(written: List[dict], finished: List[OutputShard], seconds: float) -> dict:
    """What a run did: shards written and skipped, documents, rejects, documents per second."""
    documents = sum(c["documents"] for c in written)
    return {"shards_written": len(written), "shards_skipped": len(finished), "documents": documents,
            "rejects": sum(c["rejects"] for c in written), "seconds": round(seconds, 3),
            "docs_per_second": round(documents / seconds, 1) if seconds > 0 and documents else 0.0,
            "shards": written}
