"""A spacy-transformers TransformerModel whose encoder passes waste no time on padding.

spacy-transformers pads every window of a sub-batch to the longest one. On sentence-level
biomedical corpora (NCBI-disease test: 3 to 106 tokens a sentence) half of the padded
wordpieces of a batch of 64 sentences are padding, and a tiny encoder's forward pass is the
bulk of the pipeline's time, so the pipeline runs at about half the speed the encoder allows.
Here the windows are tokenised as before, then sorted by wordpiece length and
run through the encoder in chunks of at most ``max_batch_tokens`` padded wordpieces; the outputs
are put back in the original order, padded as spacy-transformers pads them, so everything
downstream (alignment, ``doc._.trf_data``, listeners, serialisation) is unchanged.

How it plugs in: nothing is patched, at import or later. The registered architecture
``spacy-biolm.LengthSortedTransformerModel.v1`` builds spacy-transformers' own TransformerModel and
hands it to :func:`with_length_sorted_passes`, which gives that one model object another
forward callback through thinc's public ``Model.replace_callbacks`` (as thinc's own ``with_debug``
wraps a layer). spacy-transformers 1.4's TransformerModel fixes its forward in its constructor
and takes none as an argument, and the Transformer pipe relies on that class and its layout (its
``from_disk`` calls ``set_transformer`` on it, serialisation walks its HF shim), so the model
stays a TransformerModel (same layers, weights and attributes) rather than being wrapped:
pipelines save and load as before. Its ``replace_listener`` hook re-applies the length-sorted pass
to the copy that ``nlp.replace_listeners`` makes, and its ``replace_listener_cfg`` hook writes
``spacy-biolm.LengthSortedTok2VecTransformer.v1`` into the config, so a sourced listener keeps it.

Training (``is_train=True``) runs the same length-sorted chunks as one graph with one backward pass
(``_train_sorted``): the outputs and gradients of the real wordpieces are TransformerModel.v3's
(padding is masked out of attention), only less padding is computed. It
matters most where a batch mixes lengths: a multi-task batch of ~30 sentences and 2 abstracts
padded every sentence to an abstract's window, and the encoder's forward and backward were 96% of
a training step (configs/release_multitask.cfg, py-spy). With mixed precision, training takes
the stock pass (the shim's gradient scaler expects one backward per update).

Building the model also makes forked workers (``nlp.pipe(n_process=...)``) single-threaded in torch:
see ``forking.py``.

Import-light: spacy-transformers (and with it transformers) is imported when a model is built.
"""

from typing import Callable, List, Sequence

import numpy

from .precision import check_train_precision

# Outputs with one row per wordpiece; any other output has one row per window.
_PER_WORDPIECE = ("last_hidden_state", "hidden_states")
# The fixed cost of one encoder call (Python, framework, kernel launches), in wordpieces of
# compute: measured on CPU for the tiny encoder, a call costs about as much as 30-60 wordpieces.
CALL_COST_WORDPIECES = 64

__all__ = [
    "create_length_sorted_transformer_model",
    "create_length_sorted_tok2vec_transformer",
    "with_length_sorted_passes",
    "length_sorted_chunks",
    "wordpiece_batch",
    "length_sorted_forward",
    "split_by_doc",
    "align_by_offsets",
]


def create_length_sorted_transformer_model(
    name: str,
    get_spans: Callable,
    tokenizer_config: dict = {},
    transformer_config: dict = {},
    mixed_precision: bool = False,
    grad_scaler_config: dict = {},
    max_batch_tokens: int = 2048,
    train_precision: str = "float32",
):
    """``spacy-transformers.TransformerModel.v3`` with length-sorted encoder batches.

    Registered as ``spacy-biolm.LengthSortedTransformerModel.v1``. The arguments are those of
    TransformerModel.v3, plus:

    max_batch_tokens (int): the windows of a batch run through the encoder
        sorted by wordpiece length, in chunks of at most this many wordpieces *including padding*
        (a window longer than that runs alone). 0 turns sorting off (TransformerModel.v3's pass).
    train_precision (str): "float32", or "bfloat16": the length-sorted training passes under
        bfloat16 autocast where the device computes it natively (precision.py); predictions, and
        the stock pass of max_batch_tokens 0, stay float32.
    """
    from spacy_transformers.architectures import create_TransformerModel_v3

    if transformer_config.get("output_attentions"):
        # Attention maps are (windows, heads, length, length): re-padding them is not supported.
        raise ValueError("spacy-biolm.LengthSortedTransformerModel.v1 does not return attentions "
                         "(transformer_config.output_attentions); use spacy-transformers.TransformerModel.v3")
    _check_budget(max_batch_tokens)
    check_train_precision(train_precision, mixed_precision)
    model = create_TransformerModel_v3(name, get_spans, tokenizer_config, transformer_config,
                                       mixed_precision, grad_scaler_config)
    return with_length_sorted_passes(model, max_batch_tokens, mixed_precision, train_precision)


