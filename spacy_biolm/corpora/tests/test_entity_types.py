"""The release's entity types: each corpus's labels mapped by the one table, missing marked, test-set
overlaps dropped at conversion; on the mirror, every label of every file is in the table and the
leakage the data README names is what the conversion drops."""

import json
from pathlib import Path

import pytest
from spacy.tokens import DocBin
from spacy.vocab import Vocab

from spacy_biolm.corpora.conll import conll_ngram_index, convert_ner, read_conll_ner
from spacy_biolm.corpora.entity_types import ENTITY_TYPES, MISSING, OUTSIDE, RELEASE_TYPES, annotated_types, label_fates
from spacy_biolm.corpora.splits import NER_SPLITS, convert_ner_splits
from spacy_biolm.doc_data import annotated_entity_types
from spacy_biolm.errors import CorpusFormatError
from spacy_biolm.testing import SHARED_DATA

# BioNLP13CG's labels: a gene (GENE), a cancer (missing: a subset of DISEASE), a tissue (outside).
CG = (
    "TGF\tB-Gene_or_gene_product\n"
    "-\tI-Gene_or_gene_product\n"
    "beta\tI-Gene_or_gene_product\n"
    "in\tO\n"
    "chronic\tB-Cancer\n"
    "leukemia\tI-Cancer\n"
    "of\tO\n"
    "the\tO\n"
    "skin\tB-Tissue\n"
    "\n"
    "Mice\tB-Organism\n"
    "lack\tO\n"
    "T\tB-Cell\n"
    "cells\tI-Cell\n"
    "\n"
)

# A test sentence of 20 words (tokens without punctuation: the overlap counts \\w+ words, not tokens);
# training sentences share 13 or 12 consecutive words with it.
TEST_WORDS = "The interleukin 2 promoter is activated by NF kappa B in Jurkat T cells after PMA stimulation for two hours".split()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf8")
    return path


def sentence(words, tag="O") -> str:
    return "".join(f"{word}\t{tag}\n" for word in words) + "\n"


def docs(path: Path):
    return list(DocBin().from_disk(path).get_docs(Vocab()))


def test_every_label_has_a_known_fate_and_types_follow_the_table():
    fates = set(RELEASE_TYPES) | {MISSING, OUTSIDE}
    for corpus, table in ENTITY_TYPES.items():
        assert all(fate in fates for fate, _ in table.values()), corpus
        # A fate that is not a label's own name says why.
        unexplained = [label for label, (fate, reason) in table.items() if fate in (MISSING, OUTSIDE) and not reason]
        assert not unexplained, f"{corpus}: {unexplained} need a reason"
    assert annotated_types("BioNLP13CG") == ("GENE", "CHEMICAL", "SPECIES", "CELL")
    assert annotated_types("JNLPBA") == ("GENE", "CELL")
    assert annotated_types("CRAFT") == ("GENE",) and annotated_types("AnatEM") == ()
    with pytest.raises(ValueError, match="known: NCBI-disease"):
        label_fates("BC5CDR")


def test_the_table_maps_marks_missing_and_writes_outside(tmp_path):
    stats = convert_ner(write(tmp_path / "train.tsv", CG), tmp_path / "train.spacy", corpus="BioNLP13CG")
    first, second = docs(tmp_path / "train.spacy")
    assert [(e.text, e.label_) for e in first.ents] == [("TGF - beta", "GENE")]
    assert [t.ent_iob_ for t in first] == ["B", "I", "I", "O", "", "", "O", "O", "O"]  # Cancer missing, Tissue outside
    assert [(e.text, e.label_) for e in second.ents] == [("Mice", "SPECIES"), ("T cells", "CELL")]
    # The types the corpus annotates completely travel with every Doc in the DocBin.
    assert annotated_entity_types(first) == {"GENE", "CHEMICAL", "SPECIES", "CELL"} == annotated_entity_types(second)
    assert stats["labels"] == {"CELL": 1, "GENE": 1, "SPECIES": 1} and stats["missing_tokens"] == 2
    assert stats["file_labels"] == {"Cancer": 1, "Cell": 1, "Gene_or_gene_product": 1, "Organism": 1, "Tissue": 1}
    assert stats["annotated_types"] == ["GENE", "CHEMICAL", "SPECIES", "CELL"] and "dropped" not in stats


