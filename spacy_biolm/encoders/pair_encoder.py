"""The encoder shared by every component that reads a text pair or a marked sentence.

``spacy-biolm.PairEncoder.v1`` is a thinc Model that owns a Hugging Face encoder and its fast
tokenizer. Its inputs are either (question, passage) pairs, tokenised as ``[CLS] question [SEP]
passage [SEP]`` with segment ids (yes/no, answer span, reranking), or single texts, tokenised as
``[CLS] text [SEP]`` (a relation's anonymised or marked sentence); one batch holds one kind. The
text that is read in windows (the passage of a pair, the whole of a single text) is cut into
overlapping windows when it does not fit (``window`` wordpieces in all, consecutive windows sharing
``stride`` wordpieces of that text). The output is the encoder's last hidden states of every window
together with what is needed to map wordpieces back to character offsets of that text. Nothing is
truncated: an input of any length gives as many windows as it needs.

When predicting, the windows of a batch run through the encoder in length-sorted chunks of at most
``max_batch_tokens`` padded wordpieces (as ``length_sorted.py`` does for spacy-transformers): a
reranking Doc of 60 candidates, 16 Docs a batch, is ~1,000 windows, and one forward pass over all
of them holds gigabytes of attention activations. Training keeps one pass per batch (the
backward pass needs it).

The HF model lives in spacy-transformers' ``HFShim`` (through ``HFWrapper``), so the weights, the
config and the tokenizer files are serialised inside the spaCy pipeline (``nlp.to_disk`` and
packages) and the pipeline no longer needs the encoder directory. The model runs on the GPU when
spaCy does (``spacy.require_gpu()`` / ``--gpu-id``), on the CPU otherwise; its inputs follow its
parameters (``encoders.devices``).

Module top is import-light (thinc and numpy only): spacy-transformers, transformers and torch are
imported when an encoder is built.
"""

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats3d

__all__ = ["EncodedWindows", "EncoderInput", "PairEncoder", "QAPair", "tokenize_windows", "get_tokenizer"]

QAPair = Tuple[str, str]
# A (question, passage) pair or a single text; the windowed text is the passage or the single text.
EncoderInput = Union[QAPair, str]

# The fewest passage wordpieces a window must hold; a question so long that less room is left is
# an error rather than a silent truncation of the question.
MIN_PASSAGE_PIECES = 8


@dataclass
class EncodedWindows:
    """The encoder output for a batch of pairs, one row per window.

    hidden: (n_windows, length, width) last hidden states (numpy, or cupy on GPU).
    pair_index: (n_windows,) which input each window belongs to.
    offsets: (n_windows, length, 2) character offsets of each wordpiece in the windowed text of
        its input (the passage of a pair, the single text otherwise; meaningful where
        ``passage_mask`` is true).
    passage_mask: (n_windows, length) true for wordpieces of the windowed text.
    n_pairs: number of inputs (every input has at least one window).
    attention_mask: (n_windows, length) true for every wordpiece of the window, special tokens
        included, false for padding.
    """

    hidden: Floats3d
    pair_index: numpy.ndarray
    offsets: numpy.ndarray
    passage_mask: numpy.ndarray
    n_pairs: int
    attention_mask: numpy.ndarray


