"""Collecting pretraining text from the corpus formats."""

import json

import pytest

from spacy_biolm.errors import CorpusFormatError, PretrainingDataError
from spacy_biolm.pretraining.text import collect_text, read_documents


def _docs(text: str):
    return [block.splitlines() for block in text.strip("\n").split("\n\n")]


def test_sources_of_every_type_become_sentence_per_line_documents(tmp_path):
    txt = tmp_path / "abstracts.txt"
    txt.write_text("BRCA1 is a tumour suppressor. It repairs DNA.\n\nTP53 is mutated in cancer.\n")
    csv_file = tmp_path / "pubmed.csv"
    csv_file.write_text('abstract,term\n"Ghrelin binds its receptor. It is\nfound in the stomach.",covid\n')
    jsonl = tmp_path / "hoc.jsonl"
    jsonl.write_text(json.dumps({"pmid": "1", "sentences": ["First sentence .", "Second  one ."]}) + "\n")
    conll = tmp_path / "train.tsv"
    conll.write_text("-DOCSTART-\tO\n\nIL\tB-P\n-\tI-P\n2\tI-P\n\nNext\tO\n\n-DOCSTART-\tO\n\nOther\tO\n")

    out = tmp_path / "text.txt"
    stats = collect_text([txt, csv_file, jsonl, conll], out)
    assert _docs(out.read_text()) == [
        ["BRCA1 is a tumour suppressor.", "It repairs DNA."],
        ["TP53 is mutated in cancer."],
        ["Ghrelin binds its receptor.", "It is found in the stomach."],
        ["First sentence .", "Second one ."],
        ["IL - 2", "Next"],
        ["Other"],
    ]
    assert stats.total("documents") == 6 and stats.total("sentences") == 10
    assert stats.to_dict()["sources"][str(conll)]["words"] == 5


@pytest.mark.parametrize(
    "name,content,error,match",
    [
        ("bad.jsonl", '{"sentences": ["ok"]}\n{not json}\n', CorpusFormatError, r"bad.jsonl:2"),
        ("x.csv", "title,term\nA,b\n", CorpusFormatError, r"x.csv:1: .*abstract"),
        ("missing.txt", None, PretrainingDataError, "missing.txt"),
        ("x.pdf", "x", PretrainingDataError, r"x.pdf.*\.pdf"),
    ],
)
def test_bad_sources_raise_errors_naming_the_file_and_line(tmp_path, name, content, error, match):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(error, match=match):
        list(read_documents(path))


def test_a_source_without_text_is_an_error_naming_it(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n")
    with pytest.raises(PretrainingDataError, match="empty.txt"):
        collect_text([empty], tmp_path / "out.txt")
