"""Pretraining text files on disk: opened streamed (plain or xz-compressed) and identified.

Corpora ship compressed (``biomed_text/*.txt.xz``, one sentence per line, a blank line between
documents). They are read through :func:`open_text`, which decompresses while reading: a 40 MB
``.xz`` file is never held whole in memory. :func:`describe_sources` records which files a
packed corpus or a run was built from (name, size, SHA-1), so the licence of every byte that went
into an encoder can be traced later, and a changed file is never mistaken for the one packed.

Files whose name marks a restricted licence (``*restricted*``, e.g.
``evidence_inference_restricted.txt.xz``: non-commercial, no-derivatives or unstated licences) are
refused unless the run opts in explicitly (``[corpus] allow_restricted_licences = true``).
"""

import hashlib
import lzma
from pathlib import Path
from typing import IO, Dict, List, Sequence, Union

from ..errors import PretrainingDataError

__all__ = ["open_text", "describe_sources", "check_licence_opt_in", "RESTRICTED_MARK"]

# Marks a source file whose text must not go into a model without an explicit opt-in.
RESTRICTED_MARK = "restricted"


def open_text(path: Union[str, Path]) -> IO[str]:
    """Open a UTF-8 text file for streamed reading; ``.xz`` files are decompressed on the fly."""
    path = Path(path)
    if not path.is_file():
        raise PretrainingDataError(f"Pretraining text not found: {path}")
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf8")
    return path.open(encoding="utf8")


def describe_sources(paths: Sequence[Union[str, Path]]) -> List[Dict[str, object]]:
    """``[{"name", "path", "bytes", "sha1"}]`` per file, as stored on disk (compressed if so)."""
    described = []
    for path in map(Path, paths):
        digest = hashlib.sha1()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        described.append(
            {"name": path.name, "path": str(path), "bytes": path.stat().st_size, "sha1": digest.hexdigest()}
        )
    return described


def check_licence_opt_in(paths: Sequence[Union[str, Path]], allow_restricted: bool) -> None:
    """Refuse restricted-licence files (see the module docstring) unless ``allow_restricted``."""
    if allow_restricted:
        return
    restricted = [str(p) for p in paths if RESTRICTED_MARK in Path(p).name.lower()]
    if restricted:
        raise PretrainingDataError(
            f"{', '.join(restricted)}: text under restricted licences (non-commercial, no-derivatives or "
            "unstated); set [corpus] allow_restricted_licences = true to pretrain on it explicitly"
        )
