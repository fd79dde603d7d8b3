"""answer_reranker: MRR and its random-order baseline by hand (with a question split over Docs,
with ties), ranking by the logit margin (saturating logits), negative sampling, training with
class weights, serialisation and bad input."""

import numpy
import pytest
import spacy
from spacy.tokens import SpanGroup
from spacy.training import Example
from thinc.api import Model

from spacy_biolm import make_question_doc
from spacy_biolm.testing import make_qa_nlp, overfit
from spacy_biolm.pipes.answer_reranker import make_answer_reranker
from spacy_biolm.pipes.base import softmax
from spacy_biolm.pipes.answer_reranker.scorer import random_order_reciprocal_rank, reciprocal_rank, score_reranking

QUESTION = "Which drug treats breast cancer ?"
SENTENCES = ["BRCA1 is a gene .", "tamoxifen treats breast cancer .", "TP53 is a tumour suppressor ."]


def _gold(nlp, sentences, relevant, qid="q1"):
    doc = make_question_doc(nlp, QUESTION, sentences, question_id=qid)
    doc.spans["relevant_sents"] = SpanGroup(doc, name="relevant_sents", spans=[s for i, s in enumerate(doc.sents) if i in relevant])
    return doc


def _ranked(nlp, sentences, scores, qid="q1"):
    doc = make_question_doc(nlp, QUESTION, sentences, question_id=qid)
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    sents = list(doc.sents)
    doc.spans["ranked_sents"] = SpanGroup(doc, name="ranked_sents", spans=[sents[i] for i in order], attrs={"scores": [scores[i] for i in order]})
    return doc


def test_reciprocal_rank_and_mrr_by_hand():
    assert reciprocal_rank([(0.9, False), (0.5, True), (0.7, False)]) == pytest.approx(1 / 3)
    assert reciprocal_rank([(0.1, False)]) is None
    nlp = spacy.blank("en")
    examples = [
        # q1 split over two Docs: its relevant sentence (0.6) ranks 2nd behind 0.8 of the other Doc.
        Example(_ranked(nlp, SENTENCES[:2], [0.1, 0.6]), _gold(nlp, SENTENCES[:2], {1})),
        Example(_ranked(nlp, SENTENCES[2:], [0.8]), _gold(nlp, SENTENCES[2:], set())),
        # q2: relevant sentence first.
        Example(_ranked(nlp, SENTENCES, [0.9, 0.2, 0.1], "q2"), _gold(nlp, SENTENCES, {0}, "q2")),
        # q3: nothing relevant -> not scored.
        Example(_ranked(nlp, SENTENCES, [0.9, 0.2, 0.1], "q3"), _gold(nlp, SENTENCES, set(), "q3")),
    ]
    scores = score_reranking(examples)
    assert scores["rerank_mrr"] == pytest.approx((1 / 2 + 1) / 2)
    assert scores["rerank_questions"] == 2
    # q1 and q2 both have one relevant sentence among 3 candidates: (1 + 1/2 + 1/3) / 3 each.
    assert scores["rerank_mrr_random"] == pytest.approx(11 / 18)


def test_random_order_baseline_and_ties_by_hand():
    # One relevant among 4: rank 1..4 equally likely -> (1 + 1/2 + 1/3 + 1/4) / 4 = 25/48.
    assert random_order_reciprocal_rank([False, False, True, False]) == pytest.approx(25 / 48)
    # Two relevant among 3: first relevant at rank 1 w.p. 2/3, at rank 2 w.p. 1/3 -> 5/6.
    assert random_order_reciprocal_rank([True, False, True]) == pytest.approx(5 / 6)
    assert random_order_reciprocal_rank([False, False]) is None
    # All scores tied: the ranking says nothing, so it scores exactly the random baseline,
    # wherever the relevant item sits in the input order.
    for position in range(4):
        tied = [(1.0, i == position) for i in range(4)]
        assert reciprocal_rank(tied) == pytest.approx(25 / 48)
    # One item ahead, then a tie of the relevant item with one irrelevant: rank 2 or 3 -> 5/12.
    assert reciprocal_rank([(0.9, False), (0.5, False), (0.5, True), (0.1, False)]) == pytest.approx(5 / 12)
    nlp = spacy.blank("en")
    examples = [
        Example(_ranked(nlp, SENTENCES, [0.3, 0.2, 0.1], "q1"), _gold(nlp, SENTENCES, {2}, "q1")),
        Example(_ranked(nlp, SENTENCES, [0.3, 0.2, 0.1], "q2"), _gold(nlp, SENTENCES, {0, 2}, "q2")),
    ]
    scores = score_reranking(examples)
    assert scores["rerank_mrr"] == pytest.approx((1 / 3 + 1) / 2)
    assert scores["rerank_mrr_random"] == pytest.approx((11 / 18 + 5 / 6) / 2)


