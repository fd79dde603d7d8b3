"""Convert the train/dev/test split files of one corpus folder in a single call.

Corpora ship their splits as sibling files (``train.tsv``, ``devel.tsv``, ``test.tsv`` for the NER
benchmarks; ``train``/``dev``/``test`` with ``.tsv``, ``.txt`` or ``.jsonl`` for the relation
corpora). These functions find them, convert each with the single-file converter, and write
``<split>.spacy`` files into one output folder.
"""

from pathlib import Path
from typing import Dict, Iterable, Optional, Sequence, Union

__all__ = ["NER_SPLITS", "parse_label_map", "convert_ner_splits", "convert_relation_splits"]

PathLike = Union[str, Path]

# The split names of the MTL-Bioinformatics-2016 and BioBERT NER copies.
NER_SPLITS = ("train", "devel", "test")
RELATION_SPLITS = ("train", "dev", "test")
RELATION_SUFFIXES = (".tsv", ".txt", ".jsonl")


def parse_label_map(items: Iterable[str]) -> Dict[str, str]:
    """``["OLD=NEW", ...]`` as ``{old: new}`` (entity labels to rename); ValueError names a bad item."""
    mapping = {}
    for item in items:
        old, _, new = item.partition("=")
        if not old or not new:
            raise ValueError(f"expected OLD=NEW, got {item!r}")
        mapping[old] = new
    return mapping


def convert_ner_splits(
    input_dir: PathLike,
    output_dir: PathLike,
    scheme: str = "auto",
    label: str = "ENTITY",
    relabel: Optional[Dict[str, str]] = None,
    corpus: Optional[str] = None,
    exclude_test: Sequence[PathLike] = (),
    splits: Sequence[str] = NER_SPLITS,
    limit: int = 0,
) -> Dict[str, Dict[str, object]]:
    """``input_dir/{train,devel,test}.tsv`` (CoNLL BIO) -> ``output_dir/{train,devel,test}.spacy``.

    Every split of ``splits`` (default: all three) must be there (FileNotFoundError naming the
    missing file, before anything is written). ``relabel`` or ``corpus`` map the labels as
    :func:`convert_ner` does. ``exclude_test``: CoNLL test files; the train and devel sentences
    sharing a 13-word span with any of them are dropped (the test split never is). ``limit``: the
    first N sentences of each split only (0: all; smoke runs). Returns
    ``{split: conversion statistics}`` as :func:`convert_ner` gives them."""
    from .conll import conll_ngram_index, convert_ner

    unknown = [split for split in splits if split not in NER_SPLITS]
    if unknown or not splits:
        raise ValueError(f"splits must be some of {', '.join(NER_SPLITS)}, got {list(splits)}")
    input_dir, output_dir = Path(input_dir), Path(output_dir)
    sources = {split: input_dir / f"{split}.tsv" for split in NER_SPLITS if split in splits}
    missing = [str(path) for path in sources.values() if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing; expected {', '.join(s + '.tsv' for s in sources)}")
    exclude = conll_ngram_index(exclude_test) if exclude_test else None
    return {split: convert_ner(source, output_dir / f"{split}.spacy", scheme=scheme, label=label, relabel=relabel,
                               corpus=corpus, exclude=exclude if split != "test" else None, limit=limit)
            for split, source in sources.items()}


def convert_relation_splits(
    input_dir: PathLike,
    output_dir: PathLike,
    fmt: str,
    dev_fraction: float = 0.1,
    limit: int = 0,
    **options,
) -> Dict[str, dict]:
    """Every ``train``/``dev``/``test`` file of ``input_dir`` -> ``output_dir/<split>.spacy``.

    A folder without a dev file gets ``dev.spacy`` held out from train (``dev_fraction`` of its
    documents; GAD and EU-ADR ship none). ``options`` go to :func:`convert_relations` (``group``,
    ``skip_invalid``); ``text_from``, a folder, gives each split its file of the same name
    (SciBERT's ``<split>.txt``). Returns ``{source path: conversion statistics}``."""
    from .relations import convert_relations

    input_dir, output_dir = Path(input_dir), Path(output_dir)
    files = sorted(p for p in input_dir.iterdir() if p.suffix in RELATION_SUFFIXES and p.stem in RELATION_SPLITS)
    if not files:
        raise FileNotFoundError(f"{input_dir} has no {'/'.join(RELATION_SPLITS)} {'/'.join(RELATION_SUFFIXES)} files")
    text_dir = options.pop("text_from", None)
    texts = {source.stem: Path(text_dir) / f"{source.stem}.txt" for source in files} if text_dir is not None else {}
    missing = [str(path) for path in texts.values() if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing: the text of each split of {input_dir}")
    hold_out_dev = not any(p.stem == "dev" for p in files)
    report = {}
    for source in files:
        dev_output = output_dir / "dev.spacy" if source.stem == "train" and hold_out_dev else None
        report[str(source)] = convert_relations(
            source, output_dir / f"{source.stem}.spacy", fmt, dev_output=dev_output,
            dev_fraction=dev_fraction if dev_output else 0.0, limit=limit,
            **({**options, "text_from": texts[source.stem]} if texts else options),
        )
    return report
