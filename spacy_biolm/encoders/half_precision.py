"""A pipeline's encoder weights stored in float16 (int8 for pair encoders), read back as float32.

A spaCy pipeline keeps each HF encoder inside a thinc model file (``<component>/model``): the
``transformer`` (spacy-transformers) and every component with an encoder of its own (a
``PairEncoder``, or a listener replaced by a copy of the transformer) hold it as a shim whose bytes
carry the ``torch`` state dict. :func:`halve_pipeline` rewrites those state dicts smaller, which is
what the wheel carries:

* **float16** for every encoder. Nothing changes at load time: the shim builds the encoder in
  float32 from its config and ``load_state_dict`` copies the float16 values into it.
* **int8** for the encoders of ``spacy-biolm.PairEncoder.v1`` components (the QA components):
  every matrix as int8 with a float32 scale per row (the largest absolute value of the row maps
  to 127), vectors in float16. The pair encoder's shim (:mod:`.storage_shim`) turns them back
  into float32 before loading; spacy-transformers' own ``transformer`` shim cannot, so it keeps
  float16. A pair-encoder component named in ``float16`` keeps float16 too: a component whose
  scores int8's rounding measurably moves (the answer reranker ranks by small cosine differences).

Either way the loaded pipeline computes in float32 with rounded weights; the release records what
that costs in accuracy (evaluate-qa scores the QA components as stored).
"""

import shutil
from io import BytesIO
from pathlib import Path
from typing import Dict, Iterable, Tuple

import srsly

__all__ = ["halve_model_bytes", "halve_pipeline", "int8_state", "float_state", "INT8_STORAGE"]

# The key an HF shim's serialised message carries when its state is stored in int8.
INT8_STORAGE = "spacy_biolm_int8_storage"
PAIR_ENCODER = "spacy-biolm.PairEncoder.v1"


def _halve_state(state_bytes: bytes) -> bytes:
    import torch

    state = torch.load(BytesIO(state_bytes), map_location="cpu")
    halved = {name: (t.half() if t.is_floating_point() else t) for name, t in state.items()}
    out = BytesIO()
    torch.save(halved, out)
    return out.getvalue()


def int8_state(state_bytes: bytes) -> bytes:
    """A saved state dict with each floating matrix as ``{"int8", "scale"}`` (a float32 scale per
    row) and each floating vector in float16; other tensors as they are."""
    import torch

    state = torch.load(BytesIO(state_bytes), map_location="cpu")
    packed = {}
    for name, tensor in state.items():
        if tensor.is_floating_point() and tensor.dim() == 2:
            values = tensor.float()
            scale = values.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127
            packed[name] = {"int8": (values / scale).round().clamp(-127, 127).to(torch.int8), "scale": scale}
        else:
            packed[name] = tensor.half() if tensor.is_floating_point() else tensor
    out = BytesIO()
    torch.save(packed, out)
    return out.getvalue()


def float_state(state_bytes: bytes) -> bytes:
    """The float32 state dict that :func:`int8_state` stored."""
    import torch

    packed = torch.load(BytesIO(state_bytes), map_location="cpu")
    state = {name: (value["int8"].float() * value["scale"] if isinstance(value, dict)
                    else value.float() if value.is_floating_point() else value) for name, value in packed.items()}
    out = BytesIO()
    torch.save(state, out)
    return out.getvalue()


def halve_model_bytes(model_bytes: bytes, int8: bool = False) -> Tuple[bytes, int]:
    """A thinc model's bytes with every HF shim's weights in float16 (with ``int8``, in int8 as
    :func:`int8_state` stores them: only for shims that can load it, a PairEncoder's), and how many
    shims changed."""
    msg = srsly.msgpack_loads(model_bytes)
    changed = 0
    for node_shims in msg.get("shims", []):
        for i, shim_bytes in enumerate(node_shims):
            try:
                shim = srsly.msgpack_loads(shim_bytes)
            except ValueError:
                continue  # not a msgpack shim (another kind of torch wrapper): left as it is
            if isinstance(shim, dict) and shim.get("state") and not shim.get(INT8_STORAGE):
                shim["state"] = int8_state(shim["state"]) if int8 else _halve_state(shim["state"])
                if int8:
                    shim[INT8_STORAGE] = True
                node_shims[i] = srsly.msgpack_dumps(shim)
                changed += 1
    return srsly.msgpack_dumps(msg), changed


def _pair_encoder_components(components: Dict[str, dict]) -> set:
    """The components (a config's ``[components]`` blocks) whose model holds a ``spacy-biolm.PairEncoder.v1``."""

    def has_pair_encoder(block) -> bool:
        return isinstance(block, dict) and (block.get("@architectures") == PAIR_ENCODER
                                            or any(has_pair_encoder(value) for value in block.values()))

    return {name for name, block in components.items() if has_pair_encoder(block.get("model"))}


def halve_pipeline(
    pipeline_dir: Path, output_dir: Path, overwrite: bool = False, float16: Iterable[str] = ()
) -> Dict[str, Tuple[int, int]]:
    """Copy the pipeline at ``pipeline_dir`` to ``output_dir`` with its encoders' weights in
    float16, those of its PairEncoder components in int8 except the components named in
    ``float16`` (a name the pipeline lacks is an error). Returns ``{component: (bytes before,
    bytes after)}`` for each model file changed.
    An existing ``output_dir`` is an error unless ``overwrite`` and it is a saved pipeline (an
    earlier copy: a rerun replaces it; any other directory is never removed)."""
    from spacy.util import load_config

    pipeline_dir, output_dir = Path(pipeline_dir), Path(output_dir)
    if not (pipeline_dir / "config.cfg").is_file():
        raise FileNotFoundError(f"{pipeline_dir} is not a saved spaCy pipeline (no config.cfg)")
    float16 = set(float16)
    components = load_config(pipeline_dir / "config.cfg", interpolate=False).get("components", {})
    if float16 - set(components):
        raise ValueError(f"{pipeline_dir} has no component {', '.join(sorted(float16 - set(components)))} to keep in float16 "
                         f"(its components: {', '.join(sorted(components))})")
    int8_components = _pair_encoder_components(components) - float16
    if output_dir.exists():
        if not overwrite:
            raise FileExistsError(f"{output_dir} exists; give a new directory for the float16 copy (or --overwrite)")
        if not (output_dir / "config.cfg").is_file():
            raise FileExistsError(f"{output_dir} exists and is not a saved spaCy pipeline (no config.cfg): not overwritten")
        if output_dir.resolve() == pipeline_dir.resolve():
            raise ValueError(f"{output_dir} is the pipeline being halved; give another directory")
        shutil.rmtree(output_dir)
    shutil.copytree(pipeline_dir, output_dir)
    sizes = {}
    for model_file in sorted(output_dir.glob("*/model")):
        before = model_file.read_bytes()
        after, changed = halve_model_bytes(before, int8=model_file.parent.name in int8_components)
        if changed:
            model_file.write_bytes(after)
            sizes[model_file.parent.name] = (len(before), len(after))
    return sizes
