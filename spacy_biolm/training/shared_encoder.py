"""Task configs that train a head on another pipeline's encoder, frozen, so that one encoder can
serve every component of a release (`configs/release_one_encoder.cfg`).

``share_encoder(config, source)`` takes a task config (configs/ner.cfg, hoc.cfg,
relations_fast.cfg: a ``transformer`` and components listening to it) and returns it with its
``transformer`` sourced from the trained pipeline ``source``, frozen and annotating: the encoder is
not updated, so every head trained this way reads the very vectors the shipped pipeline computes
once per token. Each listener is standardized (``spacy-biolm.Standardized.v1``): a frozen
encoder's raw vectors are too ill-conditioned for a head to learn from. Optionally each listener
gets a small trainable adapter (residual maxout window layers) between the frozen vectors and its
head, the task-specific capacity the frozen encoder no longer gives."""

import copy
from pathlib import Path
from typing import Iterator, List, Tuple, Union

from thinc.api import Config

__all__ = ["share_encoder", "encoder_width", "pipeline_encoders", "LISTENER"]

LISTENER = "spacy-transformers.TransformerListener.v1"
ADAPTER = "spacy.MaxoutWindowEncoder.v2"
STANDARDIZED = "spacy-biolm.Standardized.v1"


def _listener_slots(block: dict) -> Iterator[Tuple[dict, str]]:
    """(parent, key) of every TransformerListener block under ``block``."""
    for key, value in block.items():
        if isinstance(value, dict):
            if value.get("@architectures") == LISTENER:
                yield block, key
            else:
                yield from _listener_slots(value)


def encoder_width(source: Union[str, Path]) -> int:
    """Hidden size of the encoder of the trained pipeline ``source`` (what its listeners output),
    read from its transformer's HF config."""
    import spacy

    nlp = spacy.load(source)
    if "transformer" not in nlp.pipe_names:
        raise ValueError(f"{source}: the pipeline has no `transformer` to share")
    return int(nlp.get_pipe("transformer").model.transformer.config.hidden_size)


def share_encoder(config: Config, source: Union[str, Path], adapter_depth: int = 0, adapter_width: int = 0) -> Config:
    """``config`` with its ``transformer`` sourced from the pipeline ``source``, frozen and annotating,
    and every listener wrapped in a standardizer.

    With ``adapter_depth`` > 0 every listener is followed by that many residual maxout layers of
    ``adapter_width`` (the encoder's hidden size; window 1: each layer reads a token with its two
    neighbours, so a layer costs about 3 x 3 x width^2 multiply-adds per token). Raises ValueError when the config has no
    ``transformer`` or nothing listens to it."""
    config = Config(copy.deepcopy(dict(config)))
    components = config.get("components", {})
    if "transformer" not in components:
        raise ValueError("the config has no [components.transformer] to replace with a shared encoder")
    listeners: List[Tuple[dict, str]] = [slot for name, block in components.items() if name != "transformer"
                                         for slot in _listener_slots(block)]
    if not listeners:
        raise ValueError(f"no component of the config listens to the transformer ({LISTENER})")
    if adapter_depth < 0:
        raise ValueError(f"adapter_depth must be 0 or more, got {adapter_depth}")
    if adapter_depth and adapter_width <= 0:
        raise ValueError("an adapter needs adapter_width: the shared encoder's hidden size")
    components["transformer"] = {"source": str(source)}
    training = config["training"]
    for key in ("frozen_components", "annotating_components"):
        # Frozen: the encoder's weights stay the source's. Annotating: it sets doc._.trf_data on the
        # training batches, which is what the listeners of a frozen transformer read.
        training[key] = sorted(set(training.get(key) or []) | {"transformer"})
    for parent, key in listeners:
        listener = parent[key]
        listener["grad_factor"] = 0.0  # nothing flows back into a frozen encoder
        parent[key] = {"@architectures": STANDARDIZED, "tok2vec": listener}
        if adapter_depth:
            parent[key] = {
                "@layers": "chain.v1",
                "*": {
                    "listener": parent[key],
                    "adapter": {"@architectures": ADAPTER, "width": adapter_width, "window_size": 1,
                                "maxout_pieces": 3, "depth": adapter_depth},
                },
            }
    return config


def pipeline_encoders(nlp, include_disabled: bool = False) -> list:
    """The distinct HF encoder modules (``transformers.PreTrainedModel``) the pipeline's enabled
    components run (with ``include_disabled``, its disabled ones' too): one for a release on one
    shared encoder, one per task otherwise."""
    from transformers import PreTrainedModel

    found = {}
    for _, component in (nlp.components if include_disabled else nlp.pipeline):
        model = getattr(component, "model", None)
        for node in model.walk() if model is not None else []:
            for shim in node.shims:
                torch_model = getattr(shim, "_model", None)
                for module in torch_model.modules() if torch_model is not None else []:
                    if isinstance(module, PreTrainedModel):
                        found.setdefault(id(module), module)
    inner = {id(sub) for module in found.values() for sub in list(module.modules())[1:]}
    return [module for key, module in found.items() if key not in inner]  # a task model's own HF backbone is its encoder
