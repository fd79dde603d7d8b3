"""Registered architectures of ``relation_extractor``.

Both take ``(docs, pairs)`` — ``pairs[i]`` an ``(n, 4)`` int array of token offsets
``head_start, head_end, tail_start, tail_end`` into ``docs[i]`` — and return one row of logits
per pair (column 0 is "no relation", then the component's labels in order).

This module is imported through the ``spacy_architectures`` entry point: thinc and spaCy only at
module level; torch and transformers are imported when a model is built.
"""

from __future__ import annotations

import logging
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, Relu, chain
from thinc.types import ArgsKwargs, Floats2d, Ints2d

from .data import anonymise

__all__ = ["create_span_pair_model", "create_anonymised_model", "RelationInput"]

logger = logging.getLogger("spacy_biolm.relations")

RelationInput = Tuple[List[Doc], List[Ints2d]]


# ---------------------------------------------------------------------------------------------
# fast mode: one encoder pass per sentence, entity spans pooled from the shared transformer
# ---------------------------------------------------------------------------------------------


@registry.architectures("spacy-biolm.SpanPairRelationModel.v1")
def create_span_pair_model(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 256,
    dropout: float = 0.1,
    nO: Optional[int] = None,
) -> Model[RelationInput, Floats2d]:
    """Fast mode: classify a pair from pooled token vectors of its two entity spans.

    ``tok2vec`` gives one vector per token (a ``spacy-transformers.TransformerListener.v1`` on the
    shared ``transformer``, so the encoder runs once per sentence however many pairs it has).
    Each entity span is mean-pooled; the pair is ``[head; tail; head * tail]`` fed to a ReLU
    layer of ``hidden_width``, dropout and a linear output of ``nO`` (labels + 1) logits.
    Gradients flow back into ``tok2vec`` (and the transformer) during training.
    """
    classifier = chain(Relu(nO=hidden_width), Dropout(dropout), Linear(nO=nO))
    return Model(
        "span_pair_relation",
        _span_pair_forward,
        init=_span_pair_init,
        layers=[tok2vec, classifier],
        refs={"tok2vec": tok2vec, "classifier": classifier},
        dims={"nO": nO},
    )


def _token_width(tok2vec: Model) -> int:
    for node in tok2vec.walk():
        if node.has_dim("nO") is True:
            return node.get_dim("nO")
    raise ValueError(
        "SpanPairRelationModel: the tok2vec layer has no known output width; initialise the "
        "upstream `transformer` before `relation_extractor` (put it earlier in the pipeline)."
    )


def _span_pair_init(model: Model, X: Optional[RelationInput] = None, Y=None) -> None:
    tok2vec, classifier = model.layers
    if X is not None:
        tok2vec.initialize(X=X[0])
    else:
        tok2vec.initialize()
    width = _token_width(tok2vec)
    nO = model.get_dim("nO") if model.has_dim("nO") is True else None
    if nO is not None:
        classifier.layers[-1].set_dim("nO", nO)
    classifier.initialize(X=model.ops.alloc2f(2, 3 * width))


def _averaging_matrix(xp, starts, ends, n_tokens: int):
    matrix = xp.zeros((len(starts), n_tokens), dtype="float32")
    for row, (start, end) in enumerate(zip(starts, ends)):
        matrix[row, start:end] = 1.0 / (end - start)
    return matrix


