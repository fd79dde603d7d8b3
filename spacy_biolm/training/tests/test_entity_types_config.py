"""add_entity_types: the release's multi-task config with a typed_ner per new type, taught only by the
corpora added for it."""

from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin, Span
from spacy.util import load_config, registry

from spacy_biolm.doc_data import annotated_entity_types
from spacy_biolm.training.entity_types_config import add_entity_types, typed_ner_types

REPO = Path(__file__).resolve().parents[3]
RELEASE = load_config(REPO / "configs" / "release_multitask.cfg", interpolate=False)
NEW_TYPES = ["CHEMICAL", "SPECIES", "CELL"]


def test_a_typed_ner_per_new_type_after_the_release_ones_built_like_the_template():
    config = add_entity_types(RELEASE, "corpus/ner", ["LINNAEUS", "BioNLP13CG", "BioNLP11ID"], NEW_TYPES)
    assert config["nlp"]["pipeline"] == ["sentencizer", "transformer", "ner", "ner_gene", "ner_chemical", "ner_species",
                                         "ner_cell", "relation_extractor", "hallmarks"]
    assert typed_ner_types(config) == {"ner": ["DISEASE"], "ner_gene": ["GENE"], "ner_chemical": ["CHEMICAL"],
                                       "ner_species": ["SPECIES"], "ner_cell": ["CELL"]}
    chemical = dict(config["components"]["ner_chemical"])
    assert {**chemical, "entity_types": ["GENE"]} == dict(RELEASE["components"]["ner_gene"])
    assert typed_ner_types(RELEASE) == {"ner": ["DISEASE"], "ner_gene": ["GENE"]}  # the input is left alone


def test_added_corpora_teach_only_the_new_types_and_the_release_tasks_stay():
    config = add_entity_types(RELEASE, "corpus/ner", ["LINNAEUS", "BioNLP13CG"], NEW_TYPES, dev_limit=50)
    train, dev = config["corpora"]["train"]["tasks"], config["corpora"]["dev"]["tasks"]
    assert list(train) == ["diseases", "genes", "relations", "hallmarks", "LINNAEUS", "BioNLP13CG"]
    # BioNLP13CG's genes are read (its file has them) but teach no component: GENE stays BC2GM's.
    assert train["BioNLP13CG"]["entity_types"] == ["GENE", "CHEMICAL", "SPECIES", "CELL"]
    assert train["BioNLP13CG"]["annotated_types"] == ["CHEMICAL", "SPECIES", "CELL"]
    assert train["LINNAEUS"]["annotated_types"] == ["SPECIES"]
    assert train["BioNLP13CG"]["path"] == str(Path("corpus/ner/BioNLP13CG/train.spacy")) and train["BioNLP13CG"]["limit"] == 0
    assert dev["BioNLP13CG"]["path"] == str(Path("corpus/ner/BioNLP13CG/devel.spacy")) and dev["BioNLP13CG"]["limit"] == 50
    assert train["genes"] == RELEASE["corpora"]["train"]["tasks"]["genes"]


def test_the_written_task_corpus_records_only_the_taught_types_on_each_doc(tmp_path):
    nlp = spacy.blank("en")
    doc = nlp.make_doc("Cisplatin induces BRCA1 in HeLa cells of mice .")
    doc.ents = [Span(doc, 0, 1, label="CHEMICAL"), Span(doc, 2, 3, label="GENE"), Span(doc, 4, 6, label="CELL"),
                Span(doc, 7, 8, label="SPECIES")]
    for split in ("train", "devel"):
        (tmp_path / "BioNLP13CG").mkdir(exist_ok=True)
        DocBin(docs=[doc], store_user_data=True).to_disk(tmp_path / "BioNLP13CG" / f"{split}.spacy")
    config = add_entity_types(RELEASE, tmp_path, ["BioNLP13CG"], NEW_TYPES)
    config.to_disk(tmp_path / "five_types.cfg")
    written = load_config(tmp_path / "five_types.cfg", interpolate=False)["corpora"]["train"]["tasks"]["BioNLP13CG"]
    reader = registry.resolve({"reader": written})["reader"]
    [example] = list(reader(nlp))
    assert annotated_entity_types(example.reference) == frozenset(NEW_TYPES)
    assert [e.label_ for e in example.reference.ents] == ["CHEMICAL", "GENE", "CELL", "SPECIES"]


@pytest.mark.parametrize("corpora,types,template,message", [
    (["BioNLP13CG"], ["GENE"], "ner_gene", "already has a typed_ner for GENE"),
    (["BioNLP13CG"], ["DRUG"], "ner_gene", "not one of the release's"),
    (["NCBI-disease"], ["CHEMICAL"], "ner_gene", "NCBI-disease annotates none of"),
    (["LINNAEUS"], ["SPECIES", "CHEMICAL"], "ner_gene", r"annotates \['CHEMICAL'\]"),
    (["LINNAEUS"], ["SPECIES"], "hallmarks", "not a typed_ner"),
])
def test_add_entity_types_rejects(corpora, types, template, message):
    with pytest.raises(ValueError, match=message):
        add_entity_types(RELEASE, "corpus/ner", corpora, types, template=template)
