"""The Hallmarks of Cancer converter: the corpus's label strings, the PMID split, the Docs."""

import json

import pytest
from spacy.vocab import Vocab
from spacy.tokens import DocBin

from spacy_biolm.corpora.hoc import (
    HALLMARKS,
    SPANS_KEY,
    convert_hoc,
    make_split,
    parse_label_string,
    read_hoc,
    read_split,
    write_split,
)
from spacy_biolm.errors import CorpusFormatError

# Label strings as they are in the mirror's hoc.jsonl (PMIDs 11724768 and others): empty first
# part, "AND" with and without a space after it, trailing "--", padding, "NULL", blank parts.
REAL_STRINGS = [
    ("< < < <Sustaining proliferative signaling--Receptors ANDSustaining proliferative signaling--Growth factors "
     "growth promoting signals--Downstream signaling< < ", 6,
     [[], [], [], ["Sustaining proliferative signaling--Receptors",
                   "Sustaining proliferative signaling--Growth factors growth promoting signals--Downstream signaling"], [], []]),
    ("< <Enabling replicative immortality--Senescence< < < NULL< <Enabling replicative immortality--Immortalization", 7,
     [[], ["Enabling replicative immortality--Senescence"], [], [], [], [], ["Enabling replicative immortality--Immortalization"]]),
    ("< < <Resisting cell death--Apoptosis< NULL<Resisting cell death--Necrosis ANDResisting cell death--Apoptosis< ", 6,
     [[], [], ["Resisting cell death--Apoptosis"], [], ["Resisting cell death--Necrosis", "Resisting cell death--Apoptosis"], []]),
    ("<  Activating invasion and metastasis--Metastasis<Cellular energetics-- AND Genomic instability and mutation--DNA damage--", 2,
     [["Activating invasion and metastasis--Metastasis"], ["Cellular energetics", "Genomic instability and mutation--DNA damage"]]),
    ("<Tumor promoting inflammation--Inflammation--Oxidative stress AND Tumor promoting inflammation--Inflammation--Oxidative stress", 1,
     [["Tumor promoting inflammation--Inflammation--Oxidative stress"]]),
]


@pytest.mark.parametrize("raw,n,expected", REAL_STRINGS)
def test_the_corpus_label_strings_parse_into_class_paths_per_sentence(raw, n, expected):
    assert parse_label_string(raw, n) == expected


@pytest.mark.parametrize("raw,n,match", [
    ("< <Resisting cell death--Apoptosis", 3, "2 '<'-separated parts for 3 sentences"),
    ("Resisting cell death--Apoptosis", 1, "must start with '<'"),
    ("<Resisting death--Apoptosis", 1, "unknown hallmark 'Resisting death'"),
])
def test_label_strings_that_do_not_fit_are_errors_saying_why(raw, n, match):
    with pytest.raises(ValueError, match=match):
        parse_label_string(raw, n)


def _record(pmid, sentences, labels):
    return json.dumps({"pmid": pmid, "sentences": sentences, "labels": [labels]})


@pytest.fixture
def hoc_file(tmp_path):
    path = tmp_path / "hoc.jsonl"
    path.write_text("\n".join([
        _record("1", ["Ghrelin binds GHS-R .", "Cells ( HepG2 ) proliferate ."],
                "< <Sustaining proliferative signaling--Receptors ANDResisting cell death--Apoptosis"),
        _record("2", ["Nothing here ."], "< "),
        _record("3", ["Tumours invade .", "Angiogenesis follows .", "VEGF rises ."],
                "<Activating invasion and metastasis--Invasion<Inducing angiogenesis--< NULL"),
        _record("4", ["Telomerase is active ."], "<Enabling replicative immortality--Immortalization"),
    ]) + "\n")
    return path


def test_read_hoc_gives_sentences_classes_and_the_document_hallmarks(hoc_file):
    abstracts = list(read_hoc(hoc_file))
    assert [a.pmid for a in abstracts] == ["1", "2", "3", "4"]
    assert abstracts[0].hallmarks == ("Resisting cell death", "Sustaining proliferative signaling")
    assert abstracts[1].hallmarks == ()
    assert abstracts[2].sentence_classes == (("Activating invasion and metastasis--Invasion",), ("Inducing angiogenesis",), ())


