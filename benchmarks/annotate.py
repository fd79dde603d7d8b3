"""Corpus annotation throughput on CPU: documents/second of `spacy-biolm annotate` on one machine and on Ray.

    python benchmarks/annotate.py --pipeline training/release --n-docs 2000 --shards 8
    python benchmarks/annotate.py --encoder pretrained/tiny/model --train corpus/ner/NCBI-disease/train.spacy

The pipeline is a trained one (``--pipeline``: the release that ``make all`` builds) or
configs/ner.cfg on ``--encoder``, initialised on Docs of ``--train`` (untrained weights: speed does
not depend on them), saved to a folder that every runner loads. The input is the first
``--n-docs`` PubMed abstracts of ``--abstracts`` (a text file with one a line, or a CSV with an
``abstract`` column), cut into ``--shards`` plain-text shards. In one run, on the same input,
each into a fresh output folder, every process with one torch thread:

* ``pipe_1_process``: the single-machine runner in this process;
* ``pipe_n_process``: the same with ``--n-process`` worker processes (each annotating whole
  shards, spacy_biolm/annotate/runner.py);
* ``ray_workers``: the Ray runner, a local runtime with ``--workers`` actors (one CPU each).

Every figure is end to end, as a user sees it: from the call until the last shard is in place,
pipeline loading and (for Ray) starting the runtime and its actors included. All outputs must be
byte-identical (``same_output``). The load average is recorded before and after: the speed-ups
mean something only on an otherwise idle machine. Writes ``benchmarks/results/annotate.json`` and the table of it, ``annotate.md``.
"""

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
RUNNERS = ("pipe_1_process", "pipe_n_process", "ray_workers")
ABSTRACTS = REPO.parent / "shared" / "data" / "pretraining" / "pubmed_abstracts_jsc370" / "pubmed.csv"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pipeline", type=Path, help="a trained pipeline folder")
    source.add_argument("--encoder", type=Path, help="an HF encoder directory: configs/ner.cfg is built on it")
    parser.add_argument("--train", type=Path, help="DocBin with entities to initialise ner (with --encoder)")
    parser.add_argument("--init-docs", type=int, default=64)
    parser.add_argument("--abstracts", type=Path, default=ABSTRACTS,
                        help="text file, one abstract a line, or CSV with an 'abstract' column")
    parser.add_argument("--n-docs", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--n-process", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--runners", nargs="+", choices=RUNNERS, default=list(RUNNERS),
                        help="the runs to time (default all three)")
    parser.add_argument("--output", type=Path, default=RESULTS / "annotate.json")
    args = parser.parse_args(argv)
    if args.encoder and not args.train:
        parser.error("--encoder needs --train (Docs with entities to initialise the ner component)")
    if "pipe_1_process" not in args.runners:
        parser.error("--runners must include pipe_1_process (the reference of the speedups and of same_output)")
    return args


def read_abstracts(path: Path) -> list:
    """The abstracts of a text file (one a line) or a CSV (its ``abstract`` column), on one line each."""
    if path.suffix == ".csv":
        import csv

        with path.open(encoding="utf8", newline="") as handle:
            texts = [row["abstract"] for row in csv.DictReader(handle)]
    else:
        texts = path.read_text(encoding="utf8").splitlines()
    return [" ".join(text.split()) for text in texts if text.strip()]