def _fixed_logits_reranker(nlp, logits_by_sentence, negative_sampling=1.0, lexical_weight=0.0):
    """An answer_reranker whose model gives fixed (irrelevant, relevant) logits per sentence."""

    def forward(model, pairs, is_train):
        rows = [logits_by_sentence[sentence] for _, sentence in pairs]
        output = model.ops.asarray2f(rows) if rows else model.ops.alloc2f(0, 2)
        return output, lambda d_output: d_output

    return make_answer_reranker(nlp, "answer_reranker", Model("fixed_logits", forward), "ranked_sents", None,
                                negative_sampling, score_reranking, lexical_weight=lexical_weight)


def test_saturated_probabilities_still_rank_by_the_logit_margin():
    # Relevance logits grow along the document; the float32 softmax of each row is exactly 1.0,
    # so ranking by probability ties everything and falls back to document order (the bug).
    nlp = spacy.blank("en")
    logits = {SENTENCES[0]: (-10.0, 30.0), SENTENCES[1]: (-10.0, 40.0), SENTENCES[2]: (-10.0, 50.0)}
    assert numpy.all(softmax(numpy.asarray(list(logits.values()), dtype="float32"))[:, 1] == 1.0)
    reranker = _fixed_logits_reranker(nlp, logits)
    doc = reranker(make_question_doc(nlp, QUESTION, SENTENCES, "q1"))
    ranked = doc.spans["ranked_sents"]
    assert [s.text for s in ranked] == SENTENCES[::-1]
    assert ranked.attrs["scores"] == pytest.approx([60.0, 50.0, 40.0])
    assert len(set(ranked.attrs["scores"])) == 3
    # The last sentence of the Doc is the relevant one: rank 1, where document order gives rank 3.
    scores = reranker.score([Example(doc, _gold(nlp, SENTENCES, {2}))])
    assert scores["rerank_mrr"] == 1.0
    assert scores["rerank_mrr_random"] == pytest.approx(11 / 18)


def test_lexical_weight_lets_the_question_terms_lift_a_sentence_the_model_ranks_low():
    nlp = spacy.blank("en")
    # The model prefers the gene sentences; only the last sentence shares the question's terms.
    logits = {SENTENCES[0]: (0.0, 2.0), SENTENCES[1]: (0.0, 0.5), SENTENCES[2]: (0.0, 1.0)}
    gold = _gold(nlp, SENTENCES, {1})
    by_model = _fixed_logits_reranker(nlp, logits)(make_question_doc(nlp, QUESTION, SENTENCES, "q1"))
    assert by_model.spans["ranked_sents"][0].text == SENTENCES[0]
    fused = _fixed_logits_reranker(nlp, logits, lexical_weight=2.0)(make_question_doc(nlp, QUESTION, SENTENCES, "q1"))
    ranked = fused.spans["ranked_sents"]
    assert ranked[0].text == SENTENCES[1]
    assert ranked.attrs["scores"] == sorted(ranked.attrs["scores"], reverse=True)
    reranker = _fixed_logits_reranker(nlp, logits, lexical_weight=2.0)
    assert reranker.score([Example(fused, gold)])["rerank_mrr"] == 1.0
    assert _fixed_logits_reranker(nlp, logits).score([Example(by_model, gold)])["rerank_mrr"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="lexical_weight must be >= 0"):
        _fixed_logits_reranker(nlp, logits, lexical_weight=-1.0)


