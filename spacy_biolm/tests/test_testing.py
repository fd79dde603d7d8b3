"""The shared test helpers: importable without pytest (or transformers), and the one tiny-encoder builder gives each
fixture what its tests need."""

import subprocess
import sys

from transformers import AutoModel, AutoTokenizer

from spacy_biolm.testing import make_tiny_encoder


def test_the_helpers_import_without_pytest_or_transformers():
    code = "import sys, spacy_biolm.testing; print(sorted({'pytest', 'transformers'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_fixed_vocabulary_is_cased_and_keeps_whole_words(tiny_qa_encoder):
    tokenizer = AutoTokenizer.from_pretrained(tiny_qa_encoder)
    assert tokenizer.tokenize("Is BRCA1 a gene ?") == ["Is", "BRCA1", "a", "gene", "?"]
    assert tokenizer.tokenize("brca1")[0] == "b"  # cased: the lower-case word is not in the vocabulary
    model = AutoModel.from_pretrained(tiny_qa_encoder)
    assert (model.config.num_hidden_layers, model.config.hidden_size) == (2, 32)


def test_the_domain_vocabulary_covers_the_relation_placeholders(relation_encoder):
    tokenizer = AutoTokenizer.from_pretrained(relation_encoder)
    pieces = tokenizer.tokenize("Mutations in @GENE$ cause @DISEASE$ . BC6ENTC inhibits BC6ENTG")
    assert tokenizer.unk_token not in pieces
    assert {"in", "GENE", "DISEASE"} <= set(pieces)  # trained on the corpus text: whole words
    assert AutoModel.from_pretrained(relation_encoder).config.num_hidden_layers == 1


def test_the_encoder_is_exported_as_a_discriminator_and_the_seed_fixes_the_weights(tmp_path):
    first = make_tiny_encoder(tmp_path / "a", layers=1, hidden=16)
    again = make_tiny_encoder(tmp_path / "b", layers=1, hidden=16)
    other = make_tiny_encoder(tmp_path / "c", layers=1, hidden=16, seed=1)
    config = (first / "config.json").read_text()
    assert '"ElectraForPreTraining"' in config  # the format `spacy-biolm pretrain` writes
    weights = [AutoModel.from_pretrained(d).embeddings.word_embeddings.weight for d in (first, again, other)]
    assert (weights[0] == weights[1]).all() and not (weights[0] == weights[2]).all()
