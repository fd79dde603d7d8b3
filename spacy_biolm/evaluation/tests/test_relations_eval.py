"""Relation runs: mode switching, fold summaries and the paper table."""

import json
from pathlib import Path

import pytest
from spacy.util import load_config

from spacy_biolm.evaluation.relations import apply_mode, cv_markdown, relations_table, summarise_folds

REPO = Path(__file__).resolve().parents[3]
PAPER = REPO.parent / "shared" / "reference" / "paper_results.json"


@pytest.mark.parametrize("name", ["relations_gad.cfg", "relations_chemprot.cfg"])
def test_modes_switch_pipeline_and_model(name):
    config = load_config(REPO / "configs" / name, interpolate=False)
    fast = apply_mode(config, "fast")
    assert fast["nlp"]["pipeline"] == ["transformer", "relation_extractor"]
    assert fast["components"]["relation_extractor"]["model"]["@architectures"] == "spacy-biolm.SpanPairRelationModel.v1"
    anonymised = apply_mode(config, "anonymised")
    assert anonymised["nlp"]["pipeline"] == ["relation_extractor"]
    assert "transformer" not in anonymised["components"]
    assert anonymised["components"]["relation_extractor"]["model"]["@architectures"] == "spacy-biolm.AnonymisedRelationModel.v1"
    assert config["nlp"]["pipeline"] == ["transformer", "relation_extractor"]  # the input is not modified
    with pytest.raises(ValueError, match="unknown relation mode"):
        apply_mode(config, "marker")


def test_fold_summary_mean_and_sample_std(tmp_path):
    folds = [{"fold": 1, "rel_micro_p": 0.5, "rel_micro_r": 1.0, "rel_micro_f": 0.6, "pairs": 10},
             {"fold": 2, "rel_micro_p": 0.7, "rel_micro_r": 0.8, "rel_micro_f": 0.8, "pairs": 12}]
    summary = summarise_folds(folds)
    assert summary["rel_micro_p_mean"] == pytest.approx(60.0)
    assert summary["rel_micro_f_std"] == pytest.approx(14.142135, rel=1e-5)  # sample std of 60, 80
    summary["mode"] = "fast"
    assert "| mean (std) | 60.00 (14.14) | 90.00 (14.14) | 70.00 (14.14) | |" in cv_markdown(summary)
    (tmp_path / "cv.json").write_text(json.dumps(summary))
    (tmp_path / "one.json").write_text(json.dumps({"rel_micro_p": 0.25, "rel_micro_r": 0.5, "rel_micro_f": 1 / 3}))
    table = relations_table({"cv": tmp_path / "cv.json", "one": tmp_path / "one.json"}, "GAD",
                            PAPER if PAPER.is_file() else None)
    assert "| cv | 60.00 (14.14) | 90.00 (14.14) | 70.00 (14.14) |" in table
    assert "| one | 25.00 | 50.00 | 33.33 |" in table
    if PAPER.is_file():
        assert "| Bio-ELECTRA (14M, PubMed abstracts, 1.8M steps) (paper) | 72.48 | 92.70 | 81.66 |" in table
