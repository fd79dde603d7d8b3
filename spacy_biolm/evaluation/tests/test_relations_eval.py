"""Relation runs: one config per task and mode, fold summaries and the paper table."""

import json
from pathlib import Path

import pytest
from spacy.util import load_config

from spacy_biolm.evaluation.relations import cv_markdown, relation_architecture, relations_table, summarise_folds

REPO = Path(__file__).resolve().parents[3]
PAPER = REPO.parent / "shared" / "reference" / "paper_results.json"


def test_each_mode_is_its_own_config():
    fast = REPO / "configs" / "relations_fast.cfg"
    anonymised = REPO / "configs" / "relations_anonymised.cfg"
    assert relation_architecture(fast) == "spacy-biolm.RelationFast.v1"
    assert relation_architecture(anonymised) == "spacy-biolm.RelationAnonymised.v1"
    assert load_config(fast, interpolate=False)["nlp"]["pipeline"] == ["transformer", "relation_extractor"]
    config = load_config(anonymised, interpolate=False)
    assert config["nlp"]["pipeline"] == ["relation_extractor"] and "transformer" not in config["components"]
    assert config["components"]["relation_extractor"]["model"]["encoder"]["@architectures"] == "spacy-biolm.PairEncoder.v1"
    # Same task settings in both modes: only the input mode differs.
    fast_settings = dict(load_config(fast, interpolate=False)["components"]["relation_extractor"])
    anonymised_settings = dict(config["components"]["relation_extractor"])
    assert {k: v for k, v in fast_settings.items() if k != "model"} == \
        {k: v for k, v in anonymised_settings.items() if k != "model"}
    with pytest.raises(ValueError, match="no \\[components.relation_extractor.model\\]"):
        relation_architecture(REPO / "configs" / "yes_no.cfg")


def test_fold_summary_mean_and_sample_std(tmp_path):
    folds = [{"fold": 1, "rel_micro_p": 0.5, "rel_micro_r": 1.0, "rel_micro_f": 0.6, "pairs": 10},
             {"fold": 2, "rel_micro_p": 0.7, "rel_micro_r": 0.8, "rel_micro_f": 0.8, "pairs": 12}]
    summary = summarise_folds(folds)
    assert summary["rel_micro_p_mean"] == pytest.approx(60.0)
    assert summary["rel_micro_f_std"] == pytest.approx(14.142135, rel=1e-5)  # sample std of 60, 80
    summary.update({"config": "configs/relations_fast.cfg", "architecture": "spacy-biolm.RelationFast.v1"})
    assert "| mean (std) | 60.00 (14.14) | 90.00 (14.14) | 70.00 (14.14) | |" in cv_markdown(summary)
    (tmp_path / "cv.json").write_text(json.dumps(summary))
    (tmp_path / "one.json").write_text(json.dumps({"rel_micro_p": 0.25, "rel_micro_r": 0.5, "rel_micro_f": 1 / 3}))
    table = relations_table({"cv": tmp_path / "cv.json", "one": tmp_path / "one.json"}, "GAD",
                            PAPER if PAPER.is_file() else None)
    assert "| cv | 60.00 (14.14) | 90.00 (14.14) | 70.00 (14.14) |" in table
    assert "| one | 25.00 | 50.00 | 33.33 |" in table
    if PAPER.is_file():
        assert "| Bio-ELECTRA (14M, PubMed abstracts, 1.8M steps) (paper) | 72.48 | 92.70 | 81.66 |" in table


def test_fold_baselines_are_averaged_and_shown_beside_ours(tmp_path):
    baseline = "all positive (ASSOCIATION)"
    folds = [{"fold": k, "rel_micro_p": 0.5, "rel_micro_r": 0.5, "rel_micro_f": 0.5, "pairs": 4,
              "baselines": {baseline: {"rel_micro_p": p, "rel_micro_r": 1.0, "rel_micro_f": f}}}
             for k, (p, f) in enumerate([(0.4, 0.6), (0.6, 0.8)], start=1)]
    summary = summarise_folds(folds)
    assert summary["baselines"][baseline]["rel_micro_f_mean"] == pytest.approx(70.0)
    summary.update({"config": "c.cfg", "architecture": "a"})
    assert f"| {baseline} (baseline), mean (std) | 50.00 (14.14) | 100.00 (0.00) | 70.00 (14.14) | |" in cv_markdown(summary)
    (tmp_path / "cv.json").write_text(json.dumps(summary))
    table = relations_table({"cv": tmp_path / "cv.json"}, "GAD")
    assert f"| {baseline}, same test Docs as cv (baseline) | 50.00 (14.14) | 100.00 (0.00) | 70.00 (14.14) |" in table
