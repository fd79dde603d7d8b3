"""The release with int8 encoders on CPU: speed and entity F1 against the release as shipped.

    python benchmarks/int8.py --pipeline training/release \\
        --entities DISEASE=corpus/ner/NCBI-disease/test.spacy --entities GENE=corpus/ner/BC2GM/test.spacy \\
        --texts corpus/ner/NCBI-disease/test.spacy --n-docs 200 --threads 1

The pipeline is loaded twice in this process, as shipped (float32 compute) and with
``spacy_biolm.loading.load_pipeline(..., int8=True)`` (the encoders' Linear layers dynamically
quantised to int8; ``spacy-biolm annotate --int8``):

* ``words_per_second`` of ``nlp.pipe`` over the first ``--n-docs`` texts of ``--texts`` (the
  default-on components), ``--threads`` torch threads, a warm-up first, the two interleaved, best
  of ``--repeats``; ``int8_speedup`` is the ratio;
* each ``--entities TYPE=DocBin``: F1 on that test set's own type (as the release's table scores
  the ``ner`` components), and its change; ``offered`` says whether every change is ≥ ``--max-drop``
  (the issue's rule: the option is offered when ΔF1 ≥ −0.5).

Writes ``benchmarks/results/int8.json`` and the table of it, ``int8.md``.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

from inference import machine, read_docs, timed_both, versions

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--pipeline", type=Path, required=True, help="a pipeline folder (the release)")
    parser.add_argument("--entities", action="append", default=[], metavar="TYPE=DOCBIN",
                        help="an NER test set scored on its entity type (repeatable)")
    parser.add_argument("--texts", type=Path, required=True, help="DocBin whose texts are timed")
    parser.add_argument("--n-docs", type=int, default=200, help="first N Docs of --texts (0: all)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each (best)")
    parser.add_argument("--max-drop", type=float, default=-0.5, help="the least F1 change (points) the option may cost")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "results" / "int8.json")
    args = parser.parse_args(argv)
    for item in args.entities:
        if "=" not in item:
            parser.error(f"--entities {item!r}: expected TYPE=DOCBIN")
    return args


def entity_f1(nlp, entities) -> dict:
    """``{type: {"test", "p", "r", "f"}}`` (percentages) on each test set, only the components
    that set entities running."""
    from spacy.pipeline import EntityRecognizer

    from spacy_biolm.evaluation.entities import score_entity_types

    keep = {name for name, pipe in nlp.pipeline if isinstance(pipe, EntityRecognizer)} | {"transformer", "sentencizer"}
    scores = {}
    with nlp.select_pipes(enable=[name for name in nlp.pipe_names if name in keep]):
        for entity_type, path in entities:
            result = score_entity_types(nlp, Path(path), [entity_type])
            scores[entity_type] = {"test": str(path), "docs": result["docs"],
                                   **{k: round(100 * result[f"ents_{k}"], 2) for k in ("p", "r", "f")}}
    return scores


def summary_table(result: dict) -> str:
    """The result as the Markdown that benchmarks/README.md includes, with the run's record."""
    from spacy_biolm.evaluation.tables import markdown_table
    from spacy_biolm.run_record import with_run_comment

    speed, f1 = result["speed"], result["entity_f1"]
    rows = [[f"{entity_type} F1 ({Path(scores['test']).parent.name} test)", f"{scores['f']:.1f}",
             f"{f1['int8'][entity_type]['f']:.1f}", f"{result['f1_change'][entity_type]:+.1f}"]
            for entity_type, scores in f1["float32"].items()]
    rows.append([f"words/s, {speed['torch_threads']} torch thread{'' if speed['torch_threads'] == 1 else 's'}", f"{speed['float32_words_per_second']:,.0f}",
                 f"{speed['int8_words_per_second']:,.0f}", f"{speed['int8_speedup']:.2f}x"])
    rule = f"every F1 change ≥ {result['max_drop']}"
    verdict = f"Offered ({rule})." if result["offered"] else f"Not offered as the recommended way ({rule} is the rule)."
    load = result["machine"].get("load_average_at_end", ["?"])[0]
    text = (f"`{result['pipeline']}` as shipped and with int8 encoders ({result['int8_encoders']} quantised), "
            f"{result['machine']['cores']} cores at load average {load} (the two timed in turn, so their ratio holds "
            f"on a busy machine, their words/s less):\n\n"
            + markdown_table(["", "as shipped", "int8", "change"], rows) + f"\n{verdict}\n")
    return with_run_comment(text, result.get("run"))


def main(argv=None) -> None:
    args = parse_args(argv)
    from spacy_biolm.loading import load_pipeline

    pipelines = {"float32": load_pipeline(args.pipeline, threads=args.threads),
                 "int8": load_pipeline(args.pipeline, threads=args.threads, int8=True)}
    texts = [doc.text for doc in read_docs(args.texts, pipelines["float32"].vocab, args.n_docs)]
    words = sum(len(doc) for doc in pipelines["float32"].tokenizer.pipe(texts))
    seconds = {name: float("inf") for name in pipelines}
    for nlp in pipelines.values():  # warm-up
        list(nlp.pipe(texts[:20]))
    for _ in range(args.repeats):
        for name, nlp in pipelines.items():
            elapsed, _ = timed_both(lambda: list(nlp.pipe(texts)))
            seconds[name] = min(seconds[name], elapsed)
    entities = [item.split("=", 1) for item in args.entities]
    f1 = {name: entity_f1(nlp, entities) for name, nlp in pipelines.items()}
    change = {t: round(f1["int8"][t]["f"] - f1["float32"][t]["f"], 2) for t in f1["float32"]}
    result = {
        "description": __doc__.split("\n")[0],
        "command": "python benchmarks/int8.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "pipeline": str(args.pipeline), "components": pipelines["float32"].pipe_names,
        "int8_encoders": pipelines["int8"].meta["int8_encoders"],
        "speed": {"texts": str(args.texts), "docs": len(texts), "words": words, "torch_threads": args.threads,
                  "repeats": args.repeats, "timing": "one process, warm-up first, interleaved, best of the repeats",
                  **{f"{name}_words_per_second": round(words / s, 1) for name, s in seconds.items()},
                  "int8_speedup": round(seconds["float32"] / seconds["int8"], 3)},
        "entity_f1": f1, "f1_change": change, "max_drop": args.max_drop,
        "offered": all(delta >= args.max_drop for delta in change.values()),
        "machine": {**machine(), "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        "versions": versions(), "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    from spacy_biolm.run_record import write_json  # the commit and date of this run (results/README.md)

    result = write_json(args.output, result)
    args.output.with_suffix(".md").write_text(summary_table(result), encoding="utf8")
    print(json.dumps({"speed": result["speed"], "f1_change": change, "offered": result["offered"]}, indent=1))
    print(f"Wrote {args.output}")


if __name__ == "__main__":
    main()