@pytest.mark.parametrize("line,match", [
    ("{not json", r"hoc.jsonl:2: invalid JSON"),
    (_record("9", ["One .", "Two ."], "<Resisting cell death--Apoptosis"), r"hoc.jsonl:2: PMID 9: label string has 1"),
    (_record("1", ["One ."], "< "), r"hoc.jsonl:2: PMID 1 already on line 1"),
    (json.dumps({"pmid": "9", "sentences": ["One ."], "labels": "<"}), r"hoc.jsonl:2: PMID 9: 'labels' must be a list"),
])
def test_malformed_lines_are_errors_naming_file_and_line(tmp_path, line, match):
    path = tmp_path / "hoc.jsonl"
    path.write_text(_record("1", ["One ."], "< ") + "\n" + line + "\n")
    with pytest.raises(CorpusFormatError, match=match):
        list(read_hoc(path))


def test_the_split_is_seeded_disjoint_complete_and_70_10_20():
    pmids = [str(1000 + i) for i in range(200)]
    split = make_split(pmids, seed=3)
    assert split == make_split(list(reversed(pmids)), seed=3)
    assert split != make_split(pmids, seed=4)
    assert [len(split[s]) for s in ("train", "dev", "test")] == [140, 20, 40]
    assert sorted(split["train"] + split["dev"] + split["test"]) == sorted(pmids)
    with pytest.raises(ValueError, match="unique"):
        make_split(["1", "1"])


def test_split_file_round_trip_and_overlap_error(tmp_path):
    split = make_split([str(i) for i in range(10)], seed=0)
    path = tmp_path / "split.json"
    write_split(path, split, seed=0, source="hoc.jsonl")
    assert read_split(path) == split
    payload = json.loads(path.read_text())
    payload["dev"].append(payload["train"][0])
    path.write_text(json.dumps(payload))
    with pytest.raises(CorpusFormatError, match=f"PMID {payload['train'][0]} is in both train and dev"):
        read_split(path)


def test_convert_writes_docs_with_cats_sentence_spans_and_fine_classes(hoc_file, tmp_path):
    split_path = tmp_path / "split.json"
    write_split(split_path, {"train": ["1", "2"], "dev": ["3"], "test": ["4"]}, seed=0, source="x")
    report = convert_hoc(hoc_file, split_path, tmp_path / "out")
    assert {k: v["documents"] for k, v in report.items()} == {"train": 2, "dev": 1, "test": 1}
    assert report["train"]["without_hallmark"] == 1
    vocab = Vocab()
    first, second = DocBin().from_disk(tmp_path / "out" / "train.spacy").get_docs(vocab)
    assert first.text == "Ghrelin binds GHS-R . Cells ( HepG2 ) proliferate ."
    assert list(first.cats) == list(HALLMARKS)
    assert {k for k, v in first.cats.items() if v == 1.0} == {"Sustaining proliferative signaling", "Resisting cell death"}
    assert [s.text for s in first.sents] == ["Ghrelin binds GHS-R .", "Cells ( HepG2 ) proliferate ."]
    assert [(s.text, s.label_) for s in first.spans[SPANS_KEY]] == [
        ("Cells ( HepG2 ) proliferate .", "Sustaining proliferative signaling"),
        ("Cells ( HepG2 ) proliferate .", "Resisting cell death"),
    ]
    assert first.user_data["hoc_pmid"] == "1"
    # (msgpack gives lists back as tuples)
    assert [list(c) for c in first.user_data["hoc_sentence_classes"]] == [
        [], ["Sustaining proliferative signaling--Receptors", "Resisting cell death--Apoptosis"]]
    assert sum(second.cats.values()) == 0.0 and len(second.spans[SPANS_KEY]) == 0
    (dev,) = DocBin().from_disk(tmp_path / "out" / "dev.spacy").get_docs(vocab)
    assert [(s.text, s.label_) for s in dev.spans[SPANS_KEY]] == [
        ("Tumours invade .", "Activating invasion and metastasis"), ("Angiogenesis follows .", "Inducing angiogenesis")]


def test_convert_refuses_a_split_that_does_not_cover_the_corpus(hoc_file, tmp_path):
    split_path = tmp_path / "split.json"
    write_split(split_path, {"train": ["1", "2"], "dev": ["3"], "test": []}, seed=0, source="x")
    with pytest.raises(CorpusFormatError, match=r"hoc.jsonl:4: 1 PMIDs not in the split .*: 4"):
        convert_hoc(hoc_file, split_path, tmp_path / "out")
    write_split(split_path, {"train": ["1", "2"], "dev": ["3"], "test": ["4", "5"]}, seed=0, source="x")
    with pytest.raises(CorpusFormatError, match="1 PMIDs of the split not in .*: 5"):
        convert_hoc(hoc_file, split_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()
