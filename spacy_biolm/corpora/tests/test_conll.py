"""Tests of CoNLL/BIO NER reading, DocBin conversion and the registered spaCy reader."""

import json
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from spacy_biolm.corpora.conll import ConllSentence, conll_to_docs, convert_ner, read_conll_ner
from spacy_biolm.corpora.readers import create_conll_ner_reader
from spacy_biolm.errors import CorpusFormatError
from spacy_biolm.testing import SHARED_DATA

TYPED = (
    "Germline\tO\n"
    "BRCA1\tB-Gene\n"
    "mutations\tO\n"
    "cause\tO\n"
    "breast\tB-Disease\n"
    "cancer\tI-Disease\n"
    "\n"
    "Aspirin\tB-Chemical\n"
    "helps\tO\n"
    "\n"
)

UNTYPED = (
    "Familial\tB\n"
    "adenomatous\tI\n"
    "polyposis\tI\n"
    "is\tO\n"
    "rare\tO\n"
    "\n"
    "ataxia\tB\n"
    "and\tO\n"
    "ALD\tB\n"
)

# Two documents: 3 sentences, then 2; the blank-line/-DOCSTART- layout follows JNLPBA's MTL files.
WITH_DOCSTART = (
    "-DOCSTART-\tO\n"
    "\n"
    "a1\tB-protein\n"
    "a2\tO\n"
    "\n"
    "b1\tO\n"
    "\n"
    "c1\tB-DNA\n"
    "c2\tI-DNA\n"
    "\n"
    "-DOCSTART-\tO\n"
    "\n"
    "d1\tO\n"
    "\n"
    "e1\tB-RNA\n"
    "\n"
)


def write(tmp_path: Path, text: str, name: str = "corpus.tsv") -> Path:
    """Write ``text`` verbatim (no newline translation) and return its path."""
    path = tmp_path / name
    path.write_bytes(text.encode("utf8"))
    return path


def ents_of(doc: Doc) -> List[Tuple[str, str, int, int]]:
    """Entities as (text, label, start token, end token) for exact comparison."""
    return [(ent.text, ent.label_, ent.start, ent.end) for ent in doc.ents]


# --- read_conll_ner -----------------------------------------------------------------------------


def test_typed_file_is_parsed_into_sentences(tmp_path):
    sentences = list(read_conll_ner(write(tmp_path, TYPED)))
    assert sentences == [
        ConllSentence(
            words=("Germline", "BRCA1", "mutations", "cause", "breast", "cancer"),
            tags=("O", "B-Gene", "O", "O", "B-Disease", "I-Disease"),
            first_line=1,
            doc_start=True,
        ),
        ConllSentence(words=("Aspirin", "helps"), tags=("B-Chemical", "O"), first_line=8, doc_start=False),
    ]


@pytest.mark.parametrize("label,expected", [("Disease", "Disease"), (None, "ENTITY")])
def test_untyped_tags_get_the_given_label(tmp_path, label, expected):
    kwargs = {"label": label} if label else {}
    sentences = list(read_conll_ner(write(tmp_path, UNTYPED), **kwargs))
    assert [s.tags for s in sentences] == [
        (f"B-{expected}", f"I-{expected}", f"I-{expected}", "O", "O"),
        (f"B-{expected}", "O", f"B-{expected}"),
    ]
    # The last sentence has no trailing blank line and must still be emitted.
    assert sentences[-1].words == ("ataxia", "and", "ALD")
    assert sentences[-1].first_line == 7


@pytest.mark.parametrize("scheme", ["typed", "mtl_iob"])
def test_explicit_typed_scheme_reads_typed_file(tmp_path, scheme):
    assert len(list(read_conll_ner(write(tmp_path, TYPED), scheme=scheme))) == 2


