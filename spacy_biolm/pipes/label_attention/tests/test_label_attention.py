"""Label-wise attention: gradients against finite differences, the empty-document prior, training
inside spaCy's textcat_multilabel, serialisation, and the config error."""

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import fix_random_seed
from thinc.types import Ragged

from spacy_biolm.pipes.label_attention import LabelAttention, build_label_attention_textcat

PARAMS = ("W", "c", "Q", "O", "b")


def _layer(seed=0):
    rng = numpy.random.default_rng(seed)
    layer = LabelAttention(nO=3, nI=5, attention_width=4)
    X = Ragged(rng.normal(size=(7, 5)).astype("f"), numpy.array([3, 0, 4], dtype="i"))
    layer.initialize(X=X)
    for name in PARAMS:  # away from the all-zero biases, so every path carries gradient
        param = layer.get_param(name)
        layer.set_param(name, param + 0.3 * rng.normal(size=param.shape).astype("f"))
    return layer, X


def _finite_difference(f, value, eps=1e-3):
    grad = numpy.zeros_like(value, dtype="f8")
    for index in numpy.ndindex(value.shape):
        up, down = value.astype("f8"), value.astype("f8")
        up[index] += eps
        down[index] -= eps
        grad[index] = (f(up) - f(down)) / (2 * eps)
    return grad


def test_gradients_match_finite_differences():
    layer, X = _layer()
    Y, backprop = layer(X, is_train=True)
    dY = numpy.random.default_rng(1).normal(size=Y.shape).astype("f")
    dX = backprop(dY).dataXd

    def loss_of_input(data):
        return float((layer.predict(Ragged(data.astype("f"), X.lengths)) * dY).sum())

    assert numpy.abs(_finite_difference(loss_of_input, X.dataXd) - dX).max() < 1e-3
    for name in PARAMS:
        value = layer.get_param(name).copy()

        def loss_of_param(v, name=name):
            layer.set_param(name, v.astype("f"))
            return loss_of_input(X.dataXd)

        numeric = _finite_difference(loss_of_param, value)
        layer.set_param(name, value)
        assert numpy.abs(numeric - layer.get_grad(name)).max() < 1e-3, name


def test_each_label_attends_on_its_own_and_empty_docs_get_the_prior():
    layer, X = _layer()
    Y = layer.predict(X)
    assert Y.shape == (3, 3)
    b = layer.get_param("b")
    assert Y[1] == pytest.approx(1 / (1 + numpy.exp(-b)))
    # A label whose query is zero averages the document's tokens uniformly: its logit is the
    # mean read-out, whatever the other labels attend to.
    layer.set_param("Q", layer.get_param("Q") * numpy.array([[0.0], [1.0], [1.0]], dtype="f"))
    mean_readout = (X.dataXd[:3] @ layer.get_param("O")[0]).mean() + b[0]
    assert layer.predict(X)[0, 0] == pytest.approx(1 / (1 + numpy.exp(-mean_readout)), rel=1e-5)


def _toy_nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "textcat_multilabel",
        config={
            "model": {
                "@architectures": "spacy-biolm.TextCatLabelAttention.v1",
                "tok2vec": {
                    "@architectures": "spacy.HashEmbedCNN.v2",
                    "pretrained_vectors": None, "width": 32, "depth": 1, "embed_size": 500,
                    "window_size": 1, "maxout_pieces": 2, "subword_features": False,
                },
            }
        },
    )
    return nlp


FILLER = "the cells were grown in medium and counted after two days".split()
CUES = {"ANGIOGENESIS": "vessels", "INVASION": "metastasis"}


def _toy_examples(nlp, n, seed):
    rng = numpy.random.default_rng(seed)
    examples = []
    for _ in range(n):
        words = list(rng.choice(FILLER, size=20))
        cats = {}
        for label, cue in CUES.items():
            cats[label] = float(rng.random() < 0.5)
            if cats[label]:
                words.insert(int(rng.integers(len(words))), cue)
        examples.append(Example.from_dict(nlp.make_doc(" ".join(words)), {"cats": cats}))
    return examples


def test_learns_one_cue_word_per_label_inside_textcat_multilabel_and_round_trips():
    fix_random_seed(0)
    nlp = _toy_nlp()
    # 200 documents: with 40, the hash embeddings memorise the filler and miss the cue on new text.
    train = _toy_examples(nlp, n=200, seed=10)
    optimizer = nlp.initialize(lambda: train)
    for _ in range(60):
        nlp.update(train, sgd=optimizer, drop=0.0)
    held_out = _toy_examples(nlp, n=40, seed=1)
    scores = nlp.evaluate(held_out)
    assert scores["cats_micro_f"] > 0.95
    text = "the cells were grown in medium with vessels and counted after two days"
    doc = nlp(text)
    assert doc.cats["ANGIOGENESIS"] > 0.5 > doc.cats["INVASION"]
    reloaded = _toy_nlp().from_bytes(nlp.to_bytes())
    assert reloaded(text).cats == pytest.approx(doc.cats)


def test_exclusive_classes_are_refused():
    with pytest.raises(ValueError, match="textcat_multilabel"):
        build_label_attention_textcat(tok2vec=None, exclusive_classes=True)
