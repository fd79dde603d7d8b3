"""``results/README.md``: the generated index of every result file the project keeps.

Result files live in ``results/`` (what the release and the README quote), ``benchmarks/results/``,
``projects/<name>/results/`` (experiments, kept with the project that made them) and a released
encoder's folder (``released/<name>/``: its pretraining summary, held-out log and curve). The index
has one row per file (the ``.log`` files of one folder share a row): what it is, the commit and
date of the run that wrote it, profile, device, and whether it is current, an experiment's, or
superseded. Nothing in it is typed by hand except the one-line descriptions:

- what it is: the first entry of ``results/descriptions.yml`` whose glob matches its path (one
  hand-kept line), else the first sentence of the file's own ``description`` or ``title`` (a JSON
  object); a file with neither is an error (no result file is "named by nothing");
- commit and date: the file's run record (:mod:`spacy_biolm.run_record`: a JSON ``run``, a
  Markdown table's last-line comment), else that of the JSON beside it with the same stem (a table
  or plot made from it), else ``git log`` (the last commit that added or changed it), marked so;
- profile and device: the record's, else the JSON's own ``profile``/``device``, else the
  registry entry's;
- status: the registry entry's, else ``experiment`` under ``projects/`` and ``current`` elsewhere.

``spacy-biolm docs results-index`` writes it (``--check``: exit 1 when stale; ``--backfill``: first
write the ``git log`` record into each JSON result that has none). The index holds no "now": the
same files and history give the same text.
"""

import fnmatch
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

from .run_record import RUN_KEY, git_log_record, read_record, stamp_json

__all__ = [
    "INDEX_PATH",
    "DESCRIPTIONS_PATH",
    "STATUSES",
    "RELEASED_RESULTS",
    "Row",
    "find_result_files",
    "load_descriptions",
    "index_rows",
    "results_index",
    "write_results_index",
    "backfill_records",
]

PathLike = Union[str, Path]
INDEX_PATH = "results/README.md"
DESCRIPTIONS_PATH = "results/descriptions.yml"
STATUSES = ("current", "experiment", "superseded")
# The files of a released encoder's folder that are results of its run (the rest is the model).
RELEASED_RESULTS = ("pretrain_summary.json", "heldout_log.jsonl", "pretrain_curve.png")
# Files in a results folder that are not results.
_NOT_RESULTS = {"README.md", "descriptions.yml", ".gitkeep", ".gitignore"}
_GIT_LOG_MARK = "*"


@dataclass
class Row:
    """One row of the index: a result file (or the ``.log`` files of one folder, ``n_files`` > 1)."""

    path: str  # relative to the repository root; a log group's is its folder + "/*.log"
    what: str
    status: str
    commit: Optional[str] = None
    date: Optional[str] = None
    source: Optional[str] = None  # where commit/date came from when not the file itself
    profile: Optional[str] = None
    device: Optional[str] = None
    n_files: int = 1


