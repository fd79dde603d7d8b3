"""Output shards: one per input shard, written atomically, so a killed run resumes where it stopped.

For an input shard ``pubmed25n0001.xml.gz`` the output folder gets

* ``pubmed25n0001.jsonl``: one record per document, in input order (:mod:`.records`);
* ``pubmed25n0001.rejects.jsonl``: the records that could not be read (file, line, reason), only
  when there are some;
* ``pubmed25n0001.spacy``: the annotated Docs as a DocBin, with ``--docbin``.

Every file is written to a temporary name in the output folder and renamed into place when it is
complete (``os.replace``: atomic on one filesystem); the ``.jsonl`` comes last, so its presence
means the shard is finished. A rerun skips finished shards, deletes the temporary files a killed
run left behind and redoes the rest from the start: nothing is lost and nothing is written twice.
Writing a shard is idempotent, so two workers that both finish one (a retried Ray task) leave the
same file.
"""

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional

from .readers import INPUT_SUFFIXES, Reject

__all__ = ["OutputShard", "ShardWriter", "plan_output_shards", "prepare_output_dir", "TEMP_MARK",
           "DEFAULT_MIN_FREE_MB"]

#: Part of every temporary file's name (``.<final name>.partial-<random>``).
TEMP_MARK = ".partial-"
#: Free space the output folder must have before any work starts.
DEFAULT_MIN_FREE_MB = 64


@dataclass(frozen=True)
class OutputShard:
    """Where one input shard's results go."""

    input: Path
    jsonl: Path
    rejects: Path
    docbin: Path

    @property
    def done(self) -> bool:
        """Finished by an earlier run (its ``.jsonl`` is only ever renamed into place complete)."""
        return self.jsonl.exists()


def _stem(path: Path) -> str:
    name = path.name
    for suffix in sorted(INPUT_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def plan_output_shards(inputs: Iterable[Path], output_dir: Path) -> List[OutputShard]:
    """The output shard of each input shard. Two inputs whose names would give the same output
    (``a/x.jsonl`` and ``b/x.txt``) are an error: one would overwrite the other."""
    output_dir = Path(output_dir)
    shards, seen = [], {}
    for path in inputs:
        stem = _stem(Path(path))
        if stem in seen:
            raise ValueError(f"{path} and {seen[stem]} would both write {output_dir / (stem + '.jsonl')}: "
                             "rename one of them or annotate them into different output folders")
        seen[stem] = path
        shards.append(OutputShard(Path(path), output_dir / f"{stem}.jsonl", output_dir / f"{stem}.rejects.jsonl",
                                  output_dir / f"{stem}.spacy"))
    return shards


def prepare_output_dir(output_dir: Path, min_free_mb: float = DEFAULT_MIN_FREE_MB) -> List[Path]:
    """Create ``output_dir`` if needed and check, before any work, that files can be written there
    and that it has ``min_free_mb`` MiB free; remove the temporary files of an interrupted run.
    Returns the removed files. Raises OSError naming the folder otherwise."""
    output_dir = Path(output_dir)
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OSError(f"{output_dir}: cannot create the output folder ({error.strerror or error})") from error
    if not output_dir.is_dir():
        raise NotADirectoryError(f"{output_dir}: the output path exists and is not a folder")
    probe = output_dir / f".write-test{TEMP_MARK}{uuid.uuid4().hex}"
    try:
        with open(probe, "wb") as handle:
            handle.write(b"\0" * 4096)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        raise OSError(f"{output_dir}: the output folder is not writable ({error.strerror or error})") from error
    finally:
        probe.unlink(missing_ok=True)
    free_mb = shutil.disk_usage(output_dir).free / 2**20
    if free_mb < min_free_mb:
        raise OSError(f"{output_dir}: the output folder's disk is full ({free_mb:.0f} MiB free, "
                      f"{min_free_mb:.0f} MiB needed; see --min-free-mb)")
    stale = sorted(p for p in output_dir.iterdir() if TEMP_MARK in p.name)
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def _temp_path(final: Path) -> Path:
    return final.with_name(f".{final.name}{TEMP_MARK}{uuid.uuid4().hex[:12]}")


class ShardWriter:
    """Writes one output shard: records stream into a temporary file; :meth:`commit` renames it
    (and the rejects and DocBin beside it) into place. :meth:`abort` removes what was written."""

    def __init__(self, shard: OutputShard, docbin: bool = False):
        from .records import doc_to_record  # spaCy is imported with the first writer

        self.shard = shard
        self.documents = 0
        self.rejects: List[Reject] = []
        self._to_record = doc_to_record
        self._temp = _temp_path(shard.jsonl)
        self._handle = open(self._temp, "w", encoding="utf8")
        self._docbin = None
        if docbin:
            from spacy.tokens import DocBin

            self._docbin = DocBin(store_user_data=True)

    def add(self, record_id: str, doc) -> None:
        self._handle.write(json.dumps(self._to_record(record_id, doc), ensure_ascii=False) + "\n")
        if self._docbin is not None:
            self._docbin.add(doc)
        self.documents += 1

    def reject(self, reject: Reject) -> None:
        self.rejects.append(reject)

    def commit(self) -> dict:
        """Put the shard's files in place (the ``.jsonl`` last); returns the shard's counts."""
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        if self.rejects:
            _write_atomically(self.shard.rejects, "".join(json.dumps(r.to_dict(), ensure_ascii=False) + "\n"
                                                          for r in self.rejects).encode("utf8"))
        else:
            self.shard.rejects.unlink(missing_ok=True)
        if self._docbin is not None:
            _write_atomically(self.shard.docbin, self._docbin.to_bytes())
        os.replace(self._temp, self.shard.jsonl)
        return {"input": str(self.shard.input), "output": str(self.shard.jsonl), "documents": self.documents,
                "rejects": len(self.rejects)}

    def abort(self) -> None:
        if not self._handle.closed:
            self._handle.close()
        self._temp.unlink(missing_ok=True)


def _write_atomically(path: Path, data: bytes, temp: Optional[Path] = None) -> None:
    temp = temp or _temp_path(path)
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
