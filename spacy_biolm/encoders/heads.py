"""Task heads on top of the pair encoder (thinc layers, serialised with the pipeline).

* ``PairClassifier``: one vector of logits per input (a (question, passage) pair or a single
  text) from the first token (``[CLS]``) of each window; an input cut into several windows gets
  the mean of its windows' logits. Used by ``yes_no`` (one pair per Doc), ``answer_reranker``
  (one pair per candidate sentence) and the anonymised ``relation_extractor`` (one marked
  sentence per candidate entity pair).
* ``SpanExtractor``: a start and an end logit for every wordpiece of every window (``answer_span``).
* ``CosineRanker``: (question, sentence) pairs scored by the cosine of the two texts' mean-pooled
  embeddings, each text encoded alone (``answer_reranker``'s bi-encoder): before any training it
  ranks exactly like the zero-shot similarity of a sentence-embedding encoder, so fine-tuning
  starts from that ranking instead of from a random head.

These are plain functions used by the registered architectures of the components
(``spacy_biolm.pipes.*.model``).
"""

from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

import numpy
from thinc.api import Dropout, Linear, Model, chain
from thinc.types import Floats2d, Floats3d

from .pair_encoder import EncodedWindows, EncoderInput

__all__ = ["CosineRanker", "PairClassifier", "SpanExtractor", "SpanLogits", "window_mean_matrix"]


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


def CosineRanker(
    encoder: Model, scale: float, centre: float, pool_special_tokens: bool = False
) -> Model[List[Tuple[str, str]], Floats2d]:
    """(question, sentence) pairs -> (n_pairs, 2) logits ("irrelevant", "relevant") whose margin
    is ``scale * (cosine - centre)``.

    Every distinct text of the batch is encoded once, alone (``[CLS] text [SEP]``, windowed when
    long), and mean-pooled over its own wordpieces (all windows together), with each window's
    ``[CLS]`` and ``[SEP]`` when ``pool_special_tokens`` (sentence-transformers' mean pooling, which
    all-MiniLM-L6-v2 was trained with); the cosine of the
    question's and the sentence's pooled vectors, shifted by ``centre`` and sharpened by ``scale``,
    is the log-odds of "relevant" (the logits are -margin/2 and +margin/2, so a softmax over them
    is the logistic of the margin). ``scale`` and ``centre`` are fixed: they set the loss's
    temperature and decision point, not the ranking (a cosine ranks the same at any scale).
    """
    if scale <= 0:
        raise ValueError(f"CosineRanker scale must be positive, got {scale!r}")
    return Model(
        "cosine_ranker",
        _cosine_forward,
        init=_init_cosine,
        layers=[encoder],
        attrs={"scale": float(scale), "centre": float(centre), "pool_special_tokens": bool(pool_special_tokens)},
        dims={"nO": 2},
    )


def _init_cosine(model: Model, X=None, Y=None) -> Model:
    model.layers[0].initialize()
    if model.get_dim("nO") != 2:
        raise ValueError(f"{model.name} gives two logits (irrelevant, relevant), not {model.get_dim('nO')}")
    return model


def _one_hot(index: numpy.ndarray, n_columns: int) -> numpy.ndarray:
    matrix = numpy.zeros((len(index), n_columns), dtype="float32")
    matrix[numpy.arange(len(index)), index] = 1.0
    return matrix


def _cosine_forward(model: Model, pairs: List[Tuple[str, str]], is_train: bool) -> Tuple[Floats2d, Callable]:
    ops = model.ops
    if not pairs:
        return ops.alloc2f(0, 2), lambda d: []
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    row = {text: i for i, text in enumerate(texts)}
    windows, backprop_encoder = model.layers[0](texts, is_train)
    pooled_positions = windows.passage_mask
    if model.attrs.get("pool_special_tokens", False):
        pooled_positions = windows.attention_mask  # a single text's window: [CLS] wordpieces [SEP], then padding
    mask = ops.asarray(pooled_positions.astype("float32"))
    sums = (windows.hidden * mask[:, :, None]).sum(axis=1)
    to_text = ops.asarray(_one_hot(windows.pair_index, len(texts)).T)  # (n_texts, n_windows)
    counts = ops.xp.maximum(to_text @ mask.sum(axis=1), 1.0)  # an empty text pools to zeros
    pooled = (to_text @ sums) / counts[:, None]
    norms = ops.xp.maximum(ops.xp.sqrt((pooled * pooled).sum(axis=1)), 1e-12)
    unit = pooled / norms[:, None]
    question = ops.asarray(_one_hot(numpy.asarray([row[q] for q, _ in pairs]), len(texts)))
    sentence = ops.asarray(_one_hot(numpy.asarray([row[s] for _, s in pairs]), len(texts)))
    unit_q, unit_s = question @ unit, sentence @ unit
    cosine = (unit_q * unit_s).sum(axis=1)
    scale, centre = model.attrs["scale"], model.attrs["centre"]
    margin = scale * (cosine - centre)
    logits = ops.xp.stack([-margin / 2, margin / 2], axis=1).astype("float32")

    def backprop(d_logits: Floats2d) -> List:
        d_cosine = scale * (d_logits[:, 1] - d_logits[:, 0]) / 2
        d_unit = question.T @ (d_cosine[:, None] * unit_s) + sentence.T @ (d_cosine[:, None] * unit_q)
        d_pooled = (d_unit - unit * (unit * d_unit).sum(axis=1, keepdims=True)) / norms[:, None]
        d_sums = to_text.T @ (d_pooled / counts[:, None])
        backprop_encoder((d_sums[:, None, :] * mask[:, :, None]).astype("float32"))
        return []

    return logits, backprop
