"""Relation corpus converters and the RelationCorpus reader."""

import json
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

from spacy_biolm.corpora.relations import (
    RelationCorpus,
    convert_relations,
    read_biobert_re,
    read_chemprot_tsv,
    read_scibert_chemprot,
)
from spacy_biolm.errors import CorpusFormatError
from spacy_biolm.pipes.relation_extractor.data import anonymise

GAD_TRAIN = (
    "this study proposes that A/A genotype at position -607 in @GENE$ gene can be used for predicting @DISEASE$ development.\t1\n"
    "In our setting, @DISEASE$ among alcoholic individuals seems independent of mutations in the @GENE$ gene.\t0\n"
)
GAD_TEST = "index\tsentence\tlabel\n0\tThe C1772T polymorphism in @GENE$ is not involved in @DISEASE$.\t1\n"
CHEMPROT = (
    "sentence\tlabel\n"
    "BC6ENTC inhibits BC6ENTG but not BC6OTHER in rat liver.\tCPR:4\n"
    "BC6ENTC inhibits BC6OTHER but not BC6ENTG in rat liver.\tFalse\n"
    "The BC6ENTG-induced release of BC6ENTC was measured.\tCPR:9\n"
)


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})


def test_biobert_tsv_round_trips_through_anonymisation(tmp_path, nlp):
    for name, content in (("train.tsv", GAD_TRAIN), ("test.tsv", GAD_TEST)):
        path = tmp_path / name
        path.write_text(content, encoding="utf8")
        docs = list(read_biobert_re(path, nlp))
        sentences = [line.split("\t")[-2] for line in content.splitlines() if not line.startswith("index\t")]
        assert [d.text for d in docs] == sentences
        for doc, sentence in zip(docs, sentences):
            gene, disease = sorted(doc.ents, key=lambda e: e.label_ != "GENE")
            assert (gene.text, gene.label_, disease.text, disease.label_) == ("@GENE$", "GENE", "@DISEASE$", "DISEASE")
            assert anonymise(doc, gene, disease, {}) == sentence
    train = list(read_biobert_re(tmp_path / "train.tsv", nlp))
    assert [[(r.head.text, r.tail.text, r.label) for r in d._.relations] for d in train] == \
        [[("@GENE$", "@DISEASE$", "ASSOCIATION")], []]


def test_chemprot_tsv_entities_relations_and_grouping(tmp_path, nlp):
    path = tmp_path / "chemprot.tsv"
    path.write_text(CHEMPROT, encoding="utf8")
    docs = list(read_chemprot_tsv(path, nlp))
    placeholders = {"CHEMICAL": "BC6ENTC", "GENE": "BC6ENTG"}
    for doc, line in zip(docs, CHEMPROT.splitlines()[1:]):
        chem, gene = sorted(doc.ents, key=lambda e: e.label_ != "CHEMICAL")
        assert anonymise(doc, chem, gene, placeholders) == line.split("\t")[0]
    assert [[r.label for r in d._.relations] for d in docs] == [["CPR:4"], [], ["CPR:9"]]
    # The first two rows are one sentence: grouped, it is one Doc with both pairs' entities.
    grouped = list(read_chemprot_tsv(path, nlp, group=True))
    assert len(grouped) == 2
    first = grouped[0]
    assert first.text == "BC6ENTC inhibits BC6ENTG but not BC6ENTG in rat liver."
    assert [(e.text, e.label_, e.start) for e in first.ents] == [("BC6ENTC", "CHEMICAL", 0), ("BC6ENTG", "GENE", 2), ("BC6ENTG", "GENE", 5)]
    assert [(r.head.start, r.tail.start, r.label) for r in first._.relations] == [(0, 2, "CPR:4")]
    ext = anonymise(first, first.ents[0], first.ents[2], placeholders, "BC6OTHER")
    assert ext == CHEMPROT.splitlines()[2].split("\t")[0]


def test_scibert_jsonl_markers_become_entities(tmp_path, nlp):
    path = tmp_path / "chemprot.txt"
    record = {"text": "<< Alprenolol >> and BAAM are antagonists at the [[ beta 1-adrenoceptors ]] of rat atria.", "label": "ANTAGONIST", "metadata": []}
    path.write_text(json.dumps(record) + "\n", encoding="utf8")
    (doc,) = list(read_scibert_chemprot(path, nlp))
    assert doc.text == "Alprenolol and BAAM are antagonists at the beta 1-adrenoceptors of rat atria."
    (rel,) = doc._.relations
    assert (rel.head.text, rel.tail.text, rel.label) == ("Alprenolol", "beta 1-adrenoceptors", "ANTAGONIST")
    assert anonymise(doc, rel.head, rel.tail, {}, style="mark") == record["text"]


