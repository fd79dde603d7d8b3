"""The yes/no model: the pair encoder with a two-way classifier on the first token."""

from typing import List

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

__all__ = ["build_yes_no_model"]


@registry.architectures("spacy-biolm.YesNoClassifier.v1")
def build_yes_no_model(encoder: Model, dropout: float = 0.1) -> Model[List, Floats2d]:
    """(question, passage) pairs -> logits for ("no", "yes").

    encoder (Model): a ``spacy-biolm.PairEncoder.v1``; a passage longer than its window is read
        in overlapping windows and the windows' logits are averaged.
    dropout (float): dropout on the ``[CLS]`` vector before the linear layer.
    """
    from ...encoders.heads import PairClassifier

    return PairClassifier(encoder, n_labels=2, dropout=dropout)
