"""spacy-biolm.Standardized.v1: running per-dimension statistics of a frozen encoder's vectors."""

import numpy
import pytest
from thinc.api import Adam, Linear, Logistic, Model, chain, fix_random_seed

from spacy_biolm.training.standardize import build_standardized

WIDTH = 3


def _passthrough(width: int = WIDTH) -> Model:
    """Stands in for a frozen listener: returns its input arrays, takes no gradient."""
    return Model("passthrough", lambda model, X, is_train: (X, lambda dY: dY), dims={"nO": width})


def _batches(seed: int = 0):
    rng = numpy.random.default_rng(seed)
    # an encoder's vectors: a large shared offset, little variation, some empty docs
    make = lambda n: (rng.normal(0.0, [0.2, 0.5, 2.0], size=(n, WIDTH)) + [40.0, -3.0, 7.0]).astype("float32")
    return [[make(5), make(0), make(2)], [make(7)], [make(1), make(4)]]


def test_statistics_are_those_of_every_training_token():
    model = build_standardized(_passthrough()).initialize()
    batches = _batches()
    for batch in batches:
        model(batch, is_train=True)
    tokens = numpy.concatenate([array for batch in batches for array in batch])
    assert model.get_param("count")[0] == len(tokens)
    numpy.testing.assert_allclose(model.get_param("mean"), tokens.mean(axis=0), rtol=1e-5)
    numpy.testing.assert_allclose(model.get_param("m2") / len(tokens), tokens.var(axis=0), rtol=1e-3)
    standardized = numpy.concatenate(model.predict([tokens]))
    numpy.testing.assert_allclose(standardized.mean(axis=0), 0.0, atol=1e-3)
    numpy.testing.assert_allclose(standardized.std(axis=0), 1.0, rtol=1e-3)


def test_identity_before_training_and_fixed_at_prediction():
    model = build_standardized(_passthrough()).initialize()
    first = _batches()[0]
    assert all(numpy.array_equal(a, b) for a, b in zip(model.predict(first), first))
    model(first, is_train=True)
    mean = model.get_param("mean").copy()
    model.predict(_batches(seed=1)[0])
    assert numpy.array_equal(model.get_param("mean"), mean), "prediction changed the statistics"


def test_gradients_are_scaled_and_the_optimizer_leaves_the_statistics():
    model = build_standardized(_passthrough()).initialize()
    batches = _batches()
    outputs, backprop = model(batches[0], is_train=True)
    scale = 1.0 / numpy.sqrt(model.get_param("m2") / model.get_param("count")[0] + 1e-5)
    gradients = backprop([numpy.ones_like(array) for array in outputs])
    numpy.testing.assert_allclose(gradients[0], numpy.tile(scale, (5, 1)), rtol=1e-5)
    before = {name: model.get_param(name).copy() for name in ("count", "mean", "m2")}
    model.finish_update(Adam(0.1))
    assert all(numpy.array_equal(model.get_param(name), before[name]) for name in before)


def test_statistics_round_trip_through_bytes():
    model = build_standardized(_passthrough()).initialize()
    for batch in _batches():
        model(batch, is_train=True)
    loaded = build_standardized(_passthrough()).initialize().from_bytes(model.to_bytes())
    probe = _batches(seed=2)[0]
    assert all(numpy.array_equal(a, b) for a, b in zip(loaded.predict(probe), model.predict(probe)))


def test_a_linear_head_learns_from_standardized_but_not_raw_offset_vectors():
    """The reason for the layer: a label carried by a small variation on a large shared offset."""
    fix_random_seed(0)
    rng = numpy.random.default_rng(0)
    labels = rng.integers(0, 2, size=(64, 1)).astype("float32")
    vectors = (numpy.array([40.0, -30.0, 70.0]) + 0.01 * rng.normal(size=(64, WIDTH))).astype("float32")
    vectors[:, 0] += 0.1 * (labels[:, 0] - 0.5)

    def accuracy(encoder: Model) -> float:
        head = chain(encoder, Model("stack", lambda model, X, is_train: (numpy.concatenate(X), lambda dY: [dY])), Linear(1, WIDTH), Logistic())
        head.initialize()
        optimizer = Adam(0.01)
        for _ in range(300):
            scores, backprop = head([vectors], is_train=True)
            backprop((scores - labels) / len(labels))
            head.finish_update(optimizer)
        return float(((head.predict([vectors]) > 0.5) == labels).mean())

    assert accuracy(build_standardized(_passthrough())) == 1.0
    assert accuracy(_passthrough()) < 0.75


def test_tok2vec_without_width_is_an_error():
    with pytest.raises(ValueError, match="nO"):
        build_standardized(Model("no-width", lambda model, X, is_train: (X, lambda dY: dY))).initialize()
