"""Multi-seed evaluation: the mean (std) maths on known numbers, and two real seeds of a small
CNN NER pipeline trained and tested end to end (resumable)."""

import json
import math
import shutil

import pytest

from spacy_biolm.evaluation.seeds import format_mean_std, plot_seed_scores, run_seeds, seeds_table, summarise


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


def test_table_has_our_mean_std_row_then_the_papers():
    summary = summarise([{"ents_f": 0.6}, {"ents_f": 0.8}], ["ents_f"])
    table = seeds_table("tiny", summary, {"ents_f": "F1"}, [["Bio-ELECTRA (paper)", "78.32"]])
    lines = table.splitlines()
    assert lines[0] == "| model | F1 |"
    assert lines[2] == f"| tiny (ours, 2 seeds) | 70.00 ({100 * math.sqrt(0.02):.2f}) |"
    assert lines[3] == "| Bio-ELECTRA (paper) | 78.32 |"


def test_two_seeds_train_score_and_resume(tmp_path):
    from tests.conftest import REPO, disease_sentences, write_conll

    from spacy_biolm.corpora.conll import convert_ner

    paths = {}
    for split, seed in (("train", 0), ("dev", 1), ("test", 2)):
        conll = write_conll(tmp_path / f"{split}.tsv", disease_sentences(40, seed=seed))
        paths[split] = tmp_path / f"{split}.spacy"
        convert_ner(conll, paths[split])
    overrides = {"paths.train": str(paths["train"]), "paths.dev": str(paths["dev"]), "training.max_steps": 30,
                 "training.eval_frequency": 10, "training.batcher.seconds": 60}
    out = tmp_path / "seeds"
    result = run_seeds(REPO / "configs" / "ner_cnn.cfg", out, paths["test"], seeds=[1, 2], overrides=overrides)
    assert [run["seed"] for run in result["runs"]] == [1, 2]
    f1 = [run["ents_f"] for run in result["runs"]]
    assert result["summary"]["ents_f"]["mean"] == pytest.approx(sum(f1) / 2)
    assert json.loads((out / "seeds_summary.json").read_text())["summary"]["ents_f"]["n"] == 2
    assert plot_seed_scores(result["runs"], {"ents_f": "F1"}, tmp_path / "seeds.png", "toy").stat().st_size > 1000
    # Scored seeds are not trained again: remove a trained model and the summary still comes back.
    shutil.rmtree(out / "seed_1" / "model-last")
    again = run_seeds(REPO / "configs" / "ner_cnn.cfg", out, paths["test"], seeds=[1, 2], overrides=overrides)
    assert again["summary"] == result["summary"]
    # The CLI writes the table beside the paper's rows and the plot (seeds already scored: no training).
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps({"bio_electra_2020": {"models": {"bio_electra": "Bio-ELECTRA"},
                                                      "ner": {"NCBI-disease": {"bio_electra": [73.47, 83.88, 78.32]}}}}))
    cli = CliRunner().invoke(app, ["evaluate", str(REPO / "configs" / "ner_cnn.cfg"), str(out), "--test",
                                   str(paths["test"]), "--seeds", "2", "--name", "CNN", "--paper", str(paper)])
    assert cli.exit_code == 0, cli.output
    table = (out / "seeds_table.md").read_text()
    assert "| CNN (ours, 2 seeds) |" in table and "| Bio-ELECTRA (paper) | 73.47 | 83.88 | 78.32 |" in table
    assert (out / "seeds.png").is_file()
