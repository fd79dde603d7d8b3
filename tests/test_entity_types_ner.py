"""projects/entity-types' five-type NER: its reader, both configs trained by plain `spacy train`,
scored on many corpora's test sets, and the in-corpus/cross-corpus table."""

import json
import shutil
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin, Span
from spacy.util import load_config

from spacy_biolm.doc_data import set_annotated_entity_types

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "projects" / "entity-types" / "configs"
TYPES = {"ner": "DISEASE", "ner_gene": "GENE", "ner_chemical": "CHEMICAL", "ner_species": "SPECIES", "ner_cell": "CELL"}
# Three corpora as the project's convert step writes them: (text, entities) per Doc, types recorded.
CORPORA = {
    "NCBI-disease": ("Patients with breast cancer carry BRCA1 .", [(2, 4, "DISEASE")]),
    "BC2GM": ("BRCA1 binds RAD51 in breast cancer .", [(0, 1, "GENE"), (2, 3, "GENE")]),
    "BioNLP13CG": ("Aspirin blocks COX2 in mouse macrophages .", [(0, 1, "CHEMICAL"), (2, 3, "GENE"), (4, 5, "SPECIES"), (5, 6, "CELL")]),
}
ANNOTATES = {"NCBI-disease": ["DISEASE"], "BC2GM": ["GENE"], "BioNLP13CG": ["CELL", "CHEMICAL", "GENE", "SPECIES"]}


def _write_corpora(directory: Path) -> Path:
    nlp = spacy.blank("en")
    for corpus, (text, ents) in CORPORA.items():
        docs = []
        for i in range(4):
            doc = nlp.make_doc(text)
            doc.set_ents([Span(doc, s, e, label=label) for s, e, label in ents], default="outside")
            set_annotated_entity_types(doc, ANNOTATES[corpus])
            docs.append(doc)
        for split in ("train", "devel", "test"):
            (directory / corpus).mkdir(parents=True, exist_ok=True)
            DocBin(docs=docs, store_user_data=True).to_disk(directory / corpus / f"{split}.spacy")
    return directory


def _overrides(directory: Path) -> dict:
    names = list(CORPORA)
    return {"paths.corpus_dir": str(directory), "corpora.train.corpora": names, "corpora.dev.corpora": names,
            "training.max_steps": 3, "training.eval_frequency": 3}


def test_the_reader_gives_each_corpus_the_types_the_table_maps(tmp_path):
    from spacy_biolm.corpora.multitask import entity_type_corpora

    tasks = entity_type_corpora(_write_corpora(tmp_path), list(CORPORA), "train")
    assert {name: list(task.entity_types) for name, task in tasks.items()} == {
        "NCBI-disease": ["DISEASE"], "BC2GM": ["GENE"], "BioNLP13CG": ["GENE", "CHEMICAL", "SPECIES", "CELL"]}
    with pytest.raises(ValueError, match="AnatEM annotates no entity type completely"):
        entity_type_corpora(tmp_path, ["AnatEM"], "train")
    with pytest.raises(ValueError, match="no entity-type table for corpus 'Mine'"):
        entity_type_corpora(tmp_path, ["Mine"], "train")
    # A leave-one-corpus-out run reads every corpus but the held-out one.
    assert list(entity_type_corpora(tmp_path, list(CORPORA), "train", held_out="BC2GM")) == ["NCBI-disease", "BioNLP13CG"]
    with pytest.raises(ValueError, match="held_out corpus 'CRAFT' is not among the reader's corpora"):
        entity_type_corpora(tmp_path, list(CORPORA), "train", held_out="CRAFT")


