import time

import pytest
from spacy.util import registry


def _slow_batches(items):
    for item in items:
        time.sleep(0.02)
        yield [item]


def test_time_budget_stops_batching_and_later_epochs_are_empty():
    make = registry.batchers.get("spacy-biolm.time_budget_batcher.v1")
    batcher = make(batcher=_slow_batches, seconds=0.1)
    first_epoch = list(batcher(range(100)))
    assert 2 <= len(first_epoch) < 20
    assert first_epoch[0] == [0]
    assert list(batcher(range(100))) == []  # the budget is for the whole training run


def test_budget_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        registry.batchers.get("spacy-biolm.time_budget_batcher.v1")(batcher=_slow_batches, seconds=0)
