"""Errors raised on bad input, each naming where the problem is."""

from pathlib import Path
from typing import Optional, Union

__all__ = ["CorpusFormatError", "PretrainingDataError", "CheckpointError", "PipelineDataError"]


class CorpusFormatError(ValueError):
    """A corpus file has a malformed line or record.

    The message starts with ``path:line:`` (or ``path:`` when no line applies) so editors and
    terminals can jump to the place.
    """

    def __init__(self, path: Union[str, Path], line: Optional[int], message: str):
        self.path = str(path)
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class PretrainingDataError(ValueError):
    """The pretraining corpus is missing, empty or unusable."""


class CheckpointError(ValueError):
    """A checkpoint to resume from is missing, truncated or from another model; the message starts
    with its path. Raised before anything of the run is changed (logs, exports)."""

    def __init__(self, path: Union[str, Path], message: str):
        self.path = str(path)
        self.reason = message
        super().__init__(f"{self.path}: {message}")


class PipelineDataError(ValueError):
    """A saved pipeline directory cannot be read (a component's file missing, truncated or
    corrupted); the message starts with the component's directory and names the component."""

    def __init__(self, path: Union[str, Path], message: str):
        self.path = str(path)
        self.reason = message
        super().__init__(f"{self.path}: {message}")
