"""Task heads on top of the pair encoder (thinc layers, serialised with the pipeline).

* ``PairClassifier``: one vector of logits per input (a (question, passage) pair or a single
  text) from the first token (``[CLS]``) of each window; an input cut into several windows gets
  the mean of its windows' logits. Used by ``yes_no`` (one pair per Doc), ``answer_reranker``
  (one pair per candidate sentence) and the anonymised ``relation_extractor`` (one marked
  sentence per candidate entity pair).
* ``SpanExtractor``: a start and an end logit for every wordpiece of every window (``answer_span``).

These are plain functions used by the registered architectures of the components
(``spacy_biolm.pipes.*.model``).
"""

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy
from thinc.api import Dropout, Linear, Model, chain
from thinc.types import Floats2d, Floats3d

from .pair_encoder import EncodedWindows, EncoderInput

__all__ = ["PairClassifier", "SpanExtractor", "SpanLogits", "window_mean_matrix"]


@dataclass
class SpanLogits:
    """Start/end logits per wordpiece of each window, with the windows' offsets and masks.

    start, end: (n_windows, length) arrays (numpy). windows: the encoder output they come from.
    """

    start: numpy.ndarray
    end: numpy.ndarray
    windows: EncodedWindows


def window_mean_matrix(pair_index: numpy.ndarray, n_pairs: int) -> numpy.ndarray:
    """(n_pairs, n_windows) matrix that averages window rows into pair rows."""
    matrix = numpy.zeros((n_pairs, len(pair_index)), dtype="float32")
    matrix[pair_index, numpy.arange(len(pair_index))] = 1.0
    counts = matrix.sum(axis=1, keepdims=True)
    if (counts == 0).any():
        raise ValueError("every pair must have at least one window")
    return matrix / counts


def _head(n_out: int, dropout: float) -> Model:
    return chain(Dropout(dropout), Linear(nO=n_out))


def _init_head(model: Model, X=None, Y=None) -> Model:
    encoder, head = model.layers
    encoder.initialize()
    output = head.layers[-1]
    output.set_dim("nI", encoder.get_dim("nO"))
    if model.has_dim("nO") is True and output.has_dim("nO") is not True:
        output.set_dim("nO", model.get_dim("nO"))
    if output.has_dim("nO") is not True:
        raise ValueError(f"{model.name}: the number of labels (nO) must be set before initialising")
    head.initialize()
    return model


def PairClassifier(encoder: Model, n_labels: Optional[int], dropout: float = 0.1) -> Model[List[EncoderInput], Floats2d]:
    """(question, passage) pairs or single texts -> (n_inputs, n_labels) logits.

    ``n_labels`` may be None when the labels are known only at initialisation (set the ``nO``
    dim before ``initialize``)."""
    return Model(
        "pair_classifier",
        _classifier_forward,
        init=_init_head,
        layers=[encoder, _head(n_labels, dropout)],
        dims={"nO": n_labels},
    )


def _classifier_forward(model: Model, pairs: List[EncoderInput], is_train: bool) -> Tuple[Floats2d, Callable]:
    encoder, head = model.layers
    windows, backprop_encoder = encoder(pairs, is_train)
    n_labels = model.get_dim("nO")
    if windows.n_pairs == 0:
        return model.ops.alloc2f(0, n_labels), lambda d: []
    first_token = model.ops.as_contig(windows.hidden[:, 0, :])
    window_logits, backprop_head = head(first_token, is_train)
    mean = model.ops.asarray(window_mean_matrix(windows.pair_index, windows.n_pairs))
    logits = mean @ window_logits

    def backprop(d_logits: Floats2d) -> List:
        d_first = backprop_head(mean.T @ d_logits)
        d_hidden = model.ops.alloc3f(*windows.hidden.shape)
        d_hidden[:, 0, :] = d_first
        backprop_encoder(d_hidden)
        return []

    return logits, backprop


def SpanExtractor(encoder: Model, dropout: float = 0.1) -> Model[List[EncoderInput], SpanLogits]:
    """(question, passage) pairs -> start/end logits per wordpiece of each window."""
    return Model(
        "span_extractor",
        _span_forward,
        init=_init_head,
        layers=[encoder, _head(2, dropout)],
    )


def _span_forward(model: Model, pairs: List[EncoderInput], is_train: bool) -> Tuple[SpanLogits, Callable]:
    encoder, head = model.layers
    windows, backprop_encoder = encoder(pairs, is_train)
    n_windows, length, width = windows.hidden.shape
    if n_windows == 0:
        empty = numpy.zeros((0, 0), dtype="float32")
        return SpanLogits(empty, empty, windows), lambda d: []
    flat = model.ops.reshape2f(windows.hidden, n_windows * length, width)
    flat_logits, backprop_head = head(flat, is_train)
    logits = model.ops.to_numpy(model.ops.reshape3f(flat_logits, n_windows, length, 2))
    output = SpanLogits(logits[:, :, 0], logits[:, :, 1], windows)

    def backprop(d_logits: Floats3d) -> List:
        d_flat = model.ops.reshape2f(model.ops.asarray(d_logits, dtype="float32"), n_windows * length, 2)
        d_hidden = backprop_head(d_flat)
        backprop_encoder(model.ops.reshape3f(d_hidden, n_windows, length, width))
        return []

    return output, backprop
