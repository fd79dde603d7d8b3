"""The ``spacy-biolm`` command line: the steps of the recipe that spaCy's own CLI does not cover."""

import json
from pathlib import Path
from typing import Dict, List, Optional

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
    relabel: List[str] = typer.Option([], "--relabel", help="OLD=NEW entity label to rename (repeatable)"),
):
    """Convert a CoNLL NER file to a spaCy DocBin."""
    from .corpora.conll import convert_ner

    stats = convert_ner(input_path, output_path, scheme=scheme, label=label, n_sents=n_sents,
                        relabel=_label_map(relabel))
    msg.good(f"{input_path} -> {output_path}: {json.dumps(stats)}")


def _label_map(items: List[str]) -> Dict[str, str]:
    """``OLD=NEW`` options as ``{old: new}``."""
    mapping = {}
    for item in items:
        old, _, new = item.partition("=")
        if not old or not new:
            raise typer.BadParameter(f"expected OLD=NEW, got {item!r}")
        mapping[old] = new
    return mapping


@app.command("convert-splits")
def convert_splits_cli(
    input_dir: Path = typer.Argument(..., help="Directory with train.tsv, devel.tsv and test.tsv (CoNLL BIO)"),
    output_dir: Path = typer.Argument(..., help="Directory for train.spacy, devel.spacy and test.spacy"),
    scheme: str = typer.Option("auto", "--scheme", help="typed (B-Disease), untyped (B/I/O) or auto"),
    label: str = typer.Option("ENTITY", "--label", help="Entity label for untyped B/I/O tags"),
    relabel: List[str] = typer.Option([], "--relabel", help="OLD=NEW entity label to rename (repeatable)"),
):
    """Convert the train/devel/test splits of one NER corpus to DocBins."""
    from .corpora.conll import convert_ner

    renames = _label_map(relabel)
    for split in ("train", "devel", "test"):
        source = input_dir / f"{split}.tsv"
        if not source.is_file():
            raise typer.BadParameter(f"{source} is missing; expected train.tsv, devel.tsv and test.tsv")
        stats = convert_ner(source, output_dir / f"{split}.spacy", scheme=scheme, label=label, relabel=renames)
        msg.good(f"{source} -> {output_dir / f'{split}.spacy'}: {json.dumps(stats)}")


@app.command("results")
def results_cli(
    output: Path = typer.Argument(..., help="Markdown file to write"),
    metrics: List[Path] = typer.Argument(..., help="NAME=PATH pairs of `spacy evaluate` metrics JSON files"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
    dataset: str = typer.Option("NCBI-disease", "--dataset"),
):
    """Write the NER results table (ours beside the published numbers)."""
    from .evaluation.tables import ner_results_table

    table = ner_results_table(_named_paths(metrics), dataset=dataset, paper_results=paper)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(table, encoding="utf8")
    print(table)


# --- relation extraction ------------------------------------------------------------------------


@app.command("convert-relations")
def convert_relations_cli(
    input_path: Path = typer.Argument(..., help="Relation corpus file, or a folder of them (train/dev/test)"),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write; for a folder input, the output folder (<name>.spacy each)"),
    fmt: str = typer.Option(..., "--format", "-f", help="biobert (GAD/EU-ADR TSV), chemprot (Bio-ELECTRA TSV) or scibert (ChemProt JSONL)"),
    dev_output: Optional[Path] = typer.Option(None, "--dev-output", help="Also write a held-out dev DocBin here (file input)"),
    dev_fraction: float = typer.Option(0.1, "--dev-fraction", help="Share of train documents held out as dev: with --dev-output, or for a folder without a dev file"),
    group: bool = typer.Option(False, "--group", help="chemprot: one Doc per sentence with all its pairs"),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Leave out (and report) rows that cannot hold a relation instead of failing"),
    stats_path: Optional[Path] = typer.Option(None, "--stats", help="Write the conversion statistics as JSON"),
    limit: int = typer.Option(0, "--limit", help="Convert only the first N documents of each file (0 = all)"),
):
    """Convert a relation corpus (GAD/EU-ADR, ChemProt) to DocBins with entities and gold relations.

    A folder input converts each of its train/dev/test files in one process; when it has no dev
    file, --dev-fraction of train is held out as dev.spacy (GAD and EU-ADR ship none)."""
    from .corpora.relations import convert_relations

    options = {"skip_invalid": skip_invalid}
    if fmt == "chemprot":
        options["group"] = group
    jobs = [(input_path, output_path, dev_output)]
    if input_path.is_dir():
        files = sorted(p for p in input_path.iterdir() if p.suffix in (".tsv", ".txt", ".jsonl") and p.stem in ("train", "dev", "test"))
        if not files:
            raise typer.BadParameter(f"{input_path} has no train/dev/test .tsv/.txt/.jsonl files")
        has_dev = any(p.stem == "dev" for p in files)
        jobs = [(p, output_path / f"{p.stem}.spacy",
                 output_path / "dev.spacy" if p.stem == "train" and not has_dev else None) for p in files]
    all_stats = {}
    for source, target, dev_target in jobs:
        stats = convert_relations(source, target, fmt, dev_output=dev_target,
                                  dev_fraction=dev_fraction if dev_target else 0.0, limit=limit, **options)
        for line_reason in stats["skipped"]:
            msg.warn(f"{source}:{line_reason['line']}: skipped: {line_reason['reason']}")
        all_stats[str(source)] = stats
        summary = {k: v for k, v in stats.items() if k != "skipped"}
        msg.good(f"{source} -> {target}: {json.dumps(summary)}")
    if stats_path:
        stats_path.parent.mkdir(parents=True, exist_ok=True)
        stats_path.write_text(json.dumps(all_stats if len(jobs) > 1 else stats, indent=2), encoding="utf8")


def _overrides(ctx: typer.Context) -> dict:
    from spacy.cli._util import parse_config_overrides

    return parse_config_overrides(ctx.args)


@app.command("relations-train", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def relations_train_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="configs/relations_*.cfg"),
    output_dir: Path = typer.Argument(..., help="Training output directory (model-best, model-last, config.cfg)"),
    mode: str = typer.Option("fast", "--mode", "-m", help="fast (span pooling on the shared transformer) or anonymised (one pass per pair)"),
):
    """Train the relation extractor in the chosen input mode (extra --section.key value options override the config)."""
    from .evaluation.relations import train_relations

    model = train_relations(config_path, output_dir, mode=mode, overrides=_overrides(ctx))
    msg.good(f"Trained ({mode}): {model}")


