"""The ``relation_extractor`` pipeline component (factory + a ``ClassifierPipe``).

Candidate pairs come from ``doc.ents`` (an upstream ``ner``), or the entities a corpus gave the
Doc (gold entities in training and evaluation: :func:`~spacy_biolm.doc_data.give_entities`), inside a
``candidate_window`` (the same sentence, or at most N tokens apart), filtered by ``pair_types``; each pair is classified into one of ``labels`` or "no relation" (softmax, trained
with optionally class-weighted cross-entropy). The input mode is the model's architecture
(``spacy-biolm.RelationFast.v1`` or ``spacy-biolm.RelationAnonymised.v1``); the component does not
depend on which. Predicted relations (not the negatives) go to ``doc._.relations`` as
``Relation(head, tail, label, score)``.

Imported on every ``spacy.blank``/``spacy.load`` through the ``spacy_factories`` entry point:
spaCy, thinc and numpy only at module level.
"""


import warnings
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..base import ClassifierPipe
from . import scorer as _scorer_module  # noqa: F401  (registers the scorer with the factory)
from ...doc_data import Relation, get_relations, relation_entities, relations_annotated, set_relations
from .data import SENTENCE_WINDOW, PairLimitExceeded, candidate_pairs, check_candidate_window
from ...versions import check_built_version

__all__ = ["RelationExtractor", "make_relation_extractor", "NO_RELATION"]

NO_RELATION = "NO_RELATION"

