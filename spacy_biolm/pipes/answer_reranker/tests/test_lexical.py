"""BM25 over one question's candidates and its fusion with the encoder's margins, by hand."""

import math

import numpy
import pytest

from spacy_biolm.pipes.answer_reranker.lexical import bm25_scores, fuse_scores, lexical_terms


def test_lexical_terms_drop_stop_words_and_keep_hyphenated_compounds():
    assert lexical_terms("Which genes are involved in Diamond-Blackfan anemia?") == ["genes", "involved", "diamond-blackfan", "anemia"]


def test_bm25_by_hand_with_the_candidates_own_document_frequencies():
    candidates = ["tamoxifen treats cancer", "cancer cells grow", "the weather is fine"]
    scores = bm25_scores("Does tamoxifen treat cancer?", candidates, k1=1.2, b=0.0)
    # b = 0: no length normalisation, each matching term contributes idf * (k1 + 1) / (1 + k1) = idf.
    idf = lambda df: math.log(1 + (3 - df + 0.5) / (df + 0.5))
    assert scores == pytest.approx([idf(1) + idf(2), idf(2), 0.0])
    # The rarer term weighs more: the candidate with tamoxifen outranks the one with cancer only.
    assert scores[0] > scores[1] > scores[2] == 0.0
    assert bm25_scores("anything", []).shape == (0,)


def test_bm25_prefers_the_shorter_of_two_candidates_with_the_same_match():
    scores = bm25_scores("BRCA1 mutation", ["BRCA1 mutation", "BRCA1 mutation found in many of the patients studied here"])
    assert scores[0] > scores[1] > 0


def test_fusion_standardises_both_scores_per_question():
    dense = [3.0, 2.0, 1.0]
    lexical = [0.0, 0.0, 9.0]
    assert numpy.argmax(fuse_scores(dense, lexical, 0.0)) == 0
    assert numpy.argmax(fuse_scores(dense, lexical, 4.0)) == 2
    # Units do not matter: scaling either input leaves the fused scores unchanged.
    assert fuse_scores(dense, lexical, 1.0) == pytest.approx(fuse_scores([30.0, 20.0, 10.0], [0.0, 0.0, 0.9], 1.0))
    # A question whose candidates share no term with it is ranked by the model alone.
    assert fuse_scores(dense, [0.0, 0.0, 0.0], 2.0) == pytest.approx(fuse_scores(dense, [0.0] * 3, 0.0))
    with pytest.raises(ValueError, match="3 dense scores but 2 lexical"):
        fuse_scores(dense, [1.0, 2.0], 1.0)
