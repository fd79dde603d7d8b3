"""The release's CPU inference with an encoder per task against one shared encoder.

    python benchmarks/release_encoders.py --pipeline "an encoder per task=training/release" \\
        --pipeline "one encoder=training/release_one_encoder" \\
        --texts corpus/ner/NCBI-disease/test.spacy --n-docs 200 --threads 2

For each pipeline, its default-on components (sentencizer, transformer and the heads: NER,
relations, hallmarks) over the texts of the first ``--n-docs`` Docs of ``--texts``, in
this one process with ``--threads`` torch threads, after a warm-up, pipelines interleaved, best of
``--repeats``:

* ``words_per_second`` of ``nlp.pipe(texts)`` (words: the pipeline tokenizer's tokens);
* ``encoders``: the distinct HF encoders its components run, and the real (unpadded) wordpieces
  each read, recorded with forward pre-hooks; ``encoder_passes_per_token``: all of them over those
  of its ``transformer`` (1.0 when one encoder serves every component; the anonymised relation
  extractor adds a pass per entity pair);
* ``raw_forward``: its ``transformer``'s encoder as a plain ``AutoModel`` (eval,
  ``torch.inference_mode()``) on exactly the batches the pipeline fed it, tokenisation excluded;
  ``pipeline_over_raw_forward`` is the issue's target (≥ 0.85): the whole pipeline against one
  forward of its encoder.

Writes ``benchmarks/results/release_encoders.json``.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from inference import export_encoder, machine, read_docs, run_raw, timed_both, versions

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
TARGET = 0.85


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline", action="append", required=True, metavar="NAME=DIR",
                        help="a release pipeline directory under a name (repeatable)")
    parser.add_argument("--texts", type=Path, required=True, help="DocBin whose texts are processed")
    parser.add_argument("--n-docs", type=int, default=200, help="first N Docs of --texts (0: all)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each pipeline (best)")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "results" / "release_encoders.json")
    return parser.parse_args(argv)


def record_encoder_reads(nlp, texts):
    """Run the pipeline once; return (wordpieces each encoder read, by encoder, the batches its
    ``transformer`` got)."""
    from spacy_biolm.training.shared_encoder import pipeline_encoders

    shared = nlp.get_pipe("transformer").model.transformer
    encoders = pipeline_encoders(nlp)
    reads = {id(e): 0 for e in encoders}
    batches, handles = [], []

    def hook(module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        mask = kwargs.get("attention_mask")
        reads[id(module)] += int(mask.sum()) if mask is not None else int(ids.numel())
        if module is shared:
            batches.append({k: v.detach().clone() for k, v in kwargs.items()})

    for encoder in encoders:
        handles.append(encoder.register_forward_pre_hook(hook, with_kwargs=True))
    try:
        list(nlp.pipe(texts))
    finally:
        for handle in handles:
            handle.remove()
    return [{"class": type(e).__name__, "parameters": sum(p.numel() for p in e.parameters()),
             "is_transformer": e is shared, "wordpieces": reads[id(e)]} for e in encoders], batches


def main(argv=None) -> None:
    args = parse_args(argv)
    import spacy
    import torch
    from transformers import AutoModel

    torch.set_num_threads(args.threads)
    named = dict(item.split("=", 1) for item in args.pipeline)
    pipelines, report = {}, {}
    with tempfile.TemporaryDirectory() as workdir:
        for name, path in named.items():
            nlp = spacy.load(path)
            texts = [d.text for d in read_docs(args.texts, nlp.vocab, args.n_docs)]
            encoders, batches = record_encoder_reads(nlp, texts)
            raw = AutoModel.from_pretrained(export_encoder(nlp, Path(workdir) / name.replace(" ", "_"))).eval()
            words = sum(len(doc) for doc in nlp.tokenizer.pipe(texts))
            shared_reads = sum(e["wordpieces"] for e in encoders if e["is_transformer"])
            pipelines[name] = (nlp, texts, raw, batches)
            report[name] = {"pipeline": str(path), "components": nlp.pipe_names, "docs": len(texts), "words": words,
                            "encoders": encoders,
                            "encoder_passes_per_token": round(sum(e["wordpieces"] for e in encoders) / max(shared_reads, 1), 3),
                            "seconds": float("inf"), "raw_forward_seconds": float("inf")}
        for nlp, texts, raw, batches in pipelines.values():  # warm-up
            list(nlp.pipe(texts[:20]))
            run_raw(raw, batches[:2])
        for _ in range(args.repeats):
            for name, (nlp, texts, raw, batches) in pipelines.items():
                seconds, _ = timed_both(lambda: list(nlp.pipe(texts)))
                raw_seconds, _ = timed_both(lambda: run_raw(raw, batches))
                report[name]["seconds"] = min(report[name]["seconds"], seconds)
                report[name]["raw_forward_seconds"] = min(report[name]["raw_forward_seconds"], raw_seconds)
    for entry in report.values():
        entry["words_per_second"] = round(entry["words"] / entry["seconds"], 1)
        entry["raw_forward_words_per_second"] = round(entry["words"] / entry["raw_forward_seconds"], 1)
        entry["pipeline_over_raw_forward"] = round(entry["raw_forward_seconds"] / entry["seconds"], 3)
        entry["meets_target"] = entry["pipeline_over_raw_forward"] >= TARGET
    result = {
        "description": "The release's default-on components on CPU: words/s against one raw forward of its transformer's encoder, and the encoder passes per token",
        "command": "python benchmarks/release_encoders.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "texts": str(args.texts), "torch_threads": args.threads, "repeats": args.repeats,
        "timing": "one process, warm-up first, pipelines interleaved, best of the repeats",
        "target_pipeline_over_raw_forward": TARGET,
        "pipelines": report, "machine": machine(), "versions": versions(),
        "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    from spacy_biolm.run_record import stamp_json  # the commit and date of this run (results/README.md)

    result = stamp_json(result)
    args.output.write_text(json.dumps(result, indent=1), encoding="utf8")
    for name, entry in report.items():
        print(f"{name}: {entry['words_per_second']} words/s, {entry['pipeline_over_raw_forward']}x its encoder's raw "
              f"forward, {entry['encoder_passes_per_token']} encoder passes per token ({len(entry['encoders'])} encoders)")
    print(f"Wrote {args.output}")


if __name__ == "__main__":
    main()
