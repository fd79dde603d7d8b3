"""One annotated Doc as one JSON output record: entities, relations and sentences by character offsets.

    {"id": "31452104", "text": "...",
     "entities": [{"start": 0, "end": 13, "label": "Disease", "text": "breast cancer"}],
     "relations": [{"head": {"start": .., "end": ..}, "tail": {...}, "label": "CPR:4", "score": 0.93}],
     "sentences": [{"start": 0, "end": 57}, ...]}

Offsets are character offsets into ``text`` (end exclusive), so a record is read without spaCy.
``sentences`` is null when the pipeline sets no sentence boundaries. Relations are those of
``doc._.relations`` (:func:`spacy_biolm.doc_data.get_relations`).
"""

from typing import Dict, List, Optional

from spacy.tokens import Doc, Span

from ..doc_data import get_relations

__all__ = ["doc_to_record"]


def _offsets(span: Span) -> Dict[str, int]:
    return {"start": span.start_char, "end": span.end_char}


def doc_to_record(record_id: str, doc: Doc) -> dict:
    """The output record of ``doc``, annotated by a pipeline, under ``record_id``."""
    entities = [{**_offsets(ent), "label": ent.label_, "text": ent.text} for ent in doc.ents]
    relations = [{"head": _offsets(rel.head), "tail": _offsets(rel.tail), "label": rel.label,
                  "score": round(rel.score, 6)} for rel in get_relations(doc)]
    return {"id": record_id, "text": doc.text, "entities": entities, "relations": relations,
            "sentences": _sentences(doc)}


def _sentences(doc: Doc) -> Optional[List[Dict[str, int]]]:
    if len(doc) == 0:
        return []
    if not doc.has_annotation("SENT_START"):
        return None
    return [_offsets(sent) for sent in doc.sents]
