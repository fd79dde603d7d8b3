"""Annotate a corpus on a Ray cluster: actors that each hold one loaded pipeline take shards from a queue.

Each actor (:class:`ShardAnnotator`) loads the pipeline once and annotates whole shards with
:func:`.runner.annotate_shard`, the function the single-machine runner uses, so the output files
are the same. The driver plans the run (inputs, output names, a writable output folder, finished
shards skipped) and hands the remaining shards to the actors, one at a time, as they come free.

Faults: an actor whose process dies (a killed worker, a lost node) is restarted by Ray and the
shard it held is retried (``max_restarts`` / ``max_task_retries``). A shard's files are written to
temporary names and renamed into place when complete, so the dead attempt leaves no partial
output, and a retry of a shard that another attempt already finished returns without writing:
no document is lost or written twice.

On a real cluster the model and the output folder must be reachable at the same path from every
node (a shared filesystem; or the model as an installed pipeline package, e.g. ``en_bio_electra``).
Ray is imported only here (``pip install spacy-biolm[ray]``).
"""

import time
from pathlib import Path
from typing import Iterable, Optional, Union

from ..loading import load_pipeline
from .runner import annotate_shard, plan_annotation, progress_bar, summarise
from .shards import DEFAULT_MIN_FREE_MB, OutputShard

__all__ = ["ShardAnnotator", "annotate_on_ray"]

# What every Ray worker process needs in its environment: no model hub, no tokenizer thread pools
# (one pipeline per CPU is the parallelism).
WORKER_ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class ShardAnnotator:
    """A Ray actor's state: one loaded pipeline; :meth:`annotate` does one shard."""

    def __init__(self, model: str, batch_size: int = 64, docbin: bool = False, gpu_id: int = -1,
                 threads: int = 1, int8: bool = False):
        self.nlp = load_pipeline(model, gpu_id, threads=threads, int8=int8)
        self.batch_size = batch_size
        self.docbin = docbin

    def annotate(self, shard: OutputShard) -> dict:
        """Annotate ``shard``; a retry of a shard already finished (by a lost attempt that got as
        far as the rename) writes nothing and reports it."""
        if shard.done:
            return {"input": str(shard.input), "output": str(shard.jsonl), "documents": 0, "rejects": 0,
                    "already_done": True}
        return annotate_shard(self.nlp, shard, self.batch_size, docbin=self.docbin)


def _require_ray():
    try:
        import ray
    except ImportError as error:
        raise ImportError("annotating on Ray needs Ray: pip install 'spacy-biolm[ray]'") from error
    return ray


def _model_argument(model: Union[str, Path]) -> str:
    """A local pipeline folder as an absolute path (workers do not share the driver's working
    directory); a package name as it is."""
    path = Path(model)
    return str(path.resolve()) if path.exists() else str(model)


def annotate_on_ray(inputs: Iterable[Union[str, Path]], output_dir: Path, model: Union[str, Path], *,
                    workers: int = 2, ray_address: Optional[str] = None, batch_size: int = 64,
                    gpus_per_worker: float = 0, int8: bool = False, docbin: bool = False, max_retries: int = 3,
                    min_free_mb: float = DEFAULT_MIN_FREE_MB, show_progress: bool = True,
                    annotator_class: type = ShardAnnotator) -> dict:
    """Annotate the unfinished input shards with ``workers`` Ray actors; returns the run's summary
    (as :func:`.runner.annotate`'s).

    ray_address: a running cluster (``"auto"`` or ``"ray://head:10001"``); None starts a local
        runtime with ``workers`` CPUs and stops it afterwards (a running one in this process is reused).
    gpus_per_worker: GPUs each actor asks Ray for (its pipeline runs on GPU 0 of those it is given).
    int8: each actor's pipeline with its encoders quantised at load (:mod:`spacy_biolm.loading`).
    max_retries: restarts of a dead actor and retries of the shard it held.
    annotator_class: the actor's class (tests substitute a subclass that dies once).
    """
    if workers < 1 or batch_size < 1:
        raise ValueError(f"--workers and --batch-size must be >= 1, got {workers} and {batch_size}")
    output_dir = Path(output_dir).resolve()
    todo, finished = plan_annotation(inputs, output_dir, min_free_mb)
    ray = _require_ray()
    started = time.perf_counter()
    if not todo:
        return summarise([], finished, time.perf_counter() - started)
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=ray_address, num_cpus=None if ray_address else workers, include_dashboard=False,
                 runtime_env={"env_vars": WORKER_ENV}, logging_level="warning")
    actor = ray.remote(num_cpus=1, num_gpus=gpus_per_worker, max_restarts=max_retries,
                       max_task_retries=max_retries)(annotator_class)
    gpu_id = 0 if gpus_per_worker else -1
    actors = [actor.remote(_model_argument(model), batch_size, docbin, gpu_id, 1, int8) for _ in range(min(workers, len(todo)))]
    written = []
    try:
        pool = ray.util.ActorPool(actors)
        with progress_bar(disable=not show_progress) as bar:
            for counts in pool.map_unordered(lambda worker, shard: worker.annotate.remote(shard), todo):
                written.append(counts)
                bar.update(counts["documents"])
    finally:
        for handle in actors:
            ray.kill(handle)
        if started_here:
            ray.shutdown()
    written.sort(key=lambda counts: counts["input"])
    return summarise([c for c in written if not c.get("already_done")], finished, time.perf_counter() - started)