def with_length_sorted_passes(model, max_batch_tokens: int, mixed_precision: bool = False,
                              train_precision: str = "float32"):
    """Give a spacy-transformers ``TransformerModel`` the length-sorted passes; returns
    the same model object.

    The model's forward becomes :func:`length_sorted_forward` (through thinc's
    ``Model.replace_callbacks``; its init stays spacy-transformers' own), its attrs record
    ``max_batch_tokens``, ``mixed_precision`` and ``train_precision``, and its ``replace_listener`` /
    ``replace_listener_cfg`` hooks keep the pass for a listener that ``nlp.replace_listeners``
    gives its own copy of the model. Forked workers are made single-threaded in torch.
    """
    _check_budget(max_batch_tokens)
    check_train_precision(train_precision, mixed_precision)
    from .forking import single_threaded_torch_after_fork

    single_threaded_torch_after_fork()  # nlp.pipe(n_process=...) would hang after a 2-thread run
    model.attrs["max_batch_tokens"] = max_batch_tokens
    model.attrs["mixed_precision"] = mixed_precision
    model.attrs["train_precision"] = train_precision
    # The stock hooks are kept and wrapped: what they do for a plain TransformerModel still happens.
    # (spaCy counts a hook's parameters, so these are closures, not partials.)
    stock_replace_listener = model.attrs["replace_listener"]
    stock_replace_listener_cfg = model.attrs["replace_listener_cfg"]

    def replace_listener(copied_model):
        # ``nlp.replace_listeners`` copies the model (TransformerModel.copy() builds a plain one)
        # and calls this hook on the copy: the copy predicts length-sorted too.
        return stock_replace_listener(with_length_sorted_passes(copied_model, max_batch_tokens, mixed_precision,
                                                                train_precision))

    def replace_listener_cfg(tok2vec_model_cfg: dict, listener_model_cfg: dict) -> dict:
        # The stock hook turns a TransformerModel config into a Tok2VecTransformer one (our
        # architecture's name contains "TransformerModel", so it applies); keep ours instead.
        result = stock_replace_listener_cfg(tok2vec_model_cfg, listener_model_cfg)
        if result["@architectures"] == "spacy-transformers.Tok2VecTransformer.v3":
            result["@architectures"] = "spacy-biolm.LengthSortedTok2VecTransformer.v1"
        return result

    model.attrs["replace_listener"] = replace_listener
    model.attrs["replace_listener_cfg"] = replace_listener_cfg
    model.replace_callbacks(length_sorted_forward, init=model.init)
    return model


def _check_budget(max_batch_tokens: int) -> None:
    if not isinstance(max_batch_tokens, int) or max_batch_tokens < 0:
        raise ValueError(f"max_batch_tokens must be an integer >= 0 (0 turns sorting off), got {max_batch_tokens!r}")


def create_length_sorted_tok2vec_transformer(
    name: str,
    get_spans: Callable,
    tokenizer_config: dict,
    pooling,
    grad_factor: float = 1.0,
    transformer_config: dict = {},
    mixed_precision: bool = False,
    grad_scaler_config: dict = {},
    max_batch_tokens: int = 2048,
    train_precision: str = "float32",
):
    """``spacy-transformers.Tok2VecTransformer.v3`` built on the length-sorted transformer model: a
    component's own encoder, as a listener of ``spacy-biolm.LengthSortedTransformerModel.v1``
    becomes after ``replace_listeners``. Registered as ``spacy-biolm.LengthSortedTok2VecTransformer.v1``."""
    from spacy_transformers.layers import split_trf_batch, trfs2arrays
    from thinc.api import chain

    transformer = create_length_sorted_transformer_model(name, get_spans, tokenizer_config, transformer_config,
                                                         mixed_precision, grad_scaler_config, max_batch_tokens,
                                                         train_precision)
    # A chain of a chain, as spacy-transformers builds it, to match a replaced listener's structure.
    return chain(chain(transformer, split_trf_batch()), trfs2arrays(pooling, grad_factor))


