"""Peak memory of `spacy-biolm pretrain run` on a corpus and on the same corpus 10 times over.

The corpus is tokenised into shards on disk and read through memory maps, and batches come from
a permutation computed per index, so peak RSS should not grow with the corpus. Each run (corpus
build + ``--steps`` training steps + export) is its own process; its peak RSS comes from
``wait4`` (this parent stays small and imports no torch, so the child's figure is its own:
ru_maxrss starts from the parent's size at fork).

    python benchmarks/pretrain_memory.py --config configs/pretrain_tiny.cfg \\
        --text corpus/pretraining/text.txt --vocab pretrained/vocab --steps 30

writes ``benchmarks/results/pretrain_memory.json``.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pretraining_inputs import ROOT, add_pretraining_inputs, check_pretraining_inputs


def run_pretraining(config: Path, text: Path, vocab: Path, out: Path, steps: int) -> dict:
    cmd = [sys.executable, "-m", "spacy_biolm", "pretrain", "run", str(config), str(out), "--paths.text", str(text),
           "--paths.vocab", str(vocab), "--training.max_steps", str(steps),
           "--training.checkpoint_every", str(10**9)]
    started = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"pretraining on {text} failed:\n{stderr[-3000:]}")
    meta = json.loads((out / "corpus" / "meta.json").read_text())
    return {
        "text_bytes": text.stat().st_size,
        "sequences": meta["n_sequences"],
        "tokens": meta["n_tokens"],
        "shards": len(meta["shards"]),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "wall_seconds": round(time.time() - started, 1),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_pretraining_inputs(parser)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--factor", type=int, default=10)
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "results" / "pretrain_memory.json")
    args = parser.parse_args(argv)
    check_pretraining_inputs(parser, args)
    work = Path(tempfile.mkdtemp(prefix="pretrain_memory_"))
    try:
        big = work / f"text_x{args.factor}.txt"
        with big.open("wb") as out:
            for _ in range(args.factor):
                with args.text.open("rb") as f:
                    shutil.copyfileobj(f, out)
                out.write(b"\n")
        runs = {
            "1x": run_pretraining(args.config, args.text, args.vocab, work / "run_1x", args.steps),
            f"{args.factor}x": run_pretraining(args.config, big, args.vocab, work / "run_big", args.steps),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    small, large = runs["1x"], runs[f"{args.factor}x"]
    result = {
        "benchmark": "pretrain_memory",
        "config": str(args.config),
        "steps": args.steps,
        "runs": runs,
        "corpus_ratio": round(large["tokens"] / small["tokens"], 2),
        "peak_rss_ratio": round(large["peak_rss_mib"] / small["peak_rss_mib"], 3),
    }
    from spacy_biolm.run_record import write_json  # with the commit and date of this run (results/README.md)

    result = write_json(args.output, result)
    print(
        f"{result['corpus_ratio']}x the tokens: peak RSS {small['peak_rss_mib']:.0f} -> {large['peak_rss_mib']:.0f} MiB "
        f"({result['peak_rss_ratio']}x) -> {args.output}"
    )
    return result


if __name__ == "__main__":
    main()
