"""Shared fixtures for the cross-module tests: a tiny HF ELECTRA encoder made on the spot."""

import os
import random
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"

GENES = ["BRCA1", "BRCA2", "TP53", "APC", "PTEN", "MLH1"]
DISEASES = ["hereditary breast cancer", "colorectal cancer", "ovarian cancer", "Cowden syndrome"]


def disease_sentences(n: int, seed: int = 0):
    """(words, entity word-spans) of simple disease sentences, tokenised as the corpora are."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        gene, disease = rng.choice(GENES), rng.choice(DISEASES)
        prefix = ["Germline", "mutations", "in", gene, "cause"]
        words = prefix + disease.split() + ["."]
        out.append((words, [(len(prefix), len(prefix) + len(disease.split()))]))
    return out


def write_conll(path: Path, sentences) -> Path:
    lines = []
    for words, spans in sentences:
        tags = ["O"] * len(words)
        for start, end in spans:
            tags[start] = "B-Disease"
            for i in range(start + 1, end):
                tags[i] = "I-Disease"
        lines += [f"{w}\t{t}" for w, t in zip(words, tags)] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> Path:
    """A randomly initialised ELECTRA discriminator with our domain tokenizer, as the
    pretraining step exports it (no pretraining: the tests need the format, not the quality)."""
    from transformers import ElectraConfig, ElectraForPreTraining

    from spacy_biolm.pretraining.vocab import train_vocab

    text = tmp_path_factory.mktemp("text") / "text.txt"
    text.write_text("\n".join(" ".join(w) for w, _ in disease_sentences(200)) + "\n", encoding="utf8")
    out = tmp_path_factory.mktemp("encoder")
    train_vocab([text], out, vocab_size=150)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    config = ElectraConfig(vocab_size=len(tokenizer), embedding_size=16, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=2, intermediate_size=64, max_position_embeddings=512)
    ElectraForPreTraining(config).save_pretrained(out)
    return out
