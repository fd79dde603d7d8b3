"""Teacher entities for the types a corpus does not annotate: the distillation step of multi-task NER.

One ``ner`` learns DISEASE from NCBI-disease and GENE from BC2GM, but NCBI-disease does not mark
its genes, so read as it is it teaches that a gene is not an entity. The per-task pipelines that
``all`` trains are the teachers: each Doc of a corpus gets, beside its gold entities, the entities
a teacher finds of the other types (never one overlapping a gold entity, which wins), and records
that it now annotates all of them (:func:`~spacy_biolm.doc_data.set_annotated_entity_types`).
Hard labels, not soft targets: spaCy's transition-based ``ner`` trains on entity spans, and the
teachers' spans are what a user of the per-task release would have seen.
"""

from collections import Counter
from typing import Dict, Iterable, Iterator, List, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from ..doc_data import set_annotated_entity_types

__all__ = ["fill_entities"]


def _teacher_doc(teacher: Language, doc: Doc) -> Doc:
    """``doc``'s tokens, unannotated, in the teacher's vocabulary (its spans align one to one)."""
    return Doc(teacher.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])


def fill_entities(
    docs: Iterable[Doc],
    own_types: Sequence[str],
    teachers: Sequence[Language],
    batch_size: int = 64,
) -> Iterator[Tuple[Doc, Dict[str, Counter]]]:
    """Yield each of ``docs`` with the teachers' entities of types other than ``own_types`` added,
    and the counts of what was ``added`` and ``skipped`` (overlapping a gold or earlier entity), by type.

    Args:
        docs: gold Docs whose ``doc.ents`` mark every entity of ``own_types`` (tokens outside
            them are ``O``); or Docs without NER annotation (``own_types`` empty).
        own_types: the entity types the Docs' gold annotates; a teacher entity of these types is
            ignored (the gold decides them), and a gold entity of another type is an error.
        teachers: pipelines with a ``ner``; the earlier teacher wins where two overlap.
    """
    own = set(own_types)
    teacher_types = sorted({label for teacher in teachers for label in teacher.get_pipe("ner").labels} - own)
    if not teacher_types:
        raise ValueError(f"the teachers find no entity type besides the corpus's own {sorted(own)}")
    for batch in minibatch(docs, size=batch_size):
        predictions = [list(teacher.pipe(_teacher_doc(teacher, doc) for doc in batch)) for teacher in teachers]
        for i, doc in enumerate(batch):
            gold = list(doc.ents)
            unknown = sorted({e.label_ for e in gold} - own)
            if unknown:
                raise ValueError(f"gold entity labels {unknown} are not among the corpus's types {sorted(own)} "
                                 f"(doc {doc.text[:80]!r})")
            taken = _covered(len(doc), gold)
            counts = {"added": Counter(), "skipped": Counter()}
            added: List[Span] = []
            for teacher_docs in predictions:
                for ent in teacher_docs[i].ents:
                    if ent.label_ in own:
                        continue
                    if any(taken[ent.start:ent.end]):
                        counts["skipped"][ent.label_] += 1
                        continue
                    taken[ent.start:ent.end] = [True] * len(ent)
                    added.append(Span(doc, ent.start, ent.end, label=ent.label_))
                    counts["added"][ent.label_] += 1
            doc.set_ents(sorted(gold + added, key=lambda span: span.start), default="outside")
            set_annotated_entity_types(doc, own | set(teacher_types))
            yield doc, counts


def _covered(length: int, spans: Sequence[Span]) -> List[bool]:
    """Per token of a Doc of ``length`` tokens: whether one of ``spans`` covers it."""
    mask = [False] * length
    for span in spans:
        mask[span.start:span.end] = [True] * len(span)
    return mask