@registry.architectures("spacy-biolm.PairEncoder.v1")
def PairEncoder(
    name: str,
    window: int = 256,
    stride: int = 64,
    tokenizer_config: Dict[str, Any] = {"use_fast": True},
    transformer_config: Dict[str, Any] = {},
    mixed_precision: bool = False,
    grad_scaler_config: Dict[str, Any] = {},
    max_batch_tokens: int = 4096,
    train_precision: str = "float32",
) -> Model[List[EncoderInput], EncodedWindows]:
    """An HF encoder + fast tokenizer for (question, passage) pairs or single texts, windowed
    over long passages (or long single texts).

    name (str): an HF encoder directory (ELECTRA, ALBERT, BERT families; e.g. our
        ``pretrained/tiny/model``) or, with hub access, a model name. Loaded at
        ``nlp.initialize()``; afterwards the weights travel inside the pipeline.
    window (int): wordpieces per window, special tokens and question included (at most the
        encoder's ``max_position_embeddings``).
    stride (int): wordpieces shared by consecutive windows of a long passage (or single text),
        so an answer cut by one window boundary is whole in the next window.
    tokenizer_config (dict): keyword arguments for ``AutoTokenizer.from_pretrained``; the
        tokenizer must be a fast one (character offsets are needed).
    transformer_config (dict): keyword arguments for ``AutoConfig.from_pretrained``.
    mixed_precision (bool): autocast on the GPU.
    grad_scaler_config (dict): settings of the gradient scaler used with mixed precision.
    max_batch_tokens (int): when predicting, the windows run through the encoder in length-sorted
        chunks of at most this many padded wordpieces (0: the whole batch at once). Bounds the
        memory of a pass and skips most padding; the outputs are the same.
    train_precision (str): "float32", or "bfloat16": the training passes under bfloat16
        autocast where the device computes it natively (precision.py); predictions stay float32.

    Input: a list of (question, passage) string pairs, or a list of strings (one segment each).
    Output: ``EncodedWindows``. The backward
    pass takes the gradient of the hidden states; there is no gradient for the (string) input.
    """
    from spacy_transformers.data_classes import HFObjects
    from thinc.layers.pytorchwrapper import forward as pt_forward

    from .precision import check_train_precision
    from .storage_shim import Int8StorageHFShim

    check_train_precision(train_precision, mixed_precision)
    if window < MIN_PASSAGE_PIECES + 4:
        raise ValueError(f"PairEncoder window must be at least {MIN_PASSAGE_PIECES + 4} wordpieces, got {window}")
    if not 0 <= stride < window // 2:
        raise ValueError(f"PairEncoder stride must be in [0, window/2), got stride={stride} for window={window}")
    if not isinstance(max_batch_tokens, int) or max_batch_tokens < 0:
        raise ValueError(f"PairEncoder max_batch_tokens must be an integer >= 0, got {max_batch_tokens!r}")
    hf_model = HFObjects(None, None, None, dict(tokenizer_config), dict(transformer_config))
    # spacy-transformers' HFWrapper, with a shim that also loads weights stored in int8 (half_precision.py).
    wrapper = Model(
        "hf-pytorch",
        pt_forward,
        attrs={"convert_inputs": _convert_inputs, "convert_outputs": _convert_outputs},
        shims=[Int8StorageHFShim(hf_model, mixed_precision=mixed_precision, grad_scaler_config=dict(grad_scaler_config))],
        dims={"nI": None, "nO": None},
    )
    return Model(
        "pair_encoder",
        _forward,
        init=_init,
        layers=[wrapper],
        attrs={"name": name, "window": window, "stride": stride, "max_batch_tokens": max_batch_tokens,
               "train_precision": train_precision},
        dims={"nO": None},
    )


def get_tokenizer(model: Model):
    """The HF tokenizer of a PairEncoder (None before initialisation or loading)."""
    return model.layers[0].shims[0]._hfmodel.tokenizer


def _has_transformer(model: Model) -> bool:
    return model.layers[0].shims[0]._hfmodel.transformer is not None


def _init(model: Model, X: Optional[List[EncoderInput]] = None, Y=None) -> Model:
    from spacy_transformers.layers.transformer_model import huggingface_from_pretrained
    from transformers import PreTrainedTokenizerFast

    shim = model.layers[0].shims[0]
    if not _has_transformer(model):
        hf = huggingface_from_pretrained(
            model.attrs["name"], dict(shim._hfmodel._init_tokenizer_config), dict(shim._hfmodel._init_transformer_config)
        )
        shim._model = hf.transformer
        shim._hfmodel.tokenizer = hf.tokenizer
        shim._hfmodel.transformer = hf.transformer
        shim._hfmodel.vocab_file_contents = hf.vocab_file_contents
    tokenizer = get_tokenizer(model)
    if not isinstance(tokenizer, PreTrainedTokenizerFast):
        raise ValueError(
            f"PairEncoder needs a fast tokenizer (for character offsets); {model.attrs['name']} gave "
            f"{type(tokenizer).__name__}. Set tokenizer_config = {{\"use_fast\": true}} or give a directory with tokenizer.json."
        )
    config = shim._model.config
    max_positions = getattr(config, "max_position_embeddings", None)
    if max_positions is not None and model.attrs["window"] > max_positions:
        raise ValueError(
            f"PairEncoder window {model.attrs['window']} exceeds the encoder's max_position_embeddings {max_positions}"
        )
    model.set_dim("nO", config.hidden_size)
    return model


def tokenize_windows(tokenizer, inputs: Sequence[EncoderInput], window: int, stride: int) -> Dict[str, Any]:
    """Tokenise inputs into windows: input arrays plus ``pair_index``, ``offsets``, ``passage_mask``.

    ``inputs`` are all (question, passage) pairs or all single texts. Every input gives at least
    one window (an empty passage gives ``[CLS] q [SEP] [SEP]``). Raises ValueError when a
    question leaves less than ``MIN_PASSAGE_PIECES`` of the window, or when pairs and single
    texts are mixed.
    """
    single = [isinstance(item, str) for item in inputs]
    if any(single) and not all(single):
        raise ValueError("PairEncoder inputs must be all (question, passage) pairs or all single texts, not a mix")
    windowed = dict(truncation=True, max_length=window, stride=stride, return_overflowing_tokens=True,
                    return_offsets_mapping=True, padding="longest", return_tensors="np")
    if all(single):
        encoding = tokenizer(list(inputs), **windowed)
        windowed_segment = 0
    else:
        questions = [q for q, _ in inputs]
        _check_question_lengths(tokenizer, questions, window)
        encoding = tokenizer(questions, [p for _, p in inputs], **{**windowed, "truncation": "only_second"})
        windowed_segment = 1
    n_windows = encoding["input_ids"].shape[0]
    passage_mask = numpy.zeros(encoding["input_ids"].shape, dtype=bool)
    for w in range(n_windows):
        passage_mask[w] = [s == windowed_segment for s in encoding.sequence_ids(w)]
    inputs_arrays = {
        "input_ids": encoding["input_ids"],
        "attention_mask": encoding["attention_mask"],
    }
    if "token_type_ids" in encoding:
        inputs_arrays["token_type_ids"] = encoding["token_type_ids"]
    return {
        "inputs": inputs_arrays,
        "pair_index": numpy.asarray(encoding["overflow_to_sample_mapping"], dtype="int64"),
        "offsets": numpy.asarray(encoding["offset_mapping"], dtype="int64"),
        "passage_mask": passage_mask,
    }


