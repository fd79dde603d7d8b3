"""Relation extraction on one long document: time and peak memory at 10k, 50k, 200k and 1M characters.

    python benchmarks/long_documents.py

The pipeline is configs/relations_fast.cfg (shared ``transformer`` + spacy-biolm.RelationFast.v1,
the relation extractor's default settings: ``candidate_window = "sentence"``,
``max_pairs_per_doc = 1000``) on a tiny random encoder (spacy_biolm.testing.make_tiny_encoder with
a WordPiece vocabulary trained on the same kind of text, or ``--encoder``), preceded by a
``sentencizer`` and an ``entity_ruler`` that finds every gene, cytokine (as GENE) and disease name,
so a long document has many entities (over ten thousand at 1M characters). The
weights are untrained: time and memory do not depend on them.

The text is synthetic biomedical prose (spacy_biolm.testing.bio_text_documents) joined into one
document and cut at a sentence end near each length. Each length runs in a fresh process (build
the pipeline, then ``nlp(text)`` once): ``seconds`` is that call, ``peak_rss_mib`` the process's
peak resident set (VmHWM) at the end, ``loaded_rss_mib`` its RSS before the call. Candidate pairs
are counted by the component itself (``classified`` + ``skipped`` over the cap).

``whole_document_window`` is the same pipeline without the sentencizer at ``--baseline-length``
characters: the "sentence" window is then the whole Doc, i.e. every gene-disease pair of the
document is a candidate as before the window existed (bounded memory, the cap keeping the
closest 1000, but time quadratic in the number of entities).

``--model DIR`` measures a trained pipeline instead, e.g. the release (``training/release``: its
sentencizer, NER, relation extractor and hallmarks classifier, the QA pipes disabled as shipped);
the whole-document-window run then disables its sentencizer.

The machine may be shared: compare the ratios (seconds per million characters across lengths),
not the absolute times. Writes ``benchmarks/results/long_documents.json``.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from process_memory import proc_status_mib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
LENGTHS = (10_000, 50_000, 200_000, 1_000_000)
# The bounds: peak RSS at 200k characters, and time linear in length (seconds per
# character at the longest length at most this many times that of the shortest).
RSS_LIMIT_MIB_AT_200K = 2048
LINEAR_TIME_TOLERANCE = 1.5

GENES = ["BRCA1", "BRCA2", "TP53", "EGFR", "KRAS", "HER2", "CDKN2A", "APOE4", "PTEN", "MYC",
         "IL-6", "interleukin-6", "TNF-alpha", "IFN-γ", "IL-1β"]
DISEASES = ["hereditary breast cancer", "ovarian adenocarcinoma", "familial hypercholesterolemia",
            "Alzheimer's disease", "non-small cell lung cancer", "colorectal carcinoma"]


def long_text(n_chars: int, seed: int = 0) -> str:
    """One document of about ``n_chars`` characters (cut after a sentence's full stop)."""
    from spacy_biolm.testing import bio_text_documents

    pieces, total, batch = [], 0, 0
    while total < n_chars:
        chunk = " ".join(bio_text_documents(200, seed=seed + batch).split())
        pieces.append(chunk)
        total += len(chunk) + 1
        batch += 1
    text = " ".join(pieces)[:n_chars]
    cut = text.rfind(". ")
    return text[: cut + 1] if cut > 0 else text


def build_pipeline(encoder: Path, window, sentencizer: bool = True):
    """configs/relations_fast.cfg on ``encoder`` with a sentencizer and a gene/disease ruler."""
    import spacy
    from spacy.training import Example

    config = spacy.util.load_config(REPO / "configs" / "relations_fast.cfg",
                                    overrides={"paths.encoder": str(encoder)}, interpolate=True)
    if window is not None:
        config["components"]["relation_extractor"]["candidate_window"] = window
    nlp = spacy.util.load_model_from_config(config, auto_fill=True, validate=True)
    ruler = nlp.add_pipe("entity_ruler", first=True)
    if sentencizer:
        nlp.add_pipe("sentencizer", first=True)
    init_docs = [nlp.make_doc(t) for t in ("BRCA1 causes hereditary breast cancer .", "TP53 and cancer .")]
    nlp.initialize(lambda: [Example(d, d.copy()) for d in init_docs])
    # After initialize: the ruler's initialize clears its patterns.
    ruler.add_patterns([{"label": "GENE", "pattern": g} for g in GENES]
                       + [{"label": "DISEASE", "pattern": d} for d in DISEASES])
    return nlp


def load_pipeline(args):
    """``--model`` loaded as shipped (without its sentencizer for the whole-document-window run), or
    the synthetic relation pipeline."""
    if args.model is None:
        return build_pipeline(args.encoder, args.window, sentencizer=not args.no_sentencizer)
    import spacy

    nlp = spacy.load(args.model)
    if args.no_sentencizer and "sentencizer" in nlp.pipe_names:
        nlp.disable_pipe("sentencizer")
    return nlp


def child_main(args) -> None:
    """One length in this fresh process: prints one JSON line."""
    import torch

    from spacy_biolm.pipes.relation_extractor.data import PairLimitExceeded

    torch.set_num_threads(args.threads)
    text = long_text(args.child)
    nlp = load_pipeline(args)
    loaded = proc_status_mib("VmRSS")
    extractor = nlp.get_pipe("relation_extractor")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PairLimitExceeded)
        started = time.perf_counter()
        doc = nlp(text)
        seconds = time.perf_counter() - started
    peak = proc_status_mib("VmHWM")
    skipped = extractor.skipped_pairs  # over max_pairs_per_doc, counted by the component in nlp()
    started = time.perf_counter()
    classified = len(extractor.candidate_pairs(doc))
    candidate_seconds = time.perf_counter() - started
    print(json.dumps({
        "chars": len(text),
        "tokens": len(doc),
        "sentences": sum(1 for _ in doc.sents) if doc.has_annotation("SENT_START") else None,
        "entities": len(doc.ents),
        "classified_pairs": classified,
        "skipped_pairs": skipped,
        "pair_limit_warnings": sum(1 for w in caught if issubclass(w.category, PairLimitExceeded)),
        "relations": len(doc._.relations),
        "seconds": round(seconds, 3),
        "candidate_seconds": round(candidate_seconds, 4),
        "loaded_rss_mib": round(loaded, 1),
        "peak_rss_mib": round(peak, 1),
    }))


