"""A pipeline's recorded spacy-biolm version against the installed one: pinned by the release,
checked when any spacy-biolm component is created (spacy.load included)."""

import json

import pytest
import spacy

from spacy_biolm import __version__
from spacy_biolm.versions import (
    SpacyBiolmVersionError,
    check_built_version,
    pin_requirement,
    recorded_requirement,
)


def test_pin_replaces_any_spacy_biolm_requirement_and_keeps_the_others():
    meta = {"requirements": ["spacy-transformers>=1.4.0,<1.5.0", "spacy_biolm>=0.1.0,<0.2.0"]}
    assert pin_requirement(meta, "1.2.3")["requirements"] == ["spacy-biolm==1.2.3", "spacy-transformers>=1.4.0,<1.5.0"]
    assert pin_requirement({})["requirements"] == [f"spacy-biolm=={__version__}"]
    assert meta["requirements"][1] == "spacy_biolm>=0.1.0,<0.2.0"  # the input is not changed


def test_recorded_requirement_normalises_the_name():
    assert recorded_requirement(["Spacy.BioLM == 0.1.0"]) == "== 0.1.0"
    assert recorded_requirement(["spacy-transformers>=1.4"]) is None
    assert recorded_requirement([]) is None


def test_matching_range_or_absent_requirement_passes():
    check_built_version({"requirements": ["spacy-biolm==0.1.0"]}, installed="0.1.0")
    check_built_version({"requirements": ["spacy-biolm>=0.1.0,<0.2.0"]}, installed="0.1.5")
    check_built_version({"requirements": ["spacy-transformers>=1.4"]}, installed="9.9.9")
    check_built_version({}, installed="9.9.9")


def test_mismatch_names_both_versions_and_the_pipeline():
    meta = {"lang": "en", "name": "bio_electra", "version": "0.2.0", "requirements": ["spacy-biolm==0.1.0"]}
    with pytest.raises(SpacyBiolmVersionError) as error:
        check_built_version(meta, installed="0.3.0")
    message = str(error.value)
    assert "en_bio_electra 0.2.0" in message and "spacy-biolm==0.1.0" in message and "spacy-biolm 0.3.0 is installed" in message


@pytest.mark.parametrize("factory", ["biolm_abbreviations", "relation_extractor", "yes_no", "answer_span",
                                     "answer_reranker"])
def test_every_factory_checks_the_recorded_version(factory):
    nlp = spacy.blank("en")
    nlp.meta["requirements"] = ["spacy-biolm==0.0.0.dev1"]
    with pytest.raises(SpacyBiolmVersionError, match=f"spacy-biolm {__version__} is installed"):
        nlp.add_pipe(factory)


def test_spacy_load_of_a_pipeline_built_with_another_version_fails_clearly(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("biolm_abbreviations")
    nlp.to_disk(tmp_path / "pipeline")
    assert spacy.load(tmp_path / "pipeline").pipe_names == ["biolm_abbreviations"]  # nothing recorded: loads
    meta_path = tmp_path / "pipeline" / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf8"))
    meta_path.write_text(json.dumps(pin_requirement(meta)), encoding="utf8")
    assert spacy.load(tmp_path / "pipeline").pipe_names == ["biolm_abbreviations"]  # this version: loads
    meta_path.write_text(json.dumps(pin_requirement(meta, "0.0.1")), encoding="utf8")
    with pytest.raises(SpacyBiolmVersionError, match=r"built with spacy-biolm==0\.0\.1 .* spacy-biolm \S+ is installed"):
        spacy.load(tmp_path / "pipeline")
