"""The benchmark scripts run end to end on micro inputs and write the result schema the notes
and README quote (numbers from such tiny runs mean nothing; the shape of the output does)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from spacy_biolm.pretraining.tests.conftest import MICRO_CONFIG, write_bio_text

from .conftest import REPO


def _micro_inputs(tmp_path: Path):
    from spacy_biolm.pretraining.vocab import train_vocab

    text = write_bio_text(tmp_path / "text.txt", n_docs=60)
    vocab = tmp_path / "vocab"
    train_vocab([text], vocab, vocab_size=200)
    config = tmp_path / "micro.cfg"
    config.write_text(MICRO_CONFIG.format(text=text, vocab=vocab), encoding="utf8")
    return config, text, vocab


def test_pretrain_throughput_compares_ours_with_the_reference_loop(tmp_path):
    config, text, vocab = _micro_inputs(tmp_path)
    output = tmp_path / "throughput.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "pretrain_throughput.py"), "--config", str(config),
           "--text", str(text), "--vocab", str(vocab), "--steps", "4", "--warmup-steps", "1",
           "--memory-steps", "1", "--device", "cpu", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert set(report["sides"]) == {"ours", "reference"}
    for side in report["sides"].values():
        assert side["tokens_per_second"] > 0 and side["peak_memory_mib"] >= side["step_memory_mib"] >= 0
        assert len(side["losses"]) == 5  # warm-up + timed steps
    # Same initial weights and the same first batch: the first losses agree up to masking noise.
    first = [side["losses"][0] for side in report["sides"].values()]
    assert abs(first[0] - first[1]) / first[1] < 0.1
    ratio = report["sides"]["ours"]["tokens_per_second"] / report["sides"]["reference"]["tokens_per_second"]
    assert abs(report["speedup_tokens_per_second"] - ratio) < 1e-2
    assert output.with_suffix(".png").stat().st_size > 1000


def test_pretrain_memory_runs_a_corpus_and_its_tenfold(tmp_path):
    config, text, vocab = _micro_inputs(tmp_path)
    output = tmp_path / "memory.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "pretrain_memory.py"), "--config", str(config), "--text",
           str(text), "--vocab", str(vocab), "--steps", "2", "--factor", "3", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report["corpus_ratio"] >= 2.9  # three copies (a document may pack differently at a seam)
    assert report["runs"]["3x"]["sequences"] >= 3 * report["runs"]["1x"]["sequences"] - 3
    assert report["peak_rss_ratio"] == round(
        report["runs"]["3x"]["peak_rss_mib"] / report["runs"]["1x"]["peak_rss_mib"], 3
    )
