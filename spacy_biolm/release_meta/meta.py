"""The release's meta.json: ``spacy package`` renders ``meta["performance"]`` (scores in 0-1,
printed as percent) and ``meta["notes"]`` into the wheel's README; we fill both from the task
evaluations the project wrote (``metrics/*.json``), and write ``results/release.json``
(:func:`~spacy_biolm.evaluation.release_scores.release_results`) beside it.
"""

import json
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

from ..evaluation.release_scores import release_results, release_rows, release_table, results_table

__all__ = ["release_meta", "write_release_meta"]


def release_meta(
    base_meta: Dict[str, object], rows: Sequence[Dict[str, object]], results: Optional[Dict[str, object]] = None,
    encoders: Sequence[Tuple[Sequence[str], Dict[str, object]]] = (),
) -> Dict[str, object]:
    """``base_meta`` with ``performance`` ({component_metric: score}) and, in ``notes``, the score
    table and (with ``results`` of :func:`release_results`) each headline beside its baseline and
    the paper. ``encoders`` pairs the components (none: all of them) with the provenance
    (:func:`~spacy_biolm.pretraining.provenance.encoder_provenance`) of the encoder they
    fine-tuned: each is named where the description says ``{encoder}``, and their checkpoints and
    pretraining text, with their licences, come first among the sources (each source once)."""
    from ..pretraining.provenance import describe_encoder, provenance_sources

    description = str(base_meta.get("description", ""))
    if "{encoder}" in description:
        if not encoders:
            raise ValueError("the base meta's description names {encoder}: give the encoder directory (--encoder)")
        named = [describe_encoder(provenance) + (f" ({', '.join(components)})" if components else "")
                 for components, provenance in encoders]
        description = description.replace("{encoder}", " and ".join(named))
    sources: list = []
    for source in [entry for _, provenance in encoders for entry in provenance_sources(provenance)] + list(base_meta.get("sources", [])):
        if source not in sources:
            sources.append(source)
    performance = {f"{row['component']}_{key}": value for row in rows for key, value in row["scores"].items()
                   if value is not None}
    notes = (
        "### Test scores of each component\n\n"
        "Measured by the project that built this package (`spacy project run all`); the question-answering "
        "components are disabled by default and run on Docs made with `spacy_biolm.make_question_doc`.\n\n"
        + release_table(rows)
    )
    if results is not None:
        notes += "\n### Beside the baselines of the same run and the papers\n\n" + results_table(results)
    return {**base_meta, "description": description, "sources": sources, "performance": performance, "notes": notes}



def write_release_meta(
    base_meta: Path,
    output: Path,
    metric_paths: Dict[str, Path],
    table: Optional[Path] = None,
    results_path: Optional[Path] = None,
    baseline_paths: Optional[Dict[str, Dict[str, Path]]] = None,
    paper_results: Optional[Path] = None,
    run: Optional[Dict[str, object]] = None,
    train_times: Optional[Path] = None,
    encoder_dirs: Sequence[Tuple[Sequence[str], Path]] = (),
) -> str:
    """Write the release's meta.json (``base_meta`` plus every component's test scores from
    ``metric_paths``, {component: evaluation JSON}, and the provenance of the encoders in
    ``encoder_dirs``, (components, HF directory) pairs) to ``output`` for ``spacy package
    --meta-path``; also the score table to ``table`` and :func:`release_results` to
    ``results_path`` when given. Returns the table."""
    from ..pretraining.provenance import encoder_provenance

    rows = release_rows(metric_paths)
    unknown = sorted({c for components, _ in encoder_dirs for c in components} - set(metric_paths))
    if unknown:
        raise ValueError(f"--encoder names components with no test scores: {', '.join(unknown)} "
                         f"(components: {', '.join(metric_paths)})")
    results = release_results(metric_paths, baseline_paths, paper_results, run, train_times) if results_path else None
    if results is not None:  # the commit and date of this run, beside its profile and device (results/README.md reads them)
        from ..run_record import stamp_json

        results = stamp_json(results, profile=results.get("profile"), device=results.get("device"))
    encoders = [(components, encoder_provenance(path)) for components, path in encoder_dirs]
    meta = release_meta(json.loads(Path(base_meta).read_text(encoding="utf8")), rows, results, encoders)
    for path, text in [(output, json.dumps(meta, indent=2)), (table, release_table(rows)),
                       (results_path, json.dumps(results, indent=2) + "\n" if results else None)]:
        if path and text is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text, encoding="utf8")
    return release_table(rows)
