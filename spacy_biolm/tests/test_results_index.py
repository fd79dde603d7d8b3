"""results/README.md, the generated index of result files, and the run record each result keeps."""

import json
import os
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from spacy_biolm.cli import app
from spacy_biolm.results_index import INDEX_PATH, backfill_records, index_rows, results_index, write_results_index
from spacy_biolm.run_record import (COMMIT_ENV, add_fields, git_log_record, read_record, read_run_comment, run_comment,
                                    run_record, stamp_json, with_run_comment, write_json)
from spacy_biolm.testing import REPO

DESCRIPTIONS = """\
results/release.json:
  what: The release's scores
  status: current
benchmarks/results/speed.png:
  what: Words per second
projects/demo/results/old.json:
  what: An older run of the demo
  status: superseded
projects/demo/results/logs/*:
  what: Training logs
projects/demo/results/table.md: A table
"""


def _git(repo, *args, date="2024-05-06T07:08:09Z"):
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    done = subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository with a few result files, committed once."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.delenv(COMMIT_ENV, raising=False)
    root = tmp_path / "repo"
    for rel, text in [
        ("results/release.json", json.dumps({"profile": "default", "device": "cpu", "components": []})),
        ("results/descriptions.yml", DESCRIPTIONS),
        ("benchmarks/results/speed.json", json.dumps({"description": "Speed on CPU. More words here.", "machine": "x"})),
        ("benchmarks/results/speed.png", "png"),
        ("projects/demo/results/old.json", json.dumps({"run": {"profile": "full", "device": "NVIDIA H100"}, "f": 1})),
        ("projects/demo/results/table.md", "| a |\n|---|\n| 1 |\n" + run_comment({"commit": "abc1234def", "date": "2024-01-02T00:00:00Z"})),
        ("projects/demo/results/logs/a.log", "log a"),
        ("projects/demo/results/logs/b.log", "log b"),
        ("released/enc/pretrain_summary.json", json.dumps({"description": "Pretraining summary", "steps": 3})),
        ("released/enc/config.json", json.dumps({"model_type": "electra"})),  # the model, not a result
    ]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf8")
    _git(root, "init", "-q")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results")
    return root


def test_run_record_names_the_commit_marks_a_dirty_tree_and_is_none_outside_git(repo, tmp_path):
    head = _git(repo, "rev-parse", "HEAD")
    record = run_record(profile="full", device="cuda", cwd=repo)
    assert record["commit"] == head and record["profile"] == "full" and record["device"] == "cuda"
    assert record["date"].endswith("Z") and record["date"][:2] == "20"
    (repo / "results" / "release.json").write_text("{}", encoding="utf8")
    assert run_record(cwd=repo)["commit"] == head + "-dirty"
    outside = tmp_path / "plain"
    outside.mkdir()
    assert run_record(cwd=outside)["commit"] is None  # never a crash outside a checkout
    assert set(run_record(cwd=outside)) == {"commit", "date"}


def test_run_record_takes_the_commit_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(COMMIT_ENV, "feedbeef")
    assert run_record(cwd=tmp_path)["commit"] == "feedbeef"


def test_run_record_names_the_profile_the_profile_runner_sets(monkeypatch, tmp_path):
    from spacy_biolm.run_record import PROFILE_ENV, run_record

    monkeypatch.delenv(PROFILE_ENV, raising=False)
    assert "profile" not in run_record(cwd=tmp_path)
    monkeypatch.setenv(PROFILE_ENV, "full")
    assert run_record(cwd=tmp_path)["profile"] == "full"
    assert run_record(profile="default", cwd=tmp_path)["profile"] == "default"  # the writer's own word wins


def test_a_runs_own_record_replaces_a_backfilled_one():
    from spacy_biolm.run_record import stamp_json

    backfilled = {"score": 1, "run": {"commit": "old", "date": "2026-01-01T00:00:00Z", "source": "git log"}}
    stamped = stamp_json(backfilled, {"commit": "new", "date": "2026-11-28T00:00:00Z"})
    assert stamped["run"] == {"commit": "new", "date": "2026-11-28T00:00:00Z"}


