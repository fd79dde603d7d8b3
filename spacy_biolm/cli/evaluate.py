"""``spacy-biolm evaluate``: results over seeds, hyperparameter search, and the tables and meta.json
that set our scores beside the published ones."""

from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import PASS_OVERRIDES, config_overrides, gpu_option, sub_app, user_errors

__all__ = ["app"]

app = sub_app("Evaluation: NER over seeds, hyperparameter search, results tables, the release's meta.json.")


@app.command("seeds", context_settings=PASS_OVERRIDES)
def seeds_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="spaCy training config (e.g. configs/ner.cfg)"),
    output_dir: Path = typer.Argument(..., help="Runs go to OUTPUT_DIR/DATASET/ (seed_N/, summary, table, plot)"),
    corpora: List[str] = typer.Option(..., "--corpus", "-c", help="DATASET=DIR (repeatable): DIR holds train.spacy, devel.spacy, test.spacy"),
    n_seeds: int = typer.Option(3, "--seeds", help="Number of seeds (the papers used 10)"),
    first_seed: int = typer.Option(1, "--first-seed"),
    name: str = typer.Option("model", "--name", help="Our row's name in the tables"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json: the paper's rows for each DATASET"),
    gpu_id: int = gpu_option(),
):
    """Train and test a config over several seeds on each corpus; write mean (std) as JSON, a Markdown
    table beside the published numbers and a per-seed plot. Scored seeds are reused when re-run.
    Extra ``--section.key value`` options override the config."""
    from ..evaluation.seeds import evaluate_seeds
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        named = parse_named_paths(corpora)
    seeds = list(range(first_seed, first_seed + n_seeds))
    with user_errors(FileNotFoundError):
        tables = evaluate_seeds(config_path, output_dir, named, seeds, config_overrides(ctx), name=name,
                                paper_results=paper, use_gpu=gpu_id)
    for dataset, table in tables.items():
        msg.divider(dataset)
        print(table)


@app.command("seeds-table")
def seeds_table_cli(
    output: Path = typer.Argument(..., help="Markdown table to write (the plot and JSON go beside it)"),
    runs: List[str] = typer.Argument(..., help="ROW=DIR pairs: run folders of `evaluate seeds` (rows: datasets or configs)"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
    name: str = typer.Option("ours", "--name", help="Our model, for the plot's title"),
    row_title: str = typer.Option("dataset", "--row-title", help="What the rows are: datasets, or configs compared"),
):
    """One NER table over datasets (or configs on one dataset): our mean (std) test P/R/F1 (and dev F1)
    beside the paper's F1, and a plot of the per-seed F1 per row."""
    from ..evaluation.seeds import write_datasets_table
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        print(write_datasets_table(output, parse_named_paths(runs), paper, name=name, row_title=row_title))


@app.command("tune", context_settings=PASS_OVERRIDES)
def tune_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="spaCy training config to tune"),
    space_path: Path = typer.Argument(..., help=".cfg with a [space] section (e.g. configs/tune_ner.cfg)"),
    output_dir: Path = typer.Argument(..., help="Trials (trial_N/, trials.pkl, trials.jsonl), best.cfg, best.json"),
    max_evals: int = typer.Option(8, "--max-evals", help="Trials in total (a re-run resumes and adds up to this)"),
    dev_metric: str = typer.Option("ents_f", "--metric", help="Dev-set score to maximise"),
    seed: int = typer.Option(0, "--seed"),
    gpu_id: int = gpu_option(),
):
    """Hyperparameter search with hyperopt (TPE) over the values in SPACE; objective = dev score.
    Extra ``--section.key value`` options override the config for every trial."""
    from ..evaluation.tune import load_space, tune

    best = tune(config_path, output_dir, load_space(space_path), max_evals, dev_metric, config_overrides(ctx),
                seed=seed, use_gpu=gpu_id)
    msg.good(f"Best of {best['trials']} trials: {dev_metric} {best['dev_score']:.4f} with {best['params']}; "
             f"config in {output_dir / 'best.cfg'}")


