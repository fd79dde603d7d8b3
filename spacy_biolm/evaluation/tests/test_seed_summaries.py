"""Multi-seed results: the mean (std) maths on known numbers and the tables beside the paper."""

import json
import math

import pytest

from spacy_biolm.evaluation.seed_summaries import format_mean_std, seeds_table, summarise, summarise_score_files


def test_mean_and_sample_standard_deviation():
    runs = [{"f": 0.70, "p": 0.9}, {"f": 0.80, "p": 0.9}, {"f": 0.90, "p": None}]
    summary = summarise(runs, ["f", "p"])
    assert summary["f"]["mean"] == pytest.approx(0.80)
    assert summary["f"]["std"] == pytest.approx(0.10)  # sqrt(((-.1)^2 + 0 + .1^2) / (3 - 1))
    assert summary["p"] == {"mean": 0.9, "std": 0.0, "n": 2, "values": [0.9, 0.9]}  # None is no score
    assert summarise([{"f": 0.5}], ["f"])["f"]["std"] == 0.0
    assert format_mean_std(0.78321, 0.004449) == "78.32 (0.44)"
    with pytest.raises(KeyError, match="ents_f"):
        summarise(runs, ["ents_f"])


def test_seed_files_summarised_with_the_bad_file_named(tmp_path):
    for seed, f_no in enumerate([0.40, 0.60]):
        (tmp_path / f"yes_no_seed{seed}_test.json").write_text(json.dumps({"yes_no_f_no": f_no, "device": "gpu"}))
    files = sorted(tmp_path.glob("yes_no_seed*_test.json"))
    results = summarise_score_files({"3 epochs": files}, ["yes_no_f_no"])
    assert results["3 epochs"]["files"] == [str(f) for f in files]
    assert results["3 epochs"]["summary"]["yes_no_f_no"]["mean"] == pytest.approx(0.50)
    assert results["3 epochs"]["summary"]["yes_no_f_no"]["std"] == pytest.approx(math.sqrt(0.02))
    with pytest.raises(KeyError, match="yes_no_seed0_test.json.*yes_no_acc"):
        summarise_score_files({"3 epochs": files}, ["yes_no_acc"])
    with pytest.raises(ValueError, match="5 epochs: no score files"):
        summarise_score_files({"5 epochs": []}, ["yes_no_f_no"])


def test_table_has_our_mean_std_row_then_the_papers():
    summary = summarise([{"ents_f": 0.6}, {"ents_f": 0.8}], ["ents_f"])
    table = seeds_table("tiny", summary, {"ents_f": "F1"}, [["Bio-ELECTRA (paper)", "78.32"]])
    lines = table.splitlines()
    assert lines[0] == "| model | F1 |"
    assert lines[2] == f"| tiny (ours, 2 seeds) | 70.00 ({100 * math.sqrt(0.02):.2f}) |"
    assert lines[3] == "| Bio-ELECTRA (paper) | 78.32 |"


def _seed_summary(dataset_dir, f1_values):
    """A seeds_summary.json as `evaluate` writes it, with known F1 values (P = R = F1)."""
    runs = [{"seed": i + 1, "ents_p": f, "ents_r": f, "ents_f": f} for i, f in enumerate(f1_values)]
    dataset_dir.mkdir(parents=True)
    result = {"runs": runs, "summary": summarise(runs, ["ents_p", "ents_r", "ents_f"])}
    (dataset_dir / "seeds_summary.json").write_text(json.dumps(result))


def test_datasets_table_beside_the_paper_and_a_dash_where_it_has_no_score(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    _seed_summary(tmp_path / "ncbi", [0.60, 0.70, 0.80])
    _seed_summary(tmp_path / "jnlpba", [0.50, 0.50, 0.50])
    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps({"bio_electra_2020": {
        "models": {"bio_electra": "Bio-ELECTRA (14M params)", "bert_base": "BERT Base cased (110M)"},
        "ner": {"table": 4, "NCBI-disease": {"bio_electra": [73.47, 83.88, 78.32], "bert_base": [85.4, 87.1, 86.24]}},
    }}))
    out = tmp_path / "table" / "ner.md"
    cli = CliRunner().invoke(app, ["evaluate", "seeds-table", str(out), f"NCBI-disease={tmp_path / 'ncbi'}",
                                   f"JNLPBA={tmp_path / 'jnlpba'}", "--paper", str(paper)])
    assert cli.exit_code == 0, cli.output
    lines = out.read_text().splitlines()
    assert lines[2] == "| dataset | seeds | P (ours) | R (ours) | F1 (ours) | Bio-ELECTRA F1 (paper) | BERT Base cased F1 (paper) |"
    assert lines[4] == "| NCBI-disease | 3 | 70.00 (10.00) | 70.00 (10.00) | 70.00 (10.00) | 78.32 | 86.24 |"
    assert lines[5] == "| JNLPBA | 3 | 50.00 (0.00) | 50.00 (0.00) | 50.00 (0.00) | – | – |"
    assert json.loads(out.with_suffix(".json").read_text())["JNLPBA"]["summary"]["ents_f"]["mean"] == 0.5
    assert out.with_suffix(".png").stat().st_size > 1000
    missing = CliRunner().invoke(app, ["evaluate", "seeds-table", str(out), f"BC2GM={tmp_path / 'none'}"])
    assert missing.exit_code != 0 and "BC2GM first" in missing.output  # names the dataset to run
