"""Packing tokenised documents into sequences on disk."""

import numpy as np
import pytest
from transformers import AutoTokenizer

from spacy_biolm.errors import PretrainingDataError
from spacy_biolm.pretraining.corpus import (
    PackedCorpus,
    batch_indices,
    build_packed_corpus,
    pack_documents,
    permute_indices,
)

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


def _text_token_count(tokenizer, text_path):
    return sum(
        len(tokenizer(line, add_special_tokens=False)["input_ids"])
        for line in text_path.read_text().splitlines() if line.strip()
    )


def test_packed_corpus_round_trips_through_disk_in_shards(tmp_path, bio_text, vocab_dir):
    tokenizer = AutoTokenizer.from_pretrained(vocab_dir)
    corpus = build_packed_corpus([bio_text], tokenizer, tmp_path / "packed", max_seq_length=32, shard_rows=10)
    reloaded = PackedCorpus.load(tmp_path / "packed")
    assert len(reloaded.shards) == -(-len(corpus) // 10) > 1
    assert all(isinstance(shard, np.memmap) for shard in reloaded.shards)
    assert len(reloaded) == len(corpus) and reloaded.max_seq_length == 32
    # Rows read across shard boundaries, in any order, equal the packed sequences in order.
    expected = list(
        pack_documents(
            iter([[tokenizer(s, add_special_tokens=False)["input_ids"] for s in doc.splitlines()]
                  for doc in bio_text.read_text().strip().split("\n\n")]),
            32, tokenizer.cls_token_id, tokenizer.sep_token_id,
        )
    )
    order = np.array([len(corpus) - 1, 0, 10, 9, 11])
    for row, index in zip(reloaded.rows(order), order):
        assert [i for i in row.tolist() if i != tokenizer.pad_token_id] == expected[index]
    # Every token of the text is somewhere in the corpus: nothing dropped.
    assert reloaded.n_tokens == _text_token_count(tokenizer, bio_text) + 2 * len(reloaded)
    assert reloaded.n_tokens == int((reloaded.rows(np.arange(len(reloaded))) != tokenizer.pad_token_id).sum())
    with pytest.raises(IndexError):
        reloaded.rows(np.array([len(reloaded)]))


def test_a_rebuild_replaces_every_shard_of_the_previous_build(tmp_path, bio_text, vocab_dir):
    tokenizer = AutoTokenizer.from_pretrained(vocab_dir)
    build_packed_corpus([bio_text], tokenizer, tmp_path / "packed", max_seq_length=32, shard_rows=5)
    corpus = build_packed_corpus([bio_text], tokenizer, tmp_path / "packed", max_seq_length=32, shard_rows=1000)
    assert len(corpus.shards) == 1 and len(list((tmp_path / "packed").glob("ids-*.bin"))) == 1


def test_segment_pair_packers_store_the_first_segment_length(tmp_path, bio_text, vocab_dir):
    tokenizer = AutoTokenizer.from_pretrained(vocab_dir)

    def halves(docs):  # a minimal pair packer: each document's first sentence, split in two
        for doc in docs:
            ids = doc[0][:28]
            cut = max(1, len(ids) // 2)
            yield [CLS] + ids[:cut] + [SEP] + ids[cut:] + [SEP], cut + 2

    corpus = build_packed_corpus([bio_text], tokenizer, tmp_path / "pairs", 32, packer=halves, shard_rows=7)
    rows = np.arange(len(corpus))
    len_a = corpus.first_segment_lengths(rows)
    for row, n in zip(corpus.rows(rows), len_a):
        assert row[0] == CLS and row[n - 1] == SEP
    plain = build_packed_corpus([bio_text], tokenizer, tmp_path / "plain", 32)
    with pytest.raises(PretrainingDataError, match="segment pairs"):
        plain.first_segment_lengths(rows[:2])


@pytest.mark.parametrize("n", [1, 2, 3, 17, 64, 65, 1000, 4099])
def test_the_permutation_is_a_bijection(n):
    values = permute_indices(np.arange(n, dtype=np.uint64), n, key=12345)
    assert sorted(values.tolist()) == list(range(n))
    if n > 16:  # and it shuffles
        assert values.tolist() != list(range(n))
        assert values.tolist() != permute_indices(np.arange(n, dtype=np.uint64), n, key=54321).tolist()


def test_batches_need_no_memory_proportional_to_the_corpus():
    # A trillion sequences: a materialised permutation would need 8 TB.
    rows = batch_indices(10**12, 32, step=123456789, seed=0)
    assert len(rows) == 32 == len(set(rows.tolist())) and rows.max() < 10**12


def test_loading_a_missing_corpus_names_the_folder(tmp_path):
    with pytest.raises(PretrainingDataError, match="nowhere"):
        PackedCorpus.load(tmp_path / "nowhere")
