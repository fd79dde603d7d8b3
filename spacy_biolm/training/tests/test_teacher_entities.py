"""Teacher entities fill the types a corpus does not annotate; the gold always wins."""

import json

import pytest
import spacy
from spacy.tokens import DocBin, Span
from typer.testing import CliRunner

from spacy_biolm.cli import app
from spacy_biolm.doc_data import annotated_entity_types
from spacy_biolm.training.teacher_entities import fill_entities

TEXT = "BRCA1 mutations cause breast cancer in BRCA2 carriers ."


def _teacher(path=None):
    """A pipeline whose `ner` (a rule-based stand-in for a trained one) finds genes, one of them
    overlapping the gold disease, and a disease (a type the corpus annotates itself)."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler", name="ner")
    ruler.add_patterns([{"label": "GENE", "pattern": "BRCA1"}, {"label": "GENE", "pattern": "BRCA2"},
                        {"label": "GENE", "pattern": "breast"}, {"label": "DISEASE", "pattern": "mutations"}])
    if path:
        nlp.to_disk(path)
    return nlp


def _gold_doc():
    doc = spacy.blank("en").make_doc(TEXT)
    doc.ents = [Span(doc, 3, 5, label="DISEASE")]
    return doc


def test_teacher_entities_of_other_types_are_added_where_no_gold_entity_is():
    ((doc, counts),) = list(fill_entities([_gold_doc()], ["DISEASE"], [_teacher()]))
    assert [(e.text, e.label_) for e in doc.ents] == [("BRCA1", "GENE"), ("breast cancer", "DISEASE"), ("BRCA2", "GENE")]
    assert counts == {"added": {"GENE": 2}, "skipped": {"GENE": 1}}
    assert annotated_entity_types(doc) == {"DISEASE", "GENE"}
    assert doc[1].ent_iob_ == "O"  # the teacher's "mutations" DISEASE is not the gold's: ignored


def test_a_gold_entity_outside_the_corpus_types_is_an_error():
    with pytest.raises(ValueError, match="DISEASE"):
        list(fill_entities([_gold_doc()], ["GENE"], [_teacher()]))


def test_teachers_that_find_only_the_corpus_types_are_an_error():
    with pytest.raises(ValueError, match="no entity type besides"):
        list(fill_entities([_gold_doc()], ["DISEASE", "GENE"], [_teacher()]))


def test_fill_entities_command_writes_the_docbin_and_its_counts(tmp_path):
    DocBin(docs=[_gold_doc()]).to_disk(tmp_path / "in.spacy")
    _teacher(tmp_path / "teacher")
    result = CliRunner().invoke(app, ["data", "fill-entities", str(tmp_path / "in.spacy"), str(tmp_path / "out.spacy"),
                                      "--teacher", str(tmp_path / "teacher"), "--type", "DISEASE",
                                      "--stats", str(tmp_path / "stats.json")])
    assert result.exit_code == 0, result.output
    (doc,) = DocBin().from_disk(tmp_path / "out.spacy").get_docs(spacy.blank("en").vocab)
    assert [e.label_ for e in doc.ents] == ["GENE", "DISEASE", "GENE"] and annotated_entity_types(doc) == {"DISEASE", "GENE"}
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["added"] == {"GENE": 2} and stats["docs"] == 1 and "run" in stats