def _span_pair_forward(model: Model, inputs: RelationInput, is_train: bool):
    docs, pairs = inputs
    tok2vec, classifier = model.layers
    # All docs go through tok2vec, even those without pairs: the listener checks that it sees
    # the same batch as the upstream transformer.
    tokvecs, bp_tokvecs = tok2vec(docs, is_train)
    xp = model.ops.xp
    width = tokvecs[0].shape[1] if tokvecs else 0
    per_doc = []  # (doc index, head matrix, tail matrix, head vecs, tail vecs)
    feats = []
    for i, (vecs, offsets) in enumerate(zip(tokvecs, pairs)):
        if len(offsets) == 0:
            continue
        offsets = numpy.asarray(offsets)
        head_m = model.ops.asarray2f(_averaging_matrix(numpy, offsets[:, 0], offsets[:, 1], vecs.shape[0]))
        tail_m = model.ops.asarray2f(_averaging_matrix(numpy, offsets[:, 2], offsets[:, 3], vecs.shape[0]))
        head, tail = head_m @ vecs, tail_m @ vecs
        per_doc.append((i, head_m, tail_m, head, tail))
        feats.append(xp.hstack([head, tail, head * tail]))
    n_out = model.get_dim("nO")
    if not feats:
        def backprop_empty(d_scores):
            bp_tokvecs([model.ops.alloc2f(*v.shape) for v in tokvecs])
            return []

        return model.ops.alloc2f(0, n_out), backprop_empty
    X = xp.vstack(feats)
    scores, bp_scores = classifier(X, is_train)

    def backprop(d_scores: Floats2d):
        d_X = bp_scores(d_scores)
        d_tokvecs = [model.ops.alloc2f(*v.shape) for v in tokvecs]
        row = 0
        for i, head_m, tail_m, head, tail in per_doc:
            n = head.shape[0]
            block = d_X[row:row + n]
            row += n
            d_head = block[:, :width] + block[:, 2 * width:] * tail
            d_tail = block[:, width:2 * width] + block[:, 2 * width:] * head
            d_tokvecs[i] += head_m.T @ d_head + tail_m.T @ d_tail
        bp_tokvecs(d_tokvecs)
        return []

    return scores, backprop


# ---------------------------------------------------------------------------------------------
# anonymised mode: one encoder pass per pair, entities replaced by typed placeholders
# ---------------------------------------------------------------------------------------------


@registry.architectures("spacy-biolm.AnonymisedRelationModel.v1")
def create_anonymised_model(
    name: str,
    placeholders: Dict[str, str],
    other_placeholder: Optional[str] = None,
    style: str = "replace",
    max_length: int = 128,
    dropout: float = 0.1,
    batch_size: int = 64,
    nO: Optional[int] = None,
) -> Model[RelationInput, Floats2d]:
    """Anonymised mode (BioBERT, Bio-ELECTRA): one encoder input per candidate pair.

    The pair's sentence is rewritten with the head and tail replaced by their label's placeholder
    (``placeholders``; a label without an entry gets BioBERT's ``@LABEL$``, e.g. ``@GENE$`` and
    ``@DISEASE$`` for GAD with ``placeholders = {}``; ChemProt:
    ``{"CHEMICAL": "BC6ENTC", "GENE": "BC6ENTG"}`` with ``other_placeholder = "BC6OTHER"`` for the
    remaining entities), or with ``style = "mark"`` wrapped in SciBERT's ``<< >>``/``[[ ]]``
    markers. The model owns its HF encoder ``name`` (any local HF directory or hub name) and
    tokenizer; the first token's vector goes through dropout and a linear layer to ``nO`` logits.
    Weights, config and tokenizer are serialised inside the pipeline, so ``name`` is only read
    when the pipeline is initialised for training. Inputs longer than ``max_length`` wordpieces
    are cut to a window of tokens around the pair; a pair longer than that is truncated with a
    logged warning. ``batch_size`` caps pairs per encoder call.
    """
    if style not in ("replace", "mark"):
        raise ValueError(f"AnonymisedRelationModel: style must be 'replace' or 'mark', got {style!r}")
    import torch
    from thinc.api import PyTorchShim

    from .hf_pair import deserialize_pair_classifier, serialize_pair_classifier

    shim = PyTorchShim(
        torch.nn.Module(),
        serialize_model=serialize_pair_classifier,
        deserialize_model=deserialize_pair_classifier,
    )
    return Model(
        "anonymised_relation",
        _anonymised_forward,
        init=_anonymised_init,
        shims=[shim],
        dims={"nO": nO},
        attrs={
            "name": str(name),
            "placeholders": dict(placeholders),
            "other_placeholder": other_placeholder,
            "style": style,
            "max_length": max_length,
            "dropout": dropout,
            "batch_size": batch_size,
        },
    )


