"""Training updates with the encoder's forward in bfloat16 autocast against float32.

    python benchmarks/train_precision.py configs/release_multitask.cfg --steps 8 --threads 2 \\
        --output benchmarks/results/train_precision.json [--paths.encoder ... overrides]

The config's pipeline is initialised from its training corpus, and its first ``--steps`` batches
(the config's own batcher over its own corpus) are updated from the same initial weights with the
transformer's ``train_precision`` set to ``float32`` and to ``bfloat16``
(``spacy-biolm.LengthSortedTransformerModel.v1``, spacy_biolm/encoders/precision.py). In this one
process, settings interleaved, best of ``--repeats``: ``seconds_per_update`` and
``words_per_second`` of ``nlp.update``, and each component's summed loss over the updates (the
two precisions should train alike). Whether the CPU computes bfloat16 natively (AMX, AVX512-BF16)
is recorded: without it the bfloat16 setting trains in float32.

Writes ``--output`` (JSON, stamped with the commit and date of the run).
"""

import sys

from inference import machine, versions
from train_padding import REPO, parse_args as padding_args, time_updates, training_batches

PRECISIONS = ("float32", "bfloat16")


def _train_precision(precision: str):
    def apply(model) -> None:
        model.attrs["train_precision"] = precision
    return apply


def main(argv=None) -> None:
    args, overrides_argv = padding_args(argv, default_output=REPO / "benchmarks" / "results" / "train_precision.json")
    nlp, T, batches, overrides = training_batches(args.config, overrides_argv, args.steps, args.threads)
    model = nlp.get_pipe("transformer").model
    if "train_precision" not in model.attrs:
        raise SystemExit(f"{args.config}: the transformer must be spacy-biolm.LengthSortedTransformerModel.v1")
    from spacy_biolm.encoders.devices import module_device
    from spacy_biolm.encoders.precision import native_bfloat16

    words = sum(len(eg.reference) for batch in batches for eg in batch)
    report = time_updates(nlp, T, batches, {precision: _train_precision(precision) for precision in PRECISIONS},
                          args.repeats)
    for entry in report.values():
        entry["words_per_second"] = round(words / entry["seconds"], 1)
    result = {
        "description": "Training updates with the encoder's forward in bfloat16 autocast against float32, same batches and initial weights",
        "command": "python benchmarks/train_precision.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "config": str(args.config), "overrides": overrides, "updates": len(batches), "words": words,
        "torch_threads": args.threads, "repeats": args.repeats,
        "native_bfloat16": native_bfloat16(module_device(model.transformer)),
        "timing": "one process, settings interleaved, each from the same initial weights, best of the repeats",
        "settings": report,
        "speedup": round(report["float32"]["seconds"] / report["bfloat16"]["seconds"], 3),
        "machine": machine(), "versions": versions(),
    }
    from spacy_biolm.run_record import write_json  # stamped with the commit and date of this run (results/README.md)

    write_json(args.output, result, indent=1)
    for name, entry in report.items():
        print(f"{name}: {entry['seconds_per_update']} s an update, {entry['words_per_second']} words/s, losses {entry['losses']}")
    print(f"speed-up {result['speedup']}x (native bfloat16: {result['native_bfloat16']}); wrote {args.output}")


if __name__ == "__main__":
    main()
