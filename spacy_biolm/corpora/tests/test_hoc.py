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
from spacy_biolm.testing import REPO, SHARED_DATA

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
    ("{not json", r"hoc.jsonl:2: not a JSON object"),
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
    first = convert_hoc(hoc_file, split_path, tmp_path / "first", limit=1)  # a smoke run's first abstract of each split
    assert {k: v["documents"] for k, v in first.items()} == {"train": 1, "dev": 1, "test": 1}
    assert [doc.user_data["hoc_pmid"] for doc in DocBin().from_disk(tmp_path / "first" / "train.spacy").get_docs(Vocab())] == ["1"]
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


# The raw tree: the corpus's upstream form (sb895/Hallmarks-of-Cancer), which the project fetches.

def _write_raw_tree(root, records):
    """``records``: (pmid, sentences, label string) -> text/<PMID>.txt and labels/<PMID>.txt, laid
    out as upstream (every sentence line ends in a newline; the label file has none)."""
    (root / "text").mkdir(parents=True)
    (root / "labels").mkdir()
    for pmid, sentences, labels in records:
        (root / "text" / f"{pmid}.txt").write_text("".join(s + "\n" for s in sentences), encoding="utf8")
        (root / "labels" / f"{pmid}.txt").write_text(labels, encoding="utf8")
    return root


HOC_RECORDS = [
    ("1", ["Ghrelin binds GHS-R .", "Cells ( HepG2 ) proliferate ."],
     "< <Sustaining proliferative signaling--Receptors ANDResisting cell death--Apoptosis"),
    ("2", ["Nothing here ."], "< "),
    ("3", ["Tumours invade .", "Angiogenesis follows .", "VEGF rises ."],
     "<Activating invasion and metastasis--Invasion<Inducing angiogenesis--< NULL"),
    ("4", ["Telomerase is active ."], "<Enabling replicative immortality--Immortalization"),
]


def test_the_raw_tree_reads_as_the_same_abstracts_as_its_json_lines(hoc_file, tmp_path):
    root = _write_raw_tree(tmp_path / "hoc_raw", HOC_RECORDS)
    raw, jsonl = list(read_hoc(root)), list(read_hoc(hoc_file))
    assert [(a.pmid, a.sentences, a.sentence_classes) for a in raw] == [(a.pmid, a.sentences, a.sentence_classes) for a in jsonl]
    assert raw[0].line is None and raw[0].path == str(root / "text" / "1.txt")


@pytest.mark.parametrize("damage,match", [
    (lambda r: (r / "labels" / "2.txt").unlink(), r"text/2.txt: PMID 2 has no labels/2.txt"),
    (lambda r: (r / "text" / "3.txt").write_text("One .\n\nTwo .\n"), r"text/3.txt:2: PMID 3: blank sentence"),
    (lambda r: (r / "labels" / "4.txt").write_text("< < "), r"labels/4.txt:1: PMID 4: label string has 2"),
    (lambda r: (r / "text" / "1.txt").write_bytes(b"caf\xe9 .\n"), r"text/1.txt: not UTF-8"),
    (lambda r: (r / "text" / "1.txt").rename(r / "text" / "1.txt.bak"), r"labels/1.txt: PMID 1 has no text/1.txt"),
])
def test_a_damaged_raw_tree_is_an_error_naming_the_file(tmp_path, damage, match):
    root = _write_raw_tree(tmp_path / "hoc_raw", HOC_RECORDS)
    damage(root)
    with pytest.raises(CorpusFormatError, match=match):
        list(read_hoc(root))
    with pytest.raises(CorpusFormatError, match="no such folder"):
        list(read_hoc(tmp_path))


def _docs(output_dir):
    vocab = Vocab()
    return {name: list(DocBin().from_disk(output_dir / f"{name}.spacy").get_docs(vocab)) for name in ("train", "dev", "test")}


def _doc_record(doc):
    return (doc.user_data["hoc_pmid"], doc.text, [t.is_sent_start for t in doc], doc.cats,
            [(s.start, s.end, s.label_) for s in doc.spans[SPANS_KEY]],
            [list(c) for c in doc.user_data["hoc_sentence_classes"]])


def test_convert_from_the_raw_tree_writes_the_docs_the_json_lines_give(hoc_file, tmp_path):
    root = _write_raw_tree(tmp_path / "hoc_raw", HOC_RECORDS)
    split_path = tmp_path / "split.json"
    write_split(split_path, {"train": ["1", "2"], "dev": ["3"], "test": ["4"]}, seed=0, source="x")
    assert convert_hoc(root, split_path, tmp_path / "raw") == {
        name: {**stats, "output": str(tmp_path / "raw" / f"{name}.spacy")}
        for name, stats in convert_hoc(hoc_file, split_path, tmp_path / "jsonl").items()}
    raw, jsonl = _docs(tmp_path / "raw"), _docs(tmp_path / "jsonl")
    assert {k: [_doc_record(d) for d in v] for k, v in raw.items()} == {k: [_doc_record(d) for d in v] for k, v in jsonl.items()}


HOC_RAW = SHARED_DATA / "hoc_raw"
HOC_JSONL = SHARED_DATA / "pretraining" / "hoc_abstracts" / "hoc.jsonl"


@pytest.mark.skipif(not (HOC_RAW.is_dir() and HOC_JSONL.is_file()), reason="needs the corpus mirror in ../shared/data")
def test_the_mirrored_raw_tree_gives_the_docs_of_the_mirrored_json_lines(tmp_path):
    """The project converts the upstream tree; the mirror's hoc.jsonl was built from it. Every PMID
    has the same sentences and labels, so every split has the same Docs (text, sentence starts,
    cats, spans, fine classes)."""
    raw = list(read_hoc(HOC_RAW))
    jsonl = list(read_hoc(HOC_JSONL))
    assert len(raw) == len(jsonl) == 1852
    assert [(a.pmid, a.sentences, a.sentence_classes) for a in raw] == [(a.pmid, a.sentences, a.sentence_classes) for a in jsonl]
    split = REPO / "configs" / "splits" / "hoc_split.json"
    convert_hoc(HOC_RAW, split, tmp_path / "raw")
    convert_hoc(HOC_JSONL, split, tmp_path / "jsonl")
    from_raw, from_jsonl = _docs(tmp_path / "raw"), _docs(tmp_path / "jsonl")
    assert [len(from_raw[s]) for s in ("train", "dev", "test")] == [len(from_jsonl[s]) for s in ("train", "dev", "test")]
    assert sum(map(len, from_raw.values())) == 1852
    for name in from_raw:
        assert [_doc_record(d) for d in from_raw[name]] == [_doc_record(d) for d in from_jsonl[name]]
