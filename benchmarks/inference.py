"""NER inference on CPU: words/second and peak memory of the pipeline against its raw encoder.

    python benchmarks/inference.py --pipeline training/ner/model-best \\
        --texts corpus/ner/NCBI-disease/test.spacy --threads 2
    python benchmarks/inference.py --encoder pretrained/tiny/model \\
        --train corpus/ner/NCBI-disease/train.spacy --texts corpus/ner/NCBI-disease/test.spacy

The pipeline is either a trained one (``--pipeline``) or configs/ner.cfg built on ``--encoder``
and initialised on the first ``--init-docs`` Docs of ``--train`` (untrained weights: speed does not
depend on them). Nothing comes from a model hub. The texts are those of the Docs in ``--texts``
(the first ``--n-docs``); words are the pipeline tokenizer's tokens. All timings run in this one
process with ``--threads`` torch threads, after a warm-up, configurations interleaved, best of
``--repeats``:

* ``pipeline``: ``nlp.pipe(texts)`` (BioTokenizer + transformer + ner), the user's path;
* ``pipeline_stock``: the same pipeline with spacy-transformers' stock prediction batching
  (TransformerModel.v3's pass: ``max_batch_tokens`` 0, ``nlp.batch_size`` 64,
  ``max_batch_items`` 4096), i.e. configs/ner.cfg before the length-sorted batches;
* ``raw_forward`` / ``raw_forward_stock``: ``AutoModel`` loaded from the pipeline's encoder
  (exported to a directory), eval mode, ``torch.inference_mode()``, on exactly the padded
  wordpiece batches that pipeline fed its encoder (recorded with a forward pre-hook):
  tokenisation excluded;
* ``raw_tokenize``: the HF fast tokenizer on the same windows' texts in the same groups; the
  ratio ``pipeline_over_raw_forward_plus_tokenize`` counts it in the reference;
  ``ratios_cpu``: the same ratios on the CPU seconds this process spent (``cpu_seconds``), which a
  loaded machine disturbs less than the wall clock;
* ``bert_base_pipeline``: the same config on a randomly initialised BERT of bert-base size
  (``--big-*``; our tokenizer), ner initialised untrained, ``--big-repeats`` runs.

Stage times (tokenizer, transformer, ner) of both tiny pipelines say where the time goes. Peak
memory: each configuration runs once more in a fresh subprocess (load + one pass over the
texts); ``peak_rss_mib`` is that process's peak resident set (VmHWM), ``loaded_rss_mib`` its RSS
before the pass. ``n_process``: ``nlp.pipe(texts, n_process=2)`` must give the entities of ``n_process=1``.

Writes ``benchmarks/results/inference_cpu.json`` and a bar chart beside it (``.png``).
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from process_memory import proc_status_mib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The timed runs tokenise before the n_process fork and the memory subprocesses: keep HF tokenizers
# single-threaded so that the forks neither warn nor change what is timed.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
STOCK = {"max_batch_tokens": 0, "batch_size": 64, "max_batch_items": 4096}  # spacy-transformers' defaults
TARGETS = {"pipeline_over_raw_forward": 0.85, "small_over_bert_base_pipeline": 6.0}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pipeline", type=Path, help="a trained NER pipeline directory (transformer + ner)")
    source.add_argument("--encoder", type=Path, help="an HF encoder directory: configs/ner.cfg is built on it")
    parser.add_argument("--train", type=Path, help="DocBin with entities to initialise ner (needed with --encoder; "
                        "with --pipeline it initialises the BERT-base-sized pipeline's ner, default --texts)")
    parser.add_argument("--init-docs", type=int, default=64, help="Docs of --train used to initialise")
    parser.add_argument("--texts", type=Path, required=True, help="DocBin whose texts are processed")
    parser.add_argument("--n-docs", type=int, default=0, help="first N Docs of --texts (0: all)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each tiny configuration (best)")
    parser.add_argument("--big-repeats", type=int, default=1, help="timed runs of the BERT-base-sized pipeline")
    parser.add_argument("--big-layers", type=int, default=12)
    parser.add_argument("--big-hidden", type=int, default=768)
    parser.add_argument("--big-heads", type=int, default=12)
    parser.add_argument("--big-ffn", type=int, default=3072)
    parser.add_argument("--n-process", type=int, default=2, help="processes of the n_process check")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-RSS subprocesses")
    parser.add_argument("--output", type=Path, default=RESULTS / "inference_cpu.json")
    # Internal: a memory-measuring child (one configuration, one pass, prints JSON).
    parser.add_argument("--child", choices=["pipeline", "pipeline_stock", "raw_forward", "bert_base_pipeline"],
                        help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.encoder and not args.train and not args.child:
        parser.error("--encoder needs --train (Docs with entities to initialise the ner component)")
    return args


def read_docs(path: Path, vocab, limit: int = 0):
    from spacy.tokens import DocBin

    if not path.exists():
        raise SystemExit(f"{path}: no such DocBin")
    docs = list(DocBin().from_disk(path).get_docs(vocab))
    return docs[:limit] if limit else docs


def build_pipeline(encoder: Path, train: Path, init_docs: int):
    """configs/ner.cfg on ``encoder``, initialised (not trained) on Docs of ``train``."""
    import spacy
    from spacy.training import Example

    config = spacy.util.load_config(REPO / "configs" / "ner.cfg", overrides={"paths.encoder": str(encoder)},
                                    interpolate=True)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    golds = read_docs(train, nlp.vocab, init_docs)
    if not any(d.ents for d in golds):
        raise SystemExit(f"{train}: the first {init_docs} Docs have no entities to initialise ner with")
    nlp.initialize(lambda: [Example(nlp.make_doc(d.text), d) for d in golds])
    return nlp


def export_encoder(nlp, out: Path) -> Path:
    """The pipeline's HF encoder and tokenizer as a directory (the raw reference loads it)."""
    model = nlp.get_pipe("transformer").model
    model.transformer.save_pretrained(out)
    model.tokenizer.save_pretrained(out)
    return out


