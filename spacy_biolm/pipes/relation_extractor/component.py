"""The ``relation_extractor`` pipeline component (factory + TrainablePipe).

Candidate pairs come from ``doc.ents`` (an upstream ``ner`` or gold entities), filtered by
``pair_types``; each pair is classified into one of ``labels`` or "no relation" (softmax, trained
with cross-entropy). Predicted relations (not the negatives) go to ``doc._.relations`` as
``Relation(head, tail, label, score)``.

Imported on every ``spacy.blank``/``spacy.load`` through the ``spacy_factories`` entry point:
spaCy, thinc and numpy only at module level.
"""


import warnings
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer
from thinc.types import Floats2d

from . import scorer as _scorer_module  # noqa: F401  (registers the scorer with the factory)
from ...doc_data import Relation, get_relations, set_relations
from .data import PairLimitExceeded, candidate_pairs

__all__ = ["RelationExtractor", "make_relation_extractor", "NO_RELATION"]

NO_RELATION = "NO_RELATION"

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy-biolm.SpanPairRelationModel.v1"
hidden_width = 256
dropout = 0.1
nO = null

[model.tok2vec]
@architectures = "spacy-transformers.TransformerListener.v1"
grad_factor = 1.0
upstream = "*"

[model.tok2vec.pooling]
@layers = "reduce_mean.v1"
"""


@Language.factory(
    "relation_extractor",
    requires=["doc.ents"],
    assigns=["doc._.relations"],
    default_config={
        "model": Config().from_str(DEFAULT_MODEL_CONFIG)["model"],
        "labels": [],
        "pair_types": [],
        "max_pairs_per_doc": 1000,
        "scorer": {"@scorers": "spacy-biolm.relations_scorer.v1"},
    },
    default_score_weights={"rel_micro_f": 1.0, "rel_micro_p": 0.0, "rel_micro_r": 0.0},
)
def make_relation_extractor(
    nlp: Language,
    name: str,
    model: Model,
    labels: List[str],
    pair_types: List[List[str]],
    max_pairs_per_doc: int,
    scorer: Optional[Callable],
) -> "RelationExtractor":
    """Classify relations between entity pairs of ``doc.ents`` into ``doc._.relations``.

    Args:
        model: ``spacy-biolm.SpanPairRelationModel.v1`` (fast mode, listens to the shared
            ``transformer``) or ``spacy-biolm.AnonymisedRelationModel.v1`` (one encoder pass per
            pair with typed placeholders, as the papers).
        labels: the positive relation labels (e.g. ``["CPR:3", "CPR:4", "CPR:5", "CPR:6",
            "CPR:9"]`` or ``["ASSOCIATION"]``). Empty: taken from the training data when the
            pipeline is initialised. A gold relation with another label is an error.
        pair_types: allowed ``[head_label, tail_label]`` entity label pairs, e.g.
            ``[["GENE", "DISEASE"]]``; empty allows every pair of entities.
        max_pairs_per_doc: at most this many candidate pairs per Doc (closest entities first);
            the rest are skipped with a warning. 0 means no limit.
        scorer: ``spacy-biolm.relations_scorer.v1`` by default.
    """
    return RelationExtractor(nlp.vocab, model, name, labels=labels, pair_types=pair_types,
                             max_pairs_per_doc=max_pairs_per_doc, scorer=scorer)


class RelationExtractor(TrainablePipe):
    """Relation classification over candidate entity pairs; results in ``doc._.relations``."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "relation_extractor",
        *,
        labels: Sequence[str] = (),
        pair_types: Sequence[Sequence[str]] = (),
        max_pairs_per_doc: int = 1000,
        scorer: Optional[Callable] = None,
    ):
        for pair in pair_types:
            if len(pair) != 2 or not all(isinstance(x, str) for x in pair):
                raise ValueError(f"pair_types entries must be [head_label, tail_label], got {pair!r}")
        if max_pairs_per_doc < 0:
            raise ValueError(f"max_pairs_per_doc must be >= 0 (0 = no limit), got {max_pairs_per_doc}")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg = {
            "labels": list(labels),
            "pair_types": [list(p) for p in pair_types],
            "max_pairs_per_doc": max_pairs_per_doc,
        }
        self.skipped_pairs = 0

    # -- labels ---------------------------------------------------------------------------------

    @property
    def labels(self) -> Tuple[str, ...]:
        """The positive relation labels; model output column ``i + 1`` is ``labels[i]``."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        if not isinstance(label, str) or not label or label == NO_RELATION:
            raise ValueError(f"invalid relation label {label!r}")
        if label in self.cfg["labels"]:
            return 0
        self._require_no_output_layer()
        self.cfg["labels"].append(label)
        return 1

    def _require_no_output_layer(self) -> None:
        if self.model.has_dim("nO") is True:
            raise ValueError(f"{self.name}: labels cannot change after the model is initialised")

    # -- pairs ----------------------------------------------------------------------------------

    def candidate_pairs(self, doc: Doc) -> List[Tuple[Span, Span]]:
        """The (head, tail) pairs of ``doc`` the component classifies (bounded, see max_pairs_per_doc)."""
        pairs, skipped = candidate_pairs(doc.ents, self.cfg["pair_types"], self.cfg["max_pairs_per_doc"])
        if skipped:
            self.skipped_pairs += skipped
            warnings.warn(
                f"{self.name}: doc with {len(doc.ents)} entities has {len(pairs) + skipped} candidate pairs; "
                f"classified the {len(pairs)} closest (max_pairs_per_doc={self.cfg['max_pairs_per_doc']}), "
                f"skipped {skipped}. Doc starts {doc.text[:60]!r}",
                PairLimitExceeded,
            )
        return pairs

    @staticmethod
    def _offsets(pairs: Sequence[Tuple[Span, Span]]) -> numpy.ndarray:
        if not pairs:
            return numpy.zeros((0, 4), dtype="int32")
        return numpy.asarray([[h.start, h.end, t.start, t.end] for h, t in pairs], dtype="int32")

    def _model_input(self, docs: Sequence[Doc]):
        pairs = [self.candidate_pairs(doc) for doc in docs]
        return pairs, (list(docs), [self._offsets(p) for p in pairs])

    # -- prediction -----------------------------------------------------------------------------

    def predict(self, docs: Iterable[Doc]):
        docs = list(docs)
        pairs, model_input = self._model_input(docs)
        if not any(pairs) and self.model.name == "anonymised_relation":
            return pairs, self.model.ops.alloc2f(0, len(self.labels) + 1)
        logits = self.model.predict(model_input)
        return pairs, _softmax(self.model.ops.to_numpy(logits))

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        pairs, probs = predictions
        row = 0
        for doc, doc_pairs in zip(docs, pairs):
            relations = []
            for head, tail in doc_pairs:
                best = int(probs[row].argmax())
                if best > 0:
                    relations.append(Relation(head, tail, self.labels[best - 1], float(probs[row, best])))
                row += 1
            set_relations(doc, relations)

    # -- training -------------------------------------------------------------------------------

    def _gold_rows(self, examples: Sequence[Example], pairs: Sequence[Sequence[Tuple[Span, Span]]]) -> numpy.ndarray:
        """Gold class index per candidate pair (0 = no relation), matched by character offsets."""
        index = {label: i + 1 for i, label in enumerate(self.labels)}
        rows = []
        for eg, doc_pairs in zip(examples, pairs):
            gold = {}
            for rel in get_relations(eg.reference):
                if rel.label not in index:
                    raise ValueError(
                        f"{self.name}: gold relation label {rel.label!r} is not one of the configured labels "
                        f"{list(self.labels)} (doc {eg.reference.text[:80]!r})"
                    )
                gold[rel.key] = index[rel.label]
            for head, tail in doc_pairs:
                rows.append(gold.get((head.start_char, head.end_char, tail.start_char, tail.end_char), 0))
        return numpy.asarray(rows, dtype="int32")

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
        validate_examples(examples, "RelationExtractor.update")
        docs = [eg.predicted for eg in examples]
        pairs, model_input = self._model_input(docs)
        if not any(pairs) and self.model.name == "anonymised_relation":
            return losses
        gold = self._gold_rows(examples, pairs)
        logits, backprop = self.model.begin_update(model_input)
        loss, d_logits = self.get_loss(examples, (logits, gold))
        backprop(d_logits)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores) -> Tuple[float, Floats2d]:
        """Mean softmax cross-entropy over the batch's pairs and its gradient w.r.t. the logits."""
        logits, gold = scores
        ops = self.model.ops
        n = len(gold)
        if n == 0:
            return 0.0, ops.alloc2f(*logits.shape)
        probs = _softmax(ops.to_numpy(logits))
        loss = float(-numpy.log(probs[numpy.arange(n), gold] + 1e-12).mean())
        d_logits = probs.copy()
        d_logits[numpy.arange(n), gold] -= 1.0
        return loss, ops.asarray2f(d_logits / n)

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Fix the labels (``labels`` argument, else the factory's, else those in the data) and
        initialise the model on a sample of examples."""
        validate_get_examples(get_examples, "RelationExtractor.initialize")
        if labels:
            for label in labels:
                self.add_label(label)
        configured = set(self.labels)
        sample: List[Example] = []
        for eg in get_examples():
            for rel in get_relations(eg.reference):
                if configured and rel.label not in configured:
                    raise ValueError(
                        f"{self.name}: gold relation label {rel.label!r} is not one of the configured labels "
                        f"{sorted(configured)} (doc {eg.reference.text[:80]!r})"
                    )
                if not configured:
                    self.add_label(rel.label)
            if len(sample) < 16:
                sample.append(eg)
        if not self.labels:
            raise ValueError(f"{self.name}: no labels configured and no gold relations found in the training data")
        self.model.set_dim("nO", len(self.labels) + 1)
        docs = [eg.predicted for eg in sample]
        self.model.initialize(X=(docs, [self._offsets(self.candidate_pairs(d)) for d in docs]))

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        validate_examples(examples, "RelationExtractor.score")
        if self.scorer is None:
            raise NotImplementedError(f"{self.name} has no scorer")
        return self.scorer(examples, labels=self.labels, **kwargs)


def _softmax(logits: numpy.ndarray) -> numpy.ndarray:
    logits = numpy.asarray(logits, dtype="float32")
    if logits.size == 0:
        return logits
    shifted = numpy.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)
