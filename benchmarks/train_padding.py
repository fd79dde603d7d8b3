"""Training updates with the encoder fed length-sorted chunks against spacy-transformers' padded pass.

    python benchmarks/train_padding.py configs/release_multitask.cfg --steps 8 --threads 2 \\
        --output benchmarks/results/train_padding.json [--paths.encoder ... overrides]

The config's pipeline is initialised from its training corpus, and its first ``--steps`` batches
(the config's own batcher over its own corpus) are updated twice from the same initial weights:
once with ``max_batch_tokens = 0`` (spacy-transformers' TransformerModel.v3 pass, every window of a
batch padded to the longest) and once with the config's ``max_batch_tokens`` (length-sorted chunks,
``spacy-biolm.LengthSortedTransformerModel.v1``). In this one process, settings interleaved, best
of ``--repeats``:

* ``seconds_per_update`` and ``words_per_second`` of ``nlp.update`` on those batches;
* ``computed_per_real_wordpiece``: wordpieces the encoder computes (padding included) per real
  one, from the batches' windows: exact, whatever the machine's load.

Writes ``--output`` (JSON, stamped with the commit and date of the run).
"""

import argparse
import os
import sys
import time
from pathlib import Path

from inference import machine, timed_both, versions

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]


def parse_args(argv=None, default_output: Path = REPO / "benchmarks" / "results" / "train_padding.json"):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", type=Path, help="a training config whose transformer is spacy-biolm.LengthSortedTransformerModel.v1")
    parser.add_argument("--steps", type=int, default=8, help="training batches updated in each timed run")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each setting (best)")
    parser.add_argument("--output", type=Path, default=default_output)
    return parser.parse_known_args(argv)


def _max_batch_tokens(setting: int):
    def apply(model) -> None:
        model.attrs["max_batch_tokens"] = setting
        model.attrs["train_precision"] = "float32"  # the stock pass is float32: compare padding alone
    return apply


def computed_wordpieces(model, docs, budget: int) -> tuple:
    """(real wordpieces, wordpieces the encoder computes) of one batch's windows under ``budget``."""
    import numpy

    from spacy_biolm.encoders.length_sorted import length_sorted_chunks, wordpiece_batch

    spans = [span for doc_spans in model.attrs["get_spans"](docs) for span in doc_spans]
    _, wordpieces = wordpiece_batch(model.tokenizer, [span.doc.text[span.start_char:span.end_char] for span in spans])
    lengths = numpy.asarray(wordpieces.lengths, dtype=numpy.int64)
    if not len(lengths):
        return 0, 0
    if budget <= 0:
        return int(lengths.sum()), int(lengths.max() * len(lengths))
    return int(lengths.sum()), int(sum(lengths[rows].max() * len(rows) for rows in length_sorted_chunks(lengths, budget)))


def training_batches(config_path: Path, overrides_argv, steps: int, threads: int):
    """(nlp, its resolved [training] block, the first ``steps`` training batches, the config
    overrides): the config's pipeline initialised from its training corpus, the batches drawn by
    its own batcher, torch set to ``threads`` threads."""
    import spacy
    import torch
    from spacy.cli._util import parse_config_overrides
    from spacy.training.initialize import init_nlp
    from spacy.util import load_config, registry, resolve_dot_names

    torch.set_num_threads(threads)
    overrides = parse_config_overrides(overrides_argv)
    config = load_config(config_path, overrides=overrides, interpolate=False)
    nlp = init_nlp(config.interpolate())
    resolved = nlp.config.interpolate()
    T = registry.resolve(resolved["training"], schema=spacy.schemas.ConfigSchemaTraining)
    (train_corpus,) = resolve_dot_names(resolved, [T["train_corpus"]])
    batches = []
    for batch in T["batcher"](train_corpus(nlp)):
        batches.append(batch)
        if len(batches) == steps:
            break
    return nlp, T, batches, overrides


def time_updates(nlp, T, batches, settings: dict, repeats: int) -> dict:
    """For each ``name: apply`` of ``settings``, the best wall seconds over ``repeats`` of updating
    ``batches`` from the same initial weights after ``apply(transformer_model)``, and the summed
    losses of the last such run; settings interleaved in one process."""
    initial = nlp.to_bytes()
    report = {name: {"seconds": float("inf")} for name in settings}

    def run(apply) -> dict:
        nlp.from_bytes(initial)
        apply(nlp.get_pipe("transformer").model)
        losses: dict = {}
        for batch in batches:
            nlp.update(batch, sgd=T["optimizer"], drop=T["dropout"], losses=losses)
        return losses

    for _ in range(repeats):
        for name, apply in settings.items():
            losses: dict = {}
            seconds, _ = timed_both(lambda: losses.update(run(apply)))
            report[name]["seconds"] = min(report[name]["seconds"], seconds)
            report[name]["losses"] = {key: round(float(value), 4) for key, value in losses.items()}
    for entry in report.values():
        entry["seconds_per_update"] = round(entry["seconds"] / len(batches), 3)
    return report


def main(argv=None) -> None:
    args, overrides_argv = parse_args(argv)
    nlp, T, batches, overrides = training_batches(args.config, overrides_argv, args.steps, args.threads)
    model = nlp.get_pipe("transformer").model
    budget = model.attrs.get("max_batch_tokens", 0)
    if model.name != "transformer" or not budget:
        raise SystemExit(f"{args.config}: the transformer must be spacy-biolm.LengthSortedTransformerModel.v1 with max_batch_tokens > 0")
    words = sum(len(eg.reference) for batch in batches for eg in batch)
    settings = {"padded (TransformerModel.v3)": 0, "length-sorted chunks": budget}
    timings = time_updates(nlp, T, batches, {name: _max_batch_tokens(setting) for name, setting in settings.items()},
                           args.repeats)
    report = {}
    for name, setting in settings.items():
        real = computed = 0
        for batch in batches:
            counts = computed_wordpieces(model, [eg.predicted for eg in batch], setting)
            real, computed = real + counts[0], computed + counts[1]
        report[name] = {"max_batch_tokens": setting, "real_wordpieces": real, "computed_wordpieces": computed,
                        "computed_per_real_wordpiece": round(computed / max(real, 1), 3),
                        "seconds": timings[name]["seconds"], "seconds_per_update": timings[name]["seconds_per_update"],
                        "words_per_second": round(words / timings[name]["seconds"], 1)}
    padded, sorted_ = report["padded (TransformerModel.v3)"], report["length-sorted chunks"]
    result = {
        "description": "Training updates with the encoder fed length-sorted chunks against spacy-transformers' padded pass, same batches and initial weights",
        "command": "python benchmarks/train_padding.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "config": str(args.config), "overrides": overrides, "updates": len(batches), "words": words,
        "torch_threads": args.threads, "repeats": args.repeats,
        "timing": "one process, settings interleaved, each from the same initial weights, best of the repeats",
        "settings": report,
        "speedup": round(padded["seconds"] / sorted_["seconds"], 3),
        "machine": machine(), "versions": versions(),
    }
    from spacy_biolm.run_record import write_json  # stamped with the commit and date of this run (results/README.md)

    write_json(args.output, result, indent=1)
    for name, entry in report.items():
        print(f"{name}: {entry['seconds_per_update']} s an update, {entry['words_per_second']} words/s, "
              f"{entry['computed_per_real_wordpiece']} wordpieces computed per real one")
    print(f"speed-up {result['speedup']}x; wrote {args.output}")


if __name__ == "__main__":
    main()