@pytest.mark.parametrize("scheme", ["untyped", "biobert"])
def test_explicit_untyped_scheme_reads_untyped_file(tmp_path, scheme):
    sentences = list(read_conll_ner(write(tmp_path, UNTYPED), scheme=scheme, label="Disease"))
    assert sentences[0].tags[0] == "B-Disease"


def test_crlf_and_bom_are_tolerated(tmp_path):
    text = "\ufeff" + TYPED.replace("\n", "\r\n")
    sentences = list(read_conll_ner(write(tmp_path, text)))
    assert sentences[0].words[0] == "Germline"
    assert sentences[0].tags[-1] == "I-Disease"
    assert [s.first_line for s in sentences] == [1, 8]


def test_docstart_lines_mark_documents_and_are_not_tokens(tmp_path):
    sentences = list(read_conll_ner(write(tmp_path, WITH_DOCSTART)))
    assert [s.words for s in sentences] == [("a1", "a2"), ("b1",), ("c1", "c2"), ("d1",), ("e1",)]
    assert [s.doc_start for s in sentences] == [True, False, False, True, False]
    assert [s.first_line for s in sentences] == [3, 6, 8, 13, 15]


def test_docstart_without_blank_line_still_ends_the_sentence(tmp_path):
    path = write(tmp_path, "a\tO\n-DOCSTART-\tO\nb\tO\n")
    sentences = list(read_conll_ner(path))
    assert [(s.words, s.doc_start) for s in sentences] == [(("a",), True), (("b",), True)]


def test_reading_is_lazy_and_stops_at_the_bad_line(tmp_path):
    # Streaming: sentences before a malformed line are delivered before the error is raised.
    path = write(tmp_path, "ok\tO\n\nbad line\n")
    sentences = read_conll_ner(path)
    assert next(sentences).words == ("ok",)
    with pytest.raises(CorpusFormatError):
        next(sentences)


ERROR_CASES = {
    "three columns": ("a\tO\nb\tO\tX\n", 2, "expected 2 TAB-separated columns"),
    "one column": ("a\tO\n\nb O\n", 3, "expected 2 TAB-separated columns"),
    "space-only line": ("a\tO\n   \nb\tO\n", 2, "expected 2 TAB-separated columns"),
    "empty token": ("a\tO\n\tO\n", 2, "empty token"),
    "blank token": ("a\tO\n \tO\n", 2, "empty token"),
    "token with space": ("a\tO\nb c\tO\n", 2, "whitespace"),
    "unknown tag": ("a\tO\nb\tX\n", 2, "unknown tag 'X'"),
    "lowercase tag": ("a\tb-Disease\n", 1, "unknown tag"),
    "BIOES tag": ("a\tO\nb\tS-Disease\n", 2, "unknown tag"),
    "empty type": ("a\tB-\n", 1, "unknown tag"),
    "empty tag": ("a\t\n", 1, "unknown tag"),
    "typed after untyped": ("a\tB\n\nb\tO\nc\tB-Disease\n", 4, "unknown tag 'B-Disease'"),
    "untyped after typed": ("a\tB-Disease\nb\tI-Disease\n\nc\tI\n", 4, "unknown tag 'I'"),
    "I after O": ("a\tO\nb\tI-Disease\n", 2, "does not continue"),
    "I at sentence start": ("a\tB-Disease\n\nb\tI-Disease\n", 3, "at sentence start"),
    "I of other type": ("a\tO\nb\tB-Disease\nc\tI-Chemical\n", 3, "after 'B-Disease'"),
    "untyped I after O": ("a\tB\nb\tO\nc\tI\n", 3, "does not continue"),
    "I after DOCSTART": ("a\tB-Disease\n-DOCSTART-\tO\nb\tI-Disease\n", 3, "at sentence start"),
}