def make_bert_base_sized(tokenizer_dir: Path, out: Path, args) -> Path:
    """A randomly initialised BERT with the --big-* sizes, saved with our tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=args.big_hidden, num_hidden_layers=args.big_layers,
                        num_attention_heads=args.big_heads, intermediate_size=args.big_ffn,
                        max_position_embeddings=512, pad_token_id=tokenizer.pad_token_id)
    BertModel(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def set_batching(nlp, max_batch_tokens: int, batch_size: int, max_batch_items: int) -> None:
    transformer = nlp.get_pipe("transformer")
    transformer.model.attrs["max_batch_tokens"] = max_batch_tokens
    transformer.cfg["max_batch_items"] = max_batch_items
    nlp.batch_size = batch_size


def batching(nlp) -> dict:
    transformer = nlp.get_pipe("transformer")
    return {"max_batch_tokens": transformer.model.attrs.get("max_batch_tokens", 0),
            "batch_size": nlp.batch_size, "max_batch_items": transformer.cfg["max_batch_items"]}


def record_encoder_inputs(nlp, texts):
    """Run the pipeline once; return the entities and every input batch its encoder got."""
    hf_model = nlp.get_pipe("transformer").model.transformer
    batches = []

    def keep(module, args, kwargs):
        batches.append({k: v.detach().clone() for k, v in kwargs.items()})

    handle = hf_model.register_forward_pre_hook(keep, with_kwargs=True)
    try:
        entities = [[(e.start, e.end, e.label_) for e in doc.ents] for doc in nlp.pipe(texts)]
    finally:
        handle.remove()
    return entities, batches


def window_texts(nlp, texts):
    """The windows' texts of each nlp.pipe batch, as the transformer cuts them."""
    from spacy.util import minibatch

    get_spans = nlp.get_pipe("transformer").model.attrs["get_spans"]
    return [[span.text for spans in get_spans([nlp.make_doc(t) for t in group]) for span in spans]
            for group in minibatch(texts, nlp.batch_size)]


def run_raw(model, batches) -> None:
    import torch

    with torch.inference_mode():
        for batch in batches:
            model(**batch)


def run_tokenize(tokenizer, groups) -> None:
    for group in groups:
        tokenizer(group, padding="longest", return_tensors="pt")


