"""The release's meta.json and score table: what each component of en_bio_electra scores on which
test set, gathered from the task evaluations the project wrote (``metrics/*.json``).

``spacy package`` renders ``meta["performance"]`` (scores in 0-1, printed as percent) and
``meta["notes"]`` into the wheel's README; we fill both, and return the same table for the
project's README.
"""

import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .tables import markdown_table

__all__ = ["RELEASE_METRICS", "release_rows", "release_table", "release_meta", "write_release_meta"]

# component -> (what it does, its test set, [(metric key in the evaluation JSON, column title)])
RELEASE_METRICS: Dict[str, Tuple[str, str, List[Tuple[str, str]]]] = {
    "ner": ("diseases", "NCBI-disease test", [("ents_p", "P"), ("ents_r", "R"), ("ents_f", "F1")]),
    "ner_gene": ("genes and proteins", "BC2GM test", [("ents_p", "P"), ("ents_r", "R"), ("ents_f", "F1")]),
    "relation_extractor": ("gene-disease associations", "GAD fold 1 test (gold entities)",
                           [("rel_micro_p", "P"), ("rel_micro_r", "R"), ("rel_micro_f", "F1")]),
    "yes_no": ("yes/no answers", "BioASQ yes/no test (Bio-ELECTRA)",
               [("yes_no_f_yes", "F1 yes"), ("yes_no_f_no", "F1 no")]),
    "answer_span": ("factoid answer spans", "BioASQ factoid (Bio-ELECTRA dev.json)",
                    [("answer_em", "EM"), ("answer_f1", "F1")]),
    "answer_reranker": ("answer-sentence ranking", "BioASQ reranking test (Bio-ELECTRA)",
                        [("rerank_mrr", "MRR")]),
    "hallmarks": ("hallmarks of cancer (document classes, `doc.cats`)", "HoC test (fixed PMID split)",
                  [("cats_micro_f", "micro F1"), ("cats_macro_f", "macro F1")]),
}


def release_rows(metric_paths: Dict[str, Path]) -> List[Dict[str, object]]:
    """One row per component in ``metric_paths`` ({component: evaluation JSON}): its task, test
    set and ``{title: score}``. An unknown component or a missing metric is an error naming it."""
    rows = []
    for component, path in metric_paths.items():
        if component not in RELEASE_METRICS:
            raise KeyError(f"{component!r} is not a release component; expected one of {list(RELEASE_METRICS)}")
        task, test_set, metrics = RELEASE_METRICS[component]
        scores = json.loads(Path(path).read_text(encoding="utf8"))
        missing = [key for key, _ in metrics if key not in scores]
        if missing:
            raise KeyError(f"{path} has no {missing} (scores of {component!r}); it has {sorted(scores)}")
        rows.append({"component": component, "task": task, "test_set": test_set,
                     "scores": {key: scores[key] for key, _ in metrics}})
    return rows


def release_table(rows: Sequence[Dict[str, object]]) -> str:
    """Markdown table: component, task, test set, and its scores in percent (MRR as is)."""
    table_rows = []
    for row in rows:
        titles = dict(RELEASE_METRICS[row["component"]][2])
        shown = []
        for key, value in row["scores"].items():
            title = titles[key]
            text = "n/a" if value is None else (f"{value:.3f}" if title == "MRR" else f"{100 * value:.2f}")
            shown.append(f"{title} {text}")
        table_rows.append([f"`{row['component']}`", row["task"], row["test_set"], ", ".join(shown)])
    return markdown_table(["component", "task", "test set", "scores"], table_rows, numeric=False)


def release_meta(base_meta: Dict[str, object], rows: Sequence[Dict[str, object]]) -> Dict[str, object]:
    """``base_meta`` with ``performance`` ({component_metric: score}) and the score table in ``notes``."""
    performance = {f"{row['component']}_{key}": value for row in rows for key, value in row["scores"].items()
                   if value is not None}
    notes = (
        "### Test scores of each component\n\n"
        "Measured by the project that built this package (`spacy project run all`); the question-answering "
        "components are disabled by default and run on Docs made with `spacy_biolm.make_question_doc`.\n\n"
        + release_table(rows)
    )
    return {**base_meta, "performance": performance, "notes": notes}


def write_release_meta(base_meta: Path, output: Path, metric_paths: Dict[str, Path], table: Optional[Path] = None) -> str:
    """Write the release's meta.json (``base_meta`` plus every component's test scores from
    ``metric_paths``, {component: evaluation JSON}) to ``output`` for ``spacy package --meta-path``;
    also the score table to ``table`` when given. Returns the table."""
    rows = release_rows(metric_paths)
    meta = release_meta(json.loads(Path(base_meta).read_text(encoding="utf8")), rows)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(meta, indent=2), encoding="utf8")
    markdown = release_table(rows)
    if table:
        Path(table).parent.mkdir(parents=True, exist_ok=True)
        Path(table).write_text(markdown, encoding="utf8")
    return markdown
