"""Fixtures for pretraining tests: a small biomedical text, a vocabulary trained on it, and a
micro ELECTRA config that trains in a second."""

import os
import random
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GENES = ["BRCA1", "BRCA2", "TP53", "EGFR", "KRAS", "HER2", "CDKN2A", "APOE4", "PTEN", "MYC"]
DISEASES = [
    "hereditary breast cancer",
    "ovarian adenocarcinoma",
    "familial hypercholesterolemia",
    "Alzheimer's disease",
    "non-small cell lung cancer",
    "colorectal carcinoma",
]
CYTOKINES = ["IL-6", "interleukin-6", "TNF-alpha", "IFN-γ", "IL-1β"]
TEMPLATES = [
    "Germline mutations in {gene} were associated with {disease} in {n} patients (p < 0.0{d}).",
    "Expression of {gene} was reduced by {n}% after treatment with {dose} µM cisplatin.",
    "Serum {cyto} levels were elevated in patients with {disease} [{n} pg/mL; 95% CI {d}-{n}].",
    "We sequenced {gene} and {gene2} in a cohort of {n} women with {disease}.",
    "Acetylcholinesterase inhibitors decreased {cyto} secretion by {n}% in vitro.",
    "Immunohistochemistry showed {gene} overexpression in {n} of {m} tumours.",
    "The {gene}-mediated pathway regulates {cyto}-induced apoptosis; see Fig. {d}.",
    "Naïve T cells produced {cyto} after stimulation (n = {n}).",
]


def bio_text_documents(n_docs: int, seed: int, long_line_words: int = 0) -> str:
    """Synthetic but realistic biomedical text in the pretraining format (a sentence per line, a
    blank line between documents); with ``long_line_words``, a last document of one line that
    long (a whole abstract on one line)."""
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        sents = []
        for _ in range(rng.randint(3, 7)):
            genes = rng.sample(GENES, 2)
            sents.append(
                rng.choice(TEMPLATES).format(
                    gene=genes[0],
                    gene2=genes[1],
                    disease=rng.choice(DISEASES),
                    cyto=rng.choice(CYTOKINES),
                    n=rng.randint(2, 950),
                    m=rng.randint(951, 2000),
                    d=rng.randint(1, 9),
                    dose=rng.choice(["0.5", "2", "10"]),
                )
            )
        docs.append("\n".join(sents))
    if long_line_words:
        docs.append(" ".join(
            rng.choice(["BRCA1", "mutation", "carriers", "showed", "reduced", "TP53", "(n = 12)."])
            for _ in range(long_line_words)
        ))
    return "\n\n".join(docs) + "\n"


def write_bio_text(path: Path, n_docs: int = 80, seed: int = 0) -> Path:
    """:func:`bio_text_documents` written to ``path``."""
    path.write_text(bio_text_documents(n_docs, seed), encoding="utf8")
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
warmup_fraction = 0.25
log_every = 1
checkpoint_every = 4

[export]
release_dtype = ""
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
