"""``answer_reranker``: ranks the candidate sentences of a Doc by how well they answer its question.

The Doc holds the candidates as its sentences (``make_question_doc(nlp, question, [s1, s2, ...])``,
or any Doc with sentence boundaries, e.g. after a ``sentencizer``). The model gives the logits of
("irrelevant", "relevant") for each (question, sentence) pair: ``spacy-biolm.AnswerRerankerCosine.v1``
from the cosine of the two texts' embeddings, each encoded alone (a bi-encoder; untrained, the
zero-shot ranking of a sentence-embedding encoder), ``spacy-biolm.AnswerRerankerModel.v1`` from a
linear layer on ``[CLS]`` of ``[CLS] question [SEP] sentence [SEP]`` (a cross-encoder). The
factory's default is the bi-encoder: with 75 relevant training candidates, the cross-encoder's
fresh head ranked below a random order (configs/answer_reranker.cfg gives the measurements). The sentences go to ``doc.spans["ranked_sents"]`` best first, with
``attrs["scores"]`` the **logit margin** (logit relevant - logit irrelevant), i.e. the log-odds of
"relevant": strictly monotone in the relevance probability but, unlike the float32 probability,
never saturating at 1.0, so confident candidates stay distinct instead of tying (a tie used to
fall back to document order). The margin is a ranking score, not a calibrated log-odds when the
training used class weights or sampled negatives (both shift it by a constant).

Training: about 1% of the candidates of the BioASQ reranking data are relevant. Rather than
weighting the loss (the paper's 1:99), ``negative_sampling`` trains on every relevant candidate and
a random fraction of the irrelevant ones, drawn again at every update: the encoder passes go to
informative pairs (see configs/answer_reranker.cfg for the measured choice). ``class_weights``
(null, "balanced" or ``{label: weight}``) still applies to the items trained on.

``listwise`` replaces the per-candidate cross-entropy with a softmax over the candidates of each
Doc (the relevant ones are the target): the loss then asks only that a Doc's relevant sentences
score above its other candidates, which is what MRR measures, not that every margin cross a global
threshold; Docs without a relevant candidate give no listwise gradient and are not encoded.

``lexical_weight`` > 0 ranks by ``z(margin) + lexical_weight * z(BM25)``, both standardised over
the Doc's candidates (``lexical.py``): dense and lexical evidence fused, as hybrid retrievers do.
``attrs["scores"]`` are then the fused scores. Training is unchanged (the loss sees the margins);
the fusion applies wherever the component ranks, dev evaluation during training included.

Gold Docs mark their relevant sentences in ``doc.spans["relevant_sents"]``.
"""

from typing import Callable, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from thinc.api import Model

from ..base import ClassifierPipe
from ...doc_data import get_question
from ..qa_pipe import qa_factory_config
from .lexical import bm25_scores, fuse_scores
from .scorer import gold_sentence_offsets
from ...versions import check_built_version

__all__ = ["AnswerReranker", "make_answer_reranker", "candidate_sentences", "listwise_loss"]

LABELS = ("irrelevant", "relevant")


