"""Registered architectures of ``relation_extractor``: its two input modes, chosen in the config.

* ``spacy-biolm.RelationFast.v1``: one encoder pass per sentence through the shared
  ``transformer`` (a listener), the two entity spans mean-pooled.
* ``spacy-biolm.RelationAnonymised.v1``: one encoder pass per candidate pair, the sentence with
  the pair's entities replaced by typed placeholders (or marked), on a
  ``spacy-biolm.PairEncoder.v1`` with a ``PairClassifier`` head.

Both take ``(docs, pairs)`` — ``pairs[i]`` an ``(n, 4)`` int array of token offsets
``head_start, head_end, tail_start, tail_end`` into ``docs[i]`` — and return one row of logits
per pair (column 0 is "no relation", then the component's labels in order).

This module is imported through the ``spacy_architectures`` entry point: thinc and spaCy only at
module level; torch and transformers are imported when a model is built.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Dropout, Linear, Model, Relu, chain
from thinc.types import Floats2d, Ints2d

from ...doc_data import relation_entities
from .data import anonymise

__all__ = ["create_relation_fast", "create_relation_anonymised", "pair_texts", "RelationInput"]

RelationInput = Tuple[List[Doc], List[Ints2d]]


# ---------------------------------------------------------------------------------------------
# fast mode: one encoder pass per sentence, entity spans pooled from the shared transformer
# ---------------------------------------------------------------------------------------------


@registry.architectures("spacy-biolm.RelationFast.v1")
def create_relation_fast(
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
        "RelationFast: the tok2vec layer has no known output width; initialise the "
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


def span_tokens(starts, ends) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The token indices of the spans ``[start, end)``, concatenated, and the spans' lengths.

    Mean pooling gathers these rows (``reduce_mean``) and scatters its gradient back to them:
    memory grows with the spans' tokens, never with spans x document tokens as a dense
    averaging matrix would on a long document.
    """
    starts = numpy.asarray(starts, dtype="int32")
    lengths = numpy.asarray(ends, dtype="int32") - starts
    if (lengths <= 0).any():
        raise ValueError("RelationFast: an entity span is empty (end <= start)")
    first_row = numpy.cumsum(lengths) - lengths
    indices = numpy.arange(int(lengths.sum()), dtype="int32") + numpy.repeat(starts - first_row, lengths)
    return indices.astype("int32"), lengths


def _span_pair_forward(model: Model, inputs: RelationInput, is_train: bool):
    docs, pairs = inputs
    tok2vec, classifier = model.layers
    # All docs go through tok2vec, even those without pairs: the listener checks that it sees
    # the same batch as the upstream transformer.
    tokvecs, bp_tokvecs = tok2vec(docs, is_train)
    xp = model.ops.xp
    width = tokvecs[0].shape[1] if tokvecs else 0
    ops = model.ops
    per_doc = []  # (doc index, (head tokens, lengths), (tail tokens, lengths), head vecs, tail vecs)
    feats = []
    for i, (vecs, offsets) in enumerate(zip(tokvecs, pairs)):
        if len(offsets) == 0:
            continue
        offsets = numpy.asarray(offsets)
        spans = []
        for start, end in ((0, 1), (2, 3)):
            indices, lengths = span_tokens(offsets[:, start], offsets[:, end])
            spans.append((ops.asarray1i(indices), ops.asarray1i(lengths)))
        (head_idx, head_len), (tail_idx, tail_len) = spans
        head, tail = ops.reduce_mean(vecs[head_idx], head_len), ops.reduce_mean(vecs[tail_idx], tail_len)
        per_doc.append((i, spans[0], spans[1], head, tail))
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
        for i, (head_idx, head_len), (tail_idx, tail_len), head, tail in per_doc:
            n = head.shape[0]
            block = d_X[row:row + n]
            row += n
            d_head = block[:, :width] + block[:, 2 * width:] * tail
            d_tail = block[:, width:2 * width] + block[:, 2 * width:] * head
            ops.scatter_add(d_tokvecs[i], head_idx, ops.backprop_reduce_mean(ops.xp.ascontiguousarray(d_head), head_len))
            ops.scatter_add(d_tokvecs[i], tail_idx, ops.backprop_reduce_mean(ops.xp.ascontiguousarray(d_tail), tail_len))
        bp_tokvecs(d_tokvecs)
        return []

    return scores, backprop




# ---------------------------------------------------------------------------------------------
# anonymised mode: one encoder pass per pair, entities replaced by typed placeholders
# ---------------------------------------------------------------------------------------------

# Context kept each side of a pair (in tokens) when its sentence is longer than the encoder
# window: the widest that fits is used.
CONTEXT_STEPS = (32, 16, 8, 4, 0)


