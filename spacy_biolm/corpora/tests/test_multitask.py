"""The multi-task reader: each task corpus's Docs marked missing for what they do not annotate,
interleaved by a schedule."""

import pytest
import spacy
from spacy.tokens import DocBin, Span
from spacy.util import registry

from spacy_biolm.corpora.multitask import (
    MultiTaskCorpus,
    TaskCorpus,
    _counts,
    _interleaved,
    schedule_shares,
)
from spacy_biolm.doc_data import annotated_entity_types, get_relations, relations_annotated, set_relations
from spacy_biolm.doc_data.relations import Relation
from spacy_biolm.errors import CorpusFormatError


@pytest.fixture
def nlp():
    return spacy.blank("en")


def _docbin(path, docs):
    DocBin(docs=docs, store_user_data=True).to_disk(path)
    return path


def _ner_doc(nlp, text, label, start, end):
    doc = nlp.make_doc(text)
    doc.ents = [Span(doc, start, end, label=label)]
    return doc


def _relation_doc(nlp):
    doc = nlp.make_doc("BRCA1 variants cause breast cancer .")
    head, tail = Span(doc, 0, 1, label="GENE"), Span(doc, 3, 5, label="DISEASE")
    doc.ents = [head, tail]
    set_relations(doc, [Relation(head, tail, "ASSOCIATION")])
    return doc


def _hoc_doc(nlp):
    doc = nlp.make_doc("Tumour cells evade apoptosis .")
    doc.cats = {"Resisting cell death": 1.0, "Sustaining proliferative signaling": 0.0}
    return doc


def test_an_entity_corpus_records_its_types_and_marks_cats_and_relations_missing(nlp, tmp_path):
    path = _docbin(tmp_path / "ner.spacy", [_ner_doc(nlp, "Patients with ataxia .", "DISEASE", 2, 3)])
    (eg,) = TaskCorpus(path, ["entities"], entity_types=["DISEASE"])(nlp)
    assert annotated_entity_types(eg.reference) == {"DISEASE"}
    assert [t.ent_iob_ for t in eg.reference] == ["O", "O", "B", "O"]  # outside its entities: negatives
    assert eg.reference.cats == {}
    assert not relations_annotated(eg.reference)
    assert not eg.predicted.ents and not eg.predicted.has_annotation("ENT_IOB")


def test_a_relation_corpus_gives_the_predicted_doc_its_entities_and_no_ner_annotation(nlp, tmp_path):
    path = _docbin(tmp_path / "re.spacy", [_relation_doc(nlp)])
    (eg,) = TaskCorpus(path, ["relations"], gold_entities=True)(nlp)
    assert [(e.text, e.label_) for e in eg.predicted.ents] == [("BRCA1", "GENE"), ("breast cancer", "DISEASE")]
    assert all(t.ent_iob_ in ("B", "I", "O") for t in eg.predicted)  # preset: the ner adds no entity
    assert not eg.reference.has_annotation("ENT_IOB")  # every token missing: no NER loss
    assert relations_annotated(eg.reference)
    assert [(r.head.text, r.tail.text, r.label) for r in get_relations(eg.reference)] == [("BRCA1", "breast cancer", "ASSOCIATION")]


def test_a_cats_corpus_keeps_its_cats_and_marks_the_rest_missing(nlp, tmp_path):
    path = _docbin(tmp_path / "hoc.spacy", [_hoc_doc(nlp)])
    (eg,) = TaskCorpus(path, ["cats"])(nlp)
    assert eg.reference.cats == {"Resisting cell death": 1.0, "Sustaining proliferative signaling": 0.0}
    assert not eg.reference.has_annotation("ENT_IOB")
    assert not relations_annotated(eg.reference)


def test_an_entity_label_outside_the_corpus_types_names_the_file_and_doc(nlp, tmp_path):
    path = _docbin(tmp_path / "ner.spacy", [_ner_doc(nlp, "BRCA1 is a gene .", "GENE", 0, 1)])
    with pytest.raises(CorpusFormatError, match=r"ner\.spacy.*Doc 0.*\['GENE'\].*\['DISEASE'\]"):
        list(TaskCorpus(path, ["entities"], entity_types=["DISEASE"])(nlp))


