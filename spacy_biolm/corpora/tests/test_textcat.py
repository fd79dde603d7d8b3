import json

import pytest
import spacy

from spacy_biolm.corpora.textcat import cats_jsonl_to_docs
from spacy_biolm.errors import CorpusFormatError


def _write(path, lines):
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n", encoding="utf8")
    return path


def test_labels_and_cats_records_give_every_doc_every_label(tmp_path):
    path = _write(tmp_path / "c.jsonl", [{"text": "p53 loss.", "labels": ["apoptosis"]}, "",
                                         {"text": "VEGF rises.", "cats": {"angiogenesis": 1, "apoptosis": 0}}])
    docs = list(cats_jsonl_to_docs(path, spacy.blank("en")))
    assert [doc.text for doc in docs] == ["p53 loss.", "VEGF rises."]
    assert docs[0].cats == {"angiogenesis": 0.0, "apoptosis": 1.0}
    assert docs[1].cats == {"angiogenesis": 1.0, "apoptosis": 0.0}
    fixed = list(cats_jsonl_to_docs(path, spacy.blank("en"), labels=["apoptosis", "angiogenesis", "invasion"]))
    assert fixed[0].cats == {"apoptosis": 1.0, "angiogenesis": 0.0, "invasion": 0.0}


@pytest.mark.parametrize("line,reason", [
    ("{not json", "not a JSON object"),
    ({"labels": ["a"]}, '"text"'),
    ({"text": "x", "labels": "a"}, 'needs "labels"'),
    ({"text": "x", "cats": {"a": 0.5}}, "0 or 1"),
])
def test_a_malformed_record_names_its_line(tmp_path, line, reason):
    path = _write(tmp_path / "c.jsonl", [{"text": "fine", "labels": ["a"]}, line])
    with pytest.raises(CorpusFormatError, match=rf"c.jsonl:2: .*{reason}"):
        list(cats_jsonl_to_docs(path, spacy.blank("en")))


def test_a_label_outside_the_given_set_names_its_line(tmp_path):
    path = _write(tmp_path / "c.jsonl", [{"text": "fine", "labels": ["a"]}, {"text": "odd", "labels": ["z"]}])
    with pytest.raises(CorpusFormatError, match=r"c.jsonl:2: unknown label\(s\) \['z'\]"):
        list(cats_jsonl_to_docs(path, spacy.blank("en"), labels=["a", "b"]))


def test_the_cli_writes_every_label_into_doc_cats_and_names_a_bad_line(tmp_path):
    from spacy.tokens import DocBin
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    path = _write(tmp_path / "c.jsonl", [{"text": "p53 loss.", "labels": ["apoptosis"]}, {"text": "VEGF rises.", "labels": []}])
    result = CliRunner().invoke(app, ["data", "convert-cats", str(path), str(tmp_path / "c.spacy"), "--label", "apoptosis",
                                      "--label", "angiogenesis"])
    assert result.exit_code == 0, result.output
    docs = list(DocBin().from_disk(tmp_path / "c.spacy").get_docs(spacy.blank("en").vocab))
    assert [doc.cats for doc in docs] == [{"apoptosis": 1.0, "angiogenesis": 0.0}, {"apoptosis": 0.0, "angiogenesis": 0.0}]
    bad = CliRunner().invoke(app, ["data", "convert-cats", str(path), str(tmp_path / "d.spacy"), "--label", "other"])
    assert bad.exit_code == 1 and "c.jsonl:1" in bad.output
