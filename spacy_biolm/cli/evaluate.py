"""``spacy-biolm evaluate``: results over seeds, hyperparameter search, and the tables and meta.json
that set our scores beside the published ones."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import PASS_OVERRIDES, config_overrides, gpu_option, objective_option, sub_app, user_errors

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
    from ..experiments.seeds import evaluate_seeds
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


@app.command("encoders")
def encoders_cli(
    encoders: List[str] = typer.Argument(..., help="NAME=DIR pairs: the HF encoder directories (or installed packages holding one) to compare"),
    output_dir: Path = typer.Option(Path("training/encoders"), "--output", "-o", help="Runs go to OUTPUT/NAME/TASK/seed_N/"),
    results: Path = typer.Option(Path("results/encoders.json"), "--results", help="The ablation's JSON (a Markdown table goes beside it)"),
    tasks: str = typer.Option("ncbi,bc2gm,gad,yes_no", "--tasks", help="Comma-separated tasks: ncbi, bc2gm, gad, yes_no"),
    n_seeds: int = typer.Option(3, "--seeds", help="Seeds per encoder and task"),
    budget: List[str] = typer.Option([], "--budget", help="TASK:SECTION.KEY=VALUE override of the task's config (e.g. ncbi:training.max_steps=300), repeatable"),
    project_dir: Path = typer.Option(Path("."), "--project", help="Project directory (configs/, corpus/)"),
    reference: Optional[str] = typer.Option(None, "--reference", help="NAME of the encoder to keep unless another leads it in mean dev score by more than the seed std (the published checkpoint)"),
    gpu_id: int = gpu_option(),
):
    """Fine-tune every encoder with the same recipe on the deciding tasks over several seeds; write
    test and dev mean (std), held-out pretraining losses and times, and the encoder chosen on dev.
    Scored runs are reused, so an interrupted ablation resumes."""
    from spacy.cli._util import _parse_override

    from ..evaluation.encoder_choice import ablation_table
    from ..experiments.encoders import run_encoder_ablation
    from ..evaluation.tables import parse_named_paths
    from ..pretraining.warm_start import package_model_dir

    with user_errors():
        overrides: dict = {}
        for item in budget:
            task, _, setting = item.partition(":")
            key, _, value = setting.partition("=")
            if not (task and key and value):
                raise ValueError(f"--budget expects TASK:SECTION.KEY=VALUE, got {item!r}")
            # The value reads as on spaCy's command line: JSON where it parses (0.0001, 200, true), else a string.
            overrides.setdefault(task, {})[key] = _parse_override(value)
        inits = {name: str(path) for name, path in parse_named_paths(encoders).items()}
        named = {name: package_model_dir(init) or Path(init) for name, init in inits.items()}
        result = run_encoder_ablation(named, output_dir, [t for t in tasks.split(",") if t], list(range(n_seeds)),
                                      overrides, project_dir=project_dir, use_gpu=gpu_id, inits=inits, reference=reference)
    table = ablation_table(result)
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(result, indent=2), encoding="utf8")
    from ..run_record import with_run_comment

    results.with_suffix(".md").write_text(with_run_comment(table, result.get("run")), encoding="utf8")
    print(table)
    msg.good(f"Chosen on dev: {result['chosen']}; wrote {results} and {results.with_suffix('.md')}")


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
    from ..evaluation.seed_summaries import write_datasets_table
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        print(write_datasets_table(output, parse_named_paths(runs), paper, name=name, row_title=row_title))


@app.command("tune", context_settings=PASS_OVERRIDES)
def tune_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="spaCy training config to tune"),
    space_path: Path = typer.Argument(..., help=".cfg with a [space] section (e.g. projects/ner-seeds-tune/configs/tune_ner.cfg)"),
    output_dir: Path = typer.Argument(..., help="Trials (trial_N/, trials.pkl, trials.jsonl), best.cfg, best.json"),
    max_evals: int = typer.Option(8, "--max-evals", help="Trials in total (a re-run resumes and adds up to this)"),
    dev_metric: str = typer.Option("ents_f", "--metric", help="Dev-set score to maximise"),
    seed: int = typer.Option(0, "--seed"),
    gpu_id: int = gpu_option(),
):
    """Hyperparameter search with hyperopt (TPE) over the values in SPACE; objective = dev score.
    Extra ``--section.key value`` options override the config for every trial."""
    from ..experiments.tune import load_space, tune

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
    results: Optional[Path] = typer.Option(None, "--results", help="Also write results/release.json here: each headline beside its baselines and the paper"),
    baseline: List[str] = typer.Option([], "--baseline", help="COMPONENT=TITLE=PATH: a trained baseline's evaluation JSON (e.g. spaCy's CNN for ner), repeatable"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json (the papers' values in --results)"),
    run: List[str] = typer.Option([], "--run", help="KEY=VALUE recorded in --results about the run (profile, encoder, gpu_id, seeds), repeatable"),
    train_times: Optional[Path] = typer.Option(None, "--train-times", help="JSON of the components' training wall times (`spacy-biolm timed COMPONENT -- ...`)"),
    encoder: List[str] = typer.Option([], "--encoder", help="COMPONENT,...=DIR (or DIR for all components): the HF encoder directory those components fine-tuned (export-encoder's), named in the description, its checkpoint and pretraining text listed with their licences under sources; repeatable"),
    sample_model: Optional[Path] = typer.Option(None, "--sample-model", help="The assembled release: what it prints for README's example text is recorded in --results (`sample`)"),
):
    """The release's meta.json: the base meta plus every component's test scores (performance and a
    table) and where its encoder came from; with --results, results/release.json beside the
    baselines and the papers."""
    from ..encoders.devices import describe_device
    from ..release_meta.meta import write_release_meta
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        baselines: dict = {}
        for item in baseline:
            component, title, path = (item.split("=", 2) + ["", ""])[:3]
            if not (component and title and path):
                raise ValueError(f"--baseline expects COMPONENT=TITLE=PATH, got {item!r}")
            baselines.setdefault(component, {})[title] = Path(path)
        run_info = {key: str(value) for key, value in parse_named_paths(run).items()}
        if "device" not in run_info:  # this machine, where the run's steps ran
            run_info["device"] = describe_device(int(run_info.get("gpu_id", -1)))
        encoder_dirs = []
        for item in encoder:
            components, _, path = item.rpartition("=")
            encoder_dirs.append(([c for c in components.split(",") if c], Path(path)))
        print(write_release_meta(base_meta, output, parse_named_paths(metrics), table, results, baselines, paper, run_info,
                                 train_times, encoder_dirs))
        if sample_model is not None:
            if results is None:
                raise ValueError("--sample-model records into --results: give both")
            import spacy

            from ..release_meta.sample import sample_output
            from ..run_record import add_fields

            add_fields(results, sample=sample_output(spacy.load(sample_model)))


@app.command("entity-types")
def entity_types_cli(
    model_path: Path = typer.Argument(..., help="Trained pipeline with a ner (e.g. training/multitask/model-best)"),
    data_path: Path = typer.Argument(..., help="NER test DocBin (e.g. corpus/ner/NCBI-disease/test.spacy)"),
    entity_type: List[str] = typer.Option(..., "--type", help="An entity type the test set annotates (repeatable); the ner's others are not counted"),
    output: Optional[Path] = typer.Option(None, "--output", help="Scores JSON to write (ents_p, ents_r, ents_f, ents_per_type)"),
    gpu_id: int = gpu_option(),
):
    """Score a ner that finds more entity types than a test set annotates on that set's types only
    (the multi-task release's one ner on NCBI-disease: DISEASE; on BC2GM: GENE)."""
    from ..evaluation.entities import evaluate_entity_types

    with user_errors(ValueError, OSError):
        scores = evaluate_entity_types(model_path, data_path, entity_type, output, use_gpu=gpu_id)
    msg.good(f"{model_path} on {data_path} ({', '.join(scores['types'])}): "
             + " ".join(f"{k}={100 * (scores[k] or 0):.2f}" for k in ("ents_p", "ents_r", "ents_f")))


@app.command("entity-corpora")
def entity_corpora_cli(
    model_path: Path = typer.Argument(..., help="Trained pipeline with one or more ner/typed_ner components"),
    directory: Path = typer.Argument(..., help="Folder of NER corpora converted to the release's entity types (projects/entity-types: corpus/ner)", exists=True, file_okay=False),
    corpus: List[str] = typer.Option(..., "--corpus", help="A corpus name of spacy_biolm/corpora/entity_types.py (repeatable)"),
    output: Path = typer.Option(..., "--output", help="Scores JSON to write"),
    split: str = typer.Option("test", "--split", help="Which split of each corpus"),
    trained_on: List[str] = typer.Option([], "--trained-on", help="A corpus the pipeline trained on (repeatable), for an assembled pipeline whose config does not say (default: read from its [corpora.train])"),
    gpu_id: int = gpu_option(),
):
    """Score a pipeline on many corpora's test sets, each on the entity types it annotates
    completely and the pipeline predicts, and record which corpora the pipeline trained on (for
    `docs entity-corpora-table`: in-corpus against cross-corpus)."""
    from ..evaluation.entities import evaluate_entity_corpora

    with user_errors(ValueError, OSError):
        results = evaluate_entity_corpora(model_path, directory, corpus, output, split=split, use_gpu=gpu_id,
                                          trained=trained_on or None)
    for name, scores in results["corpora"].items():
        msg.info(f"{name} ({', '.join(scores['types'])}): F1 {100 * (scores['ents_f'] or 0):.1f}")
    msg.good(f"Wrote {output}")


@app.command("entity-errors")
def entity_errors_cli(
    model_path: Path = typer.Argument(..., help="Trained pipeline with one or more ner/typed_ner components"),
    data_path: Path = typer.Argument(..., help="DocBin annotating --type completely (e.g. projects/entity-types' corpus/ner/BioNLP11ID/test.spacy)", exists=True, dir_okay=False),
    entity_type: str = typer.Option(..., "--type", help="The entity label whose errors to list"),
    output: Path = typer.Option(..., "--output", help="JSON to write"),
    top: int = typer.Option(25, "--top", help="How many of the most frequent false positive and false negative texts"),
    gpu_id: int = gpu_option(),
):
    """A pipeline's errors on one entity type of a test set: exact-match counts, P/R/F1 and the
    most frequent texts of its false positives and false negatives."""
    from ..evaluation.entities import entity_errors, pipeline_entity_types, predict_entities
    from ..loading import load_pipeline
    from ..run_record import write_json

    with user_errors(ValueError, OSError):
        nlp = load_pipeline(model_path, gpu_id)
        if entity_type not in pipeline_entity_types(nlp):
            raise ValueError(f"{model_path} predicts {pipeline_entity_types(nlp)}, not {entity_type!r}")
        errors = entity_errors(predict_entities(nlp, data_path), entity_type, top)
    errors.update(model=str(model_path), data=str(data_path))
    write_json(output, errors, device="gpu" if gpu_id >= 0 else "cpu")
    msg.info(f"{entity_type}: P {100 * errors['p']:.1f} R {100 * errors['r']:.1f} F1 {100 * errors['f']:.1f}; "
             f"most frequent false positives: {errors['top_false_positives'][:5]}")
    msg.good(f"Wrote {output}")


@app.command("held-out", context_settings=PASS_OVERRIDES)
def held_out_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Multi-corpus NER config whose readers take paths.held_out (projects/entity-types/configs/ner_entity_types.cfg)"),
    output_dir: Path = typer.Argument(..., help="One run per held-out corpus goes to OUTPUT_DIR/CORPUS/"),
    directory: Path = typer.Argument(..., help="Folder of NER corpora converted to the release's entity types (projects/entity-types: corpus/ner)", exists=True, file_okay=False),
    corpus: List[str] = typer.Option(..., "--corpus", help="A corpus to hold out (repeatable): one training without it, scored on its test set"),
    output: Path = typer.Option(..., "--output", help="Scores JSON to write: each corpus scored by the run that never read it (`docs entity-corpora-table` takes it as a column)"),
    split: str = typer.Option("test", "--split", help="Which split of each held-out corpus is scored"),
    scores_dir: Optional[Path] = typer.Option(None, "--scores-dir", help="Keep each run's scores here as CORPUS.json (default: OUTPUT_DIR/CORPUS/held_out_scores.json); committed, they let a matrix resume in another checkout"),
    scored_only: bool = typer.Option(False, "--scored-only", help="Train nothing: write the scored runs' column and name the corpora still to run (the matrix so far)"),
    gpu_id: int = gpu_option(),
):
    """Leave-one-corpus-out: train CONFIG once without each --corpus and score that run on the
    corpus's test set, on the types it annotates completely. Scored runs are reused, so an
    interrupted matrix resumes. Extra ``--section.key value`` options override the config."""
    from ..experiments.held_out import run_held_out
    from ..run_record import write_json

    with user_errors(ValueError, OSError):
        results = run_held_out(config_path, output_dir, directory, corpus, config_overrides(ctx), split=split, use_gpu=gpu_id,
                               scores_dir=scores_dir, scored_only=scored_only)
    write_json(output, results, device="gpu" if gpu_id >= 0 else "cpu")
    if results["not_run"]:
        msg.warn(f"Not run yet (--scored-only): {', '.join(results['not_run'])}")
    for name, scores in results["corpora"].items():
        msg.info(f"{name} held out ({', '.join(scores['types'])}): F1 {100 * (scores['ents_f'] or 0):.1f}")
    msg.good(f"Wrote {output}")


