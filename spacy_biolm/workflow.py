"""Run a project workflow as ``spacy project run`` does, with its longest steps beside the others.

On the default machine (2 CPU cores) a second torch thread makes a training update 1.24x faster,
while two single-threaded training processes at once make 1.83x the updates of one
(benchmarks/results/train_threads.json): steps run one after the other leave half of the machine's
training throughput unused. :func:`run_workflow` runs each step with ``spacy project run STEP``
(the same re-run checks, the same project.lock), in the workflow's order, except:

* a step named in the project variable ``beside`` starts as soon as the earlier steps whose outputs
  it depends on have finished, and runs in the background (its output in ``metrics/logs/STEP.log``)
  while the other steps go on;
* a step that depends on the outputs of a step still running (or waiting) waits, and so do the
  steps that depend on it; the others keep the workflow's order.

Dependencies are the steps' declared ``deps`` and ``outputs`` (a dep is an output or lies under
one); a step must declare what it reads from an earlier step, as spaCy's re-run check needs anyway.
While two steps run, each gets ``cores // 2`` torch threads (``OMP_NUM_THREADS``). A background
step that outlives the others (the multi-task training outlasts the QA steps by half an hour) gets
all cores from then on: the runner writes its share to ``metrics/logs/STEP.threads``, named by
``SPACY_BIOLM_THREAD_SHARE`` in its environment, which a config's ``spacy-biolm.follow_thread_share.v1``
callback follows (spacy_biolm/training/thread_share.py). A step that fails stops the run: the other
is terminated and the exit status is the failed step's.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from wasabi import msg

from .training.thread_share import THREAD_SHARE_ENV, write_thread_share

__all__ = ["workflow_steps", "run_workflow", "LOG_DIR"]

LOG_DIR = Path("metrics") / "logs"
_POLL_SECONDS = 1.0


def _effective_project(project_dir: Path, var_args: Sequence[str]) -> Dict[str, object]:
    """project.yml with ``var_args`` (``--vars.KEY VALUE`` ...) applied and its variables substituted."""
    import srsly
    from spacy.cli._util import parse_config_overrides
    from weasel.util import substitute_project_variables

    path = project_dir / "project.yml"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    return substitute_project_variables(srsly.read_yaml(path), parse_config_overrides(list(var_args)))


def workflow_steps(project: Dict[str, object], workflow: str) -> List[str]:
    """The command names ``workflow`` runs: a workflow's list, or a single command."""
    workflows = project.get("workflows", {})
    if workflow in workflows:
        return list(workflows[workflow])
    if any(command["name"] == workflow for command in project.get("commands", [])):
        return [workflow]
    raise KeyError(f"project.yml has no workflow or command {workflow!r}")


def _under(path: str, output: str) -> bool:
    path, output = os.path.normpath(path), os.path.normpath(output)
    return path == output or path.startswith(output + os.sep)


def _depends_on(step: dict, earlier: dict) -> bool:
    return any(_under(dep, output) for dep in step.get("deps", []) for output in earlier.get("outputs", []))


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _threads_each(running: int) -> Optional[str]:
    """``OMP_NUM_THREADS`` for each of ``running`` concurrent steps (None: leave it as it is)."""
    if running < 2:
        return None
    return str(max(1, _cores() // running))


class _Step:
    """One ``spacy project run STEP`` process; a background step writes its output to ``log`` and
    is told its share of the cores in the file beside it (``STEP.threads``)."""

    def __init__(self, name: str, command: List[str], log: Optional[Path]):
        self.name, self.command, self.log = name, command, log
        self.share_file = log.with_suffix(".threads") if log is not None else None
        self.process: Optional[subprocess.Popen] = None
        self.threads: Optional[int] = None

    def share(self, running: int) -> None:
        """Tell a background step that ``running`` steps (itself included) share the cores."""
        threads = int(_threads_each(running) or _cores())
        if self.share_file is not None and threads != self.threads:
            write_thread_share(self.share_file, threads)
            self.threads = threads

    def start(self, threads: Optional[str]) -> None:
        env = {**os.environ, **({"OMP_NUM_THREADS": threads} if threads else {})}
        if self.log is None:
            self.process = subprocess.Popen(self.command, env=env)
            return
        env[THREAD_SHARE_ENV] = str(self.share_file.resolve())
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("w", encoding="utf8") as out:
            self.process = subprocess.Popen(self.command, env=env, stdout=out, stderr=subprocess.STDOUT)

    def wait(self, seconds: Optional[float]) -> Optional[int]:
        """The exit status once the step ends within ``seconds`` (None: however long), else None."""
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def run_workflow(workflow: str, project_dir: Path = Path("."), var_args: Sequence[str] = ()) -> int:
    """Run ``workflow`` of ``project_dir`` (with ``--vars.*`` ``var_args``) as the module says;
    returns the exit status (0, or the first failed step's)."""
    project = _effective_project(Path(project_dir), var_args)
    commands = {command["name"]: command for command in project.get("commands", [])}
    order = workflow_steps(project, workflow)
    beside = set(str(project.get("vars", {}).get("beside") or "").split())
    pending = list(order)
    background: Dict[str, _Step] = {}
    finished = set()

    def ready(name: str) -> bool:
        """No earlier step that is not finished writes what ``name`` reads."""
        earlier = [s for s in order[:order.index(name)] if s not in finished]
        return not any(_depends_on(commands[name], commands[s]) for s in earlier)

    def step(name: str, beside_others: bool) -> _Step:
        command = [sys.executable, "-m", "spacy", "project", "run", name, str(project_dir), *var_args]
        return _Step(name, command, Path(project_dir) / LOG_DIR / f"{name}.log" if beside_others else None)

    def collect() -> int:
        """Background steps that ended are finished; the first failure's exit status, else 0."""
        for name, running in list(background.items()):
            code = running.wait(0)
            if code is None:
                continue
            del background[name]
            if code != 0:
                msg.fail(f"{name} failed (exit {code}); the end of its output ({running.log}):")
                print("\n".join(running.log.read_text(encoding="utf8").splitlines()[-40:]))
                return code
            finished.add(name)
            msg.good(f"{name} finished (it ran beside the other steps; its output: {running.log})")
        return 0

    code = 0
    current: Optional[_Step] = None
    while not code and (pending or background):
        for name in [n for n in pending if n in beside and ready(n)]:
            pending.remove(name)
            background[name] = step(name, beside_others=True)
            background[name].share(2)
            background[name].start(_threads_each(2))
            msg.info(f"{name} runs beside the next steps; its output: {background[name].log}")
        name = next((n for n in pending if n not in beside and ready(n)), None)
        if name is None:
            if not background:  # a workflow out of dependency order; never spin
                raise RuntimeError(f"steps {pending} wait for outputs no step will write")
            for running in background.values():  # nothing else runs: the cores are theirs
                running.share(len(background))
            next(iter(background.values())).wait(_POLL_SECONDS)
            code = collect()
            continue
        pending.remove(name)
        current = step(name, beside_others=False)
        for running in background.values():
            running.share(1 + len(background))
        current.start(_threads_each(1 + len(background)))
        while not code and current.wait(_POLL_SECONDS if background else None) is None:
            code = collect()
        code = code or current.wait(None) or collect()
        finished.add(name)
    if code:
        for running in ([current] if current else []) + list(background.values()):
            running.stop()
    return code
