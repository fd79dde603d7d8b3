"""The pretraining loop: reproducible batches, logs and plot, export that spacy-transformers
loads, clear errors on bad corpora, and resume after a kill that continues the same curve."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from spacy_biolm.errors import PretrainingDataError
from spacy_biolm.pretraining.corpus import batch_indices
from spacy_biolm.pretraining.loop import linear_schedule, pretrain, read_log
from spacy_biolm.pretraining.settings import load_settings

from spacy_biolm.testing import transformer_pipeline


def test_batches_cover_each_epoch_once_and_are_reproducible():
    n, batch = 50, 8
    per_epoch = n // batch
    rows = np.concatenate([batch_indices(n, batch, step, seed=3) for step in range(per_epoch)])
    assert len(set(rows.tolist())) == per_epoch * batch  # no repeats within an epoch
    assert np.array_equal(batch_indices(n, batch, 9, seed=3), batch_indices(n, batch, 9, seed=3))
    assert not np.array_equal(batch_indices(n, batch, 0, seed=3), batch_indices(n, batch, per_epoch, seed=3))


def test_linear_warmup_then_linear_decay():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = linear_schedule(opt, warmup_steps=4, total_steps=10)
    rates = []
    for _ in range(10):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert rates[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert rates[4:] == pytest.approx([1.0, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6])


def test_unknown_setting_is_named(micro_config, tmp_path):
    bad = tmp_path / "bad.cfg"
    bad.write_text(micro_config.read_text().replace("max_steps = 8", "max_step = 8"))
    with pytest.raises(ValueError, match=r"\[training\]: max_step"):
        load_settings(bad)
    old = tmp_path / "old.cfg"
    old.write_text(micro_config.read_text().replace("warmup_fraction = 0.25", "warmup_steps = 2"))
    with pytest.raises(ValueError, match=r"warmup_steps is replaced by warmup_fraction"):
        load_settings(old)
    with pytest.raises(ValueError, match=r"\[export\] release_dtype = 'int8'"):
        load_settings(micro_config, {"export.release_dtype": "int8"})


def test_warmup_is_a_share_of_the_step_budget(micro_config, tmp_path):
    """pretrain_small.cfg warms up over 1% of its steps: a short run reaches its peak rate too."""
    from pathlib import Path

    small = Path(__file__).resolve().parents[3] / "configs" / "pretrain_small.cfg"
    for steps, warmup in ((1_000_000, 10_000), (2_000, 20)):
        assert load_settings(small, {"training.max_steps": steps}).training.warmup_steps() == warmup
    out = tmp_path / "run"
    pretrain(load_settings(micro_config, {"training.warmup_fraction": 0.5}), out, show_progress=False)
    rates = [r["lr"] for r in read_log(out / "train_log.jsonl")]  # the rate after each step
    assert rates[3] == pytest.approx(0.001)  # peak after 4 of 8 steps
    assert rates[-1] == pytest.approx(0.0)  # and zero at max_steps


@pytest.mark.parametrize("problem", ["missing", "empty"])
def test_missing_or_empty_corpus_is_a_clear_error(micro_config, tmp_path, problem):
    text = tmp_path / "corpus.txt"
    if problem == "empty":
        text.write_text("")
    settings = load_settings(micro_config, {"paths.text": str(text)})
    with pytest.raises(PretrainingDataError, match="corpus.txt"):
        pretrain(settings, tmp_path / "run", show_progress=False)


def test_pretrain_logs_plots_and_exports_an_encoder_spacy_transformers_loads(micro_config, tmp_path):
    out = tmp_path / "run"
    summary = pretrain(load_settings(micro_config), out, show_progress=False)
    history = read_log(out / "train_log.jsonl")
    assert [r["step"] for r in history] == list(range(1, 9))
    assert all(np.isfinite(r["loss"]) and 0 <= r["disc_acc"] <= 1 for r in history)
    assert summary["steps"] == 8 and summary["final"]["step"] == 8 and summary["stopped_early"] is False
    assert (out / "pretrain_curve.png").stat().st_size > 1000
    assert json.loads((out / "pretrain_summary.json").read_text())["steps"] == 8

    nlp = transformer_pipeline(out / "model")
    doc = nlp("Germline mutations in BRCA1 cause hereditary breast cancer.")
    hidden = doc._.trf_data.model_output.last_hidden_state
    assert hidden.shape[-1] == 32  # the micro discriminator's width
    from transformers import AutoModelForMaskedLM

    generator = AutoModelForMaskedLM.from_pretrained(out / "generator")
    assert generator.config.hidden_size == 16  # half width (generator_fraction = 0.5)


def test_zero_steps_exports_the_initialised_encoder(micro_config, tmp_path):
    summary = pretrain(load_settings(micro_config, {"training.max_steps": 0}), tmp_path / "run", show_progress=False)
    assert summary["steps"] == 0 and summary["final"] == {}
    assert not (tmp_path / "run" / "corpus").exists()
    from transformers import AutoModel

    assert AutoModel.from_pretrained(tmp_path / "run" / "model").config.hidden_size == 32


def _run_cli(config: Path, out: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "spacy_biolm", "pretrain", "run", str(config), str(out), *extra,
           "--training.max_steps", "40", "--training.checkpoint_every", "1000"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_killed_run_resumes_with_the_same_loss_curve(micro_config, tmp_path):
    reference = _run_cli(micro_config, tmp_path / "straight")
    output, _ = reference.communicate(timeout=300)
    assert reference.returncode == 0, output

    killed = _run_cli(micro_config, tmp_path / "killed")
    log = tmp_path / "killed" / "train_log.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and len(read_log(log)) < 12:
        time.sleep(0.05)
    killed.send_signal(signal.SIGTERM)
    output, _ = killed.communicate(timeout=120)
    assert killed.returncode == 130, output
    stopped_at = len(read_log(log))
    assert 12 <= stopped_at < 40, "the run must have been stopped part-way"
    # The stop exported the encoder so far next to the checkpoint, and summarised the run so far.
    assert (tmp_path / "killed" / "model" / "model.safetensors").is_file()
    assert (tmp_path / "killed" / "generator" / "model.safetensors").is_file()
    stopped = json.loads((tmp_path / "killed" / "pretrain_summary.json").read_text())
    assert stopped["stopped_early"] is True and stopped["steps"] == stopped_at

    resumed = _run_cli(micro_config, tmp_path / "killed", "--resume")
    output, _ = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, output
    straight = read_log(tmp_path / "straight" / "train_log.jsonl")
    continued = read_log(log)
    assert [r["step"] for r in continued] == list(range(1, 41))
    for a, b in zip(straight, continued):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-5), f"step {a['step']} diverged"
        assert a["lr"] == pytest.approx(b["lr"])


def test_continued_pretraining_starts_from_the_export_and_keeps_the_vocabulary(micro_config, tmp_path, bio_text):
    from transformers import AutoModel, AutoTokenizer

    first = tmp_path / "first"
    pretrain(load_settings(micro_config), first, show_progress=False)
    second_text = tmp_path / "second.txt"
    second_text.write_text("Mutations of EGFR predict response to gefitinib in lung cancer.\n\n" * 40)
    plus = tmp_path / "plus"
    settings = load_settings(
        micro_config,
        {"paths.init": str(first), "paths.vocab": "", "paths.text": str(second_text), "training.max_steps": 0},
    )
    pretrain(settings, plus, show_progress=False)
    # Zero steps: the export is exactly the model continued from, with its vocabulary.
    a, b = AutoModel.from_pretrained(first / "model"), AutoModel.from_pretrained(plus / "model")
    for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(pa, pb), name
    assert AutoTokenizer.from_pretrained(plus / "model").get_vocab() == AutoTokenizer.from_pretrained(first / "model").get_vocab()

    summary = pretrain(load_settings(micro_config, {"paths.init": str(first), "paths.vocab": "",
                                                    "paths.text": str(second_text)}), plus, show_progress=False)
    assert summary["continued_from"] == str(first) and summary["steps"] == 8
    changed = AutoModel.from_pretrained(plus / "model")
    assert not torch.equal(changed.embeddings.word_embeddings.weight, a.embeddings.word_embeddings.weight)


def test_continued_pretraining_refuses_a_different_vocabulary(micro_config, tmp_path, bio_text):
    from spacy_biolm.pretraining.vocab import train_vocab

    first = tmp_path / "first"
    pretrain(load_settings(micro_config, {"training.max_steps": 0}), first, show_progress=False)
    other_vocab = tmp_path / "other_vocab"
    train_vocab([bio_text], other_vocab, vocab_size=120)
    settings = load_settings(micro_config, {"paths.init": str(first), "paths.vocab": str(other_vocab)})
    with pytest.raises(ValueError, match="keeps the vocabulary"):
        pretrain(settings, tmp_path / "plus", show_progress=False)
    with pytest.raises(FileNotFoundError, match="no exported encoder"):
        pretrain(load_settings(micro_config, {"paths.init": str(tmp_path / "nothing")}), tmp_path / "x", show_progress=False)


def test_pretrain_leaves_the_process_group_it_joined_and_only_that_one(monkeypatch, tmp_path):
    """Under torchrun a process that exits still in its Gloo group can abort at interpreter exit
    (SIGABRT), failing the whole run: pretrain leaves the group it joined, even on an error, and
    leaves a group its caller joined to the caller."""
    from spacy_biolm.pretraining import loop

    group = {"joined": False, "left": 0}
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setattr(loop.dist, "is_initialized", lambda: group["joined"])
    monkeypatch.setattr(loop.dist, "destroy_process_group", lambda: group.update(joined=False, left=group["left"] + 1))

    def joins_then_fails(*args):
        group["joined"] = True
        raise RuntimeError("stopped mid-run")

    monkeypatch.setattr(loop, "_pretrain", joins_then_fails)
    with pytest.raises(RuntimeError, match="stopped mid-run"):
        loop.pretrain(None, tmp_path)
    assert group == {"joined": False, "left": 1}
    group["joined"] = True  # the caller's group
    monkeypatch.setattr(loop, "_pretrain", lambda *args: {"steps": 0})
    assert loop.pretrain(None, tmp_path) == {"steps": 0}
    assert group == {"joined": True, "left": 1}


def test_torchrun_trains_data_parallel_replicas(micro_config, tmp_path, bio_text):
    """Two CPU processes (Gloo) under torchrun: one model, one log, global token counts; rank 0
    evaluates the held-out text while the other waits."""
    out = tmp_path / "ddp"
    heldout = tmp_path / "heldout.txt"
    heldout.write_text(bio_text.read_text()[:2000])
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
           "-m", "spacy_biolm", "pretrain", "run", str(micro_config), str(out), "--training.max_steps", "6",
           "--training.batch_size", "4", "--training.checkpoint_every", "3",
           "--paths.heldout", str(heldout), "--training.eval_every", "3"]
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads((out / "pretrain_summary.json").read_text())
    assert summary["processes"] == 2 and summary["steps"] == 6
    assert [r["step"] for r in read_log(out / "train_log.jsonl")] == list(range(1, 7))
    state = torch.load(out / "checkpoint.pt", map_location="cpu", weights_only=False)
    assert len(state["rng_per_rank"]) == 2  # each rank's masking randomness is saved
    assert (out / "model" / "model.safetensors").is_file()
    assert [r["step"] for r in read_log(out / "heldout_log.jsonl")] == [0, 3, 6]


def test_albert_pretrains_on_segment_pairs_and_exports_an_albert_encoder(micro_config, tmp_path):
    config = tmp_path / "albert.cfg"
    text = micro_config.read_text().replace("[model]\n", '[model]\narchitecture = "albert"\n')
    text = text.replace("generator_fraction = 0.5\n", "").replace("[objective]\n", "[objective]\nsop_weight = 1.0\n")
    config.write_text(text)
    out = tmp_path / "albert"
    heldout = tmp_path / "heldout.txt"
    heldout.write_text(Path(load_settings(config).paths.text).read_text()[:3000])
    summary = pretrain(load_settings(config, {"paths.heldout": str(heldout)}), out, show_progress=False)
    assert summary["architecture"] == "albert" and summary["steps"] == 8
    assert {"mlm_loss", "sop_acc"} <= set(summary["heldout"]) and summary["heldout"]["step"] == 8
    assert json.loads((out / "heldout" / "meta.json").read_text())["segment_pairs"] is True
    history = read_log(out / "train_log.jsonl")
    assert all(0 <= r["sop_acc"] <= 1 and np.isfinite(r["mlm_loss"]) for r in history)
    assert json.loads((out / "corpus" / "meta.json").read_text())["segment_pairs"] is True
    assert (out / "pretrain_curve.png").stat().st_size > 1000
    assert (out / "model" / "spiece.model").is_file() and not (out / "generator").exists()
    from transformers import AutoModel

    assert AutoModel.from_pretrained(out / "model").config.model_type == "albert"
    # Continued pretraining works for ALBERT too.
    plus = pretrain(load_settings(config, {"paths.init": str(out), "paths.vocab": "", "training.max_steps": 2}),
                    tmp_path / "albert_plus", show_progress=False)
    assert plus["steps"] == 2 and plus["continued_from"] == str(out)


def test_held_out_evaluations_are_fixed_and_logged_apart(micro_config, tmp_path, bio_text):
    from spacy_biolm.pretraining.loop import _evaluate_heldout
    from spacy_biolm.pretraining.objectives import get_objective
    from transformers import AutoTokenizer
    from contextlib import nullcontext

    heldout = tmp_path / "heldout.txt"
    heldout.write_text(bio_text.read_text()[-4000:])
    out = tmp_path / "run"
    settings = load_settings(micro_config, {"paths.heldout": str(heldout), "training.eval_every": 3,
                                            "training.heldout_sequences": 10})
    summary = pretrain(settings, out, show_progress=False)
    evaluations = read_log(out / "heldout_log.jsonl")
    assert [r["step"] for r in evaluations] == [0, 3, 6, 8]
    assert {"loss", "gen_loss", "disc_loss", "gen_acc", "disc_acc"} <= set(evaluations[0])
    assert summary["heldout"] == evaluations[-1]
    assert "heldout_loss" not in read_log(out / "train_log.jsonl")[0]  # training records stay as they were

    # Same model, same held-out sample: the same numbers, whatever the training randomness did.
    from spacy_biolm.pretraining.corpus import PackedCorpus
    from spacy_biolm.pretraining.warm_start import resolve_init

    tokenizer = AutoTokenizer.from_pretrained(out / "model")
    objective = get_objective(settings, tokenizer)
    model = objective.build_model(resolve_init(str(out)))
    corpus = PackedCorpus.load(out / "heldout")
    special = torch.tensor(sorted(set(tokenizer.all_special_ids)))
    args = (objective, model, corpus, settings, torch.device("cpu"), nullcontext(), special)
    first = _evaluate_heldout(*args)
    torch.manual_seed(123)
    assert _evaluate_heldout(*args) == first
    assert model.training  # evaluation leaves the training mode as it found it
    assert first["disc_loss"] == pytest.approx(evaluations[-1]["disc_loss"], rel=1e-4)


def test_summary_reports_throughput_and_model_flops_utilisation():
    from spacy_biolm.pretraining.loop import _throughput

    model = torch.nn.Sequential(torch.nn.Embedding(100, 8), torch.nn.Linear(8, 10))
    cpu = _throughput(model, n_tokens=1000, seconds=2.0, device=torch.device("cpu"), peak_tflops=100.0, world=1)
    assert cpu == {"tokens_per_second": 500.0, "flops_parameters": 90}  # embeddings do no matmuls
    gpu = _throughput(model, n_tokens=10**9, seconds=1.0, device=torch.device("cuda"), peak_tflops=1.0, world=2)
    assert gpu["model_flops_utilization"] == pytest.approx(6 * 90 * 10**9 / 2e12)
    assert "model_flops_utilization" not in _throughput(model, 10, 1.0, torch.device("cuda"), None, 1)


def test_release_export_writes_a_half_precision_copy_that_loads(micro_config, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    out = tmp_path / "run"
    pretrain(load_settings(micro_config, {"training.max_steps": 2, "export.release_dtype": "float16"}), out,
             show_progress=False)
    full, half = AutoModel.from_pretrained(out / "model"), AutoModel.from_pretrained(out / "release")
    from safetensors.torch import load_file

    tensors = load_file(str(out / "release" / "model.safetensors"))
    assert {t.dtype for t in tensors.values()} == {torch.float16}
    assert (out / "release" / "model.safetensors").stat().st_size < 0.6 * (out / "model" / "model.safetensors").stat().st_size
    for (name, a), b in zip(full.state_dict().items(), half.state_dict().values()):
        assert torch.allclose(a, b.float(), atol=1e-3), name
    assert AutoTokenizer.from_pretrained(out / "release").get_vocab() == AutoTokenizer.from_pretrained(out / "model").get_vocab()
    assert json.loads((out / "release" / "config.json").read_text())["torch_dtype"] == "float16"


def test_metrics_are_averaged_on_log_steps_and_a_non_finite_loss_names_its_step():
    from spacy_biolm.pretraining.loop import _average

    records = [{"loss": torch.tensor(v), "disc_acc": torch.tensor(0.5)} for v in (1.0, 2.0, 3.0)]
    assert _average(records, step=10) == {"loss": 2.0, "disc_acc": 0.5}
    records[1]["loss"] = torch.tensor(float("nan"))
    with pytest.raises(FloatingPointError, match="nan at step 9"):
        _average(records, step=10)


def test_a_stop_ends_the_run_like_max_steps_and_resume_finishes_it(micro_config, tmp_path, bio_text, monkeypatch):
    from spacy_biolm.pretraining import loop

    heldout = tmp_path / "heldout.txt"
    heldout.write_text(bio_text.read_text()[:3000])
    settings = load_settings(micro_config, {"paths.heldout": str(heldout), "training.log_every": 4})
    steps_seen = []

    def stop_at_step_3(self, device):
        steps_seen.append(None)
        return len(steps_seen) == 3

    monkeypatch.setattr(loop._StopFlag, "agreed", stop_at_step_3)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt, match="stopped at step 3"):
        pretrain(settings, out, show_progress=False)
    summary = json.loads((out / "pretrain_summary.json").read_text())
    assert summary["stopped_early"] is True and summary["steps"] == 3
    assert [r["step"] for r in read_log(out / "train_log.jsonl")] == [3]  # the partial window is logged
    assert [r["step"] for r in read_log(out / "heldout_log.jsonl")] == [0, 3]
    assert (out / "model" / "model.safetensors").is_file() and (out / "pretrain_curve.png").is_file()

    monkeypatch.setattr(loop._StopFlag, "agreed", lambda self, device: False)
    summary = pretrain(settings, out, resume=True, show_progress=False)
    assert summary["stopped_early"] is False and summary["steps"] == 8
    assert [r["step"] for r in read_log(out / "train_log.jsonl")] == [3, 4, 8]
    assert [r["step"] for r in read_log(out / "heldout_log.jsonl")] == [0, 3, 8]
