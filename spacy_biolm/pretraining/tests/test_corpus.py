"""Packing tokenised documents into sequences on disk."""

import numpy as np
import pytest
from transformers import AutoTokenizer

from spacy_biolm.errors import PretrainingDataError
from spacy_biolm.pretraining.corpus import PackedCorpus, build_packed_corpus, pack_documents

CLS, SEP = 2, 3


def test_packing_fills_sequences_and_respects_document_boundaries():
    docs = [[[10, 11], [12, 13, 14], [15]], [[20, 21]]]
    seqs = list(pack_documents(iter(docs), max_seq_length=7, cls_id=CLS, sep_id=SEP))
    assert seqs == [[CLS, 10, 11, 12, 13, 14, SEP], [CLS, 15, SEP], [CLS, 20, 21, SEP]]


def test_a_sentence_longer_than_a_sequence_is_cut_not_dropped():
    long_sentence = list(range(100, 113))  # 13 ids, room for 4 per sequence
    seqs = list(pack_documents(iter([[long_sentence]]), max_seq_length=6, cls_id=CLS, sep_id=SEP))
    assert [ids for seq in seqs for ids in seq[1:-1]] == long_sentence
    assert all(len(seq) <= 6 for seq in seqs)


def test_packed_corpus_round_trips_through_disk(tmp_path, bio_text, vocab_dir):
    tokenizer = AutoTokenizer.from_pretrained(vocab_dir)
    corpus = build_packed_corpus([bio_text], tokenizer, tmp_path / "packed", max_seq_length=32)
    reloaded = PackedCorpus.load(tmp_path / "packed")
    assert isinstance(reloaded.ids, np.memmap)
    assert reloaded.ids.shape == corpus.ids.shape and reloaded.max_seq_length == 32
    first_doc = bio_text.read_text().split("\n\n")[0].splitlines()
    row = [i for i in reloaded.ids[0].tolist() if i != tokenizer.pad_token_id]
    assert row[0] == tokenizer.cls_token_id and row[-1] == tokenizer.sep_token_id
    expected = tokenizer(first_doc[0], add_special_tokens=False)["input_ids"]
    assert row[1 : 1 + len(expected)] == expected
    # Every token of the text is somewhere in the corpus: nothing dropped.
    n_text_tokens = sum(
        len(tokenizer(line, add_special_tokens=False)["input_ids"])
        for line in bio_text.read_text().splitlines() if line.strip()
    )
    assert reloaded.n_tokens() == n_text_tokens + 2 * len(reloaded)


def test_loading_a_missing_corpus_names_the_folder(tmp_path):
    with pytest.raises(PretrainingDataError, match="nowhere"):
        PackedCorpus.load(tmp_path / "nowhere")
