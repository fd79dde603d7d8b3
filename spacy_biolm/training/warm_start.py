"""Start a training run from another trained pipeline's weights: the second stage of a transfer
recipe (SQuAD, then BioASQ), in a plain spaCy config.

spaCy's own way, ``[components.x] source = ...``, replaces the component's whole block, so the
same task config could not train both stages. This ``[initialize] after_init`` callback leaves the
config as it is: the components are created and initialized from the config as usual, then each one
that the trained pipeline ``path`` also has takes its weights and settings from it. With
``path = null`` (the configs' default, ``${paths.init}``) nothing changes, so
``--paths.init training/stage1/model-best`` is all a second stage adds to its command line.
"""

from pathlib import Path
from typing import Callable, List, Optional, Union

from spacy.language import Language
from spacy.util import registry

__all__ = ["create_warm_start", "warm_start"]


def warm_start(nlp: Language, path: Union[str, Path], components: Optional[List[str]] = None) -> List[str]:
    """Copy the weights (and settings) of ``components`` (default: every component the two pipelines
    share by name) from the trained pipeline at ``path`` into ``nlp``; returns the names copied.

    Raises ValueError when ``path`` shares no component with ``nlp``, when a named component is
    missing on either side, or when a component's model does not fit (another architecture or
    size): a stage that silently started from scratch would report the recipe's gain as zero."""
    import spacy

    path = Path(path)
    if not (path / "config.cfg").exists():
        raise ValueError(f"warm start: {path} is not a trained spaCy pipeline (no config.cfg)")
    source = spacy.load(path)
    names = list(components) if components is not None else [n for n in nlp.pipe_names if n in source.pipe_names]
    if not names:
        raise ValueError(f"warm start: {path} (components {source.pipe_names}) shares no component with this pipeline ({nlp.pipe_names})")
    for name in names:
        for pipeline, where in ((nlp, "this pipeline"), (source, str(path))):
            if name not in pipeline.pipe_names:
                raise ValueError(f"warm start: no component {name!r} in {where} (components {pipeline.pipe_names})")
        if source.get_pipe_meta(name).factory != nlp.get_pipe_meta(name).factory:
            raise ValueError(f"warm start: {name!r} is a {source.get_pipe_meta(name).factory!r} in {path}, "
                             f"a {nlp.get_pipe_meta(name).factory!r} here")
        try:
            nlp.get_pipe(name).from_bytes(source.get_pipe(name).to_bytes(exclude=["vocab"]), exclude=["vocab"])
        except Exception as error:  # thinc raises several kinds on a shape or architecture mismatch
            raise ValueError(f"warm start: the weights of {name!r} in {path} do not fit this config's model: {error}") from error
    return names


@registry.callbacks("spacy-biolm.warm_start.v1")
def create_warm_start(path: Optional[str] = None, components: Optional[List[str]] = None) -> Callable[[Language], Language]:
    """An ``[initialize] after_init`` callback: every component (or those named in ``components``)
    starts from the weights of the trained pipeline at ``path``; ``path = null`` changes nothing.

    Example config::

        [paths]
        init = null

        [initialize.after_init]
        @callbacks = "spacy-biolm.warm_start.v1"
        path = ${paths.init}
        components = null
    """

    def after_init(nlp: Language) -> Language:
        if path:
            copied = warm_start(nlp, path, components)
            nlp.meta.setdefault("spacy_biolm", {})["warm_start"] = {"path": str(path), "components": copied}
        return nlp

    return after_init