def run_length(args, n_chars: int, encoder: Path, sentencizer: bool = True) -> dict:
    source = ["--model", str(args.model)] if args.model else ["--encoder", str(encoder)]
    cmd = [sys.executable, __file__, "--child", str(n_chars), *source,
           "--threads", str(args.threads)] + ([] if sentencizer else ["--no-sentencizer"])
    if args.window is not None:
        cmd += ["--window", str(args.window)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"the {n_chars}-character run failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def window_arg(value: str):
    return int(value) if re.fullmatch(r"\d+", value) else value


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--encoder", type=Path, help="an HF encoder directory (default: a tiny random one)")
    parser.add_argument("--model", type=Path, help="a trained pipeline directory to measure instead (e.g. training/release)")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS), help="document lengths (characters)")
    parser.add_argument("--window", type=window_arg, default=None,
                        help="candidate_window to override the config's ('sentence' or a number of tokens)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    parser.add_argument("--output", type=Path, default=RESULTS / "long_documents.json")
    parser.add_argument("--baseline-length", type=int, default=200_000,
                        help="length of the whole-document-window run (0: none)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-sentencizer", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args)

    with tempfile.TemporaryDirectory(prefix="long_documents_") as tmp:
        encoder = args.encoder
        if encoder is None and args.model is None:
            from spacy_biolm.testing import bio_text_documents, make_tiny_encoder

            # A WordPiece vocabulary of the text's domain, as pretraining makes it: the fixed tiny
            # vocabulary spells most words letter by letter, past the 512 positions of a window.
            sentences = bio_text_documents(100, seed=10_000).splitlines()
            encoder = make_tiny_encoder(Path(tmp) / "encoder", vocab_sentences=sentences, vocab_size=1000)
        runs = {}
        for n_chars in sorted(args.lengths):
            runs[str(n_chars)] = run_length(args, n_chars, encoder)
            print(n_chars, json.dumps(runs[str(n_chars)]), flush=True)
        baseline = None
        if args.baseline_length:
            baseline = run_length(args, args.baseline_length, encoder, sentencizer=False)
            print("whole document window", json.dumps(baseline), flush=True)
    per_million = {length: round(run["seconds"] / run["chars"] * 1e6, 3) for length, run in runs.items()}
    shortest, longest = min(runs, key=int), max(runs, key=int)
    time_ratio = round(per_million[longest] / per_million[shortest], 3)
    rss_200k = runs.get("200000", {}).get("peak_rss_mib")
    same_length = runs.get(str(args.baseline_length)) if baseline else None
    baseline_ratio = round(baseline["seconds"] / same_length["seconds"], 2) if same_length else None
    report = {
        "pipeline": (f"{args.model} (as shipped)" if args.model else
                     "sentencizer + entity_ruler + configs/relations_fast.cfg (transformer + relation_extractor)"),
        "encoder": (str(args.encoder) if args.encoder else "the pipeline's own" if args.model
                    else "make_tiny_encoder (random, 2 layers, hidden 32, 1000-piece domain vocab)"),
        "candidate_window": args.window if args.window is not None else "sentence (config default)",
        "torch_threads": args.threads,
        "cpu": platform.processor() or platform.machine(),
        "command": "python benchmarks/long_documents.py " + " ".join(
            f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in vars(args).items() if k not in ("output", "child", "no_sentencizer") and v is not None),
        "runs": runs,
        "seconds_per_million_chars": per_million,
        "whole_document_window": baseline,
        "whole_document_over_sentence_window_seconds": baseline_ratio,
        "time_per_char_longest_over_shortest": time_ratio,
        "targets": {
            "time_linear_in_length": {"max_ratio": LINEAR_TIME_TOLERANCE, "value": time_ratio,
                                      "met": time_ratio <= LINEAR_TIME_TOLERANCE},
            "peak_rss_mib_at_200k_chars": {"max": RSS_LIMIT_MIB_AT_200K, "value": rss_200k,
                                           "met": None if rss_200k is None else rss_200k <= RSS_LIMIT_MIB_AT_200K},
        },
    }
    from spacy_biolm.run_record import write_json  # with the commit and date of this run (results/README.md)

    report = write_json(args.output, report)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