def test_stamp_json_merges_into_an_existing_run_and_rewrites_a_file(tmp_path):
    record = {"commit": "abc", "date": "2024-01-01T00:00:00Z"}
    stamped = stamp_json({"scores": 1, "run": {"profile": "full"}}, record)
    assert stamped == {"scores": 1, "run": {"profile": "full", "commit": "abc", "date": "2024-01-01T00:00:00Z"}}
    path = tmp_path / "r.json"
    write_json(path, {"scores": 2}, profile="default")
    written = json.loads(path.read_text())
    assert written["scores"] == 2 and written["run"]["profile"] == "default" and "commit" in written["run"]
    assert read_record(path) == written["run"]
    stamp_json(path, record)
    assert json.loads(path.read_text())["run"] == {**record, "profile": "default"}
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(TypeError, match="not an object"):
        stamp_json(tmp_path / "list.json", record)
    with pytest.raises(TypeError, match="not a mapping"):
        stamp_json({"run": "fast"}, record)


def test_fields_added_to_a_result_file_keep_its_run_record(tmp_path):
    path = tmp_path / "release.json"
    written = write_json(path, {"scores": 2}, profile="default")
    assert add_fields(path, sample={"text": "x"}) == {**written, "sample": {"text": "x"}}
    assert json.loads(path.read_text())["run"] == written["run"]
    with pytest.raises(FileNotFoundError, match="missing.json does not exist"):
        add_fields(tmp_path / "missing.json", sample={})
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(TypeError, match="not an object: cannot add sample"):
        add_fields(tmp_path / "list.json", sample={})


def test_a_markdown_table_names_its_run_on_its_last_line():
    record = {"commit": "abc", "date": "2024-01-01T00:00:00Z", "profile": "full"}
    text = with_run_comment("| a |\n|---|\n| 1 |\n", record)
    assert text.endswith("| 1 |\n<!-- run: commit abc, date 2024-01-01T00:00:00Z, profile full -->\n")
    assert read_run_comment(text) == record
    assert with_run_comment(text, {"commit": "def", "date": "d"}).count("<!-- run:") == 1  # replaced, not added
    assert with_run_comment("| a |\n", None) == "| a |\n"
    devices = {"commit": "abc", "date": "d", "profile": "full", "device": "cpu (x86_64, 2 cores)", "source": "git log"}
    assert read_run_comment(with_run_comment("| a |\n", devices)) == devices


def test_git_log_record_is_the_commit_that_made_the_content(repo):
    head = _git(repo, "rev-parse", "HEAD")
    path = repo / "results" / "release.json"
    assert git_log_record(path, cwd=repo) == {"commit": head, "date": "2024-05-06T07:08:09Z", "source": "git log"}
    _git(repo, "mv", "results/release.json", "results/moved.json")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "move", date="2025-01-01T00:00:00Z")
    assert git_log_record(repo / "results" / "moved.json", cwd=repo)["commit"] == head  # a move is not a run
    (repo / "results" / "moved.json").write_text("{}")
    assert git_log_record(repo / "results" / "moved.json", cwd=repo) is None  # changed since: git cannot say


def test_the_index_lists_each_result_file_with_its_run_and_status(repo):
    head = _git(repo, "rev-parse", "HEAD")
    rows = {row.path: row for row in index_rows(repo)[0]}
    assert sorted(rows) == ["benchmarks/results/speed.json", "benchmarks/results/speed.png",
                            "projects/demo/results/logs/*.log", "projects/demo/results/old.json",
                            "projects/demo/results/table.md", "released/enc/pretrain_summary.json", "results/release.json"]
    release = rows["results/release.json"]
    assert (release.what, release.status, release.profile, release.device) == ("The release's scores", "current", "default", "cpu")
    assert (release.commit, release.date, release.source) == (head, "2024-05-06T07:08:09Z", "git log")
    assert rows["benchmarks/results/speed.json"].what == "Speed on CPU."  # its own description, first sentence
    assert rows["projects/demo/results/old.json"].status == "superseded"
    assert rows["projects/demo/results/old.json"].device == "NVIDIA H100"
    assert rows["projects/demo/results/logs/*.log"].n_files == 2
    assert (rows["projects/demo/results/logs/*.log"].commit, rows["projects/demo/results/logs/*.log"].source) == (head, "git log")
    assert rows["projects/demo/results/logs/*.log"].status == "experiment"
    table = rows["projects/demo/results/table.md"]
    assert (table.commit, table.source, table.status) == ("abc1234def", None, "experiment")
    text, unused = results_index(repo)
    assert unused == []
    assert text.index("## results/") < text.index("## benchmarks/results/") < text.index("## released/enc/") < text.index("## projects/")
    assert f"| [release.json](release.json) | The release's scores | `{head[:7]}`* | 2024-05-06* | default | cpu | current |" in text
    assert "| [logs/*.log](../projects/demo/results/logs) (2 logs) | Training logs |" in text
    assert "| [table.md](../projects/demo/results/table.md) | " in text and "`abc1234` | 2024-01-02 |" in text
    assert "[config.json]" not in text and "[descriptions.yml]" not in text
    assert text == results_index(repo)[0]  # deterministic


