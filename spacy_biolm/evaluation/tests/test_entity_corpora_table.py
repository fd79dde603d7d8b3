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


def test_a_type_a_corpus_did_not_teach_is_marked_unseen_on_its_test_set(tmp_path):
    # The release with five types read BioNLP13CG for CHEMICAL only: its GENE row there is cross-corpus.
    scores = {"BioNLP13CG": {"CHEMICAL": 0.6, "GENE": 0.5}, "BC2GM": {"GENE": 0.7}, "BioNLP11ID": {"GENE": 0.4}}
    release = _result(tmp_path / "release.json", ["BioNLP13CG", "BC2GM"], scores)
    data = json.loads(release.read_text())
    release.write_text(json.dumps({**data, "taught": {"BioNLP13CG": ["CHEMICAL"], "BC2GM": ["GENE"]}}))
    multi = _result(tmp_path / "multi.json", list(scores), scores)
    lines = entity_corpora_table({"release": release, "multi": multi}).splitlines()
    row = lambda start: [cell.strip() for cell in next(line for line in lines if line.startswith(start)).split("|")[3:5]]
    assert row("| GENE | BioNLP13CG |") == ["50.0 †", "50.0"]
    assert row("| CHEMICAL | BioNLP13CG |") == ["60.0", "60.0"]
    assert row("| **GENE** | **cross-corpus macro (2 corpora)**") == ["**45.0**", "–"]


def test_taught_types_reads_each_readers_teaching_from_the_config():
    from thinc.api import Config

    from spacy_biolm.evaluation.entities import taught_types, trained_on

    corpora = ["NCBI-disease", "BC2GM", "BioNLP13CG", "BioNLP11ID", "LINNAEUS"]
    types = Config().from_str("""
[paths]
held_out = "BioNLP11ID"
[corpora]
[corpora.train]
@readers = "spacy-biolm.EntityTypeCorpora.v1"
directory = "corpus/ner"
corpora = ["BC2GM", "BioNLP13CG", "BioNLP11ID"]
split = "train"
held_out = ${paths.held_out}
type_corpora = {"GENE": ["BC2GM"]}
""")
    assert taught_types(types, corpora) == {"BC2GM": ["GENE"], "BioNLP13CG": ["CHEMICAL", "SPECIES", "CELL"]}
    release = Config().from_str("""
[corpora]
[corpora.train]
@readers = "spacy-biolm.MultiTaskCorpus.v1"
[corpora.train.tasks]
[corpora.train.tasks.diseases]
@readers = "spacy-biolm.TaskCorpus.v1"
path = "../../corpus/ner/NCBI-disease/train.spacy"
annotates = ["entities"]
entity_types = ["DISEASE"]
[corpora.train.tasks.BioNLP13CG]
@readers = "spacy-biolm.TaskCorpus.v1"
path = "corpus/ner/BioNLP13CG/train.spacy"
annotates = ["entities"]
entity_types = ["GENE", "CHEMICAL", "SPECIES", "CELL"]
annotated_types = ["CHEMICAL", "CELL"]
""")
    assert taught_types(release, corpora) == {"NCBI-disease": ["DISEASE"], "BioNLP13CG": ["CHEMICAL", "CELL"]}
    assert trained_on(release, corpora) == ["NCBI-disease", "BioNLP13CG"]


def test_the_table_carries_the_run_record_of_its_newest_column(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app
    from spacy_biolm.run_record import read_record

    def column(name, date):
        scores = {"ents_per_type": {"GENE": {"p": 0.5, "r": 0.5, "f": 0.5}}, "types": ["GENE"]}
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"corpora": {"BC2GM": scores}, "trained_on": [], "run": {"commit": name, "date": date}}))
        return f"{name}={path}"

    # In corpus first (an older run), the held-out column added later: the table is as new as that one.
    args = ["docs", "entity-corpora-table", str(tmp_path / "t.md"), column("old", "2026-12-02T05:51:37Z"),
            column("new", "2026-12-06T08:00:00Z")]
    assert CliRunner().invoke(app, args).exit_code == 0
    assert read_record(tmp_path / "t.md")["commit"] == "new"
