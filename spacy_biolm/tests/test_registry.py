"""Everything we register is found through entry points, without importing spacy_biolm first,
and the entry-point modules stay light."""

import json
import subprocess
import sys


def test_registered_functions_resolve_in_a_fresh_process_without_import(tmp_path):
    script = """
import json, sys
import spacy
assert "spacy_biolm" not in sys.modules
nlp = spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})
found = {
    "tokenizer": [t.text for t in nlp("IL-2")],
    "reader": spacy.registry.readers.get("spacy-biolm.ConllNerCorpus.v1").__module__,
    "schedule": spacy.registry.schedules.get("spacy-biolm.warmup_linear.v1").__module__,
    "callback": spacy.registry.callbacks.get("spacy-biolm.trim_memory.v1").__module__,
    "factory": nlp.add_pipe("biolm_abbreviations").__class__.__module__,
}
found["relations"] = [
    nlp.add_pipe("relation_extractor", config={"model": {
        "@architectures": "spacy-biolm.RelationAnonymised.v1", "placeholders": {},
        "encoder": {"@architectures": "spacy-biolm.PairEncoder.v1", "name": "unused-until-initialised"}}}).__class__.__module__,
    spacy.registry.readers.get("spacy-biolm.RelationCorpus.v1").__module__,
    spacy.registry.scorers.get("spacy-biolm.relations_scorer.v1").__module__,
    spacy.registry.architectures.get("spacy-biolm.RelationFast.v1").__module__,
    spacy.registry.architectures.get("spacy-biolm.RelationAnonymised.v1").__module__,
]
# Other plugins' entry points (spacy-transformers) import transformers; ours must not.
import importlib.metadata as md
ours = [ep.value.split(":")[0] for ep in md.distribution("spacy-biolm").entry_points if ep.group.startswith(("spacy_", "thinc_"))]
code = "import sys, spacy; " + "; ".join(f"import {m}" for m in ours) + "; print(sorted(m for m in sys.modules if m.split('.')[0] in ('transformers', 'sentencepiece')))"
import subprocess
found["heavy"] = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
found["modules"] = ours
print(json.dumps(found))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["tokenizer"] == ["IL", "-", "2"]
    assert found["reader"] == "spacy_biolm.corpora.readers"
    assert found["schedule"] == "spacy_biolm.training.schedules"
    assert found["callback"] == "spacy_biolm.training.memory"
    assert found["factory"] == "spacy_biolm.pipes.abbreviations.component"
    assert found["relations"] == [
        "spacy_biolm.pipes.relation_extractor.component",
        "spacy_biolm.corpora.relations",
        "spacy_biolm.pipes.relation_extractor.scorer",
        "spacy_biolm.pipes.relation_extractor.model",
        "spacy_biolm.pipes.relation_extractor.model",
    ]
    assert len(found["modules"]) >= 3
    assert found["heavy"] == "[]", "entry-point modules must not import transformers/sentencepiece"


def test_console_script_lists_the_recipe_commands():
    result = subprocess.run([sys.executable, "-m", "spacy_biolm", "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for sub_app in ("data", "pretrain", "relations", "qa", "evaluate", "docs", "bench", "annotate", "timed"):
        assert sub_app in result.stdout
    commands = {
        "data": ("assets", "collect-text", "convert", "convert-splits"),
        "pretrain": ("vocab", "extend-vocab", "interpolate", "run"),
        "relations": ("convert", "train", "evaluate", "cv", "table"),
        "qa": ("convert", "corpora", "evaluate", "evaluate-project"),
        "evaluate": ("seeds", "encoders", "seeds-table", "tune", "ner-table", "release-meta"),
        "docs": ("steps-table", "scores-table", "includes"),
    }
    for sub_app, names in commands.items():
        listed = subprocess.run([sys.executable, "-m", "spacy_biolm", sub_app, "--help"], capture_output=True, text=True)
        assert listed.returncode == 0, listed.stderr
        for name in names:
            assert f" {name} " in listed.stdout, f"{sub_app} {name} missing from:\n{listed.stdout}"


def test_question_answering_entry_points_resolve_without_import(tmp_path):
    script = """
import json, sys
import spacy
assert "spacy_biolm" not in sys.modules
nlp = spacy.blank("en")
found = {name: type(nlp.add_pipe(name, config={"model": {"encoder": {"name": "unused"}}})).__module__
         for name in ("yes_no", "answer_span", "answer_reranker")}
for table, name in [("architectures", "spacy-biolm.PairEncoder.v1"), ("architectures", "spacy-biolm.YesNoClassifier.v1"),
                    ("architectures", "spacy-biolm.AnswerSpanModel.v1"), ("architectures", "spacy-biolm.AnswerRerankerModel.v1"),
                    ("architectures", "spacy-biolm.AnswerRerankerCosine.v1"),
                    ("scorers", "spacy-biolm.yes_no_scorer.v1"), ("scorers", "spacy-biolm.answer_span_scorer.v1"),
                    ("scorers", "spacy-biolm.answer_reranker_scorer.v1"), ("readers", "spacy-biolm.QACorpus.v1")]:
    found[name] = getattr(spacy.registry, table).get(name).__module__
found["question"] = spacy.tokens.Doc.has_extension("question") and spacy.tokens.Doc.has_extension("question_id")
print(json.dumps(found))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found.pop("question") is True
    assert found["answer_span"] == "spacy_biolm.pipes.answer_span.component"
    assert found["spacy-biolm.PairEncoder.v1"] == "spacy_biolm.encoders.pair_encoder"
    assert found["spacy-biolm.QACorpus.v1"] == "spacy_biolm.corpora.qa"
    assert all(module.startswith("spacy_biolm.") for module in found.values())


def test_length_sorted_transformer_model_resolves_without_import(tmp_path):
    code = ("import sys, spacy; assert 'spacy_biolm' not in sys.modules; get = spacy.registry.architectures.get; "
            "print(get('spacy-biolm.LengthSortedTransformerModel.v1').__module__, "
            "get('spacy-biolm.LengthSortedTok2VecTransformer.v1').__module__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["spacy_biolm.encoders.length_sorted"] * 2
