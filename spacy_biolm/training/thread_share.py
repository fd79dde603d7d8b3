"""A training run's torch threads, following the cores the workflow runner leaves it.

`make all` trains the multi-task pipeline beside the other steps (spacy_biolm/workflow.py): while
two steps run, each gets half the cores. Its other lane ends long before it does, and a process
started with one thread would keep one while the second core idles. The runner writes the thread
count a step may use to a file named by :data:`THREAD_SHARE_ENV` in the step's environment; the
``[training] before_update`` callback ``spacy-biolm.follow_thread_share.v1`` reads it between
updates and sets torch's threads. It has to be the training loop's own thread that sets them:
OpenMP keeps the thread count per calling thread.
"""

import os
from pathlib import Path
from typing import Callable, Optional, Union

from spacy.util import registry
from wasabi import msg

__all__ = ["THREAD_SHARE_ENV", "write_thread_share", "read_thread_share", "create_follow_thread_share"]

THREAD_SHARE_ENV = "SPACY_BIOLM_THREAD_SHARE"


def write_thread_share(path: Union[str, Path], threads: int) -> None:
    """Write ``threads`` to ``path`` at once (a reader never sees half a file)."""
    if threads < 1:
        raise ValueError(f"a step needs at least one thread, got {threads}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(f"{threads}\n", encoding="utf8")
    partial.replace(path)


def read_thread_share(path: Union[str, Path]) -> Optional[int]:
    """The thread count written to ``path``; None when there is none (no file, or no positive count)."""
    try:
        threads = int(Path(path).read_text(encoding="utf8").strip())
    except (OSError, ValueError):
        return None
    return threads if threads >= 1 else None


@registry.callbacks("spacy-biolm.follow_thread_share.v1")
def create_follow_thread_share(interval: int = 10) -> Callable[..., None]:
    """A ``[training] before_update`` callback that, every ``interval`` updates, sets torch's
    threads to the count in the file named by the environment variable ``SPACY_BIOLM_THREAD_SHARE``
    (the workflow runner's share of the cores for this step). Without the variable or the file it
    leaves the threads alone, so the config trains as usual outside the runner."""
    if interval < 1:
        raise ValueError(f"spacy-biolm.follow_thread_share.v1: interval must be at least 1, got {interval}")

    def follow_thread_share(nlp, info) -> None:
        share_file = os.environ.get(THREAD_SHARE_ENV)
        if not share_file or info.get("step", 0) % interval:
            return
        import torch

        threads = read_thread_share(share_file)
        if threads is not None and threads != torch.get_num_threads():
            msg.info(f"step {info.get('step', 0)}: {threads} torch thread(s), the cores the workflow leaves this run")
            torch.set_num_threads(threads)

    return follow_thread_share
