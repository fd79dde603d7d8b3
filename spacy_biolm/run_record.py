"""Which run wrote a result file: the commit of the working tree and the UTC date.

Every result file the project writes (``results/``, ``benchmarks/results/``,
``projects/*/results/``, a released encoder's ``pretrain_summary.json``) records its run, so that
``results/README.md`` (``spacy-biolm docs results-index``) can say which commit and date made
each one. A JSON result carries it under one key::

    "run": {"commit": "5ab5912...", "date": "2026-11-28T00:15:40Z", "profile": "full", "device": "NVIDIA H100"}

``commit`` is ``git rev-parse HEAD`` of the current directory's checkout, with ``-dirty`` appended
when tracked files differ from it (``git status --porcelain``), and None outside a git checkout
(a copied working tree, an installed package); ``SPACY_BIOLM_COMMIT`` in the environment names it
where git cannot (a machine that got the tree without ``.git``). ``profile`` and ``device`` are
there only when known (the profile from ``SPACY_BIOLM_PROFILE``, which ``spacy-biolm profile run``
sets for the whole run). A record taken afterwards from ``git log`` (the commit that
committed the file, :func:`git_log_record`) says so: ``"source": "git log"``.

A Markdown table records the run it was made from on its last line, an HTML comment that renders
as nothing (:func:`run_comment`)::

    <!-- run: commit 5ab5912..., date 2026-11-28T00:15:40Z -->
"""

import datetime
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Dict, Optional, Union

__all__ = [
    "RUN_KEY",
    "COMMIT_ENV",
    "PROFILE_ENV",
    "git_commit",
    "utc_now",
    "run_record",
    "stamp_json",
    "add_fields",
    "write_json",
    "git_log_record",
    "run_comment",
    "with_run_comment",
    "read_run_comment",
    "read_record",
]

PathLike = Union[str, Path]
RUN_KEY = "run"
COMMIT_ENV = "SPACY_BIOLM_COMMIT"
PROFILE_ENV = "SPACY_BIOLM_PROFILE"  # set by `spacy-biolm profile run NAME` (what `make all` runs)
_COMMENT = re.compile(r"<!-- run: commit (?P<commit>\S+), date (?P<date>\S+?)(?:, (?P<rest>.*?))? -->\s*\Z")


def _git(args, cwd: Optional[PathLike] = None) -> Optional[str]:
    """stdout of ``git ARGS`` in ``cwd``, or None when git is missing or fails (not a checkout)."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_commit(cwd: Optional[PathLike] = None) -> Optional[str]:
    """The commit checked out at ``cwd`` (default: the current directory), ``-dirty`` appended when
    tracked files have changes; :data:`COMMIT_ENV` when set; None outside a git checkout."""
    if os.environ.get(COMMIT_ENV):
        return os.environ[COMMIT_ENV]
    head = _git(["rev-parse", "HEAD"], cwd)
    if not head or not head.strip():
        return None
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd)
    return head.strip() + ("-dirty" if status and status.strip() else "")


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second: ``2026-11-28T00:15:40Z``."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_record(profile: Optional[str] = None, device: Optional[object] = None,
               cwd: Optional[PathLike] = None) -> Dict[str, object]:
    """``{"commit", "date"}`` of this run (see the module's doc), with ``profile`` (default: the
    profile ``spacy-biolm profile run`` names in :data:`PROFILE_ENV`) and ``device`` when known."""
    record: Dict[str, object] = {"commit": git_commit(cwd), "date": utc_now()}
    profile = profile if profile is not None else os.environ.get(PROFILE_ENV) or None
    if profile is not None:
        record["profile"] = profile
    if device is not None:
        record["device"] = device
    return record


def stamp_json(target: Union[PathLike, Dict[str, object]], record: Optional[Dict[str, object]] = None,
               **run_fields) -> Dict[str, object]:
    """A result (a dict, or the JSON file at a path, rewritten in place) with ``record`` (default:
    :func:`run_record` of ``run_fields``) under :data:`RUN_KEY`. An existing ``run`` mapping keeps
    its other keys (profile, device, ...) and takes the record's; a dict is returned as a new dict.
    TypeError when the JSON is not an object or its ``run`` is not a mapping."""
    if record is None:
        record = run_record(**run_fields)
    if isinstance(target, dict):
        existing = target.get(RUN_KEY, {})
        if not isinstance(existing, dict):
            raise TypeError(f"the result's {RUN_KEY!r} is a {type(existing).__name__}, not a mapping: cannot record the run in it")
        if "source" not in record:  # a run's own record replaces one taken afterwards from git log
            existing = {key: value for key, value in existing.items() if key != "source"}
        return {**target, RUN_KEY: {**existing, **record}}
    path = Path(target)
    data = json.loads(path.read_text(encoding="utf8"))
    if not isinstance(data, dict):
        raise TypeError(f"{path} holds a JSON {type(data).__name__}, not an object: cannot record the run in it")
    stamped = stamp_json(data, record)
    path.write_text(json.dumps(stamped, indent=2) + "\n", encoding="utf8")
    return stamped


def add_fields(path: PathLike, **fields) -> Dict[str, object]:
    """Add (or replace) ``fields`` in the result JSON object at ``path``, which a run wrote (its
    record stays as it is); returns the object written."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: a result file is added to after the run that writes it")
    data = json.loads(path.read_text(encoding="utf8"))
    if not isinstance(data, dict):
        raise TypeError(f"{path} holds a JSON {type(data).__name__}, not an object: cannot add {', '.join(fields)}")
    data.update(fields)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf8")
    return data


