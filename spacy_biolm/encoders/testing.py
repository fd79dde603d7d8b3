"""Test helpers for the pair tasks: a tiny random ELECTRA with a small cased WordPiece vocabulary.

Used by the QA tests through their conftest files (``from spacy_biolm.encoders.testing import
tiny_qa_encoder``). Random weights: the tests need the format and the plumbing, not the quality.
"""

import string
from pathlib import Path

import pytest

__all__ = ["make_tiny_encoder", "tiny_qa_encoder", "TINY_WORDS"]

TINY_WORDS = (
    "Is BRCA1 a gene ? What causes cancer Germline mutations in cause hereditary breast the of and "
    "is are not yes no protein TP53 disease tumour suppressor which Which drug treats tamoxifen"
).split()


def make_tiny_encoder(out: Path, layers: int = 2, hidden: int = 32) -> Path:
    """Write a random ELECTRA encoder + fast WordPiece tokenizer (cased) to ``out``."""
    from transformers import BertTokenizerFast, ElectraConfig, ElectraModel

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chars = list(string.ascii_letters + string.digits + string.punctuation) + ["β", "ï", "é", "α"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(TINY_WORDS)) + chars + ["##" + c for c in chars]
    (out / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n", encoding="utf8")
    tokenizer = BertTokenizerFast(vocab_file=str(out / "vocab.txt"), do_lower_case=False, strip_accents=False)
    tokenizer.save_pretrained(out)
    config = ElectraConfig(
        vocab_size=len(tokenizer), embedding_size=16, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=512,
    )
    ElectraModel(config).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_qa_encoder(tmp_path_factory) -> Path:
    """Session-wide tiny random ELECTRA encoder directory."""
    import torch

    torch.manual_seed(0)
    return make_tiny_encoder(tmp_path_factory.mktemp("qa_encoder"))


ARCHITECTURES = {
    "yes_no": "spacy-biolm.YesNoClassifier.v1",
    "answer_span": "spacy-biolm.AnswerSpanModel.v1",
    "answer_reranker": "spacy-biolm.AnswerRerankerModel.v1",
}


def make_qa_nlp(encoder_dir: Path, component: str, window: int = 32, stride: int = 8, **settings):
    """A blank English pipeline (corpus tokenizer) with one QA component on ``encoder_dir``."""
    import spacy

    nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})
    encoder = {"@architectures": "spacy-biolm.PairEncoder.v1", "name": str(encoder_dir), "window": window, "stride": stride}
    config = {"model": {"@architectures": ARCHITECTURES[component], "encoder": encoder}, **settings}
    nlp.add_pipe(component, config=config)
    return nlp


def overfit(nlp, examples, steps: int = 30, learn_rate: float = 0.003):
    """Initialise ``nlp`` on ``examples`` and update on them ``steps`` times (seeded)."""
    from spacy.util import fix_random_seed
    from thinc.api import Adam

    fix_random_seed(0)
    nlp.initialize(lambda: examples)
    optimizer = Adam(learn_rate)
    losses = {}
    for _ in range(steps):
        losses = nlp.update(examples, sgd=optimizer, drop=0.0)
    return losses
