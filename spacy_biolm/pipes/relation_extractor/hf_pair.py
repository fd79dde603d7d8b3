"""The encoder of the anonymised mode: an HF encoder + tokenizer + linear head, as a torch module
whose serialised form carries everything (config, tokenizer files, weights), so a saved pipeline
loads without the original encoder directory. Imported lazily (torch, transformers)."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any, Dict

import srsly
import torch
from torch import nn

__all__ = ["PairClassifier", "load_pair_classifier", "serialize_pair_classifier", "deserialize_pair_classifier"]


class PairClassifier(nn.Module):
    """HF encoder; the first token's last hidden state -> dropout -> linear layer -> logits.

    The first token is ``[CLS]`` for BERT/ELECTRA tokenizers: sentence classification as in
    BioBERT and Bio-ELECTRA. ``tokenizer`` is kept on the module so it travels with the weights.
    """

    def __init__(self, encoder: nn.Module, tokenizer: Any, n_labels: int, dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.tokenizer = tokenizer
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, n_labels)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        kwargs = {"attention_mask": attention_mask}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        hidden = self.encoder(input_ids, **kwargs).last_hidden_state
        return self.head(self.dropout(hidden[:, 0]))


def load_pair_classifier(name: str, n_labels: int, dropout: float) -> PairClassifier:
    """Build a classifier on the HF encoder ``name`` (a local directory or a hub name)."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(name))
    encoder = AutoModel.from_pretrained(str(name))
    return PairClassifier(encoder, tokenizer, n_labels, dropout)


def serialize_pair_classifier(module: PairClassifier) -> bytes:
    """Config, tokenizer files and weights in one msgpack blob."""
    with tempfile.TemporaryDirectory() as tmp:
        module.tokenizer.save_pretrained(tmp)
        tokenizer_files = {p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()}
    weights = io.BytesIO()
    torch.save(module.state_dict(), weights)
    msg: Dict[str, Any] = {
        "encoder_config": module.encoder.config.to_dict(),
        "tokenizer_files": tokenizer_files,
        "n_labels": module.head.out_features,
        "dropout": module.dropout.p,
        "weights": weights.getvalue(),
    }
    return srsly.msgpack_dumps(msg)


def deserialize_pair_classifier(_placeholder: Any, data: bytes, device: "torch.device") -> PairClassifier:
    """Rebuild a ``PairClassifier`` from ``serialize_pair_classifier`` output (no encoder directory needed)."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    msg = srsly.msgpack_loads(data)
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in msg["tokenizer_files"].items():
            (Path(tmp) / name).write_bytes(content)
        tokenizer = AutoTokenizer.from_pretrained(tmp)
    config_dict = dict(msg["encoder_config"])
    model_type = config_dict.pop("model_type")
    config = AutoConfig.for_model(model_type, **config_dict)
    module = PairClassifier(AutoModel.from_config(config), tokenizer, msg["n_labels"], msg["dropout"])
    module.load_state_dict(torch.load(io.BytesIO(msg["weights"]), map_location=device))
    return module.to(device)
