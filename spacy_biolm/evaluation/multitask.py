"""The multi-task release's components on their own test sets, in the form ``release-meta`` reads.

One pipeline (configs/release_multitask.cfg) holds the ``ner`` of every entity type, the relation
extractors and the hallmarks classifier; each is scored as its per-task pipeline is: the ``ner`` on
each NER test set's own entity types (one JSON per release row, e.g. ``ner`` for NCBI-disease's
DISEASE and ``ner_gene`` for BC2GM's GENE; a row of several test sets, e.g. ``ner_chemical`` on the
three corpora that teach CHEMICAL, is their macro average), the relations on gold entities (and
end to end, from the entities the pipeline finds), the hallmarks with per-label thresholds tuned on
dev first (stored in the pipeline, as ``train-hoc`` does).
"""

from collections import Counter
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple

__all__ = ["evaluate_multitask", "macro_entity_scores"]

SCORE_KEYS = ("ents_p", "ents_r", "ents_f")


def macro_entity_scores(per_test_set: Dict[str, Dict[str, object]]) -> Dict[str, object]:
    """One row's scores over several test sets (``{name: score_entity_types scores}``): P, R and F1
    (and those of ``doc_ents`` where every set has them) averaged over the sets, a set without a
    score (no gold and no predicted entity of the types) counting 0, each set's own scores under
    ``test_sets``; one set's scores as they are."""
    if len(per_test_set) == 1:
        return next(iter(per_test_set.values()))
    sets = list(per_test_set.values())

    def mean(key, scores):
        return sum(s[key] or 0.0 for s in scores) / len(scores)

    macro: Dict[str, object] = {key: mean(key, sets) for key in SCORE_KEYS}
    if all("doc_ents" in s for s in sets):
        macro["doc_ents"] = {key: mean(key, [s["doc_ents"] for s in sets]) for key in SCORE_KEYS}
    macro.update({"types": sorted({t for s in sets for t in s["types"]}), "docs": sum(s["docs"] for s in sets),
                  "average": "macro", "test_sets": dict(per_test_set)})
    return macro


def evaluate_multitask(
    model_dir: Path,
    output_dir: Path,
    entities: Dict[str, Tuple[Sequence[str], Sequence[Path]]],
    relations: Optional[Dict[str, Path]] = None,
    hoc_dev: Optional[Path] = None,
    hoc_test: Optional[Path] = None,
    objective: str = "label_f1",
    use_gpu: int = -1,
    end_to_end: Sequence[str] = (),
) -> Dict[str, Path]:
    """Write ``output_dir/<row>_test.json`` for each ``entities`` row (``{row: (types, test
    DocBins)}``: several are macro-averaged, :func:`macro_entity_scores`), each relation extractor
    of ``relations`` (``{component: relation test DocBin}``, on its gold entities; a component of
    ``end_to_end`` also from the entities the pipeline finds in the text, under ``end_to_end``
    and as ``end_to_end_micro_p/r/f``) and ``hallmarks`` (thresholds tuned on ``hoc_dev`` by
    ``objective`` into ``model_dir``, then ``hoc_test``), each where given (a pipeline of NER
    components alone, e.g. a CNN baseline, has entity rows only); return ``{row: path}``."""
    from ..loading import load_pipeline
    from ..run_record import write_json
    from .entities import predict_entities, score_predicted_entities

    if (hoc_dev is None) != (hoc_test is None):
        raise ValueError("the hallmarks need both a dev set (thresholds) and a test set; got one of them")
    output_dir = Path(output_dir)
    device = "gpu" if use_gpu >= 0 else "cpu"
    written = {}
    nlp = load_pipeline(model_dir, use_gpu)
    predicted = {}  # each test set is annotated once, whichever rows score it
    for row, (types, test_paths) in entities.items():
        if not test_paths:
            raise ValueError(f"entity row {row!r} names no test set")
        twice = sorted(path for path, n in Counter(map(str, test_paths)).items() if n > 1)
        if twice:
            raise ValueError(f"entity row {row!r} names {twice} more than once (its macro average would weigh them twice)")
        written[row] = output_dir / f"{row}_test.json"
        for path in map(str, test_paths):
            if path not in predicted:
                predicted[path] = predict_entities(nlp, Path(path))
        scores = macro_entity_scores({path: score_predicted_entities(predicted[path], types) for path in map(str, test_paths)})
        write_json(written[row], scores, device=device)
    unscored = sorted(set(end_to_end) - set(relations or {}))
    if unscored:
        raise ValueError(f"end to end: {unscored} have no relation test set")
    from .relations import METRICS, evaluate_relations

    for component, test_path in (relations or {}).items():
        written[component] = output_dir / f"{component}_test.json"
        scores = evaluate_relations(model_dir, test_path, use_gpu=use_gpu, component=component)
        if component in end_to_end:
            found = evaluate_relations(model_dir, test_path, use_gpu=use_gpu, component=component, entities_from=model_dir)
            scores["end_to_end"] = {key: found[key] for key in (*METRICS, "baselines", "entities", "pairs", "docs")}
            scores.update({key.replace("rel_", "end_to_end_"): found[key] for key in METRICS})
            # The all-positive baseline on the pairs of the entities found: the end-to-end score's own.
            scores["end_to_end_baseline_micro_f"] = next(iter(found["baselines"].values()))["rel_micro_f"]
        write_json(written[component], scores, device=device)
    if hoc_test is not None:
        from .hoc import score_pipeline, tune_pipeline_thresholds

        tune_pipeline_thresholds(model_dir, hoc_dev, use_gpu=use_gpu, objective=objective)
        written["hallmarks"] = output_dir / "hallmarks_test.json"
        write_json(written["hallmarks"], score_pipeline(model_dir, hoc_test, use_gpu=use_gpu), device=device)
    return written