def test_a_corpus_annotating_no_type_completely_records_none(tmp_path):
    path = write(tmp_path / "anatem.tsv", "T\tB-Anatomy\ncells\tI-Anatomy\ndie\tO\n")
    convert_ner(path, tmp_path / "anatem.spacy", corpus="AnatEM")
    (doc,) = docs(tmp_path / "anatem.spacy")
    assert annotated_entity_types(doc) == frozenset() and [t.ent_iob_ for t in doc] == ["", "", "O"]


def test_an_unknown_label_fails_naming_file_and_line(tmp_path):
    path = write(tmp_path / "train.tsv", CG + "aspirin\tB-Drug\n")
    with pytest.raises(CorpusFormatError, match=r"train\.tsv:16: entity label 'Drug' is not in the BioNLP13CG table") as error:
        convert_ner(path, tmp_path / "out.spacy", corpus="BioNLP13CG")
    assert error.value.line == 16 and not (tmp_path / "out.spacy").exists()
    with pytest.raises(ValueError, match="give one of them"):
        convert_ner(path, tmp_path / "out.spacy", corpus="BioNLP13CG", relabel={"Cell": "CELL"})


def test_relabel_still_renames_and_keeps_other_labels(tmp_path):
    stats = convert_ner(write(tmp_path / "train.tsv", CG), tmp_path / "train.spacy", relabel={"Cell": "CELL"})
    assert stats["labels"]["CELL"] == 1 and stats["labels"]["Cancer"] == 1 and "corpus" not in stats
    assert all(annotated_entity_types(doc) is None for doc in docs(tmp_path / "train.spacy"))


def test_sentences_sharing_13_words_with_a_test_set_are_dropped_from_train_and_devel_only(tmp_path):
    folder = tmp_path / "corpus"
    write(folder / "test.tsv", sentence(TEST_WORDS) + sentence(["Unrelated", "words"]))
    shares_13 = ["Here", ","] + TEST_WORDS[3:16] + ["instead"]
    shares_12 = ["Here", ","] + TEST_WORDS[3:15] + ["instead"]
    # Line 1: -DOCSTART-, line 3: the overlapping first sentence of the document, line 20: the 12-word one.
    write(folder / "train.tsv", "-DOCSTART-\tO\n\n" + sentence(shares_13) + sentence(shares_12))
    write(folder / "devel.tsv", sentence(["Nothing", "shared"]) + sentence(shares_13))
    other_test = write(tmp_path / "other" / "test.tsv", sentence(["Another", "test", "set"]))
    report = convert_ner_splits(folder, tmp_path / "out", exclude_test=[folder / "test.tsv", other_test])
    train, devel, test = (report[split] for split in NER_SPLITS)
    assert (train["dropped"], train["dropped_lines"], train["sentences"]) == (1, [3], 1)
    assert train["dropped_by_test"] == {str(folder / "test.tsv"): 1}
    assert train["documents"] == 1  # the dropped sentence's document start moved to the kept one
    assert [doc.text.split()[2:14] for doc in docs(tmp_path / "out" / "train.spacy")] == [TEST_WORDS[3:15]]
    assert (devel["dropped"], devel["dropped_lines"], devel["sentences"]) == (1, [4], 1)
    # The test split is never filtered, not even against itself.
    assert test["sentences"] == 2 and "dropped" not in test


