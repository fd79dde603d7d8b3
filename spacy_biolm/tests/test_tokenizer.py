"""The corpus-matching tokenizer."""

import spacy

BIO_TOKENIZER = {"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}}


def test_splits_every_punctuation_character_like_the_ner_corpora():
    nlp = spacy.blank("en", config=BIO_TOKENIZER)
    words = [t.text for t in nlp("IL-2 (APC) binds BRCA1-associated 5'-UTR; 2.5% p53/MDM2 [ref].")]
    assert words == [
        "IL", "-", "2", "(", "APC", ")", "binds", "BRCA1", "-", "associated", "5", "'", "-", "UTR",
        ";", "2", ".", "5", "%", "p53", "/", "MDM2", "[", "ref", "]", ".",
    ]


def test_unicode_punctuation_and_whitespace():
    nlp = spacy.blank("en", config=BIO_TOKENIZER)
    doc = nlp("IFN‐γ  «treated»\n cells…")
    assert [t.text for t in doc if not t.is_space] == ["IFN", "‐", "γ", "«", "treated", "»", "cells", "…"]
    assert doc.text == "IFN‐γ  «treated»\n cells…"  # nothing lost


def test_tokenizer_survives_a_disk_round_trip(tmp_path):
    nlp = spacy.blank("en", config=BIO_TOKENIZER)
    nlp.to_disk(tmp_path / "p")
    reloaded = spacy.load(tmp_path / "p")
    assert [t.text for t in reloaded("TNF-alpha")] == ["TNF", "-", "alpha"]
