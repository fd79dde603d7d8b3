"""The baselines score what they claim to, with the task's own scorer, on known inputs."""

import itertools

import pytest
import spacy
from spacy.tokens import Span, SpanGroup
from spacy.training import Example

from spacy_biolm.doc_data import Relation, make_question_doc, register_extensions, set_relations
from spacy_biolm.evaluation.baselines import (
    bm25_reranking,
    all_positive_relations,
    frequent_word_answers,
    majority_yes_no,
    question_sentence_answers,
    zero_shot_cosine_reranking,
)

register_extensions()


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def _relation_example(nlp, n_entities: int, gold_pairs):
    doc = nlp.make_doc(" ".join(f"E{i} is here ." for i in range(n_entities)))
    ents = [Span(doc, 4 * i, 4 * i + 1, label="GENE") for i in range(n_entities)]
    doc.ents = ents
    reference = doc.copy()
    gold = reference.ents
    set_relations(reference, [Relation(gold[h], gold[t], "ASSOCIATION") for h, t in gold_pairs])
    return Example(doc, reference)


def test_all_positive_labels_every_candidate_pair(nlp):
    examples = [_relation_example(nlp, 3, [(0, 1)]), _relation_example(nlp, 2, [])]

    def every_pair(doc):
        return list(itertools.combinations(doc.ents, 2))

    name, scores = all_positive_relations(examples, every_pair)
    assert name == "all positive (ASSOCIATION)"
    # 3 + 1 candidate pairs, one of them gold
    assert scores["rel_micro_p"] == pytest.approx(1 / 4)
    assert scores["rel_micro_r"] == pytest.approx(1.0)
    assert scores["rel_micro_f"] == pytest.approx(2 * 0.25 / 1.25)
    assert examples[0].predicted._.relations == []  # the evaluated Docs are left alone


def test_all_positive_needs_a_label(nlp):
    with pytest.raises(ValueError, match="no relation"):
        all_positive_relations([_relation_example(nlp, 2, [])], lambda doc: [])


def _yes_no_example(nlp, answer: str):
    doc = make_question_doc(nlp, "Is it?", "A passage .")
    reference = doc.copy()
    reference.cats = {"yes": float(answer == "yes"), "no": float(answer == "no")}
    return Example(doc, reference)


def test_majority_answer_comes_from_the_training_data(nlp):
    train = [_yes_no_example(nlp, a).reference for a in ("no", "no", "yes")]
    test = [_yes_no_example(nlp, a) for a in ("yes", "yes", "yes", "no")]
    name, scores = majority_yes_no(test, train)
    assert name == "majority class (always no)"
    assert scores["yes_no_f_yes"] == 0.0
    assert scores["yes_no_f_no"] == pytest.approx(2 * 0.25 / 1.25)  # P 1/4, R 1


def test_frequent_word_answers_skip_the_question_and_rank_by_frequency(nlp):
    passages = ["BRCA1 mutations cause cancer .", "Mutations in BRCA1 and TP53 .", "Gene BRCA1 again ."]
    examples = []
    for i, passage in enumerate(passages):
        doc = make_question_doc(nlp, "Which gene mutations cause cancer?", passage, question_id="q1")
        reference = doc.copy()
        reference._.gold_answers = ["TP53"] if i == 0 else []
        examples.append(Example(doc, reference))
    name, scores = frequent_word_answers(examples)
    assert name == "most frequent snippet word"
    ranked = examples[1].predicted.copy()
    # BRCA1 (3 times) first, then TP53; "mutations", "cancer", "gene" are question words
    assert scores["answer_strict_acc"] == 0.0
    assert scores["answer_lenient_acc"] == 1.0
    assert scores["answer_mrr"] == pytest.approx(0.5)
    assert "answers" not in ranked.spans