@pytest.mark.parametrize("text,line,fragment", list(ERROR_CASES.values()), ids=list(ERROR_CASES))
def test_malformed_lines_raise_with_file_and_line(tmp_path, text, line, fragment):
    path = write(tmp_path, text, name="broken_file.tsv")
    with pytest.raises(CorpusFormatError) as excinfo:
        list(read_conll_ner(path))
    message = str(excinfo.value)
    assert message.startswith(f"{path}:{line}:")
    assert "broken_file.tsv" in message
    assert excinfo.value.line == line
    assert fragment in message


@pytest.mark.parametrize(
    "scheme,text,fragment",
    [
        ("untyped", TYPED, "typed tag in a file read as untyped"),
        ("typed", UNTYPED, "untyped tag in a file read as typed"),
    ],
)
def test_explicit_scheme_rejects_the_other_kind(tmp_path, scheme, text, fragment):
    with pytest.raises(CorpusFormatError) as excinfo:
        list(read_conll_ner(write(tmp_path, text), scheme=scheme))
    assert excinfo.value.line == (2 if scheme == "untyped" else 1)
    assert fragment in str(excinfo.value)


@pytest.mark.parametrize("kwargs", [{"scheme": "bioes"}, {"label": ""}, {"label": " X"}])
def test_bad_options_raise_value_error(tmp_path, kwargs):
    with pytest.raises(ValueError):
        list(read_conll_ner(write(tmp_path, TYPED), **kwargs))


# --- conll_to_docs ------------------------------------------------------------------------------


def test_docs_have_exact_entity_spans(tmp_path):
    text = "a\tB-X\nb\tB-X\nc\tI-X\nd\tB-Y\ne\tO\nf\tB-Z\ng\tI-Z\n"
    (doc,) = conll_to_docs(write(tmp_path, text), Vocab())
    assert doc.text == "a b c d e f g"
    # Adjacent B-X B-X are two entities; B-Y right after I-X starts a new one; one ends the doc.
    assert ents_of(doc) == [("a", "X", 0, 1), ("b c", "X", 1, 3), ("d", "Y", 3, 4), ("f g", "Z", 5, 7)]
    # O tokens are explicit non-entities (complete annotation), not missing values.
    assert [t.ent_iob_ for t in doc] == ["B", "B", "I", "B", "O", "B", "I"]


def test_one_doc_per_sentence_by_default(tmp_path):
    docs = list(conll_to_docs(write(tmp_path, TYPED), Vocab()))
    assert [d.text for d in docs] == ["Germline BRCA1 mutations cause breast cancer", "Aspirin helps"]
    assert ents_of(docs[0]) == [("BRCA1", "Gene", 1, 2), ("breast cancer", "Disease", 4, 6)]
    assert ents_of(docs[1]) == [("Aspirin", "Chemical", 0, 1)]
    assert not docs[0].has_annotation("SENT_START")


def test_untyped_docs_use_label(tmp_path):
    docs = list(conll_to_docs(write(tmp_path, UNTYPED), Vocab(), label="Disease"))
    assert ents_of(docs[0]) == [("Familial adenomatous polyposis", "Disease", 0, 3)]
    assert ents_of(docs[1]) == [("ataxia", "Disease", 0, 1), ("ALD", "Disease", 2, 3)]


def test_n_sents_groups_within_documents_only(tmp_path):
    docs = list(conll_to_docs(write(tmp_path, WITH_DOCSTART), Vocab(), n_sents=2))
    # Document 1 = 3 sentences -> 2 + 1; document 2 = 2 sentences -> 2 (nothing joined across).
    assert [d.text for d in docs] == ["a1 a2 b1", "c1 c2", "d1 e1"]
    assert [[s.text for s in d.sents] for d in docs] == [["a1 a2", "b1"], ["c1 c2"], ["d1", "e1"]]
    assert [ents_of(d) for d in docs] == [
        [("a1", "protein", 0, 1)],
        [("c1 c2", "DNA", 0, 2)],
        [("e1", "RNA", 1, 2)],
    ]


