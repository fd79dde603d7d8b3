"""Relation extraction throughput on CPU: pairs per second of the two input modes, same docs, one run.

    python benchmarks/relations_throughput.py --encoder pretrained/tiny/model

The two pipelines are built from configs/relations_fast.cfg (shared ``transformer`` +
spacy-biolm.RelationFast.v1) and configs/relations_anonymised.cfg (spacy-biolm.RelationAnonymised.v1:
one encoder pass per pair), both switched to ChemProt's settings, on the same encoder, and run with
``nlp.pipe`` over the same Docs with gold entities:

* ``chemprot_sentences``: ChemProt test sentences with all their chemicals and genes (the rows of
  one sentence grouped into one Doc: several candidate pairs per sentence, the case the fast mode
  is for);
* ``gad``: GAD fold-1 test sentences, exactly one pair each (the fast mode's worst case).

Timings alternate between the modes, ``--repeats`` times, and the best run of each counts.
Throughput does not depend on the trained weights, so the classification heads are freshly
initialised. Results go to benchmarks/results/relations_throughput.json.
"""

import argparse
import json
import os
import platform
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "re"


def build(mode: str, encoder: Path, examples):
    from spacy.util import load_config, load_model_from_config

    from spacy_biolm.corpora.relations import dataset_overrides

    overrides = {"paths.encoder": str(encoder), **dataset_overrides("chemprot", anonymised=mode == "anonymised")}
    config = load_config(REPO / "configs" / f"relations_{mode}.cfg", overrides=overrides, interpolate=True)
    config["components"]["relation_extractor"]["pair_types"] = [["CHEMICAL", "GENE"], ["GENE", "DISEASE"]]
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    nlp.initialize(lambda: examples)
    return nlp


def time_pipe(nlp, docs, batch_size: int) -> float:
    copies = [d.copy() for d in docs]
    start = time.perf_counter()
    for _ in nlp.pipe(copies, batch_size=batch_size):
        pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoder", type=Path, default=REPO / "pretrained" / "tiny" / "model")
    parser.add_argument("--chemprot", type=Path, default=DATA / "CHEMPROT" / "bio_electra" / "test.tsv")
    parser.add_argument("--gad", type=Path, default=DATA / "GAD" / "biobert" / "1" / "test.tsv")
    parser.add_argument("--n-docs", type=int, default=300, help="Docs per data set")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks" / "results" / "relations_throughput.json")
    args = parser.parse_args()

    import spacy
    import torch
    from spacy.training import Example

    from spacy_biolm.corpora.relations import ConversionStats, read_biobert_re, read_chemprot_tsv

    torch.set_num_threads(args.threads)
    tok_nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})
    datasets = {
        "chemprot_sentences": list(read_chemprot_tsv(args.chemprot, tok_nlp, group=True, skip_invalid=True,
                                                     stats=ConversionStats()))[: args.n_docs],
        "gad": list(read_biobert_re(args.gad, tok_nlp))[: args.n_docs],
    }
    init_examples = [Example(d.copy(), d) for d in datasets["chemprot_sentences"][:16]]
    pipelines = {mode: build(mode, args.encoder, init_examples) for mode in ("fast", "anonymised")}
    results = {}
    for name, docs in datasets.items():
        extractor = pipelines["fast"].get_pipe("relation_extractor")
        n_pairs = sum(len(extractor.candidate_pairs(d)) for d in docs)
        best = {}
        for _ in range(args.repeats):
            for mode, nlp in pipelines.items():
                seconds = time_pipe(nlp, docs, args.batch_size)
                best[mode] = min(best.get(mode, float("inf")), seconds)
        results[name] = {
            "docs": len(docs),
            "pairs": n_pairs,
            "pairs_per_doc": n_pairs / len(docs),
            **{f"{mode}_seconds": round(s, 3) for mode, s in best.items()},
            **{f"{mode}_pairs_per_second": round(n_pairs / s, 1) for mode, s in best.items()},
            "fast_over_anonymised": round(best["anonymised"] / best["fast"], 2),
        }
        print(name, json.dumps(results[name]))
    report = {
        "encoder": str(args.encoder),
        "torch_threads": args.threads,
        "batch_size": args.batch_size,
        "repeats": args.repeats,
        "cpu": platform.processor() or platform.machine(),
        "command": "python benchmarks/relations_throughput.py " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k not in ("output",)),
        "results": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    from spacy_biolm.run_record import stamp_json  # the commit and date of this run (results/README.md)

    report = stamp_json(report)
    args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
