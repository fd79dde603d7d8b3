"""The ``biolm_abbreviations`` component (Schwartz & Hearst abbreviation detection).

Expected spans are worked out by hand from the texts below.
"""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Span

from spacy_biolm.pipes.abbreviations import Abbreviation, AbbreviationDetector
from spacy_biolm.pipes.abbreviations import component as component_module

BIO_TOKENIZER = {"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}}
TOKENIZERS = ["default", "bio"]

HNPCC = "Hereditary nonpolyposis colorectal cancer (HNPCC) is frequent. HNPCC patients are screened."
HNPCC_LONG = "Hereditary nonpolyposis colorectal cancer"


def blank(tokenizer: str):
    return spacy.blank("en", config=BIO_TOKENIZER) if tokenizer == "bio" else spacy.blank("en")


def make_nlp(tokenizer: str = "default", **config):
    nlp = blank(tokenizer)
    nlp.add_pipe("biolm_abbreviations", config=config)
    return nlp


def pairs(doc):
    """(short text, short start char, long text) per entry."""
    return [(a.short.text, a.short.start_char, a.long.text) for a in doc._.abbreviations]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_definition_and_later_mention(tokenizer):
    doc = make_nlp(tokenizer)(HNPCC)
    later = HNPCC.index("HNPCC patients")
    assert pairs(doc) == [("HNPCC", 43, HNPCC_LONG), ("HNPCC", later, HNPCC_LONG)]
    first, mention = doc._.abbreviations
    assert isinstance(first, Abbreviation)
    assert isinstance(first.short, Span) and first.long.start_char == 0
    assert mention.long == first.long  # the mention links to the definition's long form
    with pytest.raises(Exception):
        first.short = mention.short  # frozen


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_find_all_mentions_off_lists_definitions_only(tokenizer):
    doc = make_nlp(tokenizer, find_all_mentions=False)(HNPCC)
    assert pairs(doc) == [("HNPCC", 43, HNPCC_LONG)]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_long_form_stops_at_the_word_of_the_first_letter(tokenizer):
    text = "Germline mutations of adenomatous polyposis coli (APC) cause FAP."
    doc = make_nlp(tokenizer)(text)
    assert pairs(doc) == [("APC", text.index("APC"), "adenomatous polyposis coli")]
    assert [t.text for t in doc._.abbreviations[0].long] == ["adenomatous", "polyposis", "coli"]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_letters_that_do_not_match_give_nothing(tokenizer):
    nlp = make_nlp(tokenizer)
    assert nlp("Among the patients (n = 20) none relapsed.")._.abbreviations == []
    assert nlp("The treatment (radiation therapy and chemotherapy) was stopped.")._.abbreviations == []
    # A short form needs a letter, and "ref" is not spelt out before the parenthesis.
    assert nlp("as reported before (2003) and (ref) here")._.abbreviations == []
    # "A" only occurs inside "cab": the first short-form letter must start a word.
    assert nlp("the cab bar (AB) moved")._.abbreviations == []


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_short_form_first(tokenizer):
    text = "Germline APC (adenomatous polyposis coli) mutations. The APC gene is large."
    doc = make_nlp(tokenizer)(text)
    assert pairs(doc) == [
        ("APC", 9, "adenomatous polyposis coli"),
        ("APC", text.index("APC gene"), "adenomatous polyposis coli"),
    ]


def test_corpus_style_spaced_punctuation_with_the_bio_tokenizer():
    text = "Interleukin - 2 ( IL - 2 ) binds its receptor ; IL - 2 and IL-2 levels rise ."
    doc = make_nlp("bio")(text)
    assert [t.text for t in doc[3:8]] == ["(", "IL", "-", "2", ")"]
    assert pairs(doc) == [
        ("IL - 2", 18, "Interleukin - 2"),
        ("IL - 2", text.index("IL - 2 and"), "Interleukin - 2"),
        ("IL-2", text.index("IL-2"), "Interleukin - 2"),  # same tokens: IL, -, 2
    ]


def test_default_tokenizer_mentions_are_whole_tokens_and_case_sensitive():
    text = "Tumor necrosis factor (TNF) rises; TNF-alpha, TNFR, tnf and TNF differ."
    doc = make_nlp("default")(text)
    # "TNF-alpha" is split by the English tokenizer ("TNF", "-", "alpha"); "TNFR" and "tnf" are not TNF.
    assert pairs(doc) == [
        ("TNF", 23, "Tumor necrosis factor"),
        ("TNF", text.index("TNF-alpha"), "Tumor necrosis factor"),
        ("TNF", text.rindex("TNF"), "Tumor necrosis factor"),
    ]


def test_long_form_does_not_cross_a_sentence_or_a_parenthesis():
    nlp = make_nlp()
    # "Cancer" ends the previous sentence: the long form may not reach back to it.
    assert nlp("It is Cancer. Many other patients (CMOP) died.")._.abbreviations == []
    doc = nlp("graft vs. host disease (GVHD) is common")  # "vs. host" is not a sentence end
    assert pairs(doc) == [("GVHD", 24, "graft vs. host disease")]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_nested_and_unbalanced_parentheses_do_not_crash(tokenizer):
    nlp = make_nlp(tokenizer)
    for text in ["a ((b) c (d ( e ) ) ) ( ) ((( ))) ) ( foo (", ")))(((", "(", ")", "x (", "() (AB)"]:
        assert nlp(text)._.abbreviations == []
    doc = nlp("in the gene (tumor necrosis factor (TNF)) and TNF) (")
    assert pairs(doc) == [("TNF", 36, "tumor necrosis factor"), ("TNF", 46, "tumor necrosis factor")]


@pytest.mark.parametrize("text", ["", " ", "  \n\t "])
def test_empty_and_whitespace_docs_are_returned_unchanged(text):
    nlp = make_nlp("bio", propagate_entities=True)
    doc = nlp(text)
    assert doc.text == text
    assert doc._.abbreviations == []
    assert list(nlp.pipe([text, HNPCC]))[1]._.abbreviations  # pipe() goes on past it


def _propagation_doc():
    nlp = make_nlp("default", propagate_entities=True)
    text = "Mutations of adenomatous polyposis coli (APC) cause FAP. APC mutations and the APC gene."
    doc = nlp.make_doc(text)
    long_form = doc.char_span(13, 39, label="GENE")
    overlapping = doc.char_span(text.index("APC mutations"), text.index(" and"), label="VARIANT")
    doc.ents = [long_form, overlapping]
    return nlp, doc, text


def test_entity_propagation_from_long_form_to_mentions():
    nlp, doc, text = _propagation_doc()
    before = [(e.start_char, e.end_char, e.label_) for e in doc.ents]
    doc = nlp.get_pipe("biolm_abbreviations")(doc)
    ents = [(e.text, e.start_char, e.label_) for e in doc.ents]
    assert ents == [
        ("adenomatous polyposis coli", 13, "GENE"),
        ("APC", 41, "GENE"),  # the definition's own short form
        ("APC mutations", text.index("APC mutations"), "VARIANT"),  # left alone
        ("APC", text.rindex("APC"), "GENE"),
    ]
    assert set(before) <= {(e.start_char, e.end_char, e.label_) for e in doc.ents}


def test_entity_propagation_with_long_form_inside_an_entity_and_off_by_default():
    text = "Germline adenomatous polyposis coli (APC) mutations. APC is mutated."
    nlp = make_nlp("bio", propagate_entities=True)
    doc = nlp.make_doc(text)
    doc.ents = [doc.char_span(0, 35, label="GENE")]  # covers the long form
    doc = nlp.get_pipe("biolm_abbreviations")(doc)
    assert [(e.text, e.label_) for e in doc.ents] == [
        ("Germline adenomatous polyposis coli", "GENE"), ("APC", "GENE"), ("APC", "GENE")
    ]

    off = make_nlp("bio")  # propagate_entities=False
    doc = off.make_doc(text)
    doc.ents = [doc.char_span(0, 35, label="GENE")]
    doc = off.get_pipe("biolm_abbreviations")(doc)
    assert [e.text for e in doc.ents] == ["Germline adenomatous polyposis coli"]
    assert len(doc._.abbreviations) == 2


def test_pipeline_round_trip_through_disk(tmp_path):
    nlp = make_nlp("bio", propagate_entities=True, find_all_mentions=False)
    nlp.to_disk(tmp_path / "pipeline")
    reloaded = spacy.load(tmp_path / "pipeline")
    assert reloaded.pipe_names == ["biolm_abbreviations"]
    pipe = reloaded.get_pipe("biolm_abbreviations")
    assert isinstance(pipe, AbbreviationDetector)
    assert (pipe.propagate_entities, pipe.find_all_mentions) == (True, False)
    assert pairs(reloaded(HNPCC)) == [("HNPCC", 43, HNPCC_LONG)]
    assert [t.text for t in reloaded("IL-2")] == ["IL", "-", "2"]  # tokenizer came back too


def test_factory_is_found_through_the_entry_point_in_a_fresh_process(tmp_path):
    script = textwrap.dedent(
        """
        import sys
        import spacy
        assert not any(m.startswith("spacy_biolm") for m in sys.modules if m != "spacy_biolm"), "imported early?"
        nlp = spacy.blank("en")
        nlp.add_pipe("biolm_abbreviations")
        doc = nlp("adenomatous polyposis coli (APC) and APC")
        print([(a.short.text, a.long.text) for a in doc._.abbreviations])
        """
    )
    # Run outside the repository so nothing is picked up from the working directory by accident.
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert result.returncode == 0, result.stderr
    expected = [("APC", "adenomatous polyposis coli")] * 2
    assert result.stdout.strip().splitlines()[-1] == repr(expected)


def test_component_module_imports_only_spacy_and_the_standard_library():
    allowed = set(sys.stdlib_module_names) | {"spacy", "__future__"}
    for path in [Path(component_module.__file__), Path(component_module.__file__).with_name("__init__.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_extension_registration_is_idempotent():
    from spacy.tokens import Doc

    from spacy_biolm.doc_data import register_extensions

    register_extensions()
    AbbreviationDetector()
    register_extensions()

    assert Doc.has_extension("abbreviations")
    assert Doc.get_extension("abbreviations")[0] == []  # default