def test_an_ablation_lets_only_the_corpora_it_names_teach_a_type(tmp_path):
    from spacy_biolm.corpora.multitask import entity_type_corpora
    from spacy_biolm.doc_data import annotated_entity_types
    from spacy_biolm.pipes.typed_ner.component import learning_view

    tasks = entity_type_corpora(_write_corpora(tmp_path), list(CORPORA), "train", type_corpora={"GENE": ["BC2GM"]})
    nlp = spacy.blank("en")
    cg = next(iter(tasks["BioNLP13CG"](nlp))).reference
    # BioNLP13CG still marks its gene and teaches its other types; it no longer teaches GENE.
    assert annotated_entity_types(cg) == {"CHEMICAL", "SPECIES", "CELL"} and "GENE" in {e.label_ for e in cg.ents}
    assert all(token.ent_iob_ == "" for token in learning_view(cg, ["GENE"]))
    assert [t.ent_iob_ for t in learning_view(cg, ["CHEMICAL"])][:3] == ["B", "O", "O"]
    assert annotated_entity_types(next(iter(tasks["BC2GM"](nlp))).reference) == {"GENE"}
    with pytest.raises(ValueError, match=r"type_corpora 'GENE': \['NCBI-disease'\] must be corpora of the reader"):
        entity_type_corpora(tmp_path, list(CORPORA), "train", type_corpora={"GENE": ["NCBI-disease"]})
    # The config's train reader takes it as a command-line override (workflow gene-sources).
    from spacy.util import registry

    config = load_config(CONFIGS / "ner_entity_types.cfg", overrides={
        **_overrides(tmp_path), "corpora.train.type_corpora": {"GENE": ["BC2GM"]}}, interpolate=True)
    reader = registry.resolve({"train": config["corpora"]["train"]})["train"]
    assert {name: set(task.annotated_types) for name, task in reader.corpora.items()} == {
        "NCBI-disease": {"DISEASE"}, "BC2GM": {"GENE"}, "BioNLP13CG": {"CHEMICAL", "SPECIES", "CELL"}}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from spacy.cli.train import train

    from spacy_biolm.testing import make_tiny_encoder

    work = tmp_path_factory.mktemp("entity_types")
    directory = _write_corpora(work / "corpus")
    encoder = make_tiny_encoder(work / "encoder", vocab_sentences=[text for text, _ in CORPORA.values()] * 20,
                                vocab_size=120, layers=1)
    out = {}
    for name, extra in [("ner_entity_types", {"paths.encoder": str(encoder)}), ("ner_entity_types_cnn", {})]:
        train(CONFIGS / f"{name}.cfg", work / name, overrides={**_overrides(directory), **extra})
        out[name] = work / name / "model-last"
    return directory, out


@pytest.mark.parametrize("name", ["ner_entity_types", "ner_entity_types_cnn"])
def test_spacy_train_trains_one_typed_ner_per_type(trained, name):
    _, models = trained
    nlp = spacy.load(models[name])
    assert nlp.pipe_names == load_config(CONFIGS / f"{name}.cfg", interpolate=False)["nlp"]["pipeline"]
    assert {pipe: nlp.get_pipe(pipe).labels for pipe in TYPES} == {pipe: (t,) for pipe, t in TYPES.items()}


def test_corpora_are_scored_on_their_types_and_tabulated_with_unseen_corpora_marked(trained, tmp_path):
    from spacy_biolm.evaluation.entities import entity_corpora_table, evaluate_entity_corpora

    directory, models = trained
    full = evaluate_entity_corpora(models["ner_entity_types"], directory, list(CORPORA), tmp_path / "all.json")
    assert full["trained_on"] == list(CORPORA) and full["types"] == sorted(TYPES.values())
    assert full["taught"]["BioNLP13CG"] == ["GENE", "CHEMICAL", "SPECIES", "CELL"]
    assert {c: s["types"] for c, s in full["corpora"].items()} == {c: sorted(t) for c, t in ANNOTATES.items()}
    assert json.loads((tmp_path / "all.json").read_text())["run"]["date"]
    # A pipeline of DISEASE and GENE only, trained on NCBI-disease alone: BioNLP13CG is scored on GENE,
    # and BC2GM and BioNLP13CG are corpora it never trained on.
    nlp = spacy.load(models["ner_entity_types_cnn"])
    for name in ("ner_chemical", "ner_species", "ner_cell"):
        nlp.remove_pipe(name)
    nlp.config["corpora"]["train"]["corpora"] = ["NCBI-disease"]
    nlp.to_disk(tmp_path / "two_types")
    two = evaluate_entity_corpora(tmp_path / "two_types", directory, list(CORPORA), tmp_path / "two.json")
    assert two["trained_on"] == ["NCBI-disease"] and two["corpora"]["BioNLP13CG"]["types"] == ["GENE"]
    # An assembled pipeline's config names no training corpora: they are given.
    told = evaluate_entity_corpora(tmp_path / "two_types", directory, ["BC2GM"], trained=["NCBI-disease", "BC2GM"])
    assert told["trained_on"] == ["NCBI-disease", "BC2GM"] and told["taught"] == {"NCBI-disease": ["DISEASE"], "BC2GM": ["GENE"]}
    table = entity_corpora_table({"five types": tmp_path / "all.json", "two types": tmp_path / "two.json"})
    gene_rows = [line for line in table.splitlines() if line.startswith("| GENE |")]
    assert len(gene_rows) == 2 and all(line.endswith(" † |") for line in gene_rows)
    chemical = next(line for line in table.splitlines() if line.startswith("| CHEMICAL |"))
    assert chemical.endswith("| – |") and "macro (1 corpora)" not in table.split("| CHEMICAL |")[1]
    assert "**macro (2 corpora)**" in table  # GENE: both pipelines scored on BC2GM and BioNLP13CG