def length_sorted_chunks(lengths: Sequence[int], max_batch_tokens: int,
                         call_cost: int = CALL_COST_WORDPIECES) -> List[numpy.ndarray]:
    """Row indices grouped into chunks of rows of similar length, longest first, each chunk's
    padded size (its longest row times its number of rows) at most max_batch_tokens; a row longer
    than that makes a chunk of its own. Every row appears in exactly one chunk.

    Among such splits of the length-sorted rows, the one with the least padded wordpieces plus
    ``call_cost`` per chunk (the fixed cost of one encoder call, in wordpieces) is chosen by
    dynamic programming over the sorted rows.
    """
    lengths = numpy.asarray(lengths, dtype=numpy.int64)
    order = numpy.argsort(-lengths, kind="stable")
    longest = numpy.maximum(lengths[order], 1)  # a chunk starting at row i pads to longest[i]
    n = len(order)
    best = numpy.zeros(n + 1, dtype=numpy.float64)  # best[j]: cheapest split of the first j rows
    start_of = numpy.zeros(n + 1, dtype=numpy.int64)
    for end in range(1, n + 1):
        starts = numpy.arange(max(0, end - max(1, max_batch_tokens)), end)
        padded = longest[starts] * (end - starts)
        allowed = (padded <= max_batch_tokens) | (starts == end - 1)
        cost = numpy.where(allowed, best[starts] + padded + call_cost, numpy.inf)
        pick = int(numpy.argmin(cost))
        best[end], start_of[end] = cost[pick], starts[pick]
    chunks, end = [], n
    while end > 0:
        chunks.append(order[start_of[end]:end])
        end = int(start_of[end])
    return chunks[::-1]


def length_sorted_forward(model, docs, is_train: bool):
    """TransformerModel's forward, the encoder run on length-sorted chunks of the batch's windows."""
    from spacy_transformers.layers.transformer_model import forward

    budget = model.attrs.get("max_batch_tokens", 0)
    if budget <= 0 or (is_train and model.attrs.get("mixed_precision")):
        return forward(model, docs, is_train)
    from spacy_transformers.align import get_alignment
    from spacy_transformers.data_classes import FullTransformerBatch
    from spacy_transformers.truncate import truncate_oversize_splits
    from spacy_transformers.util import maybe_flush_pytorch_cache

    # As the stock pass does: it draws from `random` even at chance 0, and skipping the draw would
    # shift the random stream of a training run (evaluations run this pass) off the stock one's.
    maybe_flush_pytorch_cache(chance=model.attrs.get("flush_cache_chance", 0))
    tokenizer = model.tokenizer
    nested_spans = model.attrs["get_spans"](docs)
    flat_spans = [span for doc_spans in nested_spans for span in doc_spans]
    # A span's text sliced from its Doc's text: Span.text joins one Token object per token.
    texts = [span.doc.text[span.start_char:span.end_char] for span in flat_spans]
    batch_encoding, wordpieces = wordpiece_batch(tokenizer, texts)
    if "offset_mapping" in batch_encoding:
        align = align_by_offsets(flat_spans, batch_encoding["offset_mapping"])
    else:
        align = get_alignment(flat_spans, wordpieces.strings, tokenizer.all_special_tokens)
    wordpieces, align = truncate_oversize_splits(wordpieces, align, tokenizer.model_max_length)
    if is_train:
        model_output, backprop_chunks = _train_sorted(model, wordpieces, budget)
    else:
        model_output, backprop_chunks = _predict_sorted(model, wordpieces, budget), None
    output = FullTransformerBatch(spans=nested_spans, wordpieces=wordpieces, model_output=model_output, align=align)
    # Split per Doc now, by arithmetic: the stock split (on first use of ``doc_data``) builds a
    # Token -> position dict over every token of the batch, ~10% of a tiny pipeline's time.
    output.cached_doc_data = split_by_doc(output)

    def backprop(d_output):
        if backprop_chunks is None:
            raise ValueError("a prediction pass (is_train=False) has no backward pass")
        backprop_chunks(d_output.model_output)
        return docs

    return output, backprop


