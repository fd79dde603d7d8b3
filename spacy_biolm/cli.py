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
    extra: bool = typer.Option(False, "--extra", help="Also fetch assets marked 'extra: true'"),
):
    """Fetch project assets, copying checksum-verified files from a local mirror when present."""
    from .assets import fetch_assets

    report = fetch_assets(project_dir, mirror if mirror and mirror.is_dir() else None, extra=extra)
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
    """Pretrain an ELECTRA (replaced-token detection) or ALBERT (MLM + sentence order) encoder,
    or continue pretraining one (``--paths.init``). Extra ``--section.key value`` options
    override the config, as in ``spacy train``. Run it under ``torchrun`` for data parallelism."""
    from spacy.cli._util import parse_config_overrides

    from .pretraining.loop import pretrain
    from .pretraining.settings import load_settings

    settings = load_settings(config_path, parse_config_overrides(ctx.args))
    try:
        summary = pretrain(settings, output_dir, resume=resume)
    except KeyboardInterrupt as stop:
        msg.warn(str(stop) or "Interrupted")
        raise typer.Exit(130)
    if not summary:
        return  # not the main process of a torchrun job: rank 0 reports
    final = summary["final"]
    if summary["steps"] == 0:
        msg.good(f"No pretraining steps: the initialised encoder is in {output_dir / 'model'}")
        return
    accuracy = (
        f"replaced-token accuracy {final.get('disc_acc', 0):.3f}"
        if summary["architecture"] == "electra"
        else f"MLM accuracy {final.get('mlm_acc', 0):.3f}, sentence-order accuracy {final.get('sop_acc', 0):.3f}"
    )
    msg.good(
        f"{summary['steps']} steps in {summary['seconds_this_run']:.0f}s: loss {final.get('loss', 0):.3f}, "
        f"{accuracy}; encoder in {output_dir / 'model'}"
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


# `evaluate` passes spaCy-style config overrides through to `spacy train`.
@app.command("evaluate", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def evaluate_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="spaCy training config (e.g. configs/ner.cfg)"),
    output_dir: Path = typer.Argument(..., help="Directory for the runs (seed_<n>/), summary, table and plot"),
    test_path: Path = typer.Option(..., "--test", help="Test DocBin (.spacy)"),
    n_seeds: int = typer.Option(3, "--seeds", help="Number of seeds (the papers used 10)"),
    first_seed: int = typer.Option(1, "--first-seed"),
    name: str = typer.Option("model", "--name", help="Row name in the table"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours (NER)"),
    dataset: str = typer.Option("NCBI-disease", "--dataset", help="Dataset key of the paper's NER table"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
):
    """Train and test a config over several seeds; write mean (std) as JSON, a Markdown table beside
    the published numbers, and a per-seed plot. Scored seeds are reused when re-run."""
    from spacy.cli._util import parse_config_overrides

    from .evaluation.seeds import plot_seed_scores, run_seeds, seeds_table
    from .evaluation.tables import paper_ner_rows

    metrics = {"ents_p": "P", "ents_r": "R", "ents_f": "F1"}
    seeds = list(range(first_seed, first_seed + n_seeds))
    result = run_seeds(config_path, output_dir, test_path, seeds, parse_config_overrides(ctx.args),
                       metrics=list(metrics), use_gpu=gpu_id)
    paper_rows = paper_ner_rows(paper, dataset) if paper and paper.is_file() else []
    table = seeds_table(name, result["summary"], metrics, paper_rows)
    (output_dir / "seeds_table.md").write_text(f"{dataset} test set, mean (std) over seeds {seeds}.\n\n{table}")
    plot_seed_scores(result["runs"], metrics, output_dir / "seeds.png", f"{name}: {dataset}, {len(seeds)} seeds")
    print(table)


@app.command("tune", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def tune_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="spaCy training config to tune"),
    space_path: Path = typer.Argument(..., help=".cfg with a [space] section (e.g. configs/tune_ner.cfg)"),
    output_dir: Path = typer.Argument(..., help="Trials (trial_<n>/, trials.pkl, trials.jsonl), best.cfg, best.json"),
    max_evals: int = typer.Option(8, "--max-evals", help="Trials in total (a re-run resumes and adds up to this)"),
    dev_metric: str = typer.Option("ents_f", "--metric", help="Dev-set score to maximise"),
    seed: int = typer.Option(0, "--seed"),
    gpu_id: int = typer.Option(-1, "--gpu-id"),
):
    """Hyperparameter search with hyperopt (TPE) over the values in SPACE; objective = dev score.
    Extra ``--section.key value`` options override the config for every trial."""
    from spacy.cli._util import parse_config_overrides

    from .evaluation.tune import load_space, tune

    best = tune(config_path, output_dir, load_space(space_path), max_evals, dev_metric,
                parse_config_overrides(ctx.args), seed=seed, use_gpu=gpu_id)
    msg.good(f"Best of {best['trials']} trials: {dev_metric} {best['dev_score']:.4f} with {best['params']}; "
             f"config in {output_dir / 'best.cfg'}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
