"""``spacy-biolm release``: commands that change or build a saved pipeline: its tuned HoC thresholds,
its sentence splitter, its encoders stored smaller (float16, int8 for pair encoders), a config sharing its encoder, a config with more entity types, and the release's wheels (the pipeline and the
spacy-biolm library it needs)."""

from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import gpu_option, objective_option, sub_app, user_errors

__all__ = ["app"]

app = sub_app("Change or build a saved pipeline: tune its HoC thresholds, replace its sentencizer, halve its weights, share its encoder, add entity types to its config, "
              "package the pipeline wheel beside the spacy-biolm wheel it requires.")


@app.command("package")
def package_cli(
    pipeline_dir: Path = typer.Argument(..., help="The assembled pipeline (e.g. training/release)", exists=True),
    packages_dir: Path = typer.Argument(..., help="Where `spacy package` writes en_NAME-VERSION/"),
    dist_dir: Path = typer.Argument(Path("dist"), help="Where the spacy-biolm wheel goes"),
    name: str = typer.Option(..., "--name", help="Package name without the language prefix (bio_electra)"),
    version: str = typer.Option(..., "--version", help="Package version"),
    meta_path: Optional[Path] = typer.Option(None, "--meta-path", help="meta.json for the package (default: the pipeline's)"),
    results: Optional[Path] = typer.Option(None, "--results", help="Also record the pipeline wheel's file name and size in bytes (`wheel`) in this results JSON (results/release.json)"),
):
    """Build the pipeline wheel (`spacy package`, its meta requiring exactly this spacy-biolm
    version) and the spacy-biolm wheel beside it; install both with
    `pip install DIST/spacy_biolm-*.whl PACKAGES/en_NAME-VERSION/dist/*.whl`."""
    from ..wheels import build_release_wheels, record_wheel_size

    with user_errors(ValueError, KeyError, FileNotFoundError, RuntimeError):
        pipeline_wheel, library_wheel = build_release_wheels(pipeline_dir, packages_dir, dist_dir, name, version, meta_path)
        if results is not None:
            record_wheel_size(results, pipeline_wheel)
    msg.good(f"Built {pipeline_wheel} and {library_wheel}")


