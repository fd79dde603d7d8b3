"""Forked workers run torch single-threaded, so that ``nlp.pipe(texts, n_process=2)`` works.

spaCy's ``n_process`` forks worker processes. Once the parent has run a multi-threaded torch op,
libgomp's (OpenMP's) thread pool exists in the parent only, and the first parallel region in a
forked child waits forever for threads that were not copied: ``nlp.pipe(n_process=2)`` hangs
after any ``nlp.pipe`` with 2 torch threads. Workers set to one torch thread run no parallel region
(and n workers x 1 thread is the right use of n cores anyway); PyTorch's DataLoader does the same
in its workers.
"""

import os

__all__ = ["single_threaded_torch_after_fork"]

_registered = False


def _one_thread() -> None:
    import torch

    torch.set_num_threads(1)


def single_threaded_torch_after_fork() -> None:
    """Register (once per process) a fork hook that sets a forked child to one torch thread."""
    global _registered
    if not _registered:
        os.register_at_fork(after_in_child=_one_thread)
        _registered = True
