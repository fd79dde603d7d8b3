"""Annotating a corpus on one machine: records for every document, rejects kept, and a run killed
midway that resumes into the same output as an uninterrupted one."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from spacy_biolm.annotate import annotate
from spacy_biolm.testing import REPO

from .conftest import write_inputs


def _outputs(folder):
    """Every output file's bytes (no temporary files may be left)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_annotate_writes_a_record_per_document_and_keeps_rejects(tmp_path, ner_pipeline_dir):
    import spacy

    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "a.jsonl").write_text(
        json.dumps({"id": "1", "text": "Germline mutations in BRCA1 cause ovarian cancer ."}) + "\n"
        + "{broken\n" + json.dumps({"id": "2", "text": ""}) + "\n", encoding="utf8")
    (inputs / "b.txt").write_text("Mutations in TP53 cause colorectal cancer .\n", encoding="utf8")
    nlp = spacy.load(ner_pipeline_dir)
    summary = annotate([inputs], tmp_path / "out", nlp, batch_size=2, docbin=True, show_progress=False)
    assert (summary["shards_written"], summary["documents"], summary["rejects"]) == (2, 3, 1)
    records = [json.loads(line) for line in (tmp_path / "out" / "a.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["1", "2"]
    assert records[1] == {"id": "2", "text": "", "entities": [], "relations": [], "sentences": []}
    expected = nlp(records[0]["text"])
    assert [(e["start"], e["end"], e["label"]) for e in records[0]["entities"]] == [
        (e.start_char, e.end_char, e.label_) for e in expected.ents]
    assert records[0]["sentences"] == [{"start": 0, "end": len(records[0]["text"])}]
    assert json.loads((tmp_path / "out" / "a.rejects.jsonl").read_text())["line"] == 2
    assert json.loads((tmp_path / "out" / "b.jsonl").read_text())["id"] == "b.txt:1"
    assert sorted(_outputs(tmp_path / "out")) == ["a.jsonl", "a.rejects.jsonl", "a.spacy", "b.jsonl", "b.spacy"]
    # A rerun finds everything done and writes nothing.
    again = annotate([inputs], tmp_path / "out", nlp, show_progress=False)
    assert (again["shards_written"], again["shards_skipped"]) == (0, 2)


def _annotate_command(inputs, output, model):
    return [sys.executable, "-m", "spacy_biolm", "annotate", str(inputs), str(output), "--model", str(model),
            "--batch-size", "4"]


def test_killed_run_resumes_into_the_output_of_an_uninterrupted_run(tmp_path, ner_pipeline_dir):
    inputs = write_inputs(tmp_path / "in", n_shards=8, docs_per_shard=12)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    killed = tmp_path / "killed"
    process = subprocess.Popen(_annotate_command(inputs, killed, ner_pipeline_dir), cwd=REPO, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        if killed.is_dir() and len([p for p in killed.glob("*.jsonl")]) >= 3:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    assert process.wait() == -signal.SIGKILL, "the run finished before it could be killed"
    finished_before = sorted(p.name for p in killed.glob("*.jsonl"))
    assert 3 <= len(finished_before) < 8
    subprocess.run(_annotate_command(inputs, killed, ner_pipeline_dir), cwd=REPO, env=env, check=True,
                   capture_output=True)
    uninterrupted = tmp_path / "uninterrupted"  # in this process: the same code, one interpreter start less
    annotate([inputs], uninterrupted, ner_pipeline_dir, batch_size=4, show_progress=False)
    resumed = _outputs(killed)
    assert resumed == _outputs(uninterrupted)
    assert sorted(resumed) == [f"part{i:02d}.jsonl" for i in range(8)]
    ids = [json.loads(line)["id"] for name in sorted(resumed) for line in resumed[name].decode().splitlines()]
    assert ids == [f"s{s}-{i}" for s in range(8) for i in range(12)]  # none lost, none twice
    assert sum(len(json.loads(line)["entities"]) for line in resumed["part00.jsonl"].decode().splitlines()) > 0


def test_worker_processes_write_what_one_process_writes(tmp_path, ner_pipeline_dir, monkeypatch):
    from spacy_biolm.annotate import runner

    annotate_shard = runner.annotate_shard
    monkeypatch.setattr(runner, "annotate_shard", lambda *a, **k: {**annotate_shard(*a, **k), "pid": os.getpid()})
    inputs = write_inputs(tmp_path / "in", n_shards=3, docs_per_shard=10)
    finished = []
    forked = annotate([inputs], tmp_path / "forked", ner_pipeline_dir, n_process=2, batch_size=4,
                      show_progress=False, on_shard=finished.append)
    one = annotate([inputs], tmp_path / "one", ner_pipeline_dir, threads=1, batch_size=4, show_progress=False)
    assert _outputs(tmp_path / "forked") == _outputs(tmp_path / "one")
    assert (forked["documents"], forked["shards_written"], len(finished)) == (30, 3, 3)
    assert [c["input"] for c in forked["shards"]] == [c["input"] for c in one["shards"]]
    assert {c["pid"] for c in one["shards"]} == {os.getpid()}
    assert os.getpid() not in {c["pid"] for c in forked["shards"]}, "the shards were annotated in this process"


def test_a_worker_error_is_raised_and_its_shard_is_not_written(tmp_path, ner_pipeline_dir, monkeypatch):
    from spacy_biolm.annotate import runner

    annotate_shard = runner.annotate_shard

    def failing(nlp, shard, *args, **kwargs):
        if shard.input.name == "part01.jsonl":
            raise ValueError(f"cannot annotate {shard.input.name}")
        return annotate_shard(nlp, shard, *args, **kwargs)

    monkeypatch.setattr(runner, "annotate_shard", failing)
    inputs = write_inputs(tmp_path / "in", n_shards=2, docs_per_shard=4)
    with pytest.raises(ValueError, match="cannot annotate part01.jsonl"):
        annotate([inputs], tmp_path / "out", ner_pipeline_dir, n_process=2, show_progress=False)
    assert not (tmp_path / "out" / "part01.jsonl").exists()


def test_bad_arguments_fail_before_loading_anything(tmp_path):
    with pytest.raises(ValueError, match="--n-process and --batch-size must be >= 1"):
        annotate([tmp_path], tmp_path / "out", "no-such-model", n_process=0)
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        annotate([tmp_path / "missing.jsonl"], tmp_path / "out", "no-such-model")
