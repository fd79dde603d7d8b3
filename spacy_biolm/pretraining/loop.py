"""The pretraining loop: progress, logged losses, checkpoints and exact resume."""

import json
import math
import os
import random
import signal
import threading
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import numpy as np
import torch
from tqdm import tqdm
from transformers import AutoTokenizer

from ..errors import PretrainingDataError
from .corpus import PackedCorpus, build_packed_corpus
from .electra import ElectraRTD, make_configs
from .export import export_electra
from .settings import PretrainSettings

__all__ = ["pretrain", "batch_indices", "make_optimizer", "linear_schedule", "CHECKPOINT_FILE"]

CHECKPOINT_FILE = "checkpoint.pt"
LOG_FILE = "train_log.jsonl"
SUMMARY_FILE = "pretrain_summary.json"


def batch_indices(n_items: int, batch_size: int, step: int, seed: int) -> np.ndarray:
    """Rows of the ``step``-th batch: epochs are seeded permutations, so any step is reproducible
    from (step, seed) alone and a resumed run sees exactly the batches it would have seen."""
    per_epoch = max(1, n_items // batch_size)  # the ragged tail of each epoch is skipped
    epoch, offset = divmod(step, per_epoch)
    order = np.random.default_rng([seed, epoch]).permutation(n_items)
    return np.sort(order[offset * batch_size : (offset + 1) * batch_size])


def make_optimizer(model: torch.nn.Module, lr: float, weight_decay: float, eps: float):
    """AdamW without weight decay on biases and LayerNorm weights (as BERT/ELECTRA)."""
    decay, no_decay = [], []
    seen = set()
    for name, param in model.named_parameters():
        if id(param) in seen or not param.requires_grad:
            continue  # tied parameters appear under several names
        seen.add(id(param))
        (no_decay if param.ndim < 2 or "LayerNorm" in name else decay).append(param)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, eps=eps, betas=(0.9, 0.999))