@Language.factory(
    "answer_reranker",
    assigns=["doc.spans"],
    requires=["doc._.question", "token.is_sent_start"],
    default_config=qa_factory_config(
        "spacy-biolm.AnswerRerankerCosine.v1", "spacy-biolm.answer_reranker_scorer.v1", window=128, stride=32,
        head={"scale": 20.0, "centre": 0.6},
        spans_key="ranked_sents", class_weights=None, negative_sampling=1.0, listwise=False, lexical_weight=0.0,
    ),
    default_score_weights={"rerank_mrr": 1.0, "rerank_mrr_random": None, "rerank_questions": None},
)
def make_answer_reranker(
    nlp: Language,
    name: str,
    model: Model,
    spans_key: str,
    class_weights,
    negative_sampling: float,
    scorer: Optional[Callable],
    listwise: bool = False,
    lexical_weight: float = 0.0,
):
    """Create an ``answer_reranker`` component.

    model: a ``spacy-biolm.AnswerRerankerCosine.v1`` or ``spacy-biolm.AnswerRerankerModel.v1``.
    spans_key: where the ranked sentences go in ``doc.spans``.
    class_weights: null, "balanced" or ``{"relevant": 99.0, "irrelevant": 1.0}`` (the paper's
        weighted reranker); the weights of the loss over the items trained on.
    negative_sampling: the fraction (0, 1] of irrelevant candidates each training update keeps
        (drawn at random, numpy's seeded generator); every relevant candidate is kept. 1.0 trains
        on all candidates. Prediction always scores every candidate.
    scorer: ``spacy-biolm.answer_reranker_scorer.v1`` (tie-aware MRR per question and the
        expected MRR of a random order).
    listwise: train with a softmax over each Doc's candidates (relevant ones the target) instead
        of a cross-entropy per candidate; ``class_weights`` must then be null.
    lexical_weight: the weight of the candidates' BM25 against the question beside the model's
        margins in the ranking (both standardised per Doc); 0.0 ranks by the margins alone.
    """
    check_built_version(nlp.meta)  # the pipeline's recorded spacy-biolm version vs this one
    if not 0.0 < negative_sampling <= 1.0:
        raise ValueError(f"{name}: negative_sampling must be in (0, 1], got {negative_sampling!r}")
    if listwise and class_weights is not None:
        raise ValueError(f"{name}: class_weights apply to the per-candidate loss; set them to null with listwise = true")
    if not lexical_weight >= 0.0:
        raise ValueError(f"{name}: lexical_weight must be >= 0, got {lexical_weight!r}")
    return AnswerReranker(
        nlp.vocab, model, name, spans_key=spans_key, class_weights=class_weights,
        negative_sampling=negative_sampling, listwise=listwise, lexical_weight=lexical_weight, scorer=scorer,
    )


def candidate_sentences(doc: Doc, component: str = "answer_reranker") -> List[Span]:
    """The candidate sentences of a Doc; a clear error when it has no sentence boundaries."""
    if len(doc) == 0:
        return []
    if not (doc.has_annotation("SENT_START") or doc.has_annotation("DEP")):
        raise ValueError(
            f"The '{component}' component needs the candidate sentences marked on the Doc "
            f"(question_id={doc._.question_id!r}): build it with make_question_doc(nlp, question, "
            "[sentence, ...]) or add a 'sentencizer' before it."
        )
    return list(doc.sents)


def gold_relevance(example: Example, sentences: List[Span]) -> List[int]:
    """1 for each predicted sentence whose character span is a gold relevant sentence, else 0."""
    gold = gold_sentence_offsets(example.reference)
    return [int((s.start_char, s.end_char) in gold) for s in sentences]


def listwise_loss(margins: numpy.ndarray, targets: numpy.ndarray, groups: Sequence[int]) -> Tuple[float, numpy.ndarray]:
    """Mean over the groups with a relevant item of -log(sum of softmax(margins of the group) over
    its relevant items): (loss, d_margins). Groups without a relevant item get no gradient."""
    margins = numpy.asarray(margins, dtype="float64")
    groups = numpy.asarray(groups)
    relevant = numpy.asarray(targets) == 1
    d_margins = numpy.zeros_like(margins)
    losses = []
    for group in numpy.unique(groups):
        rows = numpy.flatnonzero(groups == group)
        if not relevant[rows].any():
            continue
        probs = numpy.exp(margins[rows] - margins[rows].max())
        probs /= probs.sum()
        mass = probs[relevant[rows]].sum()
        losses.append(-numpy.log(max(mass, 1e-12)))
        d_margins[rows] = probs - numpy.where(relevant[rows], probs / mass, 0.0)
    if not losses:
        return 0.0, d_margins
    return float(numpy.mean(losses)), d_margins / len(losses)


