"""``entity_corpora_table``: cells, † marks and macro rows from evaluate entity-corpora results."""

import json

from spacy_biolm.evaluation.entities import entity_corpora_table


def _result(path, trained_on, scores):
    corpora = {corpus: {"types": list(by_type), "ents_per_type": {t: {"p": f, "r": f, "f": f} for t, f in by_type.items()}}
               for corpus, by_type in scores.items()}
    path.write_text(json.dumps({"model": str(path), "split": "test", "trained_on": trained_on, "corpora": corpora}))
    return path


def test_macro_rows_are_means_and_the_cross_corpus_row_needs_a_pipeline_that_crossed(tmp_path):
    scores = {"BioNLP13CG": {"CHEMICAL": 0.6, "GENE": 0.8}, "BioNLP11ID": {"CHEMICAL": 0.4, "GENE": 0.5},
              "BC2GM": {"GENE": 0.7}}
    multi = _result(tmp_path / "multi.json", ["BioNLP13CG", "BioNLP11ID", "BC2GM"], scores)
    single = _result(tmp_path / "single.json", ["BC2GM"], {c: {"GENE": s["GENE"] / 2} for c, s in scores.items()})
    lines = entity_corpora_table({"multi": multi, "single": single}).splitlines()
    row = lambda start: [cell.strip() for cell in next(line for line in lines if line.startswith(start)).split("|")[3:5]]
    assert row("| GENE | BioNLP11ID |") == ["50.0", "25.0 †"]
    assert row("| **GENE** | **macro (3 corpora)**") == ["**66.7**", "**33.3**"]
    # Only the single-corpus pipeline crossed; the test sets it never read: BioNLP13CG and BioNLP11ID.
    assert row("| **GENE** | **cross-corpus macro (2 corpora)**") == ["–", "**32.5**"]
    # CHEMICAL: only the multi-corpus pipeline predicts it, on corpora it trained on: no cross-corpus row.
    assert row("| **CHEMICAL** | **macro (2 corpora)**") == ["**50.0**", "–"]
    assert not any(line.startswith("| **CHEMICAL** | **cross-corpus") for line in lines)


def test_only_the_test_sets_asked_for_are_rows(tmp_path):
    scores = {"BioNLP13CG": {"CHEMICAL": 0.6, "GENE": 0.8}, "BC2GM": {"GENE": 0.7}, "NCBI-disease": {"DISEASE": 0.8}}
    multi = _result(tmp_path / "multi.json", list(scores), scores)
    ablation = _result(tmp_path / "ablation.json", ["BC2GM", "NCBI-disease"], {"BC2GM": {"GENE": 0.75}, "NCBI-disease": {"DISEASE": 0.81}})
    lines = entity_corpora_table({"multi": multi, "ablation": ablation}, only=["BC2GM", "NCBI-disease"]).splitlines()
    rows = [line.split("|")[1:3] for line in lines if line.startswith("| ") and "---" not in line][1:]
    assert [[cell.strip() for cell in row] for row in rows] == [["DISEASE", "NCBI-disease"], ["GENE", "BC2GM"]]
