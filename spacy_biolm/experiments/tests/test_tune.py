"""Hyperopt search wiring: trials train real (toy) pipelines, the objective is the dev score,
the search resumes from its saved trials, and the best values land in a loadable config."""

import json

import pytest
from thinc.api import Config

from spacy_biolm.experiments.tune import load_space, tune


@pytest.fixture
def toy_data(tmp_path):
    from spacy_biolm.testing import disease_sentences, write_conll

    from spacy_biolm.corpora.conll import convert_ner

    paths = {}
    for split, seed in (("train", 0), ("dev", 1)):
        paths[split] = tmp_path / f"{split}.spacy"
        convert_ner(write_conll(tmp_path / f"{split}.tsv", disease_sentences(30, seed=seed)), paths[split])
    return paths


def test_two_trials_then_resume_to_three(tmp_path, toy_data):
    from spacy_biolm.testing import REPO

    space_file = tmp_path / "space.cfg"
    space_file.write_text("[space]\ntraining.max_steps = [2, 20]\ntraining.optimizer.learn_rate.initial_rate = [0.001, 0.002]\n")
    space = load_space(space_file)
    overrides = {"paths.train": str(toy_data["train"]), "paths.dev": str(toy_data["dev"]),
                 "training.eval_frequency": 2}
    out = tmp_path / "tune"
    best = tune(REPO / "configs" / "ner_cnn.cfg", out, space, max_evals=2, overrides=overrides)
    log = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert [r["trial"] for r in log] == [0, 1] and best["trials"] == 2
    # The objective is the dev score that spaCy recorded for each trial's model-best.
    for record in log:
        meta = json.loads((out / f"trial_{record['trial']:03d}" / "model-best" / "meta.json").read_text())
        assert record["ents_f"] == meta["performance"]["ents_f"]
    assert best["dev_score"] == max(r["ents_f"] for r in log)
    best_record = next(r for r in log if r["trial"] == best["trial"])
    assert best["params"] == best_record["params"]
    config = Config().from_disk(out / "best.cfg", interpolate=False)
    assert config["training"]["max_steps"] == best["params"]["training.max_steps"]
    assert config["paths"]["train"] == str(toy_data["train"])

    again = tune(REPO / "configs" / "ner_cnn.cfg", out, space, max_evals=3, overrides=overrides)
    assert again["trials"] == 3 and len((out / "trials.jsonl").read_text().splitlines()) == 3


def test_space_errors_name_the_problem(tmp_path):
    from spacy_biolm.testing import REPO

    bad = tmp_path / "bad.cfg"
    bad.write_text("[space]\ntraining.max_steps = 5\n")
    with pytest.raises(ValueError, match="non-empty list"):
        load_space(bad)
    typo = tmp_path / "typo.cfg"
    typo.write_text("[space]\ntraining.max_step = [1, 2]\n")
    with pytest.raises(KeyError, match="training.max_step"):
        tune(REPO / "configs" / "ner_cnn.cfg", tmp_path / "t", load_space(typo), max_evals=1)
