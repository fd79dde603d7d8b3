"""The answer-sentence reranking models: a bi-encoder (cosine of the question's and the sentence's
embeddings) and a cross-encoder (the pair read together, a relevant/irrelevant classifier)."""

from spacy.util import registry
from thinc.api import Model

__all__ = ["build_answer_reranker_model", "build_answer_reranker_cosine"]


@registry.architectures("spacy-biolm.AnswerRerankerModel.v1")
def build_answer_reranker_model(encoder: Model, dropout: float = 0.1) -> Model:
    """(question, candidate sentence) pairs -> logits for ("irrelevant", "relevant").

    encoder (Model): a ``spacy-biolm.PairEncoder.v1``; one encoder pass per candidate sentence
        (a sentence longer than the window is read in overlapping windows, logits averaged).
    dropout (float): dropout on the ``[CLS]`` vector before the linear layer.
    """
    from ...encoders.heads import PairClassifier

    return PairClassifier(encoder, n_labels=2, dropout=dropout)


@registry.architectures("spacy-biolm.AnswerRerankerCosine.v1")
def build_answer_reranker_cosine(
    encoder: Model, scale: float = 20.0, centre: float = 0.6, pool_special_tokens: bool = False
) -> Model:
    """(question, candidate sentence) pairs -> logits for ("irrelevant", "relevant") from the
    cosine of the question's and the sentence's mean-pooled embeddings (each text encoded alone).

    With a sentence-embedding encoder (all-MiniLM-L6-v2) the untrained model already ranks like
    its zero-shot similarity; training moves the embeddings, not a fresh head. Cheaper than the
    cross-encoder too: a question is encoded once for all its candidates.

    encoder (Model): a ``spacy-biolm.PairEncoder.v1`` (read with single texts).
    scale (float): the margin's sharpness, ``scale * (cosine - centre)`` (a softmax temperature of
        1/scale); it sets how hard the loss pushes, not the ranking.
    centre (float): the cosine at which "relevant" has probability 0.5 under the loss.
    pool_special_tokens (bool): pool each window's ``[CLS]`` and ``[SEP]`` with the text's
        wordpieces, as sentence-transformers does (the pooling all-MiniLM-L6-v2 was trained with, and
        the zero-shot baseline's); False pools the text's wordpieces only.
    """
    from ...encoders.heads import CosineRanker

    return CosineRanker(encoder, scale=scale, centre=centre, pool_special_tokens=pool_special_tokens)
