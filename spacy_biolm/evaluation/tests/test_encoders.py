"""The encoder ablation: the choice on dev, the table, the pretraining record, and one real run of
two encoders through the NER recipe (resumable)."""

import json
import shutil

import pytest

from spacy_biolm.evaluation.encoders import (
    ENCODERS_END,
    ENCODERS_START,
    ablation_table,
    choose_encoder,
    pretraining_record,
    readme_encoders,
    run_encoder_ablation,
)


def _task(test, dev, dev_values=None):
    dev_values = dev_values or [dev] * 3
    return {"test": {"mean": test, "std": 0.01}, "dev": {"mean": dev, "std": 0.0, "values": dev_values},
            "fine_tuning_seconds": 60.0}


def _results():
    return {
        "seeds": [0, 1, 2],
        "tasks": {"ncbi": {"title": "NCBI-disease F1"}, "gad": {"title": "GAD fold 1 F1"}},
        "encoders": {
            # best on test, worse on dev: dev decides
            "scratch": {"pretraining": {"heldout": {"disc_loss": 0.31, "gen_loss": 6.2}, "seconds": 900.0},
                        "tasks": {"ncbi": _task(0.80, 0.70), "gad": _task(0.70, 0.60)}},
            "minilm": {"pretraining": {}, "tasks": {"ncbi": _task(0.78, 0.75), "gad": _task(0.69, 0.66)}},
        },
    }


def test_the_encoder_best_on_dev_is_chosen_and_the_table_says_so():
    results = _results()
    assert choose_encoder(results) == "minilm"
    results["chosen"] = "minilm"
    lines = ablation_table(results).splitlines()
    assert lines[0] == ("| encoder | held-out RTD / MLM loss | NCBI-disease F1 (test) | GAD fold 1 F1 (test) | mean dev (seed std) "
                        "| pretraining s | fine-tuning s |")
    assert lines[2] == "| scratch | 0.310 / 6.200 | 80.00 (1.00) | 70.00 (1.00) | 65.00 (0.00) | 900 | 120 |"
    assert lines[3] == "| **minilm** (chosen) | n/a / n/a | 78.00 (1.00) | 69.00 (1.00) | 70.50 (0.00) | n/a | 120 |"
    results["encoders"]["minilm"]["tasks"]["ncbi"]["test"]["n"] = 1
    assert "| **minilm** (chosen) | n/a / n/a | 78.00 | 69.00 (1.00) |" in ablation_table(results)  # one seed: no std
    del results["encoders"]["minilm"]["tasks"]["gad"]["dev"]
    assert choose_encoder(results) == "scratch"  # an encoder without every dev score cannot be chosen


def test_a_candidate_replaces_the_reference_only_by_more_than_the_seed_std_of_mean_dev():
    results = _results()
    # per-seed mean dev: minilm 0.705 each seed; scratch (0.70,0.80,0.90)/(0.60,0.70,0.80) -> 0.65, 0.75, 0.85
    results["encoders"]["scratch"]["tasks"] = {"ncbi": _task(0.8, 0.8, [0.70, 0.80, 0.90]),
                                               "gad": _task(0.7, 0.7, [0.60, 0.70, 0.80])}
    assert choose_encoder(results) == "scratch"  # mean dev 0.75 against 0.705
    assert choose_encoder(results, reference="minilm") == "minilm"  # lead 0.045 < seed std 0.10
    results["encoders"]["scratch"]["tasks"]["gad"] = _task(0.7, 0.9, [0.85, 0.90, 0.95])  # means 0.775 .. 0.925
    assert choose_encoder(results, reference="minilm") == "scratch"  # lead 0.145 > seed std 0.075


def test_the_readme_block_says_when_the_reference_keeps_its_place(tmp_path):
    results = _results()
    for task in results["tasks"].values():
        task["overrides"] = {}
    results.update(best_on_dev="scratch", reference="minilm", chosen="minilm")
    path = tmp_path / "encoders.json"
    path.write_text(json.dumps(results))
    assert readme_encoders(path).endswith(
        "Best mean dev score: **scratch**, by less than the seed std of that score over **minilm**, the reference, "
        "which stays the choice: **minilm**.\n")


def test_readme_block_is_generated_from_the_results_file(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    results = _results()
    results["tasks"]["ncbi"]["overrides"] = {"training.max_steps": "200"}
    results["tasks"]["gad"]["overrides"] = {}
    results["chosen"] = choose_encoder(results)
    path = tmp_path / "encoders.json"
    assert readme_encoders(path).startswith("No ablation results yet")
    path.write_text(json.dumps(results))
    block = readme_encoders(path)
    assert block.startswith("Seeds 0, 1, 2 (3 per encoder and task), test mean (std) in percent; budgets: "
                            "NCBI-disease F1: training.max_steps 200; GAD fold 1 F1: its config's.")
    assert ablation_table(results) in block and block.endswith("Best mean dev score: **minilm**; it is the choice.\n")
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{ENCODERS_START}\nold\n{ENCODERS_END}\nrest\n")
    result = CliRunner().invoke(app, ["docs", "encoders-table", str(path), "--readme", str(readme)])
    assert result.exit_code == 0, result.output
    assert readme.read_text() == f"# x\n{ENCODERS_START}\n{block}{ENCODERS_END}\nrest\n"


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
