import json
import math

from spacy_biolm.evaluation.qa import qa_results_table, write_qa_seeds_table


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


def test_seeds_table_has_each_rows_mean_std_then_the_same_test_sets_baselines_and_the_paper(tmp_path):
    majority = {"majority class (always yes)": {"yes_no_f_yes": 0.8571, "yes_no_f_no": 0.0}}
    for seed, (f_yes, f_no) in enumerate([(0.90, 0.40), (0.80, 0.60)]):
        (tmp_path / f"yes_no_seed{seed}_test.json").write_text(json.dumps(
            {"yes_no_p_yes": 0.9, "yes_no_r_yes": 0.9, "yes_no_f_yes": f_yes, "yes_no_p_no": 0.5, "yes_no_r_no": 0.5,
             "yes_no_f_no": f_no, "baselines": majority}))
    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps({"bio_electra_2020": {
        "models": {"bio_electra": "Bio-ELECTRA"}, "yesno_bioasq8b": {"bio_electra": [1, 2, 92.66, 4, 5, 58.18]}}}))
    output = tmp_path / "tables" / "yes_no_seeds.md"
    files = sorted(tmp_path.glob("yes_no_seed*_test.json"))
    table = write_qa_seeds_table(output, "yes_no", {"3 epochs": files}, paper)
    spread_yes, spread_no = 100 * math.sqrt(0.005), 100 * math.sqrt(0.02)  # sample std of (.9, .8) and (.4, .6)
    assert [line for line in table.splitlines() if line.startswith("| ")] == [
        "| model | P yes | R yes | F1 yes | P no | R no | F1 no | seeds |",
        f"| 3 epochs (ours) | 90.00 (0.00) | 90.00 (0.00) | 85.00 ({spread_yes:.2f}) | 50.00 (0.00) | 50.00 (0.00) "
        f"| 50.00 ({spread_no:.2f}) | 2 |",
        "| majority class (always yes) (baseline) |  |  | 85.71 |  |  | 0.00 |  |",
        "| Bio-ELECTRA (paper) | 1.00 | 2.00 | 92.66 | 4.00 | 5.00 | 58.18 |  |",
    ]
    # The table, then a last line naming the run (commit, date) that its JSON records too.
    from spacy_biolm.run_record import run_comment

    written = json.loads(output.with_suffix(".json").read_text())
    assert output.read_text(encoding="utf8") == table.rstrip("\n") + "\n" + run_comment(written["run"])
    assert written["task"] == "yes_no" and written["rows"]["3 epochs"]["files"] == [str(f) for f in files]


def test_seeds_table_cli_names_a_row_without_files(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    result = CliRunner().invoke(app, ["qa", "seeds-table", str(tmp_path / "t.md"), "yes_no", f"none={tmp_path}/x*.json"])
    assert result.exit_code == 1 and "none: no score files" in result.output
    unknown = CliRunner().invoke(app, ["qa", "seeds-table", str(tmp_path / "t.md"), "yes_maybe", f"none={tmp_path}/x*.json"])
    assert unknown.exit_code == 1 and "unknown QA task 'yes_maybe'" in unknown.output


def test_seeds_table_takes_the_baselines_from_whichever_seed_file_reports_them(tmp_path):
    random_order = {"BM25 of the question's terms": {"rerank_mrr": 0.258}}
    (tmp_path / "seed0.json").write_text(json.dumps({"rerank_mrr": 0.28}))  # `qa evaluate` without baselines
    (tmp_path / "seed1.json").write_text(json.dumps({"rerank_mrr": 0.30, "baselines": random_order}))
    table = write_qa_seeds_table(tmp_path / "t.md", "answer_reranker", {"fused": sorted(tmp_path.glob("seed*.json"))})
    assert [line for line in table.splitlines() if line.startswith("| ")][1:] == [
        f"| fused (ours) | 0.290 ({math.sqrt(0.0002):.3f}) | 2 |",
        "| BM25 of the question's terms (baseline) | 0.258 |  |",
    ]


def test_answer_lengths_count_words_wordpieces_and_answers_too_long_to_decode(tmp_path):
    import spacy
    from typer.testing import CliRunner

    from spacy_biolm.cli import app
    from spacy_biolm.corpora.qa import convert_qa
    from spacy_biolm.testing import make_tiny_encoder

    nlp = spacy.blank("en")
    long = " ".join(["x"] * 31)  # 31 wordpieces in any vocabulary that splits on spaces
    context = f"BRCA1 is mutated. The answer is {long} here."
    squad = {"data": [{"title": "t", "paragraphs": [{"context": context, "qas": [
        {"id": "1", "question": "Which gene?", "answers": [{"text": "BRCA1", "answer_start": 0}]},
        {"id": "2", "question": "Which long answer?", "answers": [{"text": long, "answer_start": context.index(long)}]},
        {"id": "3", "question": "Which two words?", "answers": [{"text": "is mutated", "answer_start": 6}]}]}]}]}
    (tmp_path / "squad.json").write_text(json.dumps(squad), encoding="utf8")
    convert_qa("squad", tmp_path / "squad.json", tmp_path / "answers.spacy", nlp)
    encoder = make_tiny_encoder(tmp_path / "encoder", layers=1)
    out = tmp_path / "lengths.json"
    result = CliRunner().invoke(app, ["qa", "answer-lengths", str(out), f"toy={tmp_path / 'answers.spacy'}", "--encoder", str(encoder)])
    assert result.exit_code == 0, result.output
    stats = json.loads(out.read_text())["sets"]["toy"]
    assert stats["questions"] == 3 and stats["median_words"] == 2 and stats["mean_words"] == round((1 + 31 + 2) / 3, 2)
    assert stats["share_over_30_wordpieces"] == round(1 / 3, 4) and stats["median_wordpieces"] >= 2
    empty = CliRunner().invoke(app, ["qa", "answer-lengths", str(out), f"none={tmp_path / 'missing.spacy'}", "--encoder", str(encoder)])
    assert empty.exit_code == 1 and "missing.spacy" in empty.output
