"""Learning-rate schedules for `spacy train` whose shape scales with the run's length."""

from thinc.api import warmup_linear
from spacy.util import registry

__all__ = ["create_warmup_linear"]


@registry.schedules("spacy-biolm.warmup_linear.v1")
def create_warmup_linear(initial_rate: float, total_steps: int, warmup_fraction: float = 0.1):
    """Linear warmup over ``warmup_fraction`` of ``total_steps`` to ``initial_rate``, then linear
    decay to zero at ``total_steps``.

    A budget is given in steps (``[training] max_steps``), and the warmup is a share of it, so a
    short default run reaches its peak rate as surely as a long full one (a fixed warmup of a few
    hundred steps would leave a 150-step run still warming up when it ends).
    """
    if total_steps <= 0:
        raise ValueError(
            f"spacy-biolm.warmup_linear.v1: total_steps must be positive (set [training] max_steps), got {total_steps}"
        )
    if not 0.0 <= warmup_fraction < 1.0:
        raise ValueError(f"spacy-biolm.warmup_linear.v1: warmup_fraction must be in [0, 1), got {warmup_fraction}")
    warmup_steps = max(1, round(warmup_fraction * total_steps))
    return warmup_linear(initial_rate=initial_rate, warmup_steps=warmup_steps, total_steps=total_steps)