def test_a_result_file_without_a_description_fails_the_index(repo):
    (repo / "results" / "mystery.json").write_text(json.dumps({"f": 1}))
    with pytest.raises(ValueError, match="named by nothing.*results/mystery.json"):
        index_rows(repo)
    result = CliRunner().invoke(app, ["docs", "results-index", str(repo)])
    assert result.exit_code == 1 and "results/mystery.json" in result.output


def test_check_detects_a_stale_index_and_the_cli_writes_it(repo):
    runner = CliRunner()
    assert runner.invoke(app, ["docs", "results-index", str(repo), "--check"]).exit_code == 1  # none yet
    assert runner.invoke(app, ["docs", "results-index", str(repo)]).exit_code == 0
    assert (repo / INDEX_PATH).is_file()
    assert runner.invoke(app, ["docs", "results-index", str(repo), "--check"]).exit_code == 0
    assert write_results_index(repo, check=True) == (False, [])
    (repo / "results" / "speed_notes.md").write_text("| b |\n")
    (repo / "results" / "descriptions.yml").write_text(DESCRIPTIONS + "results/speed_notes.md:\n  what: Notes\n")
    check = runner.invoke(app, ["docs", "results-index", str(repo), "--check"])
    assert check.exit_code == 1 and "stale" in check.output
    (repo / "results" / "descriptions.yml").write_text(DESCRIPTIONS + "results/speed_notes.md: Notes\nresults/gone.json: Gone\n")
    result = runner.invoke(app, ["docs", "results-index", str(repo)])
    assert result.exit_code == 0 and "results/gone.json" in result.output  # a glob that matches nothing is named


def test_backfill_writes_the_git_log_record_into_json_results(repo):
    head = _git(repo, "rev-parse", "HEAD")
    (repo / "results" / "new.json").write_text(json.dumps({"f": 1}))
    (repo / "results" / "descriptions.yml").write_text(DESCRIPTIONS + "results/new.json: New\n")
    written, undated = backfill_records(repo)
    assert "results/release.json" in written and "benchmarks/results/speed.json" in written
    assert undated == ["results/new.json"]  # never committed: git cannot date it
    release = json.loads((repo / "results" / "release.json").read_text())
    assert release["run"] == {"commit": head, "date": "2024-05-06T07:08:09Z", "source": "git log"}
    assert release["components"] == [] and release["profile"] == "default"
    old = json.loads((repo / "projects" / "demo" / "results" / "old.json").read_text())
    assert old["run"]["profile"] == "full" and old["run"]["commit"] == head  # merged into its run
    assert json.loads((repo / "released" / "enc" / "config.json").read_text()) == {"model_type": "electra"}
    assert backfill_records(repo)[0] == []  # what records a run is left alone
    rows = {row.path: row for row in index_rows(repo)[0]}
    assert rows["results/release.json"].source == "git log"  # the record says where it came from
    png = rows["benchmarks/results/speed.png"]  # a plot takes the record of the JSON it was drawn from
    assert (png.commit, png.source) == (head, "speed.json")


def test_results_readme_is_current():
    """results/README.md is what `spacy-biolm docs results-index` writes from the result files.

    Skipped until the index exists (the lead generates it after the moves and the backfill), and
    where git history is not whole (a shallow clone dates every file to one commit)."""
    if not (REPO / INDEX_PATH).is_file():
        pytest.skip(f"{INDEX_PATH} not generated yet: run `spacy-biolm docs results-index --backfill`")
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO, capture_output=True, text=True)
    if shallow.returncode != 0 or shallow.stdout.strip() != "false":
        pytest.skip("not a full git checkout: the index's git-log dates cannot be checked")
    text, _ = results_index(REPO)
    assert (REPO / INDEX_PATH).read_text(encoding="utf8") == text, \
        f"{INDEX_PATH} is stale: run `spacy-biolm docs results-index` (and describe new files in results/descriptions.yml)"
