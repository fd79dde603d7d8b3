"""The answer-span model: the pair encoder with start/end logits on every wordpiece."""

from spacy.util import registry
from thinc.api import Model

__all__ = ["build_answer_span_model"]


@registry.architectures("spacy-biolm.AnswerSpanModel.v1")
def build_answer_span_model(encoder: Model, dropout: float = 0.1) -> Model:
    """(question, passage) pairs -> ``SpanLogits`` (start and end logit per wordpiece per window).

    encoder (Model): a ``spacy-biolm.PairEncoder.v1``; long passages are read in overlapping
        windows and the answers of all windows are decoded together.
    dropout (float): dropout on the wordpiece vectors before the linear layer.
    """
    from ...encoders.heads import SpanExtractor

    return SpanExtractor(encoder, dropout=dropout)
