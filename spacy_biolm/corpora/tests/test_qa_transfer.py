"""Converters of the QA transfer sets (issue 44): BoolQ -> yes/no Docs, SQuAD/COVID-QA paragraphs
-> reranking Docs; counts, exact offsets, determinism, malformed lines, and decontamination
against test texts (question match and 13-word overlap)."""

import json

import pytest
import spacy
from spacy.tokens import DocBin

from spacy_biolm.corpora.decontamination import NgramIndex, file_texts
from spacy_biolm.corpora.qa import convert_qa, read_qa_docs
from spacy_biolm.corpora.qa_transfer import answer_passage, paragraph_sentences, squad_reranking_docs
from spacy_biolm.errors import CorpusFormatError

# 14 words: a passage holding them shares a 13-word span with a test text holding them.
LEAK = "The blood brain barrier is a highly selective semipermeable border of endothelial cells"


@pytest.fixture
def nlp():
    return spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})


def _boolq(path, records):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf8")
    return path


BOOLQ = [
    {"question": "is insulin a hormone", "title": "Insulin", "answer": True, "passage": "Insulin is a peptide hormone."},
    {"question": "can protein pass the barrier", "title": "Blood–brain barrier", "answer": False, "passage": LEAK.lower() + " (BBB)."},
    "",
    {"question": "is the sky green", "title": "Sky", "answer": False, "passage": "The sky is blue, β."},
]


def test_boolq_docs_cats_title_and_errors(nlp, tmp_path):
    docs = list(read_qa_docs("boolq", _boolq(tmp_path / "dev.jsonl", BOOLQ), nlp))
    assert len(docs) == 3
    assert [d.cats for d in docs] == [{"yes": 1.0, "no": 0.0}, {"yes": 0.0, "no": 1.0}, {"yes": 0.0, "no": 1.0}]
    assert [d._.question_id for d in docs] == ["dev:1", "dev:2", "dev:4"]  # file line numbers
    assert docs[2].text == "The sky is blue, β." and docs[2]._.question == "is the sky green"
    assert docs[1].user_data["title"] == "Blood–brain barrier" and not docs[1].text.startswith("Blood")
    for bad, message in [('{"question": "x", "passage": "y", "answer": true', r"bad.jsonl:2: not a JSON object"),
                         ({"question": "x", "passage": "y", "answer": "yes"}, r"bad.jsonl:2: 'answer' must be true or false"),
                         ({"question": " ", "passage": "y", "answer": True}, r"bad.jsonl:2: empty or missing 'question'"),
                         ({"question": "x", "answer": True}, r"bad.jsonl:2: empty or missing 'passage'")]:
        with pytest.raises(CorpusFormatError, match=message):
            list(read_qa_docs("boolq", _boolq(tmp_path / "bad.jsonl", [BOOLQ[0], bad]), nlp))


def test_boolq_decontamination_by_question_and_13_word_span(nlp, tmp_path):
    train = _boolq(tmp_path / "dev.jsonl", BOOLQ)
    test = tmp_path / "test.tsv"
    test.write_text("yesno_label\tquestion\tideal_answer\n"
                    f"1\tIs the BBB selective?\t{LEAK}, says the review.\n"
                    "0\tIs the sky green\tNo.\n", encoding="utf8")
    stats = convert_qa("boolq", train, tmp_path / "out.spacy", nlp, exclude=[test])
    assert stats["docs"] == 1 and stats["excluded_docs"] == 2
    kept = list(DocBin().from_disk(tmp_path / "out.spacy").get_docs(nlp.vocab))
    assert [d._.question_id for d in kept] == ["dev:1"] and kept[0].user_data["title"] == "Insulin"
    first = (tmp_path / "out.spacy").read_bytes()
    convert_qa("boolq", train, tmp_path / "out.spacy", nlp, exclude=[test])
    assert (tmp_path / "out.spacy").read_bytes() == first  # deterministic
    # The n-gram rule off: only the question match goes.
    stats = convert_qa("boolq", train, tmp_path / "out.spacy", nlp, exclude=[test], exclude_ngram=0)
    assert stats["docs"] == 2 and stats["excluded_docs"] == 1
    # 12 shared words are not an overlap at n = 13.
    index = NgramIndex([" ".join(LEAK.split()[:12])])
    assert not index.overlaps(LEAK) and NgramIndex([LEAK]).overlaps("x " + LEAK.upper() + " y")
    assert NgramIndex.from_files([test]).overlaps(LEAK) and "Is the sky green" in list(file_texts(test))