def write_shards(abstracts: Path, n_docs: int, n_shards: int, folder: Path) -> int:
    lines = read_abstracts(abstracts)[:n_docs]
    if not lines:
        raise SystemExit(f"{abstracts}: no abstracts")
    folder.mkdir(parents=True)
    per_shard = -(-len(lines) // n_shards)
    for i in range(0, len(lines), per_shard):
        (folder / f"abstracts{i // per_shard:03d}.txt").write_text("\n".join(lines[i:i + per_shard]) + "\n",
                                                                    encoding="utf8")
    return len(lines)


RUNNER_NAMES = {"pipe_1_process": "one process", "pipe_n_process": "`--n-process {n_process}` (forked workers, whole shards)",
                "ray_workers": "Ray, {workers} actors (`--ray --workers {workers}`)"}


def summary_table(report: dict) -> str:
    """The report as the Markdown that benchmarks/README.md includes, with the run's record."""
    from spacy_biolm.evaluation.tables import markdown_table
    from spacy_biolm.run_record import with_run_comment

    machine, source = report["machine"], report["input"]
    rows = [[RUNNER_NAMES[name].format(**config), f"{config['docs_per_second']:.1f}", f"{config['seconds']:.1f}",
             f"{report['speedup_over_1_process'][name]:.2f}x"] for name, config in report["configs"].items()]
    text = (f"`{report['pipeline']}` on {source['documents']:,} PubMed abstracts ({source['characters']:,} characters, "
            f"{source['shards']} shards), one torch thread per process, {machine['cores']} cores, load average "
            f"{machine['load_average_at_start'][0]} before and {machine.get('load_average_at_end', ['?'])[0]} after; "
            f"end to end, loading included:\n\n"
            + markdown_table(["runner", "docs/s", "seconds", "speed-up"], rows)
            + f"\nByte-identical output of all: {'yes' if report['same_output'] else 'NO'}.\n")
    return with_run_comment(text, report.get("run"))


def outputs(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def main(argv=None) -> None:
    args = parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import torch

    from spacy_biolm.annotate import annotate
    from spacy_biolm.annotate.ray_runner import annotate_on_ray

    torch.set_num_threads(1)  # every process of every runner: one torch thread
    load_average = [round(x, 2) for x in os.getloadavg()]
    work = Path(tempfile.mkdtemp(prefix="bench_annotate_"))
    try:
        if args.pipeline:
            pipeline = args.pipeline
        else:
            from inference import build_pipeline

            pipeline = work / "pipeline"
            build_pipeline(args.encoder, args.train, args.init_docs).to_disk(pipeline)
        docs = write_shards(args.abstracts, args.n_docs, args.shards, work / "input")
        runs = {
            "pipe_1_process": lambda out: annotate([work / "input"], out, pipeline, batch_size=args.batch_size, threads=1,
                                                   show_progress=False),
            "pipe_n_process": lambda out: annotate([work / "input"], out, pipeline, batch_size=args.batch_size,
                                                   n_process=args.n_process, show_progress=False),
            "ray_workers": lambda out: annotate_on_ray([work / "input"], out, pipeline, workers=args.workers,
                                                       batch_size=args.batch_size, show_progress=False),
        }
        configs, written = {}, {}
        for name in args.runners:
            run = runs[name]
            out = work / f"out_{name}"
            started = time.perf_counter()
            summary = run(out)
            seconds = time.perf_counter() - started
            written[name] = outputs(out)
            configs[name] = {"seconds": round(seconds, 3), "docs_per_second": round(docs / seconds, 1),
                             "documents": summary["documents"], "shards": summary["shards_written"]}
            print(f"{name}: {docs / seconds:.1f} docs/s ({seconds:.1f} s)", flush=True)
        records = [json.loads(line) for data in written["pipe_1_process"].values() for line in data.splitlines()]
        entities = sum(len(r["entities"]) for r in records)
        characters = sum(len(r["text"]) for r in records)
        for name, key, value in (("pipe_n_process", "n_process", args.n_process), ("ray_workers", "workers", args.workers)):
            if name in configs:
                configs[name][key] = value
        first = configs["pipe_1_process"]["docs_per_second"]
        report = {
            "description": __doc__.split("\n")[0],
            "command": "python benchmarks/annotate.py " + " ".join(sys.argv[1:] if argv is None else argv),
            "pipeline": str(args.pipeline) if args.pipeline else f"configs/ner.cfg on {args.encoder} (untrained ner)",
            "input": {"abstracts": str(args.abstracts), "documents": docs, "shards": args.shards,
                      "characters": characters, "entities_found": entities},
            "batch_size": args.batch_size,
            "torch_threads_per_process": 1,
            "timing": "end to end, one run each, in this order: pipeline loading, worker processes and the Ray "
                      "runtime's start included",
            "configs": configs,
            "speedup_over_1_process": {name: round(c["docs_per_second"] / first, 3) for name, c in configs.items()},
            "same_output": all(w == written["pipe_1_process"] for w in written.values()),
            "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                        "python": platform.python_version(), "load_average_at_start": load_average,
                        "load_average_at_end": [round(x, 2) for x in os.getloadavg()]},
        }
        from spacy_biolm.run_record import write_json  # with the commit and date of this run (results/README.md)

        report = write_json(args.output, report)
        args.output.with_suffix(".md").write_text(summary_table(report), encoding="utf8")
        print(json.dumps(report["speedup_over_1_process"]), f"same_output={report['same_output']}")
        print(f"wrote {args.output}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