@app.command("multitask")
def multitask_cli(
    model_dir: Path = typer.Argument(..., help="The multi-task pipeline (training/multitask/model-best); its hallmarks thresholds are tuned in place"),
    output_dir: Path = typer.Argument(..., help="Directory for <row>_test.json, one per release row (what release-meta reads)"),
    entities: List[str] = typer.Option(..., "--entities", help="ROW=TYPE[,TYPE]=TEST.spacy[,TEST.spacy]: NER test sets and the entity types they annotate, e.g. ner=DISEASE=corpus/ner/NCBI-disease/test.spacy (several: their macro average); repeatable"),
    relations: List[str] = typer.Option([], "--relations", help="[COMPONENT=]TEST.spacy: a relation extractor's test DocBin, scored on its gold entities (no COMPONENT: relation_extractor); repeatable"),
    end_to_end: List[str] = typer.Option([], "--end-to-end", help="A relation extractor of --relations also scored from the entities the pipeline finds (repeatable)"),
    hoc_dev: Optional[Path] = typer.Option(None, "--hoc-dev", help="HoC dev DocBin: the hallmarks' thresholds are tuned on it"),
    hoc_test: Optional[Path] = typer.Option(None, "--hoc-test", help="HoC test DocBin"),
    objective: str = objective_option(),
    gpu_id: int = gpu_option(),
):
    """Score every component of a multi-task pipeline on its own test set, as the per-task
    pipelines are scored: the ner on each test set's entity types (a row of several test sets:
    their macro average), the relations on gold entities (--end-to-end: also on those it finds),
    the hallmarks with thresholds tuned on dev. Without --relations or --hoc-test those rows are
    left out (a pipeline of NER components)."""
    from ..evaluation.multitask import evaluate_multitask

    relation_sets = {}
    for item in relations:
        component, _, path = item.rpartition("=")
        relation_sets[component or "relation_extractor"] = Path(path)

    rows = {}
    for item in entities:
        row, types, paths = (item.split("=", 2) + ["", ""])[:3]
        if not (row and types and paths):
            raise typer.BadParameter(f"--entities expects ROW=TYPE[,TYPE]=TEST.spacy[,TEST.spacy], got {item!r}")
        rows[row] = ([t for t in types.split(",") if t], [Path(p) for p in paths.split(",") if p])
    output_dir.mkdir(parents=True, exist_ok=True)
    with user_errors(ValueError, OSError):
        written = evaluate_multitask(model_dir, output_dir, rows, relation_sets, hoc_dev, hoc_test, objective=objective,
                                     use_gpu=gpu_id, end_to_end=end_to_end)
    for row, path in written.items():
        msg.good(f"{row}: {path}")


