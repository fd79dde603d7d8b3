"""The trainable-pipe base of the components that run a model on items drawn from their Docs.

``ModelPipe`` is the training/prediction loop every such component shares: the subclass says
what the model reads from a batch of Docs (``model_input``, which also says which Doc item each
output row belongs to), how predictions go back on the Docs (``set_annotations``) and the loss
(``get_loss``), optionally which items it trains on (``training_input``); ``ModelPipe`` does ``predict``, ``update`` (dropout, backprop, optimiser step),
``initialize`` and scoring through the registered scorer.

``ClassifierPipe`` adds what the classifying components share (``yes_no``, ``answer_reranker``,
``relation_extractor``): the model gives one row of logits over ``classes`` per item, the loss is
softmax cross-entropy with optional class weights (``class_weights``: null, "balanced" or
``{class: weight}``), labels may be inferred from the training data at ``initialize``.

The model is always called, also on a batch without items: a listener on a shared
``transformer`` must see every batch its upstream component saw.

Import-light (spaCy, thinc, numpy): imported by the factory entry points.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from thinc.api import Model, Optimizer, set_dropout_rate

from ..errors import PipelineDataError

__all__ = ["ModelPipe", "ClassifierPipe", "softmax", "weighted_cross_entropy", "resolve_class_weights"]

# Examples used to initialise a model (shapes, listeners): enough to see every kind of input.
INIT_SAMPLE = 16


class ModelPipe(TrainablePipe):
    """A TrainablePipe whose model reads ``model_input(docs)``; subclasses define the input, the
    loss and the output. Settings go to ``self.cfg`` (serialised with the pipe)."""

    def __init__(self, vocab, model: Model, name: str, *, scorer: Optional[Callable] = None, **cfg: Any):
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg = dict(cfg)

    # -- to be defined by subclasses ---------------------------------------------------------
    def model_input(self, docs: Sequence[Doc]) -> Tuple[Any, List[Any]]:
        """What the model reads for ``docs``, and for each output row what it belongs to."""
        raise NotImplementedError

    def get_loss(self, examples: Iterable[Example], predictions) -> Tuple[float, Any]:
        """(loss, gradient of the model output) for ``predictions`` = (owners, model output)."""
        raise NotImplementedError

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        raise NotImplementedError

    def training_input(self, examples: List[Example]) -> Tuple[Any, List[Any]]:
        """What the model reads in ``update``: by default ``model_input`` of the predicted Docs. A
        subclass may use the gold annotation to choose the items it trains on (e.g. sample them)."""
        return self.model_input([eg.predicted for eg in examples])

    # -- shared -------------------------------------------------------------------------------
    def from_disk(self, path, *, exclude=tuple()):
        """Load the pipe's settings and weights from ``path``; a missing, truncated or corrupted
        file is a :class:`~spacy_biolm.errors.PipelineDataError` naming the component and the
        directory (spaCy's own message is "Unpack failed: incomplete input")."""
        try:
            return super().from_disk(path, exclude=exclude)
        except (ValueError, OSError, KeyError, TypeError) as error:
            raise PipelineDataError(
                path, f"{self.name}: cannot read its saved settings or weights ({type(error).__name__}: {error}); "
                "the pipeline directory is incomplete or corrupted (a half-finished copy or save?): copy it again "
                "or rebuild it"
            ) from error

    def predict(self, docs: Iterable[Doc]):
        """(owners, model output) for ``docs``."""
        model_input, owners = self.model_input(list(docs))
        return owners, self.model.predict(model_input)

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
        model_input, owners = self.training_input(examples)
        set_dropout_rate(self.model, drop)
        output, backprop = self.model.begin_update(model_input)
        loss, gradient = self.get_loss(examples, (owners, output))
        backprop(gradient)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None) -> None:
        """Initialise the model on a sample of the training examples."""
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        self.initialize_model(get_examples)

    def initialize_model(self, get_examples: Callable[[], Iterable[Example]]) -> None:
        sample = [eg.predicted for eg, _ in zip(get_examples(), range(INIT_SAMPLE))]
        self.model.initialize(X=self.model_input(sample)[0])

    def score(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
        """Scores from the component's registered scorer (``scorer`` in its config)."""
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.score")
        if self.scorer is None:
            raise NotImplementedError(f"{self.name} has no scorer")
        return self.scorer(examples, **{**self.scorer_settings(), **kwargs})

    def scorer_settings(self) -> Dict[str, Any]:
        """Keyword arguments the scorer gets from the component (none by default)."""
        return {}


class ClassifierPipe(ModelPipe):
    """A ModelPipe whose model gives one row of logits over ``classes`` per item, trained with
    (optionally class-weighted) softmax cross-entropy. Subclasses give the gold class of each
    item (``gold_targets``); those with data-dependent labels override ``infer_labels``."""

    @property
    def classes(self) -> Tuple[str, ...]:
        """The model's output columns, in order."""
        raise NotImplementedError

    def gold_targets(self, examples: List[Example], owners: List[Any]) -> numpy.ndarray:
        """Index into ``classes`` of the gold class of each item."""
        raise NotImplementedError

    def infer_labels(self, get_examples: Callable[[], Iterable[Example]], labels: Optional[Sequence[str]]) -> None:
        """Fix the label set before the model is built (nothing to do for fixed classes)."""
        if labels:
            raise ValueError(f"{self.name}: the classes are fixed ({list(self.classes)}); labels cannot be given")

    def predict(self, docs: Iterable[Doc]):
        """(owners, :meth:`item_scores` of the logits) for ``docs``."""
        owners, logits = super().predict(docs)
        return owners, self.item_scores(self.model.ops.to_numpy(logits))

    def item_scores(self, logits: numpy.ndarray) -> numpy.ndarray:
        """What ``set_annotations`` gets per item from its row of logits: class probabilities
        (softmax) unless a component needs another score (the reranker ranks by a margin)."""
        return softmax(logits)

    def get_loss(self, examples: Iterable[Example], predictions):
        owners, logits = predictions
        targets = self.gold_targets(list(examples), owners)
        loss, gradient = weighted_cross_entropy(
            self.model.ops.to_numpy(logits), targets, self.cfg.get("resolved_class_weights")
        )
        return loss, self.model.ops.asarray2f(gradient)

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Fix the labels (``labels``, else the configured ones, else those of the data), build
        the model for ``classes`` and resolve ``class_weights`` (for "balanced", from the
        training data's gold classes)."""
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        self.infer_labels(get_examples, labels)
        if self.model.has_dim("nO") is not True:
            self.model.set_dim("nO", len(self.classes))
        self.initialize_model(get_examples)
        setting = self.cfg.get("class_weights")
        targets: List[int] = []
        if setting == "balanced":
            for examples in _chunks(list(get_examples()), 64):
                _, owners = self.model_input([eg.predicted for eg in examples])
                targets.extend(int(t) for t in self.gold_targets(examples, owners))
        self.cfg["resolved_class_weights"] = resolve_class_weights(setting, self.classes, targets, self.name)


def _chunks(items: List[Any], size: int) -> Iterable[List[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def softmax(logits: numpy.ndarray) -> numpy.ndarray:
    """Row-wise softmax of a 2d array (numpy); an empty array stays empty."""
    logits = numpy.asarray(logits)
    if logits.size == 0:
        return logits.astype("float32")
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = numpy.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def weighted_cross_entropy(
    logits: numpy.ndarray, targets: numpy.ndarray, class_weights: Optional[Sequence[float]] = None
) -> Tuple[float, numpy.ndarray]:
    """Softmax cross-entropy averaged with per-class weights: (loss, d_logits).

    With weights w, loss = sum_i w[y_i] * -log p_i[y_i] / sum_i w[y_i] (PyTorch's ``reduction="mean"``
    with ``weight=w``). Rows with target -1 are ignored; no rows give (0.0, zeros).
    """
    logits = numpy.asarray(logits, dtype="float64")
    targets = numpy.asarray(targets, dtype="int64")
    if len(targets) == 0:
        return 0.0, numpy.zeros(logits.shape, dtype="float32")
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
    class_weights, classes: Sequence[str], targets: Iterable[int], component: str
) -> Optional[List[float]]:
    """Turn the ``class_weights`` setting into a weight per class index.

    ``None``: unweighted. A dict ``{class: weight}``: classes left out weigh 1.0. ``"balanced"``:
    n / (n_classes * n_class) from the training targets, as scikit-learn defines it.
    """
    if class_weights is None:
        return None
    if isinstance(class_weights, str):
        if class_weights != "balanced":
            raise ValueError(f"{component}: class_weights must be null, 'balanced' or {{label: weight}}, got {class_weights!r}")
        counts = numpy.bincount(numpy.asarray(list(targets), dtype="int64"), minlength=len(classes))
        if (counts == 0).any():
            missing = [label for label, n in zip(classes, counts) if n == 0]
            raise ValueError(f"{component}: class_weights='balanced' but the training data has no {missing} examples")
        return [float(counts.sum() / (len(classes) * n)) for n in counts]
    unknown = set(class_weights) - set(classes)
    if unknown:
        raise ValueError(f"{component}: class_weights has unknown labels {sorted(unknown)}; labels are {list(classes)}")
    weights = [float(class_weights.get(label, 1.0)) for label in classes]
    if any(w <= 0 for w in weights):
        raise ValueError(f"{component}: class weights must be positive, got {dict(class_weights)}")
    return weights