def _check_question_lengths(tokenizer, questions: Sequence[str], window: int) -> None:
    lengths = [len(ids) for ids in tokenizer(list(questions), add_special_tokens=False)["input_ids"]]
    for question, n in zip(questions, lengths):
        if n + 3 + MIN_PASSAGE_PIECES > window:
            raise ValueError(
                f"Question of {n} wordpieces does not fit a window of {window} with room for the passage: "
                f"{question[:80]!r}. Raise the PairEncoder window."
            )


def _forward(model: Model, pairs: List[EncoderInput], is_train: bool) -> Tuple[EncodedWindows, Callable]:
    if not _has_transformer(model):
        raise ValueError("PairEncoder is not initialised: call nlp.initialize() (or load a trained pipeline) first")
    if not pairs:
        width = model.get_dim("nO")
        empty = EncodedWindows(
            model.ops.alloc3f(0, 0, width), numpy.zeros(0, dtype="int64"), numpy.zeros((0, 0, 2), dtype="int64"),
            numpy.zeros((0, 0), dtype=bool), 0, numpy.zeros((0, 0), dtype=bool),
        )
        return empty, lambda d_hidden: []
    batch = tokenize_windows(get_tokenizer(model), pairs, model.attrs["window"], model.attrs["stride"])
    budget = model.attrs.get("max_batch_tokens", 0)
    if is_train:
        from .precision import training_autocast

        with training_autocast(model.attrs.get("train_precision", "float32"), model.layers[0].shims[0]._model):
            hidden, backprop_hidden = model.layers[0](batch["inputs"], is_train)
    elif not budget:
        hidden, backprop_hidden = model.layers[0](batch["inputs"], is_train)
    else:
        hidden, backprop_hidden = _predict_in_chunks(model.layers[0], batch["inputs"], budget), None
    output = EncodedWindows(hidden, batch["pair_index"], batch["offsets"], batch["passage_mask"], len(pairs),
                            batch["inputs"]["attention_mask"].astype(bool))

    def backprop(d_hidden: Floats3d) -> List:
        backprop_hidden(d_hidden)
        return []

    return output, backprop


def _predict_in_chunks(wrapper: Model, inputs: Dict[str, numpy.ndarray], budget: int) -> Floats3d:
    """The encoder's hidden states of every window, computed over length-sorted chunks of rows cut
    to their longest row. Padding positions hold no meaningful state (past a chunk's longest row:
    zeros), as in one pass; every head masks them."""
    from .length_sorted import length_sorted_chunks

    lengths = inputs["attention_mask"].sum(axis=1).astype(numpy.int64)
    n_rows, padded_length = inputs["input_ids"].shape
    hidden = None
    for rows in length_sorted_chunks(lengths, budget):
        length = max(int(lengths[rows].max()), 1)
        chunk = wrapper.predict({key: value[rows, :length] for key, value in inputs.items()})
        if hidden is None:
            hidden = wrapper.ops.xp.zeros((n_rows, padded_length, chunk.shape[2]), dtype=chunk.dtype)
        hidden[wrapper.ops.asarray(rows), :length] = chunk
    return hidden


def _convert_inputs(model: Model, inputs: Dict[str, numpy.ndarray], is_train: bool):
    from thinc.api import ArgsKwargs

    from .devices import tensors_for

    kwargs = tensors_for(model.shims[0]._model, inputs)
    return ArgsKwargs(args=(), kwargs=kwargs), lambda d_inputs: []


def _convert_outputs(model: Model, inputs_outputs, is_train: bool):
    from thinc.api import ArgsKwargs
    from thinc.util import torch2xp, xp2torch

    _, output = inputs_outputs
    # Float32 where a bfloat16 training pass (train_precision) left the states in bfloat16: numpy has
    # no bfloat16, and the cast is part of the graph, so the gradient flows back through it.
    hidden_torch = output.last_hidden_state.float()
    hidden = torch2xp(hidden_torch.detach())

    def backprop(d_hidden):
        grad = xp2torch(model.ops.asarray(d_hidden, dtype=hidden.dtype), device=hidden_torch.device)
        return ArgsKwargs(args=(hidden_torch,), kwargs={"grad_tensors": (grad,)})

    return model.ops.asarray(hidden), backprop