def test_large_n_sents_gives_one_doc_per_document(tmp_path):
    docs = list(conll_to_docs(write(tmp_path, WITH_DOCSTART), Vocab(), n_sents=100))
    assert [len(list(d.sents)) for d in docs] == [3, 2]


@pytest.mark.parametrize("n_sents", [0, -1])
def test_bad_n_sents_raises(tmp_path, n_sents):
    with pytest.raises(ValueError):
        list(conll_to_docs(write(tmp_path, TYPED), Vocab(), n_sents=n_sents))


# --- convert_ner --------------------------------------------------------------------------------


def test_convert_ner_round_trips_through_docbin(tmp_path):
    source = write(tmp_path, WITH_DOCSTART)
    output = tmp_path / "out" / "corpus.spacy"
    stats = convert_ner(source, output, n_sents=2)
    assert {k: stats[k] for k in ("sentences", "docs", "tokens", "entities", "labels", "documents")} == {
        "sentences": 5,
        "docs": 3,
        "tokens": 7,
        "entities": 3,
        "labels": {"DNA": 1, "RNA": 1, "protein": 1},
        "documents": 2,
    }
    loaded = list(DocBin().from_disk(output).get_docs(Vocab()))
    expected = list(conll_to_docs(source, Vocab(), n_sents=2))
    assert [[t.text for t in d] for d in loaded] == [[t.text for t in d] for d in expected]
    assert [ents_of(d) for d in loaded] == [ents_of(d) for d in expected]
    assert [[s.text for s in d.sents] for d in loaded] == [["a1 a2", "b1"], ["c1 c2"], ["d1", "e1"]]


def test_convert_ner_untyped_counts_label(tmp_path):
    stats = convert_ner(write(tmp_path, UNTYPED), tmp_path / "u.spacy", label="Disease")
    assert (stats["sentences"], stats["docs"], stats["tokens"], stats["entities"]) == (2, 2, 8, 3)
    assert stats["labels"] == {"Disease": 3}


def test_convert_ner_relabels_entities_and_the_cli_converts_all_splits(tmp_path):
    stats = convert_ner(write(tmp_path, WITH_DOCSTART), tmp_path / "r.spacy", relabel={"protein": "GENE"})
    assert stats["labels"] == {"DNA": 1, "GENE": 1, "RNA": 1}
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    splits = tmp_path / "splits"
    splits.mkdir()
    for split in ("train", "devel", "test"):
        (splits / f"{split}.tsv").write_text(UNTYPED, encoding="utf8")
    result = CliRunner().invoke(app, ["data", "convert-splits", str(splits), str(tmp_path / "docbins"), "--label",
                                      "Disease", "--relabel", "Disease=DISEASE"])
    assert result.exit_code == 0, result.output
    docs = list(DocBin().from_disk(tmp_path / "docbins" / "test.spacy").get_docs(Vocab()))
    assert {e.label_ for d in docs for e in d.ents} == {"DISEASE"}
    (splits / "devel.tsv").unlink()
    missing = CliRunner().invoke(app, ["data", "convert-splits", str(splits), str(tmp_path / "docbins")])
    assert missing.exit_code != 0 and "devel.tsv" in missing.output


def test_convert_ner_writes_nothing_on_error(tmp_path):
    output = tmp_path / "bad.spacy"
    with pytest.raises(CorpusFormatError):
        convert_ner(write(tmp_path, "a\tO\n\nb\tI-X\n"), output)
    assert not output.exists()


# --- reader -------------------------------------------------------------------------------------


