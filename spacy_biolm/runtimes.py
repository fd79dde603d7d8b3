"""How long the README's two commands take, measured by the runs themselves.

``make all`` and ``make test`` run their command through :func:`run_timed`, which records the wall
time, the exit status and the machine's CPU count in ``results/runtimes.json`` and rewrites the
README line between the runtimes markers from it, so the times README states are the last ones
measured, never typed.
"""

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, Sequence, Union

from .project_steps import rewrite_generated

__all__ = ["RUNTIMES_START", "RUNTIMES_END", "run_timed", "record_runtime", "runtimes_text", "update_readme_runtimes"]

RUNTIMES_START = "<!-- runtimes start: written by `make all` and `make test` (results/runtimes.json); do not edit -->"
RUNTIMES_END = "<!-- runtimes end -->"
PathLike = Union[str, Path]


def record_runtime(results: PathLike, name: str, command: Sequence[str], seconds: float, returncode: int) -> Dict:
    """Add (or replace) ``name``'s measurement in the ``results`` JSON; returns all measurements."""
    results = Path(results)
    runtimes = json.loads(results.read_text(encoding="utf8")) if results.is_file() else {}
    runtimes[name] = {
        "seconds": round(seconds, 1),
        "returncode": returncode,
        "cpus": os.cpu_count(),
        "finished": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(command),
    }
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(runtimes, indent=2, sort_keys=True) + "\n", encoding="utf8")
    return runtimes


def runtimes_text(runtimes: Dict) -> str:
    """README's line: each successful measurement in minutes, with its CPU count and date."""
    done = {name: r for name, r in sorted(runtimes.items()) if r["returncode"] == 0}
    if not done:
        return "Run times: not measured yet (`make all` and `make test` record theirs in `results/runtimes.json`).\n"
    parts = [f"`{name}` {r['seconds'] / 60:.1f} min ({r['cpus']} CPUs, {r['finished']})" for name, r in done.items()]
    return "Last measured run times, set-up excluded: " + "; ".join(parts) + ".\n"


def update_readme_runtimes(readme: PathLike, runtimes: Dict) -> bool:
    """Rewrite README's runtimes line from ``runtimes``; True if it changed."""
    return rewrite_generated(readme, runtimes_text(runtimes), RUNTIMES_START, RUNTIMES_END)


def run_timed(name: str, command: Sequence[str], results: PathLike, readme: PathLike) -> int:
    """Run ``command``; record its wall time and status as ``name`` in ``results``, rewrite the
    README line from them, and return the command's exit status."""
    start = time.perf_counter()
    returncode = subprocess.call(list(command))
    runtimes = record_runtime(results, name, command, time.perf_counter() - start, returncode)
    try:
        update_readme_runtimes(readme, runtimes)
    except (OSError, ValueError) as error:  # the command's own status matters more than README's line
        print(f"run time recorded in {results}; {readme} not updated: {error}", file=sys.stderr)
    return returncode
