"""ALBERT pretraining: masking statistics, segment-pair packing, sentence-order batches, shared
layers and factorised embeddings, the masked-only MLM head against HF's full computation,
learning, and the export that spaCy-transformers loads."""

import numpy as np
import pytest
import torch

from spacy_biolm.pretraining.albert import (
    AlbertMLMSOP,
    AlbertObjectiveSettings,
    PairPackingStats,
    export_albert,
    make_albert_config,
    mask_for_bert_mlm,
    pack_sentence_pairs,
    sentence_order_batch,
)
from spacy_biolm.pretraining.electra import ModelSize

from spacy_biolm.testing import transformer_pipeline

PAD, CLS, SEP, MASK = 0, 2, 3, 4
SPECIALS = [0, 1, 2, 3, 4]
MICRO = ModelSize(
    embedding_size=8, hidden_size=32, num_layers=3, num_heads=2, intermediate_size=64,
    max_position_embeddings=64, dropout=0.0,
)


def _padded_rows(n_rows=64, length=40, pad_from=30, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(10, 100, (n_rows, length), generator=g)
    ids[:, 0] = CLS
    ids[:, pad_from - 1] = SEP
    ids[:, pad_from:] = PAD
    maskable = (ids != PAD) & ~torch.isin(ids, torch.tensor(SPECIALS))
    return ids, maskable


# --- masking ---------------------------------------------------------------------------------


def test_bert_masking_selects_round_fifteen_percent_of_maskable_positions_per_row():
    ids, maskable = _padded_rows()  # 28 maskable per row -> round(4.2) = 4
    masked, selected = mask_for_bert_mlm(ids, maskable, MASK, 100, generator=torch.Generator().manual_seed(1), special_ids=SPECIALS)
    assert selected.sum(1).tolist() == [4] * 64
    assert not (selected & ~maskable).any(), "specials and padding must never be selected"
    assert torch.equal(masked[~selected], ids[~selected])


def test_bert_masking_is_80_mask_10_random_10_kept():
    ids, maskable = _padded_rows(n_rows=2000, length=100, pad_from=100)  # 98 maskable -> 15 per row
    masked, selected = mask_for_bert_mlm(
        ids, maskable, MASK, 100, 0.15, 0.1, 0.1, torch.Generator().manual_seed(2), special_ids=SPECIALS
    )
    original, result = ids[selected], masked[selected]
    n = len(original)  # 30,000 selections: a share's standard error is below 0.0025
    assert n == 2000 * 15
    share_mask = (result == MASK).float().mean().item()
    share_kept = (result == original).float().mean().item()
    share_random = ((result != MASK) & (result != original)).float().mean().item()
    assert abs(share_mask - 0.8) < 0.01
    # A random draw can hit the original token (1 in 95 here): BERT counts that as random too.
    assert abs(share_kept - (0.1 + 0.1 / 95)) < 0.01
    assert abs(share_random - 0.1 * 94 / 95) < 0.01
    random_ids = result[(result != MASK) & (result != original)]
    assert not torch.isin(random_ids, torch.tensor(SPECIALS)).any(), "random replacements exclude specials"
    assert random_ids.max() < 100
    assert len(torch.unique(random_ids)) == 95  # drawn over the whole non-special vocabulary


def test_bert_masking_rejects_shares_above_one():
    ids, maskable = _padded_rows(n_rows=2)
    with pytest.raises(ValueError, match="replace_prob"):
        mask_for_bert_mlm(ids, maskable, MASK, 100, replace_prob=0.6, keep_prob=0.5)


# --- packing ---------------------------------------------------------------------------------


def _documents(n_docs=60, seed=0):
    """Documents with disjoint id ranges (doc d uses ids d*1000 + k), so mixing shows."""
    rng = np.random.default_rng(seed)
    docs = []
    for d in range(n_docs):
        lengths = rng.integers(1, 40, size=rng.integers(1, 8))
        next_id = d * 1000 + 10
        doc = []
        for n in lengths:
            doc.append(list(range(next_id, next_id + int(n))))
            next_id += int(n)
        docs.append(doc)
    docs.append([[99_010]])  # one token: cannot form a pair
    docs.append([[98_010], list(range(98_011, 98_011 + 13))])  # 1-token sentence beside a full chunk
    docs.append([])  # empty: nothing to lose
    return docs


def test_packing_keeps_documents_apart_loses_only_counted_tokens_and_respects_length():
    docs = _documents()
    stats = PairPackingStats()
    rows = list(pack_sentence_pairs(docs, 16, CLS, SEP, seed=0, stats=stats))
    rebuilt = {}
    for ids, len_a in rows:
        assert len(ids) <= 16
        assert ids[0] == CLS and ids[1 + len_a] == SEP and ids[-1] == SEP
        text = ids[1 : 1 + len_a] + ids[2 + len_a : -1]
        assert len_a >= 1 and len(text) - len_a >= 1, "both segments non-empty"
        assert SEP not in text and CLS not in text
        doc_ids = {t // 1000 for t in text}
        assert len(doc_ids) == 1, "a row mixes documents"
        rebuilt.setdefault(doc_ids.pop(), []).extend(text)
    # A then B in order, row after row, gives back every document's tokens in order; only
    # documents of one token (the generated ones may have some, and doc 99) are missing.
    single = set()
    for doc in docs:
        tokens = [t for sentence in doc for t in sentence]
        if len(tokens) == 1:
            single.add(tokens[0] // 1000)
        elif tokens:
            assert rebuilt[tokens[0] // 1000] == tokens
    assert 99 in single and not single & set(rebuilt)
    assert rebuilt[98] == list(range(98_010, 98_024))  # the 1-token sentence borrowed a token
    assert stats.documents == len(docs)
    assert (stats.unpairable_documents, stats.unpairable_tokens) == (len(single), len(single))
    assert stats.input_tokens == stats.pair_tokens + stats.unpairable_tokens
    assert stats.pairs == len(rows)


def test_packing_splits_at_sentence_boundaries_and_inside_single_sentences():
    docs = [[[10, 11, 12], [13, 14], [15]], [list(range(20, 50))]]
    rows = list(pack_sentence_pairs(docs, 16, CLS, SEP, seed=3))
    first, len_a = rows[0]
    assert first[1 : 1 + len_a] in ([10, 11, 12], [10, 11, 12, 13, 14])  # a sentence boundary
    # 30 tokens, 13 a row: pieces of 13, 13, 4, each split inside at a random token.
    assert [len(ids) - 3 for ids, _ in rows[1:]] == [13, 13, 4]
    assert all(1 <= a < len(ids) - 3 for ids, a in rows[1:])


def test_packing_is_deterministic_for_a_seed():
    docs = _documents()
    once = list(pack_sentence_pairs(docs, 24, CLS, SEP, seed=7))
    again = list(pack_sentence_pairs(docs, 24, CLS, SEP, seed=7))
    other = list(pack_sentence_pairs(docs, 24, CLS, SEP, seed=8))
    assert once == again
    assert [ids for ids, _ in once] != [ids for ids, _ in other]  # the split points move


def test_packing_needs_room_for_a_pair():
    with pytest.raises(ValueError, match="at least 7"):
        list(pack_sentence_pairs([[[10, 11]]], 6, CLS, SEP, seed=0))


# --- sentence order --------------------------------------------------------------------------


def test_sentence_order_batch_swaps_segments_and_sets_types_and_labels():
    ids = np.array(
        [
            [CLS, 10, 11, SEP, 20, 21, 22, SEP, PAD, PAD],
            [CLS, 10, 11, SEP, 20, 21, 22, SEP, PAD, PAD],
            [CLS, 30, SEP, 40, 41, 42, 43, 44, 45, SEP],
        ]
    )
    input_ids, types, labels = sentence_order_batch(ids, np.array([2, 2, 1]), PAD, np.array([False, True, True]))
    assert input_ids.dtype == types.dtype == labels.dtype == torch.long
    assert input_ids.tolist() == [
        [CLS, 10, 11, SEP, 20, 21, 22, SEP, PAD, PAD],
        [CLS, 20, 21, 22, SEP, 10, 11, SEP, PAD, PAD],
        [CLS, 40, 41, 42, 43, 44, 45, SEP, 30, SEP],
    ]
    assert types.tolist() == [
        [0, 0, 0, 0, 1, 1, 1, 1, 0, 0],
        [0, 0, 0, 0, 0, 1, 1, 1, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 1, 1],
    ]
    assert labels.tolist() == [0, 1, 1]


def test_sentence_order_batch_on_packed_rows_swaps_exactly_half_drawn():
    rows = list(pack_sentence_pairs(_documents(), 32, CLS, SEP, seed=0))
    ids = np.full((len(rows), 32), PAD)
    for r, (row, _) in enumerate(rows):
        ids[r, : len(row)] = row
    len_a = np.array([a for _, a in rows])
    swap = np.random.default_rng(0).random(len(rows)) < 0.5
    input_ids, types, labels = sentence_order_batch(ids, len_a, PAD, swap)
    for r, (row, a) in enumerate(rows):
        segment_a, segment_b = row[1 : 1 + a], row[2 + a : -1]
        first, second = (segment_b, segment_a) if swap[r] else (segment_a, segment_b)
        assert input_ids[r].tolist() == [CLS, *first, SEP, *second, SEP] + [PAD] * (32 - len(row))
        assert types[r].tolist() == [0] * (2 + len(first)) + [1] * (len(second) + 1) + [0] * (32 - len(row))
    assert labels.tolist() == swap.astype(int).tolist()


def test_sentence_order_batch_rejects_a_row_without_two_segments():
    ids = np.array([[CLS, 10, 11, SEP, SEP, PAD]])  # len(A) = 2 leaves B empty
    with pytest.raises(ValueError, match="Row 0"):
        sentence_order_batch(ids, np.array([2]), PAD, np.array([True]))
    inner_pad = np.array([[CLS, 10, SEP, 11, 12, SEP, PAD, PAD], [CLS, 10, SEP, PAD, 12, SEP, PAD, PAD]])
    with pytest.raises(ValueError, match="Row 1"):
        sentence_order_batch(inner_pad, np.array([1, 1]), PAD, np.array([False, False]))


# --- model -----------------------------------------------------------------------------------


def test_config_shares_all_layers_and_factorises_embeddings():
    config = make_albert_config(MICRO, vocab_size=100, pad_id=PAD)
    model = AlbertMLMSOP(config)
    albert = model.model.albert
    assert config._attn_implementation == "sdpa"
    assert len(albert.encoder.albert_layer_groups) == 1, "one weight set for all 3 layers"
    assert albert.embeddings.word_embeddings.weight.shape == (100, 8)
    assert albert.encoder.embedding_hidden_mapping_in.weight.shape == (32, 8)
    assert model.model.predictions.decoder.weight is albert.embeddings.word_embeddings.weight
    deeper = AlbertMLMSOP(make_albert_config(ModelSize(**{**vars(MICRO), "num_layers": 12}), 100, PAD))
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(deeper) == count(model), "more layers, same weights"
    two_groups = make_albert_config(ModelSize(**{**vars(MICRO), "num_layers": 4}), 100, PAD, num_hidden_groups=2)
    assert len(AlbertMLMSOP(two_groups).model.albert.encoder.albert_layer_groups) == 2
    with pytest.raises(ValueError, match="num_hidden_groups"):
        make_albert_config(MICRO, 100, PAD, num_hidden_groups=2)  # 3 layers do not split in 2


def _sop_batch(vocab_size=100, seed=0):
    rows = list(pack_sentence_pairs(_documents(n_docs=8, seed=seed), 24, CLS, SEP, seed=seed))[:16]
    ids = np.full((len(rows), 24), PAD)
    for r, (row, _) in enumerate(rows):
        ids[r, : len(row)] = [t % (vocab_size - 10) + 10 if t not in (CLS, SEP) else t for t in row]
    swap = np.random.default_rng(seed).random(len(rows)) < 0.5
    input_ids, types, labels = sentence_order_batch(ids, np.array([a for _, a in rows]), PAD, swap)
    attention = input_ids != PAD
    maskable = attention & ~torch.isin(input_ids, torch.tensor(SPECIALS))
    return input_ids, attention, types, maskable, labels


def test_masked_only_mlm_head_matches_the_full_hf_loss():
    torch.manual_seed(0)
    model = AlbertMLMSOP(make_albert_config(MICRO, 100, PAD)).eval()
    input_ids, attention, types, maskable, labels = _sop_batch()
    objective = AlbertObjectiveSettings()
    out = model(input_ids, attention, types, maskable, labels, MASK, objective, torch.Generator().manual_seed(5), SPECIALS)
    masked, selected = mask_for_bert_mlm(
        input_ids, maskable, MASK, 100, generator=torch.Generator().manual_seed(5), special_ids=SPECIALS
    )
    full = model.model(
        input_ids=masked,
        attention_mask=attention,
        token_type_ids=types,
        labels=torch.where(selected, input_ids, -100),
        sentence_order_label=labels,
    )
    assert torch.allclose(out["loss"], full.loss, atol=1e-5)
    sop = torch.nn.functional.cross_entropy(full.sop_logits, labels)
    assert torch.allclose(out["sop_loss"], sop, atol=1e-5)
    assert torch.allclose(out["mlm_loss"], full.loss - sop, atol=1e-5)
    assert set(out) == {"loss", "mlm_loss", "sop_loss", "mlm_acc", "sop_acc"}


def test_a_few_steps_reduce_the_loss_on_a_repeated_batch():
    torch.manual_seed(0)
    model = AlbertMLMSOP(make_albert_config(MICRO, 100, PAD))
    batch = _sop_batch()
    objective = AlbertObjectiveSettings(sop_weight=1.0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses, sop_losses = [], []
    for _ in range(30):
        # The same masks every step: the batch repeats exactly, so the model can memorise it.
        out = model(*batch, MASK, objective, torch.Generator().manual_seed(0), torch.tensor(SPECIALS))
        optimizer.zero_grad()
        out["loss"].backward()
        optimizer.step()
        losses.append(out["loss"].item())
        sop_losses.append(out["sop_loss"].item())
    assert np.mean(losses[-5:]) < 0.85 * np.mean(losses[:5])  # about 5.3 -> 3.9
    assert np.mean(sop_losses[-5:]) < 0.5 * np.mean(sop_losses[:5])  # ln 2 at the start


# --- export ----------------------------------------------------------------------------------


def test_export_loads_in_transformers_and_spacy_transformers(vocab_dir, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    from spacy_biolm.pretraining.vocab import load_albert_tokenizer

    tokenizer = load_albert_tokenizer(vocab_dir)
    assert (tokenizer.pad_token_id, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.mask_token_id) == (
        PAD, CLS, SEP, MASK,
    )
    model = AlbertMLMSOP(make_albert_config(MICRO, len(tokenizer), tokenizer.pad_token_id))
    encoder_dir = export_albert(model, tokenizer, tmp_path / "albert", {"model": vars(MICRO)})
    assert encoder_dir == tmp_path / "albert" / "model"
    for name in ("config.json", "model.safetensors", "spiece.model", "pretraining_settings.json"):
        assert (encoder_dir / name).is_file(), name

    loaded = AutoTokenizer.from_pretrained(encoder_dir)
    text = "Germline BRCA1 mutations cause Café-au-lait spots."
    assert loaded.tokenize(text) == tokenizer.tokenize(text)
    assert any("BRCA" in piece for piece in loaded.tokenize(text)), "cased"
    # Café is not in the tiny vocabulary; the normaliser shows case and accents survive.
    assert loaded.backend_tokenizer.normalizer.normalize_str("Café BRCA1") == "Café BRCA1"
    assert loaded.model_max_length == MICRO.max_position_embeddings
    encoder = AutoModel.from_pretrained(encoder_dir).eval()
    encoded = loaded(text, return_tensors="pt")
    with torch.no_grad():
        expected = model.model.albert.eval()(**encoded).last_hidden_state
        assert torch.allclose(encoder(**encoded).last_hidden_state, expected, atol=1e-5)

    nlp = transformer_pipeline(
        encoder_dir, get_spans={"@span_getters": "spacy-transformers.strided_spans.v1", "window": 16, "stride": 12}
    )
    doc = nlp(" ".join([text] * 6))  # longer than one window
    assert nlp.get_pipe("transformer").model.transformer.config.model_type == "albert"
    hidden = doc._.trf_data.model_output.last_hidden_state
    assert hidden.shape[-1] == MICRO.hidden_size
    assert doc._.trf_data.tensors[0].size > 0
    assert len(doc._.trf_data.align) == len(doc)
    assert all(len(doc._.trf_data.align[i].data) > 0 for i in range(len(doc))), "every token has pieces"
