"""Resident memory of a `spacy train` fine-tuning run with and without spacy-biolm.trim_memory.v1.

Runs the same config for the same updates twice, each in its own process: once as configured
(``[training] before_update`` = the trim callback), once with ``before_update = null``. Samples the
child's VmRSS once a second (the curve) and takes its peak from ``wait4``; the two runs' final dev scores
must agree (the callback touches no weight), and the report says whether they do.

    python benchmarks/finetune_memory.py --config configs/ner.cfg --encoder pretrained/encoder/model \\
        --train corpus/ner/BC2GM/train.spacy --dev corpus/ner/BC2GM/devel.spacy --steps 160

writes ``benchmarks/results/finetune_memory.json`` and a plot of RSS over the run beside it.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

from process_memory import proc_status_mib

ROOT = Path(__file__).resolve().parents[1]


def run_training(args: argparse.Namespace, out: Path, trim: bool) -> Dict:
    cmd = [sys.executable, "-m", "spacy", "train", str(args.config), "--output", str(out),
           "--paths.encoder", str(args.encoder), "--paths.train", str(args.train), "--paths.dev", str(args.dev),
           "--corpora.dev.limit", str(args.dev_limit), "--training.max_steps", str(args.steps),
           "--training.eval_frequency", str(args.eval_frequency)]
    if not trim:
        cmd += ["--training.before_update", "null"]
    elif args.interval:  # the whole inline table: spaCy cannot override a key inside one
        cmd += ["--training.before_update", json.dumps({"@callbacks": "spacy-biolm.trim_memory.v1", "interval": args.interval})]
    started = time.time()
    samples: List[List[float]] = []
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            try:
                samples.append([round(time.time() - started, 1), round(proc_status_mib("VmRSS", str(proc.pid)), 1)])
            except RuntimeError:  # it has just exited: a zombie's status has no VmRSS
                pass
            time.sleep(1.0)
        if os.waitstatus_to_exitcode(status) != 0:
            log.seek(0)
            raise RuntimeError(f"spacy train {args.config} failed:\n{log.read()[-3000:]}")
    meta = json.loads((out / "model-last" / "meta.json").read_text())
    return {
        "before_update": "spacy-biolm.trim_memory.v1" if trim else None,
        # The kernel's peak of the child (this parent imports no torch, so it is the child's own).
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "wall_seconds": round(time.time() - started, 1),
        "final_dev_scores": meta.get("performance", {}),
        "rss_mib_over_time": samples,
    }


def plot(report: Dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for name, run in report["runs"].items():
        seconds, rss = zip(*run["rss_mib_over_time"]) if run["rss_mib_over_time"] else ((), ())
        ax.plot(seconds, [r / 1024 for r in rss], label=f"{name} (peak {run['peak_rss_mib'] / 1024:.1f} GiB)")
    ax.set_xlabel("seconds into `spacy train`")
    ax.set_ylabel("resident memory (GiB)")
    ax.set_title(f"{Path(report['config']).name}: {report['steps']} updates")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None) -> Dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "ner.cfg")
    parser.add_argument("--encoder", type=Path, required=True)
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--dev", type=Path, required=True)
    parser.add_argument("--dev-limit", type=int, default=50, help="dev Docs per evaluation (the runs measure training)")
    parser.add_argument("--steps", type=int, default=160)
    parser.add_argument("--eval-frequency", type=int, default=40)
    parser.add_argument("--interval", type=int, default=0, help="the callback's interval (0: the config's)")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "results" / "finetune_memory.json")
    args = parser.parse_args(argv)
    for name in ("config", "encoder", "train", "dev"):
        if not getattr(args, name).exists():
            parser.error(f"--{name} {getattr(args, name)} does not exist")
    with tempfile.TemporaryDirectory(prefix="finetune_memory_") as work:
        trimmed = run_training(args, Path(work) / "trim", trim=True)
        plain = run_training(args, Path(work) / "plain", trim=False)
    # Read only now: spaCy imports torch, and a big parent would raise its children's ru_maxrss.
    from spacy.util import load_config

    interval = args.interval or load_config(args.config)["training"]["before_update"]["interval"]
    runs = {f"trim_memory every {interval} updates": trimmed, "no callback": plain}
    report = {
        "command": "python benchmarks/finetune_memory.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "config": str(args.config),
        "train": str(args.train),
        "steps": args.steps,
        "interval": interval,
        "cpus": os.cpu_count(),
        "torch_threads": os.environ.get("OMP_NUM_THREADS", "default"),
        "machine": platform.machine(),
        "peak_rss_ratio_trim_over_plain": round(trimmed["peak_rss_mib"] / plain["peak_rss_mib"], 3),
        "wall_ratio_trim_over_plain": round(trimmed["wall_seconds"] / plain["wall_seconds"], 3),
        "same_final_dev_scores": trimmed["final_dev_scores"] == plain["final_dev_scores"],
        "runs": runs,
    }
    from spacy_biolm.run_record import write_json  # with the commit and date of this run (results/README.md)

    report = write_json(args.output, report)
    plot(report, args.output.with_suffix(".png"))
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=2))
    return report


if __name__ == "__main__":
    main()
