"""``answer_reranker``: ranks the candidate sentences of a Doc by how well they answer its question.

The Doc holds the candidates as its sentences (``make_question_doc(nlp, question, [s1, s2, ...])``,
or any Doc with sentence boundaries, e.g. after a ``sentencizer``). Each sentence is paired with the
question (``[CLS] question [SEP] sentence [SEP]``); its relevance probability comes from a linear
layer on ``[CLS]``. The sentences go to ``doc.spans["ranked_sents"]`` best first with
``attrs["scores"]``. The paper trained on a 1:99 imbalance with class weights [1, 99]:
``class_weights = {"relevant": 99.0}`` does the same.

Gold Docs mark their relevant sentences in ``doc.spans["relevant_sents"]``.
"""

from typing import Callable, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from thinc.api import Model

from ..qa_pipe import PairClassifierPipe, default_model, softmax

__all__ = ["AnswerReranker", "make_answer_reranker", "candidate_sentences", "GOLD_KEY"]


LABELS = ("irrelevant", "relevant")
GOLD_KEY = "relevant_sents"

DEFAULT_MODEL = default_model("spacy-biolm.AnswerRerankerModel.v1", window=128, stride=32)


@Language.factory(
    "answer_reranker",
    assigns=["doc.spans"],
    requires=["doc._.question", "token.is_sent_start"],
    default_config={
        "model": DEFAULT_MODEL,
        "spans_key": "ranked_sents",
        "class_weights": None,
        "scorer": {"@scorers": "spacy-biolm.answer_reranker_scorer.v1"},
    },
    default_score_weights={"rerank_mrr": 1.0},
)
def make_answer_reranker(nlp: Language, name: str, model: Model, spans_key: str, class_weights, scorer: Optional[Callable]):
    """Create an ``answer_reranker`` component.

    model: a ``spacy-biolm.AnswerRerankerModel.v1``.
    spans_key: where the ranked sentences go in ``doc.spans``.
    class_weights: null, "balanced" or ``{"relevant": 99.0, "irrelevant": 1.0}`` (the paper's
        weighted reranker).
    scorer: ``spacy-biolm.answer_reranker_scorer.v1`` (MRR per question).
    """
    return AnswerReranker(nlp.vocab, model, name, spans_key=spans_key, class_weights=class_weights, scorer=scorer)


def candidate_sentences(doc: Doc, component: str = "answer_reranker") -> List[Span]:
    """The candidate sentences of a Doc; a clear error when it has no sentence boundaries."""
    if len(doc) == 0:
        return []
    if not (doc.has_annotation("SENT_START") or doc.has_annotation("DEP")):
        raise ValueError(
            f"The '{component}' component needs the candidate sentences marked on the Doc "
            f"(question_id={doc._.question_id!r}): build it with make_question_doc(nlp, question, "
            "[sentence, ...]) or add a 'sentencizer' before it."
        )
    return list(doc.sents)


def gold_relevance(example: Example, sentences: List[Span]) -> List[int]:
    """1 for each predicted sentence whose character span is a gold relevant sentence, else 0."""
    reference = example.reference
    gold = {(s.start_char, s.end_char) for s in reference.spans[GOLD_KEY]} if GOLD_KEY in reference.spans else set()
    return [int((s.start_char, s.end_char) in gold) for s in sentences]


class AnswerReranker(PairClassifierPipe):
    """Relevance of each candidate sentence of a (question, sentences) Doc; sentences ranked."""

    labels = LABELS

    def make_pairs(self, docs: Sequence[Doc]) -> Tuple[List[Tuple[str, str]], List[Tuple[int, Span]]]:
        pairs, owners = [], []
        for i, doc in enumerate(docs):
            question = self.question_of(doc)
            for sentence in candidate_sentences(doc, self.name):
                pairs.append((question, sentence.text))
                owners.append((i, sentence))
        return pairs, owners

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        owners, logits = predictions
        relevance = softmax(self.model.ops.to_numpy(logits))[:, 1] if len(owners) else numpy.zeros(0)
        per_doc: dict = {}
        for (i, sentence), p in zip(owners, relevance):
            per_doc.setdefault(i, []).append((float(p), sentence))
        key = self.cfg["spans_key"]
        for i, doc in enumerate(docs):
            ranked = sorted(per_doc.get(i, []), key=lambda item: (-item[0], item[1].start))
            doc.spans[key] = SpanGroup(
                doc, name=key, spans=[s for _, s in ranked], attrs={"scores": [p for p, _ in ranked]}
            )

    def gold_targets(self, examples: List[Example], owners) -> numpy.ndarray:
        by_doc: dict = {}
        for i, sentence in owners:
            by_doc.setdefault(i, []).append(sentence)
        labels = {i: dict(zip((s.start for s in sents), gold_relevance(examples[i], sents))) for i, sents in by_doc.items()}
        return numpy.asarray([labels[i][s.start] for i, s in owners], dtype="int64")
