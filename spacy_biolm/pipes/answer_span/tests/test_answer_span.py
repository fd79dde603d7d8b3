"""answer_span: n-best decoding, the SQuAD/BioASQ scorer on hand-computed cases, training,
serialisation, bad input, and one-line use of a saved pipeline in a new process."""

import shutil
import subprocess
import sys

import numpy
import pytest
import spacy
from spacy.tokens import SpanGroup
from spacy.training import Example

from spacy_biolm import make_question_doc
from spacy_biolm.testing import make_qa_nlp, overfit
from spacy_biolm.pipes.answer_span.decoding import decode_windows, word_boundaries
from spacy_biolm.pipes.answer_span.scorer import (
    bioasq_question_scores,
    merge_answers,
    score_answer_spans,
    squad_exact_match,
    squad_f1,
)
from spacy_biolm.doc_data import MissingQuestionError

QUESTION = "Which gene causes hereditary breast cancer ?"
CONTEXT = "Germline mutations in BRCA1 cause hereditary breast cancer . " * 3 + "The TP53 gene is a tumour suppressor ."


def test_nbest_decoding_on_hand_made_logits():
    # One window, 6 wordpieces: [CLS] q [SEP] p1 p2 p3 (passage wordpieces 3..5).
    offsets = numpy.array([[[0, 0], [0, 0], [0, 0], [0, 4], [5, 9], [10, 14]]])
    mask = numpy.array([[False, False, False, True, True, True]])
    start = numpy.array([[9.0, 9.0, 9.0, 3.0, 1.0, 0.0]])
    end = numpy.array([[9.0, 9.0, 9.0, 0.0, 2.0, 1.0]])
    answers = decode_windows(start, end, offsets, mask, n_best=20, max_answer_length=30)
    # Valid (s, e) with e >= s over the passage: 6 spans; special tokens never count.
    assert [(s, e) for s, e, _ in answers] == [(0, 9), (0, 14), (0, 4), (5, 9), (5, 14), (10, 14)]
    scores = numpy.array([5.0, 4.0, 3.0, 3.0, 2.0, 1.0])
    expected = numpy.exp(scores - 5.0) / numpy.exp(scores - 5.0).sum()
    assert numpy.allclose([p for _, _, p in answers], expected)
    # max_answer_length counts wordpieces; candidates are the n_best best starts x ends.
    short = decode_windows(start, end, offsets, mask, n_best=3, max_answer_length=1)
    assert [(s, e) for s, e, _ in short] == [(0, 4), (5, 9), (10, 14)]
    # n_best=2: starts p1, p2 and ends p2, p3 leave one single-wordpiece answer.
    assert [(s, e) for s, e, _ in decode_windows(start, end, offsets, mask, n_best=2, max_answer_length=1)] == [(5, 9)]
    # The same character span from two overlapping windows keeps its best score.
    two = decode_windows(
        numpy.array([[0.0, 0.0, 1.0], [0.0, 0.0, 4.0]]), numpy.array([[0.0, 0.0, 1.0], [0.0, 0.0, 4.0]]),
        numpy.array([[[0, 0], [0, 0], [7, 11]], [[0, 0], [0, 0], [7, 11]]]),
        numpy.array([[False, False, True], [False, False, True]]),
    )
    assert two == [(7, 11, 1.0)]


def test_whole_word_decoding_never_cuts_a_word():
    # "Risk of (FBN1)": wordpieces R | ##isk | of | ( | FBN | ##1 | ) after [CLS] q [SEP].
    text = "Risk of (FBN1)"
    offsets = numpy.array([[[0, 0], [0, 0], [0, 0], [0, 1], [1, 4], [5, 7], [8, 9], [9, 12], [12, 13], [13, 14]]])
    mask = numpy.array([[False] * 3 + [True] * 7])
    can_start, can_end = word_boundaries(text, offsets, mask)
    assert can_start[0].tolist() == [False] * 3 + [True, False, True, True, True, False, True]
    assert can_end[0].tolist() == [False] * 3 + [False, True, True, True, False, True, True]
    # The logits peak on "isk" (start) and "FBN" (end): the wordpiece decoder answers inside words.
    start = numpy.array([[0.0] * 3 + [1.0, 5.0, 0.0, 0.0, 3.0, 0.0, 0.0]])
    end = numpy.array([[0.0] * 3 + [0.0, 1.0, 0.0, 0.0, 5.0, 3.0, 0.0]])
    pieces = decode_windows(start, end, offsets, mask, n_best=3, max_answer_length=30)
    assert text[pieces[0][0]:pieces[0][1]] == "isk of (FBN"
    words = decode_windows(start, end, offsets, mask, n_best=3, max_answer_length=30, text=text)
    assert [text[s:e] for s, e, _ in words][:2] == ["FBN1", "Risk of (FBN1"]
    assert all(can_start[0][3:][[0, 2, 3, 4, 6]]) and not can_start[0][4]


