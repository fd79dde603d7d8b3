"""Each relation input mode trains from its config file alone (`spacy train` on the file; the
overrides only point at a tiny corpus and a tiny encoder and cut the budget)."""

from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_biolm.corpora.relations import dataset_overrides
from spacy_biolm.evaluation.relations import evaluate_relations, relation_architecture
from spacy_biolm.experiments.relations import train_relations
from spacy_biolm.doc_data import Relation, set_relations

REPO = Path(__file__).resolve().parents[4]

# (config, dataset switch, entity labels of the pair, a positive label); the sentence's verb gives the label.
CASES = {
    "fast, GAD": ("relations_fast.cfg", None, ("GENE", "DISEASE"), "ASSOCIATION"),
    "anonymised, ChemProt": ("relations_anonymised.cfg", "chemprot", ("CHEMICAL", "GENE"), "CPR:4"),
}


def write_corpus(path: Path, labels, positive: str, n: int = 12) -> Path:
    vocab = spacy.blank("en").vocab
    docs = []
    for i in range(n):
        related = i % 2 == 0
        doc = Doc(vocab, words=["Mutations", "in", "BRCA1", "causes" if related else "ignores", "cancer", "."])
        doc.ents = [Span(doc, 2, 3, label=labels[0]), Span(doc, 4, 5, label=labels[1])]
        set_relations(doc, [Relation(doc.ents[0], doc.ents[1], positive)] if related else [])
        docs.append(doc)
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path


@pytest.mark.parametrize("case", list(CASES))
def test_relation_mode_trains_from_its_config_file(case, relation_encoder, tmp_path):
    name, dataset, labels, positive = CASES[case]
    corpus = write_corpus(tmp_path / "train.spacy", labels, positive)
    overrides = {"paths.train": str(corpus), "paths.dev": str(corpus), "paths.encoder": str(relation_encoder),
                 "training.max_steps": 3, "training.eval_frequency": 3}
    if dataset is not None:
        overrides.update(dataset_overrides(dataset, anonymised="anonymised" in name))
    model = train_relations(REPO / "configs" / name, tmp_path / "out", overrides=overrides, quiet=True)
    nlp = spacy.load(model)
    mode = relation_architecture(REPO / "configs" / name)
    assert nlp.get_pipe("relation_extractor").model.name == {
        "spacy-biolm.RelationFast.v1": "span_pair_relation", "spacy-biolm.RelationAnonymised.v1": "relation_anonymised",
    }[mode]
    assert nlp.pipe_names == (["transformer", "relation_extractor"] if "fast" in name else ["relation_extractor"])
    scores = evaluate_relations(model, corpus)
    assert scores["pairs"] == 12 and scores["docs"] == 12
    assert 0.0 <= scores["rel_micro_f"] <= 1.0


def test_the_dataset_switch_gives_chemprot_its_labels_pairs_and_placeholders_and_names_an_unknown_one():
    fast, anonymised = dataset_overrides("chemprot", anonymised=False), dataset_overrides("chemprot", anonymised=True)
    assert fast == {"components.relation_extractor.labels": ["CPR:3", "CPR:4", "CPR:5", "CPR:6", "CPR:9"],
                    "components.relation_extractor.pair_types": [["CHEMICAL", "GENE"]]}
    assert anonymised["components.relation_extractor.model.placeholders"] == {"CHEMICAL": "BC6ENTC", "GENE": "BC6ENTG"}
    assert anonymised["components.relation_extractor.model.other_placeholder"] == "BC6OTHER"
    # The configs are GAD's: switching to GAD changes nothing.
    config = spacy.util.load_config(REPO / "configs" / "relations_anonymised.cfg", interpolate=False)
    for key, value in dataset_overrides("gad", anonymised=True).items():
        node = config
        for part in key.split("."):
            node = node[part]
        assert node == value, key
    with pytest.raises(ValueError, match="unknown relation dataset 'eu-adr'"):
        dataset_overrides("eu-adr", anonymised=False)
