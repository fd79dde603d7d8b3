from itertools import islice

import pytest
from spacy.util import registry


def _rates(schedule, steps):
    return list(islice(schedule, steps))


@pytest.mark.parametrize("total_steps", [20, 300, 3000])
def test_warmup_is_a_fraction_of_the_run_and_the_rate_reaches_zero_at_its_end(total_steps):
    make = registry.schedules.get("spacy-biolm.warmup_linear.v1")
    rates = _rates(make(initial_rate=1e-3, total_steps=total_steps, warmup_fraction=0.1), total_steps + 1)
    peak_step = max(range(len(rates)), key=rates.__getitem__)
    assert peak_step == round(0.1 * total_steps)
    assert rates[peak_step] == pytest.approx(1e-3)
    assert rates[0] < rates[peak_step] and rates[-1] == pytest.approx(0.0, abs=1e-12)


def test_a_run_without_a_step_budget_is_refused():
    make = registry.schedules.get("spacy-biolm.warmup_linear.v1")
    with pytest.raises(ValueError, match="max_steps"):
        make(initial_rate=1e-3, total_steps=0)
    with pytest.raises(ValueError, match="warmup_fraction"):
        make(initial_rate=1e-3, total_steps=100, warmup_fraction=1.5)