DEFAULT_MODEL_CONFIG = """
[model]
@architectures = "spacy-biolm.RelationFast.v1"
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

# One candidate pair: the index of its Doc in the batch, head and tail.
PairOwner = Tuple[int, Span, Span]


@Language.factory(
    "relation_extractor",
    requires=["doc.ents"],
    assigns=["doc._.relations"],
    default_config={
        "model": Config().from_str(DEFAULT_MODEL_CONFIG)["model"],
        "labels": [],
        "pair_types": [],
        "candidate_window": SENTENCE_WINDOW,
        "max_pairs_per_doc": 1000,
        "class_weights": None,
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
    candidate_window: Union[int, str],
    max_pairs_per_doc: int,
    class_weights: Optional[Any],
    scorer: Optional[Callable],
) -> "RelationExtractor":
    """Classify relations between entity pairs of ``doc.ents`` into ``doc._.relations``.

    Args:
        model: the input mode: ``spacy-biolm.RelationFast.v1`` (listens to the shared
            ``transformer``, one encoder pass per sentence) or ``spacy-biolm.RelationAnonymised.v1``
            (its own ``spacy-biolm.PairEncoder.v1``, one encoder pass per pair with typed
            placeholders, as the papers).
        labels: the positive relation labels (e.g. ``["CPR:3", "CPR:4", "CPR:5", "CPR:6",
            "CPR:9"]`` or ``["ASSOCIATION"]``). Empty: taken from the training data when the
            pipeline is initialised. A gold relation with another label is an error.
        pair_types: allowed ``[head_label, tail_label]`` entity label pairs, e.g.
            ``[["GENE", "DISEASE"]]``; empty allows every pair of entities. An extractor learns
            and replaces only the relations between entities of its pair types, so extractors of
            other pair types can share the pipeline (the release's GAD and ChemProt ones).
        candidate_window: which entities may pair: "sentence" (the default), both in the same
            sentence (a Doc without sentence boundaries, e.g. one sentence of GAD or ChemProt, is
            one sentence; give long documents a ``sentencizer`` or ``senter`` first); or a number
            of tokens N, at most N tokens between the two entities. Pairs are generated lazily
            inside the window, never for the whole document.
        max_pairs_per_doc: a safety cap: at most this many candidate pairs per Doc (closest
            entities first); the rest are skipped with a warning. 0 means no limit.
        class_weights: null (unweighted loss), "balanced" (from the training pairs' classes) or
            ``{label: weight}`` over ``NO_RELATION`` and the labels (e.g. ``{"NO_RELATION": 0.5}``).
        scorer: ``spacy-biolm.relations_scorer.v1`` by default.
    """
    check_built_version(nlp.meta)  # the pipeline's recorded spacy-biolm version vs this one
    return RelationExtractor(nlp.vocab, model, name, labels=labels, pair_types=pair_types,
                             candidate_window=candidate_window, max_pairs_per_doc=max_pairs_per_doc,
                             class_weights=class_weights, scorer=scorer)


class RelationExtractor(ClassifierPipe):
    """Relation classification over candidate entity pairs; results in ``doc._.relations``."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "relation_extractor",
        *,
        labels: Sequence[str] = (),
        pair_types: Sequence[Sequence[str]] = (),
        candidate_window: Union[int, str] = SENTENCE_WINDOW,
        max_pairs_per_doc: int = 1000,
        class_weights: Optional[Any] = None,
        scorer: Optional[Callable] = None,
    ):
        for pair in pair_types:
            if len(pair) != 2 or not all(isinstance(x, str) for x in pair):
                raise ValueError(f"pair_types entries must be [head_label, tail_label], got {pair!r}")
        if max_pairs_per_doc < 0:
            raise ValueError(f"max_pairs_per_doc must be >= 0 (0 = no limit), got {max_pairs_per_doc}")
        check_candidate_window(candidate_window)
        super().__init__(
            vocab, model, name, scorer=scorer, labels=list(labels), pair_types=[list(p) for p in pair_types],
            candidate_window=candidate_window, max_pairs_per_doc=max_pairs_per_doc, class_weights=class_weights,
        )
        self.skipped_pairs = 0

    # -- labels ---------------------------------------------------------------------------------

    @property
    def labels(self) -> Tuple[str, ...]:
        """The positive relation labels; model output column ``i + 1`` is ``labels[i]``."""
        return tuple(self.cfg["labels"])

    @property
    def classes(self) -> Tuple[str, ...]:
        return (NO_RELATION, *self.labels)

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        if not isinstance(label, str) or not label or label == NO_RELATION:
            raise ValueError(f"invalid relation label {label!r}")
        if label in self.cfg["labels"]:
            return 0
        if self.model.has_dim("nO") is True:
            raise ValueError(f"{self.name}: labels cannot change after the model is initialised")
        self.cfg["labels"].append(label)
        return 1

    def infer_labels(self, get_examples: Callable[[], Iterable[Example]], labels: Optional[Sequence[str]]) -> None:
        """Labels from ``labels``, else the configured ones, else those of the gold relations;
        a gold relation with an unconfigured label is an error."""
        for label in labels or ():
            self.add_label(label)
        configured = set(self.labels)
        for eg in get_examples():
            for rel in self.own_relations(eg.reference, typed_by=eg.predicted):
                if not configured:
                    self.add_label(rel.label)
                elif rel.label not in configured:
                    raise self._unknown_label(rel.label, eg.reference)
        if not self.labels:
            raise ValueError(f"{self.name}: no labels configured and no gold relations found in the training data")

    def own_relations(self, doc: Doc, typed_by: Optional[Doc] = None) -> List[Relation]:
        """The relations of ``doc`` between entities of this component's ``pair_types`` (all of
        them when it has none): the ones it learns, predicts and replaces. Several extractors share
        a Doc this way (gene-disease and chemical-gene relations in one pipeline), each blind to
        the other's pairs. An entity's type is that of ``doc``'s entity at its characters, or of
        ``typed_by``'s: for a gold Doc, the Example's predicted Doc, which holds the entities given
        to it where multi-task training marks the gold Doc's own entities missing."""
        owns = self._owns(doc, *(() if typed_by is None else (typed_by,)))
        return [rel for rel in get_relations(doc) if owns(rel)]

    def _owns(self, *typed_by: Doc) -> Callable[[Relation], bool]:
        """Whether a relation joins entities of this component's pair types, typed by the entities
        of ``typed_by`` at its characters."""
        if not self.cfg["pair_types"]:
            return lambda rel: True
        types = {(e.start_char, e.end_char): e.label_ for doc in typed_by for e in relation_entities(doc)}
        allowed = {tuple(pair) for pair in self.cfg["pair_types"]}
        return lambda rel: (types.get(rel.key[:2]), types.get(rel.key[2:])) in allowed

    def _unknown_label(self, label: str, doc: Doc) -> ValueError:
        return ValueError(
            f"{self.name}: gold relation label {label!r} is not one of the configured labels "
            f"{list(self.labels)} (doc {doc.text[:80]!r})"
        )

    # -- pairs ----------------------------------------------------------------------------------

    def candidate_pairs(self, doc: Doc) -> List[Tuple[Span, Span]]:
        """The (head, tail) pairs of ``doc`` the component classifies, in document order: those
        inside ``candidate_window``, at most ``max_pairs_per_doc`` of them."""
        window = self.cfg["candidate_window"]
        entities = relation_entities(doc)
        pairs, skipped = candidate_pairs(entities, self.cfg["pair_types"], self.cfg["max_pairs_per_doc"], window)
        if skipped:
            self.skipped_pairs += skipped
            hint = ""
            if window == SENTENCE_WINDOW and not doc.has_annotation("SENT_START"):
                hint = (" The Doc has no sentence boundaries, so the window is the whole Doc: add a sentencizer "
                        "or senter before this component, or set candidate_window to a number of tokens.")
            warnings.warn(
                f"{self.name}: doc with {len(entities)} entities has {len(pairs) + skipped} candidate pairs "
                f"(candidate_window={window!r}); classified the {len(pairs)} closest "
                f"(max_pairs_per_doc={self.cfg['max_pairs_per_doc']}), skipped {skipped}.{hint} "
                f"Doc starts {doc[:30].text[:60]!r}",  # not doc.text: a long Doc's whole text is slow to build
                PairLimitExceeded,
            )
        return pairs

    def model_input(self, docs: Sequence[Doc], skip: Sequence[int] = ()) -> Tuple[Any, List[PairOwner]]:
        """``(docs, token offsets of each Doc's pairs)`` for the model, and one owner per pair;
        the Docs at the indices ``skip`` contribute no pair (they still reach the model, whose
        listener expects the batch the transformer read)."""
        offsets, owners = [], []
        for i, doc in enumerate(docs):
            pairs = [] if i in skip else self.candidate_pairs(doc)
            owners.extend((i, head, tail) for head, tail in pairs)
            rows = [[h.start, h.end, t.start, t.end] for h, t in pairs]
            offsets.append(numpy.asarray(rows, dtype="int32").reshape(len(rows), 4))
        return (list(docs), offsets), owners

    # -- prediction -----------------------------------------------------------------------------

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        docs = list(docs)
        owners, probs = predictions
        relations: List[List[Relation]] = [[] for _ in docs]
        for (i, head, tail), row in zip(owners, probs):
            best = int(row.argmax())
            if best > 0:
                relations[i].append(Relation(head, tail, self.classes[best], float(row[best])))
        for doc, doc_relations in zip(docs, relations):
            owns = self._owns(doc)
            set_relations(doc, [rel for rel in get_relations(doc) if not owns(rel)] + doc_relations)

    # -- training -------------------------------------------------------------------------------

    def training_input(self, examples: List[Example]) -> Tuple[Any, List[PairOwner]]:
        """The predicted Docs' pairs, none from a Doc whose gold relations are missing (another
        task's Doc in multi-task training): it gives no loss, rather than all negatives."""
        missing = {i for i, eg in enumerate(examples) if not relations_annotated(eg.reference)}
        return self.model_input([eg.predicted for eg in examples], skip=missing)

    def gold_targets(self, examples: List[Example], owners: List[PairOwner]) -> numpy.ndarray:
        """Gold class index per candidate pair (0 = no relation), matched by character offsets."""
        index = {label: i for i, label in enumerate(self.classes)}
        gold = {}
        for i, eg in enumerate(examples):
            for rel in self.own_relations(eg.reference, typed_by=eg.predicted):
                if rel.label not in index or rel.label == NO_RELATION:
                    raise self._unknown_label(rel.label, eg.reference)
                gold[(i, *rel.key)] = index[rel.label]
        keys = [(i, head.start_char, head.end_char, tail.start_char, tail.end_char) for i, head, tail in owners]
        return numpy.asarray([gold.get(key, 0) for key in keys], dtype="int64")

    def scorer_settings(self):
        return {"labels": self.labels}
