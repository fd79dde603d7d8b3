"""Pretraining runs side by side: speed, model FLOPs utilisation, held-out losses, downstream scores.

Reads each run's ``pretrain_summary.json`` and ``heldout_log.jsonl`` (what ``spacy-biolm pretrain
run`` writes) and, with ``--ablation``, the encoder ablation's results for the same encoders, and
writes one JSON with a row per run plus one plot of the held-out losses against the WordPieces seen.
For the GPU runs of a lent device:

    python benchmarks/pretrain_runs.py --hardware "one NVIDIA H100 80GB HBM3" \\
        --ablation projects/encoder-ablation/results/encoders_gpu.json --output benchmarks/results/pretrain_gpu.json \\
        minilm_electra_gpu=pretrained/minilm_electra_gpu small_gpu=pretrained/small_gpu
"""

import argparse
import json
from pathlib import Path

from spacy_biolm.pretraining.loop import HELDOUT_LOG_FILE, read_log


def run_row(name: str, run_dir: Path, ablation: dict) -> dict:
    summary = json.loads((run_dir / "pretrain_summary.json").read_text(encoding="utf8"))
    settings_path = run_dir / "model" / "pretraining_settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf8")) if settings_path.is_file() else {}
    training = settings.get("training", {})
    heldout = read_log(run_dir / HELDOUT_LOG_FILE)
    tokens_per_step = training.get("batch_size", 0) * settings.get("corpus", {}).get("max_seq_length", 0)
    row = {
        "name": name, "continued_from": summary.get("continued_from"), "device": summary["device"],
        "steps": summary["steps"], "batch_size": training.get("batch_size"),
        "max_seq_length": settings.get("corpus", {}).get("max_seq_length"),
        "learning_rate": training.get("learning_rate"), "encoder_parameters": summary["encoder_parameters"],
        "corpus_tokens": summary["corpus_tokens"], "seconds": summary["seconds_this_run"],
        "tokens_per_second": summary["tokens_per_second"], "model_flops_utilization": summary.get("model_flops_utilization"),
        "heldout": [{"step": h["step"], "wordpieces_seen": h["step"] * tokens_per_step, "disc_loss": h["disc_loss"],
                     "disc_acc": h["disc_acc"], "disc_recall": h["disc_recall"], "gen_loss": h["gen_loss"]} for h in heldout],
    }
    record = ablation.get("encoders", {}).get(name)
    if record:
        row["downstream_test"] = {task: scores["test"] for task, scores in record["tasks"].items()}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="NAME=RUN_DIR (a pretraining run's output directory)")
    parser.add_argument("--hardware", required=True, help="The machine the runs trained on")
    parser.add_argument("--ablation", type=Path, help="The encoder ablation's results naming the same encoders")
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    ablation = json.loads(args.ablation.read_text(encoding="utf8")) if args.ablation else {}
    rows = [run_row(name, Path(path), ablation) for name, path in (run.split("=", 1) for run in args.runs)]
    reference = ablation.get("reference")
    result = {"hardware": args.hardware, "ablation": str(args.ablation) if args.ablation else None, "runs": rows,
              "reference_downstream_test": {t: s["test"] for t, s in ablation["encoders"][reference]["tasks"].items()}
              if reference in ablation.get("encoders", {}) else None}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    from spacy_biolm.run_record import stamp_json  # the commit and date of this run (results/README.md)

    result = stamp_json(result)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    plot(rows, args.output.with_suffix(".png"))
    print(f"wrote {args.output} and its plot")


def plot(rows: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (rtd, mlm) = plt.subplots(1, 2, figsize=(10, 4))
    for row in rows:
        seen = [h["wordpieces_seen"] / 1e6 for h in row["heldout"]]
        rtd.plot(seen, [h["disc_loss"] for h in row["heldout"]], marker="o", label=row["name"])
        mlm.plot(seen, [h["gen_loss"] for h in row["heldout"]], marker="o", label=row["name"])
    rtd.set(title="held-out replaced-token detection loss", xlabel="WordPieces seen (millions)")
    mlm.set(title="held-out generator masked-LM loss", xlabel="WordPieces seen (millions)")
    rtd.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    main()