def _squad_file(path, articles):
    path.write_text(json.dumps({"version": "1.1", "data": articles}), encoding="utf8")
    return path


P1 = "Wilson disease is rare. ATP7B mutations cause Wilson disease in children. It affects the liver."
P2 = "Copper builds up in the liver. Penicillamine treats Wilson disease copper overload. The eye shows rings."
P3 = "Menkes disease is different. ATP7B is not its cause here."


def _articles():
    cause = P1.index("ATP7B")
    return [
        {"title": "Wilson", "paragraphs": [
            {"context": P1, "qas": [
                {"id": "q1", "question": "Which gene causes Wilson disease?",
                 "answers": [{"text": "ATP7B", "answer_start": cause}, {"text": "ATP7B", "answer_start": cause},
                             {"text": "ATP7B mutations", "answer_start": cause}]},
                {"id": "q2", "question": "Which organ does Wilson disease affect and how rare is it?",
                 "answers": [{"text": "rare. ATP7B", "answer_start": P1.index("rare")}]},
                {"id": "q0", "question": "Unanswerable?", "answers": [], "is_impossible": True}]},
            {"context": P2, "qas": [
                {"id": "q3", "question": "Which drug treats copper overload in Wilson disease?",
                 "answers": [{"text": "Penicillamine", "answer_start": P2.index("Penicillamine")}]}]},
            {"context": P3, "qas": []}]},
        {"title": "Other", "paragraphs": [
            {"context": "Insulin regulates glucose. Wilson disease copper.", "qas": [
                {"id": "q4", "question": "What does insulin regulate?", "answers": [{"text": "glucose", "answer_start": 18}]}]}]},
    ]


def test_squad_reranking_candidates_relevance_and_offsets(nlp, tmp_path):
    path = _squad_file(tmp_path / "squad.json", _articles())
    second, third = P1.index("ATP7B"), P1.index("It affects")
    assert paragraph_sentences(nlp, P1) == [(0, second - 1), (second, third - 1), (third, len(P1))]
    money = "The $1.2 billion stadium opened. Its rating was 99.4. Fine."
    assert [money[s:e] for s, e in paragraph_sentences(nlp, money)] == ["The $1.2 billion stadium opened.", "Its rating was 99.4.", "Fine."]
    docs = {d._.question_id: d for d in squad_reranking_docs(path, nlp, negatives=2)}
    assert sorted(docs) == ["q1", "q2", "q3", "q4"]  # q0 has no answer
    q1 = docs["q1"]
    sents = [s.text for s in q1.sents]
    assert len(sents) == 5 and set(sents) >= {"Wilson disease is rare.", "ATP7B mutations cause Wilson disease in children.", "It affects the liver."}
    # Two negatives from the article's other paragraphs, the most on-topic first; never another article's.
    assert "Penicillamine treats Wilson disease copper overload." in sents and "Wilson disease copper." not in sents
    relevant = q1.spans["relevant_sents"]
    assert [s.text for s in relevant] == ["ATP7B mutations cause Wilson disease in children."]
    start = q1.text.index("ATP7B mutations")
    assert (relevant[0].start_char, relevant[0].end_char) == (start, start + len("ATP7B mutations cause Wilson disease in children."))
    # An answer across a sentence boundary makes both sentences relevant.
    assert sorted(s.text for s in docs["q2"].spans["relevant_sents"]) == ["ATP7B mutations cause Wilson disease in children.", "Wilson disease is rare."]
    # A sentence of another paragraph holding the answer text is never a negative.
    assert not any("ATP7B is not" in s.text for s in q1.sents)
    assert len(list(docs["q4"].sents)) == 2  # no other paragraph in its article
    assert len(list(next(squad_reranking_docs(path, nlp, negatives=0)).sents)) == 3
    # A long paragraph capped: its relevant sentence and the most on-topic other one.
    capped = next(squad_reranking_docs(path, nlp, negatives=0, max_candidates=2))
    assert sorted(s.text for s in capped.sents) == ["ATP7B mutations cause Wilson disease in children.", "Wilson disease is rare."]
    # Deterministic: byte-identical DocBins; another seed may reorder the candidates.
    blob = lambda seed: DocBin(docs=list(squad_reranking_docs(path, nlp, seed=seed)), store_user_data=True).to_bytes()  # noqa: E731
    assert blob(0) == blob(0)
    articles = _articles()
    articles[0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] += 1
    with pytest.raises(CorpusFormatError, match="example 'q1'.*does not match"):
        list(squad_reranking_docs(_squad_file(tmp_path / "bad.json", articles), nlp))


