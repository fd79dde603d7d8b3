"""What a user gets without our model, scored by the task's own scorer on the same test Docs.

Every table of the project puts one of these beside our score, computed in the same evaluation
run (a score means nothing alone):

* relations: **all positive**, every candidate pair the component would classify (its candidate
  window and entity types) given the most frequent relation label;
* yes/no: **majority class**, the more frequent answer of the training data for every question;
* factoid answer spans: **most frequent word**, each question's five most frequent words of its
  snippets that are not in the question (nor stop words nor punctuation), in that order; and for
  long passages (COVID-QA's articles) **the question's sentence**, the passage sentence sharing
  the most words with the question (the sliding-window baseline of the SQuAD paper, by sentence);
* answer-sentence reranking: **zero-shot cosine**, candidates ranked by the cosine of their
  mean-pooled encoder embedding with the question's, with the encoder before any fine-tuning
  (the random-order expectation comes with the reranker's scorer itself); and **BM25**, the
  candidates ranked by Okapi BM25 of the question's terms, document frequencies over each
  question's own candidates (the lexical half of the reranker's ``lexical_weight``); and the two
  fused at the reranker's ``lexical_weight``, **zero-shot cosine + BM25**: the reranker before its
  training (its margins are a linear function of the same cosine), so training must beat it.

NER's baseline is a trained model (spaCy's CNN, the ``train-ner-cnn`` step), not computed here.
Each function returns ``(name, scores)``: a row title for the tables and the scorer's keys.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example

from ..doc_data import Relation, get_question, get_relations, question_group, set_relations

__all__ = [
    "all_positive_relations",
    "majority_yes_no",
    "frequent_word_answers",
    "question_sentence_answers",
    "zero_shot_cosine_reranking",
    "bm25_reranking",
    "mean_pooled_embeddings",
    "embeddings_once",
]

Baseline = Tuple[str, Dict[str, object]]


def _rescored(examples: Sequence[Example], annotate: Callable[[Doc, Example], None], scorer: Callable) -> dict:
    """The scorer's result on copies of the predicted Docs annotated by ``annotate``."""
    baseline_examples = []
    for eg in examples:
        doc = eg.predicted.copy()
        annotate(doc, eg)
        baseline_examples.append(Example(doc, eg.reference))
    return scorer(baseline_examples)


def all_positive_relations(
    examples: Sequence[Example], candidate_pairs: Callable[[Doc], List[Tuple[Span, Span]]], label: Optional[str] = None
) -> Baseline:
    """Every candidate pair (``candidate_pairs``, e.g. the trained component's own) labelled
    ``label``, by default the most frequent gold label of ``examples``."""
    from ..pipes.relation_extractor.scorer import score_relations

    if label is None:
        counts = Counter(r.label for eg in examples for r in get_relations(eg.reference))
        if not counts:
            raise ValueError("all-positive baseline: the gold Docs have no relation to take a label from")
        label = counts.most_common(1)[0][0]

    def annotate(doc: Doc, eg: Example) -> None:
        set_relations(doc, [Relation(head, tail, label) for head, tail in candidate_pairs(doc)])

    return f"all positive ({label})", _rescored(examples, annotate, score_relations)


def majority_yes_no(examples: Sequence[Example], train_docs: Iterable[Doc]) -> Baseline:
    """The more frequent answer of ``train_docs`` (gold Docs with ``cats``) for every question."""
    from ..pipes.yes_no.scorer import score_yes_no, yes_no_answer

    counts = Counter(yes_no_answer(doc.cats, f"training Doc {i}") for i, doc in enumerate(train_docs))
    if not counts:
        raise ValueError("majority baseline: no training Doc to count answers in")
    majority = max(("yes", "no"), key=lambda answer: counts[answer])

    def annotate(doc: Doc, eg: Example) -> None:
        doc.cats = {"yes": float(majority == "yes"), "no": float(majority == "no")}

    return f"majority class (always {majority})", _rescored(examples, annotate, score_yes_no)


def _question_words(doc: Doc) -> set:
    return set(re.findall(r"\w+", get_question(doc, "frequent-word baseline").lower()))


def _content_words(doc: Doc, question_words: set) -> List[Span]:
    return [
        doc[token.i : token.i + 1]
        for token in doc
        if not (token.is_punct or token.is_space or token.is_stop or token.like_num)
        and len(token.text) > 1
        and token.lower_ not in question_words
    ]


def frequent_word_answers(examples: Sequence[Example], spans_key: str = "answers", top_k: int = 5) -> Baseline:
    """Each question's ``top_k`` most frequent content words of its snippets as its answers, the
    most frequent first (per snippet Doc: those words that occur in it, in the same order)."""
    from ..pipes.answer_span.scorer import score_answer_spans

    frequency: Dict[str, Counter] = {}
    for eg in examples:
        counts = frequency.setdefault(question_group(eg.predicted), Counter())
        counts.update(span.text.lower() for span in _content_words(eg.predicted, _question_words(eg.predicted)))

    def annotate(doc: Doc, eg: Example) -> None:
        counts = frequency[question_group(doc)]
        first: Dict[str, Span] = {}
        for span in _content_words(doc, _question_words(doc)):
            first.setdefault(span.text.lower(), span)
        ranked = sorted(first, key=lambda word: (-counts[word], first[word].start))[:top_k]
        doc.spans[spans_key] = SpanGroup(
            doc, name=spans_key, spans=[first[w] for w in ranked],
            attrs={"texts": [first[w].text for w in ranked], "scores": [float(counts[w]) for w in ranked]},
        )

    return "most frequent snippet word", _rescored(examples, annotate, lambda egs: score_answer_spans(egs, spans_key))