@app.command("listener-gradients", context_settings=PASS_OVERRIDES)
def listener_gradients_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., exists=True, dir_okay=False, help="A training config whose components listen to one transformer"),
    output: Path = typer.Argument(..., help="JSON: each head's gradient norm into the transformer, per batch and on average"),
    batches: int = typer.Option(6, "--batches", help="Training batches measured"),
    gpu_id: int = gpu_option(),
):
    """How hard each head pulls on the shared transformer: the norm of the gradient every listening
    component sends it, one head at a time, on the config's first training batches (weights
    unchanged). Balance the heads with their listeners' grad_factor; ``--section.key value``
    overrides the config, as in `spacy train`."""
    from ..run_record import write_json
    from ..training.listener_gradients import listener_gradients

    overrides = config_overrides(ctx)
    with user_errors(ValueError, OSError):
        result = listener_gradients(config_path, batches, overrides, use_gpu=gpu_id)
    write_json(output, {"config": str(config_path), "overrides": overrides, **result},
               device="gpu" if gpu_id >= 0 else "cpu")
    for head, row in result["heads"].items():
        msg.info(f"{head}: grad_factor {row['grad_factor']}, mean norm {row['mean_norm']:.4g} "
                 f"({result['ratio_to_largest'][head]:.3g} of the largest)")
    msg.good(f"Wrote {output}")


