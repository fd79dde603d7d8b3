"""Vocabulary extension: frequent split words become one token, their rows the mean of their
pieces', and the encoder is unchanged on text without them."""

import json
import lzma

import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from spacy_biolm.pretraining.vocab_extension import count_split_words, extend_vocabulary


def test_frequent_split_words_join_the_vocabulary(tiny_qa_encoder, tmp_path):
    text = tmp_path / "domain.txt.xz"
    lines = ["adenocarcinoma of BRCA1 causes breast cancer ."] * 30 + ["hypercholesterolemia was rare ."] * 5 + [""]
    with lzma.open(text, "wt", encoding="utf8") as f:
        f.write("\n".join(lines))
    old_tokenizer = AutoTokenizer.from_pretrained(str(tiny_qa_encoder))
    counts = count_split_words(old_tokenizer, ["adenocarcinoma of the colon", "adenocarcinoma"], min_pieces=3)
    assert counts["adenocarcinoma"] == 2 and "of" not in counts

    report = extend_vocabulary(tiny_qa_encoder, [text], tmp_path / "extended", new_tokens=10, min_count=10)
    assert report["added"] == len(report["examples"]) >= 1
    assert "adenocarcinoma" in [e["word"] for e in report["examples"]]
    assert "hypercholesterolemia" not in [e["word"] for e in report["examples"]]  # 5 < min_count
    assert json.loads((tmp_path / "extended" / "vocab_extension.json").read_text())["added"] == report["added"]

    tokenizer = AutoTokenizer.from_pretrained(str(tmp_path / "extended"))
    assert tokenizer.tokenize("adenocarcinoma") == ["adenocarcinoma"]
    old, new = AutoModel.from_pretrained(str(tiny_qa_encoder)).eval(), AutoModel.from_pretrained(str(tmp_path / "extended")).eval()
    old_rows, new_rows = old.get_input_embeddings().weight, new.get_input_embeddings().weight
    pieces = old_tokenizer.convert_tokens_to_ids(old_tokenizer.tokenize("adenocarcinoma"))
    new_id = tokenizer.convert_tokens_to_ids("adenocarcinoma")
    assert new_id >= old_rows.shape[0] and torch.equal(new_rows[: old_rows.shape[0]], old_rows)  # appended
    assert torch.allclose(new_rows[new_id], old_rows[pieces].mean(dim=0))
    # Text without the new words reads exactly as before.
    batch = old_tokenizer(["BRCA1 causes breast cancer ."], return_tensors="pt")
    assert tokenizer(["BRCA1 causes breast cancer ."], return_tensors="pt")["input_ids"].tolist() == batch["input_ids"].tolist()
    with torch.no_grad():
        assert torch.allclose(old(**batch).last_hidden_state, new(**batch).last_hidden_state, atol=1e-6)


def test_an_encoder_without_wordpiece_vocabulary_is_refused(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="no vocab.txt"):
        extend_vocabulary(tmp_path, [], tmp_path / "out")
