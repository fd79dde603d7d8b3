"""``spacy-biolm relations``: relation corpora to DocBins, training, evaluation, cross-validation, tables.

The input mode (fast or anonymised) is the config's: configs/relations_<task>_<mode>.cfg."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import PASS_OVERRIDES, config_overrides, gpu_option, sub_app, user_errors

__all__ = ["app", "parse_folds"]

app = sub_app("Relation extraction: convert GAD/EU-ADR/ChemProt, train, evaluate, cross-validate, tables.")


@app.command("convert")
def convert_cli(
    input_path: Path = typer.Argument(..., help="Relation corpus file, or a folder of them (train/dev/test)"),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write; for a folder input, the output folder (SPLIT.spacy each)"),
    fmt: str = typer.Option(..., "--format", "-f", help="biobert (GAD/EU-ADR TSV), chemprot (Bio-ELECTRA TSV) or scibert (ChemProt JSONL)"),
    dev_output: Optional[Path] = typer.Option(None, "--dev-output", help="Also write a held-out dev DocBin here (file input)"),
    dev_fraction: float = typer.Option(0.1, "--dev-fraction", help="Share of train documents held out as dev: with --dev-output, or for a folder without a dev file"),
    group: bool = typer.Option(False, "--group", help="chemprot: one Doc per sentence with all its pairs"),
    text_from: Optional[Path] = typer.Option(None, "--text-from", help="chemprot: SciBERT's ChemProt file of the same split (a folder input: SciBERT's folder, SPLIT.txt each), giving each sentence with a relation its words back (implies --group)"),
    skip_invalid: bool = typer.Option(False, "--skip-invalid", help="Leave out (and report) rows that cannot hold a relation instead of failing"),
    stats_path: Optional[Path] = typer.Option(None, "--stats", help="Write the conversion statistics as JSON"),
    limit: int = typer.Option(0, "--limit", help="Convert only the first N documents of each file (0 = all)"),
):
    """Convert a relation corpus (GAD/EU-ADR, ChemProt) to DocBins with entities and gold relations.

    A folder input converts each of its train/dev/test files in one process; when it has no dev
    file, --dev-fraction of train is held out as dev.spacy (GAD and EU-ADR ship none)."""
    from ..corpora.relations import convert_relations
    from ..corpora.splits import convert_relation_splits

    if text_from is not None and (fmt != "chemprot" or input_path.is_dir() != text_from.is_dir()):
        raise typer.BadParameter("--text-from takes the chemprot format and, as the input, one file (SciBERT's file of that split) or a folder")
    options = {"skip_invalid": skip_invalid, **({"group": group, "text_from": text_from} if fmt == "chemprot" else {})}
    with user_errors():
        if input_path.is_dir():
            report = convert_relation_splits(input_path, output_path, fmt, dev_fraction=dev_fraction, limit=limit, **options)
        else:
            report = {str(input_path): convert_relations(
                input_path, output_path, fmt, dev_output=dev_output, dev_fraction=dev_fraction if dev_output else 0.0,
                limit=limit, **options)}
    for source, stats in report.items():
        for skipped in stats["skipped"]:
            msg.warn(f"{source}:{skipped['line']}: skipped: {skipped['reason']}")
        msg.good(f"{source}: {json.dumps({k: v for k, v in stats.items() if k != 'skipped'})}")
    if stats_path:
        stats_path.parent.mkdir(parents=True, exist_ok=True)
        written = report if input_path.is_dir() else next(iter(report.values()))
        stats_path.write_text(json.dumps(written, indent=2), encoding="utf8")


@app.command("train", context_settings=PASS_OVERRIDES)
def train_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="configs/relations_MODE.cfg (MODE: anonymised or fast)"),
    output_dir: Path = typer.Argument(..., help="Training output directory (model-best, model-last, config.cfg)"),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="gad or chemprot: the corpus's labels, entity-type pairs and placeholders (default: the config's, GAD's)"),
    gpu_id: int = gpu_option(),
):
    """Train the relation extractor of a config (extra --section.key value options override it,
    and --dataset's settings)."""
    from ..corpora.relations import dataset_overrides
    from ..evaluation.relations import relation_architecture
    from ..experiments.relations import train_relations

    overrides = {}
    with user_errors():
        if dataset is not None:
            anonymised = relation_architecture(config_path) == "spacy-biolm.RelationAnonymised.v1"
            overrides = dataset_overrides(dataset.lower(), anonymised)
    model = train_relations(config_path, output_dir, overrides={**overrides, **config_overrides(ctx)}, use_gpu=gpu_id)
    msg.good(f"Trained: {model}")


@app.command("evaluate")
def evaluate_cli(
    model_path: Path = typer.Argument(..., help="Trained pipeline directory"),
    data_path: Path = typer.Argument(..., help="Relation DocBin (gold entities and relations)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Scores JSON to write"),
    limit: int = typer.Option(0, "--limit", help="Score only the first N documents (0 = all)"),
    table: Optional[Path] = typer.Option(None, "--table", help="Also write a Markdown table beside the paper (needs --output)"),
    name: str = typer.Option("ours", "--name", help="Row name in --table"),
    dataset: str = typer.Option("GAD", "--dataset", help="GAD or CHEMPROT (paper rows of --table)"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json for --table"),
    entities_from: Optional[Path] = typer.Option(None, "--entities-from", help="End to end: pair the entities this pipeline finds in each sentence, not the gold ones"),
    gpu_id: int = gpu_option(),
):
    """Score relations on gold entities (or, with --entities-from, on found ones): micro P/R/F1 over the positive labels."""
    from ..evaluation.relations import evaluate_relations, relations_table

    if table is not None and output is None:
        raise typer.BadParameter("--table needs --output (the table reads the scores file)")
    with user_errors():
        scores = evaluate_relations(model_path, data_path, output, limit=limit, use_gpu=gpu_id, entities_from=entities_from)
    if table is not None:
        table.parent.mkdir(parents=True, exist_ok=True)
        table.write_text(relations_table({name: output}, dataset, paper), encoding="utf8")
    msg.good(" ".join(f"{k}={100 * scores[k]:.2f}" for k in ("rel_micro_p", "rel_micro_r", "rel_micro_f"))
             + f" on {scores['pairs']} pairs")


def parse_folds(spec: str) -> List[int]:
    """``"1-10"``, ``"1,3,5"`` or ``"1"`` as the fold numbers, in order."""
    folds: List[int] = []
    for part in spec.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise typer.BadParameter(f"expected folds like '1-10', '1,3,5' or '1', got {spec!r}")
        folds += list(range(int(low), int(high or low) + 1))
    return folds


@app.command("cv", context_settings=PASS_OVERRIDES)
def cv_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="configs/relations_gad_MODE.cfg"),
    folds_dir: Path = typer.Argument(..., help="Folder with K/train.tsv and K/test.tsv (BioBERT GAD/EU-ADR)"),
    output_dir: Path = typer.Argument(..., help="Where fold runs, cv.json and cv.md go"),
    folds: str = typer.Option("1-10", "--folds", help="Folds to run: '1-10', '1,3,5' or '1'"),
    gpu_id: int = gpu_option(),
):
    """k-fold cross-validation (train + test per fold) with mean (std) of P/R/F1."""
    from ..experiments.relations import cross_validate

    chosen = parse_folds(folds)
    summary = cross_validate(config_path, folds_dir, output_dir, folds=chosen, overrides=config_overrides(ctx),
                             use_gpu=gpu_id)
    print((output_dir / "cv.md").read_text(encoding="utf8"))
    msg.good(f"F1 {summary['rel_micro_f_mean']:.2f} ({summary['rel_micro_f_std']:.2f}) over {len(chosen)} folds")


@app.command("table")
def table_cli(
    output: Path = typer.Argument(..., help="Markdown file to write"),
    scores: List[str] = typer.Argument(..., help="NAME=PATH pairs of `relations evaluate` JSON or cv.json files"),
    dataset: str = typer.Option("GAD", "--dataset", help="GAD or CHEMPROT (selects the paper rows)"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json"),
):
    """Write a relation extraction results table: ours beside the published numbers."""
    from ..evaluation.relations import relations_table
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        table = relations_table(parse_named_paths(scores), dataset, paper)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(table, encoding="utf8")
    print(table)
