"""Several ``[training] before_update`` callbacks where spaCy takes one."""

from typing import Callable

from spacy.util import registry

__all__ = ["create_callback_chain"]


@registry.callbacks("spacy-biolm.callback_chain.v1")
def create_callback_chain(*callbacks: Callable[..., None]) -> Callable[..., None]:
    """One callback that calls each of ``callbacks`` in turn with the same arguments. In a config
    each is a named section, ``[training.before_update.*.NAME]``, called in the config's order."""
    if not callbacks:
        raise ValueError("spacy-biolm.callback_chain.v1: expected at least one callback")

    def chained(*args, **kwargs) -> None:
        for callback in callbacks:
            callback(*args, **kwargs)

    return chained
