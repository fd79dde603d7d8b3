"""Each relation input mode trains from its config file alone (`spacy train` on the file; the
overrides only point at a tiny corpus and a tiny encoder and cut the budget)."""

from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_biolm.evaluation.relations import evaluate_relations, relation_architecture, train_relations
from spacy_biolm.doc_data import Relation, set_relations

REPO = Path(__file__).resolve().parents[4]

# (config, entity labels of the pair, a positive label); the sentence's verb gives the label.
CASES = {
    "relations_gad_fast.cfg": (("GENE", "DISEASE"), "ASSOCIATION"),
    "relations_chemprot_anonymised.cfg": (("CHEMICAL", "GENE"), "CPR:4"),
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


@pytest.mark.parametrize("name", list(CASES))
def test_relation_mode_trains_from_its_config_file(name, relation_encoder, tmp_path):
    labels, positive = CASES[name]
    corpus = write_corpus(tmp_path / "train.spacy", labels, positive)
    overrides = {"paths.train": str(corpus), "paths.dev": str(corpus), "paths.encoder": str(relation_encoder),
                 "training.max_steps": 3, "training.eval_frequency": 3}
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
