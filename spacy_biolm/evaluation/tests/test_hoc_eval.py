"""Per-label thresholds for textcat_multilabel: the scorer, the tuning, and their place in the
pipeline's config; the HoC table."""

import json

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_biolm.evaluation.hoc import hoc_table, score_pipeline, tune_pipeline_thresholds
from spacy_biolm.pipes.multilabel_thresholds import (
    assigned_labels,
    cross_validate_thresholds,
    make_multilabel_thresholds_scorer,
    score_multilabel,
    tune_thresholds,
)

VOCAB = Vocab()


def _example(predicted, gold):
    doc = Doc(VOCAB, words=["x"])
    doc.cats = predicted
    reference = Doc(VOCAB, words=["x"])
    reference.cats = gold
    return Example(doc, reference)


# Label A is predicted low (0.3-0.4) when true; B is well separated at 0.5.
EXAMPLES = [
    ({"A": 0.4, "B": 0.9}, {"A": 1.0, "B": 1.0}),
    ({"A": 0.3, "B": 0.1}, {"A": 1.0, "B": 0.0}),
    ({"A": 0.1, "B": 0.8}, {"A": 0.0, "B": 1.0}),
    ({"A": 0.2, "B": 0.6}, {"A": 0.0, "B": 0.0}),
]


def test_scores_decide_each_label_by_its_own_threshold():
    examples = [_example(p, g) for p, g in EXAMPLES]
    default = score_multilabel(examples, labels=["A", "B"])
    # A: nothing reaches 0.5 -> tp 0, fn 2; B: tp 2, fp 1 -> micro P 2/3, R 2/4.
    assert default["cats_micro_p"] == pytest.approx(2 / 3) and default["cats_micro_r"] == pytest.approx(0.5)
    assert default["cats_f_per_type"]["A"]["f"] == 0.0
    tuned = make_multilabel_thresholds_scorer({"A": 0.25, "B": 0.7})(examples, labels=["A", "B"], threshold=0.5)
    assert tuned["cats_f_per_type"]["A"]["f"] == 1.0 and tuned["cats_f_per_type"]["B"]["f"] == 1.0
    assert tuned["cats_micro_f"] == 1.0 and tuned["cats_macro_f"] == tuned["cats_score"] == 1.0
    assert tuned["cats_macro_auc"] == default["cats_macro_auc"] == 1.0  # threshold-free
    with pytest.raises(ValueError, match="thresholds for labels the data does not have: \\['C'\\]"):
        score_multilabel(examples, thresholds={"C": 0.5}, labels=["A", "B"])
    with pytest.raises(ValueError, match="threshold of 'A' must be in"):
        make_multilabel_thresholds_scorer({"A": 1.5})


def test_tuning_picks_the_f1_best_threshold_per_label_and_keeps_half_when_undecided():
    predicted = [p for p, _ in EXAMPLES]
    gold = [g for _, g in EXAMPLES]
    tuned = tune_thresholds(predicted, gold, ["A", "B", "never"], grid=[0.1, 0.25, 0.35, 0.5, 0.7, 0.9])
    assert tuned == {"A": 0.25, "B": 0.7, "never": 0.5}
    assert assigned_labels({"A": 0.3, "B": 0.65, "C": 0.5}, tuned) == ["A", "C"]
    with pytest.raises(ValueError, match="3 predictions for 2 gold"):
        tune_thresholds(predicted[:3], gold[:2], ["A"])


def test_the_micro_objective_shares_the_cut_off_that_is_best_over_all_decisions():
    predicted = [p for p, _ in EXAMPLES]
    gold = [g for _, g in EXAMPLES]
    grid = [0.1, 0.25, 0.35, 0.5, 0.7, 0.9]
    # Over all 8 decisions: 0.25 -> tp 4, fp 1 (micro F1 0.89); 0.35 -> tp 3, fp 2, fn 1; 0.5 -> tp 2, fp 1, fn 2.
    assert tune_thresholds(predicted, gold, ["A", "B"], grid=grid, objective="micro_f1") == {"A": 0.25, "B": 0.25}
    assert tune_thresholds(predicted, [{"A": 0.0, "B": 0.0}] * 4, ["A", "B"], objective="micro_f1") == {"A": 0.5, "B": 0.5}
    with pytest.raises(ValueError, match="unknown threshold objective 'best'"):
        tune_thresholds(predicted, gold, ["A"], objective="best")