@app.command("relations-evaluate")
def relations_evaluate_cli(
    model_path: Path = typer.Argument(..., help="Trained pipeline directory"),
    data_path: Path = typer.Argument(..., help="Relation DocBin (gold entities and relations)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Scores JSON to write"),
    limit: int = typer.Option(0, "--limit", help="Score only the first N documents (0 = all)"),
    table: Optional[Path] = typer.Option(None, "--table", help="Also write a Markdown table beside the paper (needs --output)"),
    name: str = typer.Option("ours", "--name", help="Row name in --table"),
    dataset: str = typer.Option("GAD", "--dataset", help="GAD or CHEMPROT (paper rows of --table)"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json for --table"),
):
    """Score relations on gold entities: micro P/R/F1 over the positive labels."""
    from .evaluation.relations import evaluate_relations, relations_table

    if table is not None and output is None:
        raise typer.BadParameter("--table needs --output (the table reads the scores file)")
    scores = evaluate_relations(model_path, data_path, output, limit=limit)
    if table is not None:
        table.parent.mkdir(parents=True, exist_ok=True)
        table.write_text(relations_table({name: output}, dataset, paper), encoding="utf8")
    msg.good(" ".join(f"{k}={100 * scores[k]:.2f}" for k in ("rel_micro_p", "rel_micro_r", "rel_micro_f"))
             + f" on {scores['pairs']} pairs")


@app.command("relations-cv", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def relations_cv_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="configs/relations_gad.cfg"),
    folds_dir: Path = typer.Argument(..., help="Folder with <k>/train.tsv and <k>/test.tsv (BioBERT GAD/EU-ADR)"),
    output_dir: Path = typer.Argument(..., help="Where fold runs, cv.json and cv.md go"),
    mode: str = typer.Option("fast", "--mode", "-m", help="fast or anonymised"),
    folds: str = typer.Option("1-10", "--folds", help="Folds to run: '1-10', '1,3,5' or '1'"),
):
    """k-fold cross-validation (train + test per fold) with mean (std) of P/R/F1."""
    from .evaluation.relations import cross_validate

    chosen: List[int] = []
    for part in folds.split(","):
        low, _, high = part.partition("-")
        chosen += list(range(int(low), int(high or low) + 1))
    summary = cross_validate(config_path, folds_dir, output_dir, mode=mode, folds=chosen, overrides=_overrides(ctx))
    print((output_dir / "cv.md").read_text(encoding="utf8"))
    msg.good(f"F1 {summary['rel_micro_f_mean']:.2f} ({summary['rel_micro_f_std']:.2f}) over {len(chosen)} folds")