def test_squad_scores_by_hand():
    assert squad_exact_match("the BRCA1 gene.", "BRCA1 gene") == 1.0
    assert squad_exact_match("BRCA1", "BRCA2") == 0.0
    assert squad_f1("BRCA1 mutations", "BRCA1") == pytest.approx(2 * 0.5 * 1.0 / 1.5)
    assert squad_f1("a", "the") == 1.0  # both normalise to nothing


def test_bioasq_merging_and_strict_lenient_mrr_by_hand():
    # Two snippets of one question: "TP53" is in both (best 0.5), "BRCA1" 0.6 in one.
    merged = merge_answers([[("BRCA1", 0.6), ("tp53", 0.3)], [("TP53", 0.5), ("MYC", 0.1)]])
    assert merged == ["BRCA1", "TP53", "MYC"]
    assert bioasq_question_scores(merged, ["tp53", "p53"]) == (0.0, 1.0, 0.5)
    assert bioasq_question_scores(merged, ["brca1"]) == (1.0, 1.0, 1.0)
    assert bioasq_question_scores(merged, ["EGFR"]) == (0.0, 0.0, 0.0)
    only_sixth = [f"a{i}" for i in range(5)] + ["EGFR"]
    assert bioasq_question_scores(only_sixth, ["EGFR"]) == (0.0, 0.0, 0.0)


def _doc(nlp, context, qid, predicted=(), gold=(), gold_answers=None):
    doc = make_question_doc(nlp, "Which gene?", context, question_id=qid)
    spans, offsets, texts, scores = [], [], [], []
    for text, score in predicted:
        start = context.index(text)
        spans.append(doc.char_span(start, start + len(text)))
        offsets.append([start, start + len(text)])
        texts.append(text)
        scores.append(score)
    doc.spans["answers"] = SpanGroup(doc, name="answers", spans=spans, attrs={"scores": scores, "char_offsets": offsets, "texts": texts})
    if gold:
        doc.spans["answers"] = SpanGroup(doc, name="answers", spans=[doc.char_span(context.index(g), context.index(g) + len(g)) for g in gold])
    doc._.gold_answers = gold_answers
    return doc


def test_scorer_groups_snippets_by_question_id():
    nlp = spacy.blank("en")
    a = "BRCA1 and TP53 mutations"
    b = "TP53 is mutated"
    examples = [
        Example(_doc(nlp, a, "q1", predicted=[("BRCA1", 0.6), ("TP53", 0.3)]), _doc(nlp, a, "q1", gold=["TP53"])),
        Example(_doc(nlp, b, "q1", predicted=[("TP53", 0.9)]), _doc(nlp, b, "q1", gold=["TP53"])),
        Example(_doc(nlp, a, "q2", predicted=[("TP53 mutations", 0.7)]), _doc(nlp, a, "q2", gold_answers=["BRCA1"])),
    ]
    scores = score_answer_spans(examples)
    # SQuAD over the two Docs with gold spans: top answers BRCA1 (wrong) and TP53 (right).
    assert scores["answer_em"] == pytest.approx(0.5)
    assert scores["answer_f1"] == pytest.approx(0.5)
    # q1 merged: TP53 (0.9) first -> strict; q2: BRCA1 not predicted -> 0.
    assert scores["answer_strict_acc"] == pytest.approx(0.5)
    assert scores["answer_lenient_acc"] == pytest.approx(0.5)
    assert scores["answer_mrr"] == pytest.approx(0.5)


