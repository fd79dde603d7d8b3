"""The release's scores from the task evaluations: rows, headlines beside baselines and papers, tables."""

import json

import pytest

from spacy_biolm.evaluation.release_scores import release_rows


def _write(path, scores):
    path.write_text(json.dumps(scores))
    return path


def test_unknown_component_and_missing_metric_are_named(tmp_path):
    with pytest.raises(KeyError, match="'tagger' is not a release component"):
        release_rows({"tagger": _write(tmp_path / "t.json", {})})
    with pytest.raises(KeyError, match=r"g\.json has no \['rel_micro_r'\] \(scores of 'relation_extractor'\)"):
        release_rows({"relation_extractor": _write(tmp_path / "g.json", {"rel_micro_p": 1.0, "rel_micro_f": 1.0})})


def test_results_put_each_headline_beside_its_strongest_baseline_and_the_paper(tmp_path):
    from spacy_biolm.evaluation.release_scores import release_results, results_table

    paper = _write(tmp_path / "paper.json", {"bio_electra_2020": {
        "models": {"bio_electra": "Bio-ELECTRA"},
        "ner": {"NCBI-disease": {"bio_electra": [73.0, 84.0, 78.32]}},
        "yesno_bioasq8b": {"bio_electra": [88.0, 98.0, 92.66, 77.0, 47.0, 58.18]},
        "reranking_bioasq": {"bio_electra": [0.325]},
    }, "electramed_2021": {"paper": "ELECTRAMed", "qa_bioasq7b": {"metrics": ["strict_acc"], "batch1": [40.0], "batch2": [50.0]}}})
    metrics = {
        "ner": _write(tmp_path / "ner.json", {"ents_p": 0.8, "ents_r": 0.8, "ents_f": 0.8,
                                               "doc_ents": {"ents_p": 0.8, "ents_r": 0.7, "ents_f": 0.75}}),
        "yes_no": _write(tmp_path / "yn.json", {"yes_no_f_yes": 0.9, "yes_no_f_no": 0.5, "yes_no_macro_f": 0.7,
                                                 "baselines": {"majority (always yes)": {"yes_no_macro_f": 0.43}}}),
        "answer_reranker": _write(tmp_path / "rr.json", {"rerank_mrr": 0.2, "rerank_mrr_random": 0.09, "baselines": {
            "zero-shot cosine": {"rerank_mrr": 0.26}}}),
        "answer_span": _write(tmp_path / "as.json", {"answer_strict_acc": 0.24, "answer_lenient_acc": 0.36, "baselines": {
            "most frequent snippet word": {"answer_strict_acc": 0.14}}}),
    }
    cnn = {"ner": {"spaCy CNN": _write(tmp_path / "cnn.json", {"ents_f": 0.81})}}
    times = _write(tmp_path / "train_times.json", {"ner": {"seconds": 378.0, "returncode": 0}, "ner_cnn": {"seconds": 60.0},
                                                      "answer_span,answer_reranker": {"seconds": 99.0},
                                                      "yes_no_transfer": {"seconds": 50.0}})
    results = release_results(metrics, cnn, paper, {"profile": "default", "device": "cpu"}, times)
    by_name = {c["component"]: c for c in results["components"]}
    assert results["profile"] == "default"
    assert by_name["ner"]["baseline"] == {"name": "spaCy CNN", "value": 0.81}
    assert by_name["ner"]["at_or_above_baseline"] is False
    assert by_name["ner"]["doc_ents"]["ents_f"] == 0.75 and "doc_ents" not in by_name["yes_no"]  # typed_ner's doc.ents
    assert by_name["ner"]["paper"]["value"] == pytest.approx(0.7832)
    assert by_name["yes_no"]["at_or_above_baseline"] is True
    assert by_name["yes_no"]["paper"]["value"] == pytest.approx((0.9266 + 0.5818) / 2)
    reranker = by_name["answer_reranker"]
    assert reranker["baselines"] == {"zero-shot cosine": 0.26, "random order of the candidates (expected)": 0.09}
    assert reranker["baseline"]["name"] == "zero-shot cosine" and reranker["at_or_above_baseline"] is False
    assert reranker["paper"]["value"] == pytest.approx(0.325)
    # A paper reporting per batch: the mean of its batches.
    assert by_name["answer_span"]["paper"] == {"name": "ELECTRAMed (electramed_2021)", "value": pytest.approx(0.45)}
    assert by_name["answer_span"]["at_or_above_baseline"] is True
    table = results_table(results)
    assert table.startswith("Run: profile default, device cpu.")
    assert by_name["ner"]["train_seconds"] == 378.0 and by_name["yes_no"]["train_seconds"] is None
    # One training of several components (the multi-task pipeline's) is each one's training time.
    assert by_name["answer_span"]["train_seconds"] == by_name["answer_reranker"]["train_seconds"] == 99.0
    assert by_name["answer_span"]["trained_with"] == ["answer_reranker"] and "trained_with" not in by_name["ner"]
    assert "| 1.6 (one training with `answer_span`) |" in results_table(results)
    # A first stage (<component>_transfer) counts in its component's training; without the component's
    # own training (yes_no above) there is no time to add it to.
    times_transfer = _write(tmp_path / "train_times_transfer.json", {"answer_span_transfer": {"seconds": 201.0},
                                                                     "answer_span": {"seconds": 99.0}})
    span = {c["component"]: c for c in release_results(metrics, cnn, paper, None, times_transfer)["components"]}["answer_span"]
    assert span["train_seconds"] == 300.0 and span["first_stage_seconds"] == 201.0
    assert "first_stage_seconds" not in by_name["yes_no"] and "first_stage_seconds" not in by_name["answer_reranker"]
    assert "| 5.0 (first stage 3.4) |" in results_table({"components": [span]})
    assert "| `ner` | NCBI-disease test | F1 | 80.0 | 81.0 (spaCy CNN) | **no** | 78.3 (Bio-ELECTRA (bio_electra_2020)) | 6.3 |" in table
    assert "| `answer_reranker` | BioASQ reranking test (Bio-ELECTRA) | MRR | 0.200 | 0.260 (zero-shot cosine) | **no** |" in table
    # A reranker that ships its untrained start (qa choose-reranker) says so beside its training time.
    choice = {"chosen": "untrained start", "lexical_weight": 1.0, "questions": 26, "alpha": 0.05,
              "trained_minus_start_mrr": 0.0146, "p_not_better": 0.099}
    metrics["answer_reranker"] = _write(tmp_path / "rr_start.json", {"rerank_mrr": 0.285, "reranker_choice": choice})
    chosen = {c["component"]: c for c in release_results(metrics, cnn, paper, None, times)["components"]}["answer_reranker"]
    assert chosen["reranker_choice"] == choice and "reranker_choice" not in by_name["yes_no"]
    assert "(one training with `answer_span`) (ships untrained: training's dev gain +0.015 MRR over 26 questions, p 0.10) |" in results_table({"components": [chosen]})