def wordpiece_batch(tokenizer, texts):
    """spacy-transformers' huggingface_tokenize + WordpieceBatch.from_batch_encoding, with the
    wordpiece strings of a fast tokenizer taken from its encodings (already built in Rust) instead
    of one Python id-to-token lookup per wordpiece."""
    from spacy_transformers.data_classes import WordpieceBatch
    from spacy_transformers.layers.transformer_model import huggingface_tokenize
    from transformers import PreTrainedTokenizerFast

    if not isinstance(tokenizer, PreTrainedTokenizerFast):
        batch_encoding = huggingface_tokenize(tokenizer, texts)
        return batch_encoding, WordpieceBatch.from_batch_encoding(batch_encoding)
    batch_encoding = tokenizer(texts, add_special_tokens=True, return_attention_mask=True,
                               return_offsets_mapping=True, return_tensors="np", return_token_type_ids=None,
                               padding="longest")
    attention_mask = batch_encoding["attention_mask"].astype("float32")
    token_type_ids = batch_encoding.get("token_type_ids")
    wordpieces = WordpieceBatch(
        strings=[encoding.tokens for encoding in batch_encoding.encodings],
        input_ids=batch_encoding["input_ids"],
        attention_mask=attention_mask,
        lengths=attention_mask.sum(axis=1).astype(int).tolist(),
        token_type_ids=token_type_ids,
    )
    return batch_encoding, wordpieces


def _predict_sorted(model, wordpieces, budget: int):
    """Run the encoder on length-sorted row chunks; reassemble outputs in the original row order
    and padding."""
    import torch

    hf_model = model.transformer
    outputs = _Reassembled(wordpieces)
    was_training = hf_model.training
    hf_model.eval()
    try:
        # The HF model called directly under inference_mode, as one would call it by hand: the
        # thinc shim's per-call mode switches, no_grad and autocast contexts cost ~3% on a tiny
        # encoder. Mixed precision keeps the shim's autocast.
        with torch.inference_mode():
            for rows, length in _sorted_row_chunks(wordpieces, budget):
                outputs.add(_run_chunk(model, wordpieces, rows, length), torch.as_tensor(rows, dtype=torch.long), length)
    finally:
        hf_model.train(was_training)
    return outputs.model_output()


def _train_sorted(model, wordpieces, budget: int):
    """The encoder's training pass on length-sorted row chunks; returns the outputs in the original
    row order and padding, and the backward pass, which hands each chunk its rows of the gradient.

    The chunks are one graph of one update, as the stock pass's single padded call is: their word
    embeddings are looked up in one call, their forwards run in one autocast context (each weight
    is cast to bfloat16 once, not once a chunk) and their gradients flow back in one backward. A
    backward per chunk computed a dense gradient of the whole embedding matrix per chunk (a
    (vocabulary, width) fill and sum each time) and cast every weight once per chunk: it took 1.27x
    this pass's time on the same 8 updates of configs/release_multitask.cfg (one torch thread, one
    process, interleaved, 2026-12-06). The gradients are the per-chunk ones summed in another
    order (the same in float32; in bfloat16 a weight's chunk gradients are summed in bfloat16
    before the cast back).
    """
    import torch
    from thinc.api import xp2torch

    from .precision import training_autocast

    hf_model = model.transformer
    hf_model.train()  # as thinc's PyTorchShim does before a training call
    device = hf_model.device
    chunks = [(torch.as_tensor(rows, dtype=torch.long, device=device), length)
              for rows, length in _sorted_row_chunks(wordpieces, budget)]
    input_ids = xp2torch(wordpieces.input_ids, device=device)
    attention_mask = xp2torch(wordpieces.attention_mask, device=device)
    token_type_ids = None if wordpieces.token_type_ids is None else xp2torch(wordpieces.token_type_ids, device=device)
    outputs, hidden = _Reassembled(wordpieces), []
    with training_autocast(model.attrs.get("train_precision", "float32"), hf_model):
        ids = torch.cat([input_ids[rows, :length].reshape(-1) for rows, length in chunks])
        embedded = hf_model.get_input_embeddings()(ids).split([len(rows) * length for rows, length in chunks])
        for (rows, length), embeds in zip(chunks, embedded):
            inputs = {"inputs_embeds": embeds.view(len(rows), length, -1), "attention_mask": attention_mask[rows, :length]}
            if token_type_ids is not None:
                inputs["token_type_ids"] = token_type_ids[rows, :length]
            out = hf_model(**inputs)
            with torch.no_grad():  # the copy only carries values forward; gradients go to each chunk's output
                outputs.add(out, rows, length)
            hidden.append(out.last_hidden_state)

    def backprop(d_model_output) -> None:
        # As spacy-transformers' HF wrapper: the one gradient is of last_hidden_state.
        (d_hidden,) = d_model_output.values()
        torch.autograd.backward(hidden, [d_hidden[rows.to(d_hidden.device), :length] for rows, length in chunks])

    return outputs.model_output(), backprop