def write_json(path: PathLike, data: Dict[str, object], indent: int = 2, **run_fields) -> Dict[str, object]:
    """Write the result ``data`` to ``path`` as JSON with this run's record (:func:`stamp_json`;
    ``run_fields``: profile, device), its folder made if missing; returns what was written."""
    stamped = stamp_json(data, **run_fields)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(stamped, indent=indent) + "\n", encoding="utf8")
    return stamped


def git_log_record(path: PathLike, cwd: Optional[PathLike] = None) -> Optional[Dict[str, object]]:
    """``{"commit", "date", "source": "git log"}``: the last commit that added or changed ``path``
    (a rename is not a change: history is followed through it) and its committer date (UTC), or None when git cannot say (not a checkout, never committed) or the file
    has changes since (the commit would not be the one that made its content)."""
    path = Path(path)
    cwd = cwd if cwd is not None else (path.parent if path.parent.is_dir() else None)
    name = str(path.resolve()) if cwd is not None else str(path)
    changed = _git(["status", "--porcelain", "--", name], cwd)
    if changed is None or changed.strip():
        return None
    # The last commit that added or changed it, through renames (moving a result file is not a run).
    follow = ["--follow"] if path.is_file() else []
    line = (_git(["log", "-1", *follow, "--diff-filter=AM", "--format=%H%x09%ct", "--", name], cwd)
            or _git(["log", "-1", "--format=%H%x09%ct", "--", name], cwd))
    if not line or "\t" not in line:
        return None
    commit, seconds = line.strip().split("\t")
    date = datetime.datetime.fromtimestamp(int(seconds), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"commit": commit, "date": date, "source": "git log"}


def run_comment(record: Optional[Dict[str, object]]) -> str:
    """The last line of a Markdown table made by the run ``record``: an HTML comment (renders as
    nothing) naming its commit and date, and profile/device/source when the record has them; ""
    when there is no record (a table made from a result file that records no run)."""
    if not record:
        return ""
    extra = ", ".join(f"{key} {record[key]}" for key in ("profile", "device", "source") if record.get(key) is not None)
    return f"<!-- run: commit {record.get('commit')}, date {record.get('date')}{', ' + extra if extra else ''} -->\n"


def with_run_comment(text: str, record: Optional[Dict[str, object]]) -> str:
    """``text`` (a Markdown table) ending in :func:`run_comment` of ``record`` (any earlier one
    replaced)."""
    match = _COMMENT.search(text)
    comment = run_comment(record)
    if match is None and not comment:
        return text
    body = text[:match.start()] if match else text
    body = body.rstrip("\n") + "\n" if body.strip() else ""
    return body + comment


def read_run_comment(text: str) -> Optional[Dict[str, object]]:
    """The record of a Markdown file's last-line :func:`run_comment`, or None."""
    match = _COMMENT.search(text)
    if not match:
        return None
    record: Dict[str, object] = {"commit": None if match["commit"] == "None" else match["commit"], "date": match["date"]}
    # A value may hold ", " itself (device "cpu (x86_64, 2 cores)"): split only before a known key.
    for part in re.split(r", (?=(?:profile|device|source) )", match["rest"] or ""):
        key, _, value = part.partition(" ")
        if key in ("profile", "device", "source") and value:
            record[key] = value
    return record


def read_record(path: PathLike) -> Optional[Dict[str, object]]:
    """The run record a result file holds: a JSON object's ``run`` with a commit or date, or a
    Markdown file's last-line comment; None otherwise (other formats, no record, unreadable)."""
    path = Path(path)
    try:
        if path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf8"))
            run = data.get(RUN_KEY) if isinstance(data, dict) else None
            return run if isinstance(run, dict) and ("commit" in run or "date" in run) else None
        if path.suffix == ".md":
            return read_run_comment(path.read_text(encoding="utf8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return None
