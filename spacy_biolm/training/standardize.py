"""Per-dimension standardisation of a frozen encoder's token vectors, with statistics gathered
while the head trains.

Why: a transformer's token vectors share one large common direction (every dimension has a mean
far from zero and varies little across texts). Heads fine-tuned with their encoder never see
this, because the encoder moves; heads trained on a frozen encoder do, and Adam on the raw vectors
barely learns (hallmarks on the frozen disease-NER encoder: macro AUC 0.57 on dev, and a linear
layer cannot fit 60 training abstracts; centred and scaled, it fits them exactly)."""

from typing import Callable, List, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats1d, Floats2d

__all__ = ["build_standardized"]

EPSILON = 1e-5


@registry.architectures("spacy-biolm.Standardized.v1")
def build_standardized(tok2vec: Model[list, List[Floats2d]]) -> Model[list, List[Floats2d]]:
    """``tok2vec`` (a TransformerListener of a frozen encoder) followed by a standardizer: every
    output dimension centred and scaled by the mean and standard deviation over all training
    tokens seen so far. The statistics are the layer's weights (saved with the pipeline, not
    updated by the optimizer); at prediction they are fixed, so the head reads an affine map of
    the encoder's vectors."""
    return Model(
        "standardized",
        _forward,
        init=_init,
        layers=[tok2vec],  # walked by the transformer to find its listener
        dims={"nO": None},
        params={"count": None, "mean": None, "m2": None},
    )


def _init(model: Model, X=None, Y=None) -> Model:
    tok2vec = model.layers[0]
    tok2vec.initialize(X=X)
    width = tok2vec.maybe_get_dim("nO")  # a listener's is set when it is attached to its transformer
    if not width:
        raise ValueError(f"spacy-biolm.Standardized.v1: the width (nO) of {tok2vec.name!r} is unknown; "
                         "is its transformer in the pipeline?")
    model.set_dim("nO", width)
    model.set_param("count", model.ops.alloc1f(1))
    model.set_param("mean", model.ops.alloc1f(width))
    model.set_param("m2", model.ops.alloc1f(width))
    return model


def _forward(model: Model, docs: list, is_train: bool) -> Tuple[List[Floats2d], Callable]:
    vectors, backprop_tok2vec = model.layers[0](docs, is_train)
    if is_train:
        _accumulate(model, vectors)
    mean, scale = _moments(model)
    standardized = [(array - mean) * scale for array in vectors]

    def backprop(d_standardized: List[Floats2d]) -> list:
        return backprop_tok2vec([d_array * scale for d_array in d_standardized])

    return standardized, backprop


def _accumulate(model: Model, vectors: List[Floats2d]) -> None:
    """Merge the batch's per-dimension count, mean and sum of squared deviations into the running
    ones (Chan et al.'s pairwise update: exact, and stable over millions of tokens)."""
    batch = [array for array in vectors if array.shape[0]]
    if not batch:
        return
    stacked = model.ops.xp.concatenate(batch)
    n_batch = float(stacked.shape[0])
    mean_batch = stacked.mean(axis=0)
    m2_batch = ((stacked - mean_batch) ** 2).sum(axis=0)
    count = float(model.get_param("count")[0])
    mean = model.get_param("mean")
    total = count + n_batch
    delta = mean_batch - mean
    model.set_param("mean", (mean + delta * (n_batch / total)).astype("float32"))
    model.set_param("m2", (model.get_param("m2") + m2_batch + delta ** 2 * (count * n_batch / total)).astype("float32"))
    model.set_param("count", model.ops.asarray1f([total]))


def _moments(model: Model) -> Tuple[Floats1d, Floats1d]:
    """Mean and 1/std; before any training token is seen, the identity (mean 0, scale 1)."""
    count = float(model.get_param("count")[0])
    if count < 2:
        return model.get_param("mean"), model.ops.xp.ones_like(model.get_param("mean"))
    variance = model.get_param("m2") / count
    return model.get_param("mean"), 1.0 / model.ops.xp.sqrt(variance + EPSILON)