def test_squad_reranking_exclusion_and_cli(nlp, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    path = _squad_file(tmp_path / "squad.json", _articles())
    test = tmp_path / "test.json"  # a BioASQ-style test set holding q3's question (other case); golden: q4's
    test.write_text(json.dumps({"data": [{"paragraphs": [
        {"context": "Penicillamine treats Wilson disease copper overload, and many more words follow in this snippet.",
         "qas": [{"id": "t_001", "question": "which drug treats copper overload in Wilson disease?", "answers": []}]}]}]}))
    golden = tmp_path / "golden.json"
    golden.write_text(json.dumps({"questions": [{"id": "t2", "body": "What does insulin regulate?", "exact_answer": [["glucose"]]}]}))
    out = tmp_path / "r.spacy"
    result = CliRunner().invoke(app, ["qa", "convert", "squad-reranking", str(path), str(out), "--exclude", str(test),
                                      "--exclude", str(golden), "--negatives", "1"])
    assert result.exit_code == 0, result.output
    docs = list(DocBin().from_disk(out).get_docs(nlp.vocab))
    assert sorted(d._.question_id for d in docs) == ["q1", "q2"]
    test_questions = {"which drug treats copper overload in wilson disease?", "what does insulin regulate?"}
    assert all(q not in s.text.lower() for d in docs for s in d.sents for q in test_questions)
    assert all(len(list(d.sents)) == 4 for d in docs)


def test_answer_passage_holds_the_answer_within_the_word_budget(nlp):
    import random

    context = " ".join(f"Sentence {i} has five words." for i in range(40))  # 200 words, 40 sentences
    sentences = paragraph_sentences(nlp, context)
    assert len(sentences) == 40
    answer = context.index("Sentence 17 has")
    answer = (answer + len("Sentence "), answer + len("Sentence 17"))
    starts = set()
    for seed in range(20):
        start, end = answer_passage(sentences, context, [answer], 32, random.Random(seed))
        passage = context[start:end]
        assert start <= answer[0] and answer[1] <= end and len(passage.split()) == 30  # six whole sentences
        assert passage.startswith("Sentence") and passage.endswith("words.")
        starts.add(start)
    assert len(starts) > 3  # the answer is not always at the same place in its passage
    # At the context's start the words left over all go after it; an answer sentence longer than
    # the budget is kept whole; answers too far apart keep the first.
    assert answer_passage(sentences, context, [(0, 8)], 12, random.Random(0)) == (0, sentences[1][1])
    assert answer_passage(sentences, context, [answer], 3, random.Random(0)) == sentences[17]
    far = (sentences[35][0], sentences[35][0] + 8)
    assert answer_passage(sentences, context, [answer, far], 10, random.Random(0)) in {
        (sentences[16][0], sentences[17][1]), (sentences[17][0], sentences[18][1])}


def test_squad_long_contexts_cut_around_the_answer(nlp, tmp_path):
    context = " ".join(f"Filler sentence number {i} here." for i in range(60)) + " ATP7B causes Wilson disease. " + \
        " ".join(f"Closing sentence number {i} here." for i in range(60))
    start = context.index("Wilson disease")
    path = _squad_file(tmp_path / "covid.json", [{"title": "a", "paragraphs": [{"context": context, "qas": [
        {"id": "c1", "question": "What does ATP7B cause?", "answers": [{"text": "Wilson disease", "answer_start": start}]},
        {"id": "c2", "question": "What is sentence 3?", "answers": [{"text": "Filler sentence number 3", "answer_start": context.index("Filler sentence number 3 ")}]}]}]}])
    whole = {d._.question_id: d for d in read_qa_docs("squad", path, nlp)}
    assert whole["c1"].text == context
    cut = {d._.question_id: d for d in read_qa_docs("squad", path, nlp, max_passage_words=40, seed=0)}
    for qid, answer in (("c1", "Wilson disease"), ("c2", "Filler sentence number 3")):
        doc = cut[qid]
        assert len(doc.text.split()) <= 40 and doc.text in context
        (s, e), = doc.spans["answers"].attrs["char_offsets"]
        assert doc.text[s:e] == answer and doc.spans["answers"][0].text == answer
        assert context[doc.user_data.get("context_offset", 0) + s:][: len(answer)] == answer
        assert doc._.gold_answers == [answer]
    blob = lambda seed: DocBin(docs=list(read_qa_docs("squad", path, nlp, max_passage_words=40, seed=seed)), store_user_data=True).to_bytes()  # noqa: E731
    assert blob(0) == blob(0) and blob(0) != blob(1)


def test_real_transfer_sets(tmp_path):
    from spacy_biolm.corpora.qa import _squad_pairs
    from spacy_biolm.testing import SHARED_DATA

    if not (SHARED_DATA / "qa_transfer").is_dir():
        pytest.skip("needs the corpus mirror in ../shared/data")
    transfer = SHARED_DATA / "qa_transfer"
    count = lambda path: sum(1 for _ in _squad_pairs(path))  # noqa: E731
    assert count(transfer / "squad_v1.1" / "dev-v1.1.json") == 10570
    assert [count(transfer / "covid_qa" / f"covid-qa-{split}.json") for split in ("train", "dev", "test")] == [1417, 203, 375]
    # BoolQ minus the two examples the data README names, found by the general 13-word rule
    # against every BioASQ test, golden and reranking-test file of the project.
    factoid = SHARED_DATA / "qa_factoid" / "BioASQ"
    tests = [SHARED_DATA / "qa_yesno" / "BioASQ" / "bio_electra" / "test.tsv",
             SHARED_DATA / "qa_yesno" / "BioASQ" / "biobert" / "BioASQ-test-yesno-7b.json",
             factoid / "bio_electra" / "dev.json", *sorted((factoid / "biobert").glob("BioASQ-test-factoid-*.json")),
             *sorted((factoid / "biobert").glob("*_golden.json")),
             SHARED_DATA / "reranking" / "BioASQ-reranker" / "bio_electra" / "test.tsv"]
    fast = spacy.blank("en")
    stats = convert_qa("boolq", transfer / "boolq" / "dev.jsonl", tmp_path / "boolq.spacy", fast, exclude=tests)
    assert stats["docs"] == 3268 and stats["excluded_docs"] == 2
    kept = {d._.question_id for d in DocBin().from_disk(tmp_path / "boolq.spacy").get_docs(fast.vocab)}
    assert {"dev:450", "dev:2298"} & kept == set() and len(kept) == 3268
