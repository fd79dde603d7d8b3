"""CPU smoke test of the prepared GPU pretraining run (benchmarks/pretrain_gpu.py): a few steps on
a tiny encoder and text, then a second run resuming from the first's brought-back parts."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "pretrain_gpu.py"


@pytest.fixture(scope="module")
def pretrain_gpu():
    spec = importlib.util.spec_from_file_location("pretrain_gpu", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lr_plan_continues_across_runs(pretrain_gpu):
    factor = pretrain_gpu.lr_factor
    assert factor(0, 1000, 0.1, None, 0) == pytest.approx(0.01)
    assert factor(99, 1000, 0.1, None, 0) == pytest.approx(1.0)
    assert factor(550, 1000, 0.1, None, 0) == pytest.approx(0.5)
    # Resumed without AdamW moments at step 550: re-warmed to the plan's value over 10 steps.
    assert factor(550, 1000, 0.1, 550, 10) == pytest.approx(0.05)
    assert factor(560, 1000, 0.1, 550, 10) == pytest.approx(factor(560, 1000, 0.1, None, 0))


def test_run_then_resume_from_brought_back_parts(pretrain_gpu, tiny_encoder, bio_text, tmp_path):
    from transformers import AutoModel

    common = ["--text", str(bio_text), "--heldout", str(bio_text), "--work-dir", str(tmp_path / "work"),
              "--max-seq-length", "32", "--batch-size", "4", "--heldout-sequences", "8", "--plan-steps", "20",
              "--threads", "1", "--device", "cpu", "--no-compile"]
    first = pretrain_gpu.main(["--out", str(tmp_path / "run1"), "--init", str(tiny_encoder), "--max-steps", "3",
                               "--bring-back", str(tmp_path / "back1"), "--compare-baseline", "0.5", *common])
    assert first["this_run"]["steps"] == 3 and first["cumulative"]["steps"] == 3
    assert first["this_run"]["tokens"] > 0 and first["this_run"]["tokens_per_second"] > 0
    assert first["baseline"]["steps"] >= 1 and "speedup_vs_baseline" in first
    assert set(first["heldout"]["before"]) >= {"disc_loss", "gen_loss", "disc_acc"}
    assert "commit" in first["run"]
    back = sorted(p.name for p in (tmp_path / "back1").iterdir())
    assert "summary.json" in back and "MODEL_CARD.md" in back and "export.tar.00" in back
    assert len(back) <= 8 and all(p.stat().st_size <= 16 * 2 ** 20 for p in (tmp_path / "back1").iterdir())
    # The fp16 export loads with transformers.
    encoder = AutoModel.from_pretrained(tmp_path / "run1" / "model")
    assert next(encoder.parameters()).dtype.is_floating_point

    # Resumed from the brought-back parts (weights and counters; fresh AdamW moments), time-boxed.
    second = pretrain_gpu.main(["--out", str(tmp_path / "run2"), "--resume-from", str(tmp_path / "back1"),
                                "--max-steps", "2", *common])
    assert second["this_run"]["first_step"] == 3
    assert second["cumulative"]["steps"] == 5 and second["cumulative"]["runs"] == 2
    assert second["cumulative"]["tokens"] == first["this_run"]["tokens"] + second["this_run"]["tokens"]
    assert second["optimizer_resumed"] is False
    assert second["continued_from"] == str(tiny_encoder)
    # The second run starts from the first's weights: its held-out loss before is the first's after.
    assert second["heldout"]["before"]["disc_loss"] == pytest.approx(first["heldout"]["after"]["disc_loss"], rel=1e-2)
    state = json.loads((tmp_path / "run2" / "state.json").read_text())
    assert state["step"] == 5 and len(state["history"]) == 2

    # On the same machine, from the full output: the optimizer state continues too; a time budget stops it.
    third = pretrain_gpu.main(["--out", str(tmp_path / "run3"), "--resume-from", str(tmp_path / "run2"),
                               "--max-steps", "1000", "--time-budget", "0.01", *common])
    assert third["optimizer_resumed"] is True
    assert third["this_run"]["stopped_by"] == "time_budget" and third["this_run"]["steps"] < 1000
    assert third["cumulative"]["steps"] == 5 + third["this_run"]["steps"]