def _sorted_row_chunks(wordpieces, budget: int):
    """(row indices, their longest length) of each chunk of :func:`length_sorted_chunks`."""
    lengths = numpy.asarray(wordpieces.attention_mask).sum(axis=1).astype(numpy.int64)
    for rows in length_sorted_chunks(lengths, budget):
        yield rows, max(int(lengths[rows].max()), 1)


class _Reassembled:
    """Chunks' encoder outputs put back into the batch's row order and padding."""

    def __init__(self, wordpieces):
        self.n_rows, self.width = wordpieces.input_ids.shape
        self.parts: dict = {}
        self.output_type = None

    def add(self, out, index, length: int) -> None:
        self.output_type = type(out)
        _scatter(self.parts, out, index, length, self.n_rows, self.width)

    def model_output(self):
        fields = {key: tuple(parts) if key == "hidden_states" else parts[0] for key, parts in self.parts.items()}
        return self.output_type(**fields)


def _chunk(wordpieces, rows, length: int):
    """Rows ``rows`` of a WordpieceBatch, cut to ``length`` positions."""
    from spacy_transformers.data_classes import WordpieceBatch

    return WordpieceBatch(
        strings=[wordpieces.strings[i] for i in rows],
        input_ids=wordpieces.input_ids[rows, :length],
        attention_mask=wordpieces.attention_mask[rows, :length],
        lengths=[wordpieces.lengths[i] for i in rows],
        token_type_ids=None if wordpieces.token_type_ids is None else wordpieces.token_type_ids[rows, :length],
    )


def _run_chunk(model, wordpieces, rows, length: int):
    from thinc.api import xp2torch

    chunk = _chunk(wordpieces, rows, length)
    if model.attrs.get("mixed_precision"):
        return model.layers[0].predict(chunk)  # the HF wrapper, with its autocast
    hf_model = model.transformer
    inputs = {"input_ids": xp2torch(chunk.input_ids, device=hf_model.device),
              "attention_mask": xp2torch(chunk.attention_mask, device=hf_model.device)}
    if chunk.token_type_ids is not None:
        inputs["token_type_ids"] = xp2torch(chunk.token_type_ids, device=hf_model.device)
    return hf_model(**inputs)


def _scatter(assembled: dict, out, index, length: int, n_rows: int, width: int) -> None:
    """Write one chunk's outputs into the full-batch outputs at rows ``index``."""
    import torch

    for key, value in out.items():
        parts = value if isinstance(value, tuple) else (value,)
        targets = assembled.setdefault(key, [None] * len(parts))
        by_position = key in _PER_WORDPIECE
        for i, part in enumerate(parts):
            if part.dtype == torch.bfloat16:  # a bfloat16 training pass's output (BERT's pooler): numpy has none
                part = part.float()
            if targets[i] is None:
                # Positions past a chunk's longest row stay zero (padding: never read).
                shape = (n_rows, width, *part.shape[2:]) if by_position else (n_rows, *part.shape[1:])
                targets[i] = part.new_zeros(shape)
            if by_position:
                targets[i][index, :length] = part
            else:  # one vector per window (e.g. BERT's pooler_output)
                targets[i][index] = part


def split_by_doc(batch) -> list:
    """``FullTransformerBatch.split_by_doc`` (one ``TransformerData`` per Doc, the same slices of the
    same arrays) without its Token -> position dictionary: a Doc's tokens sit in the batch's
    alignment at the Doc's offset (the tokens of the Docs before it) plus the token index."""
    from spacy_transformers.data_classes import TransformerData
    from thinc.api import torch2xp
    from transformers.file_utils import ModelOutput

    import torch

    rows = batch.model_output.last_hidden_state.shape[0]
    outputs_xp = {}
    for key, value in batch.model_output.items():  # as the stock split converts them
        if isinstance(value, torch.Tensor):
            outputs_xp[key] = torch2xp(value)
        elif isinstance(value, tuple) and all(isinstance(t, torch.Tensor) and t.shape[0] == rows for t in value):
            outputs_xp[key] = [torch2xp(t) for t in value]
    doc_offsets, next_offset = {}, 0
    for doc_spans in batch.spans:  # the stock order: Docs by their first span, each counted once
        for span in doc_spans:
            if id(span.doc) not in doc_offsets:
                doc_offsets[id(span.doc)] = next_offset
                next_offset += len(span.doc)
    result, start, prev_wordpieces = [], 0, 0
    for doc_spans in batch.spans:
        if len(doc_spans) == 0 or len(doc_spans[0]) == 0:
            result.append(TransformerData.empty())
            continue
        offset = doc_offsets[id(doc_spans[0].doc)]
        end = start + len(doc_spans)
        doc_wordpieces = batch.wordpieces[start:end]
        doc_align = batch.align[offset + doc_spans[0].start:offset + doc_spans[-1].end]
        doc_align.data = doc_align.data - prev_wordpieces
        model_output = ModelOutput()
        for key, value in outputs_xp.items():
            model_output[key] = [t[start:end] for t in value] if isinstance(value, list) else value[start:end]
        result.append(TransformerData(wordpieces=doc_wordpieces, model_output=model_output, align=doc_align))
        prev_wordpieces += doc_wordpieces.input_ids.size
        start = end
    return result


