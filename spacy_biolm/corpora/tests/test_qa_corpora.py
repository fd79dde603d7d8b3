"""QA converters and reader: formats, errors naming the example, DocBin round trip of the question,
exclusion of test questions, and no question overlap between our train and test sets."""

import json

import pytest
import spacy
from spacy.tokens import DocBin

from spacy_biolm.corpora.qa import (
    QACorpus, bioasq_question_id, convert_qa, question_keys, read_qa_docs, snippet_reranking_docs,
)
from spacy_biolm.errors import CorpusFormatError


@pytest.fixture
def nlp():
    return spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})


def _squad(path, answers, context="Acrokeratosis paraneoplastica (Bazex syndrome): a case.", qid="56bc_001"):
    data = {"data": [{"paragraphs": [{"context": context, "qas": [{"id": qid, "question": "Name synonym?", "answers": answers}]}]}]}
    path.write_text(json.dumps(data), encoding="utf8")
    return path


def test_yesno_tsv(nlp, tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("yesno_label\tquestion\tideal_answer\n1\tIs BRCA1 a gene?\tBRCA1 is a gene.\n0\tIs it naïve?\tNo, β.\n", encoding="utf8")
    docs = list(read_qa_docs("yesno", path, nlp))
    assert [d.cats for d in docs] == [{"yes": 1.0, "no": 0.0}, {"yes": 0.0, "no": 1.0}]
    assert docs[1]._.question == "Is it naïve?" and docs[1]._.question_id == "train:3" and docs[1].text == "No, β."
    path.write_text("yesno_label\tquestion\tideal_answer\n1\tIs it?\tyes\n2\tIs it?\tno\n", encoding="utf8")
    with pytest.raises(CorpusFormatError, match=r"train.tsv:3: label must be 0 or 1"):
        list(read_qa_docs("yesno", path, nlp))
    path.write_text("label\tquestion\n", encoding="utf8")
    with pytest.raises(CorpusFormatError, match="header"):
        list(read_qa_docs("yesno", path, nlp))


def test_squad_json_offsets_and_errors(nlp, tmp_path):
    docs = list(read_qa_docs("squad", _squad(tmp_path / "a.json", [{"text": "Bazex syndrome", "answer_start": 31}]), nlp))
    doc = docs[0]
    assert doc._.question_id == "56bc" and doc.user_data["qa_pair_id"] == "56bc_001"
    assert doc.spans["answers"][0].text == "Bazex syndrome" and doc._.gold_answers == ["Bazex syndrome"]
    bad = _squad(tmp_path / "b.json", [{"text": "Bazex syndrome", "answer_start": 30}], qid="56bc_007")
    with pytest.raises(CorpusFormatError, match="example '56bc_007'.*does not match"):
        list(read_qa_docs("squad", bad, nlp))
    empty_q = tmp_path / "c.json"
    empty_q.write_text(json.dumps({"data": [{"paragraphs": [{"context": "x", "qas": [{"id": "9_001", "question": " ", "answers": []}]}]}]}))
    with pytest.raises(CorpusFormatError, match="'9_001': empty question"):
        list(read_qa_docs("squad", empty_q, nlp))
    assert bioasq_question_id("58edf567eda5a57672000011:5") == "58edf567eda5a57672000011"


def test_bioasq_golden_answers(nlp, tmp_path):
    test = _squad(tmp_path / "t.json", [], qid="56bc_002")
    golden = tmp_path / "g.json"
    golden.write_text(json.dumps({"questions": [{"id": "56bc", "type": "factoid", "exact_answer": [["Bazex syndrome", "acrokeratosis"]]}]}))
    doc = next(read_qa_docs("squad", test, nlp, golden=golden))
    assert doc._.gold_answers == ["Bazex syndrome", "acrokeratosis"] and len(doc.spans["answers"]) == 0
    golden.write_text(json.dumps({"questions": [{"id": "other", "exact_answer": [["x"]]}]}))
    with pytest.raises(CorpusFormatError, match="no golden answer for question '56bc'"):
        next(read_qa_docs("squad", test, nlp, golden=golden))


def test_reranking_conversion_docbin_round_trip_and_exclusion(nlp, tmp_path):
    header = "label\tquestion\tanswer_candidate\n"
    rows = ["0\tWhich drug?\tBRCA1 is a gene .", "1\tWhich drug?\ttamoxifen treats it .", "0\tWhich drug?\tTP53 .", "1\tWhat gene?\tBRCA1 ."]
    train = tmp_path / "train.tsv"
    train.write_text(header + "\n".join(rows) + "\n", encoding="utf8")
    test = tmp_path / "test.tsv"
    test.write_text(header + "1\tWhat gene?\tTP53 .\n", encoding="utf8")
    stats = convert_qa("reranking", train, tmp_path / "train.spacy", nlp, exclude=[test], sents_per_doc=2)
    assert stats["excluded_questions"] == 1 and stats["questions"] == 1 and stats["docs"] == 2
    examples = list(QACorpus(tmp_path / "train.spacy")(nlp))
    first = examples[0]
    assert first.predicted._.question == "Which drug?" and first.reference._.question_id == first.predicted._.question_id
    assert [s.text for s in first.predicted.sents] == ["BRCA1 is a gene .", "tamoxifen treats it ."]
    assert [s.text for s in first.reference.spans["relevant_sents"]] == ["tamoxifen treats it ."]
    assert not first.predicted.spans and examples[1].predicted._.question_id == first.predicted._.question_id
    test.write_text(header + "1\tWhat gene?\t \n", encoding="utf8")
    with pytest.raises(CorpusFormatError, match="test.tsv:2: empty answer candidate"):
        list(read_qa_docs("reranking", test, nlp))


def test_qa_corpus_reads_a_folder_of_docbins_in_order(nlp, tmp_path):
    header = "yesno_label\tquestion\tideal_answer\n"
    for name, rows in (("b_boolq", ["1\tIs it?\tIt is ."]), ("a_squad", ["0\tIs BRCA1 a drug?\tNo .", "1\tIs TP53 a gene?\tYes ."])):
        (tmp_path / f"{name}.tsv").write_text(header + "\n".join(rows) + "\n", encoding="utf8")
        convert_qa("yesno", tmp_path / f"{name}.tsv", tmp_path / "joined" / f"{name}.spacy", nlp)
    questions = [eg.predicted._.question for eg in QACorpus(tmp_path / "joined")(nlp)]
    assert questions == ["Is BRCA1 a drug?", "Is TP53 a gene?", "Is it?"]
    assert [eg.predicted._.question for eg in QACorpus(tmp_path / "joined", limit=2)(nlp)] == questions[:2]
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no QA DocBin .* in the folder"):
        QACorpus(tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="not found"):
        QACorpus(tmp_path / "missing.spacy")


def _snippets_file(path, questions):
    """A SQuAD JSON with one paragraph per (question id, question, snippet)."""
    paragraphs = [
        {"context": snippet, "qas": [{"id": f"{qid}_{i:03d}", "question": question, "answers": []}]}
        for qid, question, snippets in questions for i, snippet in enumerate(snippets)
    ]
    path.write_text(json.dumps({"data": [{"paragraphs": paragraphs}]}), encoding="utf8")
    return path


def test_snippet_reranking_docs_take_own_snippets_as_relevant_and_on_topic_negatives(nlp, tmp_path):
    questions = [
        ("q1", "Which gene causes Wilson disease?", ["ATP7B mutations cause Wilson disease.", "Wilson disease is recessive."]),
        ("q2", "Which drug treats Wilson disease copper overload?", ["Penicillamine chelates copper in Wilson disease."]),
        ("q3", "What is BRCA1?", ["BRCA1 is a tumour suppressor.", "BRCA1 repairs DNA."]),
        ("q4", "What does insulin regulate?", ["Insulin regulates blood glucose."]),
        ("test", "Which gene causes Menkes disease?", ["ATP7A mutations cause Menkes disease."]),
    ]
    path = _snippets_file(tmp_path / "snippets.json", questions)
    test = tmp_path / "test.tsv"
    test.write_text("label\tquestion\tanswer_candidate\n1\tWhich gene causes Menkes disease?\tATP7A .\n", encoding="utf8")
    stats = convert_qa("snippets", path, tmp_path / "train.spacy", nlp, exclude=[test])
    assert stats["questions"] == 4 and stats["excluded_questions"] == 1
    examples = {eg.reference._.question_id: eg for eg in QACorpus(tmp_path / "train.spacy")(nlp)}
    first = examples["q1"].reference
    assert sorted(s.text for s in first.spans["relevant_sents"]) == sorted(questions[0][2])
    assert not examples["q1"].predicted.spans  # gold relevance only on the reference
    assert all("Menkes" not in s.text for eg in examples.values() for s in eg.reference.sents)
    # Two per side: the other snippet sharing most words ("Wilson disease") and one at random.
    docs = list(snippet_reranking_docs(path, nlp, snippets_per_question=2, held_out_keys=question_keys("reranking", test)))
    negatives = {s.text for s in docs[0].sents} - {s.text for s in docs[0].spans["relevant_sents"]}
    assert len(negatives) == 2 and "Penicillamine chelates copper in Wilson disease." in negatives
    assert not any("Menkes" in n for d in docs for n in {s.text for s in d.sents} - set(questions[-1][2]))
    again = snippet_reranking_docs(path, nlp, snippets_per_question=2, held_out_keys=question_keys("reranking", test))
    assert [d.text for d in again] == [d.text for d in docs]  # seeded
    with pytest.raises(ValueError, match="snippets_per_question must be at least 1"):
        next(snippet_reranking_docs(path, nlp, snippets_per_question=0))


def test_dev_split_keeps_questions_whole(nlp, tmp_path):
    path = tmp_path / "train.json"
    paragraphs = [
        {"context": f"Gene {i} is BRCA{i}.", "qas": [{"id": f"q{i % 5}_{i:03d}", "question": f"Which gene {i % 5}?", "answers": [{"text": f"BRCA{i}", "answer_start": len(f"Gene {i} is ")}]}]}
        for i in range(20)
    ]
    path.write_text(json.dumps({"data": [{"paragraphs": paragraphs}]}))
    stats = convert_qa("squad", path, tmp_path / "t.spacy", nlp, dev_output=tmp_path / "d.spacy", dev_fraction=0.4)
    assert stats["dev_questions"] == 2 and stats["questions"] == 3
    ids = lambda p: {d.user_data[("._.", "question_id", None, None)] for d in DocBin().from_disk(p).get_docs(nlp.vocab)}  # noqa: E731
    assert not ids(tmp_path / "t.spacy") & ids(tmp_path / "d.spacy")


def test_our_training_sets_share_no_question_with_the_test_sets(tmp_path):
    from spacy_biolm.testing import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip("needs the corpus mirror in ../shared/data")
    fast = spacy.blank("en")  # tokenisation does not matter here
    rerank = SHARED_DATA / "reranking" / "BioASQ-reranker"
    stats = convert_qa("reranking", rerank / "bio_answerfinder" / "dev.tsv", tmp_path / "r.spacy", fast,
                       exclude=[rerank / "bio_electra" / "test.tsv"], dev_output=tmp_path / "rd.spacy")
    assert stats["excluded_questions"] == 21
    test_questions = {d._.question for d in read_qa_docs("reranking", rerank / "bio_electra" / "test.tsv", fast)}
    for split in ("r.spacy", "rd.spacy"):
        train_questions = {d._.question for d in DocBin().from_disk(tmp_path / split).get_docs(fast.vocab)}
        assert train_questions and not train_questions & test_questions
    factoid = SHARED_DATA / "qa_factoid" / "BioASQ"
    stats = convert_qa("squad", factoid / "biobert" / "BioASQ-train-factoid-7b.json", tmp_path / "f.spacy", fast,
                       exclude=[factoid / "bio_electra" / "dev.json"])
    assert stats["excluded_questions"] == 81
    test_ids = {d._.question_id for d in read_qa_docs("squad", factoid / "bio_electra" / "dev.json", fast)}
    train_ids = {d._.question_id for d in DocBin().from_disk(tmp_path / "f.spacy").get_docs(fast.vocab)}
    assert train_ids and not train_ids & test_ids


def test_project_reranking_corpora_keep_test_questions_out_and_dev_whole(tmp_path):
    from spacy_biolm.corpora.qa import convert_qa_corpora
    from spacy_biolm.testing import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip("needs the corpus mirror in ../shared/data")
    fast = spacy.blank("en")
    report = convert_qa_corpora(SHARED_DATA, tmp_path, fast)
    # dev: all 79 Bio-AnswerFinder questions that are not test questions, one Doc each.
    assert report["reranking/dev"]["docs"] == report["reranking/dev"]["questions"] == 79
    assert report["reranking/dev"]["excluded_questions"] == 21
    read = lambda name: list(DocBin().from_disk(tmp_path / "reranking" / f"{name}.spacy").get_docs(fast.vocab))
    keys = lambda docs: {" ".join(d._.question.lower().split()) for d in docs}
    test, dev, train = read("test"), read("dev"), read("train")
    factoid_test = keys(read_qa_docs("squad", SHARED_DATA / "qa_factoid" / "BioASQ" / "bio_electra" / "dev.json", fast))
    assert len(train) == report["reranking/train"]["questions"] > 400
    assert not keys(train) & (keys(test) | factoid_test) and not keys(dev) & keys(test)
    assert all(len(d.spans["relevant_sents"]) >= 1 for d in train + dev)
    # The root's reranker: the same 79 questions, split by question into two thirds and a third.
    answerfinder_train, answerfinder_dev = read("answerfinder_train"), read("answerfinder_dev")
    assert (len(answerfinder_train), len(answerfinder_dev)) == (53, 26)
    assert keys(answerfinder_train) | keys(answerfinder_dev) == keys(dev)
    assert not keys(answerfinder_train) & keys(answerfinder_dev)