@app.command("hoc-objectives")
def hoc_objectives_cli(
    output: Path = typer.Argument(..., help="Results JSON to write (e.g. projects/hoc-heads/results/threshold_objectives.json)"),
    models: List[str] = typer.Argument(..., help="NAME=MODEL_DIR pairs of trained HoC pipelines (they are not changed)"),
    dev: Path = typer.Option(Path("corpus/hoc/dev.spacy"), "--dev", help="Dev DocBin the thresholds are tuned on"),
    test: Path = typer.Option(Path("corpus/hoc/test.spacy"), "--test", help="Test DocBin"),
    table: Optional[Path] = typer.Option(None, "--table", help="Markdown table to write"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json (published HoC rows, if it has any)"),
    gpu_id: int = gpu_option(),
):
    """Which --objective of `release tune-thresholds` to use: for each pipeline, the untuned 0.5 cut-off and
    every objective tuned on dev, scored on halves of dev they were not tuned on and on test."""
    import json

    from ..evaluation.hoc import compare_threshold_objectives, threshold_objectives_table
    from ..evaluation.tables import parse_named_paths

    with user_errors(ValueError, OSError):  # spaCy raises OSError for a model dir it cannot load
        named = parse_named_paths(models)
        result = compare_threshold_objectives(named, dev, test, use_gpu=gpu_id)
    from ..run_record import stamp_json, with_run_comment

    text = threshold_objectives_table(result, paper)
    result = stamp_json(result, device=result.get("device"))  # this run's commit and date
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(result, indent=2), encoding="utf8")
    if table:
        table.parent.mkdir(parents=True, exist_ok=True)
        table.write_text(with_run_comment(text + "\n", result["run"]), encoding="utf8")
    print(text)


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
    objective: str = objective_option(),
    gpu_id: int = gpu_option(),
):
    """HoC over several seeds: train each config per seed (the baseline in the same run), tune its
    thresholds on dev, test; micro and macro F1 as mean (std). Scored seeds are reused when re-run
    (re-tuned, not retrained, when --objective changed). Extra ``--section.key value`` options
    override every config."""
    from ..evaluation.hoc import write_hoc_results
    from ..experiments.hoc import evaluate_hoc_seeds
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        named = parse_named_paths(configs)
    seeds = list(range(first_seed, first_seed + n_seeds))
    with user_errors(FileNotFoundError):
        result = evaluate_hoc_seeds(named, runs_dir, corpus / "train.spacy", corpus / "dev.spacy", corpus / "test.spacy",
                                    seeds, config_overrides(ctx), use_gpu=gpu_id, objective=objective)
    print(write_hoc_results(result, output, table, paper)[0])


