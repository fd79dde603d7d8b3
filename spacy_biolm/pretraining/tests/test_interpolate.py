"""Interpolated encoders: the weighted mean of two relatives, in the first one's architecture."""

import json

import pytest
import torch
from transformers import AutoModel, AutoTokenizer, BertConfig, BertModel, ElectraConfig, ElectraModel

from spacy_biolm.pretraining.interpolate import interpolate_encoders
from spacy_biolm.testing import make_tiny_encoder


def _hidden(model_dir, ids):
    model = AutoModel.from_pretrained(model_dir).eval()
    with torch.no_grad():
        return model(input_ids=ids).last_hidden_state


@pytest.fixture(scope="module")
def relatives(tmp_path_factory):
    """Two tiny ELECTRA encoders of the same shapes and vocabulary, different weights."""
    root = tmp_path_factory.mktemp("relatives")
    return make_tiny_encoder(root / "a", seed=0), make_tiny_encoder(root / "b", seed=1)


def test_interpolated_weights_are_the_weighted_mean_and_the_ends_are_the_encoders(relatives, tmp_path):
    first, second = relatives
    record = interpolate_encoders(first, second, tmp_path / "quarter", weight=0.25)
    a, b = AutoModel.from_pretrained(first).state_dict(), AutoModel.from_pretrained(second).state_dict()
    mixed = AutoModel.from_pretrained(tmp_path / "quarter").state_dict()
    assert set(mixed) == set(a)
    for key, tensor in a.items():
        if tensor.is_floating_point():
            assert torch.allclose(mixed[key], 0.75 * tensor + 0.25 * b[key], atol=1e-6), key
    assert not torch.allclose(mixed["embeddings.word_embeddings.weight"], a["embeddings.word_embeddings.weight"])
    assert record["interpolated"]["weight_of_second"] == 0.25
    assert json.loads((tmp_path / "quarter" / "encoder_source.json").read_text()) == record
    # The tokenizer travels with the weights: the output is a directory --paths.encoder can name.
    assert AutoTokenizer.from_pretrained(tmp_path / "quarter")("BRCA1 mutations")["input_ids"] == \
        AutoTokenizer.from_pretrained(first)("BRCA1 mutations")["input_ids"]

    ids = torch.tensor([[2, 10, 11, 12, 3]])
    interpolate_encoders(first, second, tmp_path / "zero", weight=0.0)
    interpolate_encoders(first, second, tmp_path / "one", weight=1.0)
    assert torch.allclose(_hidden(tmp_path / "zero", ids), _hidden(first, ids), atol=1e-5)
    assert torch.allclose(_hidden(tmp_path / "one", ids), _hidden(second, ids), atol=1e-5)
    assert not torch.allclose(_hidden(tmp_path / "quarter", ids), _hidden(first, ids), atol=1e-3)


def test_a_bert_and_an_electra_of_the_same_shapes_mix_and_bert_keeps_its_pooler(relatives, tmp_path):
    vocab_size = len(AutoTokenizer.from_pretrained(relatives[0]))
    shapes = dict(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    torch.manual_seed(5)
    BertModel(BertConfig(**shapes)).save_pretrained(tmp_path / "bert")
    ElectraModel(ElectraConfig(embedding_size=32, **shapes)).save_pretrained(tmp_path / "electra")
    for encoder in ("bert", "electra"):
        AutoTokenizer.from_pretrained(relatives[0]).save_pretrained(tmp_path / encoder)
    interpolate_encoders(tmp_path / "bert", tmp_path / "electra", tmp_path / "mixed", weight=0.5)
    bert = BertModel.from_pretrained(tmp_path / "bert").state_dict()
    electra = ElectraModel.from_pretrained(tmp_path / "electra").state_dict()
    mixed = AutoModel.from_pretrained(tmp_path / "mixed")
    assert isinstance(mixed, BertModel)
    state = mixed.state_dict()
    assert torch.equal(state["pooler.dense.weight"], bert["pooler.dense.weight"])
    key = "encoder.layer.1.output.dense.weight"
    assert torch.allclose(state[key], 0.5 * bert[key] + 0.5 * electra[key], atol=1e-6)


def test_encoders_that_cannot_mix_are_refused_with_the_reason(relatives, tmp_path):
    first, _ = relatives
    other_vocab = make_tiny_encoder(tmp_path / "other_vocab", vocab_sentences=["BRCA1 binds TP53 in tumour cells ."] * 20, vocab_size=60)
    with pytest.raises(ValueError, match="vocab.txt .*share their vocabulary"):
        interpolate_encoders(first, other_vocab, tmp_path / "out", weight=0.5)
    wider = make_tiny_encoder(tmp_path / "wider", hidden=48)
    with pytest.raises(ValueError, match=r"embeddings_project.weight: shape \(32, 16\) in .*, \(48, 16\) in .*wider"):
        interpolate_encoders(first, wider, tmp_path / "out", weight=0.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        interpolate_encoders(first, first, tmp_path / "out", weight=1.5)
    with pytest.raises(FileNotFoundError):
        interpolate_encoders(first, tmp_path / "missing", tmp_path / "out", weight=0.5)
    assert not (tmp_path / "out").exists()  # nothing half-written
