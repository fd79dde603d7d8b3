from pathlib import Path

import pytest
import torch
from spacy.util import load_config, registry

from spacy_biolm.training.thread_share import THREAD_SHARE_ENV, read_thread_share, write_thread_share

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


@pytest.fixture
def torch_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_a_written_share_reads_back_and_a_missing_or_bad_one_reads_as_none(tmp_path):
    share = tmp_path / "logs" / "step.threads"
    assert read_thread_share(share) is None
    write_thread_share(share, 3)
    assert read_thread_share(share) == 3 and not list(share.parent.glob("*.partial"))
    share.write_text("two\n")
    assert read_thread_share(share) is None
    share.write_text("0\n")
    assert read_thread_share(share) is None
    with pytest.raises(ValueError, match="at least one thread"):
        write_thread_share(share, 0)


def test_the_callback_sets_torch_threads_to_the_share_every_interval_updates(tmp_path, monkeypatch, torch_threads):
    share = tmp_path / "step.threads"
    monkeypatch.setenv(THREAD_SHARE_ENV, str(share))
    follow = registry.callbacks.get("spacy-biolm.follow_thread_share.v1")(interval=5)
    torch.set_num_threads(1)
    follow(None, {"step": 0, "epoch": 0})  # no file yet: threads left alone
    assert torch.get_num_threads() == 1
    write_thread_share(share, 2)
    follow(None, {"step": 3, "epoch": 0})  # between intervals: not read
    assert torch.get_num_threads() == 1
    follow(None, {"step": 5, "epoch": 0})
    assert torch.get_num_threads() == 2
    write_thread_share(share, 1)
    follow(None, {"step": 10, "epoch": 0})
    assert torch.get_num_threads() == 1


def test_without_the_runner_the_callback_changes_nothing(monkeypatch, torch_threads):
    monkeypatch.delenv(THREAD_SHARE_ENV, raising=False)
    torch.set_num_threads(1)
    registry.callbacks.get("spacy-biolm.follow_thread_share.v1")(interval=1)(None, {"step": 0, "epoch": 0})
    assert torch.get_num_threads() == 1
    with pytest.raises(ValueError, match="interval"):
        registry.callbacks.get("spacy-biolm.follow_thread_share.v1")(interval=0)


def test_the_chain_calls_each_callback_in_the_configs_order():
    calls = []
    chained = registry.callbacks.get("spacy-biolm.callback_chain.v1")(
        lambda nlp, info: calls.append(("first", info["step"])), lambda nlp, info: calls.append(("second", info["step"])))
    chained(None, {"step": 7, "epoch": 0})
    assert calls == [("first", 7), ("second", 7)]
    with pytest.raises(ValueError, match="at least one callback"):
        registry.callbacks.get("spacy-biolm.callback_chain.v1")()


def test_the_multitask_config_trims_memory_and_follows_its_thread_share():
    config = load_config(CONFIGS / "release_multitask.cfg", interpolate=False)
    chain = config["training"]["before_update"]
    assert chain["@callbacks"] == "spacy-biolm.callback_chain.v1"
    assert [step["@callbacks"] for step in chain["*"].values()] == \
        ["spacy-biolm.trim_memory.v1", "spacy-biolm.follow_thread_share.v1"]
    assert callable(registry.resolve({"before_update": chain})["before_update"])