def test_cross_validation_scores_thresholds_on_documents_they_were_not_tuned_on():
    # A's positives score 0.3 and its negatives 0.1; B's 0.9 and 0.7: only per-label cut-offs separate both.
    predicted = [{"A": 0.3 if i % 2 else 0.1, "B": 0.9 if i % 3 else 0.7} for i in range(40)]
    gold = [{"A": float(i % 2 == 1), "B": float(i % 3 != 0)} for i in range(40)]
    scores = cross_validate_thresholds(predicted, gold, ["A", "B"], repeats=3)
    assert scores["label_f1"]["micro_f"] == scores["label_f1"]["macro_f"] == 1.0
    assert scores["label_f1"]["micro_f_std"] == 0.0
    assert 0.5 < scores["micro_f1"]["micro_f"] < 1.0 and scores["micro_f1"]["macro_f"] < 1.0
    # Labels calibrated alike: the shared cut-off carries over as well as the per-label ones.
    alike = [{"A": 0.9 if g["A"] else 0.2, "B": 0.9 if g["B"] else 0.2} for g in gold]
    assert cross_validate_thresholds(alike, gold, ["A", "B"], repeats=3)["micro_f1"]["micro_f"] == 1.0
    with pytest.raises(ValueError, match="too few to halve"):
        cross_validate_thresholds(predicted[:3], gold[:3], ["A"])


LABELS = ["proliferation", "apoptosis"]
TEXTS = [
    ("cells proliferate and divide rapidly", {"proliferation": 1.0, "apoptosis": 0.0}),
    ("growth factor signalling drives proliferation", {"proliferation": 1.0, "apoptosis": 0.0}),
    ("caspase activation induces apoptosis", {"proliferation": 0.0, "apoptosis": 1.0}),
    ("cells die by apoptosis after damage", {"proliferation": 0.0, "apoptosis": 1.0}),
    ("proliferate then apoptosis follows", {"proliferation": 1.0, "apoptosis": 1.0}),
    ("the weather was mild", {"proliferation": 0.0, "apoptosis": 0.0}),
]


@pytest.fixture(scope="module")
def bow_pipeline(tmp_path_factory):
    """A trained bag-of-words textcat_multilabel pipeline on disk and a DocBin of its data."""
    tmp = tmp_path_factory.mktemp("hoc_bow")
    nlp = spacy.blank("en")
    nlp.add_pipe("textcat_multilabel", config={
        "model": {"@architectures": "spacy.TextCatBOW.v3", "exclusive_classes": False, "ngram_size": 1,
                  "no_output_layer": False, "length": 4096},
        "scorer": {"@scorers": "spacy-biolm.multilabel_thresholds_scorer.v1"},
    })
    examples = []
    for text, cats in TEXTS:
        doc = nlp.make_doc(text)
        doc.cats = cats
        examples.append(Example(nlp.make_doc(text), doc))
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp / "dev.spacy")
    return tmp / "model", tmp / "dev.spacy"


def test_tuned_thresholds_are_stored_in_the_pipeline_config_and_used_after_loading(bow_pipeline, tmp_path):
    import shutil

    model = tmp_path / "model"
    shutil.copytree(bow_pipeline[0], model)
    result = tune_pipeline_thresholds(model, bow_pipeline[1], objective="label_f1")
    assert set(result["thresholds"]) == set(LABELS) and result["objective"] == "label_f1"
    assert set(result["dev_cross_validated"]) == {"label_f1", "micro_f1"}
    assert result["dev_tuned"]["cats_micro_f"] >= result["dev_untuned"]["cats_micro_f"]
    assert json.loads((model / "thresholds.json").read_text())["thresholds"] == result["thresholds"]
    nlp = spacy.load(model)
    scorer_config = nlp.config["components"]["textcat_multilabel"]["scorer"]
    assert scorer_config["thresholds"] == result["thresholds"]
    scores = score_pipeline(model, bow_pipeline[1])
    assert scores["cats_micro_f"] == pytest.approx(result["dev_tuned"]["cats_micro_f"])
    assert scores["documents"] == len(TEXTS)


