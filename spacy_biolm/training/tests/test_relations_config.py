"""add_relation_extractor: the release's multi-task config with ChemProt's extractor beside GAD's."""

from pathlib import Path

import pytest
from spacy.util import load_config

from spacy_biolm.training.relations_config import add_relation_extractor

REPO = Path(__file__).resolve().parents[3]
RELEASE = load_config(REPO / "configs" / "release_multitask.cfg", interpolate=False)


def chemprot(config=RELEASE, **changes):
    settings = dict(name="relation_chemprot", dataset="chemprot", task="chemprot",
                    train="corpus/relations/CHEMPROT/train.spacy", dev="corpus/relations/CHEMPROT/dev.spacy",
                    score_prefix="chemprot", score_weight=0.1, dev_limit=300)
    return add_relation_extractor(config, **{**settings, **changes})


def test_a_second_extractor_after_the_first_built_like_it_with_its_own_labels_pairs_and_score_keys():
    config = chemprot()
    assert config["nlp"]["pipeline"] == ["sentencizer", "transformer", "ner", "ner_gene", "relation_extractor",
                                         "relation_chemprot", "hallmarks"]
    added, template = dict(config["components"]["relation_chemprot"]), dict(RELEASE["components"]["relation_extractor"])
    assert added["labels"] == ["CPR:3", "CPR:4", "CPR:5", "CPR:6", "CPR:9"] and added["pair_types"] == [["CHEMICAL", "GENE"]]
    assert added["scorer"] == {"@scorers": "spacy-biolm.relations_scorer.v1", "prefix": "chemprot"}
    assert {k: v for k, v in added.items() if k not in ("labels", "pair_types", "scorer")} == \
        {k: v for k, v in template.items() if k not in ("labels", "pair_types", "scorer")}
    train, dev = config["corpora"]["train"]["tasks"], config["corpora"]["dev"]["tasks"]
    assert list(train) == ["diseases", "genes", "relations", "hallmarks", "chemprot"]
    assert train["chemprot"] == {"@readers": "spacy-biolm.TaskCorpus.v1", "path": str(Path("corpus/relations/CHEMPROT/train.spacy")),
                                 "annotates": ["relations"], "gold_entities": True, "limit": 0}
    assert dev["chemprot"]["limit"] == 300
    weights = config["training"]["score_weights"]
    assert weights["chemprot_micro_f"] == 0.1 and weights["rel_micro_f"] == RELEASE["training"]["score_weights"]["rel_micro_f"]
    assert "relation_chemprot" not in RELEASE["components"]  # the input is left alone


@pytest.mark.parametrize("changes,message", [
    ({"name": "relation_extractor"}, "already has a component"),
    ({"template": "hallmarks"}, "not a relation_extractor"),
    ({"dataset": "drugprot"}, "unknown relation dataset 'drugprot'"),
    ({"dataset": "gad"}, r"relation_extractor already pairs \[\['GENE', 'DISEASE'\]\]"),
    ({"score_prefix": "rel"}, "prefix 'rel' is taken"),
    ({"task": "relations"}, "already has a task named 'relations'"),
])
def test_add_relation_extractor_rejects(changes, message):
    with pytest.raises(ValueError, match=message):
        chemprot(**changes)


def test_every_extractor_of_the_config_keeps_its_pairs_not_only_the_template():
    with pytest.raises(ValueError, match="relation_chemprot already pairs"):
        chemprot(chemprot(), name="relation_chemprot_2", task="other", score_prefix="other")
