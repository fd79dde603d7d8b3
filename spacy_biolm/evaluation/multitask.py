"""The multi-task release's components on their own test sets, in the form ``release-meta`` reads.

One pipeline (configs/release_multitask.cfg) holds the ``ner`` of every entity type, the relation
extractor and the hallmarks classifier; each is scored as its per-task pipeline is: the ``ner`` on
each NER test set's own entity types (one JSON per release row, e.g. ``ner`` for NCBI-disease's
DISEASE and ``ner_gene`` for BC2GM's GENE), the relations on gold entities, the hallmarks with
per-label thresholds tuned on dev first (stored in the pipeline, as ``train-hoc`` does).
"""

from pathlib import Path
from typing import Dict, Sequence, Tuple

__all__ = ["evaluate_multitask"]


def evaluate_multitask(
    model_dir: Path,
    output_dir: Path,
    entities: Dict[str, Tuple[Sequence[str], Path]],
    relations: Path,
    hoc_dev: Path,
    hoc_test: Path,
    objective: str = "label_f1",
    use_gpu: int = -1,
) -> Dict[str, Path]:
    """Write ``output_dir/<row>_test.json`` for each ``entities`` row (``{row: (types, test
    DocBin)}``), ``relation_extractor`` (``relations``: a relation test DocBin) and ``hallmarks``
    (thresholds tuned on ``hoc_dev`` by ``objective`` into ``model_dir``, then ``hoc_test``);
    return ``{row: path}``."""
    from ..loading import load_pipeline
    from ..run_record import write_json
    from .entities import score_entity_types
    from .hoc import score_pipeline, tune_pipeline_thresholds
    from .relations import evaluate_relations

    output_dir = Path(output_dir)
    device = "gpu" if use_gpu >= 0 else "cpu"
    written = {}
    nlp = load_pipeline(model_dir, use_gpu)
    for row, (types, test_path) in entities.items():
        written[row] = output_dir / f"{row}_test.json"
        write_json(written[row], score_entity_types(nlp, test_path, types), device=device)
    written["relation_extractor"] = output_dir / "relation_extractor_test.json"
    evaluate_relations(model_dir, relations, written["relation_extractor"], use_gpu=use_gpu)
    tune_pipeline_thresholds(model_dir, hoc_dev, use_gpu=use_gpu, objective=objective)
    written["hallmarks"] = output_dir / "hallmarks_test.json"
    scores = score_pipeline(model_dir, hoc_test, use_gpu=use_gpu)
    write_json(written["hallmarks"], scores, device=device)
    return written
