"""Relation extraction scores: a trained pipeline on a test set, the summary of 10-fold CV, tables.

The input mode is the config's architecture (:func:`relation_architecture`); training and
cross-validation are in :mod:`spacy_biolm.experiments.relations`. Scores come from ``nlp.evaluate`` on
``spacy-biolm.RelationCorpus.v1`` (gold entities, as the papers), i.e. the registered
``spacy-biolm.relations_scorer.v1``.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from spacy.training import Example

from ..loading import load_pipeline
from ..pipes.relation_extractor.scorer import DEFAULT_PREFIX, configured_prefix
from .baselines import all_positive_relations

__all__ = [
    "METRICS",
    "evaluate_relations",
    "with_found_entities",
    "summarise_folds",
    "cv_markdown",
    "relation_architecture",
    "paper_re_rows",
    "relations_table",
]

METRICS = ("rel_micro_p", "rel_micro_r", "rel_micro_f")


def relation_architecture(config_path: Path) -> str:
    """The registered architecture of the config's ``relation_extractor`` model (its input mode)."""
    from spacy.util import load_config

    config = load_config(config_path, interpolate=False)
    try:
        return config["components"]["relation_extractor"]["model"]["@architectures"]
    except KeyError as err:
        raise ValueError(f"{config_path}: no [components.relation_extractor.model] with an @architectures") from err


def evaluate_relations(
    model_path: Path, data_path: Path, output: Optional[Path] = None, limit: int = 0, use_gpu: int = -1,
    entities_from: Optional[Path] = None, component: str = "relation_extractor",
) -> Dict[str, object]:
    """Score the relation extractor ``component`` of a trained pipeline on a relation DocBin (the
    first ``limit`` docs when ``limit`` > 0) on GPU ``use_gpu`` (-1: CPU), with the all-positive
    baseline on the same candidate pairs under ``baselines``; optionally write JSON. Its scores are
    under the ``rel_`` keys whatever its scorer's prefix (a pipeline of several extractors).

    The pairs are drawn from the gold entities, as the papers score, or with ``entities_from`` (a
    pipeline that finds the extractor's entity types) from the entities it finds in each sentence's
    text, end to end: a relation then counts only where both its entities were found exactly. Those
    entities' scores against the gold ones are under ``entities``."""
    from ..corpora.relations import RelationCorpus

    nlp = load_pipeline(model_path, use_gpu)
    extractor = nlp.get_pipe(component)
    examples = list(RelationCorpus(data_path, limit=limit, gold_entities=entities_from is None)(nlp))
    if entities_from is not None:
        finder = nlp if Path(entities_from) == Path(model_path) else load_pipeline(entities_from, use_gpu)
        examples = with_found_entities(finder, nlp, examples, extractor.cfg["pair_types"])
    scores = nlp.evaluate(examples)  # scores copies of the examples: their Docs stay as given
    prefix = configured_prefix(nlp.config["components"][component])
    scores.update({DEFAULT_PREFIX + key[len(prefix):]: value for key, value in scores.items() if key.startswith(f"{prefix}_")})
    scores["pairs"] = sum(len(extractor.candidate_pairs(eg.predicted)) for eg in examples)
    scores["docs"] = len(examples)
    scores["entities_from"] = "gold" if entities_from is None else str(entities_from)
    if entities_from is not None:
        from ..pipes.entity_scorer import score_annotated_entities

        scores["entities"] = score_annotated_entities(examples, spans_key=None)
    name, baseline = all_positive_relations(examples, extractor.candidate_pairs)
    scores["baselines"] = {name: {key: baseline[key] for key in METRICS}}
    if output is not None:
        from ..run_record import stamp_json

        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(json.dumps(stamp_json(scores, device="gpu" if use_gpu >= 0 else "cpu"), indent=2),
                                encoding="utf8")
    return scores


def with_found_entities(finder, nlp, examples: Sequence[Example], pair_types: Sequence[Sequence[str]]) -> List[Example]:
    """``examples`` whose predicted Docs (in ``nlp``'s vocab, ``finder``'s tokens) hold the entities
    ``finder`` found in the reference text, of the types ``pair_types`` pairs: an entity of another
    type would be read as an "other entity" the extractor was not trained to see. A type no pair
    names, or one ``finder`` cannot find, raises ValueError."""
    from spacy.tokens import Doc, Span

    wanted = {label for pair in pair_types for label in pair}
    findable = {label for _, pipe in finder.pipeline for label in getattr(pipe, "labels", ())}
    if not wanted or not wanted <= findable:
        raise ValueError(f"the entity pipeline finds {sorted(findable)}; the relation extractor pairs {sorted(wanted)}")
    found_docs = finder.pipe(eg.reference.text for eg in examples)
    out = []
    for eg, found in zip(examples, found_docs):
        doc = Doc(nlp.vocab, words=[t.text for t in found], spaces=[bool(t.whitespace_) for t in found])
        doc.ents = [Span(doc, e.start, e.end, label=e.label_) for e in found.ents if e.label_ in wanted]
        out.append(Example(doc, eg.reference))
    return out


