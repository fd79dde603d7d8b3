"""Training throughput of the machine: one training process with 1 or all torch threads, or one
single-threaded process per core side by side.

    python benchmarks/train_threads.py configs/release_multitask.cfg --steps 16 \\
        --output benchmarks/results/train_threads.json [--paths.encoder ... overrides]

Each setting runs in fresh worker processes (torch's thread pool is fixed per process): each worker
initialises the config's pipeline from its training corpus, takes its first ``--steps`` batches
(the config's own batcher over its own corpus, the same in every worker) and, once every worker of
the setting is ready, updates on them; the first two updates are warm-up and not timed. Reported
per setting: each worker's ``seconds_per_update`` and the machine's ``updates_per_second`` (all
workers together). Settings: ``1 process x 1 thread``, ``1 process x N threads`` (N: the cores)
and ``N processes x 1 thread`` (how `make all` runs its longest step beside the others,
spacy_biolm/workflow.py).

Writes ``--output`` (JSON, stamped with the commit and date of the run).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inference import machine, versions
from train_padding import REPO, parse_args, training_batches

WARMUP = 2


def _worker(args, overrides_argv, ready: Path, go: Path, output: Path) -> None:
    nlp, T, batches, _ = training_batches(args.config, overrides_argv, args.steps + WARMUP, args.threads)
    ready.touch()
    while not go.exists():
        time.sleep(0.1)
    seconds = []
    for batch in batches:
        started = time.perf_counter()
        nlp.update(batch, sgd=T["optimizer"], drop=T["dropout"])
        seconds.append(time.perf_counter() - started)
    timed = seconds[WARMUP:]
    output.write_text(json.dumps({"seconds_per_update": round(sum(timed) / len(timed), 3),
                                  "words": sum(len(eg.reference) for batch in batches[WARMUP:] for eg in batch)}))


def _setting(argv, processes: int, threads: int, workdir: Path) -> dict:
    """Run ``processes`` workers of ``threads`` torch threads each, updating at the same time."""
    go = workdir / f"go_{processes}x{threads}"
    workers = []
    for i in range(processes):
        ready, output = workdir / f"ready_{processes}x{threads}_{i}", workdir / f"worker_{processes}x{threads}_{i}.json"
        command = [sys.executable, __file__, *argv, "--threads", str(threads), "--worker", str(ready), str(go), str(output)]
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        workers.append((ready, output, subprocess.Popen(command, env=env)))
    while not all(ready.exists() for ready, _, _ in workers):
        if any(process.poll() not in (None, 0) for _, _, process in workers):
            raise SystemExit(f"a worker of {processes} x {threads} failed")
        time.sleep(0.5)
    go.touch()
    for _, _, process in workers:
        if process.wait() != 0:
            raise SystemExit(f"a worker of {processes} x {threads} failed")
    seconds = [json.loads(output.read_text())["seconds_per_update"] for _, output, _ in workers]
    return {"processes": processes, "torch_threads_each": threads, "seconds_per_update": seconds,
            "updates_per_second": round(sum(1 / s for s in seconds), 3)}


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--worker" in argv:
        at = argv.index("--worker")
        args, overrides_argv = parse_args(argv[:at] + argv[at + 4:])
        _worker(args, overrides_argv, *(Path(p) for p in argv[at + 1:at + 4]))
        return
    args, overrides_argv = parse_args(argv, default_output=REPO / "benchmarks" / "results" / "train_threads.json")
    cores = len(os.sched_getaffinity(0))
    passed = [str(args.config), "--steps", str(args.steps), *overrides_argv]
    with tempfile.TemporaryDirectory() as workdir:
        settings = [_setting(passed, 1, 1, Path(workdir)), _setting(passed, 1, cores, Path(workdir)),
                    _setting(passed, cores, 1, Path(workdir))]
    one = settings[0]["updates_per_second"]
    for setting in settings:
        setting["throughput_vs_one_thread"] = round(setting["updates_per_second"] / one, 3)
    result = {
        "description": "Training updates per second of the machine: one process with 1 or all torch threads, or one single-threaded process per core at once",
        "command": "python benchmarks/train_threads.py " + " ".join(argv),
        "config": str(args.config), "overrides": overrides_argv, "timed_updates": args.steps, "warmup_updates": WARMUP,
        "cores": cores, "settings": settings, "machine": machine(), "versions": versions(),
    }
    from spacy_biolm.run_record import write_json  # stamped with the commit and date of this run (results/README.md)

    write_json(args.output, result, indent=1)
    for setting in settings:
        print(f"{setting['processes']} process(es) x {setting['torch_threads_each']} thread(s): "
              f"{setting['seconds_per_update']} s an update, {setting['updates_per_second']} updates/s "
              f"({setting['throughput_vs_one_thread']}x one thread)")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
