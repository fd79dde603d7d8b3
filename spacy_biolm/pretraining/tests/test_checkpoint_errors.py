"""Resuming from a bad checkpoint is an error naming the file, raised before the run's logs or
exports are touched: a truncated checkpoint, one of another model, a half-written first one."""

import shutil

import pytest

from spacy_biolm.errors import CheckpointError
from spacy_biolm.pretraining.loop import CHECKPOINT_FILE, LOG_FILE, pretrain
from spacy_biolm.pretraining.settings import load_settings


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, bio_text, vocab_dir):
    from spacy_biolm.testing import MICRO_PRETRAINING_CONFIG

    work = tmp_path_factory.mktemp("checkpoint_run")
    config = work / "micro.cfg"
    config.write_text(MICRO_PRETRAINING_CONFIG.format(text=bio_text, vocab=vocab_dir), encoding="utf8")
    pretrain(load_settings(config, {}), work / "run", show_progress=False)
    return config, work / "run"


def _copy(run, tmp_path):
    shutil.copytree(run, tmp_path / "run")
    return tmp_path / "run"


def test_a_truncated_checkpoint_names_the_file_and_keeps_the_logs(finished_run, tmp_path):
    config, run = finished_run
    run = _copy(run, tmp_path)
    checkpoint = run / CHECKPOINT_FILE
    checkpoint.write_bytes(checkpoint.read_bytes()[:1000])
    log_before = (run / LOG_FILE).read_text()
    with pytest.raises(CheckpointError, match=rf"{CHECKPOINT_FILE}: unreadable checkpoint, truncated"):
        pretrain(load_settings(config, {"training.max_steps": 12}), run, resume=True, show_progress=False)
    assert (run / LOG_FILE).read_text() == log_before


def test_a_checkpoint_of_another_model_names_the_file(finished_run, tmp_path):
    config, run = finished_run
    run = _copy(run, tmp_path)
    wider = load_settings(config, {"model.hidden_size": 48, "model.intermediate_size": 96, "training.max_steps": 12})
    with pytest.raises(CheckpointError, match=rf"{CHECKPOINT_FILE}: its weights do not fit the model"):
        pretrain(wider, run, resume=True, show_progress=False)


def test_only_a_half_written_first_checkpoint_is_an_error_not_a_silent_restart(finished_run, tmp_path):
    config, run = finished_run
    run = _copy(run, tmp_path)
    (run / CHECKPOINT_FILE).rename(run / "checkpoint.tmp")
    log_before = (run / LOG_FILE).read_text()
    with pytest.raises(CheckpointError, match=r"not found, only the half-written checkpoint\.tmp"):
        pretrain(load_settings(config, {}), run, resume=True, show_progress=False)
    assert (run / LOG_FILE).read_text() == log_before
