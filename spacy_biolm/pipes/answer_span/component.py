"""``answer_span``: extracts the answer to a factoid question from a passage.

The Doc is the passage (``make_question_doc(nlp, question, passage)``). The n best answers go to
``doc.spans["answers"]``, best first, with ``attrs["scores"]`` (probabilities over the n best),
``attrs["char_offsets"]`` (exact ``[start, end)`` character offsets in ``doc.text``) and
``attrs["texts"]``. The Span of an answer covers whole spaCy tokens; the character offsets are the
answer as decoded (whole words by default, see ``whole_words``; wordpiece-exact otherwise).
Passages longer than the encoder window are read in overlapping windows, so no part of a passage is
lost.
"""

from typing import Callable, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, SpanGroup
from spacy.training import Example
from thinc.api import Model

from ..base import ModelPipe, softmax
from ..qa_pipe import passage_pairs, qa_factory_config
from .decoding import decode_windows, gold_token_positions
from ...versions import check_built_version

__all__ = ["AnswerSpanExtractor", "make_answer_span", "gold_char_spans", "DEFAULT_MAX_ANSWER_LENGTH"]

# The longest answer decoded, in wordpieces (BioASQ factoid answers are entities: median 3 wordpieces).
DEFAULT_MAX_ANSWER_LENGTH = 30


@Language.factory(
    "answer_span",
    assigns=["doc.spans"],
    requires=["doc._.question"],
    default_config=qa_factory_config(
        "spacy-biolm.AnswerSpanModel.v1", "spacy-biolm.answer_span_scorer.v1", window=256, stride=64,
        spans_key="answers", n_best=20, max_answer_length=DEFAULT_MAX_ANSWER_LENGTH, whole_words=True,
    ),
    default_score_weights={
        "answer_em": 0.0,
        "answer_f1": 0.5,
        "answer_strict_acc": 0.0,
        "answer_lenient_acc": 0.0,
        "answer_mrr": 0.5,
    },
)
def make_answer_span(
    nlp: Language,
    name: str,
    model: Model,
    spans_key: str,
    n_best: int,
    max_answer_length: int,
    whole_words: bool,
    scorer: Optional[Callable],
):
    """Create an ``answer_span`` component.

    model: a ``spacy-biolm.AnswerSpanModel.v1``.
    spans_key: where the answers go in ``doc.spans`` (the gold answers of training Docs are read
        from the same key).
    n_best: how many answers to keep per passage.
    max_answer_length: the longest answer, in wordpieces.
    whole_words: answers start and end at word boundaries (never "isk" of "Risk"); false: any
        wordpiece boundary.
    scorer: ``spacy-biolm.answer_span_scorer.v1`` (SQuAD EM/F1; BioASQ strict/lenient/MRR).
    """
    check_built_version(nlp.meta)  # the pipeline's recorded spacy-biolm version vs this one
    if n_best < 1 or max_answer_length < 1:
        raise ValueError(f"answer_span: n_best and max_answer_length must be >= 1, got {n_best}, {max_answer_length}")
    return AnswerSpanExtractor(
        nlp.vocab, model, name, spans_key=spans_key, n_best=n_best, max_answer_length=max_answer_length,
        whole_words=whole_words, scorer=scorer,
    )


def gold_char_spans(doc: Doc, spans_key: str = "answers") -> List[Tuple[int, int]]:
    """The gold answers of a Doc as exact character offsets (``attrs["char_offsets"]`` when the
    converter stored them, else the Spans' token-aligned offsets)."""
    if spans_key not in doc.spans:
        return []
    group = doc.spans[spans_key]
    offsets = group.attrs.get("char_offsets")
    if offsets is not None and len(offsets) == len(group):
        return [(int(s), int(e)) for s, e in offsets]
    return [(span.start_char, span.end_char) for span in group]


class AnswerSpanExtractor(ModelPipe):
    """Extractive question answering over (question, passage) Docs."""

    def model_input(self, docs: Sequence[Doc]):
        return passage_pairs(docs, self.name)

    def scorer_settings(self):
        return {"spans_key": self.cfg["spans_key"]}

    def decode(self, docs: Sequence[Doc], predictions) -> List[List[Tuple[int, int, float]]]:
        """The n-best ``(start_char, end_char, probability)`` answers of each Doc."""
        owners, logits = predictions
        windows = logits.windows
        answers = []
        for i in range(len(owners)):
            rows = numpy.flatnonzero(windows.pair_index == i)
            answers.append(
                decode_windows(
                    logits.start[rows], logits.end[rows], windows.offsets[rows], windows.passage_mask[rows],
                    n_best=self.cfg["n_best"], max_answer_length=self.cfg["max_answer_length"],
                    text=docs[i].text if self.cfg.get("whole_words", True) else None,
                )
            )
        return answers

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        key = self.cfg["spans_key"]
        docs = list(docs)
        for doc, answers in zip(docs, self.decode(docs, predictions)):
            spans, scores, offsets, texts = [], [], [], []
            for start, end, prob in answers:
                span = doc.char_span(start, end, alignment_mode="expand")
                if span is None:
                    continue
                spans.append(span)
                scores.append(prob)
                offsets.append([start, end])
                texts.append(doc.text[start:end])
            doc.spans[key] = SpanGroup(
                doc, name=key, spans=spans, attrs={"scores": scores, "char_offsets": offsets, "texts": texts}
            )

    def get_loss(self, examples: Iterable[Example], predictions):
        """Cross-entropy of the gold start and end wordpiece of each window (``[CLS]`` when the
        window does not hold the answer), averaged over windows; Docs without a gold answer do
        not count."""
        _, logits = predictions
        windows = logits.windows
        examples = list(examples)
        n_windows, length = logits.start.shape
        gradient = numpy.zeros((n_windows, length, 2), dtype="float32")
        targets = numpy.full((n_windows, 2), -1, dtype="int64")
        for w in range(n_windows):
            gold = gold_char_spans(examples[windows.pair_index[w]].reference, self.cfg["spans_key"])
            if not gold:
                continue
            targets[w] = (0, 0)
            for start_char, end_char in gold:
                position = gold_token_positions(windows.offsets[w], windows.passage_mask[w], start_char, end_char)
                if position != (0, 0):
                    targets[w] = position
                    break
        counted = numpy.flatnonzero(targets[:, 0] >= 0)
        if counted.size == 0:
            return 0.0, self.model.ops.asarray(gradient)
        allowed = windows.passage_mask.copy()
        allowed[:, 0] = True
        loss = 0.0
        for side, side_logits in enumerate((logits.start, logits.end)):
            masked = numpy.where(allowed, side_logits, -1e4)[counted]
            probs = softmax(masked.astype("float64"))
            picked = probs[numpy.arange(len(counted)), targets[counted, side]]
            loss += float(-numpy.log(numpy.maximum(picked, 1e-12)).mean())
            d = probs
            d[numpy.arange(len(counted)), targets[counted, side]] -= 1.0
            gradient[counted, :, side] = (d / len(counted) / 2).astype("float32")
        return loss / 2, self.model.ops.asarray(gradient)
