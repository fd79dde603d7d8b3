"""Command-line inputs shared by the pretraining benchmarks: a config, a text and a vocabulary,
defaulting to what `spacy project run encoder` builds."""

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def add_pretraining_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "pretrain_tiny.cfg")
    parser.add_argument("--text", type=Path, default=ROOT / "corpus" / "pretraining" / "text.txt")
    parser.add_argument("--vocab", type=Path, default=ROOT / "pretrained" / "vocab")


def check_pretraining_inputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    for path in (args.text, args.vocab):
        if not path.exists():
            parser.error(f"{path} not found: run `spacy project run encoder` first, or pass --text/--vocab")
