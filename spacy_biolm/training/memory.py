"""Keep a long fine-tuning run's resident memory flat on glibc (Linux)."""

import ctypes
from typing import Callable, Optional

from spacy.util import registry

__all__ = ["create_trim_memory", "release_free_memory"]


def _load_malloc_trim() -> Optional[Callable[[int], int]]:
    try:  # the C library this process already has loaded: no search, no subprocess
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to release this way
        return None


_MALLOC_TRIM = _load_malloc_trim()


def release_free_memory() -> bool:
    """Hand the allocator's free pages back to the system; False where malloc_trim is missing."""
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


@registry.callbacks("spacy-biolm.trim_memory.v1")
def create_trim_memory(interval: int = 1) -> Callable[..., None]:
    """A ``[training] before_update`` callback that releases freed memory every ``interval`` updates.

    Why: every batch has other sequence lengths, so torch frees and allocates differently sized
    buffers at each update, and glibc keeps the freed pieces in its arenas instead of returning
    them. benchmarks/finetune_memory.py, BC2GM NER on all-MiniLM-L6-v2, 160 updates, 2 threads:
    without the callback resident memory climbs to 5.3 GiB (past 9 GiB at 400 updates); trimmed
    before every update it stays near 2 GiB (peak 3.3 GiB) for 1.21x the time; every 10 updates
    it still climbs between trims (peak 4.4 GiB). Losses and scores are the same to the last digit:
    the weights and the optimizer state are untouched.
    """
    if interval < 1:
        raise ValueError(f"spacy-biolm.trim_memory.v1: interval must be at least 1, got {interval}")

    def trim_memory(nlp, info) -> None:
        if info.get("step", 0) % interval == 0:
            release_free_memory()

    return trim_memory
