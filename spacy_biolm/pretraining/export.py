"""Write pretrained models as Hugging Face directories that spacy-transformers loads by path."""

import json
from pathlib import Path

__all__ = ["export_electra"]


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
