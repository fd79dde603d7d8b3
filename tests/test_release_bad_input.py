"""Bad input to the release pipeline: odd texts in a batch lose nothing and crash nothing."""

import shutil

import pytest
import spacy

from spacy_biolm.errors import PipelineDataError
from spacy_biolm.testing import RELEASE_SENTENCE

pytestmark = pytest.mark.slow  # builds the tiny release (~15 s, shared with test_release_install.py)


def test_whitespace_empty_and_very_long_texts_in_one_batch(tiny_release):
    nlp = spacy.load(tiny_release)
    long_text = " ".join([RELEASE_SENTENCE] * 150)  # ~1,350 tokens: many encoder windows
    texts = [RELEASE_SENTENCE, "   \n\t ", "", long_text, RELEASE_SENTENCE, " "]
    docs = list(nlp.pipe(texts, batch_size=4))
    assert [doc.text for doc in docs] == texts  # one Doc per text, in order, nothing dropped
    alone = nlp(RELEASE_SENTENCE)
    for doc in (docs[0], docs[4]):  # the odd texts beside them change nothing
        assert [(e.start_char, e.end_char, e.label_) for e in doc.ents] == \
            [(e.start_char, e.end_char, e.label_) for e in alone.ents]
    for doc in (docs[1], docs[2], docs[5]):
        assert len(doc.ents) == 0 and doc._.relations == []
    assert len(docs[3]) == 150 * len(alone)
    assert all(ent.end <= len(docs[3]) for ent in docs[3].ents)


@pytest.mark.parametrize("component", ["relation_extractor", "answer_span"])
@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_a_damaged_component_file_names_the_component_and_directory(tiny_release, tmp_path, component, damage):
    copy = tmp_path / "release"
    shutil.copytree(tiny_release, copy)
    weights = copy / component / "model"
    if damage == "truncated":  # a copy or save that stopped half-way
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    else:
        weights.unlink()
    with pytest.raises(PipelineDataError, match=rf"{component}: {component}: cannot read its saved settings or weights"):
        spacy.load(copy)


def test_qa_pipes_take_blank_empty_and_long_passages_beside_normal_ones(tiny_release):
    from spacy_biolm import make_question_doc

    nlp = spacy.load(tiny_release)
    question = "Which gene is mutated?"
    passages = [RELEASE_SENTENCE, "  \n ", "", " ".join([RELEASE_SENTENCE] * 60)]
    # The reranker reads candidate sentences: none at all, or 60 of them.
    candidates = [[RELEASE_SENTENCE, "Nothing else is known."], [], [RELEASE_SENTENCE] * 60]
    for name, key, contexts in [("yes_no", None, passages), ("answer_span", "answers", passages),
                                ("answer_reranker", "ranked_sents", candidates)]:
        pipe = nlp.get_pipe(name)
        docs = list(pipe.pipe([make_question_doc(nlp, question, c) for c in contexts], batch_size=3))
        assert len(docs) == len(contexts)
        alone = pipe(make_question_doc(nlp, question, contexts[0]))
        if key is None:
            assert all(sorted(doc.cats) == ["no", "yes"] for doc in docs)
            assert docs[0].cats == pytest.approx(alone.cats)
            continue
        assert [s.text for s in docs[0].spans[key]] == [s.text for s in alone.spans[key]]
        assert all(len(doc.spans.get(key, [])) == 0 for doc in docs[1:-1])
        assert len(docs[-1].spans[key]) >= 1
    with pytest.raises(ValueError, match=r"candidate sentence 1 is empty \(question_id='q7'\)"):
        make_question_doc(nlp, question, [RELEASE_SENTENCE, "   "], question_id="q7")