@app.command("hoc-test")
def hoc_test_cli(
    output: Path = typer.Argument(..., help="Results JSON to write (e.g. metrics/hoc_test.json)"),
    models: List[str] = typer.Argument(..., help="NAME=MODEL_DIR pairs of trained pipelines whose thresholds were tuned; "
                                       "repeat a NAME for each seed of one row (mean (std))"),
    test: Path = typer.Option(Path("corpus/hoc/test.spacy"), "--test", help="Test DocBin"),
    table: Optional[Path] = typer.Option(None, "--table", help="Markdown table to write"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json (published HoC rows, if it has any)"),
    model_scores: Optional[Path] = typer.Option(None, "--model-scores", help="Also write the first model's test scores as flat JSON (what release-meta reads)"),
    baseline_scores: Optional[Path] = typer.Option(None, "--baseline-scores", help="Also write the second model's (the baseline's) test scores as flat JSON"),
    gpu_id: int = gpu_option(),
):
    """Score trained HoC pipelines (tuned with `release tune-thresholds`) on the test split: micro and macro F1
    beside each other, as JSON and a Markdown table. Pipelines sharing a row name (seeds trained
    with ``spacy train``) are one row, as mean (std)."""
    from ..evaluation.hoc import evaluate_hoc_models, write_hoc_results
    from ..evaluation.tables import parse_named_path_groups
    from ..run_record import stamp_json

    with user_errors():
        named = parse_named_path_groups(models)
        flat = [(name, path) for name, path in zip(list(named)[:2], [model_scores, baseline_scores]) if path]
        several = [name for name, _ in flat if len(named[name]) > 1]
        if several:
            raise ValueError(f"--model-scores and --baseline-scores write one pipeline's scores; {several} have several")
        result = evaluate_hoc_models(named, test, use_gpu=gpu_id)
    print(write_hoc_results(result, output, table, paper)[0])
    for name, path in flat:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(stamp_json(result["rows"][name]["runs"][0], device=result.get("device")), indent=2), encoding="utf8")
