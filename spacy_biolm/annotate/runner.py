"""Annotate a corpus on one machine: each input shard through ``nlp.pipe`` into its output shard.

With ``n_process`` > 1 and several shards to do, the shards are shared out to worker processes
forked from this one after the pipeline is loaded (its weights shared copy-on-write, one torch
thread each): a worker annotates whole shards and writes them itself, so no Doc crosses a process
boundary. spaCy's own ``nlp.pipe(n_process=...)`` sends every Doc back to the parent pickled, the
transformer's output with it, and the parent's unpickling then competes with the workers for the
cores; it is used only for a single shard (and on platforms without fork, or on a GPU). Every
shard gets the same ``nlp.pipe`` batches whichever way it runs, and a Ray worker uses the same
(:mod:`.ray_runner`), so all runners write the same files.
"""

import multiprocessing
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Tuple, Union

from ..loading import load_pipeline
from .readers import Record, find_input_shards, read_shard
from .shards import DEFAULT_MIN_FREE_MB, OutputShard, ShardWriter, plan_output_shards, prepare_output_dir

__all__ = ["annotate", "annotate_shard", "plan_annotation", "progress_bar"]


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
             batch_size: int = 64, gpu_id: int = -1, threads: int = 0, int8: bool = False, docbin: bool = False,
             min_free_mb: float = DEFAULT_MIN_FREE_MB, show_progress: bool = True,
             on_shard: Optional[Callable[[dict], None]] = None) -> dict:
    """Annotate every input shard not finished yet into ``output_dir``; returns a summary.

    model: a pipeline package name, a pipeline folder or a loaded ``Language`` (``threads``: its
    torch threads in this process, 0 for torch's default; ``int8``: its encoders quantised at
    load, see :mod:`spacy_biolm.loading`). ``n_process`` > 1: that many worker processes, one
    torch thread each (the module docstring says how). ``on_shard`` is called with each finished
    shard's counts (a log line, a test's hook).
    """
    if n_process < 1 or batch_size < 1:
        raise ValueError(f"--n-process and --batch-size must be >= 1, got {n_process} and {batch_size}")
    todo, finished = plan_annotation(inputs, output_dir, min_free_mb)
    started = time.perf_counter()
    written = []
    if todo:
        nlp = model if hasattr(model, "pipe") else load_pipeline(model, gpu_id, threads=threads, int8=int8)
        with progress_bar(disable=not show_progress) as bar:
            forked = n_process > 1 and len(todo) > 1 and gpu_id < 0 and "fork" in multiprocessing.get_all_start_methods()
            if forked:
                done = _annotate_in_forked_workers(nlp, todo, batch_size, n_process, docbin)
            else:
                done = (annotate_shard(nlp, shard, batch_size, n_process, docbin, progress=bar) for shard in todo)
            for counts in done:
                written.append(counts)
                if forked:  # a worker cannot move this process's bar: it moves a shard at a time
                    bar.update(counts["documents"])
                if on_shard is not None:
                    on_shard(counts)
    written.sort(key=lambda counts: counts["input"])
    return summarise(written, finished, time.perf_counter() - started)


_FORKED_PIPELINE = None  # the pipeline a forked worker inherits from the process that forked it


def _annotate_in_worker(shard: OutputShard, batch_size: int, docbin: bool) -> dict:
    return annotate_shard(_FORKED_PIPELINE, shard, batch_size, docbin=docbin)


def _annotate_in_forked_workers(nlp, todo: List[OutputShard], batch_size: int, workers: int,
                                docbin: bool) -> Iterator[dict]:
    """Each shard's counts as its worker finishes it; ``workers`` processes forked from this one
    (after ``nlp`` is loaded: its weights are shared, not copied), one torch thread each. A worker's
    error is raised here once the shards already running are finished (each is written whole or not
    at all)."""
    global _FORKED_PIPELINE
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from ..encoders.forking import single_threaded_torch_after_fork

    single_threaded_torch_after_fork()
    _FORKED_PIPELINE = nlp
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(todo)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_annotate_in_worker, shard, batch_size, docbin) for shard in todo]
            try:
                for future in as_completed(futures):
                    yield future.result()
            except BaseException:
                for future in futures:  # the shards not started yet are left for a rerun
                    future.cancel()
                raise
    finally:
        _FORKED_PIPELINE = None


def summarise(written: List[dict], finished: List[OutputShard], seconds: float) -> dict:
    """What a run did: shards written and skipped, documents, rejects, documents per second."""
    documents = sum(c["documents"] for c in written)
    return {"shards_written": len(written), "shards_skipped": len(finished), "documents": documents,
            "rejects": sum(c["rejects"] for c in written), "seconds": round(seconds, 3),
            "docs_per_second": round(documents / seconds, 1) if seconds > 0 and documents else 0.0,
            "shards": written}