class AnswerReranker(ClassifierPipe):
    """Relevance of each candidate sentence of a (question, sentences) Doc; sentences ranked."""

    @property
    def classes(self) -> Tuple[str, ...]:
        return LABELS

    def scorer_settings(self):
        return {"spans_key": self.cfg["spans_key"]}

    def model_input(self, docs: Sequence[Doc]) -> Tuple[List[Tuple[str, str]], List[Tuple[int, Span]]]:
        pairs, owners = [], []
        for i, doc in enumerate(docs):
            question = get_question(doc, self.name)
            for sentence in candidate_sentences(doc, self.name):
                pairs.append((question, sentence.text))
                owners.append((i, sentence))
        return pairs, owners

    def item_scores(self, logits: numpy.ndarray) -> numpy.ndarray:
        """The relevance margin, logit "relevant" - logit "irrelevant" per candidate: the ranking
        score (float32 probabilities saturate at 1.0, and saturated candidates would tie)."""
        logits = numpy.asarray(logits, dtype="float64").reshape(-1, len(LABELS))
        return logits[:, 1] - logits[:, 0]

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        owners, margins = predictions
        per_doc: dict = {}
        for (i, sentence), margin in zip(owners, margins):
            per_doc.setdefault(i, []).append((float(margin), sentence))
        key = self.cfg["spans_key"]
        lexical_weight = self.cfg.get("lexical_weight", 0.0)
        for i, doc in enumerate(docs):
            scored = per_doc.get(i, [])
            if lexical_weight > 0 and scored:
                lexical = bm25_scores(get_question(doc, self.name), [s.text for _, s in scored])
                fused = fuse_scores([m for m, _ in scored], lexical, lexical_weight)
                scored = [(float(f), s) for f, (_, s) in zip(fused, scored)]
            ranked = sorted(scored, key=lambda item: (-item[0], item[1].start))
            doc.spans[key] = SpanGroup(
                doc, name=key, spans=[s for _, s in ranked], attrs={"scores": [m for m, _ in ranked]}
            )

    def training_input(self, examples: List[Example]) -> Tuple[List[Tuple[str, str]], List[Tuple[int, Span]]]:
        """Every relevant candidate and each irrelevant one with probability ``negative_sampling``
        (listwise: of the Docs that have a relevant candidate only)."""
        pairs, owners = self.model_input([eg.predicted for eg in examples])
        rate = self.cfg.get("negative_sampling", 1.0)
        listwise = self.cfg.get("listwise", False)
        if (rate >= 1.0 and not listwise) or not owners:
            return pairs, owners
        relevant = self.gold_targets(examples, owners) == 1
        keep = relevant | (numpy.random.random(len(owners)) < rate)
        if listwise:
            docs_with_relevant = {i for (i, _), r in zip(owners, relevant) if r}
            keep &= numpy.asarray([i in docs_with_relevant for i, _ in owners])
        return [p for p, k in zip(pairs, keep) if k], [o for o, k in zip(owners, keep) if k]

    def get_loss(self, examples: Iterable[Example], predictions):
        if not self.cfg.get("listwise", False):
            return super().get_loss(examples, predictions)
        owners, logits = predictions
        targets = self.gold_targets(list(examples), owners)
        loss, d_margins = listwise_loss(self.item_scores(self.model.ops.to_numpy(logits)), targets, [i for i, _ in owners])
        return loss, self.model.ops.asarray2f(numpy.stack([-d_margins, d_margins], axis=1).astype("float32"))

    def gold_targets(self, examples: List[Example], owners) -> numpy.ndarray:
        by_doc: dict = {}
        for i, sentence in owners:
            by_doc.setdefault(i, []).append(sentence)
        labels = {i: dict(zip((s.start for s in sents), gold_relevance(examples[i], sents))) for i, sents in by_doc.items()}
        return numpy.asarray([labels[i][s.start] for i, s in owners], dtype="int64")
