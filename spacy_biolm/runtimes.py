"""How long the README's two commands take, measured by the runs themselves.

``make all`` and ``make test`` run their command through :func:`run_timed`, which records the wall
time, the peak resident memory of the largest process it ran, the exit status and the machine's CPU
count in ``results/runtimes.json`` and rewrites the README line between the runtimes markers from
it, so the times README states are the last ones measured, never typed. project.yml times each
component's training the same way, into ``metrics/train_times.json`` (no README line), which the
release's results quote.
"""

import fcntl
import json
import os
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, Optional, Sequence, Union

from .project_steps import rewrite_generated
from .run_record import RUN_KEY, git_commit, stamp_json

__all__ = ["RUNTIMES_START", "RUNTIMES_END", "run_timed", "record_runtime", "runtimes_text", "update_readme_runtimes"]

RUNTIMES_START = "<!-- runtimes start: written by `make all` and `make test` (results/runtimes.json); do not edit -->"
RUNTIMES_END = "<!-- runtimes end -->"
PathLike = Union[str, Path]


def record_runtime(
    results: PathLike, name: str, command: Sequence[str], seconds: float, returncode: int, peak_rss_mib: Optional[float] = None
) -> Dict:
    """Add (or replace) ``name``'s measurement in the ``results`` JSON; returns all measurements.
    Steps that run at once (training jobs sharing a GPU) each add theirs: the read and the write
    happen under an exclusive lock on ``results``'s ``.lock`` file beside it."""
    results = Path(results)
    results.parent.mkdir(parents=True, exist_ok=True)
    with open(results.with_name(results.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _add_runtime(results, name, command, seconds, returncode, peak_rss_mib)


def _add_runtime(results: Path, name: str, command: Sequence[str], seconds: float, returncode: int,
                 peak_rss_mib: Optional[float]) -> Dict:
    runtimes = json.loads(results.read_text(encoding="utf8")) if results.is_file() else {}
    runtimes[name] = {
        "commit": git_commit(),
        "seconds": round(seconds, 1),
        "peak_rss_mib": None if peak_rss_mib is None else round(peak_rss_mib),
        "returncode": returncode,
        "cpus": os.cpu_count(),
        "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(command),
    }
    # Each measurement names its commit; "run" is the record of the last one written (the results index reads it).
    runtimes = stamp_json(runtimes)
    results.write_text(json.dumps(runtimes, indent=2, sort_keys=True) + "\n", encoding="utf8")
    return runtimes


def runtimes_text(runtimes: Dict) -> str:
    """README's line: each successful measurement in minutes, with its CPU count and date."""
    done = {name: r for name, r in sorted(runtimes.items()) if name != RUN_KEY and r["returncode"] == 0}
    if not done:
        return "Run times: not measured yet (`make all` and `make test` record theirs in `results/runtimes.json`).\n"
    parts = []
    for name, r in done.items():
        memory = f", peak RSS {r['peak_rss_mib'] / 1024:.1f} GiB" if r.get("peak_rss_mib") else ""
        parts.append(f"`{name}` {r['seconds'] / 60:.1f} min ({r['cpus']} CPUs{memory}, {r['finished']})")
    return "Last measured run times, set-up excluded: " + "; ".join(parts) + ".\n"


def update_readme_runtimes(readme: PathLike, runtimes: Dict) -> bool:
    """Rewrite README's runtimes line from ``runtimes``; True if it changed."""
    return rewrite_generated(readme, runtimes_text(runtimes), RUNTIMES_START, RUNTIMES_END)


def run_timed(name: str, command: Sequence[str], results: PathLike, readme: Optional[PathLike]) -> int:
    """Run ``command``; record its wall time, peak memory and status as ``name`` in ``results``,
    rewrite ``readme``'s line from them (None: no README), and return the command's exit status."""
    command = list(command)
    if command and command[0] == "python":  # as weasel runs project.yml's scripts: this interpreter
        command[0] = sys.executable
    start = time.perf_counter()
    returncode = subprocess.call(command)
    seconds = time.perf_counter() - start
    # The largest resident set of any process the command ran and waited for (its children's
    # children included), in KiB on Linux: the peak a machine must hold for the biggest step.
    peak_rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    runtimes = record_runtime(results, name, command, seconds, returncode, peak_rss_mib)
    if readme is None:
        return returncode
    try:
        update_readme_runtimes(readme, runtimes)
    except (OSError, ValueError) as error:  # the command's own status matters more than README's line
        print(f"run time recorded in {results}; {readme} not updated: {error}", file=sys.stderr)
    return returncode
