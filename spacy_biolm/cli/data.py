"""``spacy-biolm data``: fetch the corpora, gather pretraining text, convert NER corpora to DocBins."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import sub_app, user_errors

__all__ = ["app"]

app = sub_app("Corpora: fetch the assets, gather pretraining text, convert NER corpora to DocBins.")


@app.command("assets")
def assets_cli(
    project_dir: Path = typer.Argument(Path("."), help="Project directory (with project.yml)"),
    mirror: Optional[Path] = typer.Option(None, "--mirror", help="Local mirror of the corpora (e.g. ../shared/data)"),
    extra: bool = typer.Option(False, "--extra", help="Also fetch assets marked 'extra: true'"),
):
    """Fetch project assets, copying checksum-verified files from a local mirror when present."""
    from ..assets import fetch_assets

    report = fetch_assets(project_dir, mirror if mirror and mirror.is_dir() else None, extra=extra)
    msg.good(", ".join(f"{len(v)} {k}" for k, v in report.items()))


@app.command("collect-text")
def collect_text_cli(
    output: Path = typer.Argument(..., help="Text file to write (one sentence per line, blank line between documents)"),
    sources: List[Path] = typer.Argument(..., help="Source files: .txt (doc per line), .csv, .jsonl, CoNLL .tsv (training splits only)"),
    stats_path: Optional[Path] = typer.Option(None, "--stats", help="Write per-source counts as JSON"),
):
    """Gather pretraining text from raw corpora into one file."""
    from ..pretraining.text import collect_text

    stats = collect_text(sources, output)
    rows = [(src, s["documents"], s["sentences"], s["words"]) for src, s in stats.to_dict()["sources"].items()]
    msg.table(rows, header=("source", "documents", "sentences", "words"), divider=True)
    msg.good(f"Wrote {stats.total('words'):,} words in {stats.total('sentences'):,} sentences to {output}")
    if stats_path:
        stats_path.parent.mkdir(parents=True, exist_ok=True)
        stats_path.write_text(json.dumps(stats.to_dict(), indent=2), encoding="utf8")


SCHEME_HELP = "typed (B-Disease), untyped (B/I/O) or auto"
LABEL_HELP = "Entity label for untyped B/I/O tags"
RELABEL_HELP = "OLD=NEW entity label to rename (repeatable)"


@app.command("convert")
def convert_cli(
    input_path: Path = typer.Argument(..., help="CoNLL/BIO NER file (token TAB tag)"),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write"),
    scheme: str = typer.Option("auto", "--scheme", help=SCHEME_HELP),
    label: str = typer.Option("ENTITY", "--label", help=LABEL_HELP),
    n_sents: int = typer.Option(1, "--n-sents", "-n", help="Sentences per Doc"),
    relabel: List[str] = typer.Option([], "--relabel", help=RELABEL_HELP),
):
    """Convert a CoNLL NER file to a spaCy DocBin."""
    from ..corpora.conll import convert_ner
    from ..corpora.splits import parse_label_map

    with user_errors():
        renames = parse_label_map(relabel)
    stats = convert_ner(input_path, output_path, scheme=scheme, label=label, n_sents=n_sents, relabel=renames)
    msg.good(f"{input_path} -> {output_path}: {json.dumps(stats)}")


@app.command("convert-splits")
def convert_splits_cli(
    input_dir: Path = typer.Argument(..., help="Directory with train.tsv, devel.tsv and test.tsv (CoNLL BIO)"),
    output_dir: Path = typer.Argument(..., help="Directory for train.spacy, devel.spacy and test.spacy"),
    scheme: str = typer.Option("auto", "--scheme", help=SCHEME_HELP),
    label: str = typer.Option("ENTITY", "--label", help=LABEL_HELP),
    relabel: List[str] = typer.Option([], "--relabel", help=RELABEL_HELP),
):
    """Convert the train/devel/test splits of one NER corpus to DocBins."""
    from ..corpora.splits import convert_ner_splits, parse_label_map

    with user_errors():
        report = convert_ner_splits(input_dir, output_dir, scheme=scheme, label=label, relabel=parse_label_map(relabel))
    for split, stats in report.items():
        msg.good(f"{stats['input']} -> {stats['output']}: {json.dumps(stats)}")
