"""evaluate-project scores the three QA pipelines and, on the same Docs, their baselines."""

import json

import pytest

from spacy_biolm.corpora.qa import convert_qa
from spacy_biolm.corpora.qa import QACorpus
from spacy_biolm.evaluation.qa import evaluate_qa_project
from spacy_biolm.testing import make_qa_nlp


def _tsv(path, header, rows):
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf8")
    return path


@pytest.fixture
def qa_project(tmp_path, tiny_qa_encoder):
    nlp = make_qa_nlp(tiny_qa_encoder, "yes_no")
    corpus = tmp_path / "corpus"
    yes_no = ["1\tIs BRCA1 a gene?\tBRCA1 is a gene .", "1\tIs TP53 a gene?\tTP53 is a gene .",
              "0\tIs aspirin a gene?\tAspirin is a drug ."]
    for split, rows in [("train", yes_no), ("test", yes_no[:1] + yes_no[2:])]:
        convert_qa("yesno", _tsv(tmp_path / f"yn_{split}.tsv", "yesno_label\tquestion\tideal_answer", rows),
                   corpus / "yesno" / f"{split}.spacy", nlp)
    squad = {"data": [{"paragraphs": [{"context": "BRCA1 mutations . BRCA1 again .", "qas": [
        {"id": "q1_001", "question": "Which gene?", "answers": [{"text": "BRCA1", "answer_start": 0}]}]}]}]}
    (tmp_path / "squad.json").write_text(json.dumps(squad))
    for name in ("test", "test_bioasq7b"):
        convert_qa("squad", tmp_path / "squad.json", corpus / "factoid" / f"{name}.spacy", nlp)
    convert_qa("reranking", _tsv(tmp_path / "rr.tsv", "label\tquestion\tanswer_candidate",
                                 ["0\tWhich drug treats it?\tBRCA1 is a gene .", "1\tWhich drug treats it?\tWhich drug treats it?"]),
               corpus / "reranking" / "test.spacy", nlp)
    data = {"yes_no": "yesno/train.spacy", "answer_span": "factoid/test.spacy", "answer_reranker": "reranking/test.spacy"}
    for task, docbin in data.items():
        pipeline = make_qa_nlp(tiny_qa_encoder, task)
        pipeline.initialize(lambda: list(QACorpus(corpus / docbin)(pipeline)))
        (tmp_path / "training" / task).mkdir(parents=True)
        pipeline.to_disk(tmp_path / "training" / task / "model-best")
    return tmp_path


def test_each_test_set_gets_its_baselines_in_the_same_run(qa_project, tiny_qa_encoder):
    table = evaluate_qa_project(qa_project / "training", qa_project / "corpus", qa_project / "metrics",
                                encoder=tiny_qa_encoder)
    scores = {name: json.loads((qa_project / "metrics" / f"{name}_test.json").read_text())
              for name in ("yes_no", "answer_span", "answer_reranker")}
    majority = scores["yes_no"]["baselines"]["majority class (always yes)"]
    assert majority["yes_no_f_yes"] == pytest.approx(2 / 3) and majority["yes_no_f_no"] == 0.0
    frequent = scores["answer_span"]["baselines"]["most frequent snippet word"]
    assert frequent["answer_em"] == 1.0 and frequent["answer_strict_acc"] == 1.0
    cosine = next(v for k, v in scores["answer_reranker"]["baselines"].items() if k.startswith("zero-shot cosine"))
    assert cosine["rerank_mrr"] == 1.0  # the relevant candidate is the question itself
    assert "| majority class (always yes) (baseline) |" in table
    assert "| most frequent snippet word (baseline) |" in table
    assert "zero-shot cosine" in table