def linear_schedule(optimizer, warmup_steps: int, total_steps: int):
    """Linear warmup to the peak rate, then linear decay to zero at ``total_steps``."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / max(1, warmup_steps)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _device(setting: str) -> torch.device:
    if setting == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(setting)


def _prepare_corpus(settings: PretrainSettings, tokenizer, output_dir: Path) -> PackedCorpus:
    texts = settings.paths.text_files()
    if not texts:
        raise PretrainingDataError("No pretraining text set ([paths] text in the config)")
    for text in texts:
        if not text.is_file():
            raise PretrainingDataError(f"Pretraining text not found: {text}")
        if text.stat().st_size == 0:
            raise PretrainingDataError(f"Pretraining text is empty: {text}")
    corpus_dir = output_dir / "corpus"
    wanted = {
        "sources": [str(t) for t in texts],
        "max_seq_length": settings.corpus.max_seq_length,
        "vocab_size": len(tokenizer),
    }
    meta_path = corpus_dir / "meta.json"
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text(encoding="utf8"))
        if all(meta.get(k) == v for k, v in wanted.items()):
            return PackedCorpus.load(corpus_dir)
    return build_packed_corpus(texts, tokenizer, corpus_dir, settings.corpus.max_seq_length)


def _save_checkpoint(path: Path, model, optimizer, scheduler, step: int, mask_rng, settings) -> None:
    state = {
        "step": step,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "mask_rng": mask_rng.get_state(),
        "python_rng": random.getstate(),
        "settings": settings.to_dict(),
    }
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # never leave a half-written checkpoint behind


def _load_checkpoint(path: Path, model, optimizer, scheduler, mask_rng) -> int:
    state = torch.load(path, map_location="cpu", weights_only=False)
    model.load_state_dict(state["model"])
    model.tie_embeddings()
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"])
    if state.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda_rng"])
    mask_rng.set_state(state["mask_rng"])
    random.setstate(state["python_rng"])
    return int(state["step"])


class _StopFlag:
    """Set by SIGINT/SIGTERM; the loop stops at the next step boundary, so a checkpoint never
    holds a half-applied update."""

    def __init__(self):
        self.requested = False

    def __call__(self, signum, frame):
        self.requested = True


def pretrain(
    settings: PretrainSettings,
    output_dir: Path,
    resume: bool = False,
    show_progress: bool = True,
) -> Dict[str, float]:
    """Pretrain ELECTRA as ``settings`` say; write checkpoints, logs, a plot and the HF export.

    Layout of ``output_dir``: ``corpus/`` (packed ids), ``checkpoint.pt``, ``train_log.jsonl``,
    ``pretrain_curve.png``, ``pretrain_summary.json``, ``model/`` (the discriminator: the
    encoder to fine-tune) and ``generator/``.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    train = settings.training
    if settings.system.threads > 0:
        torch.set_num_threads(settings.system.threads)
    random.seed(settings.system.seed)
    torch.manual_seed(settings.system.seed)
    device = _device(settings.system.device)

    tokenizer = AutoTokenizer.from_pretrained(settings.paths.vocab)
    # max_steps = 0 exports the initialised encoder (the no-pretraining ablation): no corpus needed.
    corpus = _prepare_corpus(settings, tokenizer, output_dir) if train.max_steps > 0 else None
    disc_cfg, gen_cfg = make_configs(settings.model, len(tokenizer), tokenizer.pad_token_id)
    if settings.corpus.max_seq_length > disc_cfg.max_position_embeddings:
        raise ValueError("corpus.max_seq_length exceeds model.max_position_embeddings")
    model = ElectraRTD(disc_cfg, gen_cfg).to(device)
    optimizer = make_optimizer(model, train.learning_rate, train.weight_decay, train.adam_eps)
    scheduler = linear_schedule(optimizer, train.warmup_steps, train.max_steps)
    mask_rng = torch.Generator(device=device)
    mask_rng.manual_seed(settings.system.seed)

    checkpoint = output_dir / CHECKPOINT_FILE
    log_path = output_dir / LOG_FILE
    step = 0
    if resume and checkpoint.is_file():
        step = _load_checkpoint(checkpoint, model, optimizer, scheduler, mask_rng)
        _truncate_log(log_path, step)
    elif log_path.exists():
        log_path.unlink()

    special_ids = torch.tensor(
        sorted(set(tokenizer.all_special_ids)), dtype=torch.long, device=device
    )
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if device.type == "cuda" and train.bf16
        else nullcontext()
    )
    n_tokens_seen = 0
    started = time.time()
    window: List[Dict[str, float]] = []
    stop = _StopFlag()
    previous_handlers = {}
    if threading.current_thread() is threading.main_thread():  # signal handlers live there only
        previous_handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    progress = tqdm(
        total=train.max_steps, initial=step, desc="pretrain", disable=not show_progress, dynamic_ncols=True
    )
    model.train()
    try:
        with log_path.open("a", encoding="utf8") as log:
            while step < train.max_steps:
                optimizer.zero_grad(set_to_none=True)
                accumulated: Dict[str, float] = {}
                for micro in range(train.grad_accumulation):
                    rows = batch_indices(
                        len(corpus), train.batch_size, step * train.grad_accumulation + micro,
                        settings.system.seed,
                    )
                    ids = torch.from_numpy(corpus.ids[rows].astype(np.int64)).to(device)
                    attention = ids != corpus.pad_id
                    maskable = attention & ~torch.isin(ids, special_ids)
                    with autocast:
                        out = model(ids, attention, maskable, tokenizer.mask_token_id, settings.objective, mask_rng)
                    (out["loss"] / train.grad_accumulation).backward()
                    n_tokens_seen += int(attention.sum())
                    for key, value in out.items():
                        accumulated[key] = accumulated.get(key, 0.0) + float(value.detach()) / train.grad_accumulation
                if not math.isfinite(accumulated["loss"]):
                    raise FloatingPointError(f"Pretraining loss is {accumulated['loss']} at step {step}")
                torch.nn.utils.clip_grad_norm_(model.parameters(), train.max_grad_norm)
                optimizer.step()
                scheduler.step()
                step += 1
                window.append(accumulated)
                progress.update(1)
                if step % train.log_every == 0 or step == train.max_steps:
                    record = _average(window)
                    record.update(step=step, lr=scheduler.get_last_lr()[0])
                    log.write(json.dumps(record) + "\n")
                    log.flush()
                    progress.set_postfix(
                        loss=f"{record['loss']:.3f}",
                        disc_acc=f"{record['disc_acc']:.3f}",
                        gen_acc=f"{record['gen_acc']:.3f}",
                    )
                    window = []
                if step % train.checkpoint_every == 0 or stop.requested:
                    _save_checkpoint(checkpoint, model, optimizer, scheduler, step, mask_rng, settings)
                if stop.requested:
                    raise KeyboardInterrupt(
                        f"Pretraining stopped at step {step}; checkpoint saved to {checkpoint}. "
                        "Continue with --resume."
                    )
    finally:
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)
        progress.close()
    if step % train.checkpoint_every != 0 or step == 0:  # else the loop just saved this step
        _save_checkpoint(checkpoint, model, optimizer, scheduler, step, mask_rng, settings)
    elapsed = time.time() - started

    export_electra(model, tokenizer, output_dir, settings)
    history = read_log(log_path)
    summary = {
        "steps": step,
        "seconds_this_run": round(elapsed, 1),
        "tokens_per_second": round(n_tokens_seen / max(elapsed, 1e-9), 1),
        "device": str(device),
        "n_sequences": len(corpus) if corpus is not None else 0,
        "corpus_tokens": corpus.n_tokens() if corpus is not None else 0,
        "discriminator_parameters": sum(p.numel() for p in model.discriminator.parameters()),
        "final": history[-1] if history else {},
    }
    (output_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2), encoding="utf8")
    if history:
        from .plots import plot_pretraining_curve

        plot_pretraining_curve(history, output_dir / "pretrain_curve.png")
    return summary


def _average(records: List[Dict[str, float]]) -> Dict[str, float]:
    return {k: sum(r[k] for r in records) / len(records) for k in records[0]}


def read_log(path: Path) -> List[Dict[str, float]]:
    if not path.is_file():
        return []
    with path.open(encoding="utf8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _truncate_log(path: Path, step: int) -> None:
    """Drop log records past the resumed checkpoint so the curve has no duplicate steps."""
    kept = [r for r in read_log(path) if r["step"] <= step]
    with path.open("w", encoding="utf8") as f:
        for record in kept:
            f.write(json.dumps(record) + "\n")
