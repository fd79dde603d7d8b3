"""The encoder ablation: the pretraining record, and one real run of two encoders through the NER
recipe (resumable)."""

import json
import shutil

import pytest

from spacy_biolm.experiments.encoders import pretraining_record, run_encoder_ablation


def test_pretraining_record_reads_the_run_beside_the_model(tmp_path):
    (tmp_path / "model").mkdir()
    assert pretraining_record(tmp_path / "model") == {}
    (tmp_path / "pretrain_summary.json").write_text(json.dumps({
        "steps": 112, "seconds_this_run": 960.0, "device": "cpu", "tokens_per_second": 397.0, "continued_from": "minilm",
        "heldout": {"step": 112, "disc_loss": 0.28, "gen_loss": 5.9, "disc_acc": 0.887}}))
    record = pretraining_record(tmp_path / "model")
    assert record["heldout"] == {"disc_loss": 0.28, "gen_loss": 5.9, "disc_acc": 0.887}
    assert record["steps"] == 112 and record["seconds"] == 960.0
    # A released encoder (released/<name>/) keeps its run's summary inside.
    released = tmp_path / "released" / "bio"
    released.mkdir(parents=True)
    (released / "pretrain_summary.json").write_text(json.dumps({"steps": 4000, "heldout": {"disc_loss": 0.116}}))
    assert pretraining_record(released)["steps"] == 4000


def test_two_encoders_run_through_the_ner_recipe_and_resume(tmp_path, tiny_encoder):
    from spacy_biolm.corpora.conll import convert_ner
    from spacy_biolm.testing import REPO, disease_sentences, write_conll

    corpus = tmp_path / "corpus" / "ner" / "NCBI-disease"
    corpus.mkdir(parents=True)
    for split, seed in (("train", 0), ("devel", 1), ("test", 2)):
        convert_ner(write_conll(tmp_path / f"{split}.tsv", disease_sentences(16, seed=seed)), corpus / f"{split}.spacy")
    (tmp_path / "configs").mkdir()
    shutil.copy(REPO / "configs" / "ner.cfg", tmp_path / "configs" / "ner.cfg")
    encoders = {"a": tiny_encoder, "b": tiny_encoder}
    budget = {"ncbi": {"training.max_steps": 2, "training.eval_frequency": 1}}
    # 2 updates, evaluated every 100 (the config's): model-best would be the untrained state.
    with pytest.raises(ValueError, match="ncbi: training.eval_frequency 100 does not divide training.max_steps 2"):
        run_encoder_ablation(encoders, tmp_path / "runs", ["ncbi"], [0], {"ncbi": {"training.max_steps": 2}}, project_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="BC2GM"):
        run_encoder_ablation(encoders, tmp_path / "runs", ["ncbi", "bc2gm"], [0], budget, project_dir=tmp_path)
    results = run_encoder_ablation(encoders, tmp_path / "runs", ["ncbi"], [0], budget, project_dir=tmp_path)
    assert set(results["encoders"]) == {"a", "b"} and results["chosen"] in {"a", "b"}
    ncbi = results["encoders"]["a"]["tasks"]["ncbi"]
    assert ncbi["test"]["n"] == 1 and ncbi["dev"]["n"] == 1 and ncbi["fine_tuning_seconds"] > 0
    assert json.loads((tmp_path / "runs" / "encoders.json").read_text())["chosen"] == results["chosen"]
    # Scored runs are read back, not trained again.
    shutil.rmtree(tmp_path / "runs" / "a" / "ncbi" / "seed_0" / "model-last")
    again = run_encoder_ablation(encoders, tmp_path / "runs", ["ncbi"], [0], budget, project_dir=tmp_path)
    assert again["encoders"]["a"]["tasks"] == results["encoders"]["a"]["tasks"]
    # The command line reads budgets as spaCy does (0.0001 is a float), and a changed recipe never
    # reuses the runs of the old one.
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    args = ["evaluate", "encoders", f"a={tiny_encoder}", "--tasks", "ncbi", "--seeds", "1", "--output", str(tmp_path / "runs"),
            "--results", str(tmp_path / "r.json"), "--project", str(tmp_path),
            "--budget", "ncbi:training.max_steps=2", "--budget", "ncbi:training.eval_frequency=1"]
    reused = CliRunner().invoke(app, args)
    assert reused.exit_code == 0, reused.output
    assert json.loads((tmp_path / "r.json").read_text())["encoders"]["a"]["tasks"] == results["encoders"]["a"]["tasks"]
    changed = CliRunner().invoke(app, [*args, "--budget", "ncbi:training.optimizer.learn_rate.initial_rate=0.0001"])
    assert changed.exit_code == 1 and "seed_0 was trained with another recipe" in " ".join(changed.output.split())


def test_a_reference_that_is_not_among_the_encoders_is_refused_before_any_training(tmp_path):
    encoder = tmp_path / "a"
    encoder.mkdir()
    (encoder / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="the reference encoder 'minilm' \\(not among \\['a'\\]\\)"):
        run_encoder_ablation({"a": encoder}, tmp_path / "runs", tasks=["ncbi"], reference="minilm", project_dir=tmp_path)
    assert not (tmp_path / "runs").exists()
