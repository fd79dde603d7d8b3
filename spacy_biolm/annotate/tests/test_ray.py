"""Annotating on Ray (a local 2-worker runtime): the single-process run's output, and a worker
killed midway retried without losing or duplicating documents."""

import json
import os

import pytest

from spacy_biolm.annotate import annotate
from spacy_biolm.annotate.ray_runner import ShardAnnotator, annotate_on_ray

from .conftest import write_inputs

pytest.importorskip("ray")


class DiesOnceAnnotator(ShardAnnotator):
    """Kills its own worker process the first time any actor starts shard ``part02`` (a marker file
    beside the output says it happened), after writing half a shard's temporary file."""

    def annotate(self, shard):
        marker = shard.jsonl.parent.parent / "died-once"
        if shard.input.name == "part02.jsonl" and not marker.exists():
            marker.write_text(str(os.getpid()))
            (shard.jsonl.parent / f".{shard.jsonl.name}.partial-deadbeef").write_text('{"id": "s2-0"}\n')
            os._exit(1)
        return super().annotate(shard)


def _outputs(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.slow  # a Ray cluster and a retried worker: minutes on 2 cores
def test_ray_output_equals_single_process_and_a_dead_worker_is_retried(tmp_path, ner_pipeline_dir):
    inputs = write_inputs(tmp_path / "in", n_shards=6, docs_per_shard=10)
    single = annotate([inputs], tmp_path / "single", ner_pipeline_dir, batch_size=4, show_progress=False)
    summary = annotate_on_ray([inputs], tmp_path / "ray" / "out", ner_pipeline_dir, workers=2, batch_size=4,
                              show_progress=False, annotator_class=DiesOnceAnnotator)
    assert (tmp_path / "ray" / "died-once").exists(), "no worker was killed"
    out = tmp_path / "ray" / "out"
    assert sorted(p.name for p in out.iterdir())[-6:] == [f"part{i:02d}.jsonl" for i in range(6)]
    # The dead attempt's temporary file is the only extra file; a rerun's check removes it.
    leftovers = [p.name for p in out.iterdir() if ".partial-" in p.name]
    assert leftovers in ([], [".part02.jsonl.partial-deadbeef"])
    for name in leftovers:
        (out / name).unlink()
    assert _outputs(out) == _outputs(tmp_path / "single")
    ids = [json.loads(line)["id"] for name, data in _outputs(out).items() for line in data.decode().splitlines()]
    assert ids == [f"s{s}-{i}" for s in range(6) for i in range(10)]
    assert summary["documents"] == single["documents"] == 60 and summary["shards_written"] == 6
