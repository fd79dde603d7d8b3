"""The answer-sentence reranking model: the pair encoder with a relevant/irrelevant classifier."""

from spacy.util import registry
from thinc.api import Model

__all__ = ["build_answer_reranker_model"]


@registry.architectures("spacy-biolm.AnswerRerankerModel.v1")
def build_answer_reranker_model(encoder: Model, dropout: float = 0.1) -> Model:
    """(question, candidate sentence) pairs -> logits for ("irrelevant", "relevant").

    encoder (Model): a ``spacy-biolm.PairEncoder.v1``; one encoder pass per candidate sentence
        (a sentence longer than the window is read in overlapping windows, logits averaged).
    dropout (float): dropout on the ``[CLS]`` vector before the linear layer.
    """
    from ...encoders.heads import PairClassifier

    return PairClassifier(encoder, n_labels=2, dropout=dropout)
