"""Pretraining text files on disk: opened streamed (plain or xz-compressed) and identified.

Corpora ship compressed (``biomed_text/*.txt.xz``, one sentence per line, a blank line between
documents). They are read through :func:`open_text`, which decompresses while reading: a 40 MB
``.xz`` file is never held whole in memory. :func:`describe_sources` records which files a
packed corpus or a run was built from (name, size, SHA-1 and, where a ``documents.tsv.xz``
catalogue lies beside the file as in biomed_text, its documents per licence), so the licence of
every byte that went into an encoder can be traced later, and a changed file is never mistaken for
the one packed.

Files whose name marks a restricted licence (``*restricted*``, e.g.
``evidence_inference_restricted.txt.xz``: non-commercial, no-derivatives or unstated licences) are
refused unless the run opts in explicitly (``[corpus] allow_restricted_licences = true``).
"""

import csv
import functools
import hashlib
import lzma
from collections import Counter
from pathlib import Path
from typing import IO, Dict, List, Sequence, Union

from ..errors import PretrainingDataError

__all__ = ["open_text", "describe_sources", "source_licences", "recorded_licences", "check_licence_opt_in", "RESTRICTED_MARK",
           "CATALOGUE"]

# Marks a source file whose text must not go into a model without an explicit opt-in.
RESTRICTED_MARK = "restricted"
# Beside a corpus's text files: one row per document (columns file, ..., licence).
CATALOGUE = "documents.tsv.xz"


def open_text(path: Union[str, Path]) -> IO[str]:
    """Open a UTF-8 text file for streamed reading; ``.xz`` files are decompressed on the fly."""
    path = Path(path)
    if not path.is_file():
        raise PretrainingDataError(f"Pretraining text not found: {path}")
    if path.suffix == ".xz":
        return lzma.open(path, "rt", encoding="utf8")
    return path.open(encoding="utf8")


def describe_sources(paths: Sequence[Union[str, Path]]) -> List[Dict[str, object]]:
    """``[{"name", "path", "bytes", "sha1"}]`` per file, as stored on disk (compressed if so), with
    ``"licences"`` ({licence: documents}) where the directory has a catalogue."""
    described = []
    for path in map(Path, paths):
        record: Dict[str, object] = {"name": path.name, "path": str(path), "bytes": path.stat().st_size,
                                     "sha1": _sha1(path)}
        licences = source_licences(path)
        if licences:
            record["licences"] = licences
        described.append(record)
    return described


def recorded_licences(sources: Sequence[Dict[str, object]], corpus_dir: Union[str, Path, None] = None) -> List[Dict[str, object]]:
    """``[{"name", "sha1", "licences"}]`` of the files a run recorded (:func:`describe_sources`):
    the licences it recorded or, for a run packed where the catalogue was missing, the catalogue's
    for the file now at ``corpus_dir/<name>`` (default: its recorded path), only when that file's
    SHA-1 is the one the run read."""
    described = []
    for source in sources:
        licences = source.get("licences") or {}
        local = Path(corpus_dir) / str(source["name"]) if corpus_dir else Path(str(source.get("path", source["name"])))
        if not licences and local.is_file() and _sha1(local) == source["sha1"]:
            licences = source_licences(local)
        described.append({"name": source["name"], "sha1": source["sha1"], "licences": licences})
    return described


def _sha1(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_licences(path: Union[str, Path]) -> Dict[str, int]:
    """Documents per licence of the text file ``path``, most first, from the catalogue
    (:data:`CATALOGUE`) in its directory; ``{}`` where there is no catalogue."""
    path = Path(path)
    return dict(_catalogue(path.parent.resolve()).get(path.name, Counter()).most_common())


@functools.lru_cache(maxsize=8)
def _catalogue(directory: Path) -> Dict[str, Counter]:
    catalogue = directory / CATALOGUE
    if not catalogue.is_file():
        return {}
    per_file: Dict[str, Counter] = {}
    with open_text(catalogue) as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = {"file", "licence"} - set(reader.fieldnames or ())
        if missing:
            raise PretrainingDataError(f"{catalogue}: header lacks the column(s) {sorted(missing)}")
        for line, row in enumerate(reader, start=2):
            if not row["file"] or not row["licence"]:
                raise PretrainingDataError(f"{catalogue}, line {line}: a document without file or licence")
            per_file.setdefault(row["file"], Counter())[row["licence"]] += 1
    return per_file


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
