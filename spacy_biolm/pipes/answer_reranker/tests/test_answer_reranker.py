"""answer_reranker: MRR by hand (with a question split over Docs), training with class weights,
ranking, serialisation and bad input."""

import pytest
import spacy
from spacy.tokens import SpanGroup
from spacy.training import Example

from spacy_biolm import make_question_doc
from spacy_biolm.testing import make_qa_nlp, overfit
from spacy_biolm.pipes.answer_reranker.scorer import reciprocal_rank, score_reranking

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
