"""Batchers for `spacy train`."""

import time
from typing import Callable, Iterable, Iterator, List, Optional

from spacy.util import registry

__all__ = ["create_time_budget_batcher"]

Batcher = Callable[[Iterable], Iterator[List]]


@registry.batchers("spacy-biolm.time_budget_batcher.v1")
def create_time_budget_batcher(batcher: Batcher, seconds: float) -> Batcher:
    """Wrap ``batcher`` so training stops once ``seconds`` of wall-clock time have passed since the
    first batch, to compare pipelines at an equal training budget.

    After the deadline every epoch is empty, so pair it with a finite ``[training] max_epochs``
    (empty epochs then pass in milliseconds) and ``max_steps = 0``. The last evaluation before the
    deadline decides model-best, as usual.
    """
    if seconds <= 0:
        raise ValueError(f"time budget must be positive, got {seconds}")
    deadline: Optional[float] = None

    def batch_within_budget(items: Iterable) -> Iterator[List]:
        nonlocal deadline
        if deadline is None:
            deadline = time.monotonic() + seconds
        for batch in batcher(items):
            if time.monotonic() >= deadline:
                return
            yield batch

    return batch_within_budget
