"""The encoder ablation's results: the choice on dev, the table and README's block."""

import json

from spacy_biolm.evaluation.encoder_choice import (
    ENCODERS_END,
    ENCODERS_START,
    ablation_table,
    choose_encoder,
    readme_encoders,
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
