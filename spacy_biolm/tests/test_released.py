"""The encoders committed under released/: within the size limit, float16, complete (tokenizer,
the run's summary, the card), chosen by the ablation they name, and loadable as an HF encoder."""

import json

import pytest

from spacy_biolm.pretraining.model_card import ABLATION_RECORD, CARD
from spacy_biolm.testing import REPO

RELEASED = sorted(p for p in (REPO / "released").glob("*") if p.is_dir()) if (REPO / "released").is_dir() else []
MAX_BYTES = 50 * 1024 * 1024


@pytest.mark.parametrize("released", RELEASED, ids=[p.name for p in RELEASED])
def test_a_released_encoder_is_small_complete_and_the_ablations_choice(released):
    from safetensors import safe_open

    assert sum(f.stat().st_size for f in released.rglob("*") if f.is_file()) <= MAX_BYTES
    for name in ("config.json", "model.safetensors", "vocab.txt", "tokenizer.json", "pretrain_summary.json",
                 "pretraining_settings.json", CARD, ABLATION_RECORD):
        assert (released / name).is_file(), f"{released} lacks {name}"
    with safe_open(str(released / "model.safetensors"), framework="pt") as weights:
        dtypes = {weights.get_slice(key).get_dtype() for key in weights.keys()}
    assert dtypes <= {"F16", "I64"}, dtypes
    record = json.loads((released / ABLATION_RECORD).read_text(encoding="utf8"))
    ablation = json.loads((REPO / record["ablation"]).read_text(encoding="utf8"))
    assert ablation["chosen"] == record["name"], f"{record['ablation']} chose {ablation['chosen']}, not {record['name']}"
    card = (released / CARD).read_text(encoding="utf8")
    assert f"From `{record['ablation']}`, where this encoder is `{record['name']}`" in card


@pytest.mark.parametrize("released", RELEASED, ids=[p.name for p in RELEASED])
def test_a_released_encoder_loads_and_encodes(released):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(released))
    model = AutoModel.from_pretrained(str(released)).eval()
    assert next(model.parameters()).dtype == torch.float32  # fine-tuning runs in float32
    batch = tokenizer(["BRCA1 mutations raise the risk of breast cancer."], return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    assert hidden.shape == (1, batch["input_ids"].shape[1], model.config.hidden_size)
    assert torch.isfinite(hidden).all() and hidden.std() > 0.1