def align_by_offsets(spans, offset_mapping):
    """spacy-transformers' ``get_alignment_via_offset_mapping`` (for each token of the spans' Docs, the
    flat indices of the wordpieces whose characters it covers, sorted), computed with numpy over
    the whole batch instead of one Python object per token and per wordpiece.

    As there, a character maps to the last token starting at or before it whose text, plus the one
    character after it, covers it; a wordpiece goes to every token one of its characters maps to;
    tokens are numbered Doc by Doc (in order of first appearance), every token of each Doc."""
    from spacy.attrs import IDX, LENGTH
    from thinc.types import Ragged

    offset_mapping = numpy.asarray(offset_mapping, dtype=numpy.int64)
    if len(spans) != len(offset_mapping):
        raise ValueError("Cannot align batches of different sizes.")
    n_rows = len(spans)
    width = offset_mapping.shape[1] if offset_mapping.ndim == 3 else 0
    doc_offsets, doc_arrays, n_tokens = {}, {}, 0
    for span in spans:
        if id(span.doc) not in doc_offsets:
            doc_offsets[id(span.doc)] = n_tokens
            doc_arrays[id(span.doc)] = span.doc.to_array([IDX, LENGTH]).reshape(-1, 2).astype(numpy.int64)
            n_tokens += len(span.doc)
    # Every span's tokens, concatenated: character starts relative to the span, shifted so that all
    # rows share one sorted axis (row r occupies [row_base[r], row_base[r] + len(span.text) + 1)).
    positions, starts, ends, row_base, row_chars, base = [], [], [], numpy.zeros(n_rows, numpy.int64), numpy.zeros(n_rows, numpy.int64), 0
    for row, span in enumerate(spans):
        if len(span) == 0:
            continue
        arrays = doc_arrays[id(span.doc)][span.start:span.end]
        relative = arrays[:, 0] - arrays[0, 0]
        chars = int(relative[-1] + arrays[-1, 1]) + 1  # len(span.text) + 1
        positions.append(doc_offsets[id(span.doc)] + numpy.arange(span.start, span.end))
        starts.append(base + relative)
        ends.append(base + relative + arrays[:, 1] + 1)  # exclusive: the token and the character after it
        row_base[row], row_chars[row] = base, chars
        base += chars
    if not positions or width == 0:
        return Ragged(numpy.zeros(0, dtype="i"), numpy.zeros(n_tokens, dtype="i"))
    positions, starts, ends = numpy.concatenate(positions), numpy.concatenate(starts), numpy.concatenate(ends)
    # One entry per character of every wordpiece.
    wp_start = offset_mapping[:, :, 0].reshape(-1)
    wp_end = offset_mapping[:, :, 1].reshape(-1)
    counts = numpy.maximum(wp_end - wp_start, 0)
    wordpiece = numpy.repeat(numpy.arange(n_rows * width), counts)
    first = numpy.cumsum(counts) - counts
    char = numpy.repeat(wp_start, counts) + (numpy.arange(int(counts.sum())) - numpy.repeat(first, counts))
    row = wordpiece // width
    inside = (char >= 0) & (char < row_chars[row])
    wordpiece, char = wordpiece[inside], row_base[row[inside]] + char[inside]
    token = numpy.searchsorted(starts, char, side="right") - 1
    covered = (token >= 0) & (char < ends[numpy.maximum(token, 0)])
    pairs = numpy.unique(positions[token[covered]] * (n_rows * width) + wordpiece[covered])
    owner = pairs // (n_rows * width)
    return Ragged((pairs % (n_rows * width)).astype("i"), numpy.bincount(owner, minlength=n_tokens).astype("i"))
