"""make all / make test record their own wall time, and README's line is written from it."""

import json
import sys

from spacy_biolm.runtimes import RUNTIMES_END, RUNTIMES_START, run_timed, runtimes_text


def test_runs_record_their_time_and_status_and_rewrite_the_readme_line(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{RUNTIMES_START}\nold\n{RUNTIMES_END}\noutro\n")
    results = tmp_path / "results" / "runtimes.json"
    assert run_timed("make test", [sys.executable, "-c", "import sys; sys.exit(3)"], results, readme) == 3
    recorded = json.loads(results.read_text())["make test"]
    assert recorded["returncode"] == 3 and recorded["seconds"] >= 0 and recorded["cpus"] >= 1
    assert "not measured yet" in readme.read_text()  # a failed run is no run time
    assert run_timed("make test", [sys.executable, "-c", "import time; time.sleep(0.2)"], results, readme) == 0
    text = readme.read_text()
    assert text.startswith(f"intro\n{RUNTIMES_START}\nLast measured run times, set-up excluded: `make test` 0.0 min (")
    assert text.endswith(f"{RUNTIMES_END}\noutro\n")
    assert json.loads(results.read_text())["make test"]["seconds"] >= 0.2


def test_the_line_lists_each_successful_run_in_minutes():
    runtimes = {"make all": {"seconds": 3690.0, "returncode": 0, "cpus": 2, "finished": "2026-11-23 15:40 UTC"},
                "make test": {"seconds": 420.0, "returncode": 1, "cpus": 2, "finished": "2026-11-23 15:00 UTC"}}
    assert runtimes_text(runtimes) == ("Last measured run times, set-up excluded: `make all` 61.5 min (2 CPUs, "
                                       "2026-11-23 15:40 UTC).\n")
