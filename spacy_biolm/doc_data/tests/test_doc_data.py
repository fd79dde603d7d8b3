"""The Doc contracts: one idempotent extension registration, questions and relations that survive
serialisation, and the layering (doc_data imports spaCy only; corpora never imports pipes)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_biolm.doc_data import (
    EXTENSIONS,
    MissingQuestionError,
    Relation,
    get_question,
    get_relations,
    give_entities,
    make_question_doc,
    question_group,
    register_extensions,
    relation_entities,
    set_relations,
)

PACKAGE = Path(__file__).resolve().parents[2]


def _imports(path: Path):
    """(module, relative level) of every import statement in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, 0) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or "", node.level


def _resolved(path: Path, module: str, level: int) -> str:
    """The absolute dotted name of an import in ``path`` (a module of the spacy_biolm package)."""
    if level == 0:
        return module
    parts = ["spacy_biolm", *path.relative_to(PACKAGE).with_suffix("").parts[:-1]]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def _package_modules(subpackage: str):
    return [p for p in (PACKAGE / subpackage).rglob("*.py") if "tests" not in p.relative_to(PACKAGE).parts]


def test_corpora_import_nothing_from_pipes():
    modules = _package_modules("corpora")
    assert len(modules) >= 4
    for path in modules:
        for module, level in _imports(path):
            name = _resolved(path, module, level)
            assert not name.startswith("spacy_biolm.pipes"), f"{path.relative_to(PACKAGE)} imports {name}"


def test_doc_data_is_the_ground_floor_spacy_and_the_standard_library_only():
    allowed = set(sys.stdlib_module_names) | {"spacy"}
    for path in _package_modules("doc_data"):
        for module, level in _imports(path):
            name = _resolved(path, module, level)
            if name.startswith("spacy_biolm"):
                assert name.startswith("spacy_biolm.doc_data"), f"{path.name} imports {name}"
            else:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_the_import_scan_sees_relative_imports():
    # The scan above must be able to fail: a relative import two levels up resolves to pipes.
    path = PACKAGE / "corpora" / "qa.py"
    assert _resolved(path, "pipes.qa_pipe", 2) == "spacy_biolm.pipes.qa_pipe"
    assert _resolved(path, "conll", 1) == "spacy_biolm.corpora.conll"


def test_extensions_are_registered_on_import_in_a_fresh_process_and_registration_is_idempotent():
    code = ("from spacy.tokens import Doc; import spacy_biolm.doc_data as d; d.register_extensions(); "
            "print(all(Doc.has_extension(n) for n in d.EXTENSIONS))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"
    register_extensions()
    assert set(EXTENSIONS) == {"question", "question_id", "gold_answers", "relations", "abbreviations"}
    assert all(Doc.has_extension(name) for name in EXTENSIONS)


def test_a_question_doc_keeps_its_question_through_a_docbin():
    nlp = spacy.blank("en")
    doc = make_question_doc(nlp, "Is BRCA1 a gene?", ["BRCA1 is a gene.", "It is on chromosome 17."], "q1")
    assert [s.text for s in doc.sents] == ["BRCA1 is a gene.", "It is on chromosome 17."]
    doc._.gold_answers = ["yes"]
    (copy,) = DocBin(docs=[doc], store_user_data=True).get_docs(nlp.vocab)
    assert (copy._.question, copy._.question_id, list(copy._.gold_answers)) == ("Is BRCA1 a gene?", "q1", ["yes"])
    assert get_question(copy, "yes_no") == "Is BRCA1 a gene?" and question_group(copy) == "q1"
    with pytest.raises(ValueError, match="non-empty question"):
        make_question_doc(nlp, "  ", "context")
    with pytest.raises(MissingQuestionError, match="'answer_span' component"):
        get_question(nlp.make_doc("no question here"), "answer_span")


def test_relations_round_trip_and_bad_relations_are_refused():
    doc = Doc(spacy.blank("en").vocab, words=["BRCA1", "causes", "breast", "cancer"])
    gene, disease = Span(doc, 0, 1, label="GENE"), Span(doc, 2, 4, label="DISEASE")
    doc.ents = [gene, disease]
    set_relations(doc, [Relation(gene, disease, "ASSOCIATION", 0.75)])
    (copy,) = DocBin(docs=[doc], store_user_data=True).get_docs(doc.vocab)
    (rel,) = copy._.relations
    assert (rel.head.text, rel.tail.text, rel.label, rel.score) == ("BRCA1", "breast cancer", "ASSOCIATION", 0.75)
    assert rel.key == (0, 5, 13, 26) and get_relations(copy) == [rel]
    with pytest.raises(ValueError, match="overlapping entity spans"):
        set_relations(doc, [Relation(disease, Span(doc, 3, 4, label="DISEASE"), "X")])
    with pytest.raises(ValueError, match="non-empty string"):
        set_relations(doc, [Relation(gene, disease, "")])


def test_given_entities_are_the_relation_entities_whatever_doc_ents_becomes():
    doc = Doc(spacy.blank("en").vocab, words=["TP53", "in", "glioma", "and", "cancer"])
    assert relation_entities(doc) == ()
    doc.ents = [Span(doc, 4, 5, label="DISEASE")]
    assert [e.text for e in relation_entities(doc)] == ["cancer"]  # nothing given: doc.ents
    give_entities(doc, [Span(doc, 2, 3, label="DISEASE"), Span(doc, 0, 1, label="GENE")])
    assert [(e.text, e.label_) for e in doc.ents] == [("TP53", "GENE"), ("glioma", "DISEASE")]
    doc.ents = [Span(doc, 0, 1, label="GENE"), Span(doc, 2, 3, label="DISEASE"), Span(doc, 4, 5, label="DISEASE")]
    assert [(e.text, e.label_, e.start) for e in relation_entities(doc)] == [("TP53", "GENE", 0), ("glioma", "DISEASE", 2)]
    copy = Doc(doc.vocab, words=[t.text for t in doc])  # a Doc with the same tokens: spans copied by offset
    give_entities(copy, doc.ents)
    assert [(e.text, e.label_) for e in relation_entities(copy)] == [(e.text, e.label_) for e in doc.ents]
    other = Doc(doc.vocab, words=["BRCA1", "in", "glioma"])
    with pytest.raises(ValueError, match="spans of the Doc's tokens"):
        give_entities(other, [Span(doc, 0, 1, label="GENE")])
