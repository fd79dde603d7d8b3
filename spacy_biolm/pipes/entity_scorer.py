"""Entity scores over Docs that annotate different entity types.

spaCy's ``ner`` scorer counts every predicted entity of a Doc against its gold ``doc.ents``. When
a pipeline finds DISEASE and GENE but its dev Docs come from NCBI-disease (diseases only) and
BC2GM (genes only), that would call each correct gene found in an NCBI-disease sentence a false
positive. This scorer counts, in each Doc, only the entity types it annotates
(:func:`spacy_biolm.doc_data.annotated_entity_types`; every type when the Doc does not say), and
otherwise is spaCy's: exact (label, start, end) matches, predictions over tokens whose gold is
missing ignored, Docs without NER annotation skipped.

A prediction's entities are ``doc.spans["entities"]`` where its pipeline's ``typed_ner`` components
wrote that group (every entity they found, overlaps included), else ``doc.ents``: a component is
scored on what it found, as it would be alone in a pipeline.
"""

from collections import defaultdict
from typing import Any, Callable, Dict, Iterable, Optional

from spacy.scorer import PRFScore
from spacy.training import Example
from spacy.util import registry

from ..doc_data import ENTITIES_SPANS_KEY, annotated_entity_types

__all__ = ["score_annotated_entities", "make_annotated_entities_scorer"]


def score_annotated_entities(examples: Iterable[Example], spans_key: Optional[str] = ENTITIES_SPANS_KEY,
                             **kwargs: Any) -> Dict[str, Any]:
    """``ents_p``, ``ents_r``, ``ents_f`` (micro over the types) and ``ents_per_type``, each Doc
    scored on the entity types it annotates only; the predicted entities are
    ``doc.spans[spans_key]`` where the Doc has that group, else ``doc.ents``."""
    per_type: Dict[str, PRFScore] = defaultdict(PRFScore)
    for eg in examples:
        if not eg.y.has_annotation("ENT_IOB"):
            continue
        types = annotated_entity_types(eg.y)
        counted = (lambda label: True) if types is None else types.__contains__
        golds = {(e.label_, e.start, e.end) for e in eg.y.ents if counted(e.label_)}
        align_x2y = eg.alignment.x2y
        found = eg.x.spans[spans_key] if spans_key is not None and spans_key in eg.x.spans else eg.x.ents
        for pred in found:
            if not counted(pred.label_):
                continue
            indices = align_x2y[pred.start:pred.end]
            if not len(indices) or any(token.ent_iob == 0 for token in eg.y[indices[0]:indices[-1] + 1]):
                continue  # gold missing under the prediction: neither right nor wrong
            key = (pred.label_, indices[0], indices[-1] + 1)
            if key in golds:
                per_type[pred.label_].tp += 1
                golds.remove(key)
            else:
                per_type[pred.label_].fp += 1
        for label, _, _ in golds:
            per_type[label].fn += 1
    if not per_type:
        return {"ents_p": None, "ents_r": None, "ents_f": None, "ents_per_type": None}
    total = PRFScore()
    for score in per_type.values():
        total += score
    return {
        "ents_p": total.precision,
        "ents_r": total.recall,
        "ents_f": total.fscore,
        "ents_per_type": {label: score.to_dict() for label, score in sorted(per_type.items())},
    }


@registry.scorers("spacy-biolm.annotated_entities_scorer.v1")
def make_annotated_entities_scorer() -> Callable[..., Dict[str, Any]]:
    """Scorer for a ``ner`` trained on corpora that each annotate some of its entity types: spaCy's
    ``ents_*`` keys, each Doc scored only on the types it annotates. Set it as the ``ner``'s
    ``scorer`` (``{"@scorers": "spacy-biolm.annotated_entities_scorer.v1"}``)."""
    return score_annotated_entities
