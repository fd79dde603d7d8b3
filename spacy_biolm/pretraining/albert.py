"""ALBERT pretraining (Lan et al. 2020), as used for BioALBERT: masked LM + sentence-order prediction.

ALBERT shrinks BERT in two ways: the vocabulary embeddings are factorised (``vocab x E`` then
``E x H`` with ``E << H``) and all transformer layers share one set of weights. Its second
objective, sentence-order prediction (SOP), shows the model two consecutive text segments of one
document, in order or swapped, and asks which it is.

The pieces here are pure functions plus one module so the pretraining loop can drive them:

1. :func:`pack_sentence_pairs` turns tokenised documents into ``[CLS] A [SEP] B [SEP]`` rows and
   the length of A (what the corpus stores);
2. :func:`sentence_order_batch` swaps a random half of a batch to ``[CLS] B [SEP] A [SEP]`` and
   builds token types and SOP labels;
3. :class:`AlbertMLMSOP` masks (:func:`mask_for_bert_mlm`, BERT's 80/10/10) and computes both
   losses, projecting onto the vocabulary at masked positions only;
4. :func:`export_albert` writes an HF ALBERT directory that spaCy-transformers loads by path.
"""

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers import AlbertConfig, AlbertForPreTraining

from .electra import MaskingSettings, ModelSize, mask_for_mlm

__all__ = [
    "AlbertObjectiveSettings",
    "PairPackingStats",
    "make_albert_config",
    "pack_sentence_pairs",
    "sentence_order_batch",
    "mask_for_bert_mlm",
    "AlbertMLMSOP",
    "export_albert",
]


@dataclass
class AlbertObjectiveSettings(MaskingSettings):
    """The ``[objective]`` section for ALBERT."""

    # Of the selected positions, BERT/ALBERT replace 10% by a random token and keep 10% unchanged;
    # the remaining 80% become [MASK].
    replace_prob: float = 0.1
    keep_prob: float = 0.1
    # Weight of the sentence-order loss next to the MLM loss (ALBERT adds them unweighted).
    sop_weight: float = 1.0


@dataclass
class PairPackingStats:
    """What :func:`pack_sentence_pairs` made of its input; pass one in and read it afterwards.

    ``input_tokens == pair_tokens + unpairable_tokens`` always holds: every token ends up in a
    pair or is counted here as unpairable (only documents of a single token are).
    """

    # Documents read, and rows ([CLS] A [SEP] B [SEP]) made of them.
    documents: int = 0
    pairs: int = 0
    # Text tokens read (specials not counted).
    input_tokens: int = 0
    # Text tokens written into pairs (specials not counted).
    pair_tokens: int = 0
    # Documents with a single token: one token cannot be split into two segments.
    unpairable_documents: int = 0
    unpairable_tokens: int = 0


def make_albert_config(size: ModelSize, vocab_size: int, pad_id: int, num_hidden_groups: int = 1) -> AlbertConfig:
    """An ALBERT config of ``size``: ``embedding_size`` is the factorised embedding width,
    ``num_layers`` layers run ``num_hidden_groups`` distinct weight sets (1 = all layers shared,
    as ALBERT). ``generator_fraction`` of :class:`ModelSize` does not apply to ALBERT.

    Attention is ``size.attention``: PyTorch's scaled-dot-product kernel ("sdpa") or eager.
    """
    if size.hidden_size % size.num_heads:
        raise ValueError(f"model.hidden_size {size.hidden_size} is not divisible by num_heads {size.num_heads}")
    if not 1 <= num_hidden_groups <= size.num_layers or size.num_layers % num_hidden_groups:
        # HF assigns layer i to group int(i / (layers / groups)): uneven groups would be unequal.
        raise ValueError(
            f"model.num_hidden_groups must divide num_layers ({size.num_layers}); got {num_hidden_groups}"
        )
    return AlbertConfig(
        vocab_size=vocab_size,
        embedding_size=size.embedding_size,
        hidden_size=size.hidden_size,
        num_hidden_layers=size.num_layers,
        num_hidden_groups=num_hidden_groups,
        inner_group_num=1,
        num_attention_heads=size.num_heads,
        intermediate_size=size.intermediate_size,
        max_position_embeddings=size.max_position_embeddings,
        hidden_dropout_prob=size.dropout,
        attention_probs_dropout_prob=size.dropout,
        type_vocab_size=2,
        pad_token_id=pad_id,
        attn_implementation=size.attention,
    )


