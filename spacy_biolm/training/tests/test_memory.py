import sys
from pathlib import Path

import pytest
from spacy.util import load_config, registry

from spacy_biolm.training import memory

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def test_the_callback_releases_memory_every_interval_updates(monkeypatch):
    released = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: released.append(True) or True)
    callback = registry.callbacks.get("spacy-biolm.trim_memory.v1")(interval=10)
    for step in range(35):
        callback(None, {"step": step, "epoch": 0})
    assert len(released) == 4  # steps 0, 10, 20, 30


def test_a_non_positive_interval_is_refused():
    with pytest.raises(ValueError, match="interval"):
        registry.callbacks.get("spacy-biolm.trim_memory.v1")(interval=0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_glibc_gives_freed_memory_back():
    assert memory.release_free_memory() is True


@pytest.mark.parametrize(
    "name",
    ["ner", "hoc", "yes_no", "answer_span", "answer_reranker", "relations_anonymised", "relations_fast"],
)
def test_every_transformer_fine_tuning_config_keeps_its_memory_flat(name):
    before_update = load_config(CONFIGS / f"{name}.cfg", interpolate=False)["training"]["before_update"]
    assert before_update["@callbacks"] == "spacy-biolm.trim_memory.v1"
