import json

from spacy_biolm.evaluation.qa import qa_results_table


def test_reranker_table_shows_the_random_order_baseline_beside_ours_and_the_paper(tmp_path):
    metrics = tmp_path / "answer_reranker_test.json"
    metrics.write_text(json.dumps({"rerank_mrr": 0.3512, "rerank_mrr_random": 0.0914, "questions_per_second": 2.5,
                                   "torch_threads": 2}))
    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps({"bio_electra_2020": {
        "models": {"bio_electra": "Bio-ELECTRA"}, "reranking_bioasq": {"bio_electra": [0.4]},
    }}))
    lines = qa_results_table({"answer_reranker": metrics}, paper_results=paper, name="tiny").splitlines()
    rows = [line for line in lines if line.startswith("| ")]
    assert rows[0] == "| model | MRR | questions/s |"
    assert rows[1:] == [
        "| tiny (ours) | 0.351 | 2.5 (2 threads) |",
        "| random order of the candidates (expected) (baseline) | 0.091 |  |",
        "| Bio-ELECTRA (paper) | 0.400 |  |",
    ]


def test_metrics_without_the_baseline_get_no_baseline_row(tmp_path):
    metrics = tmp_path / "old.json"
    metrics.write_text(json.dumps({"rerank_mrr": 0.3}))
    yes_no = tmp_path / "yes_no.json"
    yes_no.write_text(json.dumps({"yes_no_f_yes": 0.9}))
    table = qa_results_table({"answer_reranker": metrics, "yes_no": yes_no})
    assert "random order" not in table
    assert "| spacy-biolm (ours) | 0.300 |  |" in table.splitlines()


def test_baselines_computed_on_the_same_docs_get_a_row_each(tmp_path):
    yes_no = tmp_path / "yes_no.json"
    yes_no.write_text(json.dumps({"yes_no_f_yes": 0.9, "yes_no_f_no": 0.5, "baselines": {
        "majority class (always yes)": {"yes_no_f_yes": 0.8571, "yes_no_f_no": 0.0}}}))
    rows = [line for line in qa_results_table({"yes_no": yes_no}).splitlines() if "(baseline)" in line]
    assert rows == ["| majority class (always yes) (baseline) |  |  | 85.71 |  |  | 0.00 |  |"]


def test_speed_on_a_gpu_says_so(tmp_path):
    metrics = tmp_path / "yes_no.json"
    metrics.write_text(json.dumps({"yes_no_f_yes": 0.9, "questions_per_second": 239.6, "torch_threads": 2, "device": "gpu"}))
    assert "| spacy-biolm (ours) |  |  | 90.00 |  |  |  | 239.6 (GPU) |" in qa_results_table({"yes_no": metrics})