def pack_sentence_pairs(
    docs_ids: Iterable[Sequence[Sequence[int]]],
    max_seq_length: int,
    cls_id: int,
    sep_id: int,
    seed: int,
    stats: Optional[PairPackingStats] = None,
) -> Iterator[Tuple[List[int], int]]:
    """Pack tokenised documents (lists of sentence id lists) into ALBERT segment pairs.

    Consecutive sentences of one document fill a chunk of at most ``max_seq_length - 3`` ids; the
    chunk is cut at a random sentence boundary into A and B (contiguous, A first), or, when it
    holds one sentence (piece), at a random token inside it. Yields ``([CLS] A [SEP] B [SEP],
    len(A))``; the caller swaps A and B for SOP (:func:`sentence_order_batch`).

    Nothing is dropped silently: a sentence longer than a chunk is cut into pieces; documents
    never share a row; a chunk that would hold a single token (a 1-token sentence next to a full
    chunk) borrows a token from its neighbour so that it can still be split. Only a document of one
    token cannot form a pair: it yields nothing and is counted in ``stats``
    (:class:`PairPackingStats`). Unlike ALBERT's reference recipe, no chunk is shortened at
    random (``short_seq_prob``); rows are as full as the sentences allow.

    Deterministic for a given ``seed`` and input.
    """
    room = max_seq_length - 3
    if room < 4:
        # A chunk next to a 1-token chunk holds >= room tokens and may lend two (see
        # _lend_to_single_tokens); room >= 4 leaves it >= 2, so it still splits into a pair.
        raise ValueError(f"max_seq_length must be at least 7 for sentence pairs; got {max_seq_length}")
    stats = stats if stats is not None else PairPackingStats()
    rng = random.Random(seed)

    def as_pair(segments: List[List[int]]) -> Tuple[List[int], int]:
        if len(segments) > 1:
            cut = rng.randint(1, len(segments) - 1)
            first = [t for s in segments[:cut] for t in s]
            second = [t for s in segments[cut:] for t in s]
        else:
            cut = rng.randint(1, len(segments[0]) - 1)
            first, second = segments[0][:cut], segments[0][cut:]
        stats.pairs += 1
        stats.pair_tokens += len(first) + len(second)
        return [cls_id, *first, sep_id, *second, sep_id], len(first)

    for sentences in docs_ids:
        stats.documents += 1
        chunks: List[List[List[int]]] = []
        current: List[List[int]] = []
        n_current = 0
        for sentence in sentences:
            ids = list(sentence)
            stats.input_tokens += len(ids)
            for start in range(0, len(ids), room):
                piece = ids[start : start + room]
                if n_current + len(piece) > room and current:
                    chunks.append(current)
                    current, n_current = [], 0
                current.append(piece)
                n_current += len(piece)
        if current:
            chunks.append(current)
        n_doc = sum(len(p) for chunk in chunks for p in chunk)
        if n_doc == 1:
            stats.unpairable_documents += 1
            stats.unpairable_tokens += 1
            continue
        _lend_to_single_tokens(chunks)
        for chunk in chunks:
            yield as_pair(chunk)


def _lend_to_single_tokens(chunks: List[List[List[int]]]) -> None:
    """Give every 1-token chunk of a document (of >= 2 tokens) a second token from a neighbour:
    the first token of the next chunk, or for the last chunk the last token of the previous one.

    A 1-token chunk only arises next to full ones: the chunk before it was closed because even
    one more token did not fit (it holds ``room`` tokens), the chunk after it was opened by a
    piece that did not fit next to the single token (it holds ``room`` tokens). So a neighbour
    holds >= room tokens and lends at most two, one to each side.
    """
    for i, chunk in enumerate(chunks):
        if sum(len(segment) for segment in chunk) != 1:
            continue
        if i + 1 < len(chunks):
            lender = chunks[i + 1]
            chunk.append([lender[0].pop(0)])
            if not lender[0]:
                lender.pop(0)
        else:
            lender = chunks[i - 1]
            chunk.insert(0, [lender[-1].pop()])
            if not lender[-1]:
                lender.pop()


