"""A head that learns from some Docs of a batch, listening to an encoder that read all of them.

A multi-task batch mixes corpora; a head such as a ``typed_ner`` learns from the Docs of the
corpora that annotate its types only (a third of a five-type batch, or less). spaCy's listeners
(``TransformerListener``, ``Tok2VecListener``) accept exactly the batch their upstream component
read, so a head that gives its model the whole batch pools, projects and backpropagates every Doc,
and sends the encoder a gradient that is zero for most of them.

:func:`listening_to` arms a model's listener with the outputs of the Docs the head learns from;
its gradient reaches the upstream component as the whole batch's, zeros for the other Docs, so the
upstream's accumulation (which adds the listeners' gradients Doc by Doc) and its backward are
unchanged. When no Doc is kept, the zero gradient is passed on all the same: the last listener's
callback is what runs the encoder's backward for every listener.
"""

from contextlib import contextmanager
from typing import Iterator, List, Optional, Sequence

from spacy.tokens import Doc
from thinc.api import Model

__all__ = ["listening_to"]

# spaCy's and spacy-transformers' listeners by name: this module is imported by typed_ner's
# factory entry point, which should not import torch.
_LISTENER_NAMES = ("tok2vec-listener", "transformer-listener")


def _armed_listener(model: Model) -> Optional[Model]:
    """The model's listener when its upstream component sent it this batch's outputs, else None
    (no listener, or a frozen upstream whose listener reads the Docs' annotations: any subset)."""
    for node in model.walk():
        if node.name in _LISTENER_NAMES:
            return node if node._batch_id is not None else None
    return None


def _zero_gradient(model: Model, output):
    """A zero gradient shaped as one Doc's listener output; None for a Doc the transformer did not
    read (no tokens), whose gradient spacy-transformers leaves out of the list too."""
    if model.name == "tok2vec-listener":
        return model.ops.alloc2f(*output.shape)
    from spacy_transformers.data_classes import TransformerData
    from transformers.file_utils import ModelOutput

    if "last_hidden_state" not in output.model_output:
        return None
    hidden = output.model_output.last_hidden_state
    return TransformerData(model_output=ModelOutput(last_hidden_state=model.ops.alloc(hidden.shape, dtype=hidden.dtype)),
                           wordpieces=output.wordpieces, align=output.align)


@contextmanager
def listening_to(model: Model, docs: Sequence[Doc], kept: Sequence[int]) -> Iterator[List[Doc]]:
    """Within the block ``model``'s listener serves the Docs ``docs[i]`` for ``i`` in ``kept``
    (indices into the batch its upstream component read; Docs with tokens), which the block is
    given. Their gradient goes upstream as the whole batch's, with zeros for the other Docs; if
    nothing in the block backpropagated (nothing kept), the zero gradient goes on when it ends."""
    kept_docs = [docs[i] for i in kept]
    listener = _armed_listener(model)
    if listener is None:
        yield kept_docs
        return
    listener.verify_inputs(docs)
    outputs, backprop = listener._outputs, listener._backprop  # what the upstream component sent it
    sent = []

    def backprop_kept(d_kept=None):
        d_all = [_zero_gradient(listener, output) for output in outputs]
        for i, d_doc in zip(kept, d_kept or []):
            d_all[i] = d_doc
        sent.append(True)
        return backprop([d for d in d_all if d is not None])

    listener.receive(listener.get_batch_id(kept_docs), [outputs[i] for i in kept], backprop_kept)
    try:
        yield kept_docs
        if not sent:
            backprop_kept()
    finally:
        listener.receive(None, None, None)  # as spacy-transformers leaves a listener it read: nothing held
