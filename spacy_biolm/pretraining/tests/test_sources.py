"""Compressed pretraining text: read streamed, packed like plain text, identified in the meta,
restricted licences only by opt-in, packed corpora reused until a source changes."""

import hashlib
import json
import lzma

import numpy as np
import pytest
from transformers import AutoTokenizer

from spacy_biolm.errors import PretrainingDataError
from spacy_biolm.pretraining.corpus import build_packed_corpus, iter_text_documents
from spacy_biolm.pretraining.loop import pretrain
from spacy_biolm.pretraining.settings import load_settings
from spacy_biolm.pretraining.sources import check_licence_opt_in, describe_sources, open_text


def _xz(path, text_path):
    with lzma.open(path, "wt", encoding="utf8") as f:
        f.write(text_path.read_text(encoding="utf8"))
    return path


def test_xz_text_is_read_streamed_and_packs_exactly_like_the_plain_file(tmp_path, bio_text, vocab_dir):
    compressed = _xz(tmp_path / "text.txt.xz", bio_text)
    assert compressed.stat().st_size < bio_text.stat().st_size
    assert list(iter_text_documents(compressed)) == list(iter_text_documents(bio_text))
    with open_text(compressed) as f:
        assert f.readline() == bio_text.read_text().splitlines(keepends=True)[0]
    tokenizer = AutoTokenizer.from_pretrained(vocab_dir)
    plain = build_packed_corpus([bio_text], tokenizer, tmp_path / "plain", 32)
    packed = build_packed_corpus([compressed], tokenizer, tmp_path / "xz", 32)
    rows = np.arange(len(plain))
    assert len(packed) == len(plain) and np.array_equal(packed.rows(rows), plain.rows(rows))
    sources = json.loads((tmp_path / "xz" / "meta.json").read_text())["sources"]
    assert sources == [{
        "name": "text.txt.xz", "path": str(compressed), "bytes": compressed.stat().st_size,
        "sha1": hashlib.sha1(compressed.read_bytes()).hexdigest(),
    }]


def test_a_corrupt_xz_file_is_an_error_naming_it(tmp_path):
    broken = tmp_path / "broken.txt.xz"
    broken.write_bytes(b"\xfd7zXZ\x00 this is not xz data")
    with pytest.raises(PretrainingDataError, match="broken.txt.xz"):
        list(iter_text_documents(broken))


def test_the_vocabulary_trainer_reads_xz_text_like_plain_text(tmp_path, bio_text):
    from spacy_biolm.pretraining.vocab import train_vocab

    train_vocab([bio_text], tmp_path / "plain", vocab_size=150)
    train_vocab([_xz(tmp_path / "text.txt.xz", bio_text)], tmp_path / "xz", vocab_size=150)
    assert (tmp_path / "xz" / "vocab.txt").read_text() == (tmp_path / "plain" / "vocab.txt").read_text()


def test_restricted_licence_files_need_an_explicit_opt_in(tmp_path, micro_config, bio_text):
    restricted = _xz(tmp_path / "evidence_inference_restricted.txt.xz", bio_text)
    check_licence_opt_in([bio_text], allow_restricted=False)
    with pytest.raises(PretrainingDataError, match=r"evidence_inference_restricted.*allow_restricted_licences"):
        check_licence_opt_in([bio_text, restricted], allow_restricted=False)
    settings = load_settings(micro_config, {"paths.text": [str(bio_text), str(restricted)], "training.max_steps": 1})
    with pytest.raises(PretrainingDataError, match="allow_restricted_licences"):
        pretrain(settings, tmp_path / "refused", show_progress=False)
    opted_in = load_settings(micro_config, {"paths.text": [str(bio_text), str(restricted)], "training.max_steps": 1,
                                            "corpus.allow_restricted_licences": True})
    summary = pretrain(opted_in, tmp_path / "run", show_progress=False)
    assert [s["name"] for s in summary["sources"]] == ["text.txt", "evidence_inference_restricted.txt.xz"]


def test_the_packed_corpus_is_reused_until_a_source_changes(tmp_path, micro_config, bio_text):
    text = _xz(tmp_path / "corpus.txt.xz", bio_text)
    settings = load_settings(micro_config, {"paths.text": str(text), "training.max_steps": 1})
    out = tmp_path / "run"
    pretrain(settings, out, show_progress=False)
    shard = out / "corpus" / "ids-00000.bin"
    first_build = shard.stat().st_mtime_ns
    pretrain(settings, out, show_progress=False)
    assert shard.stat().st_mtime_ns == first_build  # same sources: not packed again
    # Same name, other content (a new corpus version): packed again, and the meta says which.
    with lzma.open(text, "wt", encoding="utf8") as f:
        f.write(bio_text.read_text(encoding="utf8")[: len(bio_text.read_text()) // 2])
    summary = pretrain(settings, out, show_progress=False)
    assert shard.stat().st_mtime_ns != first_build
    assert summary["sources"] == describe_sources([text])


def _catalogue(directory, rows):
    with lzma.open(directory / "documents.tsv.xz", "wt", encoding="utf8") as f:
        f.write("".join("\t".join(row) + "\n" for row in rows))


def test_sources_carry_each_files_documents_per_licence_from_the_catalogue_beside_them(tmp_path, bio_text):
    text = _xz(tmp_path / "articles.txt.xz", bio_text)
    _catalogue(tmp_path, [("file", "position", "source", "id", "licence"),
                          ("articles.txt.xz", "0", "a", "d1", "cc-by"), ("articles.txt.xz", "1", "a", "d2", "cc0"),
                          ("articles.txt.xz", "2", "a", "d3", "cc-by"), ("other.txt.xz", "0", "b", "d4", "cc-by-nc")])
    [described] = describe_sources([text])
    assert described["licences"] == {"cc-by": 2, "cc0": 1}
    assert list(described["licences"]) == ["cc-by", "cc0"]  # most documents first
    assert "licences" not in describe_sources([bio_text])[0]  # no catalogue beside it


def test_a_catalogue_row_without_a_licence_is_refused_with_its_line(tmp_path, bio_text):
    text = _xz(tmp_path / "articles.txt.xz", bio_text)
    _catalogue(tmp_path, [("file", "licence"), ("articles.txt.xz", "cc-by"), ("articles.txt.xz", "")])
    with pytest.raises(PretrainingDataError, match=r"documents\.tsv\.xz, line 3"):
        describe_sources([text])