def test_negative_sampling_keeps_every_relevant_candidate_and_a_fraction_of_the_others():
    nlp = spacy.blank("en")
    candidates = [f"BRCA{i} is a gene ." for i in range(400)]
    relevant = {7, 123, 399}
    logits = {c: (0.0, 0.0) for c in candidates}
    examples = [Example(make_question_doc(nlp, QUESTION, candidates, "q1"), _gold(nlp, candidates, relevant))]
    numpy.random.seed(0)
    _, owners = _fixed_logits_reranker(nlp, logits, negative_sampling=0.25).training_input(examples)
    kept = {sentence.text for _, sentence in owners}
    assert {candidates[i] for i in relevant} <= kept
    # Binomial(397, 0.25): mean 99.25, sd 8.6.
    assert 99.25 - 4 * 8.6 < len(kept) - len(relevant) < 99.25 + 4 * 8.6
    everything = _fixed_logits_reranker(nlp, logits).training_input(examples)[1]
    assert len(everything) == len(candidates)
    for bad in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match="negative_sampling"):
            _fixed_logits_reranker(nlp, logits, negative_sampling=bad)


def test_trains_ranks_and_round_trips(tiny_qa_encoder, tmp_path):
    nlp = make_qa_nlp(tiny_qa_encoder, "answer_reranker", window=24, stride=4, class_weights={"relevant": 2.0})
    examples = [Example(make_question_doc(nlp, QUESTION, SENTENCES, "q1"), _gold(nlp, SENTENCES, {1}))]
    overfit(nlp, examples, steps=30)
    assert nlp.get_pipe("answer_reranker").cfg["resolved_class_weights"] == [1.0, 2.0]
    doc = nlp(make_question_doc(nlp, QUESTION, SENTENCES))
    ranked = doc.spans["ranked_sents"]
    assert ranked[0].text == SENTENCES[1] and len(ranked) == 3
    assert ranked.attrs["scores"] == sorted(ranked.attrs["scores"], reverse=True)
    assert nlp.evaluate(examples)["rerank_mrr"] == 1.0
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    again_doc = loaded(make_question_doc(loaded, QUESTION, SENTENCES))
    again = again_doc.spans["ranked_sents"]
    assert [s.text for s in again] == [s.text for s in ranked]
    assert again.attrs["scores"] == pytest.approx(ranked.attrs["scores"], abs=1e-5)


def test_trains_with_negative_sampling_and_keeps_the_setting(tiny_qa_encoder, tmp_path):
    # 20 candidates: one relevant, 19 irrelevant of which each update sees about a quarter.
    candidates = [f"{gene} is a tumour suppressor gene ." for gene in ("BRCA1", "TP53")] * 9 + SENTENCES[:2]
    nlp = make_qa_nlp(tiny_qa_encoder, "answer_reranker", window=24, stride=4, negative_sampling=0.25)
    examples = [Example(make_question_doc(nlp, QUESTION, candidates, "q1"), _gold(nlp, candidates, {19}))]
    overfit(nlp, examples, steps=30)
    doc = nlp(make_question_doc(nlp, QUESTION, candidates))
    ranked = doc.spans["ranked_sents"]
    assert ranked[0].text == "tamoxifen treats breast cancer ." and len(ranked) == 20
    assert nlp.evaluate(examples)["rerank_mrr"] == 1.0
    nlp.to_disk(tmp_path / "p")
    assert spacy.load(tmp_path / "p").get_pipe("answer_reranker").cfg["negative_sampling"] == 0.25


