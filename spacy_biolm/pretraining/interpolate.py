"""One encoder between two fine-tuned relatives: their weights averaged parameter by parameter.

Two encoders continued from the same checkpoint (all-MiniLM-L6-v2 as published, and the released
Bio-ELECTRA continued from it on biomedical text) stay close enough in weight space that a point
on the line between them is itself a working encoder with some of each one's strengths (the
model-soup and WiSE-FT observation). The multi-task release needs exactly that: the hallmarks
head learns on the sentence encoder only, the gene NER gains from the biomedical one.
"""

import json
import shutil
from pathlib import Path
from typing import Union

import torch
from transformers import AutoModel

from .warm_start import TOKENIZER_FILES, encoder_dir

__all__ = ["interpolate_encoders"]


def interpolate_encoders(first: Union[str, Path], second: Union[str, Path], output_dir: Path, weight: float) -> dict:
    """Write to ``output_dir`` the encoder ``(1 - weight) * first + weight * second``, in the
    architecture, config and tokenizer of ``first`` (float32). Both must be HF encoders with the
    same vocabulary and the same tensor shapes; parameters only ``first`` has (BERT's pooler) are
    kept as they are. Returns the record written to ``encoder_source.json``."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"--weight {weight}: the share of the second encoder must be between 0 and 1")
    first_dir, second_dir = encoder_dir(first), encoder_dir(second)
    # The same vocabulary gives the same ids for the same text, so each embedding row means one piece.
    if (first_dir / "vocab.txt").read_bytes() != (second_dir / "vocab.txt").read_bytes():
        raise ValueError(f"{first_dir / 'vocab.txt'} and {second_dir / 'vocab.txt'} differ: the encoders must share their vocabulary")
    model = AutoModel.from_pretrained(first_dir, torch_dtype=torch.float32)
    other = AutoModel.from_pretrained(second_dir, torch_dtype=torch.float32).state_dict()
    state = model.state_dict()
    unmatched = sorted(set(other) - set(state))
    if unmatched:
        raise ValueError(f"{second_dir}: parameters with no counterpart in {first_dir}: {unmatched[:5]}")
    mixed = {}
    for key, tensor in state.items():
        if key not in other or not tensor.is_floating_point():
            mixed[key] = tensor  # e.g. BERT's pooler, or integer buffers such as position_ids
            continue
        if other[key].shape != tensor.shape:
            raise ValueError(f"{key}: shape {tuple(tensor.shape)} in {first_dir}, {tuple(other[key].shape)} in {second_dir}")
        mixed[key] = (1.0 - weight) * tensor + weight * other[key]
    model.load_state_dict(mixed)
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(output_dir, safe_serialization=True)
    for name in TOKENIZER_FILES:
        if (first_dir / name).is_file():
            shutil.copy2(first_dir / name, output_dir / name)
    record = {"interpolated": {"first": str(first_dir.resolve()), "second": str(second_dir.resolve()), "weight_of_second": weight},
              "files": sorted(p.name for p in output_dir.iterdir())}
    (output_dir / "encoder_source.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")
    return record
