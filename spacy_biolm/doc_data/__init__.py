"""How spacy-biolm's results and inputs live on a spaCy ``Doc``: the contracts that the corpora
write and the pipeline components read.

* Questions (yes/no, answer span, answer reranking): the Doc is the passage, the question rides on
  ``doc._.question``, ``doc._.question_id`` groups the snippets of one question and
  ``doc._.gold_answers`` holds a gold Doc's acceptable answers (:mod:`.questions`).
* Entities: ``doc.ents``; a gold Doc may record the types it annotates, a Doc the entities given
  to it for relation extraction (:mod:`.entities`).
* Relations: ``doc._.relations``, a list of :class:`Relation` (:mod:`.relations`).
* Abbreviations: ``doc._.abbreviations``, filled by the ``biolm_abbreviations`` component.

Importing this package registers the extensions (:func:`register_extensions`, once). It is the
ground floor of the package: spaCy only, no import from ``corpora`` or ``pipes``, so it stays cheap
on every ``spacy.blank``/``spacy.load``.
"""

from .entities import (
    ENTITIES_SPANS_KEY,
    ENTITY_TYPES_USER_DATA_KEY,
    GIVEN_ENTITIES_USER_DATA_KEY,
    annotated_entity_types,
    give_entities,
    relation_entities,
    set_annotated_entity_types,
)
from .extensions import ABBREVIATIONS_EXTENSION, EXTENSIONS, register_extensions
from .questions import (
    QUESTION_EXTENSIONS,
    MissingQuestionError,
    copy_question,
    get_question,
    make_question_doc,
    question_group,
    sentences_doc,
)
from .relations import (
    RELATIONS_EXTENSION,
    RELATIONS_USER_DATA_KEY,
    Relation,
    get_relations,
    mark_relations_missing,
    relations_annotated,
    set_relations,
)

__all__ = [
    "ABBREVIATIONS_EXTENSION",
    "ENTITIES_SPANS_KEY",
    "ENTITY_TYPES_USER_DATA_KEY",
    "EXTENSIONS",
    "GIVEN_ENTITIES_USER_DATA_KEY",
    "QUESTION_EXTENSIONS",
    "RELATIONS_EXTENSION",
    "RELATIONS_USER_DATA_KEY",
    "MissingQuestionError",
    "Relation",
    "annotated_entity_types",
    "copy_question",
    "get_question",
    "get_relations",
    "give_entities",
    "make_question_doc",
    "mark_relations_missing",
    "question_group",
    "register_extensions",
    "relation_entities",
    "relations_annotated",
    "sentences_doc",
    "set_annotated_entity_types",
    "set_relations",
]

register_extensions()
