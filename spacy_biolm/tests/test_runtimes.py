"""make all / make test record their own wall time, and README's line is written from it."""

import json
import sys

from spacy_biolm.runtimes import RUNTIMES_END, RUNTIMES_START, record_runtime, run_timed, runtimes_text


def test_runs_record_their_time_and_status_and_rewrite_the_readme_line(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{RUNTIMES_START}\nold\n{RUNTIMES_END}\noutro\n")
    results = tmp_path / "results" / "runtimes.json"
    assert run_timed("make test", [sys.executable, "-c", "import sys; sys.exit(3)"], results, readme) == 3
    recorded = json.loads(results.read_text())["make test"]
    assert recorded["returncode"] == 3 and recorded["seconds"] >= 0 and recorded["cpus"] >= 1
    assert recorded["peak_rss_mib"] > 0
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
    runtimes["make all"]["peak_rss_mib"] = 5325
    assert "`make all` 61.5 min (2 CPUs, peak RSS 5.2 GiB, 2026-11-23 15:40 UTC)" in runtimes_text(runtimes)


def test_the_peak_memory_is_that_of_the_largest_process_run(tmp_path):
    # A child that holds ~200 MiB: the recorded peak covers it (and no README is touched).
    grow = "b = bytearray(200 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096])"
    assert run_timed("grow", [sys.executable, "-c", grow], tmp_path / "t.json", None) == 0
    assert json.loads((tmp_path / "t.json").read_text())["grow"]["peak_rss_mib"] >= 200
    assert not (tmp_path / "README.md").exists()


def test_a_leading_python_runs_this_interpreter(tmp_path):
    # project.yml's timed steps say `python -m ...` after `--`: the venv's, as weasel runs its scripts.
    check = f"import sys; sys.exit(0 if sys.executable == {sys.executable!r} else 5)"
    assert run_timed("which", ["python", "-c", check], tmp_path / "t.json", None) == 0


def test_steps_that_finish_at_once_each_keep_their_record(tmp_path):
    """Training steps sharing a GPU run at once; the lock keeps every record."""
    import multiprocessing

    results = tmp_path / "train_times.json"
    names = [f"step_{i}" for i in range(8)]
    with multiprocessing.get_context("spawn").Pool(8) as pool:
        pool.starmap(record_runtime, [(results, name, ["python", "-c", "pass"], 1.0, 0) for name in names])
    assert sorted(json.loads(results.read_text())) == sorted(names + ["run"])  # "run": the last write's commit and date
