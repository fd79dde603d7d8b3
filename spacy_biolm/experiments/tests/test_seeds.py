"""Multi-seed runs: two real seeds of a small CNN NER pipeline trained and tested end to end
(resumable)."""

import json
import shutil

import pytest

from spacy_biolm.evaluation.seed_summaries import plot_seed_scores
from spacy_biolm.experiments.seeds import run_seeds


def test_two_seeds_train_score_and_resume(tmp_path):
    from spacy_biolm.testing import REPO, disease_sentences, write_conll

    from spacy_biolm.corpora.conll import convert_ner

    paths = {}
    for split, seed in (("train", 0), ("devel", 1), ("test", 2)):
        conll = write_conll(tmp_path / f"{split}.tsv", disease_sentences(40, seed=seed))
        paths[split] = tmp_path / f"{split}.spacy"
        convert_ner(conll, paths[split])
    overrides = {"paths.train": str(paths["train"]), "paths.dev": str(paths["devel"]), "training.max_steps": 30,
                 "training.eval_frequency": 10}
    out = tmp_path / "runs" / "NCBI-disease"  # as `evaluate seeds` lays runs out: one folder per dataset
    result = run_seeds(REPO / "configs" / "ner_cnn.cfg", out, paths["test"], seeds=[1, 2], overrides=overrides)
    assert [run["seed"] for run in result["runs"]] == [1, 2]
    f1 = [run["ents_f"] for run in result["runs"]]
    assert result["summary"]["ents_f"]["mean"] == pytest.approx(sum(f1) / 2)
    # The dev score of each model-best, as spacy train recorded it, is summarised beside the test score.
    dev_f1 = [json.loads((out / f"seed_{s}" / "model-best" / "meta.json").read_text())["performance"]["ents_f"]
              for s in (1, 2)]
    assert result["summary"]["dev_ents_f"]["values"] == dev_f1
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
    cli = CliRunner().invoke(app, ["evaluate", "seeds", str(REPO / "configs" / "ner_cnn.cfg"), str(tmp_path / "runs"),
                                   "--corpus", f"NCBI-disease={tmp_path}", "--seeds", "2", "--name", "CNN", "--paper", str(paper),
                                   "--training.max_steps", "30", "--training.eval_frequency", "10"])
    assert cli.exit_code == 0, cli.output
    table = (out / "seeds_table.md").read_text()
    assert "| CNN (ours, 2 seeds) |" in table and "| Bio-ELECTRA (paper) | 73.47 | 83.88 | 78.32 |" in table
    assert (out / "seeds.png").is_file()
    paths["devel"].unlink()
    missing = CliRunner().invoke(app, ["evaluate", "seeds", str(REPO / "configs" / "ner_cnn.cfg"), str(tmp_path / "runs"),
                                       "--corpus", f"NCBI-disease={tmp_path}"])
    assert missing.exit_code != 0 and "devel.spacy" in missing.output