@app.command("halve")
def halve_cli(
    pipeline_dir: Path = typer.Argument(..., help="A saved pipeline (e.g. training/release)", exists=True),
    output_dir: Path = typer.Argument(..., help="New directory for its copy with float16 (pair encoders: int8) encoder weights"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace OUTPUT_DIR if it holds a saved pipeline (an earlier copy)"),
    float16: str = typer.Option("", "--float16", help="Comma-separated PairEncoder components kept in float16 instead of int8 (e.g. answer_reranker)"),
):
    """Copy a pipeline with every encoder's weights stored in float16 (half the bytes), those of its
    PairEncoder components (the QA components) in int8 with a scale per row (a quarter) unless named
    in --float16; it loads and runs in float32 as before, with the weights rounded."""
    from ..encoders.half_precision import halve_pipeline

    with user_errors(FileNotFoundError, FileExistsError, ValueError):
        keep = [name.strip() for name in float16.split(",") if name.strip()]
        sizes = halve_pipeline(pipeline_dir, output_dir, overwrite=overwrite, float16=keep)
    for component, (before, after) in sizes.items():
        msg.good(f"{component}: {before:,} -> {after:,} bytes")
    if not sizes:
        msg.warn(f"{pipeline_dir} has no encoder weights to halve")


@app.command("share-encoder")
def share_encoder_cli(
    config_path: Path = typer.Argument(..., help="A task config with a `transformer` and components listening to it (configs/ner.cfg, hoc.cfg, relations_fast.cfg)", exists=True),
    source: Path = typer.Argument(..., help="The trained pipeline whose transformer is shared (e.g. training/ner/model-best)", exists=True),
    output: Path = typer.Argument(..., help="The config to write; `python -m spacy train` trains it"),
    adapter_depth: int = typer.Option(0, "--adapter-depth", help="Residual maxout layers between the frozen encoder and each head (0: none)"),
):
    """Write `config_path` with its transformer sourced from `source`, frozen and annotating: its
    heads train on the shared encoder's vectors, and the release built from such pipelines
    (configs/release_one_encoder.cfg) runs that one encoder once per token."""
    from spacy.util import load_config

    from ..training.shared_encoder import encoder_width, share_encoder

    with user_errors():
        width = encoder_width(source) if adapter_depth else 0
        config = share_encoder(load_config(config_path, interpolate=False), source, adapter_depth, width)
    output.parent.mkdir(parents=True, exist_ok=True)
    config.to_disk(output)
    msg.good(f"Wrote {output}: {config_path.name} on the frozen transformer of {source}")


@app.command("add-entity-types")
def add_entity_types_cli(
    config_path: Path = typer.Argument(..., help="A multi-task config with typed_ner components (configs/release_multitask.cfg)", exists=True),
    output: Path = typer.Argument(..., help="The config to write; `python -m spacy train` trains it"),
    directory: Path = typer.Option(..., "--corpora-dir", help="Where <corpus>/train.spacy and devel.spacy are, converted to the release's types (projects/entity-types: corpus/ner)"),
    corpora: List[str] = typer.Option(..., "--corpus", help="A corpus that teaches some of the new types (repeatable)"),
    types: List[str] = typer.Option(..., "--type", help="A new entity type, one typed_ner each (repeatable): CHEMICAL, SPECIES, CELL"),
    template: str = typer.Option("ner_gene", "--template", help="The typed_ner whose block each new one copies"),
    dev_limit: int = typer.Option(0, "--dev-limit", help="Read at most this many devel Docs of each added corpus (0: all)"),
):
    """Write `config_path` with a typed_ner per new entity type and the corpora that teach it in its
    train and dev readers; an added corpus teaches only the new types, so the config's own types
    keep their corpora (and guidelines)."""
    from spacy.util import load_config

    from ..training.entity_types_config import add_entity_types, typed_ner_types

    with user_errors():
        config = add_entity_types(load_config(config_path, interpolate=False), directory, corpora, types, template, dev_limit)
    output.parent.mkdir(parents=True, exist_ok=True)
    config.to_disk(output)
    components = ", ".join(f"{name} ({', '.join(types)})" for name, types in typed_ner_types(config).items())
    msg.good(f"Wrote {output}: {components}, taught by {', '.join(corpora)} beside the config's corpora")


@app.command("add-relation-extractor")
def add_relation_extractor_cli(
    config_path: Path = typer.Argument(..., help="A multi-task config with a relation_extractor (configs/release_multitask.cfg, or add-entity-types' output)", exists=True),
    output: Path = typer.Argument(..., help="The config to write; `python -m spacy train` trains it"),
    name: str = typer.Option(..., "--name", help="The new component, e.g. relation_chemprot"),
    dataset: str = typer.Option(..., "--dataset", help="Its labels and entity-type pairs: a relation dataset (chemprot)"),
    task: str = typer.Option(..., "--task", help="Its corpus's task name in the readers, e.g. chemprot"),
    train: Path = typer.Option(..., "--train", help="Relation training DocBin with entities (relations convert)"),
    dev: Path = typer.Option(..., "--dev", help="Relation dev DocBin"),
    score_prefix: str = typer.Option(..., "--score-prefix", help="Its score keys' prefix (<prefix>_micro_f), unlike the config's extractor's rel_"),
    score_weight: float = typer.Option(0.0, "--score-weight", help="The weight of its dev F1 in choosing model-best"),
    dev_limit: int = typer.Option(0, "--dev-limit", help="Read at most this many dev Docs (0: all)"),
):
    """Write `config_path` with a second relation extractor listening to the same transformer, its
    own labels and entity-type pairs (e.g. ChemProt's chemical-gene relations beside GAD's
    gene-disease ones) and its corpus as one more task of the train and dev readers."""
    from spacy.util import load_config

    from ..training.relations_config import add_relation_extractor

    with user_errors():
        config = add_relation_extractor(load_config(config_path, interpolate=False), name, dataset, task, train, dev,
                                        score_prefix, score_weight, dev_limit=dev_limit)
    output.parent.mkdir(parents=True, exist_ok=True)
    config.to_disk(output)
    added = config["components"][name]
    msg.good(f"Wrote {output}: {name} ({', '.join(added['labels'])} between {added['pair_types']}), taught by {train}")


@app.command("tune-thresholds")
def tune_thresholds_cli(
    model_dir: Path = typer.Argument(..., help="Trained pipeline with a textcat_multilabel (e.g. training/hoc/model-best); updated in place"),
    dev_path: Path = typer.Argument(..., help="Dev DocBin (corpus/hoc/dev.spacy)"),
    output: Optional[Path] = typer.Option(None, "--output", help="Also write the thresholds and dev scores here (JSON)"),
    objective: str = objective_option(),
    gpu_id: int = gpu_option(),
):
    """Tune a threshold for every label on dev (of 0.05 ... 0.95, by --objective) and store them in
    the pipeline's config as its textcat scorer, so `spacy.load` and `spacy evaluate` use them.
    Also reports each objective's dev scores cross-validated over halves of dev."""
    import json

    from ..evaluation.hoc import tune_pipeline_thresholds

    with user_errors():
        result = tune_pipeline_thresholds(model_dir, dev_path, use_gpu=gpu_id, objective=objective)
    before, after = result["dev_untuned"], result["dev_tuned"]
    msg.good(f"{model_dir}: dev micro F1 {100 * before['cats_micro_f']:.2f} -> {100 * after['cats_micro_f']:.2f}, "
             f"macro F1 {100 * before['cats_macro_f']:.2f} -> {100 * after['cats_macro_f']:.2f} with {objective} thresholds")
    for name, scores in result["dev_cross_validated"].items():
        msg.text(f"  {name}: micro F1 {100 * scores['micro_f']:.2f}, macro F1 {100 * scores['macro_f']:.2f} "
                 "on halves of dev the thresholds were not tuned on")
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2), encoding="utf8")


@app.command("replace-sentencizer")
def replace_sentencizer_cli(
    model_dir: Path = typer.Argument(..., help="A saved pipeline with spaCy's sentencizer (trained before biomedical_sentencizer); updated in place", exists=True, file_okay=False),
):
    """Replace the pipeline's spaCy `sentencizer` by `biomedical_sentencizer` (same settings, same
    name and place), which starts no sentence at a lower-case word or a digit (`P. falciparum`,
    `Kv1 . 7`). Neither has weights, so nothing is retrained; a pipeline that has one already is
    left as it is."""
    import spacy

    from ..pipes.sentencizer import replace_sentencizers

    with user_errors(OSError, ValueError):
        nlp = spacy.load(model_dir)
        replaced = replace_sentencizers(nlp)
        if replaced:
            nlp.to_disk(model_dir)
        elif "biomedical_sentencizer" not in {nlp.get_pipe_meta(name).factory for name in nlp.component_names}:
            raise ValueError(f"{model_dir} has no sentencizer to replace (its pipeline: {', '.join(nlp.pipe_names)})")
    if replaced:
        msg.good(f"{model_dir}: {', '.join(replaced)} is now a biomedical_sentencizer")
    else:
        msg.info(f"{model_dir} already splits sentences with a biomedical_sentencizer: unchanged")
