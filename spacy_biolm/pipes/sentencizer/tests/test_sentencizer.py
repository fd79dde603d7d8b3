"""biomedical_sentencizer: spaCy's boundaries, none before a lower-case word or a digit."""

import spacy
from typer.testing import CliRunner

from spacy_biolm.cli import app
from spacy_biolm.pipes.sentencizer import BiomedicalSentencizer, continues_sentence, replace_sentencizers

BIO_TOKENIZER = {"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}}
# A GAD-style sentence whose pair (the gene and the disease) the species name's full stop would cut,
# then BC2GM's tokenisation of a gene with a full stop in it, then a real boundary.
TEXT = ("Polymorphisms of TNF and susceptibility to P. falciparum malaria were studied in Gambian children. "
        "Kv1 . 7 channels et al. found it. The BRCA1 gene was sequenced!")
EXPECTED = ["Polymorphisms of TNF and susceptibility to P . falciparum malaria were studied in Gambian children .",
            "Kv1 . 7 channels et al . found it .",
            "The BRCA1 gene was sequenced !"]


def sentences(nlp, text=TEXT):
    return [" ".join(token.text for token in sent) for sent in nlp(text).sents]


def pipeline(factory, **config):
    nlp = spacy.blank("en", config=BIO_TOKENIZER)
    nlp.add_pipe(factory, config=config)
    return nlp


def test_no_sentence_starts_at_a_lower_case_word_or_a_digit():
    assert sentences(pipeline("biomedical_sentencizer")) == EXPECTED
    spacys = sentences(pipeline("sentencizer"))  # what it replaces cuts the GAD pair, the gene, the et al.
    assert len(spacys) == 6 and spacys[1].startswith("falciparum malaria")


def test_continues_sentence():
    assert [continues_sentence(t) for t in ["falciparum", "7", "p53", "The", "(", "BRCA1", ""]] == [
        True, True, True, False, False, False, False]


def test_settings_round_trip_and_empty_docs():
    nlp = pipeline("biomedical_sentencizer", punct_chars=[";"])
    assert sentences(nlp, "TNF binds; IL4 binds; it stops.") == ["TNF binds ;", "IL4 binds ; it stops ."]
    loaded = spacy.blank("en", config=BIO_TOKENIZER).from_config(nlp.config).from_bytes(nlp.to_bytes())
    assert isinstance(loaded.get_pipe("biomedical_sentencizer"), BiomedicalSentencizer)
    assert loaded.get_pipe("biomedical_sentencizer").punct_chars == {";"}
    assert sentences(loaded, "") == []


def test_replace_sentencizers_keeps_name_place_and_settings():
    nlp = pipeline("sentencizer", punct_chars=[".", "!"])
    nlp.add_pipe("biolm_abbreviations")
    assert replace_sentencizers(nlp) == ["sentencizer"]
    assert nlp.pipe_names == ["sentencizer", "biolm_abbreviations"]
    assert nlp.get_pipe_meta("sentencizer").factory == "biomedical_sentencizer"
    assert nlp.get_pipe("sentencizer").punct_chars == {".", "!"}
    assert sentences(nlp) == EXPECTED
    assert replace_sentencizers(nlp) == []  # nothing left to replace


def test_replace_sentencizer_command_updates_a_saved_pipeline(tmp_path):
    pipeline("sentencizer").to_disk(tmp_path / "model")
    result = CliRunner().invoke(app, ["release", "replace-sentencizer", str(tmp_path / "model")])
    assert result.exit_code == 0, result.output
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe_meta("sentencizer").factory == "biomedical_sentencizer"
    assert sentences(loaded) == EXPECTED
    again = CliRunner().invoke(app, ["release", "replace-sentencizer", str(tmp_path / "model")])
    assert again.exit_code == 0 and "unchanged" in again.output
    spacy.blank("en").to_disk(tmp_path / "none")
    none = CliRunner().invoke(app, ["release", "replace-sentencizer", str(tmp_path / "none")])
    assert none.exit_code == 1 and "has no sentencizer to replace" in " ".join(none.output.split())  # wasabi wraps
