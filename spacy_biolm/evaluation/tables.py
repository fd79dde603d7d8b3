"""Results tables: our scores beside the published ones."""

import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

__all__ = ["markdown_table", "ner_results_table", "paper_ner_rows", "paper_ner_scores", "parse_named_paths",
           "parse_named_path_groups"]


def parse_named_paths(items: Iterable[str]) -> Dict[str, Path]:
    """``["NAME=PATH", ...]`` (a row name and its scores file, as the table commands take them) as
    ``{name: Path}``, in order; ValueError names a bad item or a name given twice (a row would be
    lost)."""
    named = {}
    for name, paths in parse_named_path_groups(items).items():
        if len(paths) > 1:
            raise ValueError(f"row name {name!r} given {len(paths)} times: {', '.join(map(str, paths))}")
        named[name] = paths[0]
    return named


def parse_named_path_groups(items: Iterable[str]) -> Dict[str, List[Path]]:
    """``["NAME=PATH", ...]`` with a name repeated for each run of one row (e.g. one trained
    pipeline per seed) as ``{name: [Path, ...]}``, in order; ValueError names a bad item or a
    path given twice."""
    groups: Dict[str, List[Path]] = {}
    for item in items:
        name, _, path = str(item).partition("=")
        if not name or not path:
            raise ValueError(f"expected NAME=PATH, got {item!r}")
        if Path(path) in groups.get(name, []):
            raise ValueError(f"{name}={path} given twice")
        groups.setdefault(name, []).append(Path(path))
    return groups


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]], numeric: bool = True) -> str:
    """A Markdown table; with ``numeric``, every column but the first is right-aligned."""
    align = "---:" if numeric else "---"
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + [align] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def paper_ner_scores(paper_results: Path) -> Tuple[Dict[str, Dict[str, List[float]]], Dict[str, str]]:
    """The Bio-ELECTRA paper's NER table, ``{dataset: {model: [P, R, F1]}}``, and its model names."""
    paper = json.loads(Path(paper_results).read_text(encoding="utf8"))["bio_electra_2020"]
    tables = {dataset: scores for dataset, scores in paper["ner"].items() if isinstance(scores, dict)}
    return tables, paper.get("models", {})


def paper_ner_rows(paper_results: Path, dataset: str) -> List[List[str]]:
    """Rows (model, P, R, F1) of the Bio-ELECTRA paper's NER table for ``dataset``."""
    tables, names = paper_ner_scores(paper_results)
    scores = tables.get(dataset, {})
    return [
        [f"{names.get(model, model)} (paper)", *(f"{v:.2f}" for v in prf)]
        for model, prf in scores.items()
    ]


def ner_results_table(
    metrics: Dict[str, Path], dataset: str = "NCBI-disease", paper_results: Optional[Path] = None
) -> str:
    """Markdown table of entity-level P/R/F1 (percent) from `spacy evaluate` JSON files."""
    rows: List[List[str]] = []
    for name, path in metrics.items():
        scores = json.loads(Path(path).read_text(encoding="utf8"))
        speed = scores.get("speed")
        rows.append(
            [name]
            + [f"{100 * scores[k]:.2f}" for k in ("ents_p", "ents_r", "ents_f")]
            + [f"{speed:,.0f}" if speed else ""]
        )
    if paper_results and Path(paper_results).is_file():
        rows.extend(row + [""] for row in paper_ner_rows(paper_results, dataset))
    header = ["model", "P", "R", "F1", "words/s (CPU)"]
    return (f"{dataset} test set, entity-level (exact span and type match), percent.\n\n"
            + markdown_table(header, rows))