@registry.architectures("spacy-biolm.RelationAnonymised.v1")
def create_relation_anonymised(
    encoder: Model,
    placeholders: Dict[str, str],
    other_placeholder: Optional[str] = None,
    style: str = "replace",
    dropout: float = 0.1,
    batch_size: int = 64,
    nO: Optional[int] = None,
) -> Model[RelationInput, Floats2d]:
    """Anonymised mode (BioBERT, Bio-ELECTRA): one encoder input per candidate pair.

    encoder (Model): a ``spacy-biolm.PairEncoder.v1`` (its HF encoder and tokenizer travel inside
        the pipeline); each pair is one single-segment input ``[CLS] sentence [SEP]``.
    placeholders (dict): the pair's head and tail are replaced by their label's placeholder; a
        label without an entry gets BioBERT's ``@LABEL$`` (``@GENE$`` and ``@DISEASE$`` for GAD
        with ``placeholders = {}``); ChemProt: ``{"CHEMICAL": "BC6ENTC", "GENE": "BC6ENTG"}``.
    other_placeholder (str): replaces every other entity of the sentence (ChemProt's ``BC6OTHER``).
    style (str): ``"replace"`` (placeholders) or ``"mark"`` (SciBERT's ``<< >>``/``[[ ]]``
        markers around the entities' own text).
    dropout (float): dropout on the ``[CLS]`` vector before the linear layer.
    batch_size (int): at most this many pairs per encoder call (bounds memory on Docs with
        many pairs).
    nO (int): labels + 1; set by the component from its labels when null.

    A sentence longer than the encoder's window is cut to a window of tokens around the pair
    (the widest of 32, 16, 8, 4, 0 tokens of context each side that fits); a pair whose own
    extent is longer still is read by the encoder in overlapping windows (logits averaged).
    """
    from ...encoders.heads import PairClassifier

    if style not in ("replace", "mark"):
        raise ValueError(f"RelationAnonymised: style must be 'replace' or 'mark', got {style!r}")
    if batch_size < 1:
        raise ValueError(f"RelationAnonymised: batch_size must be >= 1, got {batch_size}")
    classifier = PairClassifier(encoder, n_labels=nO, dropout=dropout)
    return Model(
        "relation_anonymised",
        _anonymised_forward,
        init=_anonymised_init,
        layers=[classifier],
        refs={"encoder": encoder, "classifier": classifier},
        dims={"nO": nO},
        attrs={
            "placeholders": dict(placeholders),
            "other_placeholder": other_placeholder,
            "style": style,
            "batch_size": batch_size,
        },
    )


def _anonymised_init(model: Model, X: Optional[RelationInput] = None, Y=None) -> None:
    classifier = model.get_ref("classifier")
    if model.has_dim("nO") is not True:
        raise ValueError("RelationAnonymised: nO (number of labels + 1) must be set before initialising")
    if classifier.has_dim("nO") is not True:
        classifier.set_dim("nO", model.get_dim("nO"))
    classifier.initialize()


def pair_texts(model: Model, docs: Sequence[Doc], pairs: Sequence[Ints2d]) -> List[str]:
    """The anonymised encoder input of every pair, in order.

    An input longer than the encoder window is cut to a window of tokens around the pair (32,
    16, 8, 4, then 0 tokens of context each side) so both entities stay in. The first text of a
    pair has at most ``window`` tokens each side of it: a token is at least one wordpiece, so more
    context could never fit the window and would be cut anyway, and tokenising it would cost the
    whole Doc per pair on a long Doc without sentence boundaries.
    """
    from ...encoders.pair_encoder import get_tokenizer

    attrs = model.attrs
    args = (attrs["placeholders"], attrs["other_placeholder"], attrs["style"])
    spans = []
    for doc, offsets in zip(docs, pairs):
        # The entity spans themselves (with their labels, which choose the placeholders).
        doc_ents = relation_entities(doc)
        ents = {(ent.start, ent.end): ent for ent in doc_ents}
        for hs, he, ts, te in offsets:
            head = ents.get((int(hs), int(he))) or doc[int(hs):int(he)]
            tail = ents.get((int(ts), int(te))) or doc[int(ts):int(te)]
            spans.append((doc, head, tail, doc_ents))
    if not spans:
        return []
    encoder = model.get_ref("encoder")
    tokenizer, window = get_tokenizer(encoder), encoder.attrs["window"]
    texts = [anonymise(doc, head, tail, *args, entities=doc_ents, max_context=window)
             for doc, head, tail, doc_ents in spans]
    for i, n_pieces in enumerate(_n_pieces(tokenizer, texts)):
        if n_pieces <= window:
            continue
        doc, head, tail, doc_ents = spans[i]
        first, last = min(head.start, tail.start), max(head.end, tail.end)
        for context in CONTEXT_STEPS:
            token_range = (max(0, first - context), min(len(doc), last + context))
            texts[i] = anonymise(doc, head, tail, *args, window=token_range, entities=doc_ents)
            if _n_pieces(tokenizer, [texts[i]])[0] <= window:
                break
    return texts


def _n_pieces(tokenizer, texts: List[str]) -> List[int]:
    return [len(ids) for ids in tokenizer(texts, add_special_tokens=True)["input_ids"]]


def _anonymised_forward(model: Model, inputs: RelationInput, is_train: bool):
    docs, pairs = inputs
    classifier = model.get_ref("classifier")
    texts = pair_texts(model, docs, pairs)
    if not texts:
        return model.ops.alloc2f(0, model.get_dim("nO")), lambda d_scores: []
    step = model.attrs["batch_size"]
    outputs, callbacks = [], []
    for begin in range(0, len(texts), step):
        scores, backprop_chunk = classifier(texts[begin:begin + step], is_train)
        outputs.append(scores)
        callbacks.append(backprop_chunk)

    def backprop(d_scores: Floats2d) -> List:
        row = 0
        for scores, backprop_chunk in zip(outputs, callbacks):
            backprop_chunk(d_scores[row:row + len(scores)])
            row += len(scores)
        return []

    return model.ops.xp.vstack(outputs), backprop
