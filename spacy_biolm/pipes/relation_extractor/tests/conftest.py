"""A tiny random ELECTRA encoder whose vocabulary knows the relation placeholders."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCES = [
    "Mutations in @GENE$ cause @DISEASE$ in humans .",
    "No association of @GENE$ with @DISEASE$ was found .",
    "BC6ENTC inhibits BC6ENTG but not BC6OTHER .",
    "BRCA1 variants and breast cancer risk .",
]


@pytest.fixture(scope="session")
def relation_encoder(tmp_path_factory) -> Path:
    from transformers import AutoTokenizer, ElectraConfig, ElectraForPreTraining

    from spacy_biolm.pretraining.vocab import train_vocab

    text = tmp_path_factory.mktemp("re_text") / "text.txt"
    text.write_text("\n".join(SENTENCES * 20) + "\n", encoding="utf8")
    out = tmp_path_factory.mktemp("re_encoder")
    train_vocab([text], out, vocab_size=120)
    tokenizer = AutoTokenizer.from_pretrained(out)
    config = ElectraConfig(vocab_size=len(tokenizer), embedding_size=16, hidden_size=32, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=32, max_position_embeddings=256)
    ElectraForPreTraining(config).save_pretrained(out)
    return out
