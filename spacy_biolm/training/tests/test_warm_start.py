"""``spacy-biolm.warm_start.v1``: the second stage of a transfer recipe starts from the first
stage's trained pipeline through ``--paths.init`` of the unchanged task config."""

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.util import load_config

from spacy_biolm import make_question_doc
from spacy_biolm.testing import REPO, make_qa_nlp, overfit

PAIRS = [("Is BRCA1 a gene ?", "BRCA1 is a gene .", "yes"), ("Is aspirin a gene ?", "Aspirin is a drug .", "no")]


def _examples(nlp):
    examples = []
    for question, passage, answer in PAIRS:
        doc = make_question_doc(nlp, question, passage)
        reference = make_question_doc(nlp, question, passage)
        reference.cats = {"yes": float(answer == "yes"), "no": float(answer == "no")}
        examples.append(Example(doc, reference))
    return examples


@pytest.fixture
def stage_one(tiny_qa_encoder, tmp_path):
    nlp = make_qa_nlp(tiny_qa_encoder, "yes_no", window=32, stride=8)
    overfit(nlp, _examples(nlp), steps=20)
    nlp.to_disk(tmp_path / "stage1")
    docs = [eg.reference for eg in _examples(nlp)]
    DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "qa.spacy")
    return nlp, tmp_path


def _stage_two(tiny_qa_encoder, corpus, init):
    overrides = {"paths.encoder": str(tiny_qa_encoder), "paths.train": str(corpus), "paths.dev": str(corpus),
                 "paths.init": init, "components.yes_no.model.encoder.window": 32, "components.yes_no.model.encoder.stride": 8}
    return init_nlp(load_config(REPO / "configs" / "yes_no.cfg", overrides=overrides, interpolate=True))


def _no(nlp):
    return [nlp(make_question_doc(nlp, q, p)).cats["no"] for q, p, _ in PAIRS]


def test_second_stage_starts_from_the_first_stages_weights(stage_one, tiny_qa_encoder):
    first, folder = stage_one
    warm = _stage_two(tiny_qa_encoder, folder / "qa.spacy", str(folder / "stage1"))
    assert _no(warm) == pytest.approx(_no(first), abs=1e-6)
    assert warm.meta["spacy_biolm"]["warm_start"] == {"path": str(folder / "stage1"), "components": ["yes_no"]}
    cold = _stage_two(tiny_qa_encoder, folder / "qa.spacy", None)  # the config's default: the encoder alone
    assert max(abs(a - b) for a, b in zip(_no(cold), _no(first))) > 1e-3
    assert "warm_start" not in cold.meta.get("spacy_biolm", {})


def test_a_pipeline_without_the_component_is_an_error(stage_one, tiny_qa_encoder, tmp_path):
    _, folder = stage_one
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(ValueError, match="shares no component"):
        _stage_two(tiny_qa_encoder, folder / "qa.spacy", str(tmp_path / "blank"))
    with pytest.raises(ValueError, match="not a trained spaCy pipeline"):
        _stage_two(tiny_qa_encoder, folder / "qa.spacy", str(tmp_path / "nowhere"))