def test_one_encoder_table_sets_each_component_beside_its_own_encoder_release(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    def component(name, ours, baseline, metric="F1"):
        return {"component": name, "test_set": f"{name} test", "metric": metric, "ours": ours,
                "baseline": {"name": "base", "value": baseline}, "at_or_above_baseline": ours >= baseline}

    per_task = _write(tmp_path / "release.json", {"components": [component("ner", 0.8, 0.7), component("ner_gene", 0.75, 0.72)]})
    one = _write(tmp_path / "one.json", {"profile": "default", "device": "cpu", "encoder": "enc",
                                         "components": [component("ner", 0.8, 0.7), component("ner_gene", 0.70, 0.72)]})
    speed = _write(tmp_path / "speed.json", {"torch_threads": 2, "machine": {"cpu": "x86_64"}, "command": "bench",
                                             "target_pipeline_over_raw_forward": 0.85, "pipelines": {
        "an encoder per task": {"words_per_second": 500.0, "raw_forward_words_per_second": 2000.0,
                                "pipeline_over_raw_forward": 0.25, "encoders": [{}, {}, {}], "encoder_passes_per_token": 3.4},
        "one encoder": {"words_per_second": 1800.0, "raw_forward_words_per_second": 2000.0,
                        "pipeline_over_raw_forward": 0.9, "encoders": [{}], "encoder_passes_per_token": 1.0}}})
    output = tmp_path / "comparison.md"
    result = CliRunner().invoke(app, ["docs", "one-encoder-table", str(per_task), str(one), "--speed", str(speed),
                                      "--output", str(output)])
    assert result.exit_code == 0, result.output
    text = output.read_text(encoding="utf8")
    assert text.startswith("Run: profile default, device cpu, encoder enc.")
    assert "| `ner` | ner test | F1 | 80.0 | 80.0 | +0.0 | 70.0 (base) | yes |" in text
    assert "| `ner_gene` | ner_gene test | F1 | 75.0 | 70.0 | -5.0 | 72.0 (base) | **no** |" in text
    assert "| an encoder per task | 500 | 2000 | 0.25 | 3 | 3.40 |" in text
    assert "| one encoder | 1800 | 2000 | 0.90 | 1 | 1.00 |" in text
    unmeasured = dict(component("ner_gene", 0.74, 0.0), baseline=None, at_or_above_baseline=None)
    apart = _write(tmp_path / "apart.json", {"components": [unmeasured]})
    assert CliRunner().invoke(app, ["docs", "one-encoder-table", str(per_task), str(apart), "--output", str(output)]).exit_code == 0
    assert "| 72.0 (base, the per-task release's run) | yes |" in output.read_text(encoding="utf8")
    # A component the per-task side never had (the release's new entity types): shown, not compared.
    missing = _write(tmp_path / "partial.json", {"components": [component("ner", 0.8, 0.7)]})
    partial = CliRunner().invoke(app, ["docs", "one-encoder-table", str(missing), str(one), "--output", str(output)])
    assert partial.exit_code == 0, partial.output
    text = output.read_text(encoding="utf8")
    assert "| `ner_gene` | ner_gene test | F1 | – | 70.0 | n/a | 72.0 (base) | **no** |" in text
    assert "– an encoder per task has no `ner_gene`." in text
    # Any two results of the same components, their columns named: float32 against float16 weights.
    labelled = CliRunner().invoke(app, ["docs", "one-encoder-table", str(per_task), str(one), "--output", str(output),
                                        "--labels", "float32,float16"])
    assert labelled.exit_code == 0, labelled.output
    assert "| component | test set | metric | float32 | float16 | change |" in output.read_text(encoding="utf8")
    assert "| float16 ≥ baseline |" in output.read_text(encoding="utf8")
    one_label = CliRunner().invoke(app, ["docs", "one-encoder-table", str(per_task), str(one), "--labels", "float32"])
    assert one_label.exit_code == 1 and "two names" in one_label.output


def test_every_release_row_names_its_headline_among_the_scores_it_reads():
    from spacy_biolm.pipes.release_rows import RELEASE_ROWS

    assert list(RELEASE_ROWS) == ["ner", "ner_gene", "ner_chemical", "ner_species", "ner_cell", "relation_extractor", "relation_chemprot", "yes_no",
                                  "answer_span", "answer_reranker",
                                  "hallmarks"]
    for component, row in RELEASE_ROWS.items():
        keys = [key for key, _ in row.metrics]
        assert keys and len(set(keys)) == len(keys), component
        # yes/no's headline (macro F1) is computed by its scorer beside the two F1s the row shows.
        assert row.headline in keys or component == "yes_no", component
        assert set(row.beside) <= set(keys) - {row.headline}, component  # shown beside the headline under their titles


def test_seeds_comparison_judges_the_target_on_means_over_seeds(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    def run(path, seed, ner, ner_gene, gene_in_doc_ents=None):
        rows = [{"component": name, "test_set": f"{name} test", "metric": "F1", "ours": ours,
                 "baseline": {"name": "CNN", "value": 0.72}, "at_or_above_baseline": ours >= 0.72}
                for name, ours in (("ner", ner), ("ner_gene", ner_gene))]
        if gene_in_doc_ents is not None:
            rows[1]["doc_ents"] = {"ents_f": gene_in_doc_ents}
        return _write(path, {"seed": str(seed), "components": rows})

    run(tmp_path / "per_task.json", 0, 0.80, 0.76)
    (tmp_path / "seeds").mkdir()
    run(tmp_path / "seeds" / "per_task_seed_1.json", 1, 0.82, 0.74)
    run(tmp_path / "multitask.json", 0, 0.81, 0.745)
    run(tmp_path / "seeds" / "multitask_seed_1.json", 1, 0.83, 0.71)  # below the CNN once
    output = tmp_path / "seeds.md"
    result = CliRunner().invoke(app, ["docs", "seeds-comparison", str(output),
                                      "--per-task", str(tmp_path / "per_task.json"), "--per-task", str(tmp_path / "seeds" / "per_task_seed_*.json"),
                                      "--multi-task", str(tmp_path / "multitask.json"), "--multi-task", str(tmp_path / "seeds" / "multitask_seed_*.json"),
                                      "--multi-task", str(tmp_path / "seeds" / "none_yet_*.json")])
    assert result.exit_code == 0, result.output
    text = output.read_text(encoding="utf8")
    # ner: 81.0 (1.41) per task, 82.0 (1.41) one encoder; ner_gene: 75.0 against 72.75, 2.25 points below.
    assert "| `ner` | ner test | F1 | 81.0 (1.4), n=2 | 82.0 (1.4), n=2 | +1.0 | yes | 72.0 (CNN) | yes |" in text
    assert "| `ner_gene` | ner_gene test | F1 | 75.0 (1.4), n=2 | 72.8 (2.5), n=2 | -2.2 | **no** | 72.0 (CNN) | **no** |" in text
    summary = json.loads(output.with_suffix(".json").read_text(encoding="utf8"))
    gene = summary["components"][1]
    assert gene["multi_task"]["values"] == [0.745, 0.71] and gene["multi_task"]["seeds"] == ["0", "1"]
    assert gene["within_target"] is False and summary["run"]["date"] and "doc.ents" not in text
    # typed_ner rows that record doc.ents's F1 beside their span group's: its mean under the table.
    run(tmp_path / "spans_0.json", 0, 0.81, 0.76, gene_in_doc_ents=0.75)
    run(tmp_path / "spans_1.json", 1, 0.83, 0.76, gene_in_doc_ents=0.73)
    spans_run = CliRunner().invoke(app, ["docs", "seeds-comparison", str(output), "--per-task", str(tmp_path / "per_task.json"),
                                         "--multi-task", str(tmp_path / "spans_*.json")])
    assert spans_run.exit_code == 0, spans_run.output
    assert "in `doc.ents`, which leaves out an entity that overlaps one found before it, F1 is `ner_gene` 74.0 (1.4)." \
        in output.read_text(encoding="utf8")
    missing = CliRunner().invoke(app, ["docs", "seeds-comparison", str(output), "--per-task", str(tmp_path / "nope.json"),
                                       "--multi-task", str(tmp_path / "multitask.json")])
    assert missing.exit_code == 1 and "nope.json does not exist" in " ".join(missing.output.split())
    lacking = _write(tmp_path / "lacking.json", {"components": []})
    lacking_run = CliRunner().invoke(app, ["docs", "seeds-comparison", str(output), "--per-task", str(lacking),
                                           "--multi-task", str(tmp_path / "multitask.json")])
    assert lacking_run.exit_code == 1 and "lacking.json has no 'ner'" in " ".join(lacking_run.output.split())
    # Another JSON caught by a glob (a dev-scores file) is named, not read as a seed.
    _write(tmp_path / "seeds" / "multitask_seed_1_dev.json", {"dev": {}})
    stray_run = CliRunner().invoke(app, ["docs", "seeds-comparison", str(output), "--per-task", str(tmp_path / "per_task.json"),
                                         "--multi-task", str(tmp_path / "seeds" / "multitask_seed_*.json")])
    assert stray_run.exit_code == 1 and "multitask_seed_1_dev.json: no 'components'" in " ".join(stray_run.output.split())


def test_dev_scores_weigh_what_chose_each_model_best(tmp_path):
    from spacy_biolm.evaluation.release_scores import dev_scores_table

    def model(name, ents_f, rel_f, disease_f):
        directory = tmp_path / name
        directory.mkdir()
        _write(directory / "meta.json", {"performance": {"ents_f": ents_f, "rel_micro_f": rel_f, "sents_f": 1.0,
                                                         "ents_per_type": {"DISEASE": {"p": 0.9, "r": 0.9, "f": disease_f}}}})
        (directory / "config.cfg").write_text("[training]\n\n[training.score_weights]\nents_f = 0.5\nrel_micro_f = 0.5\n"
                                              "sents_f = 0.0\n", encoding="utf8")
        return directory

    scores, table = dev_scores_table({"without": model("a", 0.80, 0.70, 0.85), "with": model("b", 0.84, 0.62, 0.88)})
    assert scores["dev"]["without"]["weighted"] == pytest.approx(0.75) and scores["dev"]["with"]["weighted"] == pytest.approx(0.73)
    assert "sents_f" not in scores["dev"]["with"]  # weight 0: not what chose the model
    assert table.splitlines()[0] == "| pipeline | weighted dev score (model-best's) | ents_f | rel_micro_f | DISEASE F1 |"
    assert "| with | 73.0 | 84.0 | 62.0 | 88.0 |" in table
    with pytest.raises(FileNotFoundError, match="meta.json is missing: empty's directory"):
        dev_scores_table({"empty": tmp_path})


def test_a_row_shows_the_scores_its_definition_puts_beside_the_headline():
    from spacy_biolm.evaluation.release_scores import results_table

    row = {"component": "relation_chemprot", "test_set": "ChemProt", "metric": "F1", "ours": 0.538,
           "baseline": {"name": "all positive (CPR:4)", "value": 0.346}, "at_or_above_baseline": True, "paper": None,
           "scores": {"rel_micro_f": 0.538, "end_to_end_micro_f": 0.242, "end_to_end_baseline_micro_f": 0.183}}
    assert "| 53.8; F1 end to end 24.2; F1 end to end, all positive 18.3 | 34.6 (all positive (CPR:4)) |" in results_table({"components": [row]})
    gad = dict(row, component="relation_extractor", scores={"rel_micro_f": 0.538})
    assert "| 53.8 | 34.6" in results_table({"components": [gad]})
