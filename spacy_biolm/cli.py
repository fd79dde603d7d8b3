"""The ``spacy-biolm`` command line: the steps of the recipe that spaCy's own CLI does not cover."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

__all__ = ["app", "main"]

app = typer.Typer(
    name="spacy-biolm",
    help="Biomedical encoders for spaCy: collect text, build a vocabulary, pretrain, convert corpora.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command("assets")
def assets_cli(
    project_dir: Path = typer.Argument(Path("."), help="Project directory (with project.yml)"),
    mirror: Optional[Path] = typer.Option(None, "--mirror", help="Local mirror of the corpora (e.g. ../shared/data)"),
):
    """Fetch project assets, copying checksum-verified files from a local mirror when present."""
    from .assets import fetch_assets

    report = fetch_assets(project_dir, mirror if mirror and mirror.is_dir() else None)
    msg.good(", ".join(f"{len(v)} {k}" for k, v in report.items()))


@app.command("collect-text")
def collect_text_cli(
    output: Path = typer.Argument(..., help="Text file to write (one sentence per line, blank line between documents)"),
    sources: List[Path] = typer.Argument(..., help="Source files: .txt (doc per line), .csv, .jsonl, CoNLL .tsv (training splits only)"),
    stats_path: Optional[Path] = typer.Option(None, "--stats", help="Write per-source counts as JSON"),
):
    """Gather pretraining text from raw corpora into one file."""
    from .pretraining.text import collect_text

    stats = collect_text(sources, output)
    rows = [(src, s["documents"], s["sentences"], s["words"]) for src, s in stats.to_dict()["sources"].items()]
    msg.table(rows, header=("source", "documents", "sentences", "words"), divider=True)
    msg.good(f"Wrote {stats.total('words'):,} words in {stats.total('sentences'):,} sentences to {output}")
    if stats_path:
        stats_path.parent.mkdir(parents=True, exist_ok=True)
        stats_path.write_text(json.dumps(stats.to_dict(), indent=2), encoding="utf8")


@app.command("vocab")
def vocab_cli(
    output_dir: Path = typer.Argument(..., help="Tokenizer directory to write"),
    inputs: List[Path] = typer.Argument(..., help="Text files in the pretraining text format"),
    vocab_size: int = typer.Option(16000, "--vocab-size", "-s", help="SentencePiece vocabulary size"),
    compare_with: Optional[Path] = typer.Option(None, "--compare-with", help="Shared data folder with reference vocabularies"),
    seed: int = typer.Option(0, "--seed"),
):
    """Train a SentencePiece BPE vocabulary; write a cased WordPiece tokenizer (ELECTRA) and spiece.model (ALBERT)."""
    from .pretraining.vocab import format_split_table, train_vocab

    report = train_vocab(inputs, output_dir, vocab_size=vocab_size, seed=seed, compare_with=compare_with)
    print(format_split_table(report["gene_splits"]))
    msg.good(f"Tokenizer written to {output_dir}")


# `pretrain` takes spaCy-style overrides, which typer must pass through untouched.
@app.command("pretrain", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def pretrain_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Pretraining .cfg (see configs/pretrain_*.cfg)"),
    output_dir: Path = typer.Argument(..., help="Run directory: checkpoints, logs, plot, exported model/"),
    resume: bool = typer.Option(False, "--resume", help="Continue from output_dir/checkpoint.pt"),
):
    """Pretrain an ELECTRA encoder (replaced-token detection). Extra ``--section.key value``
    options override the config, as in ``spacy train``."""
    from spacy.cli._util import parse_config_overrides

    from .pretraining.loop import pretrain
    from .pretraining.settings import load_settings

    settings = load_settings(config_path, parse_config_overrides(ctx.args))
    try:
        summary = pretrain(settings, output_dir, resume=resume)
    except KeyboardInterrupt as stop:
        msg.warn(str(stop) or "Interrupted")
        raise typer.Exit(130)
    final = summary["final"]
    if summary["steps"] == 0:
        msg.good(f"No pretraining steps: the initialised encoder is in {output_dir / 'model'}")
        return
    msg.good(
        f"{summary['steps']} steps in {summary['seconds_this_run']:.0f}s: loss {final.get('loss', 0):.3f}, "
        f"replaced-token accuracy {final.get('disc_acc', 0):.3f}; encoder in {output_dir / 'model'}"
    )


@app.command("convert")
def convert_cli(
    input_path: Path = typer.Argument(..., help="CoNLL/BIO NER file (token<TAB>tag)"),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write"),
    scheme: str = typer.Option("auto", "--scheme", help="typed (B-Disease), untyped (B/I/O) or auto"),
    label: str = typer.Option("ENTITY", "--label", help="Entity label for untyped B/I/O tags"),
    n_sents: int = typer.Option(1, "--n-sents", "-n", help="Sentences per Doc"),
):
    """Convert a CoNLL NER file to a spaCy DocBin."""
    from .corpora.conll import convert_ner

    stats = convert_ner(input_path, output_path, scheme=scheme, label=label, n_sents=n_sents)
    msg.good(f"{input_path} -> {output_path}: {json.dumps(stats)}")


@app.command("results")
def results_cli(
    output: Path = typer.Argument(..., help="Markdown file to write"),
    metrics: List[Path] = typer.Argument(..., help="NAME=PATH pairs of `spacy evaluate` metrics JSON files"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
    dataset: str = typer.Option("NCBI-disease", "--dataset"),
):
    """Write the NER results table (ours beside the published numbers)."""
    from .evaluation.tables import ner_results_table

    named = {}
    for item in metrics:
        name, _, path = str(item).partition("=")
        if not path:
            raise typer.BadParameter(f"expected NAME=PATH, got {item}")
        named[name] = Path(path)
    table = ner_results_table(named, dataset=dataset, paper_results=paper)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(table, encoding="utf8")
    print(table)


@app.command("convert-qa")
def convert_qa_cli(
    fmt: str = typer.Argument(..., help="Input format: yesno (BioASQ yes/no TSV), squad (SQuAD/BioASQ JSON), reranking (answer-candidate TSV)"),
    input_path: Path = typer.Argument(..., help="Corpus file"),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write"),
    golden: Optional[Path] = typer.Option(None, "--golden", help="BioASQ golden file: gold answers for a test JSON without answers (squad)"),
    exclude: List[Path] = typer.Option([], "--exclude", help="File(s) of the same format whose questions must be left out (e.g. the test set)"),
    dev_output: Optional[Path] = typer.Option(None, "--dev-output", help="Also write a development DocBin of held-out questions"),
    dev_fraction: float = typer.Option(0.1, "--dev-fraction", help="Share of questions held out for --dev-output"),
    sents_per_doc: int = typer.Option(0, "--sents-per-doc", help="reranking: candidates per Doc (0: all of a question's)"),
    seed: int = typer.Option(0, "--seed"),
    limit: int = typer.Option(0, "--limit", help="Keep the first N questions only (0: all)"),
):
    """Convert a question-answering corpus to a spaCy DocBin (Docs carry doc._.question)."""
    import spacy

    from .corpora.qa import convert_qa

    nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})
    stats = convert_qa(
        fmt, input_path, output_path, nlp, golden=golden, exclude=exclude, dev_output=dev_output,
        dev_fraction=dev_fraction, sents_per_doc=sents_per_doc, seed=seed, limit=limit,
    )
    msg.good(f"{input_path} -> {output_path}: {json.dumps(stats)}")


@app.command("qa-corpora")
def qa_corpora_cli(
    assets: Path = typer.Argument(..., help="Corpus folder laid out as ../shared/data (the project's assets/)"),
    output_dir: Path = typer.Argument(..., help="Folder for yesno/, factoid/, reranking/ DocBins"),
    limit: int = typer.Option(0, "--limit", help="Keep the first N questions of each file only (0: all)"),
):
    """Convert all QA corpora of the project in one go: train/dev/test DocBins, test questions
    removed from the training sets (see convert-qa for single files)."""
    import spacy

    from .corpora.qa import convert_qa_corpora

    nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})
    report = convert_qa_corpora(assets, output_dir, nlp, limit=limit)
    msg.table([(name, *stats.values()) for name, stats in report.items()], header=("set", *next(iter(report.values())).keys()), divider=True)


@app.command("evaluate-qa")
def evaluate_qa_cli(
    model: str = typer.Argument(..., help="Pipeline directory or package name"),
    data_paths: List[Path] = typer.Argument(..., help="QA DocBin(s) from convert-qa / qa-corpora"),
    outputs: List[Path] = typer.Option([], "--output", "-o", help="Metrics JSON to write, one per DocBin"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g"),
    batch_size: int = typer.Option(16, "--batch-size", "-b"),
    threads: int = typer.Option(0, "--threads", help="torch CPU threads (0: torch's default)"),
    limit: int = typer.Option(0, "--limit", help="Score only the first N Docs (0: all)"),
):
    """Score a QA pipeline (`spacy evaluate` would drop the questions) and time it: questions/s."""
    from .evaluation.qa import evaluate_qa, load_qa_pipeline

    if outputs and len(outputs) != len(data_paths):
        raise typer.BadParameter(f"give one --output per DocBin ({len(data_paths)}), got {len(outputs)}")
    nlp = load_qa_pipeline(model, gpu_id=gpu_id, threads=threads)
    for i, data_path in enumerate(data_paths):
        scores = evaluate_qa(nlp, data_path, batch_size=batch_size, limit=limit)
        msg.divider(str(data_path))
        msg.table([(k, f"{v:.4f}" if isinstance(v, float) else v) for k, v in scores.items()], divider=True)
        if outputs:
            outputs[i].parent.mkdir(parents=True, exist_ok=True)
            outputs[i].write_text(json.dumps(scores, indent=2), encoding="utf8")


@app.command("evaluate-qa-project")
def evaluate_qa_project_cli(
    training_dir: Path = typer.Argument(Path("training"), help="Folder with yes_no/, answer_span/, answer_reranker/ (model-best inside)"),
    corpus_dir: Path = typer.Argument(Path("corpus/qa"), help="Folder written by qa-corpora"),
    metrics_dir: Path = typer.Argument(Path("metrics"), help="Where the metrics JSON files and qa_results.md go"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
    name: str = typer.Option("spacy-biolm", "--name", help="Name of our model in the tables"),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g"),
):
    """Evaluate the project's three QA pipelines on their test sets in one go and write the tables."""
    from .evaluation.qa import evaluate_qa_project

    print(evaluate_qa_project(training_dir, corpus_dir, metrics_dir, paper_results=paper, name=name, gpu_id=gpu_id))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
