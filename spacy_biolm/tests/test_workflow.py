"""The workflow runner: steps in order, a `beside` step in the background, dependants waiting."""

import time
from pathlib import Path

from spacy_biolm.workflow import run_workflow

STEP = '''import os, sys, time
from pathlib import Path
name, seconds, code = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
with open("events.txt", "a") as events:
    events.write(f"start {name} {os.environ.get('OMP_NUM_THREADS', '-')}\\n")
time.sleep(seconds)
Path("out").mkdir(exist_ok=True)
Path("out", name).write_text(name)
share = os.environ.get("SPACY_BIOLM_THREAD_SHARE")
with open("events.txt", "a") as events:
    events.write(f"end {name} {Path(share).read_text().strip() if share else '-'}\\n")
sys.exit(code)
'''


def _project(tmp_path: Path, steps, beside: str) -> Path:
    """A project whose commands are (name, seconds, exit code, deps), run in that order."""
    commands = "".join(
        f"  - name: {name}\n    script: ['python step.py {name} {seconds} {code}']\n"
        f"    deps: {deps}\n    outputs: ['out/{name}']\n"
        for name, seconds, code, deps in steps)
    (tmp_path / "project.yml").write_text(
        f"vars:\n  beside: '{beside}'\nworkflows:\n  all: [{', '.join(s[0] for s in steps)}]\ncommands:\n{commands}")
    (tmp_path / "step.py").write_text(STEP)
    return tmp_path


def _events(project: Path):
    return [line.split() for line in (project / "events.txt").read_text().splitlines()]


def test_a_beside_step_starts_once_its_inputs_exist_and_its_dependants_wait_for_it(tmp_path, monkeypatch):
    monkeypatch.setattr("spacy_biolm.workflow._threads_each", lambda running: str(running) if running > 1 else None)
    project = _project(tmp_path, [("a", 0, 0, []), ("b", 3, 0, []), ("slow", 15, 0, ["out/a"]),
                                  ("c", 0, 0, ["out/slow"]), ("d", 0, 0, [])], beside="slow")
    assert run_workflow("all", project) == 0
    events = _events(project)
    order = [f"{kind} {name}" for kind, name, *_ in events]
    # slow starts as soon as a (its input) ended, with b; b and d run beside it; c waits for it.
    assert order[:2] == ["start a", "end a"] and set(order[2:4]) == {"start slow", "start b"}
    assert order.index("end b") < order.index("end slow") and order.index("end d") < order.index("end slow")
    assert order[-2:] == ["start c", "end c"]
    threads = {name: rest[0] for kind, name, *rest in events if kind == "start"}
    assert threads == {"a": "-", "slow": "2", "b": "2", "d": "2", "c": "-"}  # two steps at a time: half the cores each


def test_without_beside_the_steps_run_one_after_the_other(tmp_path):
    project = _project(tmp_path, [("a", 0, 0, []), ("slow", 1, 0, ["out/a"]), ("b", 0, 0, [])], beside="")
    assert run_workflow("all", project) == 0
    assert [f"{kind} {name}" for kind, name, *_ in _events(project)] == \
        ["start a", "end a", "start slow", "end slow", "start b", "end b"]


def test_a_failing_beside_step_stops_the_run_and_shows_its_output(tmp_path, capsys):
    project = _project(tmp_path, [("slow", 1, 3, []), ("long", 60, 0, [])], beside="slow")
    started = time.monotonic()
    assert run_workflow("all", project) == 3
    assert time.monotonic() - started < 30  # the step beside it was stopped, not waited for
    assert "slow failed (exit 3)" in capsys.readouterr().out
    assert "step.py slow 1 3" in (project / "metrics" / "logs" / "slow.log").read_text()  # spaCy's "Running command"
    assert not (project / "out" / "long").exists()


def test_a_failing_step_stops_the_step_beside_it(tmp_path):
    project = _project(tmp_path, [("slow", 60, 0, []), ("bad", 0, 2, [])], beside="slow")
    started = time.monotonic()
    assert run_workflow("all", project) == 2
    assert time.monotonic() - started < 30 and not (project / "out" / "slow").exists()


def test_a_beside_step_that_outlives_the_others_is_given_all_cores(tmp_path, monkeypatch):
    monkeypatch.setattr("spacy_biolm.workflow._cores", lambda: 4)
    project = _project(tmp_path, [("slow", 10, 0, []), ("b", 0, 0, []), ("c", 0, 0, ["out/slow"])], beside="slow")
    assert run_workflow("all", project) == 0
    events = {(kind, name): rest for kind, name, *rest in _events(project)}
    assert events[("start", "slow")] == ["2"] and events[("start", "b")] == ["2"]  # half the cores each
    # b ended and c waits for slow: slow's thread share says all four cores; foreground steps have none.
    assert events[("end", "slow")] == ["4"] and events[("end", "b")] == ["-"]
    assert (project / "metrics" / "logs" / "slow.threads").read_text() == "4\n"
