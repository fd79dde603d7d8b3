"""How spacy-biolm's results and inputs live on a spaCy ``Doc``: the contracts that the corpora
write and the pipeline components read.

* Questions (yes/no, answer span, answer reranking): the Doc is the passage, the question rides on
  ``doc._.question``, ``doc._.question_id`` groups the snippets of one question and
  ``doc._.gold_answers`` holds a gold Doc's acceptable answers (:mod:`.questions`).
* Relations: ``doc._.relations``, a list of :class:`Relation` (:mod:`.relations`).
* Abbreviations: ``doc._.abbreviations``, filled by the ``biolm_abbreviations`` component.

Importing this package registers the extensions (:func:`register_extensions`, once). It is the
ground floor of the package: spaCy only, no import from ``corpora`` or ``pipes``, so it stays cheap
on every ``spacy.blank``/``spacy.load``.
"""

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
from .relations import RELATIONS_EXTENSION, RELATIONS_USER_DATA_KEY, Relation, get_relations, set_relations

__all__ = [
    "ABBREVIATIONS_EXTENSION",
    "EXTENSIONS",
    "QUESTION_EXTENSIONS",
    "RELATIONS_EXTENSION",
    "RELATIONS_USER_DATA_KEY",
    "MissingQuestionError",
    "Relation",
    "copy_question",
    "get_question",
    "get_relations",
    "make_question_doc",
    "question_group",
    "register_extensions",
    "sentences_doc",
    "set_relations",
]

register_extensions()