def summarise_folds(results: Sequence[Dict[str, object]]) -> Dict[str, object]:
    """Mean and sample standard deviation (percent) of each metric over folds."""
    summary: Dict[str, object] = {"folds": list(results)}
    summary.update(_mean_std(results))
    baselines = {name for r in results for name in r.get("baselines", {})}
    summary["baselines"] = {name: _mean_std([r["baselines"][name] for r in results]) for name in sorted(baselines)}
    return summary


def _mean_std(results: Sequence[Dict[str, object]]) -> Dict[str, float]:
    summary = {}
    for key in METRICS:
        values = [100 * float(r[key]) for r in results]
        summary[f"{key}_mean"] = statistics.mean(values) if values else 0.0
        summary[f"{key}_std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    return summary


def cv_markdown(summary: Dict[str, object]) -> str:
    """Per-fold P/R/F1 and the mean (std) row, percent."""
    lines = [f"Cross-validation of `{summary.get('config')}` ({summary.get('architecture')}); "
             "P/R/F1 of the positive class, percent.", "",
             "| fold | P | R | F1 | pairs |", "|---:|---:|---:|---:|---:|"]
    for r in summary["folds"]:
        lines.append(f"| {r['fold']} | {100 * r['rel_micro_p']:.2f} | {100 * r['rel_micro_r']:.2f} | "
                     f"{100 * r['rel_micro_f']:.2f} | {r['pairs']} |")
    lines.append("| mean (std) | " + " | ".join(
        f"{summary[f'{k}_mean']:.2f} ({summary[f'{k}_std']:.2f})" for k in METRICS) + " | |")
    for name, baseline in summary.get("baselines", {}).items():
        lines.append(f"| {name} (baseline), mean (std) | " + " | ".join(
            f"{baseline[f'{k}_mean']:.2f} ({baseline[f'{k}_std']:.2f})" for k in METRICS) + " | |")
    return "\n".join(lines) + "\n"


def paper_re_rows(paper_results: Path, dataset: str) -> List[List[str]]:
    """Published rows (model, P, R, F1) for ``GAD`` or ``CHEMPROT`` (Bio-ELECTRA table 6; BioBERT F1)."""
    data = json.loads(Path(paper_results).read_text(encoding="utf8"))
    electra = data["bio_electra_2020"]
    key = {"GAD": "GAD", "CHEMPROT": "CHEMPROT_micro"}.get(dataset, dataset)
    rows = [[f"{electra['models'].get(m, m)} (paper)", *(f"{v:.2f}" for v in prf)]
            for m, prf in electra["re"].get(key, {}).items()]
    biobert = data.get("biobert_2019", {}).get("re_f1", {})
    name = {"CHEMPROT": "CHEMPROT"}.get(dataset, dataset)
    if name in biobert:
        rows.append(["BioBERT v1.1 (paper)", "", "", f"{biobert[name]:.2f}"])
    return rows


def relations_table(results: Dict[str, Path], dataset: str, paper_results: Optional[Path] = None) -> str:
    """Markdown table: ours (``name -> scores JSON``, from ``relations-evaluate`` or ``cv.json``)
    beside the published numbers."""
    rows, found_lines = [], []
    for name, path in results.items():
        scores = json.loads(Path(path).read_text(encoding="utf8"))
        found = (scores.get("entities") or {}).get("ents_per_type")
        if found:
            per_type = ", ".join(f"{label} P {100 * v['p']:.1f}, R {100 * v['r']:.1f}, F1 {100 * v['f']:.1f}"
                                 for label, v in found.items())
            found_lines += ["", f"{name}: the entities found against the gold ones: {per_type}."]
        if "rel_micro_f_mean" in scores:
            cells = [f"{scores[f'{k}_mean']:.2f} ({scores[f'{k}_std']:.2f})" for k in METRICS]
        else:
            cells = [f"{100 * scores[k]:.2f}" for k in METRICS]
        rows.append([name, *cells])
        for baseline, values in scores.get("baselines", {}).items():
            if "rel_micro_f_mean" in values:
                cells = [f"{values[f'{k}_mean']:.2f} ({values[f'{k}_std']:.2f})" for k in METRICS]
            else:
                cells = [f"{100 * values[k]:.2f}" for k in METRICS]
            rows.append([f"{baseline}, same test Docs as {name} (baseline)", *cells])
    if paper_results and Path(paper_results).is_file():
        rows += paper_re_rows(paper_results, dataset)
    lines = [f"{dataset} relation extraction, test set, P/R/F1 percent "
             f"({'micro over CPR:3,4,5,6,9' if dataset == 'CHEMPROT' else 'positive class'}).", "",
             "| model | P | R | F1 |", "|---|---:|---:|---:|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows] + found_lines
    return "\n".join(lines) + "\n"