def test_held_out_runs_score_each_corpus_by_a_pipeline_that_never_read_it_and_resume(trained, tmp_path, monkeypatch):
    from spacy_biolm.evaluation.entities import entity_corpora_table
    from spacy_biolm.experiments import held_out

    directory, models = trained
    config, overrides = CONFIGS / "ner_entity_types_cnn.cfg", _overrides(directory)
    result = held_out.run_held_out(config, tmp_path / "runs", directory, ["BC2GM", "BioNLP13CG"], overrides)
    assert result["trained_on"] == [] and list(result["corpora"]) == ["BC2GM", "BioNLP13CG"]
    assert result["held_out"]["BC2GM"]["trained_on"] == ["NCBI-disease", "BioNLP13CG"]
    assert result["held_out"]["BioNLP13CG"]["trained_on"] == ["NCBI-disease", "BC2GM"]
    assert result["corpora"]["BioNLP13CG"]["types"] == ANNOTATES["BioNLP13CG"]
    assert spacy.load(tmp_path / "runs" / "BC2GM" / "model-best").config["paths"]["held_out"] == "BC2GM"
    kept = held_out.run_held_out(config, tmp_path / "checkout_1", directory, ["BioNLP13CG"], overrides, scores_dir=tmp_path / "kept")
    assert json.loads((tmp_path / "kept" / "BioNLP13CG.json").read_text())["corpora"] == kept["corpora"]
    # Scored runs are reused: nothing trains again, and the scores are the same.
    monkeypatch.setattr("spacy.cli.train.train", lambda *a, **k: pytest.fail("a scored run was trained again"))
    assert held_out.run_held_out(config, tmp_path / "runs", directory, ["BC2GM", "BioNLP13CG"], overrides)["corpora"] == result["corpora"]
    # Scores kept in a folder of their own (committed) resume the matrix in a checkout without the runs.
    shutil.rmtree(tmp_path / "checkout_1")
    assert held_out.run_held_out(config, tmp_path / "checkout_2", directory, ["BioNLP13CG"], overrides,
                                 scores_dir=tmp_path / "kept")["corpora"] == kept["corpora"]
    # The matrix so far: the scored runs' column, the others named, nothing trained.
    so_far = held_out.run_held_out(config, tmp_path / "checkout_3", directory, ["BC2GM", "BioNLP13CG"], overrides,
                                   scores_dir=tmp_path / "kept", scored_only=True)
    assert so_far["corpora"] == kept["corpora"] and so_far["not_run"] == ["BC2GM"]
    with pytest.raises(ValueError, match="another recipe"):
        held_out.run_held_out(config, tmp_path / "runs", directory, ["BC2GM"], {**overrides, "training.max_steps": 4})
    with pytest.raises(FileNotFoundError, match="CRAFT/test.spacy missing"):
        held_out.run_held_out(config, tmp_path / "runs", directory, ["CRAFT"], overrides)
    # The command writes the reused runs' column; its config overrides are the runs' recipe.
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    args = ["evaluate", "held-out", str(config), str(tmp_path / "runs"), str(directory), "--corpus", "BC2GM",
            "--output", str(tmp_path / "cli.json"), *(f"--{k}={json.dumps(v)}" for k, v in overrides.items())]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert json.loads((tmp_path / "cli.json").read_text())["corpora"]["BC2GM"] == result["corpora"]["BC2GM"]
    refused = CliRunner().invoke(app, args[:-len(overrides)] + ["--training.max_steps=4"])
    assert refused.exit_code == 1 and "another recipe" in refused.output
    # In the table the held-out column is cross-corpus everywhere, beside the in-corpus pipeline.
    from spacy_biolm.evaluation.entities import evaluate_entity_corpora
    from spacy_biolm.run_record import write_json

    write_json(tmp_path / "held_out.json", result)
    evaluate_entity_corpora(models["ner_entity_types_cnn"], directory, list(CORPORA), tmp_path / "all.json")
    table = entity_corpora_table({"in corpus": tmp_path / "all.json", "held out": tmp_path / "held_out.json"})
    bc2gm = next(line for line in table.splitlines() if line.startswith("| GENE | BC2GM |"))
    assert bc2gm.endswith(" † |") and bc2gm.count("†") == 1
    disease = next(line for line in table.splitlines() if line.startswith("| DISEASE | NCBI-disease |"))
    assert disease.endswith("| – |")  # NCBI-disease was not held out
    # GENE's cross-corpus macro: BC2GM and BioNLP13CG, which only the held-out runs never read.
    cross = next(line for line in table.splitlines() if line.startswith("| **GENE** | **cross-corpus macro (2 corpora)**"))
    assert [cell.strip() for cell in cross.split("|")[3:5]] == ["–", "**{:.1f}**".format(
        50 * sum(result["corpora"][c]["ents_per_type"]["GENE"]["f"] for c in ("BC2GM", "BioNLP13CG")))]
