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


def test_found_entities_replace_the_gold_ones_for_end_to_end_scores():
    import spacy
    from spacy.training import Example

    from spacy_biolm.doc_data import Relation, get_relations, set_relations
    from spacy_biolm.evaluation.relations import with_found_entities
    from spacy_biolm.pipes.relation_extractor.scorer import score_relations

    finder = spacy.blank("en")
    finder.add_pipe("entity_ruler").add_patterns([
        {"label": "CHEMICAL", "pattern": "aspirin"}, {"label": "GENE", "pattern": "COX-2"}, {"label": "SPECIES", "pattern": "rat"}])
    nlp = spacy.blank("en")
    reference = nlp("aspirin inhibits COX-2 but not COX-1 in rat liver")
    reference.ents = [reference.char_span(*where) for where in ((0, 7, "CHEMICAL"), (17, 22, "GENE"), (31, 36, "GENE"))]
    set_relations(reference, [Relation(reference.ents[0], reference.ents[1], "CPR:4"),
                              Relation(reference.ents[0], reference.ents[2], "CPR:4")])
    (example,) = with_found_entities(finder, nlp, [Example(nlp.make_doc(reference.text), reference)], [["CHEMICAL", "GENE"]])
    assert example.predicted.vocab is nlp.vocab
    # SPECIES is no pair's type: an extractor would read it as an "other entity" it never saw.
    assert [(e.text, e.label_) for e in example.predicted.ents] == [("aspirin", "CHEMICAL"), ("COX-2", "GENE")]
    chemical, gene = example.predicted.ents
    set_relations(example.predicted, [Relation(chemical, gene, "CPR:4")])
    scores = score_relations([example])
    assert (scores["rel_micro_p"], scores["rel_micro_r"]) == (1.0, 0.5)  # COX-1 was never found
    assert len(get_relations(example.reference)) == 2
    with pytest.raises(ValueError, match=r"finds \['CHEMICAL', 'GENE', 'SPECIES'\]; the relation extractor pairs \['DISEASE', 'GENE'\]"):
        with_found_entities(finder, nlp, [example], [["GENE", "DISEASE"]])


def test_end_to_end_table_names_the_entities_found(tmp_path):
    prf = {"rel_micro_p": 0.5, "rel_micro_r": 0.25, "rel_micro_f": 1 / 3}
    (tmp_path / "gold.json").write_text(json.dumps(prf), encoding="utf8")
    found = {**prf, "entities": {"ents_per_type": {"CHEMICAL": {"p": 0.8, "r": 0.6, "f": 0.6857}}}}
    (tmp_path / "found.json").write_text(json.dumps(found), encoding="utf8")
    table = relations_table({"gold entities": tmp_path / "gold.json", "entities found": tmp_path / "found.json"}, "CHEMPROT")
    assert "| entities found | 50.00 | 25.00 | 33.33 |" in table
    assert table.count("against the gold ones") == 1
    assert "entities found: the entities found against the gold ones: CHEMICAL P 80.0, R 60.0, F1 68.6." in table
