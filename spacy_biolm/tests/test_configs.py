"""Every spaCy training config in configs/ passes ``spacy debug config`` (its corpora pointed at
a small DocBin: the shipped paths name project outputs that a checkout does not have)."""

from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.util import load_config

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"

# Not spaCy training configs: pretrain_*.cfg are `spacy-biolm pretrain` settings, tune_*.cfg a
# hyperopt search space, release*.cfg the `spacy assemble` recipes of trained pipelines.
NOT_TRAINING = ("pretrain_*.cfg", "tune_*.cfg", "release*.cfg")


def training_configs():
    skipped = {path for pattern in NOT_TRAINING for path in CONFIGS.glob(pattern)}
    return sorted(path for path in CONFIGS.glob("*.cfg") if path not in skipped)


def test_the_split_between_training_and_other_configs_is_known():
    names = {path.name for path in training_configs()}
    assert {"relations_gad_fast.cfg", "relations_gad_anonymised.cfg", "relations_chemprot_fast.cfg",
            "relations_chemprot_anonymised.cfg", "yes_no.cfg", "answer_span.cfg", "answer_reranker.cfg",
            "ner.cfg"} <= names
    for path in training_configs():
        assert "training" in load_config(path, interpolate=False), path


@pytest.mark.parametrize("path", training_configs(), ids=lambda p: p.name)
def test_config_passes_spacy_debug_config(path, tmp_path):
    from spacy.cli.debug_config import debug_config

    docbin = tmp_path / "one.spacy"
    DocBin(docs=[spacy.blank("en")("BRCA1 causes cancer .")], store_user_data=True).to_disk(docbin)
    paths = load_config(path, interpolate=False).get("paths", {})
    overrides = {f"paths.{key}": str(docbin) for key, value in paths.items()
                 if isinstance(value, str) and value.endswith(".spacy")}
    debug_config(path, overrides=overrides)
