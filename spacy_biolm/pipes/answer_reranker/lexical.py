"""Lexical evidence for answer-sentence ranking: Okapi BM25 of the question's terms in each
candidate, and its fusion with the encoder's scores.

A sentence that repeats the question's rare terms (a gene, a drug, a syndrome) is often the
answer, and a sentence-embedding encoder that never saw the term weighs it little. BM25 is
computed over the candidates of one Doc (their own document frequencies), so a Doc of a question
and its candidate sentences is all it needs: no corpus statistics travel with the pipeline.
"""

import math
import re
from collections import Counter
from typing import List, Sequence

import numpy
from spacy.lang.en.stop_words import STOP_WORDS

__all__ = ["lexical_terms", "bm25_scores", "fuse_scores"]

_TERM = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def lexical_terms(text: str) -> List[str]:
    """Lower-cased words and numbers of ``text`` (hyphenated compounds kept whole), without
    English stop words."""
    return [t for t in _TERM.findall(text.lower()) if t not in STOP_WORDS]


def bm25_scores(question: str, candidates: Sequence[str], k1: float = 1.2, b: float = 0.75) -> numpy.ndarray:
    """Okapi BM25 of ``question``'s distinct terms in each candidate, with the document
    frequencies and mean length of ``candidates`` themselves (idf = log(1 + (N - df + 0.5) /
    (df + 0.5)), always positive). 0.0 for a candidate sharing no term with the question."""
    docs = [lexical_terms(c) for c in candidates]
    if not docs:
        return numpy.zeros(0)
    df = Counter(t for d in docs for t in set(d))
    mean_length = max(sum(map(len, docs)) / len(docs), 1e-9)
    query = set(lexical_terms(question))
    scores = numpy.zeros(len(docs))
    for i, doc in enumerate(docs):
        tf = Counter(doc)
        norm = k1 * (1 - b + b * len(doc) / mean_length)
        for term in query & tf.keys():
            idf = math.log(1 + (len(docs) - df[term] + 0.5) / (df[term] + 0.5))
            scores[i] += idf * tf[term] * (k1 + 1) / (tf[term] + norm)
    return scores


def _standardised(values: numpy.ndarray) -> numpy.ndarray:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else numpy.zeros_like(values)


def fuse_scores(dense: Sequence[float], lexical: Sequence[float], lexical_weight: float) -> numpy.ndarray:
    """``z(dense) + lexical_weight * z(lexical)``, each standardised over the candidates of one
    question: the two scales differ (cosine margins vs. BM25 sums) and vary by question, so each
    contributes by its rank-like spread, not its units. A constant score contributes nothing."""
    dense = numpy.asarray(dense, dtype="float64")
    lexical = numpy.asarray(lexical, dtype="float64")
    if dense.shape != lexical.shape:
        raise ValueError(f"fuse_scores: {dense.shape[0]} dense scores but {lexical.shape[0]} lexical ones")
    return _standardised(dense) + lexical_weight * _standardised(lexical)