@pytest.mark.parametrize("annotates, entity_types", [([], []), (["tags"], []), (["entities"], []), (["cats"], ["GENE"])])
def test_task_corpus_settings_are_checked(nlp, tmp_path, annotates, entity_types):
    path = _docbin(tmp_path / "hoc.spacy", [_hoc_doc(nlp)])
    with pytest.raises(ValueError, match="TaskCorpus"):
        TaskCorpus(path, annotates, entity_types=entity_types)


def test_schedules_share_an_epoch_by_size_by_tempered_size_or_equally():
    sizes = {"big": 900, "small": 100}
    assert schedule_shares(sizes, "proportional") == pytest.approx({"big": 0.9, "small": 0.1})
    assert schedule_shares(sizes, "temperature", temperature=2.0) == pytest.approx({"big": 0.75, "small": 0.25})
    assert schedule_shares(sizes, "round_robin") == pytest.approx({"big": 0.5, "small": 0.5})
    with pytest.raises(ValueError, match="schedule"):
        schedule_shares(sizes, "random")
    with pytest.raises(ValueError, match="temperature"):
        schedule_shares(sizes, "temperature", temperature=0)


def test_counts_are_whole_sum_to_the_epoch_and_give_every_corpus_a_turn():
    counts = _counts({"a": 0.5, "b": 0.3, "c": 0.2}, 11)
    assert sum(counts.values()) == 11 and counts == {"a": 6, "b": 3, "c": 2}
    assert _counts({"a": 0.999, "b": 0.001}, 10)["b"] == 1


def test_interleaving_spreads_each_corpus_evenly():
    order = list(_interleaved({"a": 2, "b": 6}))
    assert sorted(order) == ["a"] * 2 + ["b"] * 6
    assert "aa" not in "".join(order)
    assert "".join(order).index("a") < 4  # the small corpus does not wait for the end


def test_an_epoch_interleaves_and_the_next_continues_each_corpus(nlp, tmp_path):
    ner_docs = [_ner_doc(nlp, f"Case {i} of ataxia .", "DISEASE", 3, 4) for i in range(4)]
    ner = TaskCorpus(_docbin(tmp_path / "ner.spacy", ner_docs), ["entities"], entity_types=["DISEASE"])
    hoc = TaskCorpus(_docbin(tmp_path / "hoc.spacy", [_hoc_doc(nlp)]), ["cats"])
    corpus = MultiTaskCorpus({"ner": ner, "hoc": hoc}, schedule="round_robin", size=4)
    first = [eg.reference.text for eg in corpus(nlp)]
    second = [eg.reference.text for eg in corpus(nlp)]
    assert [text.startswith("Case") for text in first] == [True, False, True, False]
    assert [t for t in first + second if t.startswith("Case")] == [f"Case {i} of ataxia ." for i in range(4)]


def test_proportional_epoch_of_size_zero_is_every_doc_once(nlp, tmp_path):
    ner_docs = [_ner_doc(nlp, f"Case {i} of ataxia .", "DISEASE", 3, 4) for i in range(3)]
    ner = TaskCorpus(_docbin(tmp_path / "ner.spacy", ner_docs), ["entities"], entity_types=["DISEASE"])
    rel = TaskCorpus(_docbin(tmp_path / "re.spacy", [_relation_doc(nlp)]), ["relations"], gold_entities=True)
    corpus = MultiTaskCorpus({"ner": ner, "re": rel}, schedule="proportional")
    for _ in range(2):
        assert sorted(eg.reference.text for eg in corpus(nlp)) == sorted(
            [d.text for d in ner_docs] + ["BRCA1 variants cause breast cancer ."])


def test_the_registered_readers_build_from_config(nlp, tmp_path):
    path = _docbin(tmp_path / "ner.spacy", [_ner_doc(nlp, "Patients with ataxia .", "DISEASE", 2, 3)])
    config = {"corpus": {"@readers": "spacy-biolm.MultiTaskCorpus.v1", "schedule": "round_robin",
                         "tasks": {"diseases": {"@readers": "spacy-biolm.TaskCorpus.v1", "path": str(path),
                                                "annotates": ["entities"], "entity_types": ["DISEASE"]}}}}
    corpus = registry.resolve(config)["corpus"]
    assert [eg.reference.ents[0].text for eg in corpus(nlp)] == ["ataxia"]
    config["corpus"]["tasks"]["diseases"] = "not a reader"
    with pytest.raises(TypeError, match="diseases"):
        registry.resolve(config)
