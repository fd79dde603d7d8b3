"""Fixtures for pretraining tests: a small biomedical text, a vocabulary trained on it, and a
micro ELECTRA config that trains in a second."""

import os
import random
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GENES = ["BRCA1", "BRCA2", "TP53", "EGFR", "KRAS", "HER2", "PTEN", "MYC"]
DISEASES = ["breast cancer", "ovarian carcinoma", "colorectal cancer", "Alzheimer's disease", "diabetes"]
TEMPLATES = [
    "Germline mutations in {g} cause hereditary {d}.",
    "Expression of {g} was reduced in {n} patients with {d}.",
    "We sequenced {g} in a cohort of {n} women with {d} (p < 0.05).",
    "Loss of {g} function is frequent in {d}.",
    "The {g} protein binds DNA and regulates apoptosis in {d} cells.",
]


def write_bio_text(path: Path, n_docs: int = 80, seed: int = 0) -> Path:
    """Text in the pretraining format (sentence per line, blank line between documents)."""
    rng = random.Random(seed)
    lines = []
    for _ in range(n_docs):
        for _ in range(rng.randint(3, 6)):
            lines.append(
                rng.choice(TEMPLATES).format(g=rng.choice(GENES), d=rng.choice(DISEASES), n=rng.randint(2, 900))
            )
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


MICRO_CONFIG = """
[paths]
text = "{text}"
vocab = "{vocab}"

[system]
seed = 0
device = "cpu"
threads = 1

[corpus]
max_seq_length = 32

[model]
embedding_size = 16
hidden_size = 32
num_layers = 2
num_heads = 2
intermediate_size = 64
generator_fraction = 0.5
max_position_embeddings = 64
dropout = 0.1

[objective]

[training]
max_steps = 8
batch_size = 8
learning_rate = 0.001
warmup_steps = 2
log_every = 1
checkpoint_every = 4
"""


@pytest.fixture(scope="session")
def bio_text(tmp_path_factory) -> Path:
    return write_bio_text(tmp_path_factory.mktemp("text") / "text.txt")


@pytest.fixture(scope="session")
def vocab_dir(tmp_path_factory, bio_text) -> Path:
    from spacy_biolm.pretraining.vocab import train_vocab

    out = tmp_path_factory.mktemp("vocab")
    train_vocab([bio_text], out, vocab_size=200)
    return out


@pytest.fixture
def micro_config(tmp_path, bio_text, vocab_dir) -> Path:
    path = tmp_path / "micro.cfg"
    path.write_text(MICRO_CONFIG.format(text=bio_text, vocab=vocab_dir), encoding="utf8")
    return path


def transformer_pipeline(encoder_dir: Path, **model_config):
    """spacy.blank("en") with a spacy-transformers `transformer` on ``encoder_dir``, initialised:
    how a user plugs a pretrained encoder into spaCy."""
    import spacy

    nlp = spacy.blank("en")
    model = {
        "@architectures": "spacy-transformers.TransformerModel.v3",
        "name": str(encoder_dir),
        "tokenizer_config": {"use_fast": True},
        **model_config,
    }
    nlp.add_pipe("transformer", config={"model": model})
    nlp.initialize()
    return nlp
