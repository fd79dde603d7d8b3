"""Smoke run of the whole project (`spacy project run all`) with a few steps per stage, on the
mirrored corpora: every command runs, the wheel installs, and a new process loads it by name."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_biolm.testing import REPO, SHARED, SHARED_DATA, make_tiny_encoder

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="needs the corpus mirror in ../shared/data"),
]

SMOKE_VARS = {
    "mirror": str(SHARED_DATA),
    "paper_results": str(SHARED / "reference" / "paper_results.json"),
    "name": "Smoke encoder",
    "sentence_name": "Smoke sentence encoder",
    "multitask_steps": "4",
    "multitask_eval_frequency": "2",
    "ner_cnn_steps": "4",
    "ner_cnn_eval_frequency": "2",
    # The first sentences, documents and abstracts of each corpus split: every command runs on real
    # text, the evaluations in seconds.
    "ner_convert_limit": "400",
    "re_convert_limit": "300",
    "hoc_convert_limit": "120",
    # Question answering: a few questions per corpus file, two updates per task.
    "qa_limit": "8",
    "qa_yes_no_steps": "2",
    "qa_answer_span_steps": "2",
    "qa_answer_span_transfer_steps": "2",
    "qa_transfer_eval_frequency": "2",
    "qa_reranker_steps": "2",
    "qa_eval_frequency": "2",
    "hoc_steps": "3",
    "hoc_eval_frequency": "3",
}
# projects/pretraining's workflow pretrain: a small vocabulary, three steps.
PRETRAIN_VARS = {"vocab_size": "4000", "pretrain_steps": "3"}
# projects/one-encoder's per-task pipelines (the comparison rows) and projects/encoder-ablation's NER,
# a few updates each (one-encoder's HoC takes SMOKE_VARS' hoc_steps).
PER_TASK_VARS = {
    "ner_steps": "4",
    "ner_eval_frequency": "2",
    "ner_gene_steps": "4",
    "ner_gene_eval_frequency": "2",
    "re_steps": "3",
    "re_eval_frequency": "3",
    "re_dev_limit": "20",
    "re_test_limit": "100",
}


def _run(args, cwd, **kwargs):
    env = dict(os.environ, HF_HUB_OFFLINE="1", **kwargs.pop("env", {}))
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=1500)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    return result


def test_project_runs_from_raw_text_to_an_installable_wheel(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "project.yml", project)
    shutil.copy(REPO / "README.md", project)  # `all` rewrites what README and the results index quote from its run
    (project / "results").mkdir()
    shutil.copy(REPO / "results" / "descriptions.yml", project / "results")
    shutil.copytree(REPO / "configs", project / "configs")
    # The per-task comparison times both releases (benchmarks/release_encoders.py).
    shutil.copytree(REPO / "benchmarks", project / "benchmarks", ignore=shutil.ignore_patterns("results", "__pycache__"))
    (project / "benchmarks" / "results").mkdir()
    # The encoder `all` fine-tunes: a tiny random one here, exported as the published one would be.
    # Its vocabulary is characters, so a 128-token window can take ~1,000 wordpieces: room for them.
    encoder_init = make_tiny_encoder(tmp_path / "init_encoder", max_positions=4096)
    sentence_encoder_init = make_tiny_encoder(tmp_path / "init_sentence_encoder", max_positions=4096, seed=1)
    overrides = [f"--vars.{k}={v}" for k, v in {**SMOKE_VARS, "encoder_init": encoder_init,
                                                 "sentence_encoder_init": sentence_encoder_init}.items()]
    # As `make all` runs it: the default profile's variables, the smoke budgets winning.
    _run([sys.executable, "-m", "spacy_biolm", "profile", "run", "default", "all", "--project", ".", *overrides], cwd=project)

    source = json.loads((project / "pretrained/encoder/model/encoder_source.json").read_text())
    assert source["path"] == str(encoder_init) and "model.safetensors" in source["files"]
    source = json.loads((project / "pretrained/sentence_encoder/model/encoder_source.json").read_text())
    assert source["path"] == str(sentence_encoder_init)
    # The multi-task pipeline, stored in float16 and scored component by component as the release ships it.
    multitask = {row: json.loads((project / f"metrics/multitask/{row}_test.json").read_text())
                 for row in ("ner", "ner_gene", "ner_chemical", "ner_species", "ner_cell", "relation_extractor", "relation_chemprot", "hallmarks")}
    assert {"ents_p", "ents_r", "ents_f"} <= set(multitask["ner"]) and multitask["ner_gene"]["types"] == ["GENE"]
    # The three further types on every test set of the corpora that teach them (their macro average), beside their CNN.
    assert multitask["ner_species"]["types"] == ["SPECIES"] and len(multitask["ner_species"]["test_sets"]) == 3
    assert json.loads((project / "metrics/ner_types_cnn/ner_cell_test.json").read_text())["types"] == ["CELL"]
    assert {"rel_micro_f"} <= set(multitask["relation_extractor"]) and "cats_micro_f" in multitask["hallmarks"]
    # ChemProt on gold entities and end to end, from the entities the pipeline finds.
    assert {"rel_micro_f", "end_to_end_micro_f", "end_to_end_baseline_micro_f"} <= set(multitask["relation_chemprot"])
    assert multitask["relation_chemprot"]["pairs"] > 0 and multitask["relation_chemprot"]["end_to_end"]["docs"] > 0

    # After `all`: the per-task pipelines in their experiment project (projects/one-encoder), pretraining
    # from scratch, and the no-pretraining NER ablation (projects/encoder-ablation) beside the per-task NER,
    # each project reading the root's outputs through its var root ("../..").
    sub_overrides = overrides + [f"--vars.{k}={v}" for k, v in PER_TASK_VARS.items()]
    for name in ("one-encoder", "encoder-ablation", "pretraining"):
        (project / "projects" / name).mkdir(parents=True)
        shutil.copy(REPO / "projects" / name / "project.yml", project / "projects" / name)
    _run([sys.executable, "-m", "spacy", "project", "run", "per-task", "projects/one-encoder", *sub_overrides], cwd=project)
    per_task = project / "projects" / "one-encoder"
    assert "Smoke encoder (ours)" in (per_task / "metrics/results.md").read_text()
    comparison = (per_task / "results/per_task_comparison.md").read_text()
    assert "| `ner_gene` | BC2GM test | F1 |" in comparison and "one multi-task encoder" in comparison
    assert "| component | test set | metric | float32 | as shipped |" in (per_task / "results/storage_comparison.md").read_text()
    speed = json.loads((project / "benchmarks/results/release_encoders.json").read_text())
    assert speed["pipelines"]["one multi-task encoder"]["encoder_passes_per_token"] == 1.0
    _run([sys.executable, "-m", "spacy", "project", "run", "pretrain", "projects/pretraining", *overrides,
          *[f"--vars.{k}={v}" for k, v in PRETRAIN_VARS.items()]], cwd=project)
    ablation = project / "projects" / "encoder-ablation"
    _run([sys.executable, "-m", "spacy", "project", "run", "pretraining-ablation", "projects/encoder-ablation", *sub_overrides], cwd=project)
    report = json.loads((project / "pretrained/vocab/vocab_report.json").read_text())
    assert report["gene_splits"]["splits"]["biolm-wp"]["BRCA1"]
    summary = json.loads((project / "pretrained/tiny/pretrain_summary.json").read_text())
    assert summary["steps"] == 3
    assert (project / "pretrained/tiny/pretrain_curve.png").is_file()
    assert "Bio-ELECTRA tiny without pretraining (ours)" in (ablation / "metrics/results_random.md").read_text()

    scores = json.loads((per_task / "metrics/relations_gad_anonymised.json").read_text())
    assert {"rel_micro_p", "rel_micro_r", "rel_micro_f"} <= set(scores) and scores["pairs"] > 0
    assert "(paper)" in (per_task / "metrics/relations_gad.md").read_text()

    qa = {name: json.loads((project / f"metrics/{name}_test.json").read_text()) for name in
          ("yes_no", "answer_span", "answer_span_bioasq7b", "answer_reranker")}
    assert {"yes_no_f_yes", "yes_no_f_no", "questions_per_second"} <= set(qa["yes_no"])
    assert {"answer_em", "answer_f1"} <= set(qa["answer_span"])
    assert {"answer_strict_acc", "answer_lenient_acc", "answer_mrr"} <= set(qa["answer_span_bioasq7b"])
    assert qa["answer_reranker"]["rerank_mrr"] is not None
    # Scored as they ship: evaluate-qa scores int8 copies; the release assembles those and is
    # halved again (spacy assemble writes sourced encoders in float32).
    for name, kept in (("yes_no", "model-best"), ("answer_span", "model-last"), ("answer_reranker", "model-best")):
        trained, shipped = (project / "training" / name / kept), (project / "training/qa_int8" / name / "model-best")
        assert (shipped / name / "model").stat().st_size < 0.75 * (trained / name / "model").stat().st_size
        assert (project / "training/release" / name / "model").stat().st_size < 0.75 * (trained / name / "model").stat().st_size
    assert (project / "training/release/transformer/model").stat().st_size < 0.75 * (project / "training/release_assembled/transformer/model").stat().st_size
    assert "(paper)" in (project / "metrics/qa_results.md").read_text()

    assert {"cats_micro_f", "cats_macro_f"} <= set(json.loads((project / "metrics/hoc_bow_test.json").read_text()))
    hoc = json.loads((per_task / "metrics/hoc_test.json").read_text())
    assert list(hoc["rows"]) == ["Smoke sentence encoder"]

    meta = json.loads((project / "metrics/release_meta.json").read_text())
    assert {"ner_ents_f", "ner_gene_ents_f", "ner_cell_ents_f", "relation_extractor_rel_micro_f", "relation_chemprot_rel_micro_f", "yes_no_yes_no_f_no",
            "answer_span_answer_strict_acc", "answer_reranker_rerank_mrr", "hallmarks_cats_micro_f"} <= set(meta["performance"])
    assert "| `answer_reranker` |" in (project / "metrics/release.md").read_text()
    assert meta["description"].count("(yes_no, answer_span)") == 1
    assert meta["description"].count("(ner, ner_gene, ner_chemical, ner_species, ner_cell, relation_extractor, relation_chemprot, hallmarks, answer_reranker)") == 1
    train_times = json.loads((project / "metrics/train_times.json").read_text())
    assert {"ner,ner_gene,ner_chemical,ner_species,ner_cell,relation_extractor,relation_chemprot,hallmarks", "ner_cnn", "ner_gene_cnn", "ner_types_cnn", "yes_no", "answer_span_transfer", "answer_span",
            "answer_reranker", "hallmarks_bow"} <= set(train_times)
    # answer_span started from its first stage (SQuAD dev + COVID-QA train), whose training counts in its time.
    assert json.loads((project / "training/answer_span/model-last/meta.json").read_text())["spacy_biolm"]["warm_start"]
    span = next(c for c in json.loads((project / "results/release.json").read_text())["components"] if c["component"] == "answer_span")
    assert span["first_stage_seconds"] == train_times["answer_span_transfer"]["seconds"]
    release = json.loads((project / "results/release.json").read_text())
    assert release["profile"] == "default" and release["device"].startswith("cpu")
    assert all(c["train_seconds"] > 0 for c in release["components"]), release["components"]
    assert release["wheel"]["file"].startswith("en_bio_electra-") and release["wheel"]["bytes"] > 0
    # README's scores block is this run's, with what the release printed for README's example text.
    from spacy_biolm.release_meta.readme import readme_scores
    from spacy_biolm.release_meta.sample import SAMPLE_TEXT

    assert release["sample"]["text"] == SAMPLE_TEXT and isinstance(release["sample"]["entities"], list)
    assert readme_scores(project / "results/release.json") in (project / "README.md").read_text(encoding="utf8")
    index = (project / "results/README.md").read_text(encoding="utf8")
    row = next(line for line in index.splitlines() if line.startswith("| [release.json](release.json) |"))
    assert release["run"]["date"][:10] in row  # the run's own record (the temporary project is no git checkout)

    wheels = list((project / "packages").glob("*/dist/en_bio_electra-*.whl"))
    assert len(wheels) == 1
    site = tmp_path / "site"
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target", str(site), str(wheels[0])], cwd=tmp_path)
    code = (
        "import spacy; from spacy_biolm import make_question_doc; nlp = spacy.load('en_bio_electra'); "
        "doc = nlp('Germline mutations in BRCA1 cause hereditary breast cancer.'); "
        "print(nlp.pipe_names, nlp.disabled, len(doc), [(e.text, e.label_) for e in doc.ents], doc._.relations); "
        "print(len(doc.cats), 'Resisting cell death' in doc.cats); "
        "answers = nlp.get_pipe('answer_span')(make_question_doc(nlp, 'Which gene?', 'Mutations in BRCA1.')); "
        "print(len(answers.spans['answers']) > 0, sorted(nlp.get_pipe('yes_no')(make_question_doc(nlp, 'Is it?', 'It is.')).cats))"
    )
    shutil.rmtree(project / "pretrained")  # the installed pipeline must carry its own weights
    shutil.rmtree(project / "training")
    out = _run([sys.executable, "-c", code], cwd=tmp_path, env={"PYTHONPATH": str(site)})
    lines = out.stdout.splitlines()
    assert lines[0].startswith("['sentencizer', 'transformer', 'ner', 'ner_gene', 'ner_chemical', 'ner_species', 'ner_cell', "
                               "'relation_extractor', 'relation_chemprot', 'hallmarks'] "
                               "['yes_no', 'answer_span', 'answer_reranker'] 9 ")  # Germline ... cancer + '.'
    assert lines[1] == "10 True"  # the 10 hallmarks of cancer in doc.cats
    assert lines[2] == "True ['no', 'yes']"
