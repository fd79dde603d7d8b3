"""A pipeline's encoder weights stored in float16, read back as float32.

A spaCy pipeline keeps each HF encoder inside a thinc model file (``<component>/model``): the
``transformer`` (spacy-transformers) and every component with an encoder of its own (a
``PairEncoder``, or a listener replaced by a copy of the transformer) hold it as a shim whose bytes
carry the ``torch`` state dict. :func:`halve_pipeline` rewrites those state dicts in float16, which
halves what the wheel carries. Nothing changes at load time: the shim builds the encoder in
float32 from its config and ``load_state_dict`` copies the float16 values into it, so the loaded
pipeline computes in float32 with weights rounded to float16 (the release records what that costs
in accuracy).
"""

import shutil
from io import BytesIO
from pathlib import Path
from typing import Dict, Tuple

import srsly

__all__ = ["halve_model_bytes", "halve_pipeline"]


def _halve_state(state_bytes: bytes) -> bytes:
    import torch

    state = torch.load(BytesIO(state_bytes), map_location="cpu")
    halved = {name: (t.half() if t.is_floating_point() else t) for name, t in state.items()}
    out = BytesIO()
    torch.save(halved, out)
    return out.getvalue()


def halve_model_bytes(model_bytes: bytes) -> Tuple[bytes, int]:
    """A thinc model's bytes with every HF shim's weights in float16, and how many shims changed."""
    msg = srsly.msgpack_loads(model_bytes)
    changed = 0
    for node_shims in msg.get("shims", []):
        for i, shim_bytes in enumerate(node_shims):
            try:
                shim = srsly.msgpack_loads(shim_bytes)
            except ValueError:
                continue  # not a msgpack shim (another kind of torch wrapper): left as it is
            if isinstance(shim, dict) and shim.get("state"):
                shim["state"] = _halve_state(shim["state"])
                node_shims[i] = srsly.msgpack_dumps(shim)
                changed += 1
    return srsly.msgpack_dumps(msg), changed


def halve_pipeline(pipeline_dir: Path, output_dir: Path, overwrite: bool = False) -> Dict[str, Tuple[int, int]]:
    """Copy the pipeline at ``pipeline_dir`` to ``output_dir`` with its encoders' weights in
    float16. Returns ``{component: (bytes before, bytes after)}`` for each model file changed.
    An existing ``output_dir`` is an error unless ``overwrite`` and it is a saved pipeline (an
    earlier copy: a rerun replaces it; any other directory is never removed)."""
    pipeline_dir, output_dir = Path(pipeline_dir), Path(output_dir)
    if not (pipeline_dir / "config.cfg").is_file():
        raise FileNotFoundError(f"{pipeline_dir} is not a saved spaCy pipeline (no config.cfg)")
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
        after, changed = halve_model_bytes(before)
        if changed:
            model_file.write_bytes(after)
            sizes[model_file.parent.name] = (len(before), len(after))
    return sizes