def test_bad_input(tiny_qa_encoder):
    nlp = make_qa_nlp(tiny_qa_encoder, "answer_reranker", window=24, stride=4)
    nlp.initialize(lambda: [Example(make_question_doc(nlp, QUESTION, SENTENCES, "q1"), _gold(nlp, SENTENCES, {1}))])
    no_sentences = make_question_doc(nlp, QUESTION, "tamoxifen treats breast cancer . BRCA1 is a gene .", "q7")
    with pytest.raises(ValueError, match="sentencizer"):
        nlp(no_sentences)
    with pytest.raises(ValueError, match="empty"):
        make_question_doc(nlp, QUESTION, ["BRCA1 is a gene .", " "])
    assert len(nlp(make_question_doc(nlp, QUESTION, [])).spans["ranked_sents"]) == 0
    long_sentence = " ".join(["tamoxifen treats breast cancer"] * 20) + " ."
    doc = nlp(make_question_doc(nlp, QUESTION, [long_sentence, "naïve β-catenin ."]))
    assert len(doc.spans["ranked_sents"]) == 2


def _mean_pooled_cosine(encoder_dir, question, sentence, special_tokens=False):
    """The cosine of two texts' embeddings straight from HF: each text alone, mean of the last
    hidden states of its own wordpieces ([CLS]/[SEP] left out unless ``special_tokens``)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    model = AutoModel.from_pretrained(str(encoder_dir)).eval()
    vectors = []
    with torch.inference_mode():
        for text in (question, sentence):
            batch = tokenizer(text, return_tensors="pt")
            hidden = model(**batch).last_hidden_state[0]
            vectors.append((hidden if special_tokens else hidden[1:-1]).mean(0))
    return float(torch.nn.functional.cosine_similarity(vectors[0], vectors[1], dim=0))


@pytest.mark.parametrize("pool_special_tokens", [False, True])
def test_untrained_cosine_reranker_ranks_by_the_zero_shot_cosine(tiny_qa_encoder, pool_special_tokens):
    nlp = make_qa_nlp(tiny_qa_encoder, "answer_reranker", window=24, stride=4,
                      architecture="spacy-biolm.AnswerRerankerCosine.v1")
    nlp.get_pipe("answer_reranker").model.attrs["pool_special_tokens"] = pool_special_tokens
    nlp.initialize(lambda: [Example(make_question_doc(nlp, QUESTION, SENTENCES, "q1"), _gold(nlp, SENTENCES, {1}))])
    doc = nlp(make_question_doc(nlp, QUESTION, SENTENCES))
    ranked = doc.spans["ranked_sents"]
    expected = {s: 20.0 * (_mean_pooled_cosine(tiny_qa_encoder, QUESTION, s, pool_special_tokens) - 0.6) for s in SENTENCES}
    other = {s: 20.0 * (_mean_pooled_cosine(tiny_qa_encoder, QUESTION, s, not pool_special_tokens) - 0.6) for s in SENTENCES}
    assert ranked.attrs["scores"] != pytest.approx([other[s.text] for s in ranked], abs=1e-4)
    assert [s.text for s in ranked] == sorted(SENTENCES, key=lambda s: -expected[s])
    assert ranked.attrs["scores"] == pytest.approx([expected[s.text] for s in ranked], abs=1e-4)


def _fixed_windows_encoder(windows):
    """A stand-in PairEncoder that returns ``windows`` for any input and records the gradient."""
    seen = {}

    def forward(model, texts, is_train):
        def backprop(d_hidden):
            seen["d_hidden"] = d_hidden
            return []

        return windows, backprop

    return Model("fixed_windows", forward, dims={"nO": windows.hidden.shape[2]}), seen


@pytest.mark.parametrize("pool_special_tokens", [False, True])
def test_cosine_ranker_gradient_matches_finite_differences(pool_special_tokens):
    from spacy_biolm.encoders.heads import CosineRanker
    from spacy_biolm.encoders.pair_encoder import EncodedWindows

    rng = numpy.random.default_rng(0)
    # Three distinct texts (question q, sentences a and b); b is read in two windows, padding masked out.
    hidden = rng.normal(size=(4, 5, 3)).astype("float32")
    mask = numpy.array([[0, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 1, 1, 1, 1], [0, 1, 1, 0, 0]], dtype=bool)
    # [CLS] text [SEP], then padding (a window that the text fills has no [SEP] column in this toy).
    attention = numpy.arange(5)[None, :] < (mask.sum(axis=1) + 2)[:, None]
    pairs = [("q", "a"), ("q", "b")]
    d_logits = numpy.array([[0.3, -0.7], [-0.2, 0.5]], dtype="float32")

    def loss_and_gradient(h):
        windows = EncodedWindows(h, numpy.array([0, 1, 2, 2]), numpy.zeros((4, 5, 2), dtype="int64"), mask, 3, attention)
        encoder, seen = _fixed_windows_encoder(windows)
        model = CosineRanker(encoder, scale=7.0, centre=0.1, pool_special_tokens=pool_special_tokens)
        logits, backprop = model.begin_update(pairs)
        backprop(d_logits)
        return float((numpy.asarray(logits, dtype="float64") * d_logits).sum()), seen["d_hidden"], logits

    _, analytic, logits = loss_and_gradient(hidden)
    assert numpy.allclose(logits[:, 0], -logits[:, 1])
    # The pooled positions are the text's and, when pooled, the special tokens around it: never padding.
    pooled = attention if pool_special_tokens else mask
    assert numpy.all(analytic[~pooled] == 0) and numpy.all(analytic[pooled] != 0)
    numeric = numpy.zeros_like(hidden, dtype="float64")
    for index in numpy.ndindex(hidden.shape):
        step = numpy.zeros_like(hidden, dtype="float64")
        step[index] = 1e-3
        numeric[index] = (loss_and_gradient((hidden + step).astype("float64"))[0]
                          - loss_and_gradient((hidden - step).astype("float64"))[0]) / 2e-3
    assert numpy.allclose(analytic, numeric, atol=1e-3)


def test_listwise_loss_by_hand():
    from spacy_biolm.pipes.answer_reranker.component import listwise_loss

    # Group 0: margins (0, log 3), the second relevant -> p = (1/4, 3/4), loss -log 3/4.
    # Group 1: no relevant candidate -> no loss, no gradient.
    loss, d_margins = listwise_loss([0.0, numpy.log(3.0), 5.0, -1.0], [0, 1, 0, 0], [0, 0, 1, 1])
    assert loss == pytest.approx(-numpy.log(0.75))
    assert d_margins == pytest.approx([0.25, -0.25, 0.0, 0.0])
    # Two relevant of three with equal margins: their softmax mass is 2/3.
    loss, d_margins = listwise_loss([1.0, 1.0, 1.0], [1, 1, 0], [3, 3, 3])
    assert loss == pytest.approx(-numpy.log(2 / 3))
    assert d_margins == pytest.approx([1 / 3 - 1 / 2, 1 / 3 - 1 / 2, 1 / 3])
    assert listwise_loss([0.5], [0], [0]) == (0.0, pytest.approx([0.0]))


def test_listwise_training_encodes_only_docs_with_a_relevant_candidate_and_learns(tiny_qa_encoder, tmp_path):
    nlp = make_qa_nlp(tiny_qa_encoder, "answer_reranker", window=24, stride=4,
                      architecture="spacy-biolm.AnswerRerankerCosine.v1", listwise=True)
    with_relevant = Example(make_question_doc(nlp, QUESTION, SENTENCES, "q1"), _gold(nlp, SENTENCES, {1}))
    without = Example(make_question_doc(nlp, QUESTION, SENTENCES, "q2"), _gold(nlp, SENTENCES, set(), "q2"))
    overfit(nlp, [with_relevant, without], steps=30)
    reranker = nlp.get_pipe("answer_reranker")
    _, owners = reranker.training_input([without, with_relevant])
    assert {i for i, _ in owners} == {1} and len(owners) == len(SENTENCES)
    doc = nlp(make_question_doc(nlp, QUESTION, SENTENCES))
    assert doc.spans["ranked_sents"][0].text == SENTENCES[1]
    assert nlp.evaluate([with_relevant])["rerank_mrr"] == 1.0
    nlp.to_disk(tmp_path / "p")
    assert spacy.load(tmp_path / "p").get_pipe("answer_reranker").cfg["listwise"] is True
    with pytest.raises(ValueError, match="listwise"):
        make_qa_nlp(tiny_qa_encoder, "answer_reranker", listwise=True, class_weights="balanced")
