"""What the three question-answering components share on top of ``pipes.base``: the question of
a Doc, (question, passage) inputs and the default model config (an architecture on a
``spacy-biolm.PairEncoder.v1``).

Import-light (spaCy): imported by the factory entry points.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc

from ..doc_data import get_question

__all__ = ["passage_pairs", "qa_factory_config"]


def passage_pairs(docs: Sequence[Doc], component: str) -> Tuple[List[Tuple[str, str]], List[int]]:
    """One (question, passage) pair per Doc (the Doc is the passage), owned by the Doc's index."""
    return [(get_question(doc, component), doc.text) for doc in docs], list(range(len(docs)))


def qa_factory_config(
    architecture: str, scorer: str, window: int, stride: int, head: Optional[Dict[str, Any]] = None, **settings: Any
) -> Dict[str, Any]:
    """A QA component's default config: ``architecture`` (with its ``head`` settings, by default
    a dropout of 0.1) on a ``spacy-biolm.PairEncoder.v1`` (the published ELECTRA-Small until a
    config names another encoder), the registered ``scorer`` and the component's own ``settings``."""
    model: Dict[str, Optional[Any]] = {
        "@architectures": architecture,
        **({"dropout": 0.1} if head is None else head),
        "encoder": {
            "@architectures": "spacy-biolm.PairEncoder.v1",
            "name": "google/electra-small-discriminator",
            "window": window,
            "stride": stride,
        },
    }
    return {"model": model, **settings, "scorer": {"@scorers": scorer}}
