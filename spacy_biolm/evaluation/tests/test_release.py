"""The release's meta.json and score table from the task evaluations."""

import json

import pytest

from spacy_biolm.evaluation.release import release_meta, release_rows, release_table


def _write(path, scores):
    path.write_text(json.dumps(scores))
    return path


def test_rows_table_and_meta_from_evaluation_files(tmp_path):
    paths = {
        "ner": _write(tmp_path / "ner.json", {"ents_p": 0.5, "ents_r": 0.25, "ents_f": 1 / 3, "speed": 9000.0}),
        "answer_reranker": _write(tmp_path / "rerank.json", {"rerank_mrr": 0.0851}),
        "yes_no": _write(tmp_path / "yes_no.json", {"yes_no_f_yes": 0.9, "yes_no_f_no": None}),
    }
    rows = release_rows(paths)
    assert [row["component"] for row in rows] == ["ner", "answer_reranker", "yes_no"]
    assert rows[0]["scores"] == {"ents_p": 0.5, "ents_r": 0.25, "ents_f": 1 / 3}  # speed is not a score
    table = release_table(rows).splitlines()
    assert table[2] == "| `ner` | diseases | NCBI-disease test | P 50.00, R 25.00, F1 33.33 |"
    assert table[3].endswith("| MRR 0.085 |")
    assert table[4].endswith("| F1 yes 90.00, F1 no n/a |")
    meta = release_meta({"name": "bio_electra", "sources": ["x"]}, rows)
    assert meta["name"] == "bio_electra" and meta["sources"] == ["x"]
    # spaCy's package README prints performance x 100: scores stay in 0-1, and None is left out.
    assert meta["performance"] == {"ner_ents_p": 0.5, "ner_ents_r": 0.25, "ner_ents_f": 1 / 3,
                                   "answer_reranker_rerank_mrr": 0.0851, "yes_no_yes_no_f_yes": 0.9}
    assert table[2] in meta["notes"]


def test_unknown_component_and_missing_metric_are_named(tmp_path):
    with pytest.raises(KeyError, match="'tagger' is not a release component"):
        release_rows({"tagger": _write(tmp_path / "t.json", {})})
    with pytest.raises(KeyError, match=r"g\.json has no \['rel_micro_r'\] \(scores of 'relation_extractor'\)"):
        release_rows({"relation_extractor": _write(tmp_path / "g.json", {"rel_micro_p": 1.0, "rel_micro_f": 1.0})})


def test_release_meta_command_writes_the_meta_and_the_table(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    base = _write(tmp_path / "base.json", {"name": "bio_electra", "version": "0.2.0"})
    ner = _write(tmp_path / "ner.json", {"ents_p": 0.5, "ents_r": 0.25, "ents_f": 1 / 3})
    out, table = tmp_path / "out" / "meta.json", tmp_path / "out" / "release.md"
    result = CliRunner().invoke(app, ["evaluate", "release-meta", str(base), str(out), f"ner={ner}", "--table", str(table)])
    assert result.exit_code == 0, result.output
    meta = json.loads(out.read_text())
    assert meta["version"] == "0.2.0" and meta["performance"]["ner_ents_f"] == pytest.approx(1 / 3)
    assert "| `ner` | diseases | NCBI-disease test | P 50.00, R 25.00, F1 33.33 |" in table.read_text()
    unknown = CliRunner().invoke(app, ["evaluate", "release-meta", str(base), str(out), f"tagger={ner}"])
    assert unknown.exit_code == 1 and "'tagger' is not a release component" in unknown.output
