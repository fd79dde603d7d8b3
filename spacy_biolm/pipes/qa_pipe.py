"""What the three question-answering components share: a TrainablePipe fed (question, text) pairs.

Each component turns its Docs into pairs (``make_pairs``), runs its model (a pair encoder with a
head) on them, and writes the result back on the Docs. Weighted softmax cross-entropy, the
loss of the two classifying components, lives here too.

Import-light (spaCy, numpy): imported by the factory entry points.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from thinc.api import set_dropout_rate
from thinc.api import Model, Optimizer

from ..doc_data import get_question

__all__ = ["QAPipe", "PairClassifierPipe", "default_model", "softmax", "weighted_cross_entropy", "resolve_class_weights"]


class QAPipe(TrainablePipe):
    """Base class of the pair components; subclasses define the pairs, the loss and the output."""

    def __init__(self, vocab, model: Model, name: str, *, scorer: Optional[Callable] = None, **cfg: Any):
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg = dict(cfg)

    # -- to be defined by subclasses ---------------------------------------------------------
    def make_pairs(self, docs: Sequence[Doc]) -> Tuple[List[Tuple[str, str]], List[Any]]:
        """(question, text) pairs to encode, and for each pair what it belongs to."""
        raise NotImplementedError

    def get_loss(self, examples: Iterable[Example], predictions) -> Tuple[float, Any]:
        raise NotImplementedError

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------------
    def question_of(self, doc: Doc) -> str:
        return get_question(doc, self.name)

    def predict(self, docs: Iterable[Doc]):
        docs = list(docs)
        pairs, owners = self.make_pairs(docs)
        return owners, self.model.predict(pairs)

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        pairs, owners = self.make_pairs([eg.predicted for eg in examples])
        if not pairs:
            return losses
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(pairs)
        loss, gradient = self.get_loss(examples, (owners, scores))
        backprop(gradient)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        self.model.initialize()


class PairClassifierPipe(QAPipe):
    """A QAPipe whose model gives logits over ``labels`` per pair, trained with (optionally
    class-weighted) cross-entropy; subclasses say what the gold label of each pair is."""

    labels: Tuple[str, ...] = ()

    def gold_targets(self, examples: List[Example], owners: List[Any]) -> numpy.ndarray:
        """Gold label index of each pair."""
        raise NotImplementedError

    def get_loss(self, examples: Iterable[Example], predictions):
        owners, logits = predictions
        targets = self.gold_targets(list(examples), owners)
        loss, gradient = weighted_cross_entropy(
            self.model.ops.to_numpy(logits), targets, self.cfg.get("resolved_class_weights")
        )
        return loss, self.model.ops.asarray(gradient)

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        super().initialize(get_examples, nlp=nlp)
        setting = self.cfg.get("class_weights")
        targets: List[int] = []
        if setting == "balanced":
            for examples in _chunks(list(get_examples()), 64):
                _, owners = self.make_pairs([eg.predicted for eg in examples])
                targets.extend(int(t) for t in self.gold_targets(examples, owners))
        self.cfg["resolved_class_weights"] = resolve_class_weights(setting, self.labels, targets, self.name)


def _chunks(items: List[Any], size: int) -> Iterable[List[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def default_model(architecture: str, window: int, stride: int) -> Dict[str, Any]:
    """A component's default model config: ``architecture`` on a ``spacy-biolm.PairEncoder.v1``."""
    return {
        "@architectures": architecture,
        "dropout": 0.1,
        "encoder": {
            "@architectures": "spacy-biolm.PairEncoder.v1",
            "name": "google/electra-small-discriminator",
            "window": window,
            "stride": stride,
        },
    }


def softmax(logits: numpy.ndarray) -> numpy.ndarray:
    """Row-wise softmax of a 2d array (numpy)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = numpy.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def weighted_cross_entropy(
    logits: numpy.ndarray, targets: numpy.ndarray, class_weights: Optional[Sequence[float]] = None
) -> Tuple[float, numpy.ndarray]:
    """Softmax cross-entropy averaged with per-class weights: (loss, d_logits).

    With weights w, loss = sum_i w[y_i] * -log p_i[y_i] / sum_i w[y_i] (PyTorch's ``reduction="mean"``
    with ``weight=w``). Rows with target -1 are ignored.
    """
    logits = numpy.asarray(logits, dtype="float64")
    probs = softmax(logits)
    n_classes = logits.shape[1]
    weights = numpy.ones(n_classes) if class_weights is None else numpy.asarray(class_weights, dtype="float64")
    keep = targets >= 0
    row_weights = numpy.where(keep, weights[numpy.clip(targets, 0, None)], 0.0)
    total = row_weights.sum()
    if total == 0:
        return 0.0, numpy.zeros_like(logits, dtype="float32")
    onehot = numpy.zeros_like(probs)
    onehot[numpy.arange(len(targets))[keep], targets[keep]] = 1.0
    picked = probs[numpy.arange(len(targets)), numpy.clip(targets, 0, None)]
    loss = float((row_weights * -numpy.log(numpy.maximum(picked, 1e-12))).sum() / total)
    gradient = (probs - onehot) * (row_weights / total)[:, None]
    return loss, gradient.astype("float32")


def resolve_class_weights(
    class_weights, labels: Sequence[str], targets: Iterable[int], component: str
) -> Optional[List[float]]:
    """Turn the ``class_weights`` setting into a weight per label index.

    ``None``: unweighted. A dict ``{label: weight}``: labels left out weigh 1.0. ``"balanced"``:
    n / (n_labels * n_label) from the training targets, as scikit-learn defines it.
    """
    if class_weights is None:
        return None
    if isinstance(class_weights, str):
        if class_weights != "balanced":
            raise ValueError(f"{component}: class_weights must be null, 'balanced' or {{label: weight}}, got {class_weights!r}")
        counts = numpy.bincount(numpy.asarray(list(targets), dtype="int64"), minlength=len(labels))
        if (counts == 0).any():
            missing = [label for label, n in zip(labels, counts) if n == 0]
            raise ValueError(f"{component}: class_weights='balanced' but the training data has no {missing} examples")
        return [float(counts.sum() / (len(labels) * n)) for n in counts]
    unknown = set(class_weights) - set(labels)
    if unknown:
        raise ValueError(f"{component}: class_weights has unknown labels {sorted(unknown)}; labels are {list(labels)}")
    weights = [float(class_weights.get(label, 1.0)) for label in labels]
    if any(w <= 0 for w in weights):
        raise ValueError(f"{component}: class weights must be positive, got {dict(class_weights)}")
    return weights