def sentence_order_batch(
    ids: np.ndarray, len_a: np.ndarray, pad_id: int, swap: np.ndarray
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Build a sentence-order batch from packed rows ``[CLS] A [SEP] B [SEP] <pad>...``.

    ``ids`` is ``[batch, length]`` (right-padded with ``pad_id``, which must not occur inside a
    row), ``len_a`` the length of A per row, ``swap`` a boolean per row (draw it with p=0.5).
    Swapped rows become ``[CLS] B [SEP] A [SEP]``. Returns torch LongTensors ``(input_ids,
    token_type_ids, sop_labels)``: token type 0 for ``[CLS]``, the first segment and its
    ``[SEP]``, 1 for the second segment and the final ``[SEP]``, 0 on padding; label 1 = swapped,
    0 = in order (the label convention of HF's ``AlbertForPreTraining``).
    """
    ids = np.asarray(ids, dtype=np.int64)
    len_a = np.asarray(len_a, dtype=np.int64).reshape(-1)
    swap = np.asarray(swap, dtype=bool).reshape(-1)
    if ids.ndim != 2 or len(len_a) != len(ids) or len(swap) != len(ids):
        raise ValueError(
            f"ids must be [batch, length] with one len_a and swap per row; got ids {ids.shape}, "
            f"len_a {len_a.shape}, swap {swap.shape}"
        )
    lengths = (ids != pad_id).sum(axis=1)
    len_b = lengths - 3 - len_a
    out = ids.copy()
    token_types = np.zeros_like(ids)
    for row in range(len(ids)):
        n, a, b = int(lengths[row]), int(len_a[row]), int(len_b[row])
        if a < 1 or b < 1 or (ids[row, n:] != pad_id).any():
            raise ValueError(
                f"Row {row} is not [CLS] A [SEP] B [SEP] + padding with len(A) = {a}: "
                f"{n} non-padding ids, padding only at the end required"
            )
        first = a
        if swap[row]:
            segment_a = ids[row, 1 : 1 + a]
            segment_b = ids[row, 2 + a : 2 + a + b]
            separator = ids[row, 1 + a]
            out[row, 1 : 1 + b] = segment_b
            out[row, 1 + b] = separator
            out[row, 2 + b : 2 + b + a] = segment_a
            first = b
        token_types[row, 2 + first : n] = 1
    return (
        torch.from_numpy(out),
        torch.from_numpy(token_types),
        torch.from_numpy(swap.astype(np.int64)),
    )


def mask_for_bert_mlm(
    input_ids: torch.Tensor,
    maskable: torch.Tensor,
    mask_id: int,
    vocab_size: int,
    mask_prob: float = 0.15,
    replace_prob: float = 0.1,
    keep_prob: float = 0.1,
    generator: Optional[torch.Generator] = None,
    special_ids: Optional[Union[Sequence[int], torch.Tensor]] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """BERT/ALBERT masking: (masked input ids, boolean selection).

    Selects ``round(mask_prob * n)`` (at least one) of each row's maskable positions as
    :func:`~spacy_biolm.pretraining.electra.mask_for_mlm` does; of those, a ``keep_prob`` share
    keeps its token, a ``replace_prob`` share gets a random id drawn uniformly from the ids below
    ``vocab_size`` that are neither ``mask_id`` nor in ``special_ids`` (pass the tokenizer's
    special ids, a list or a tensor), and the rest becomes ``mask_id``.
    """
    if replace_prob < 0 or keep_prob < 0 or replace_prob + keep_prob > 1:
        raise ValueError(f"replace_prob {replace_prob} + keep_prob {keep_prob} must lie in [0, 1]")
    masked, selected = mask_for_mlm(input_ids, maskable, mask_id, mask_prob, keep_prob, generator)
    if replace_prob == 0:
        return masked, selected
    device = input_ids.device
    became_mask = selected & (masked == mask_id)
    # Conditional share among the positions mask_for_mlm did not keep.
    share = replace_prob / (1.0 - keep_prob) if keep_prob < 1 else 0.0
    replace = became_mask & (torch.rand(input_ids.shape, generator=generator, device=device) < share)
    excluded = torch.as_tensor(special_ids if special_ids is not None else [], device=device).long()
    candidates = torch.arange(vocab_size, device=device)
    candidates = candidates[~torch.isin(candidates, excluded) & (candidates != mask_id)]
    if len(candidates) == 0:
        raise ValueError("No non-special ids to draw random replacements from")
    draws = torch.randint(len(candidates), input_ids.shape, generator=generator, device=device)
    return torch.where(replace, candidates[draws], masked), selected


class AlbertMLMSOP(nn.Module):
    """HF ``AlbertForPreTraining`` trained on masked LM + sentence order, with the vocabulary
    projection run on the masked positions only (15% of tokens), not on every token."""

    def __init__(self, config: AlbertConfig):
        super().__init__()
        self.model = AlbertForPreTraining(config)

    @classmethod
    def from_exported(cls, run_dir: Path) -> "AlbertMLMSOP":
        """The model an earlier run exported to ``run_dir/model`` (with its MLM and SOP heads),
        for continued pretraining."""
        encoder_dir = Path(run_dir) / "model"
        if not (encoder_dir / "config.json").is_file():
            raise FileNotFoundError(f"Continued pretraining needs {encoder_dir} (an ALBERT pretraining output)")
        model = cls.__new__(cls)
        nn.Module.__init__(model)
        model.model = AlbertForPreTraining.from_pretrained(encoder_dir, attn_implementation="sdpa")
        return model

    def tie_embeddings(self) -> None:
        """Re-tie the MLM decoder to the word embeddings (after ``load_state_dict``)."""
        self.model.tie_weights()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor,
        maskable: torch.Tensor,
        sop_labels: torch.Tensor,
        mask_id: int,
        objective: AlbertObjectiveSettings,
        rng: Optional[torch.Generator] = None,
        special_ids: Optional[Union[Sequence[int], torch.Tensor]] = None,
    ) -> Dict[str, torch.Tensor]:
        """Mask ``input_ids`` at ``maskable`` positions (computed on the rows as fed, after any
        swap), run the encoder once, and return ``loss`` = MLM + ``sop_weight`` x SOP, the two
        losses (detached) and their accuracies."""
        masked, selected = mask_for_bert_mlm(
            input_ids,
            maskable,
            mask_id,
            self.model.config.vocab_size,
            objective.mask_prob,
            objective.replace_prob,
            objective.keep_prob,
            rng,
            special_ids,
        )
        sequence, pooled = self.model.albert(
            masked, attention_mask=attention_mask, token_type_ids=token_type_ids, return_dict=False
        )[:2]
        mlm_logits = self.model.predictions(sequence[selected])
        targets = input_ids[selected]
        mlm_loss = F.cross_entropy(mlm_logits.float(), targets)
        sop_logits = self.model.sop_classifier(pooled)
        sop_loss = F.cross_entropy(sop_logits.float(), sop_labels)
        loss = mlm_loss + objective.sop_weight * sop_loss
        with torch.no_grad():
            metrics = {
                "mlm_acc": (mlm_logits.argmax(-1) == targets).float().mean(),
                "sop_acc": (sop_logits.argmax(-1) == sop_labels).float().mean(),
            }
        return {"loss": loss, "mlm_loss": mlm_loss.detach(), "sop_loss": sop_loss.detach(), **metrics}


def export_albert(model: AlbertMLMSOP, tokenizer, output_dir: Path, settings) -> Path:
    """Save the encoder with its MLM and SOP heads (kept for continued pretraining; ``AutoModel``
    loads the encoder alone) and the SentencePiece tokenizer to ``output_dir/model``; return it.

    ``settings`` (an object with ``to_dict()``, or a dict) is written next to the weights as
    ``pretraining_settings.json``.
    """
    output_dir = Path(output_dir)
    encoder_dir = output_dir / "model"
    config = model.model.config
    # spacy-transformers reads model_max_length to cut over-long windows to what the model takes.
    tokenizer.model_max_length = config.max_position_embeddings
    model.model.save_pretrained(encoder_dir, safe_serialization=True)
    tokenizer.save_pretrained(encoder_dir)
    values = settings.to_dict() if hasattr(settings, "to_dict") else dict(settings or {})
    (encoder_dir / "pretraining_settings.json").write_text(
        json.dumps(values, indent=2, default=str), encoding="utf8"
    )
    return encoder_dir
