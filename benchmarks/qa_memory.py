"""Peak memory and time of a QA pipeline's evaluation with its PairEncoder predicting in one pass
per batch against length-sorted chunks of at most ``max_batch_tokens`` wordpieces.

Each side runs in its own process (``evaluate_qa`` on the same Docs); the peak comes from
``wait4`` (this parent imports no torch). The scores of the two sides must agree, and the report
says whether they do.

    python benchmarks/qa_memory.py --model training/answer_reranker/model-best \\
        --data corpus/qa/reranking/test.spacy --limit 48

writes ``benchmarks/results/qa_memory.json``.
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
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parents[1]
# evaluate_qa's timings: they differ between the two sides; every other number must not.
TIMINGS = ("seconds", "docs_per_second", "questions_per_second")


def evaluate_in_this_process(model: str, data: str, limit: int, budget: Optional[int]) -> Dict:
    """Load ``model``; with ``budget`` set every PairEncoder's ``max_batch_tokens`` (0: one pass);
    evaluate on ``data``; the scores (numbers only) and the pipeline's seconds."""
    from spacy_biolm.evaluation.qa import evaluate_qa
    from spacy_biolm.loading import load_pipeline

    nlp = load_pipeline(model)
    encoders = [node for _, pipe in nlp.pipeline if hasattr(pipe, "model") for node in pipe.model.walk()
                if node.name == "pair_encoder"]
    for node in encoders:
        if budget is not None:
            node.attrs["max_batch_tokens"] = budget
    budgets = [node.attrs.get("max_batch_tokens", 0) for node in encoders]
    if not budgets:
        raise ValueError(f"{model} has no PairEncoder (a QA pipeline: yes_no, answer_span, answer_reranker)")
    scores = evaluate_qa(nlp, data, limit=limit)
    return {"max_batch_tokens": budgets[0], "seconds": round(scores["seconds"], 2), "docs": scores["docs"],
            "scores": {k: v for k, v in scores.items() if isinstance(v, float) and k not in TIMINGS}}


def run_side(args: argparse.Namespace, budget: Optional[int]) -> Dict:
    cmd = [sys.executable, __file__, "--model", str(args.model), "--data", str(args.data), "--limit", str(args.limit),
           "--child"] + ([] if budget is None else ["--budget", str(budget)])
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own peak (Popen.wait would discard it)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise RuntimeError(f"evaluating {args.model} failed:\n{err.read()[-3000:]}")
        out.seek(0)
        result = json.loads(out.read().strip().splitlines()[-1])
    return {**result, "peak_rss_mib": round(usage.ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="A QA pipeline directory (e.g. training/answer_reranker/model-best)")
    parser.add_argument("--data", required=True, help="Its test DocBin (Docs with their question)")
    parser.add_argument("--limit", type=int, default=0, help="Only the first LIMIT Docs (0: all)")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "results" / "qa_memory.json")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(evaluate_in_this_process(str(args.model), str(args.data), args.limit, args.budget)))
        return
    started = time.time()
    one_pass, chunked = run_side(args, 0), run_side(args, None)
    report = {
        "benchmark": "qa_memory",
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "model": str(args.model), "data": str(args.data), "limit": args.limit,
        "cpus": os.cpu_count(), "machine": platform.machine(),
        "runs": {"one pass per batch": one_pass, f"chunks of {chunked['max_batch_tokens']} wordpieces": chunked},
        "peak_rss_ratio_chunked_over_one_pass": round(chunked["peak_rss_mib"] / one_pass["peak_rss_mib"], 3),
        "seconds_ratio_chunked_over_one_pass": round(chunked["seconds"] / max(one_pass["seconds"], 1e-9), 3),
        "same_scores": all(abs(chunked["scores"][k] - v) < 1e-6 for k, v in one_pass["scores"].items()),
        "wall_seconds": round(time.time() - started, 1),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    from spacy_biolm.run_record import stamp_json  # the commit and date of this run (results/README.md)

    report = stamp_json(report)
    args.output.write_text(json.dumps(report, indent=2), encoding="utf8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