def question_sentence_answers(examples: Sequence[Example], spans_key: str = "answers") -> Baseline:
    """Each passage's sentence (spaCy's ``Sentencizer``) sharing the most content words with the
    question as its one answer, the earlier on a tie."""
    from spacy.pipeline import Sentencizer

    from ..pipes.answer_span.scorer import score_answer_spans

    sentencizer = Sentencizer()

    def annotate(doc: Doc, eg: Example) -> None:
        question_words = _question_words(doc)
        sents = list(sentencizer(doc).sents) if len(doc) else []
        best = max(sents, key=lambda sent: (len({t.lower_ for t in sent if not t.is_stop} & question_words), -sent.start), default=None)
        spans = [best] if best is not None else []
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=spans, attrs={"texts": [s.text for s in spans], "scores": [1.0] * len(spans)})

    return "the sentence sharing most words with the question", _rescored(examples, annotate, lambda egs: score_answer_spans(egs, spans_key))


def mean_pooled_embeddings(encoder: Union[str, Path], texts: Sequence[str], batch_size: int = 32, max_length: int = 256):
    """L2-normalised mean of the last hidden states (padding excluded) of an HF encoder directory,
    one row per text (a float32 torch tensor). Texts longer than ``max_length`` wordpieces are
    averaged over their first window only: this is a baseline's embedding, not a model's input."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    model = AutoModel.from_pretrained(str(encoder)).eval()
    rows = []
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(list(texts[start : start + batch_size]), padding=True, truncation=True,
                              max_length=max_length, return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            rows.append(torch.nn.functional.normalize(pooled, dim=-1))
    return torch.cat(rows) if rows else torch.zeros((0, model.config.hidden_size))


def _ranked_by(examples: Sequence[Example], score: Callable[[str, List[Span]], Sequence[float]], spans_key: str) -> dict:
    """The reranking scores of each Doc's candidates sorted by ``score(question, candidates)``
    (ties in document order)."""
    from ..pipes.answer_reranker.component import candidate_sentences
    from ..pipes.answer_reranker.scorer import score_reranking

    def annotate(doc: Doc, eg: Example) -> None:
        candidates = candidate_sentences(doc, "reranking baseline")
        scores = [float(x) for x in score(get_question(doc, "reranking baseline"), candidates)]
        ranked = sorted(zip(scores, candidates), key=lambda item: (-item[0], item[1].start))
        doc.spans[spans_key] = SpanGroup(doc, name=spans_key, spans=[s for _, s in ranked],
                                         attrs={"scores": [c for c, _ in ranked]})

    return _rescored(examples, annotate, lambda egs: score_reranking(egs, spans_key))


def bm25_reranking(examples: Sequence[Example], spans_key: str = "ranked_sents") -> Baseline:
    """Candidates ranked by Okapi BM25 of the question's terms (document frequencies over the
    question's own candidates)."""
    from ..pipes.answer_reranker.lexical import bm25_scores

    return "BM25 of the question's terms", _ranked_by(
        examples, lambda question, candidates: bm25_scores(question, [s.text for s in candidates]), spans_key
    )


def embeddings_once(encoder: Union[str, Path], batch_size: int = 32) -> Callable[[Sequence[str]], Any]:
    """``mean_pooled_embeddings`` of ``encoder`` that embeds a list of texts once and returns the
    same rows when asked again for the same list (the last list only, so memory stays one set's):
    the plain and the fused zero-shot baselines rank the same Docs' candidates."""

    @functools.lru_cache(maxsize=1)
    def embed_tuple(texts: Tuple[str, ...]):
        return mean_pooled_embeddings(encoder, list(texts), batch_size=batch_size)

    return lambda texts: embed_tuple(tuple(texts))


def zero_shot_cosine_reranking(
    examples: Sequence[Example], encoder: Union[str, Path], spans_key: str = "ranked_sents", batch_size: int = 32,
    lexical_weight: float = 0.0, embed: Optional[Callable[[Sequence[str]], Any]] = None,
) -> Baseline:
    """Candidates ranked by cosine(question, sentence) of ``encoder``'s mean-pooled embeddings;
    with ``lexical_weight`` > 0, by ``z(cosine) + lexical_weight * z(BM25)`` as ``answer_reranker``
    fuses its margins (``fuse_scores``). ``embed`` (default: ``mean_pooled_embeddings`` of
    ``encoder``) maps texts to rows; ``embeddings_once`` lets several baselines share one pass."""
    from ..pipes.answer_reranker.component import candidate_sentences
    from ..pipes.answer_reranker.lexical import bm25_scores, fuse_scores

    questions = sorted({get_question(eg.predicted, "zero-shot baseline") for eg in examples})
    sentences = sorted({s.text for eg in examples for s in candidate_sentences(eg.predicted, "zero-shot baseline")})
    embed = embed or embeddings_once(encoder, batch_size)
    vectors = embed(questions + sentences)
    row = {text: i for i, text in enumerate(questions + sentences)}

    def scores(question: str, candidates: List[Span]) -> Sequence[float]:
        cosines = [float(vectors[row[s.text]] @ vectors[row[question]]) for s in candidates]
        if lexical_weight > 0:
            return fuse_scores(cosines, bm25_scores(question, [s.text for s in candidates]), lexical_weight)
        return cosines

    name = f"zero-shot cosine ({Path(str(encoder)).name})"
    if lexical_weight > 0:
        name += f" + BM25 (lexical_weight {lexical_weight:g})"
    return name, _ranked_by(examples, scores, spans_key)
