"""How a Doc carries its question, for the pair tasks (yes/no, answer span, answer reranking).

The Doc is the passage (or the candidate sentences); the question rides on ``doc._.question`` and
``doc._.question_id`` groups the snippets of one question (the BioASQ scorers merge their answers).
``doc._.gold_answers`` holds the acceptable answer strings of a gold Doc (SQuAD answers or the
BioASQ golden synonyms), which need not occur in the passage.

The extensions are registered by :func:`spacy_biolm.doc_data.register_extensions` and kept in
``doc.user_data``, so they survive ``DocBin(store_user_data=True)`` and ``Doc.to_bytes``.
"""

from typing import List, Optional, Sequence, Union

from spacy.language import Language
from spacy.tokens import Doc

__all__ = [
    "QUESTION_EXTENSIONS",
    "MissingQuestionError",
    "make_question_doc",
    "sentences_doc",
    "get_question",
    "question_group",
    "copy_question",
]

QUESTION_EXTENSIONS = ("question", "question_id", "gold_answers")


class MissingQuestionError(ValueError):
    """A question-answering component got a Doc without a question."""


def make_question_doc(
    nlp: Language,
    question: str,
    context: Union[str, Sequence[str]],
    question_id: Optional[str] = None,
) -> Doc:
    """A Doc of ``context`` that carries ``question``, ready for ``nlp(doc)``.

    ``context`` is a passage (a string) or a list of candidate sentences (for the answer
    reranker): the sentences are joined with a space and each one starts a sentence of the Doc.
    The Doc is tokenised with ``nlp``'s tokenizer only; the pipeline runs when you call
    ``nlp(doc)``.

    Raises ValueError when the question is empty.
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"make_question_doc needs a non-empty question (question_id={question_id!r}), got {question!r}")
    if isinstance(context, str):
        doc = nlp.make_doc(context)
    else:
        doc = sentences_doc(nlp, list(context), where=f"question_id={question_id!r}")
    doc._.question = question
    doc._.question_id = question_id
    return doc


def sentences_doc(nlp: Language, sentences: List[str], where: str = "") -> Doc:
    """One Doc of ``sentences`` joined by single spaces, each one a sentence of the Doc."""
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, str) or not sentence.strip():
            raise ValueError(f"candidate sentence {i} is empty ({where})")
    docs = [nlp.make_doc(sentence.strip()) for sentence in sentences]
    for doc in docs:
        for i, token in enumerate(doc):
            token.is_sent_start = i == 0
    if not docs:
        return nlp.make_doc("")
    return Doc.from_docs(docs, ensure_whitespace=True)


def get_question(doc: Doc, component: str) -> str:
    """The question of ``doc``, or a clear error naming the component and the question id."""
    question = doc._.question if Doc.has_extension("question") else None
    if question is None:
        raise MissingQuestionError(
            f"The '{component}' component needs a question on each Doc (doc._.question), but this Doc "
            f"has none: {doc.text[:60]!r}. Build the Doc with "
            "spacy_biolm.make_question_doc(nlp, question, context) and call nlp(doc)."
        )
    if not isinstance(question, str) or not question.strip():
        raise MissingQuestionError(
            f"The '{component}' component got an empty question (question_id={doc._.question_id!r})"
        )
    return question


def question_group(doc: Doc) -> str:
    """The key that groups the snippets of one question: its id, or else its text."""
    return doc._.question_id if doc._.question_id is not None else (doc._.question or "")


def copy_question(source: Doc, target: Doc) -> Doc:
    """Copy the question extensions of ``source`` onto ``target`` (gold answers excluded)."""
    target._.question = source._.question
    target._.question_id = source._.question_id
    return target