def test_tune_lexical_weight_stores_the_dev_best_weight_in_the_pipeline(qa_project, tmp_path, monkeypatch):
    import numpy
    import spacy

    from spacy_biolm import make_question_doc
    from spacy_biolm.evaluation.qa import tune_lexical_weight
    from spacy_biolm.pipes.answer_reranker.component import AnswerReranker

    model = qa_project / "training" / "answer_reranker" / "model-best"
    nlp = spacy.load(model)
    drugs = ("tamoxifen", "imatinib", "metformin")
    predict = AnswerReranker.predict

    def ranks_the_relevant_last(self, docs):
        # What a tiny trained model ranks is chance; this one ranks every relevant candidate last,
        # so the margins alone score MRR 1/3 and only the lexical evidence can rank them first.
        owners, margins = predict(self, docs)
        return owners, numpy.asarray([-1.0 if sent.text.split()[0] in drugs else 0.0 for _, sent in owners])

    monkeypatch.setattr(AnswerReranker, "predict", ranks_the_relevant_last)
    # Each question's relevant candidate is the only one that shares its terms.
    rows = []
    for drug, disease in [("tamoxifen", "breast cancer"), ("imatinib", "leukaemia"), ("metformin", "diabetes")]:
        question = f"Which drug treats {disease}?"
        rows += [f"1\t{question}\t{drug} treats {disease} .", f"0\t{question}\tThe cell divides quickly .",
                 f"0\t{question}\tA protein binds the receptor ."]
    convert_qa("reranking", _tsv(tmp_path / "dev.tsv", "label\tquestion\tanswer_candidate", rows), tmp_path / "dev.spacy", nlp)
    result = tune_lexical_weight(model, tmp_path / "dev.spacy", weights=(0.0, 4.0))
    assert result["questions"] == 3 and set(result["dev_mrr"]) == {"0.0", "4.0"}
    assert result["dev_mrr"]["0.0"] < 0.5 and result["dev_mrr"]["4.0"] == 1.0 and result["lexical_weight"] == 4.0
    loaded = spacy.load(model)
    assert loaded.get_pipe("answer_reranker").cfg["lexical_weight"] == 4.0
    assert loaded.config["components"]["answer_reranker"]["lexical_weight"] == 4.0
    doc = loaded(make_question_doc(loaded, "Which drug treats gout?", ["The cell divides quickly .", "colchicine treats gout ."]))
    assert doc.spans["ranked_sents"][0].text == "colchicine treats gout ."
    with pytest.raises(ValueError, match="no answer_reranker"):
        tune_lexical_weight(qa_project / "training" / "yes_no" / "model-best", tmp_path / "dev.spacy")


def test_the_fused_baseline_is_the_reranker_before_training(tiny_qa_encoder, tmp_path):
    from spacy_biolm.evaluation.qa import evaluate_qa_files

    nlp = make_qa_nlp(tiny_qa_encoder, "answer_reranker", architecture="spacy-biolm.AnswerRerankerCosine.v1",
                      lexical_weight=0.5)
    rows = []
    for drug, disease in [("tamoxifen", "breast cancer"), ("imatinib", "leukaemia"), ("metformin", "diabetes")]:
        question = f"Which drug treats {disease}?"
        rows += [f"0\t{question}\tThe cell divides quickly .", f"0\t{question}\t{disease} is common in older people .",
                 f"1\t{question}\t{drug} treats {disease} .", f"0\t{question}\tA protein binds the receptor ."]
    test = tmp_path / "test.spacy"
    convert_qa("reranking", _tsv(tmp_path / "test.tsv", "label\tquestion\tanswer_candidate", rows), test, nlp)
    nlp.initialize(lambda: list(QACorpus(test)(nlp)))
    nlp.to_disk(tmp_path / "untrained")
    scores = evaluate_qa_files(tmp_path / "untrained", [test], reranking_encoder=tiny_qa_encoder)[str(test)]
    fused = f"zero-shot cosine ({tiny_qa_encoder.name}) + BM25 (lexical_weight 0.5)"
    assert set(scores["baselines"]) == {"BM25 of the question's terms", f"zero-shot cosine ({tiny_qa_encoder.name})", fused}
    # Untrained, the reranker's margins are a linear function of the zero-shot cosine: it ranks as the baseline.
    assert scores["rerank_mrr"] == pytest.approx(scores["baselines"][fused]["rerank_mrr"])


def test_bm25_baseline_sits_beside_the_reranker(qa_project):
    evaluate_qa_project(qa_project / "training", qa_project / "corpus", qa_project / "metrics")
    scores = json.loads((qa_project / "metrics" / "answer_reranker_test.json").read_text())
    # The relevant candidate repeats the question; the other shares none of its terms.
    assert scores["baselines"]["BM25 of the question's terms"]["rerank_mrr"] == 1.0
