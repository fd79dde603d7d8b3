"""A ``ner``'s scores on a test set that annotates some of its entity types.

The multi-task release finds DISEASE and GENE (a ``typed_ner`` each); NCBI-disease's test set marks
diseases only, BC2GM's genes only. Each is scored on its own types
(:func:`~spacy_biolm.pipes.entity_scorer.score_annotated_entities`), which for one type is that
type's P/R/F1 in ``spacy evaluate``'s ``ents_per_type``, the number the per-task ``ner`` is
compared by.
"""

from pathlib import Path
from typing import Dict, Optional, Sequence

__all__ = ["evaluate_entity_types"]


def evaluate_entity_types(model_path: Path, data_path: Path, types: Sequence[str], output: Optional[Path] = None,
                          use_gpu: int = -1) -> Dict[str, object]:
    """``ents_p``, ``ents_r``, ``ents_f`` and ``ents_per_type`` of the pipeline at ``model_path``
    on the DocBin ``data_path``, counting entities of ``types`` only; optionally written as JSON."""
    import spacy
    from spacy.training import Corpus, Example

    from ..doc_data import set_annotated_entity_types
    from ..pipes.entity_scorer import score_annotated_entities

    if use_gpu >= 0:
        spacy.require_gpu(use_gpu)
    nlp = spacy.load(model_path)
    examples = list(Corpus(str(data_path))(nlp))
    for eg in examples:
        set_annotated_entity_types(eg.reference, types)
    predicted = nlp.pipe(eg.predicted for eg in examples)
    scores = score_annotated_entities(Example(doc, eg.reference) for doc, eg in zip(predicted, examples))
    scores.update({"types": sorted(types), "docs": len(examples)})
    if output is not None:
        from ..run_record import write_json

        Path(output).parent.mkdir(parents=True, exist_ok=True)
        write_json(output, scores, device="gpu" if use_gpu >= 0 else "cpu")
    return scores
