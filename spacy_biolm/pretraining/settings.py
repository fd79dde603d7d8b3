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

__all__ = ["PathSettings", "SystemSettings", "TrainingSettings", "PretrainSettings", "load_settings"]


@dataclass
class PathSettings:
    # One or more text files in the pretraining text format (see text.py).
    text: Union[str, List[str]] = ""
    # HF tokenizer directory written by `spacy-biolm vocab`.
    vocab: str = ""
    # Continued pretraining (Bio-ELECTRA++): an earlier run's output directory. Its exported
    # weights, shapes and vocabulary are used; [model] only picks the architecture.
    init: str = ""

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


@dataclass
class CorpusSettings:
    max_seq_length: int = 128


@dataclass
class TrainingSettings:
    max_steps: int = 1000
    batch_size: int = 32
    grad_accumulation: int = 1
    learning_rate: float = 5e-4
    warmup_steps: int = 100
    weight_decay: float = 0.01
    adam_eps: float = 1e-6
    max_grad_norm: float = 1.0
    log_every: int = 10
    checkpoint_every: int = 200
    # bf16 autocast on GPU; ignored on CPU.
    bf16: bool = True


@dataclass
class PretrainSettings:
    paths: PathSettings = field(default_factory=PathSettings)
    system: SystemSettings = field(default_factory=SystemSettings)
    corpus: CorpusSettings = field(default_factory=CorpusSettings)
    model: ModelSize = field(default_factory=ModelSize)
    objective: Any = field(default_factory=ObjectiveSettings)
    training: TrainingSettings = field(default_factory=TrainingSettings)
    config: Optional[Config] = None

    def to_dict(self) -> Dict[str, Any]:
        return {f.name: vars(getattr(self, f.name)) for f in fields(self) if f.name != "config"}


def _section(cls, values: Dict[str, Any], name: str):
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"Unknown setting(s) in [{name}]: {', '.join(unknown)}. Known: {', '.join(sorted(known))}"
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
    return PretrainSettings(**values, config=config)