def _anonymised_init(model: Model, X=None, Y=None) -> None:
    from .hf_pair import load_pair_classifier

    if model.has_dim("nO") is not True:
        raise ValueError("AnonymisedRelationModel: nO (number of labels + 1) must be set before initialising")
    shim = model.shims[0]
    shim._model = load_pair_classifier(model.attrs["name"], model.get_dim("nO"), model.attrs["dropout"])


def pair_texts(model: Model, docs: Sequence[Doc], pairs: Sequence[Ints2d], tokenizer=None) -> List[str]:
    """The anonymised encoder input of every pair, in order.

    With a ``tokenizer``, an input longer than ``max_length`` wordpieces is cut to a window of
    tokens around the pair (32, 16, 8, 4, then 0 tokens of context each side) so both entities
    stay in; only a pair whose own extent is too long is left to truncation (and warned about).
    """
    attrs = model.attrs
    args = (attrs["placeholders"], attrs["other_placeholder"], attrs["style"])
    spans = []
    for doc, offsets in zip(docs, pairs):
        # The entity spans themselves (with their labels, which choose the placeholders).
        ents = {(ent.start, ent.end): ent for ent in doc.ents}
        for hs, he, ts, te in offsets:
            head = ents.get((int(hs), int(he))) or doc[int(hs):int(he)]
            tail = ents.get((int(ts), int(te))) or doc[int(ts):int(te)]
            spans.append((doc, head, tail))
    texts = [anonymise(doc, head, tail, *args) for doc, head, tail in spans]
    if tokenizer is None or not texts:
        return texts
    lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=True)["input_ids"]]
    for i, n_pieces in enumerate(lengths):
        if n_pieces <= attrs["max_length"]:
            continue
        doc, head, tail = spans[i]
        first, last = min(head.start, tail.start), max(head.end, tail.end)
        for context in (32, 16, 8, 4, 0):
            window = (max(0, first - context), min(len(doc), last + context))
            texts[i] = anonymise(doc, head, tail, *args, window=window)
            if _n_pieces(tokenizer, texts[i]) <= attrs["max_length"]:
                break
    return texts


def _n_pieces(tokenizer, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=True)["input_ids"])


def _anonymised_forward(model: Model, inputs: RelationInput, is_train: bool):
    import torch
    from thinc.api import torch2xp, xp2torch

    docs, pairs = inputs
    n_out = model.get_dim("nO")
    shim = model.shims[0]
    tokenizer = shim._model.tokenizer
    texts = pair_texts(model, docs, pairs, tokenizer)
    if not texts:
        return model.ops.alloc2f(0, n_out), lambda d_scores: []
    max_length, step = model.attrs["max_length"], model.attrs["batch_size"]
    outputs, callbacks = [], []
    truncated = 0
    for begin in range(0, len(texts), step):
        chunk = texts[begin:begin + step]
        truncated += sum(_n_pieces(tokenizer, text) > max_length for text in chunk)
        enc = tokenizer(chunk, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        Y, bp = shim(ArgsKwargs(args=(), kwargs=dict(enc)), is_train)
        outputs.append(Y)
        callbacks.append(bp)
    if truncated:
        logger.warning("%d of %d relation inputs were longer than max_length=%d wordpieces and were truncated",
                       truncated, len(texts), max_length)
    scores = model.ops.asarray2f(torch2xp(torch.cat([y.detach() for y in outputs])))

    def backprop(d_scores: Floats2d):
        row = 0
        for Y, bp in zip(outputs, callbacks):
            n = Y.shape[0]
            bp(ArgsKwargs(args=(Y,), kwargs={"grad_tensors": xp2torch(d_scores[row:row + n])}))
            row += n
        return []

    return scores, backprop