@pytest.mark.parametrize("content,fmt,message", [
    ("A sentence with only @GENE$ in it.\t1\n", "biobert", r"bad\.tsv:1: expected each of .*@DISEASE\$ x0"),
    ("@GENE$ and @GENE$ with @DISEASE$.\t1\n", "biobert", r"bad\.tsv:1: .*@GENE\$ x2"),
    ("@GENE$ causes @DISEASE$.\tyes\n", "biobert", r"bad\.tsv:1: label 'yes' is not one of \['0', '1'\]"),
    ("sentence\tlabel\nBC6ENTC binds BC6ENTG.\tCPR:10\n", "chemprot", r"bad\.tsv:2: label 'CPR:10'"),
    ("sentence\tlabel\nCHEM binds BC6ENTG.\tFalse\n", "chemprot", r"bad\.tsv:2: expected each of .*BC6ENTC x0"),
])
def test_bad_rows_name_file_and_line(tmp_path, content, fmt, message):
    path = tmp_path / "bad.tsv"
    path.write_text(content, encoding="utf8")
    with pytest.raises(CorpusFormatError, match=message):
        convert_relations(path, tmp_path / "out.spacy", fmt)


def test_skip_invalid_reports_rows_and_the_reader_gives_gold_entities(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text(GAD_TRAIN + "No placeholders here.\t1\n" + GAD_TRAIN, encoding="utf8")
    stats = convert_relations(path, tmp_path / "train.spacy", "biobert", skip_invalid=True,
                              dev_output=tmp_path / "dev.spacy", dev_fraction=0.25)
    assert stats["skipped"] == [{"line": 3, "reason": "expected each of ['@GENE$', '@DISEASE$'] exactly once, found @GENE$ x0, @DISEASE$ x0"}]
    assert stats["relations"] == {"ASSOCIATION": 2} and stats["negative_pairs"] == 2
    assert stats["written"] == {str(tmp_path / "train.spacy"): 3, str(tmp_path / "dev.spacy"): 1}
    nlp = spacy.blank("en")
    examples = list(RelationCorpus(tmp_path / "train.spacy")(nlp)) + list(RelationCorpus(tmp_path / "dev.spacy")(nlp))
    assert len(examples) == 4
    for eg in examples:
        assert [(e.text, e.label_) for e in eg.predicted.ents] == [(e.text, e.label_) for e in eg.reference.ents]
        assert eg.predicted._.relations == []  # gold relations stay on the reference only
    assert sum(len(eg.reference._.relations) for eg in examples) == 2
    without = next(iter(RelationCorpus(tmp_path / "train.spacy", gold_entities=False)(nlp)))
    assert without.predicted.ents == ()
    assert len(list(RelationCorpus(tmp_path / "train.spacy", limit=2)(nlp))) == 2
    with pytest.raises(FileNotFoundError, match="relation corpus not found"):
        RelationCorpus(tmp_path / "missing.spacy")


CHEMPROT_MASKED = (
    "sentence\tlabel\n"
    "BC6ENTC inhibits BC6ENTG but not BC6OTHER in rat liver .\tCPR:4\n"
    "BC6ENTC inhibits BC6OTHER but not BC6ENTG in rat liver .\tFalse\n"
    "It is converted to BC6ENTC by BC6ENTG ( BC6OTHER ) .\tCPR:9\n"
    "It is converted to BC6ENTC by BC6OTHER - BC6OTHER aminotransferase ( BC6ENTG ) .\tCPR:9\n"
    "It is converted to BC6OTHER by BC6ENTC - BC6OTHER aminotransferase ( BC6ENTG ) .\tCPR:4\n"
    "BC6ENTC binds BC6ENTG weakly .\tFalse\n"
    "BC6ENTC activates BC6ENTG .\tCPR:3\n"
)
SCIBERT_WRITTEN = [
    "<< Aspirin >> inhibits [[ COX-2 ]] but not COX-1 in rat liver.",
    "It is converted to << glycine >> by [[ alanine-glyoxylate aminotransferase ]] (AGAT).",
    "It is converted to << glycine >> by alanine-glyoxylate aminotransferase ([[ AGAT ]]).",
]


def test_chemprot_sentences_get_their_words_back_from_scibert(tmp_path, nlp):
    from spacy_biolm.corpora.relations import ConversionStats

    tsv, scibert = tmp_path / "test.tsv", tmp_path / "test.txt"
    tsv.write_text(CHEMPROT_MASKED, encoding="utf8")
    scibert.write_text("".join(json.dumps({"text": t, "label": "X", "metadata": []}) + "\n" for t in SCIBERT_WRITTEN), encoding="utf8")
    stats = ConversionStats()
    docs = list(read_chemprot_tsv(tsv, nlp, text_from=scibert, stats=stats))
    assert [d.text for d in docs] == ["Aspirin inhibits COX-2 but not COX-1 in rat liver.",
                                      "It is converted to glycine by alanine-glyoxylate aminotransferase (AGAT)."]
    assert [(e.text, e.label_) for e in docs[0].ents] == [("Aspirin", "CHEMICAL"), ("COX-2", "GENE"), ("COX-1", "GENE")]
    assert [(r.head.text, r.tail.text, r.label) for r in docs[0]._.relations] == [("Aspirin", "COX-2", "CPR:4")]
    # Three templates of one sentence merge; "alanine" nests in the gene, so doc.ents keeps the gene and
    # its relation is reported by line, not dropped silently.
    assert [(e.text, e.label_) for e in docs[1].ents] == [
        ("glycine", "CHEMICAL"), ("alanine-glyoxylate aminotransferase", "GENE"), ("AGAT", "GENE")]
    assert sorted((r.head.text, r.tail.text, r.label) for r in docs[1]._.relations) == [
        ("glycine", "AGAT", "CPR:9"), ("glycine", "alanine-glyoxylate aminotransferase", "CPR:9")]
    report = stats.to_dict()
    # The negative-only sentence is not in SciBERT's file (positives only), nor the one with CPR:3.
    assert report["sentences_without_text"] == 2
    assert report["skipped"] == [{"line": 6, "reason": "a relation on a mention nested in another (doc.ents cannot hold both)"}]
    assert report["relations"] == {"CPR:4": 1, "CPR:9": 2}


def test_a_chemprot_folder_gets_each_splits_words_from_sciberts_folder(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    masked, written = tmp_path / "bio_electra", tmp_path / "scibert"
    masked.mkdir(), written.mkdir()
    for split in ("train", "dev", "test"):
        (masked / f"{split}.tsv").write_text(CHEMPROT_MASKED, encoding="utf8")
        (written / f"{split}.txt").write_text("".join(json.dumps({"text": t, "label": "X", "metadata": []}) + "\n"
                                                     for t in SCIBERT_WRITTEN[: 1 if split == "dev" else 3]), encoding="utf8")
    command = ["relations", "convert", str(masked), str(tmp_path / "out"), "--format", "chemprot", "--skip-invalid",
               "--text-from", str(written), "--stats", str(tmp_path / "stats.json")]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 0, result.output
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert {Path(source).name: report["docs"] for source, report in stats.items()} == {"train.tsv": 2, "dev.tsv": 1, "test.tsv": 2}
    assert [d.text for d in DocBin().from_disk(tmp_path / "out" / "dev.spacy").get_docs(spacy.blank("en").vocab)] == [
        "Aspirin inhibits COX-2 but not COX-1 in rat liver."]
    (written / "dev.txt").unlink()
    missing = CliRunner().invoke(app, command)
    assert missing.exit_code != 0 and "dev.txt missing" in " ".join(missing.output.split())
    mixed = CliRunner().invoke(app, command[:-3] + [str(written / "train.txt")])
    assert mixed.exit_code != 0 and "or a folder" in " ".join(mixed.output.split())


def test_written_sentence_is_found_only_when_unambiguous():
    from spacy_biolm.corpora.chemprot_text import MASK, SciBertTexts

    texts = SciBertTexts(["Aspirin inhibits COX-2.", "Ibuprofen inhibits COX-2.", "Aspirin blocks COX-1 (PTGS1)."])
    assert SciBertTexts(["Aspirin blocks COX-1 (PTGS1)."]).find(f"{MASK} blocks {MASK} ( {MASK} ) .") == (
        "Aspirin blocks COX-1 (PTGS1).", [(0, 7), (15, 20), (22, 27)])
    assert texts.find(f"{MASK} inhibits {MASK} .") is None  # two sentences fit: neither is guessed
    assert texts.find(f"{MASK} activates {MASK} .") is None