@app.command("relations-results")
def relations_results_cli(
    output: Path = typer.Argument(..., help="Markdown file to write"),
    scores: List[Path] = typer.Argument(..., help="NAME=PATH pairs of relations-evaluate JSON or cv.json files"),
    dataset: str = typer.Option("GAD", "--dataset", help="GAD or CHEMPROT (selects the paper rows)"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json"),
):
    """Write a relation extraction results table: ours beside the published numbers."""
    from .evaluation.relations import relations_table

    table = relations_table(_named_paths(scores), dataset, paper)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(table, encoding="utf8")
    print(table)


def _named_paths(items: List[Path]) -> dict:
    """``NAME=PATH`` arguments as ``{name: Path}``."""
    named = {}
    for item in items:
        name, _, path = str(item).partition("=")
        if not path:
            raise typer.BadParameter(f"expected NAME=PATH, got {item}")
        named[name] = Path(path)
    return named


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


@app.command("seeds-table")
def seeds_table_cli(
    output: Path = typer.Argument(..., help="Markdown table to write (the plot and JSON go beside it)"),
    runs: List[Path] = typer.Argument(..., help="DATASET=DIR pairs: output directories of `evaluate`"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
    name: str = typer.Option("ours", "--name", help="Our model, for the plot's title"),
    row_title: str = typer.Option("dataset", "--row-title", help="What the rows are: datasets, or configs compared"),
):
    """One NER table over datasets (or configs on one dataset): our mean (std) test P/R/F1 (and dev F1)
    beside the paper's F1, and a plot of the per-seed F1 per row."""
    from .evaluation.seeds import SUMMARY_FILE, datasets_table, plot_datasets
    from .evaluation.tables import paper_ner_scores

    results = {}
    for dataset, run_dir in _named_paths(runs).items():
        summary_path = run_dir / SUMMARY_FILE
        if not summary_path.is_file():
            raise typer.BadParameter(f"{summary_path} is missing: run `spacy-biolm evaluate` for {dataset} first")
        results[dataset] = json.loads(summary_path.read_text(encoding="utf8"))
    paper_scores, paper_models = paper_ner_scores(paper) if paper and paper.is_file() else ({}, {})
    shown = {m: paper_models.get(m, m).split(" (")[0] for m in ("bio_electra", "electra_small_pp", "bert_base")
             if any(m in scores for scores in paper_scores.values())}
    metrics = {"ents_p": "P", "ents_r": "R", "ents_f": "F1"}
    if all("dev_ents_f" in result["summary"] for result in results.values()):
        metrics["dev_ents_f"] = "dev F1"
    table = datasets_table(results, paper_scores, shown, metrics, row_title)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(f"NER test sets, entity-level, percent: {name}, mean (std) over seeds.\n\n{table}",
                      encoding="utf8")
    output.with_suffix(".json").write_text(json.dumps(results, indent=2), encoding="utf8")
    bio_electra_f1 = {d: s["bio_electra"][-1] for d, s in paper_scores.items() if "bio_electra" in s}
    plot_datasets(results, "ents_f", output.with_suffix(".png"), f"{name}: NER test F1 per seed", bio_electra_f1,
                  "Bio-ELECTRA (paper)")
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


@app.command("release-meta")
def release_meta_cli(
    base_meta: Path = typer.Argument(..., help="meta.json with the release's name, description, sources, licences"),
    output: Path = typer.Argument(..., help="meta.json to write (for `spacy package --meta-path`)"),
    metrics: List[Path] = typer.Argument(..., help="COMPONENT=PATH pairs: each component's test-set evaluation JSON"),
    table: Optional[Path] = typer.Option(None, "--table", help="Also write the score table as Markdown here"),
):
    """The release's meta.json: the base meta plus every component's test scores (performance and a table)."""
    from .evaluation.release import release_meta, release_rows, release_table

    rows = release_rows(_named_paths(metrics))
    meta = release_meta(json.loads(base_meta.read_text(encoding="utf8")), rows)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(meta, indent=2), encoding="utf8")
    markdown = release_table(rows)
    if table:
        table.write_text(markdown, encoding="utf8")
    print(markdown)


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