def test_convert_splits_cli_writes_statistics_and_the_report(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    folder = tmp_path / "BioNLP13CG"
    for split in NER_SPLITS:
        write(folder / f"{split}.tsv", CG + (sentence(TEST_WORDS) if split == "test" else sentence(["Here"] + TEST_WORDS)))
    stats = tmp_path / "out" / "stats.json"
    runner = CliRunner()
    result = runner.invoke(app, ["data", "convert-splits", str(folder), str(tmp_path / "out"), "--corpus", "BioNLP13CG",
                                 "--exclude-test", str(folder / "test.tsv"), "--split", "train", "--split", "test",
                                 "--stats", str(stats)])
    assert result.exit_code == 0, result.output
    written = json.loads(stats.read_text())
    assert sorted(written["splits"]) == ["test", "train"] and written["run"]["date"]
    assert written["splits"]["train"]["dropped"] == 1 and written["exclude_test"] == [str(folder / "test.tsv")]
    output, table = tmp_path / "results" / "conversion.json", tmp_path / "results" / "entity_types.md"
    result = runner.invoke(app, ["data", "entity-types-report", str(stats), "--output", str(output), "--table", str(table)])
    assert result.exit_code == 0, result.output
    report = json.loads(output.read_text())
    corpus = report["corpora"]["BioNLP13CG"]
    assert corpus["labels"]["Cancer"]["fate"] == MISSING and corpus["labels"]["Cancer"]["mentions"] == {"train": 1, "test": 1}
    assert corpus["splits"]["train"]["dropped"] == 1 and report["run"]["date"]
    markdown = table.read_text()
    assert "| BioNLP13CG | GENE, CHEMICAL, SPECIES, CELL | 2 (1) | - | 3 |" in markdown
    assert "| BioNLP13CG | Cancer | missing | 1 / - / 1 |" in markdown and "<!-- run: commit" in markdown


# --- the mirror: ../shared/data/ner/<corpus>/mtl_iob ------------------------------------------------
MTL = SHARED_DATA / "ner"
needs_mirror = pytest.mark.skipif(not MTL.is_dir(), reason="needs the shared data mirror")


def _file_labels(path: Path) -> set:
    with path.open(encoding="utf8") as lines:
        return {line.split("\t", 1)[1].strip()[2:] for line in lines if "\tB-" in line}


@needs_mirror
@pytest.mark.parametrize("corpus", sorted(ENTITY_TYPES))
def test_every_label_of_the_mirror_files_is_in_the_table_and_no_other(corpus):
    files = sorted((MTL / corpus / "mtl_iob").glob("*.tsv"))
    assert files, f"no split files for {corpus}"
    labels = set().union(*map(_file_labels, files))
    assert labels == set(ENTITY_TYPES[corpus]), f"{corpus}: in the files only {labels - set(ENTITY_TYPES[corpus])}, " \
                                                f"in the table only {set(ENTITY_TYPES[corpus]) - labels}"


# The data README's "section 1" test sets (the corpora mirrored first); its counts are the overlaps
# of the later corpora with these.
README_TEST_SETS = ("NCBI-disease", "BC2GM", "LINNAEUS", "JNLPBA")


@pytest.fixture(scope="module")
def all_test_sets():
    return conll_ngram_index([MTL / corpus / "mtl_iob" / "test.tsv" for corpus in sorted(ENTITY_TYPES)])


@needs_mirror
def test_the_conversion_drops_the_leakage_the_data_readme_names(tmp_path, all_test_sets):
    # Against all 13 test sets: BioNLP09 train 39 and devel 2, BioNLP11EPI train 4, BioNLP13PC train 15.
    # The README's 36 / 2 / 1 / 1 are the overlaps with its section-1 test sets only: the difference is
    # BioNLP09's and BioNLP11EPI's own test sets (3 and 1), BioNLP11EPI's with AnatEM and Ex-PTM test
    # (1 each) and BioNLP13PC's with BioNLP11EPI test (14).
    readme_tests = {str(MTL / corpus / "mtl_iob" / "test.tsv") for corpus in README_TEST_SETS}
    expected = {("BioNLP09", "train"): (39, 36), ("BioNLP09", "devel"): (2, 2), ("BioNLP11EPI", "train"): (4, 1),
                ("BioNLP11EPI", "devel"): (0, 0), ("BioNLP13PC", "train"): (15, 1), ("BioNLP13PC", "devel"): (0, 0)}
    measured = {}
    for corpus, split in expected:
        overlaps = []

        def exclude(text):
            overlaps.append(all_test_sets(text))
            return overlaps[-1]

        # 100 sentences a Doc: the same sentences dropped, fewer Docs to write.
        stats = convert_ner(MTL / corpus / "mtl_iob" / f"{split}.tsv", tmp_path / f"{corpus}_{split}.spacy", corpus=corpus,
                            exclude=exclude, n_sents=100)
        measured[corpus, split] = (stats["dropped"], sum(bool(readme_tests & set(tests)) for tests in overlaps))
    assert measured == expected


@needs_mirror
def test_dropped_sentences_of_bionlp13pc_name_their_test_sets_and_lines(all_test_sets):
    path = MTL / "BioNLP13PC" / "mtl_iob" / "train.tsv"
    dropped = [(s.first_line, all_test_sets(" ".join(s.words))) for s in read_conll_ner(path)]
    dropped = [(line, [Path(t).parent.parent.name for t in tests]) for line, tests in dropped if tests]
    assert len(dropped) == 15 and dropped[0] == (1806, ["BC2GM"])
    assert all(tests == ["BioNLP11EPI"] for _, tests in dropped[1:])