def _gold_example(nlp, context=CONTEXT, answer="TP53", qid="q1"):
    gold = make_question_doc(nlp, QUESTION, context, qid)
    start = context.rindex(answer)
    gold.spans["answers"] = SpanGroup(
        gold, name="answers", spans=[gold.char_span(start, start + len(answer))], attrs={"char_offsets": [[start, start + len(answer)]]}
    )
    return Example(make_question_doc(nlp, QUESTION, context, qid), gold)


def test_trains_answers_across_windows_and_round_trips(tiny_qa_encoder, tmp_path):
    nlp = make_qa_nlp(tiny_qa_encoder, "answer_span", window=24, stride=6)
    example = _gold_example(nlp)
    losses = overfit(nlp, [example], steps=40)
    assert losses["answer_span"] < 0.5
    doc = nlp(make_question_doc(nlp, QUESTION, CONTEXT))
    answers = doc.spans["answers"]
    assert len(answers) <= 20 and answers.attrs["texts"][0] == "TP53"
    start = CONTEXT.rindex("TP53")
    assert answers.attrs["char_offsets"][0] == [start, start + 4]
    assert sorted(answers.attrs["scores"], reverse=True) == answers.attrs["scores"]
    assert nlp.evaluate([example])["answer_em"] == 1.0

    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    again = loaded(make_question_doc(loaded, QUESTION, CONTEXT)).spans["answers"]
    assert again.attrs["texts"] == answers.attrs["texts"]
    assert numpy.allclose(again.attrs["scores"], answers.attrs["scores"], atol=1e-5)
    pipe = loaded.get_pipe("answer_span")
    clone = make_qa_nlp(tiny_qa_encoder, "answer_span", window=24, stride=6).get_pipe("answer_span")
    clone.from_bytes(pipe.to_bytes())
    assert clone.cfg["n_best"] == 20


def test_bad_input(tiny_qa_encoder):
    nlp = make_qa_nlp(tiny_qa_encoder, "answer_span", window=24, stride=6)
    nlp.initialize(lambda: [_gold_example(nlp)])
    with pytest.raises(MissingQuestionError, match="answer_span"):
        nlp("BRCA1 causes cancer .")
    with pytest.raises(ValueError, match="non-empty question"):
        make_question_doc(nlp, "  ", CONTEXT)
    empty = nlp(make_question_doc(nlp, QUESTION, ""))
    assert len(empty.spans["answers"]) == 0
    long_doc = nlp(make_question_doc(nlp, QUESTION, CONTEXT * 20 + " naïve β-catenin"))
    for start, end in long_doc.spans["answers"].attrs["char_offsets"]:
        assert 0 <= start < end <= len(long_doc.text)


def _readme_example():
    """The (question, passage) of README's question-answering example."""
    import re
    from pathlib import Path

    readme = Path(__file__).resolve().parents[4] / "README.md"
    match = re.search(r'make_question_doc\(nlp, "([^"]+)",\s*"([^"]+)"\)', readme.read_text(encoding="utf8"))
    assert match, "README's question-answering example is gone"
    return match.group(1), match.group(2)


def test_a_saved_pipeline_answers_the_readme_question_in_one_call_in_a_new_process(tiny_qa_encoder, tmp_path):
    question, passage = _readme_example()
    encoder = tmp_path / "encoder"
    shutil.copytree(tiny_qa_encoder, encoder)
    nlp = make_qa_nlp(encoder, "answer_span", window=48, stride=8)
    gold = make_question_doc(nlp, question, passage, "readme")
    start = passage.index("BRCA1")
    gold.spans["answers"] = SpanGroup(gold, name="answers", spans=[gold.char_span(start, start + 5)])
    overfit(nlp, [Example(make_question_doc(nlp, question, passage, "readme"), gold)], steps=40)
    nlp.to_disk(tmp_path / "en_qa")
    shutil.rmtree(encoder)  # the pipeline must carry the encoder's weights and tokenizer
    code = (
        "import spacy; from spacy_biolm import make_question_doc; "
        f"nlp = spacy.load({str(tmp_path / 'en_qa')!r}); "
        f"doc = nlp(make_question_doc(nlp, {question!r}, {passage!r})); "
        "print(doc.spans['answers'][0].text)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "BRCA1"