def stage_seconds(nlp, texts) -> dict:
    """Seconds of each stage of nlp.pipe over the texts (the stages run one after another)."""
    started = time.perf_counter()
    docs = [nlp.make_doc(t) for t in texts]
    seconds = {"tokenizer": time.perf_counter() - started}
    for name, component in nlp.pipeline:
        started = time.perf_counter()
        docs = list(component.pipe(docs, batch_size=nlp.batch_size))
        seconds[name] = time.perf_counter() - started
    return seconds


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def timed_both(fn) -> tuple:
    """(wall seconds, CPU seconds of this process: all its threads)."""
    started, cpu_started = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - started, time.process_time() - cpu_started


def child_main(args) -> None:
    """One configuration, one pass, in a fresh process: print loaded and peak RSS (MiB)."""
    import spacy
    import torch

    torch.set_num_threads(args.threads)
    texts = json.loads((args.workdir / "texts.json").read_text())
    if args.child == "raw_forward":
        from transformers import AutoModel

        model = AutoModel.from_pretrained(args.workdir / "encoder").eval()
        batches = torch.load(args.workdir / "batches.pt")
        work = lambda: run_raw(model, batches)  # noqa: E731
    else:
        nlp = spacy.load(args.workdir / ("bert_base_pipeline" if args.child == "bert_base_pipeline" else "pipeline"))
        if args.child == "pipeline_stock":
            set_batching(nlp, **STOCK)
        work = lambda: list(nlp.pipe(texts))  # noqa: E731
    loaded = proc_status_mib("VmRSS")
    work()
    print(json.dumps({"loaded_rss_mib": round(loaded, 1), "peak_rss_mib": round(proc_status_mib("VmHWM"), 1)}))


def measure_memory(args, workdir: Path, name: str) -> dict:
    cmd = [sys.executable, __file__, "--child", name, "--workdir", str(workdir), "--texts", str(args.texts),
           "--threads", str(args.threads), "--encoder", str(workdir / "encoder")]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"memory run of {name} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def encoder_summary(model) -> dict:
    config = model.config
    return {"model_type": config.model_type, "layers": config.num_hidden_layers, "hidden": config.hidden_size,
            "heads": config.num_attention_heads, "ffn": config.intermediate_size,
            "parameters": sum(p.numel() for p in model.parameters())}


def padding_summary(batches) -> dict:
    padded = sum(int(b["input_ids"].numel()) for b in batches)
    real = sum(int(b["attention_mask"].sum()) for b in batches)
    return {"encoder_calls": len(batches), "padded_wordpieces": padded, "real_wordpieces": real,
            "padding_factor": round(padded / max(real, 1), 3)}


def versions() -> dict:
    import importlib.metadata as md

    return {name: md.version(name) for name in
            ("torch", "transformers", "spacy", "spacy-transformers", "thinc", "tokenizers", "spacy-biolm")}