@app.command("ner-table")
def ner_table_cli(
    output: Path = typer.Argument(..., help="Markdown file to write"),
    metrics: List[str] = typer.Argument(..., help="NAME=PATH pairs of `spacy evaluate` metrics JSON files"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
    dataset: str = typer.Option("NCBI-disease", "--dataset"),
):
    """Write the NER results table: ours beside the published numbers."""
    from ..evaluation.tables import ner_results_table, parse_named_paths

    with user_errors():
        table = ner_results_table(parse_named_paths(metrics), dataset=dataset, paper_results=paper)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(table, encoding="utf8")
    print(table)


@app.command("release-meta")
def release_meta_cli(
    base_meta: Path = typer.Argument(..., help="meta.json with the release's name, description, sources, licences"),
    output: Path = typer.Argument(..., help="meta.json to write (for `spacy package --meta-path`)"),
    metrics: List[str] = typer.Argument(..., help="COMPONENT=PATH pairs: each component's test-set evaluation JSON"),
    table: Optional[Path] = typer.Option(None, "--table", help="Also write the score table as Markdown here"),
):
    """The release's meta.json: the base meta plus every component's test scores (performance and a table)."""
    from ..evaluation.release import write_release_meta
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        print(write_release_meta(base_meta, output, parse_named_paths(metrics), table))


@app.command("hoc-thresholds")
def hoc_thresholds_cli(
    model_dir: Path = typer.Argument(..., help="Trained pipeline with a textcat_multilabel (e.g. training/hoc/model-best); updated in place"),
    dev_path: Path = typer.Argument(..., help="Dev DocBin (corpus/hoc/dev.spacy)"),
    output: Optional[Path] = typer.Option(None, "--output", help="Also write the thresholds and dev scores here (JSON)"),
    gpu_id: int = gpu_option(),
):
    """Tune one threshold per label on dev (the F1-best of 0.05 ... 0.95) and store them in the
    pipeline's config as its textcat scorer, so `spacy.load` and `spacy evaluate` use them."""
    import json

    from ..evaluation.hoc import tune_pipeline_thresholds

    with user_errors():
        result = tune_pipeline_thresholds(model_dir, dev_path, use_gpu=gpu_id)
    before, after = result["dev_untuned"], result["dev_tuned"]
    msg.good(f"{model_dir}: dev micro F1 {100 * before['cats_micro_f']:.2f} -> {100 * after['cats_micro_f']:.2f}, "
             f"macro F1 {100 * before['cats_macro_f']:.2f} -> {100 * after['cats_macro_f']:.2f} with per-label thresholds")
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2), encoding="utf8")


@app.command("hoc", context_settings=PASS_OVERRIDES)
def hoc_cli(
    ctx: typer.Context,
    output: Path = typer.Argument(..., help="Results JSON to write (e.g. metrics/hoc_seeds.json)"),
    configs: List[str] = typer.Option(..., "--config", "-c", help='NAME=CONFIG (repeatable), e.g. "ours=configs/hoc.cfg", "spaCy bag-of-words=configs/hoc_bow.cfg"'),
    runs_dir: Path = typer.Option(Path("training/hoc_seeds"), "--runs", help="Runs go to RUNS/<config stem>/seed_N"),
    corpus: Path = typer.Option(Path("corpus/hoc"), "--corpus", help="Folder with train.spacy, dev.spacy, test.spacy"),
    n_seeds: int = typer.Option(3, "--seeds", help="Number of seeds"),
    first_seed: int = typer.Option(1, "--first-seed"),
    table: Optional[Path] = typer.Option(None, "--table", help="Markdown table to write"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json (published HoC rows, if it has any)"),
    gpu_id: int = gpu_option(),
):
    """HoC over several seeds: train each config per seed (the baseline in the same run), tune its
    thresholds on dev, test; micro and macro F1 as mean (std). Scored seeds are reused when re-run.
    Extra ``--section.key value`` options override every config."""
    from ..evaluation.hoc import evaluate_hoc_seeds, write_hoc_results
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        named = parse_named_paths(configs)
    seeds = list(range(first_seed, first_seed + n_seeds))
    with user_errors(FileNotFoundError):
        result = evaluate_hoc_seeds(named, runs_dir, corpus / "train.spacy", corpus / "dev.spacy", corpus / "test.spacy",
                                    seeds, config_overrides(ctx), use_gpu=gpu_id)
    print(write_hoc_results(result, output, table, paper)[0])


@app.command("hoc-test")
def hoc_test_cli(
    output: Path = typer.Argument(..., help="Results JSON to write (e.g. metrics/hoc_test.json)"),
    models: List[str] = typer.Argument(..., help="NAME=MODEL_DIR pairs of trained pipelines whose thresholds were tuned"),
    test: Path = typer.Option(Path("corpus/hoc/test.spacy"), "--test", help="Test DocBin"),
    table: Optional[Path] = typer.Option(None, "--table", help="Markdown table to write"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json (published HoC rows, if it has any)"),
    model_scores: Optional[Path] = typer.Option(None, "--model-scores", help="Also write the first model's test scores as flat JSON (what release-meta reads)"),
    gpu_id: int = gpu_option(),
):
    """Score trained HoC pipelines (tuned with hoc-thresholds) on the test split: micro and macro F1
    beside each other, as JSON and a Markdown table."""
    from ..evaluation.hoc import evaluate_hoc_models, write_hoc_results
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        named = parse_named_paths(models)
        result = evaluate_hoc_models(named, test, use_gpu=gpu_id)
    print(write_hoc_results(result, output, table, paper)[0])
    if model_scores:
        import json

        first = next(iter(result["rows"].values()))["runs"][0]
        model_scores.parent.mkdir(parents=True, exist_ok=True)
        model_scores.write_text(json.dumps(first, indent=2), encoding="utf8")
