"""Label-wise attention: a multi-label document classifier for spaCy's ``textcat_multilabel``.

spaCy's ``TextCatParametricAttention`` pools a document with one attention over its tokens, shared
by every label. An abstract in the Hallmarks of Cancer states each hallmark in its own sentence or
two, so one pooling has to cover all of them at once. Here each label has its own query
(label-wise attention, as in CAML and LAAT for ICD coding): label l weighs the tokens by
``softmax(tanh(X W + c) q_l)`` within the document, and its logit is a linear read-out of the
weighted token vectors. The (tokens x labels) score matrices are all that is ever formed, never a
(documents x labels x width) tensor, so the head costs two matrix products more than a linear one.
"""

from typing import Callable, List, Optional, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import LayerNorm, Model, chain, list2ragged, with_array
from thinc.initializers import glorot_uniform_init
from thinc.types import Floats2d, Ragged

__all__ = ["LabelAttention", "build_label_attention_textcat"]


@registry.architectures("spacy-biolm.TextCatLabelAttention.v1")
def build_label_attention_textcat(
    tok2vec: Model[List[Doc], List[Floats2d]],
    exclusive_classes: bool = False,
    attention_width: Optional[int] = None,
    nO: Optional[int] = None,
) -> Model[List[Doc], Floats2d]:
    """Docs -> one sigmoid probability per label, each from its own attention over the tokens.

    tok2vec (Model): token vectors, e.g. a ``spacy-transformers.TransformerListener.v1``.
    exclusive_classes (bool): must be False; the labels are independent (``textcat_multilabel``).
    attention_width (Optional[int]): width of the attention keys ``tanh(X W + c)``; the token
        vectors' width when None.
    nO (Optional[int]): the number of labels; set from the component's labels when None.
    """
    if exclusive_classes:
        raise ValueError(
            "spacy-biolm.TextCatLabelAttention.v1 scores each label on its own (sigmoid): "
            "use it with textcat_multilabel and exclusive_classes = false"
        )
    # The tokens are layer-normalised first: a transformer's token vectors are small (about 0.3 a
    # dimension for all-MiniLM-L6-v2), and Adam moves every weight by about the learning rate a
    # step, so on raw vectors the read-out's logits move about a third as fast. On HoC (updates of
    # 4 abstracts) raw vectors had dev macro ROC AUC 0.86 after 200 updates, normalised ones 0.93.
    model = chain(
        tok2vec,
        list2ragged(),
        with_array(LayerNorm()),
        LabelAttention(nO=nO, attention_width=attention_width),
    )
    model.set_ref("tok2vec", tok2vec)
    model.set_ref("output_layer", model.layers[-1])
    model.attrs["multi_label"] = True
    return model


def LabelAttention(
    nO: Optional[int] = None, nI: Optional[int] = None, attention_width: Optional[int] = None
) -> Model[Ragged, Floats2d]:
    """Ragged token vectors of a batch of documents -> (documents, nO) sigmoid probabilities.

    Parameters: W (nA, nI) and c (nA) make the keys, Q (nO, nA) the label queries, O (nO, nI)
    and b (nO) the read-out. A document without tokens gets sigmoid(b), a label's prior.
    """
    return Model(
        "label_attention",
        _forward,
        init=_init,
        dims={"nO": nO, "nI": nI, "nA": attention_width},
        params={"W": None, "c": None, "Q": None, "O": None, "b": None},
    )


def _init(model: Model, X: Optional[Ragged] = None, Y: Optional[Floats2d] = None) -> None:
    if X is not None:
        model.set_dim("nI", X.dataXd.shape[1])
    if Y is not None:
        model.set_dim("nO", Y.shape[1])
    if not model.has_dim("nA"):
        model.set_dim("nA", model.get_dim("nI"))
    n_labels, width, key_width = (model.get_dim(d) for d in ("nO", "nI", "nA"))
    ops = model.ops
    model.set_param("W", glorot_uniform_init(ops, (key_width, width)))
    model.set_param("c", ops.alloc1f(key_width))
    model.set_param("Q", glorot_uniform_init(ops, (n_labels, key_width)))
    model.set_param("O", glorot_uniform_init(ops, (n_labels, width)))
    model.set_param("b", ops.alloc1f(n_labels))


def _forward(model: Model, Xr: Ragged, is_train: bool) -> Tuple[Floats2d, Callable]:
    ops = model.ops
    W, c, Q, O, b = (model.get_param(p) for p in ("W", "c", "Q", "O", "b"))
    X = ops.as_contig(Xr.dataXd)
    lengths = Xr.lengths
    keys = ops.xp.tanh(ops.gemm(X, W, trans2=True) + c)  # (tokens, nA)
    # Each label's attention over each document's tokens, a softmax per (document, label).
    attention = ops.softmax_sequences(ops.gemm(keys, Q, trans2=True), lengths)  # (tokens, nO)
    # logit[d, l] = sum over d's tokens i of attention[i, l] * (X[i] . O[l]) + b[l]
    readout = ops.gemm(X, O, trans2=True)  # (tokens, nO)
    logits = ops.reduce_sum(attention * readout, lengths) + b
    Y = ops.sigmoid(logits)

    def backprop(dY: Floats2d) -> Ragged:
        d_logits = dY * Y * (1.0 - Y)
        d_weighted = ops.backprop_reduce_sum(d_logits, lengths)  # (tokens, nO)
        d_readout = d_weighted * attention
        d_scores = ops.backprop_softmax_sequences(d_weighted * readout, attention, lengths)
        d_keys = ops.gemm(d_scores, Q) * (1.0 - keys**2)
        model.inc_grad("b", d_logits.sum(axis=0))
        model.inc_grad("O", ops.gemm(d_readout, X, trans1=True))
        model.inc_grad("Q", ops.gemm(d_scores, keys, trans1=True))
        model.inc_grad("W", ops.gemm(d_keys, X, trans1=True))
        model.inc_grad("c", d_keys.sum(axis=0))
        dX = ops.gemm(d_readout, O) + ops.gemm(d_keys, W)
        return Ragged(dX, lengths)

    return Y, backprop
