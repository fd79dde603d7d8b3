"""add_relation_extractor: the release's multi-task config with ChemProt's extractor beside GAD's."""

from pathlib import Path

import pytest
from spacy.util import load_config

from spacy_biolm.corpora.relations import DATASETS
from spacy_biolm.training.relations_config import add_relation_extractor

REPO = Path(__file__).resolve().parents[3]
RELEASE = load_config(REPO / "configs" / "release_multitask.cfg", interpolate=False)
CHEMPROT = DATASETS["chemprot"]


def chemprot(config=RELEASE, **changes):
    settings = dict(name="relation_chemprot", labels=CHEMPROT["labels"], pair_types=CHEMPROT["pair_types"], task="chemprot",
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
    ({"labels": []}, "no relation labels"),
    ({"pair_types": [["GENE", "DISEASE"]]}, "already pairs"),
    ({"pair_types": [["CHEMICAL"]]}, r"\[head_type, tail_type\]"),
    ({"score_prefix": "rel"}, "prefix 'rel' is taken"),
    ({"task": "relations"}, "already has a task named 'relations'"),
])
def test_add_relation_extractor_rejects(changes, message):
    with pytest.raises(ValueError, match=message):
        chemprot(**changes)


def test_a_second_chemprot_extractor_would_overwrite_the_first_ones_scores():
    with pytest.raises(ValueError, match="prefix 'chemprot' is taken"):
        chemprot(chemprot(), name="relation_chemprot_2", pair_types=[["CHEMICAL", "DISEASE"]], task="other")
