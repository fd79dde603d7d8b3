"""The release's meta.json and README's score block from the task evaluations."""

import json

import pytest

from spacy_biolm.evaluation.release_scores import release_rows, release_table
from spacy_biolm.release_meta.meta import release_meta


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


def test_release_meta_names_its_encoder_and_lists_its_pretraining_text_with_licences(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    run = tmp_path / "run"
    (run / "model").mkdir(parents=True)
    _write(run / "model" / "config.json", {"model_type": "electra"})
    _write(run / "model" / "pretraining_settings.json", {"training": {"batch_size": 16}, "corpus": {"max_seq_length": 128}})
    _write(run / "pretrain_summary.json", {
        "architecture": "electra", "steps": 300, "continued_from": "no_such_checkpoint_package",
        "sources": [{"name": "elife.txt.xz", "path": "elife.txt.xz", "sha1": "abc", "licences": {"cc-by-4.0": 5}}],
    })
    base = _write(tmp_path / "base.json", {"name": "bio_electra", "description": "NER on {encoder}.",
                                           "sources": [{"name": "NCBI-disease — ner"}]})
    ner = _write(tmp_path / "ner.json", {"ents_p": 0.5, "ents_r": 0.25, "ents_f": 1 / 3})
    out = tmp_path / "meta.json"
    args = ["evaluate", "release-meta", str(base), str(out), f"ner={ner}"]
    result = CliRunner().invoke(app, args + ["--encoder", str(run / "model")])
    assert result.exit_code == 0, result.output
    meta = json.loads(out.read_text())
    assert meta["description"] == (
        "NER on no_such_checkpoint_package continued with 300 steps of ELECTRA replaced-token detection "
        "(16 sequences of up to 128 WordPieces each) on elife.txt.xz.")
    assert [source["name"] for source in meta["sources"]] == [
        "no_such_checkpoint_package — encoder checkpoint", "elife.txt.xz — encoder pretraining text", "NCBI-disease — ner"]
    assert meta["sources"][1]["license"] == "cc-by-4.0 (5 documents)"
    missing = CliRunner().invoke(app, args)
    assert missing.exit_code == 1 and "--encoder" in missing.output

    # Components that fine-tuned different encoders: each encoder named with its components, each source once.
    published = tmp_path / "published"
    published.mkdir()
    _write(published / "config.json", {"model_type": "bert"})
    _write(published / "encoder_source.json", {"init": "some_pkg", "package": "some-pkg", "version": "1.0", "license": "Apache-2.0"})
    hoc = _write(tmp_path / "hoc.json", {"cats_micro_f": 0.7, "cats_macro_f": 0.6})
    args = ["evaluate", "release-meta", str(base), str(out), f"ner={ner}", f"hallmarks={hoc}"]
    both = CliRunner().invoke(app, args + ["--encoder", f"ner={run / 'model'}", "--encoder", f"hallmarks={published}"])
    assert both.exit_code == 0, both.output
    meta = json.loads(out.read_text())
    assert meta["description"].startswith("NER on no_such_checkpoint_package continued with 300 steps")
    assert meta["description"].endswith("on elife.txt.xz (ner) and the encoder of package some-pkg 1.0 (hallmarks).")
    assert [source["name"] for source in meta["sources"]] == [
        "no_such_checkpoint_package — encoder checkpoint", "elife.txt.xz — encoder pretraining text",
        "some-pkg 1.0 — encoder checkpoint", "NCBI-disease — ner"]
    unknown = CliRunner().invoke(app, args + ["--encoder", f"ner,hoc={run / 'model'}"])
    assert unknown.exit_code == 1 and "--encoder names components with no test scores: hoc" in unknown.output


def test_release_meta_command_writes_the_results_file(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    base = _write(tmp_path / "base.json", {"name": "bio_electra"})
    ner = _write(tmp_path / "ner.json", {"ents_p": 0.5, "ents_r": 0.5, "ents_f": 0.5})
    cnn = _write(tmp_path / "cnn.json", {"ents_f": 0.4})
    out, results = tmp_path / "meta.json", tmp_path / "results" / "release.json"
    args = ["evaluate", "release-meta", str(base), str(out), f"ner={ner}", "--results", str(results),
            "--baseline", f"ner=spaCy CNN={cnn}", "--run", "profile=default", "--run", "encoder=a/b"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    written = json.loads(results.read_text())
    assert written["encoder"] == "a/b" and written["components"][0]["at_or_above_baseline"] is True
    assert written["device"].startswith("cpu (")  # no --run device: this machine, from gpu_id (-1)
    assert "Beside the baselines" in json.loads(out.read_text())["notes"]
    bad = CliRunner().invoke(app, ["evaluate", "release-meta", str(base), str(out), f"ner={ner}", "--baseline", f"ner={cnn}"])
    assert bad.exit_code == 1 and "COMPONENT=TITLE=PATH" in bad.output


def test_readme_scores_are_the_ones_results_release_json_holds():
    from spacy_biolm.release_meta.readme import SCORES_END, SCORES_START, readme_scores
    from spacy_biolm.project_steps import replace_generated
    from spacy_biolm.testing import REPO

    readme = (REPO / "README.md").read_text(encoding="utf8")
    generated = replace_generated(readme, readme_scores(REPO / "results" / "release.json"), SCORES_START, SCORES_END)
    assert generated == readme, "README's scores differ from results/release.json: run `spacy-biolm docs scores-table`"


def test_scores_table_writes_another_profiles_table_to_a_file(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app
    from spacy_biolm.release_meta.readme import readme_scores
    from spacy_biolm.testing import REPO

    results, output = REPO / "projects" / "full-profile" / "results" / "full_gpu" / "release.json", tmp_path / "scores.md"
    result = CliRunner().invoke(app, ["docs", "scores-table", str(results), "--output", str(output)])
    assert result.exit_code == 0, result.output
    table = output.read_text(encoding="utf8")
    assert table == readme_scores(results) and table.startswith("Run: profile full, device ")
    for other_run in REPO.glob("results/*/release.json"):  # every committed run's table is its release.json's
        assert (other_run.parent / "scores.md").read_text(encoding="utf8") == readme_scores(other_run), \
            f"{other_run.parent}/scores.md differs from its release.json: run `spacy-biolm docs scores-table ... --output`"
    missing = CliRunner().invoke(app, ["docs", "scores-table", str(tmp_path / "none.json"), "--output", str(output)])
    assert missing.exit_code == 1 and "none.json not found" in " ".join(missing.output.split())