def test_table_shows_mean_std_of_each_row_and_says_when_no_paper_numbers_exist(tmp_path):
    def row(values):
        runs = [{"cats_micro_f": m, "cats_macro_f": m - 0.1, "dev_cats_micro_f": m, "dev_cats_macro_f": m} for m in values]
        from spacy_biolm.evaluation.seed_summaries import summarise
        return {"runs": runs, "summary": summarise(runs, list(runs[0]))}

    result = {"rows": {"MiniLM": row([0.80, 0.82]), "bag-of-words": row([0.70, 0.70])}}
    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps({"bioalbert": {"models": {"base": "BioALBERT base"}, "hoc": {"base": [85.0, 80.0]}}}))
    lines = hoc_table(result, paper).splitlines()
    assert lines[2] == "| MiniLM (ours) | 2 | 81.00 (1.41) | 71.00 (1.41) | 81.00 (1.41) | 81.00 (1.41) |"
    assert lines[3].startswith("| bag-of-words (ours) | 2 | 70.00 (0.00) |")
    assert lines[4] == "| BioALBERT base (paper) |  | 85.00 | 80.00 |  |  |"
    empty = tmp_path / "none.json"
    empty.write_text("{}")
    assert hoc_table(result, empty).endswith(f"No published HoC scores in {empty}.")


def test_table_adds_the_held_out_dev_score_of_each_runs_objective_only_when_every_run_has_one():
    from spacy_biolm.evaluation.seed_summaries import summarise

    def run(test, held_out, objective="micro_f1"):
        other = "label_f1" if objective == "micro_f1" else "micro_f1"
        return {"cats_micro_f": test, "cats_macro_f": test, "dev_cats_micro_f": 0.9, "dev_cats_macro_f": 0.9,
                "objective": objective, "dev_cross_validated": {objective: {"micro_f": held_out, "macro_f": 0.5},
                                                                other: {"micro_f": 0.0, "macro_f": 0.0}}}

    def row(runs):
        return {"runs": runs, "summary": summarise(runs, ["cats_micro_f", "cats_macro_f", "dev_cats_micro_f", "dev_cats_macro_f"])}

    result = {"rows": {"a": row([run(0.80, 0.78), run(0.82, 0.80, objective="label_f1")]), "b": row([run(0.70, 0.60)])}}
    lines = hoc_table(result).splitlines()
    assert lines[0].endswith("| dev macro F1 | held-out dev micro F1 |")
    # each run's own objective is read, never the other one (0.0)
    assert lines[2] == "| a (ours) | 2 | 81.00 (1.41) | 81.00 (1.41) | 90.00 (0.00) | 90.00 (0.00) | 79.00 (1.41) |"
    assert lines[3].endswith("| 60.00 (0.00) |")
    del result["rows"]["b"]["runs"][0]["dev_cross_validated"]
    assert "held-out" not in hoc_table(result)


def test_thresholds_and_test_commands_write_the_config_the_table_and_the_release_scores(bow_pipeline, tmp_path):
    import shutil

    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    model = tmp_path / "model"
    shutil.copytree(bow_pipeline[0], model)
    untuned = CliRunner().invoke(app, ["evaluate", "hoc-test", str(tmp_path / "r.json"), f"bow={model}", "--test", str(bow_pipeline[1])])
    assert untuned.exit_code == 1 and "tune the thresholds first" in untuned.output
    unknown = CliRunner().invoke(app, ["release", "tune-thresholds", str(model), str(bow_pipeline[1]), "--objective", "best"])
    assert unknown.exit_code == 2 and "'best' is not one of" in unknown.output
    tuned = CliRunner().invoke(app, ["release", "tune-thresholds", str(model), str(bow_pipeline[1])])
    assert tuned.exit_code == 0, tuned.output
    said = " ".join(tuned.output.split())  # wasabi wraps long lines
    assert "with label_f1 thresholds" in said and "micro_f1: micro F1" in said
    result = CliRunner().invoke(app, ["evaluate", "hoc-test", str(tmp_path / "r.json"), f"bow={model}", "--test",
                                      str(bow_pipeline[1]), "--table", str(tmp_path / "t.md"),
                                      "--model-scores", str(tmp_path / "flat.json")])
    assert result.exit_code == 0, result.output
    flat = json.loads((tmp_path / "flat.json").read_text())
    assert flat["thresholds"] == json.loads((model / "thresholds.json").read_text())["thresholds"]
    assert "one trained pipeline each" in (tmp_path / "t.md").read_text()
    table = (tmp_path / "t.md").read_text()
    assert f"| bow (ours) | 1 | {100 * flat['cats_micro_f']:.2f} (0.00) |" in table
    assert "per hallmark, each for its own F1" in table
    assert set(flat["dev_cross_validated"]) == {"label_f1", "micro_f1"}