def _git_ignored(root: Path, paths: Sequence[str]) -> set:
    """The ``paths`` (relative to ``root``) that git ignores; none outside a checkout."""
    if not paths:
        return set()
    try:
        done = subprocess.run(["git", "check-ignore", "--stdin"], cwd=root, input="\n".join(paths) + "\n",
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set()
    return set(done.stdout.split("\n")) if done.returncode in (0, 1) else set()


def find_result_files(root: PathLike = ".") -> List[str]:
    """Every result file under ``root`` (a repository): ``results/``, ``benchmarks/results/`` and
    ``projects/*/results/`` (all files), ``released/*/`` (:data:`RELEASED_RESULTS`); paths relative
    to ``root``, sorted, without what git ignores, hidden files and the index itself."""
    root = Path(root)
    found = []
    folders = [root / "results", root / "benchmarks" / "results", *sorted((root / "projects").glob("*/results"))]
    for folder in folders:
        for path in folder.rglob("*"):
            rel = path.relative_to(root)
            if path.is_file() and path.name not in _NOT_RESULTS and not any(p.startswith(".") for p in rel.parts):
                found.append(rel.as_posix())
    for folder in sorted((root / "released").glob("*")):
        found.extend((folder / name).relative_to(root).as_posix() for name in RELEASED_RESULTS if (folder / name).is_file())
    ignored = _git_ignored(root, found)
    return sorted(path for path in found if path not in ignored)


def load_descriptions(path: PathLike) -> List[Tuple[str, Dict[str, object]]]:
    """The registry ``results/descriptions.yml``: ``[(glob, {"what", "status", "profile"?,
    "device"?})]`` in file order (the first glob that matches a path is its entry). ValueError names
    an entry without ``what`` or with an unknown status."""
    import srsly

    path = Path(path)
    if not path.is_file():
        return []
    data = srsly.read_yaml(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of path globs to {{what, status}}")
    entries = []
    for glob, entry in data.items():
        entry = {"what": entry} if isinstance(entry, str) else dict(entry or {})
        if not entry.get("what"):
            raise ValueError(f"{path}: {glob!r} has no 'what' (one line: what the file is)")
        if entry.get("status", "current") not in STATUSES:
            raise ValueError(f"{path}: {glob!r} has status {entry['status']!r}; expected one of {', '.join(STATUSES)}")
        entries.append((str(glob), entry))
    return entries


def _match(path: str, entries: Sequence[Tuple[str, Dict[str, object]]]) -> Optional[Tuple[str, Dict[str, object]]]:
    for glob, entry in entries:
        if fnmatch.fnmatchcase(path, glob):
            return glob, entry
    return None


def _read_json(path: Path) -> Optional[Dict[str, object]]:
    if path.suffix != ".json" or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _own_description(data: Optional[Dict[str, object]]) -> Optional[str]:
    """The first sentence of a JSON result's ``description`` or ``title``, at most 160 characters."""
    for key in ("description", "title"):
        text = (data or {}).get(key)
        if isinstance(text, str) and text.strip():
            text = " ".join(text.split())
            cut = text.find(". ")
            text = text[: cut + 1] if cut >= 0 else text
            return text if len(text) <= 160 else text[:159].rstrip() + "…"
    return None


def _device_text(value: object) -> Optional[str]:
    """A device as the index shows it: a string as is, a machine mapping as "CPU, N cores"."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict) and value.get("cpu"):
        return f"{value['cpu']}" + (f", {value['cores']} cores" if value.get("cores") else "")
    return None


def _record_of(root: Path, rel: str, members: Sequence[str] = ()) -> Tuple[Optional[Dict[str, object]], Optional[str]]:
    """(run record, where it came from when not the file itself) of the result ``rel``; for the
    logs of a folder (``members``), the latest ``git log`` record among them."""
    if rel.endswith("*.log"):
        records = [git_log_record(root / member, cwd=root) for member in members]
        if not records or any(record is None for record in records):
            return None, None
        return max(records, key=lambda record: str(record["date"])), "git log"
    path = root / rel
    record = read_record(path)
    if record:
        return record, None
    sibling = path.with_suffix(".json")
    if sibling != path:
        record = read_record(sibling)
        if record:
            return record, sibling.name
    record = git_log_record(path, cwd=root)
    return record, ("git log" if record else None)


def index_rows(root: PathLike = ".", descriptions: Optional[PathLike] = None) -> Tuple[List[Row], List[str]]:
    """The index's rows for the result files of ``root`` (:func:`find_result_files`), and the
    registry globs that match no file. ValueError lists the files that neither describe
    themselves nor match a registry glob."""
    root = Path(root)
    entries = load_descriptions(descriptions if descriptions is not None else root / DESCRIPTIONS_PATH)
    files = find_result_files(root)
    logs: Dict[str, List[str]] = {}
    singles = []
    for rel in files:
        if rel.endswith(".log"):
            logs.setdefault(rel.rsplit("/", 1)[0], []).append(rel)
        else:
            singles.append(rel)
    used, rows, unnamed = set(), [], []
    for rel, members in [(rel, [rel]) for rel in singles] + [(f"{folder}/*.log", names) for folder, names in logs.items()]:
        data = _read_json(root / rel) if len(members) == 1 and not rel.endswith("*.log") else None
        matched = _match(members[0], entries)
        if matched:
            used.add(matched[0])
        entry = matched[1] if matched else {}
        what = entry.get("what") or _own_description(data)
        if not what:
            unnamed.append(rel)
            continue
        record, source = _record_of(root, rel, members)
        record = record or {}
        if data is None and not rel.endswith("*.log"):  # a table or plot: the JSON beside it says profile and device
            data = _read_json((root / rel).with_suffix(".json"))
        data = data or {}
        status = entry.get("status") or ("experiment" if rel.startswith("projects/") else "current")
        own = data.get(RUN_KEY) if isinstance(data.get(RUN_KEY), dict) else {}  # a run with no commit/date yet
        profile = next((p for p in (record.get("profile"), own.get("profile"), data.get("profile"), entry.get("profile"))
                        if isinstance(p, str) and p), None)
        device = next(filter(None, map(_device_text, (record.get("device"), own.get("device"), data.get("device"),
                                                      entry.get("device")))), None)
        if source is None and record.get("source"):
            source = str(record["source"])
        rows.append(Row(rel, str(what), str(status), record.get("commit"), record.get("date"), source,
                        profile, device, len(members)))
    if unnamed:
        raise ValueError(f"{len(unnamed)} result file(s) named by nothing (no description or title of their own, "
                         f"no glob in {DESCRIPTIONS_PATH}): {', '.join(unnamed)}")
    rows.sort(key=lambda row: (_folder_order(row.path), row.path))
    return rows, [glob for glob, _ in entries if glob not in used]


def _folder(path: str) -> str:
    return path.rsplit("/", 2)[0] if path.endswith("*.log") else path.rsplit("/", 1)[0]


def _folder_order(path: str) -> Tuple[int, str]:
    """Sections in the order a reader wants them: results/, benchmarks/, released/, projects/."""
    for i, prefix in enumerate(("results/", "benchmarks/", "released/", "projects/")):
        if path.startswith(prefix):
            return i, _folder(path)
    return 4, _folder(path)


def _cell(text: Optional[object]) -> str:
    return "" if text is None else str(text).replace("|", "\\|").replace("\n", " ")


def results_index(root: PathLike = ".", descriptions: Optional[PathLike] = None, index_path: str = INDEX_PATH) -> Tuple[str, List[str]]:
    """The Markdown of ``results/README.md`` (a table per folder) and the unused registry globs."""
    rows, unused = index_rows(root, descriptions)
    here = Path(index_path).parent.as_posix()
    lines = [
        "# Result files",
        "",
        "<!-- generated by `spacy-biolm docs results-index` from the result files and results/descriptions.yml; do not edit -->",
        "",
        "Every result file of the project, with the run that wrote it. **current**: what the release, the README and "
        "the benchmarks quote; **experiment**: an experiment project's (`projects/<name>`), kept with it; **superseded**: "
        "kept for the record, a later run replaced it. Commit and date are the file's own record "
        f"(`spacy_biolm/run_record.py`); {_GIT_LOG_MARK} marks those taken from the JSON beside it or from `git log` "
        "(the last commit that added or changed the file). What each file is: `results/descriptions.yml`, else "
        "the file's own description.",
        "",
    ]
    counts = {status: sum(row.n_files for row in rows if row.status == status) for status in STATUSES}
    lines.append(f"{sum(counts.values())} files: " + ", ".join(f"{n} {status}" for status, n in counts.items()) + ".")
    folder = None
    for row in rows:
        if _folder(row.path) != folder:
            folder = _folder(row.path)
            lines += ["", f"## {folder}/", "", "| file | what it is | commit | date | profile | device | status |",
                      "|---|---|---|---|---|---|---|"]
        name = row.path[len(folder) + 1:]
        group = row.path.endswith("*.log")
        link = os.path.relpath(row.path.rsplit("/", 1)[0] if group else row.path, here).replace(os.sep, "/")
        shown = f"[{name}]({link})" + (f" ({row.n_files} log{'s' if row.n_files > 1 else ''})" if group else "")
        mark = _GIT_LOG_MARK if row.source else ""
        commit = row.commit or ""
        dirty = commit.endswith("-dirty")
        commit_cell = (f"`{commit[:7]}`" + (" (dirty)" if dirty else "") + mark) if commit else ("uncommitted" if not row.date else "")
        date_cell = (str(row.date)[:10] + mark) if row.date else ""
        lines.append("| " + " | ".join([shown, _cell(row.what), commit_cell, date_cell, _cell(row.profile),
                                         _cell(row.device), row.status]) + " |")
    return "\n".join(lines) + "\n", unused


def write_results_index(root: PathLike = ".", check: bool = False, descriptions: Optional[PathLike] = None,
                        index_path: str = INDEX_PATH) -> Tuple[bool, List[str]]:
    """Write ``root/results/README.md`` (with ``check``, write nothing). Returns (whether the file
    was stale, the unused registry globs)."""
    text, unused = results_index(root, descriptions, index_path)
    path = Path(root) / index_path
    stale = not path.is_file() or path.read_text(encoding="utf8") != text
    if stale and not check:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf8")
    return stale, unused


def backfill_records(root: PathLike = ".") -> Tuple[List[str], List[str]]:
    """Write into each JSON result object of ``root`` that records no run the ``git log`` record
    (:func:`~spacy_biolm.run_record.git_log_record`: the last commit that added or changed it,
    ``"source": "git log"``). Returns (the files written, the files git cannot date: changed since
    their last commit or never committed; commit them, then run again)."""
    root = Path(root)
    written, undated = [], []
    for rel in find_result_files(root):
        path = root / rel
        data = _read_json(path)
        if data is None or read_record(path) or (RUN_KEY in data and not isinstance(data[RUN_KEY], dict)):
            continue
        record = git_log_record(path, cwd=root)
        if record is None:
            undated.append(rel)
            continue
        stamp_json(path, record)
        written.append(rel)
    return written, undated