def test_question_sentence_answers_take_the_sentence_sharing_most_question_words(nlp):
    passage = "The virus spreads fast. Masks reduce the spread of the virus in hospitals. Vaccines were tested."
    examples = []
    for gold in ("Masks reduce the spread of the virus in hospitals.", "Vaccines were tested."):
        doc = make_question_doc(nlp, "What reduces the spread of the virus in hospitals?", passage, question_id=gold[:5])
        reference = doc.copy()
        start = passage.index(gold)
        reference.spans["answers"] = [reference.char_span(start, start + len(gold))]
        reference._.gold_answers = [gold]
        examples.append(Example(doc, reference))
    name, scores = question_sentence_answers(examples)
    assert name == "the sentence sharing most words with the question"
    assert scores["answer_em"] == pytest.approx(0.5)  # right for the first question only
    assert "answers" not in examples[0].predicted.spans


def test_zero_shot_cosine_ranks_the_question_itself_first(nlp, tiny_qa_encoder):
    question = "which gene causes the disease"
    sentences = ["the cell grows fast", question, "a protein binds the receptor"]
    doc = make_question_doc(nlp, question, sentences, question_id="q1")
    reference = doc.copy()
    relevant = [s for s in reference.sents if s.text == question]
    reference.spans["relevant_sents"] = SpanGroup(reference, name="relevant_sents", spans=relevant)
    name, scores = zero_shot_cosine_reranking([Example(doc, reference)], tiny_qa_encoder)
    assert name.startswith("zero-shot cosine")
    assert scores["rerank_mrr"] == pytest.approx(1.0)
    assert scores["rerank_mrr_random"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)


def test_zero_shot_cosine_with_bm25_ranks_as_the_lexical_weight_says(nlp, tiny_qa_encoder):
    question = "which gene causes fibrosis"
    sentences = ["the cell grows fast", "a protein binds the receptor", "cftr gene mutations cause cystic fibrosis"]
    doc = make_question_doc(nlp, question, sentences, question_id="q1")
    reference = doc.copy()
    relevant = [s for s in reference.sents if s.text.startswith("cftr")]
    reference.spans["relevant_sents"] = SpanGroup(reference, name="relevant_sents", spans=relevant)
    examples = [Example(doc, reference)]
    name, scores = zero_shot_cosine_reranking(examples, tiny_qa_encoder, lexical_weight=100.0)
    assert name.endswith("+ BM25 (lexical_weight 100)")
    # The only candidate sharing the question's terms is first once BM25 outweighs the cosine.
    assert scores["rerank_mrr"] == pytest.approx(1.0) == bm25_reranking(examples)[1]["rerank_mrr"]
    assert "ranked_sents" not in doc.spans


def test_reranking_baselines_embed_the_candidates_once(nlp, tiny_qa_encoder, monkeypatch):
    from spacy_biolm.evaluation import baselines
    from spacy_biolm.evaluation.qa import reranking_baselines

    question = "which gene causes fibrosis"
    sentences = ["the cell grows fast", "a protein binds the receptor", "cftr gene mutations cause cystic fibrosis"]
    doc = make_question_doc(nlp, question, sentences, question_id="q1")
    reference = doc.copy()
    reference.spans["relevant_sents"] = SpanGroup(reference, name="relevant_sents", spans=list(reference.sents)[2:])
    examples = [Example(doc, reference)]
    alone = {name: scores for name, scores in (
        zero_shot_cosine_reranking(examples, tiny_qa_encoder), zero_shot_cosine_reranking(examples, tiny_qa_encoder, lexical_weight=2.0)
    )}
    calls = []
    embed = baselines.mean_pooled_embeddings
    monkeypatch.setattr(baselines, "mean_pooled_embeddings", lambda *args, **kwargs: calls.append(args) or embed(*args, **kwargs))
    shared = dict(baseline(examples) for baseline in reranking_baselines(tiny_qa_encoder, lexical_weight=2.0))
    assert len(calls) == 1  # the plain and the fused cosine share one pass over the candidates
    assert {name: shared[name] for name in alone} == alone