def test_pipelines_sharing_a_row_name_are_scored_as_one_row_over_their_seeds(bow_pipeline, tmp_path):
    import shutil
    import statistics

    from spacy.util import load_config
    from typer.testing import CliRunner

    from spacy_biolm.cli import app
    from spacy_biolm.evaluation.tables import parse_named_paths

    models = []
    for seed, objective in [(3, "label_f1"), (7, "micro_f1")]:
        model = tmp_path / f"seed_{seed}"
        shutil.copytree(bow_pipeline[0], model)
        config = load_config(model / "config.cfg", interpolate=False)
        config["system"]["seed"] = seed
        config.to_disk(model / "config.cfg")
        tune_pipeline_thresholds(model, bow_pipeline[1], objective=objective)
        models.append(model)
    alone = [score_pipeline(model, bow_pipeline[1])["cats_micro_f"] for model in models]
    args = ["evaluate", "hoc-test", str(tmp_path / "r.json"), f"bow={models[0]}", f"bow={models[1]}", "--test",
            str(bow_pipeline[1]), "--table", str(tmp_path / "t.md")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    row = json.loads((tmp_path / "r.json").read_text())["rows"]["bow"]
    assert [run["seed"] for run in row["runs"]] == [3, 7] and row["models"] == [str(m) for m in models]
    assert row["summary"]["cats_micro_f"]["mean"] == pytest.approx(statistics.mean(alone))
    assert row["summary"]["cats_micro_f"]["std"] == pytest.approx(statistics.stdev(alone))
    table = (tmp_path / "t.md").read_text()
    assert "mean (std) over seeds [3, 7]" in table and "| bow (ours) | 2 |" in table
    flat = CliRunner().invoke(app, args + ["--model-scores", str(tmp_path / "flat.json")])
    assert flat.exit_code == 1 and "have several" in " ".join(flat.output.split()) and not (tmp_path / "flat.json").exists()
    twice = CliRunner().invoke(app, args[:4] + [f"bow={models[0]}"])
    assert twice.exit_code == 1 and "given twice" in " ".join(twice.output.split())  # wasabi wraps lines
    with pytest.raises(ValueError, match="'bow' given 2 times"):
        parse_named_paths([f"bow={models[0]}", f"bow={models[1]}"])


def test_objectives_are_compared_on_held_out_dev_and_test_without_changing_the_pipeline(bow_pipeline, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app
    from spacy_biolm.evaluation.hoc import compare_threshold_objectives

    model, docs = bow_pipeline
    config_before = (model / "config.cfg").read_text()
    result = compare_threshold_objectives({"bow": model}, docs, docs)
    assert (model / "config.cfg").read_text() == config_before and not (model / "thresholds.json").exists()
    compared = result["rows"]["bow"]["objectives"]
    assert list(compared) == ["untuned", "label_f1", "micro_f1"]
    # Dev is the test set here: tuned on all of it, each objective scores on test what tuning reached on dev.
    untuned = score_pipeline(model, docs)  # the fixture's config: 0.5 for every label
    assert compared["untuned"]["test"]["micro_f"] == pytest.approx(untuned["cats_micro_f"])
    assert compared["untuned"]["held_out_dev"] == compared["untuned"]["test"]
    nlp = spacy.load(model)
    for objective in ("label_f1", "micro_f1"):
        tuned = tune_thresholds([nlp(text).cats for text, _ in TEXTS], [cats for _, cats in TEXTS], LABELS, objective=objective)
        assert compared[objective]["thresholds"] == tuned
        assert compared[objective]["test"]["micro_f"] >= compared["untuned"]["test"]["micro_f"]
    assert len(set(compared["micro_f1"]["thresholds"].values())) == 1

    runner = CliRunner()
    written = runner.invoke(app, ["evaluate", "hoc-objectives", str(tmp_path / "o.json"), f"bow={model}", "--dev", str(docs),
                                  "--test", str(docs), "--table", str(tmp_path / "o.md"), "--paper", str(tmp_path / "none.json")])
    assert written.exit_code == 0, written.output
    table = (tmp_path / "o.md").read_text()
    held_out = json.loads((tmp_path / "o.json").read_text())["rows"]["bow"]["objectives"]["micro_f1"]["held_out_dev"]
    assert f"| bow (ours) | micro_f1 | {100 * held_out['micro_f']:.2f} | {100 * held_out['macro_f']:.2f} |" in table
    missing = runner.invoke(app, ["evaluate", "hoc-objectives", str(tmp_path / "o.json"), f"bow={tmp_path / 'nowhere'}"])
    assert missing.exit_code == 1 and "nowhere" in missing.output
