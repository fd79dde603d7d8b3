"""Whole corpus folders: the train/dev/test files of one corpus converted in one call."""

import json

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_biolm.corpora.splits import convert_ner_splits, convert_relation_splits, parse_label_map

# GAD as BioBERT ships it: train without a header, test with one; no dev file.
GAD_TRAIN_ROW = "Variants of @GENE$ raise the risk of @DISEASE$ in this cohort.\t{label}\n"
GAD_TEST = "index\tsentence\tlabel\n0\tThe C1772T polymorphism in @GENE$ is not involved in @DISEASE$.\t1\n"
NER_SPLIT = "Germline\tO\nBRCA1\tB-Gene\nmutations\tO\n\nNo\tO\nentity\tO\n"


def _count(path):
    return len(list(DocBin().from_disk(path).get_docs(Vocab())))


def test_relation_folder_without_dev_holds_out_a_share_of_train(tmp_path):
    corpus = tmp_path / "GAD" / "1"
    corpus.mkdir(parents=True)
    (corpus / "train.tsv").write_text("".join(GAD_TRAIN_ROW.format(label=i % 2) for i in range(10)), encoding="utf8")
    (corpus / "test.tsv").write_text(GAD_TEST, encoding="utf8")
    (corpus / "notes.md").write_text("not a split", encoding="utf8")
    report = convert_relation_splits(corpus, tmp_path / "out", "biobert", dev_fraction=0.2)
    assert sorted(report) == [str(corpus / "test.tsv"), str(corpus / "train.tsv")]
    assert (_count(tmp_path / "out" / "train.spacy"), _count(tmp_path / "out" / "dev.spacy")) == (8, 2)
    assert _count(tmp_path / "out" / "test.spacy") == 1
    with pytest.raises(FileNotFoundError, match="no train/dev/test"):
        convert_relation_splits(tmp_path / "out", tmp_path / "again", "biobert")


def test_relations_cli_converts_a_folder_and_writes_its_statistics(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    corpus = tmp_path / "GAD"
    corpus.mkdir()
    (corpus / "train.tsv").write_text("".join(GAD_TRAIN_ROW.format(label=1) for _ in range(4)), encoding="utf8")
    (corpus / "test.tsv").write_text(GAD_TEST, encoding="utf8")
    stats = tmp_path / "stats.json"
    result = CliRunner().invoke(app, ["relations", "convert", str(corpus), str(tmp_path / "out"), "--format", "biobert",
                                      "--dev-fraction", "0.25", "--stats", str(stats)])
    assert result.exit_code == 0, result.output
    written = json.loads(stats.read_text())
    assert written[str(corpus / "train.tsv")]["written"] == {str(tmp_path / "out" / "train.spacy"): 3,
                                                             str(tmp_path / "out" / "dev.spacy"): 1}


def test_ner_splits_are_all_converted_or_none(tmp_path):
    splits = tmp_path / "splits"
    splits.mkdir()
    for split in ("train", "test"):
        (splits / f"{split}.tsv").write_text(NER_SPLIT, encoding="utf8")
    with pytest.raises(FileNotFoundError, match="devel.tsv"):
        convert_ner_splits(splits, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written before every split was found
    (splits / "devel.tsv").write_text(NER_SPLIT, encoding="utf8")
    report = convert_ner_splits(splits, tmp_path / "out", relabel={"Gene": "GENE"})
    assert list(report) == ["train", "devel", "test"]
    assert report["test"]["labels"] == {"GENE": 1} and report["test"]["docs"] == 2
    first = convert_ner_splits(splits, tmp_path / "first", relabel={"Gene": "GENE"}, limit=1)
    assert {split: stats["docs"] for split, stats in first.items()} == {"train": 1, "devel": 1, "test": 1}
    assert len(DocBin().from_disk(tmp_path / "first" / "test.spacy")) == 1


def test_label_map_parses_old_new_and_names_a_bad_item():
    assert parse_label_map(["Disease=DISEASE", "protein=GENE"]) == {"Disease": "DISEASE", "protein": "GENE"}
    with pytest.raises(ValueError, match="'Disease'"):
        parse_label_map(["Disease"])
    with pytest.raises(ValueError, match="'=GENE'"):
        parse_label_map(["=GENE"])