def test_reader_yields_examples_with_gold_tokens_and_ents(tmp_path):
    # "p53," would be split by spaCy's tokenizer; the predicted Doc must keep the gold tokens anyway.
    text = "Loss\tO\nof\tO\np53,\tB\nBRCA1\tB\n\nMDM2\tB\n"
    nlp = spacy.blank("en")
    reader = create_conll_ner_reader(write(tmp_path, text), label="Gene")
    examples = list(reader(nlp))
    assert len(examples) == 2
    first = examples[0]
    assert [t.text for t in first.predicted] == ["Loss", "of", "p53,", "BRCA1"]
    assert first.predicted.text == first.reference.text
    assert not first.predicted.ents  # nothing leaks from the gold doc into the prediction input
    assert ents_of(first.reference) == [("p53,", "Gene", 2, 3), ("BRCA1", "Gene", 3, 4)]
    assert first.get_aligned_ner() == ["O", "O", "U-Gene", "U-Gene"]
    assert ents_of(examples[1].reference) == [("MDM2", "Gene", 0, 1)]
    # The callable re-reads the file, so a second epoch sees the same data.
    assert len(list(reader(nlp))) == 2


def test_reader_limit_and_n_sents(tmp_path):
    nlp = spacy.blank("en")
    path = write(tmp_path, WITH_DOCSTART)
    assert len(list(create_conll_ner_reader(path, limit=2)(nlp))) == 2
    assert len(list(create_conll_ner_reader(path, limit=0)(nlp))) == 5
    grouped = list(create_conll_ner_reader(path, n_sents=2)(nlp))
    assert [ex.reference.text for ex in grouped] == ["a1 a2 b1", "c1 c2", "d1 e1"]


def test_reader_resolves_from_config(tmp_path):
    path = write(tmp_path, UNTYPED)
    config = {"corpus": {"@readers": "spacy-biolm.ConllNerCorpus.v1", "path": str(path), "label": "Disease"}}
    reader = spacy.util.registry.resolve(config)["corpus"]
    examples = list(reader(spacy.blank("en")))
    assert [ents_of(ex.reference) for ex in examples][0] == [("Familial adenomatous polyposis", "Disease", 0, 3)]


@pytest.mark.parametrize(
    "kwargs,error",
    [
        ({"scheme": "bioes"}, ValueError),
        ({"n_sents": 0}, ValueError),
        ({"limit": -1}, ValueError),
        ({"label": ""}, ValueError),
    ],
)
def test_reader_rejects_bad_options_early(tmp_path, kwargs, error):
    with pytest.raises(error):
        create_conll_ner_reader(write(tmp_path, TYPED), **kwargs)


def test_reader_rejects_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        create_conll_ner_reader(tmp_path / "missing.tsv")


REGISTRY_PROBE = """
import json, sys
import spacy
before = set(sys.modules)
assert "spacy_biolm" not in before
reader = spacy.registry.readers.get("spacy-biolm.ConllNerCorpus.v1")
heavy = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in ("torch", "transformers"))
print(json.dumps({"module": reader.__module__, "name": reader.__name__, "heavy": heavy}))
"""


def test_registry_lookup_in_fresh_process_uses_entry_point(tmp_path):
    # cwd=tmp_path so spacy_biolm is found only through the installed entry point, not the cwd.
    result = subprocess.run(
        [sys.executable, "-c", REGISTRY_PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout.strip().splitlines()[-1])
    assert info == {"module": "spacy_biolm.corpora.readers", "name": "create_conll_ner_reader", "heavy": []}


# --- real data ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variant,kwargs",
    [("mtl_iob", {}), ("biobert", {"label": "Disease"})],
)
def test_real_ncbi_disease_train_counts(tmp_path, variant, kwargs):
    source = SHARED_DATA / "ner" / "NCBI-disease" / variant / "train.tsv"
    if not source.is_file():
        pytest.skip(f"shared data not available: {source}")
    output = tmp_path / f"{variant}.spacy"
    stats = convert_ner(source, output, **kwargs)
    # Counts from shared/data/README.md, section 1.
    assert (stats["sentences"], stats["docs"], stats["tokens"], stats["entities"]) == (5424, 5424, 135701, 5134)
    assert stats["labels"] == {"Disease": 5134}
    assert len(DocBin().from_disk(output)) == 5424
