"""Write pretrained models as Hugging Face directories that spacy-transformers loads by path."""

import json
import shutil
from pathlib import Path

__all__ = ["export_electra", "export_release", "RELEASE_DIR"]

# Beside model/: the encoder in half precision, for distribution.
RELEASE_DIR = "release"
WEIGHTS_FILE = "model.safetensors"


def export_electra(model, tokenizer, output_dir: Path, settings) -> Path:
    """Save the discriminator (the encoder to fine-tune) to ``output_dir/model`` and the generator
    to ``output_dir/generator`` (kept for continued pretraining), each with the tokenizer."""
    output_dir = Path(output_dir)
    # spacy-transformers reads model_max_length to cut over-long windows to what the model takes.
    tokenizer.model_max_length = model.discriminator.config.max_position_embeddings
    encoder_dir = output_dir / "model"
    for part, target in ((model.discriminator, encoder_dir), (model.generator, output_dir / "generator")):
        part.save_pretrained(target, safe_serialization=True)
        tokenizer.save_pretrained(target)
    (encoder_dir / "pretraining_settings.json").write_text(
        json.dumps(settings.to_dict(), indent=2, default=str), encoding="utf8"
    )
    return encoder_dir


def export_release(encoder_dir: Path, output_dir: Path, dtype: str = "float16") -> Path:
    """Copy the exported HF directory ``encoder_dir`` to ``output_dir`` with every floating-point
    tensor of its ``model.safetensors`` cast to ``dtype`` ("float16" or "bfloat16"); config and
    tokenizer files are copied, the config's ``torch_dtype`` set. Loads with
    ``AutoModel.from_pretrained(output_dir)`` like the float32 directory, at half the size.
    Works for any architecture exported here (ELECTRA, ALBERT)."""
    import torch
    from safetensors.torch import load_file, save_file

    encoder_dir, output_dir = Path(encoder_dir), Path(output_dir)
    weights = encoder_dir / WEIGHTS_FILE
    if not weights.is_file():
        raise FileNotFoundError(f"No {WEIGHTS_FILE} in {encoder_dir} to export for release")
    target = getattr(torch, dtype, None)
    if not isinstance(target, torch.dtype) or not target.is_floating_point or target.itemsize != 2:
        raise ValueError(f"Release dtype {dtype!r}: expected 'float16' or 'bfloat16'")
    output_dir.mkdir(parents=True, exist_ok=True)
    tensors = {
        name: (t.to(target) if t.is_floating_point() else t).contiguous()
        for name, t in load_file(str(weights)).items()
    }
    save_file(tensors, str(output_dir / WEIGHTS_FILE), metadata={"format": "pt"})
    for item in encoder_dir.iterdir():
        if item.is_file() and item.name not in (WEIGHTS_FILE, "config.json"):
            shutil.copy2(item, output_dir / item.name)
    config = json.loads((encoder_dir / "config.json").read_text(encoding="utf8"))
    config["torch_dtype"] = dtype
    (output_dir / "config.json").write_text(json.dumps(config, indent=2), encoding="utf8")
    return output_dir
