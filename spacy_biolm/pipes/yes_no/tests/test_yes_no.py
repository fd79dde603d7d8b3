"""yes_no: per-class scorer by hand, class weights, training, serialisation and bad input."""

import numpy
import pytest
import spacy
from spacy.training import Example

from spacy_biolm import make_question_doc
from spacy_biolm.testing import make_qa_nlp, overfit
from spacy_biolm.doc_data import MissingQuestionError
from spacy_biolm.pipes.base import resolve_class_weights, weighted_cross_entropy
from spacy_biolm.pipes.yes_no.scorer import score_yes_no

PAIRS = [
    ("Is BRCA1 a gene ?", "BRCA1 is a gene .", "yes"),
    ("Is tamoxifen a gene ?", "tamoxifen is not a gene , tamoxifen is a drug .", "no"),
]


def _examples(nlp):
    out = []
    for question, passage, answer in PAIRS:
        gold = make_question_doc(nlp, question, passage, question_id=question)
        gold.cats = {"yes": float(answer == "yes"), "no": float(answer == "no")}
        out.append(Example(make_question_doc(nlp, question, passage, question_id=question), gold))
    return out


def _scored(gold, predicted):
    nlp = spacy.blank("en")
    examples = []
    for i, (g, p) in enumerate(zip(gold, predicted)):
        ref = make_question_doc(nlp, "q?", "text", question_id=str(i))
        ref.cats = {"yes": float(g == "yes"), "no": float(g == "no")}
        pred = make_question_doc(nlp, "q?", "text", question_id=str(i))
        pred.cats = {"yes": 0.9 if p == "yes" else 0.2, "no": 0.1 if p == "yes" else 0.8}
        examples.append(Example(pred, ref))
    return score_yes_no(examples)


def test_per_class_precision_recall_f1_by_hand():
    # gold: 4 yes, 2 no. predicted yes for 3 gold-yes and 1 gold-no; no for 1 gold-yes, 1 gold-no.
    scores = _scored(["yes", "yes", "yes", "yes", "no", "no"], ["yes", "yes", "yes", "no", "yes", "no"])
    assert scores["yes_no_p_yes"] == pytest.approx(3 / 4)
    assert scores["yes_no_r_yes"] == pytest.approx(3 / 4)
    assert scores["yes_no_f_yes"] == pytest.approx(3 / 4)
    assert scores["yes_no_p_no"] == pytest.approx(1 / 2)
    assert scores["yes_no_r_no"] == pytest.approx(1 / 2)
    assert scores["yes_no_acc"] == pytest.approx(4 / 6)
    assert scores["yes_no_macro_f"] == pytest.approx((3 / 4 + 1 / 2) / 2)
    # Always "yes": no-class precision undefined -> 0.
    assert _scored(["yes", "no"], ["yes", "yes"])["yes_no_p_no"] == 0.0


def test_class_weights():
    assert resolve_class_weights(None, ("no", "yes"), [], "yes_no") is None
    assert resolve_class_weights("balanced", ("no", "yes"), [1, 1, 1, 0], "yes_no") == [2.0, pytest.approx(4 / 6)]
    assert resolve_class_weights({"no": 4.0}, ("no", "yes"), [], "yes_no") == [4.0, 1.0]
    with pytest.raises(ValueError, match="unknown labels"):
        resolve_class_weights({"maybe": 1.0}, ("no", "yes"), [], "yes_no")
    with pytest.raises(ValueError, match="no \\['no'\\] examples"):
        resolve_class_weights("balanced", ("no", "yes"), [1, 1], "yes_no")
    # Weighted mean as in torch's CrossEntropyLoss(weight=w): equal logits -> loss log(2).
    loss, grad = weighted_cross_entropy(numpy.zeros((2, 2)), numpy.array([0, 1]), [3.0, 1.0])
    assert loss == pytest.approx(numpy.log(2))
    assert grad[0, 0] == pytest.approx(-0.5 * 3 / 4) and grad[1, 1] == pytest.approx(-0.5 * 1 / 4)


def test_trains_and_round_trips(tiny_qa_encoder, tmp_path):
    nlp = make_qa_nlp(tiny_qa_encoder, "yes_no", window=16, stride=4, class_weights="balanced")
    examples = _examples(nlp)
    overfit(nlp, examples, steps=30)
    assert nlp.get_pipe("yes_no").cfg["resolved_class_weights"] == [1.0, 1.0]
    for (question, passage, answer) in PAIRS:
        cats = nlp(make_question_doc(nlp, question, passage)).cats
        assert set(cats) == {"yes", "no"} and cats["yes"] + cats["no"] == pytest.approx(1.0)
        assert (cats["yes"] > 0.5) == (answer == "yes")
    assert nlp.evaluate(examples)["yes_no_macro_f"] == 1.0
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    question, passage, _ = PAIRS[1]
    assert loaded(make_question_doc(loaded, question, passage)).cats["no"] == pytest.approx(
        nlp(make_question_doc(nlp, question, passage)).cats["no"], abs=1e-5
    )
    assert loaded.get_pipe("yes_no").cfg["resolved_class_weights"] == [1.0, 1.0]


def test_bad_input(tiny_qa_encoder):
    nlp = make_qa_nlp(tiny_qa_encoder, "yes_no", window=16, stride=4)
    nlp.initialize(lambda: _examples(nlp))
    with pytest.raises(MissingQuestionError, match="yes_no"):
        nlp("BRCA1 is a gene .")
    doc = make_question_doc(nlp, "Is it ?", "")
    assert set(nlp(doc).cats) == {"yes", "no"}
    long_passage = " ".join(["BRCA1 is a gene ."] * 50)
    assert 0.0 <= nlp(make_question_doc(nlp, "Is BRCA1 a gene ?", long_passage)).cats["yes"] <= 1.0
    unlabelled = Example(make_question_doc(nlp, "Is it ?", "text", "q9"), make_question_doc(nlp, "Is it ?", "text", "q9"))
    with pytest.raises(ValueError, match="q9"):
        nlp.update([unlabelled])
