"""HoC over several seeds: trained, tuned, tested, timed, and reused (re-tuned, never retrained)."""

import json

import pytest

from spacy_biolm.evaluation.tests.test_hoc_eval import LABELS, TEXTS, bow_pipeline  # noqa: F401 (a fixture)
from spacy_biolm.experiments.hoc import evaluate_hoc_seeds


def test_seeds_are_trained_tuned_tested_timed_and_reused(bow_pipeline, tmp_path, monkeypatch):
    from pathlib import Path

    import spacy.cli.train

    config = Path(__file__).resolve().parents[3] / "configs" / "hoc_bow.cfg"
    data = bow_pipeline[1]
    overrides = {"training.max_steps": 12, "training.eval_frequency": 6, "training.batcher.size": 2}
    result = evaluate_hoc_seeds({"bow": config}, tmp_path / "runs", data, data, data, [1, 2], overrides)
    runs = result["rows"]["bow"]["runs"]
    assert [run["seed"] for run in runs] == [1, 2] and result["device"].startswith("cpu")
    for run in runs:
        tuned = json.loads((tmp_path / "runs" / "hoc_bow" / f"seed_{run['seed']}" / "model-best" / "thresholds.json").read_text())
        # The row's dev score is the tuned one, not the untuned score spacy train recorded.
        assert run["dev_cats_micro_f"] == tuned["dev_tuned"]["cats_micro_f"]
        assert run["thresholds"] == tuned["thresholds"] and set(run["cats_f_per_type"]) == set(LABELS)
        assert run["train_seconds"] > 0 and run["documents"] == len(TEXTS)
    summary = result["rows"]["bow"]["summary"]["cats_micro_f"]
    assert summary["n"] == 2 and summary["values"] == [run["cats_micro_f"] for run in runs]

    def no_training(*args, **kwargs):
        raise AssertionError("a scored seed was trained again")

    monkeypatch.setattr(spacy.cli.train, "train", no_training)
    again = evaluate_hoc_seeds({"bow": config}, tmp_path / "runs", data, data, data, [1, 2], overrides)
    assert again["rows"]["bow"]["runs"] == runs and again["objective"] == "label_f1"
    # Another objective re-tunes and re-tests the scored runs without training them again.
    retuned = evaluate_hoc_seeds({"bow": config}, tmp_path / "runs", data, data, data, [1, 2], overrides, objective="micro_f1")
    for run, old in zip(retuned["rows"]["bow"]["runs"], runs):
        assert run["objective"] == "micro_f1" and old["objective"] == "label_f1"
        assert run["train_seconds"] == old["train_seconds"]
        tuned = json.loads((tmp_path / "runs" / "hoc_bow" / f"seed_{run['seed']}" / "model-best" / "thresholds.json").read_text())
        assert tuned["objective"] == "micro_f1" and run["thresholds"] == tuned["thresholds"]
    # A changed recipe never reuses runs trained with the old one.
    with pytest.raises(ValueError, match="seed_1 was trained with another recipe"):
        evaluate_hoc_seeds({"bow": config}, tmp_path / "runs", data, data, data, [1, 2], {**overrides, "training.max_steps": 13})
