"""The corpus-matching tokenizer: punctuation and symbols split, biomedical surface forms (Greek
letters, primes, hyphenated chemical names) tokenised as the NER corpora tokenise them, entity
boundaries on those forms reachable, and the corpora's own sentences reproduced."""

import unicodedata
from typing import List, Tuple

import pytest
import regex
import spacy

from spacy_biolm.corpora.conll import read_conll_ner, sentences_to_doc
from spacy_biolm.testing import SHARED_DATA
from spacy_biolm.tokenizer import is_split_character, split_character_class

BIO_TOKENIZER = {"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}}


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en", config=BIO_TOKENIZER)


def test_splits_every_punctuation_character_like_the_ner_corpora(nlp):
    words = [t.text for t in nlp("IL-2 (APC) binds BRCA1-associated 5'-UTR; 2.5% p53/MDM2 [ref].")]
    assert words == [
        "IL", "-", "2", "(", "APC", ")", "binds", "BRCA1", "-", "associated", "5", "'", "-", "UTR",
        ";", "2", ".", "5", "%", "p53", "/", "MDM2", "[", "ref", "]", ".",
    ]


def test_unicode_punctuation_and_whitespace(nlp):
    doc = nlp("IFN‐γ  «treated»\n cells…")
    assert [t.text for t in doc if not t.is_space] == ["IFN", "‐", "γ", "«", "treated", "»", "cells", "…"]
    assert doc.text == "IFN‐γ  «treated»\n cells…"  # nothing lost


def test_tokenizer_survives_a_disk_round_trip(tmp_path):
    nlp = spacy.blank("en", config=BIO_TOKENIZER)
    nlp.to_disk(tmp_path / "p")
    reloaded = spacy.load(tmp_path / "p")
    assert [t.text for t in reloaded("TNF-alpha")] == ["TNF", "-", "alpha"]
    assert [t.text for t in reloaded("p53−/− Mesupron®")] == ["p53", "−", "/", "−", "Mesupron", "®"]


# --- the split characters -----------------------------------------------------------------------


def test_split_character_class_matches_exactly_punctuation_and_symbols():
    """The compact range class and the per-character rule agree on every code point; checked
    against the Unicode properties P (punctuation) and S (symbol) as the ``regex`` module knows them."""
    ranges = regex.compile(split_character_class())
    by_property = regex.compile(r"[\p{P}\p{S}]")
    for code in list(range(0x3000)) + [0x1F600, 0x1D400, 0xFF0B, 0xFE63]:
        ch = chr(code)
        assert bool(ranges.fullmatch(ch)) == is_split_character(ch), hex(code)
        # Beyond ASCII the rule is exactly "punctuation or symbol"; code points unassigned in
        # Python's Unicode version (``regex`` may know a newer one) are left out.
        if code > 0x7F and unicodedata.category(ch) != "Cn":
            assert bool(by_property.fullmatch(ch)) == is_split_character(ch), hex(code)
    assert len(split_character_class()) < 5000  # saved inside every pipeline's tokenizer


@pytest.mark.parametrize("ch", list("-'′’‐–−+⁺⁻±×≥≤°®™/*^|~$<=>"))
def test_hyphens_primes_and_symbols_are_split(ch):
    assert is_split_character(ch)


@pytest.mark.parametrize("ch", list("αβγδκμµΔωAz09²₂"))
def test_letters_and_digits_are_not_split(ch):
    assert not is_split_character(ch)


# --- biomedical surface forms in running sentences ----------------------------------------------

SURFACE_FORMS = [
    ("Wnt signalling stabilises β-catenin in the nucleus.",
     ["Wnt", "signalling", "stabilises", "β", "-", "catenin", "in", "the", "nucleus", "."]),
    ("Soluble IL-2Rα was raised.", ["Soluble", "IL", "-", "2Rα", "was", "raised", "."]),
    ("AMPK senses 5'-AMP levels.", ["AMPK", "senses", "5", "'", "-", "AMP", "levels", "."]),
    ("Mice received N-acetylcysteine (NAC).",
     ["Mice", "received", "N", "-", "acetylcysteine", "(", "NAC", ")", "."]),
    ("Patients on anti-TNF-α therapy improved.",
     ["Patients", "on", "anti", "-", "TNF", "-", "α", "therapy", "improved", "."]),
    ("IFN-γ-producing CD4+ T cells", ["IFN", "-", "γ", "-", "producing", "CD4", "+", "T", "cells"]),
    ("a variant in the 3'-UTR of KRAS", ["a", "variant", "in", "the", "3", "'", "-", "UTR", "of", "KRAS"]),
    ("the 3′-UTR (prime sign)", ["the", "3", "′", "-", "UTR", "(", "prime", "sign", ")"]),
    ("Ouabain inhibits Na+/K+-ATPase activity.",
     ["Ouabain", "inhibits", "Na", "+", "/", "K", "+", "-", "ATPase", "activity", "."]),
    ("Ouabain inhibits Na⁺/K⁺-ATPase.", ["Ouabain", "inhibits", "Na", "⁺", "/", "K", "⁺", "-", "ATPase", "."]),
    ("1,25-dihydroxyvitamin D3 induces VDR.",
     ["1", ",", "25", "-", "dihydroxyvitamin", "D3", "induces", "VDR", "."]),
    ("p53-/- mice developed lymphomas.", ["p53", "-", "/", "-", "mice", "developed", "lymphomas", "."]),
    ("p53−/− mice (minus signs)", ["p53", "−", "/", "−", "mice", "(", "minus", "signs", ")"]),
    ("NF-κB-dependent transcription", ["NF", "-", "κB", "-", "dependent", "transcription"]),
    ("TGF-β1 and 17β-estradiol", ["TGF", "-", "β1", "and", "17β", "-", "estradiol"]),
    ("α1-antitrypsin deficiency", ["α1", "-", "antitrypsin", "deficiency"]),
    ("Ca2+-dependent [3H]thymidine uptake",
     ["Ca2", "+", "-", "dependent", "[", "3H", "]", "thymidine", "uptake"]),
    ("HLA-DRB1*04:01 carriers", ["HLA", "-", "DRB1", "*", "04", ":", "01", "carriers"]),
    ("2'-deoxyguanosine and 8-oxo-dG", ["2", "'", "-", "deoxyguanosine", "and", "8", "-", "oxo", "-", "dG"]),
    ("E. coli K-12 grew at 37°C", ["E", ".", "coli", "K", "-", "12", "grew", "at", "37", "°", "C"]),
    ("upamostat (Mesupron®) at 10±2 µM", ["upamostat", "(", "Mesupron", "®", ")", "at", "10", "±", "2", "µM"]),
    ("IL‐6 with a Unicode hyphen", ["IL", "‐", "6", "with", "a", "Unicode", "hyphen"]),
]


@pytest.mark.parametrize("text,tokens", SURFACE_FORMS, ids=[t for t, _ in SURFACE_FORMS])
def test_biomedical_surface_forms(nlp, text, tokens):
    doc = nlp(text)
    assert [t.text for t in doc] == tokens
    assert doc.text == text


# --- entity boundaries on those forms -----------------------------------------------------------

# (text, entity text, occurrence of it in the text, label, the entity's tokens)
ENTITIES = [
    ("Wnt signalling stabilises β-catenin in the nucleus.", "β-catenin", 0, "GENE", ["β", "-", "catenin"]),
    ("Patients on anti-TNF-α therapy improved.", "TNF-α", 0, "GENE", ["TNF", "-", "α"]),
    ("IL-2Rα-deficient mice", "IL-2Rα", 0, "GENE", ["IL", "-", "2Rα"]),
    ("AMPK is the 5'-AMP-activated protein kinase.", "5'-AMP-activated protein kinase", 0, "GENE",
     ["5", "'", "-", "AMP", "-", "activated", "protein", "kinase"]),
    ("AMPK is the 5'-AMP-activated protein kinase.", "5'-AMP", 0, "CHEMICAL", ["5", "'", "-", "AMP"]),
    ("Mice received N-acetylcysteine (NAC).", "N-acetylcysteine", 0, "CHEMICAL", ["N", "-", "acetylcysteine"]),
    ("Mice received N-acetylcysteine (NAC).", "NAC", 0, "CHEMICAL", ["NAC"]),
    ("IFN-γ-producing CD4+ T cells", "IFN-γ", 0, "GENE", ["IFN", "-", "γ"]),
    ("IFN-γ-producing CD4+ T cells", "CD4+ T cells", 0, "CELL_TYPE", ["CD4", "+", "T", "cells"]),
    ("a variant in the 3'-UTR of KRAS", "KRAS", 0, "GENE", ["KRAS"]),
    ("a variant in the 3'-UTR of KRAS", "3'-UTR", 0, "DNA", ["3", "'", "-", "UTR"]),
    ("Ouabain inhibits Na+/K+-ATPase activity.", "Na+/K+-ATPase", 0, "GENE",
     ["Na", "+", "/", "K", "+", "-", "ATPase"]),
    ("Ouabain inhibits Na+/K+-ATPase activity.", "Na+", 0, "CHEMICAL", ["Na", "+"]),
    ("Ouabain inhibits Na⁺/K⁺-ATPase.", "K⁺", 0, "CHEMICAL", ["K", "⁺"]),
    ("Ouabain inhibits Na⁺/K⁺-ATPase.", "Na", 0, "CHEMICAL", ["Na"]),
    ("1,25-dihydroxyvitamin D3-induced VDR", "1,25-dihydroxyvitamin D3", 0, "CHEMICAL",
     ["1", ",", "25", "-", "dihydroxyvitamin", "D3"]),
    ("p53-/- mice developed lymphomas.", "p53", 0, "GENE", ["p53"]),
    ("p53−/− mice developed lymphomas.", "p53", 0, "GENE", ["p53"]),
    ("NF-κB-dependent transcription", "NF-κB", 0, "GENE", ["NF", "-", "κB"]),
    ("TGF-β1 and 17β-estradiol", "17β-estradiol", 0, "CHEMICAL", ["17β", "-", "estradiol"]),
    ("upamostat (Mesupron®) at 10 µM", "Mesupron", 0, "CHEMICAL", ["Mesupron"]),
    ("the antioxidant Trolox™ reversed it", "Trolox", 0, "CHEMICAL", ["Trolox"]),
    ("TNF-α, TNF-α-induced", "TNF-α", 1, "GENE", ["TNF", "-", "α"]),
]


def _char_offsets(text: str, entity: str, occurrence: int) -> Tuple[int, int]:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(entity, start + 1)
    return start, start + len(entity)


@pytest.mark.parametrize("text,entity,occurrence,label,tokens", ENTITIES,
                         ids=[f"{e}@{t}" for t, e, *_ in ENTITIES])
def test_entity_on_a_surface_form_maps_to_token_boundaries(nlp, text, entity, occurrence, label, tokens):
    doc = nlp(text)
    start, end = _char_offsets(text, entity, occurrence)
    span = doc.char_span(start, end, label=label, alignment_mode="strict")
    assert span is not None, f"{entity!r} at {start}:{end} cuts a token: {[t.text for t in doc]}"
    assert span.text == entity and [t.text for t in span] == tokens
    doc.ents = [span]
    assert [(e.start_char, e.end_char, e.label_) for e in doc.ents] == [(start, end, label)]


def test_a_letter_run_is_one_token_as_in_the_corpora(nlp):
    """The corpora keep "PPARalpha", "1beta", "2Ralpha" whole, so their Greek-letter spellings
    stay whole too: a boundary inside them is not a token boundary (the corpora cannot mark one)."""
    doc = nlp("PPARα binds IL-1β")
    assert [t.text for t in doc] == ["PPARα", "binds", "IL", "-", "1β"]
    assert doc.char_span(0, 4, alignment_mode="strict") is None  # "PPAR" inside "PPARα"
    assert doc.char_span(0, 4, alignment_mode="expand").text == "PPARα"


# The corpora are ASCII: their sources' Greek letters were spelled out and symbols transliterated
# (LINNAEUS has "+/-", ">=", "(R)" as single tokens). Tokenising the Unicode original must give
# the corpus tokens back, one for one, once each token is transliterated the same way.
TRANSLITERATION = {"α": "alpha", "β": "beta", "γ": "gamma", "κ": "kappa", "±": "+/-", "≥": ">=", "®": "(R)"}


def _transliterate(token: str) -> str:
    return "".join(TRANSLITERATION.get(ch, ch) for ch in token)


@pytest.mark.parametrize("text,corpus_tokens", [
    ("IL-1β and PPARα activate NF-κB and IFN-γ.",
     ["IL", "-", "1beta", "and", "PPARalpha", "activate", "NF", "-", "kappaB", "and", "IFN", "-", "gamma", "."]),
    ("aged 50±15 years, ≥1300 kDa, the Piezosurgery® Device",
     ["aged", "50", "+/-", "15", "years", ",", ">=", "1300", "kDa", ",", "the", "Piezosurgery", "(R)", "Device"]),
])
def test_unicode_text_tokenises_like_its_ascii_transliteration_in_the_corpora(nlp, text, corpus_tokens):
    assert [_transliterate(t.text) for t in nlp(text)] == corpus_tokens


# --- the real NER training corpora (skipped without the shared data mirror) ---------------------

# Untokenising: no space before closing punctuation or the symbols the corpora's sources glued to
# the word before ("Na+", "Piezosurgery®"), none after opening brackets, none around hyphens,
# slashes and apostrophes: "S - 100" -> "S-100", "NS3 ' - 5B" -> "NS3'-5B", "( 90 % )" -> "(90%)".
_NO_SPACE_BEFORE = {",", ".", ";", ":", ")", "]", "%", "-", "/", "'", "+", "®", "™"}
_NO_SPACE_AFTER = {"(", "[", "-", "/", "'"}
# LINNAEUS's transliterations, mapped back to the characters they were made from.
_LINNAEUS_UNTRANSLITERATED = {"+/-": "±", ">=": "≥", "<=": "≤", "(R)": "®", "(TM)": "™"}


def _running_text(words: List[str]) -> Tuple[str, List[Tuple[int, int]]]:
    """The sentence as running text, and each word's char offsets in it."""
    text, offsets = "", []
    for i, word in enumerate(words):
        if i and word not in _NO_SPACE_BEFORE and words[i - 1] not in _NO_SPACE_AFTER:
            text += " "
        offsets.append((len(text), len(text) + len(word)))
        text += word
    return text, offsets


def _one_token_each(words: List[str]) -> bool:
    """Whether every word can be one token of ours: a single split character, or none in it
    (LINNAEUS has a few like "--" or "<FFFD>" that no punctuation-splitting tokenizer keeps)."""
    return all(len(w) == 1 or not any(is_split_character(ch) for ch in w) for w in words)


def _check_corpus(nlp, corpus: str, untransliterate: dict) -> dict:
    source = SHARED_DATA / "ner" / corpus / "mtl_iob" / "train.tsv"
    if not source.is_file():
        pytest.skip(f"shared data not available: {source}")
    counts = dict.fromkeys(["sentences", "one_token_each", "retokenised", "entities", "aligned"], 0)
    for sentence in read_conll_ner(source, scheme="mtl_iob"):
        gold = sentences_to_doc(nlp.vocab, [sentence])
        words = [untransliterate.get(w, w) for w in sentence.words]
        text, offsets = _running_text(words)
        doc = nlp(text)
        counts["sentences"] += 1
        if _one_token_each(words):
            counts["one_token_each"] += 1
            counts["retokenised"] += [t.text for t in doc] == words
        for ent in gold.ents:
            counts["entities"] += 1
            start, end = offsets[ent.start][0], offsets[ent.end - 1][1]
            counts["aligned"] += doc.char_span(start, end, alignment_mode="strict") is not None
    return counts


@pytest.mark.parametrize("corpus,sentences,entities", [("BC2GM", 12574, 15197), ("NCBI-disease", 5424, 5134)])
def test_real_corpus_sentences_are_tokenised_back_exactly(nlp, corpus, sentences, entities):
    """Every training sentence, written as running text, tokenises to exactly the corpus tokens,
    and every gold entity (15197 in BC2GM, 5134 in NCBI-disease) aligns with ``strict``."""
    counts = _check_corpus(nlp, corpus, {})
    assert counts == {"sentences": sentences, "one_token_each": sentences, "retokenised": sentences,
                      "entities": entities, "aligned": entities}


def test_real_linnaeus_symbols_are_single_tokens_as_in_the_corpus(nlp):
    """With LINNAEUS's "+/-", ">=", "<=", "(R)", "(TM)" mapped back to "±", "≥", "≤", "®", "™",
    every sentence that a punctuation-splitting tokenizer can reproduce is reproduced exactly
    (before symbols were split, 13 were not: "Piezosurgery®" stayed one token), and all 2119 gold
    entities align with ``strict``. The 45 others hold "--", "-->", "<FFFD>" or "not-in"."""
    counts = _check_corpus(nlp, "LINNAEUS", _LINNAEUS_UNTRANSLITERATED)
    assert counts == {"sentences": 11935, "one_token_each": 11890, "retokenised": 11890,
                      "entities": 2119, "aligned": 2119}