def machine() -> dict:
    return {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "platform": platform.platform(), "python": platform.python_version(),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def plot(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["configs"])
    speeds = [report["configs"][n]["words_per_second"] for n in names]
    fig, ax = plt.subplots(figsize=(8, 4))
    bars = ax.barh(names[::-1], speeds[::-1], color="#4c72b0")
    ax.bar_label(bars, labels=[f"{s:,.0f}" for s in speeds[::-1]], padding=3, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel(f"words / second (CPU, {report['torch_threads']} torch threads, log scale)")
    ratios = report["ratios"]
    ax.set_title(f"NER inference, {report['words']:,} words: pipeline {ratios['pipeline_over_raw_forward']}x raw "
                 f"forward, {ratios['small_over_bert_base_pipeline']}x BERT-base-sized", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.child:
        return child_main(args)
    workdir = Path(tempfile.mkdtemp(prefix="bench_inference_"))
    try:
        benchmark(args, workdir, argv)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)  # exported encoders: up to ~1 GB


def benchmark(args, workdir: Path, argv=None) -> None:
    import spacy
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(args.threads)
    load_average = machine()
    if args.pipeline:
        nlp = spacy.load(args.pipeline)
    else:
        nlp = build_pipeline(args.encoder, args.train, args.init_docs)
    if "max_batch_tokens" not in nlp.get_pipe("transformer").model.attrs:
        raise SystemExit("the pipeline's transformer is not spacy-biolm.LengthSortedTransformerModel.v1 "
                         "(configs/ner.cfg): its stock batching would be compared with itself")
    ours = batching(nlp)
    texts = [d.text for d in read_docs(args.texts, nlp.vocab, args.n_docs)]
    words = sum(len(nlp.make_doc(t)) for t in texts)
    (workdir / "texts.json").write_text(json.dumps(texts))
    print(f"{len(texts)} texts, {words} words; work files in {workdir}", flush=True)

    encoder_dir = export_encoder(nlp, workdir / "encoder")
    raw_model = AutoModel.from_pretrained(encoder_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
    nlp.to_disk(workdir / "pipeline")
    big_nlp = build_pipeline(make_bert_base_sized(encoder_dir, workdir / "bert_base_encoder", args),
                             args.train or args.texts, args.init_docs)
    big_nlp.to_disk(workdir / "bert_base_pipeline")

    # Record what each tiny pipeline feeds its encoder (this is also the warm-up).
    entities, batches, windows = {}, {}, {}
    for name, settings in (("pipeline", ours), ("pipeline_stock", STOCK)):
        set_batching(nlp, **settings)
        entities[name], batches[name] = record_encoder_inputs(nlp, texts)
        windows[name] = window_texts(nlp, texts)
    torch.save(batches["pipeline"], workdir / "batches.pt")
    run_raw(raw_model, batches["pipeline"][:4])
    list(big_nlp.pipe(texts[:16]))

    work = {
        "pipeline": (lambda: (set_batching(nlp, **ours), list(nlp.pipe(texts)))),
        "pipeline_stock": (lambda: (set_batching(nlp, **STOCK), list(nlp.pipe(texts)))),
        "raw_forward": (lambda: run_raw(raw_model, batches["pipeline"])),
        "raw_forward_stock": (lambda: run_raw(raw_model, batches["pipeline_stock"])),
        "raw_tokenize": (lambda: run_tokenize(tokenizer, windows["pipeline"])),
    }
    best = {name: float("inf") for name in work}
    best_cpu = {name: float("inf") for name in work}
    for repeat in range(args.repeats):
        for name, fn in work.items():
            wall, cpu = timed_both(fn)
            best[name], best_cpu[name] = min(best[name], wall), min(best_cpu[name], cpu)
        print(f"repeat {repeat + 1}/{args.repeats}: " + ", ".join(f"{k} {v:.2f}s" for k, v in best.items()), flush=True)
    best["bert_base_pipeline"] = min(timed(lambda: list(big_nlp.pipe(texts))) for _ in range(args.big_repeats))
    print(f"bert_base_pipeline {best['bert_base_pipeline']:.2f}s", flush=True)

    stages = {}
    for name, settings in (("pipeline", ours), ("pipeline_stock", STOCK)):
        set_batching(nlp, **settings)
        stages[name] = {k: round(v, 3) for k, v in stage_seconds(nlp, texts).items()}
    set_batching(nlp, **ours)

    started = time.perf_counter()
    multi = [[(e.start, e.end, e.label_) for e in doc.ents] for doc in nlp.pipe(texts, n_process=args.n_process)]
    n_process = {"n_process": args.n_process, "seconds": round(time.perf_counter() - started, 3),
                 "same_entities_as_n_process_1": multi == entities["pipeline"],
                 "entities": sum(len(e) for e in multi)}

    descriptions = {
        "pipeline": "nlp.pipe(texts): BioTokenizer + transformer + ner, configs/ner.cfg batching",
        "pipeline_stock": "the same pipeline with spacy-transformers' stock batching (TransformerModel.v3 pass)",
        "raw_forward": "AutoModel forward (inference_mode) on the batches `pipeline` fed its encoder; no tokenisation",
        "raw_forward_stock": "AutoModel forward (inference_mode) on the batches `pipeline_stock` fed its encoder",
        "raw_tokenize": "HF fast tokenizer on the same windows' texts (one call per nlp.pipe batch)",
        "bert_base_pipeline": "`pipeline`'s config on a random BERT-base-sized encoder (untrained ner)",
    }
    configs = {}
    for name in ("pipeline", "pipeline_stock", "raw_forward", "raw_forward_stock", "raw_tokenize", "bert_base_pipeline"):
        configs[name] = {"description": descriptions[name], "seconds": round(best[name], 6),
                         "words_per_second": round(words / best[name], 1)}
    configs["pipeline"].update(batching=ours, **padding_summary(batches["pipeline"]), stage_seconds=stages["pipeline"])
    configs["pipeline_stock"].update(batching=STOCK, **padding_summary(batches["pipeline_stock"]),
                                     stage_seconds=stages["pipeline_stock"])
    if not args.no_memory:
        for name in ("pipeline", "pipeline_stock", "raw_forward", "bert_base_pipeline"):
            configs[name].update(measure_memory(args, workdir, name))
            print(f"memory {name}: {configs[name]['peak_rss_mib']} MiB", flush=True)

    def ratio(a: float, b: float) -> float:
        return round(a / b, 3)

    for name in work:
        configs[name]["cpu_seconds"] = round(best_cpu[name], 6)
    # On a shared machine the wall clock of a pass swings several-fold with the other jobs' load;
    # the CPU time this process spent is steadier, so the same ratios are given on it too.
    ratios_cpu = {
        "pipeline_over_raw_forward": ratio(best_cpu["raw_forward"], best_cpu["pipeline"]),
        "pipeline_over_raw_forward_plus_tokenize": ratio(best_cpu["raw_forward"] + best_cpu["raw_tokenize"],
                                                         best_cpu["pipeline"]),
        "pipeline_over_pipeline_stock": ratio(best_cpu["pipeline_stock"], best_cpu["pipeline"]),
    }
    ratios = {
        "pipeline_over_raw_forward": ratio(best["raw_forward"], best["pipeline"]),
        "pipeline_over_raw_forward_plus_tokenize": ratio(best["raw_forward"] + best["raw_tokenize"], best["pipeline"]),
        "pipeline_stock_over_raw_forward_stock": ratio(best["raw_forward_stock"], best["pipeline_stock"]),
        "pipeline_over_raw_forward_stock": ratio(best["raw_forward_stock"], best["pipeline"]),
        "pipeline_over_pipeline_stock": ratio(best["pipeline_stock"], best["pipeline"]),
        "small_over_bert_base_pipeline": ratio(best["bert_base_pipeline"], best["pipeline"]),
    }
    report = {
        "description": __doc__.split("\n")[0],
        "command": "python benchmarks/inference.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "pipeline": str(args.pipeline) if args.pipeline else f"configs/ner.cfg on {args.encoder} (untrained ner)",
        "texts": str(args.texts),
        "docs": len(texts),
        "words": words,
        "words_are": "tokens of the pipeline's tokenizer (BioTokenizer)",
        "torch_threads": args.threads,
        "repeats": args.repeats,
        "big_repeats": args.big_repeats,
        "timing": "one process, warm-up first, configurations interleaved, best of the repeats",
        "memory": "peak_rss_mib: VmHWM (peak resident set) of a fresh process that loads the configuration and runs it once "
                  "over the texts; loaded_rss_mib: its RSS before that pass",
        "encoders": {"small": encoder_summary(raw_model),
                     "bert_base_sized": encoder_summary(big_nlp.get_pipe("transformer").model.transformer)},
        "configs": configs,
        "ratios": ratios,
        "ratio_definition": "a_over_b = words_per_second(a) / words_per_second(b) = seconds(b) / seconds(a)",
        "ratios_cpu": ratios_cpu,
        "ratios_cpu_definition": "the same quotients of cpu_seconds (time.process_time of this process, all threads, "
                                 "best of the repeats): steadier than wall time on a loaded machine",
        "targets": {k: {"target": v, "measured": ratios[k], "met": ratios[k] >= v} for k, v in TARGETS.items()},
        "same_entities_sorted_vs_stock": entities["pipeline"] == entities["pipeline_stock"],
        "n_process": n_process,
        "machine": load_average,
        "versions": versions(),
    }
    from spacy_biolm.run_record import write_json  # with the commit and date of this run (results/README.md)

    report = write_json(args.output, report)
    plot(report, args.output.with_suffix(".png"))
    print(json.dumps(ratios))
    print(f"wrote {args.output} and {args.output.with_suffix('.png')}")


if __name__ == "__main__":
    main()
