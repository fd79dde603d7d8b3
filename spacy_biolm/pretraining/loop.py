"""The pretraining loop: progress, logged losses, checkpoints and exact resume."""

import json
import math
import os
import random
import signal
import threading
import time
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from tqdm import tqdm
from transformers import AutoTokenizer

from ..errors import CheckpointError, PretrainingDataError
from .corpus import FORMAT_VERSION, PackedCorpus, batch_indices, build_packed_corpus
from .export import RELEASE_DIR, export_release
from .objectives import get_objective
from .settings import PretrainSettings
from .sources import check_licence_opt_in, describe_sources
from .warm_start import InitSource, resolve_init

__all__ = ["pretrain", "make_optimizer", "linear_schedule", "CHECKPOINT_FILE"]

CHECKPOINT_FILE = "checkpoint.pt"
LOG_FILE = "train_log.jsonl"
HELDOUT_LOG_FILE = "heldout_log.jsonl"
SUMMARY_FILE = "pretrain_summary.json"
# Masking seed of every held-out evaluation (fixed: evaluations of one run, and of runs on the
# same held-out text, see the same masked positions and replacements).
HELDOUT_SEED = 20240601


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
    # The fused kernel updates all parameters in one pass (CPU and GPU alike).
    return torch.optim.AdamW(groups, lr=lr, eps=eps, betas=(0.9, 0.999), fused=True)


def linear_schedule(optimizer, warmup_steps: int, total_steps: int):
    """Linear warmup to the peak rate, then linear decay to zero at ``total_steps``."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / max(1, warmup_steps)
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _device(setting: str, local_rank: int) -> torch.device:
    if setting == "auto":
        setting = "cuda" if torch.cuda.is_available() else "cpu"
    if setting == "cuda" and dist.is_initialized():
        return torch.device("cuda", local_rank)
    return torch.device(setting)


def _init_distributed() -> Tuple[int, int, int]:
    """(rank, world size, local rank). Under ``torchrun`` (WORLD_SIZE > 1) this joins the
    process group: NCCL on GPUs, Gloo on CPUs."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if torch.cuda.is_available():
            torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    if not dist.is_initialized():
        return 0, 1, 0
    return dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0"))


def _load_tokenizer(settings: PretrainSettings, init: Optional[InitSource]):
    """The run's tokenizer: the one of the checkpoint continued from (the vocabulary is kept),
    else the one `spacy-biolm pretrain vocab` wrote (ALBERT: its SentencePiece model)."""
    if init is None:
        return _vocab_tokenizer(settings.paths.vocab, settings.model.architecture)
    tokenizer = AutoTokenizer.from_pretrained(init.tokenizer_dir)
    if settings.paths.vocab and (
        _vocab_tokenizer(settings.paths.vocab, settings.model.architecture).get_vocab() != tokenizer.get_vocab()
    ):
        raise ValueError(
            f"[paths] vocab = {settings.paths.vocab} differs from the vocabulary of [paths] init; continued "
            "pretraining keeps the vocabulary it starts from (leave [paths] vocab empty)"
        )
    return tokenizer


def _vocab_tokenizer(vocab_dir: str, architecture: str):
    """The tokenizer `spacy-biolm pretrain vocab` wrote to ``vocab_dir`` for ``architecture``."""
    if architecture == "albert":
        from .vocab import load_albert_tokenizer

        return load_albert_tokenizer(vocab_dir)
    return AutoTokenizer.from_pretrained(vocab_dir)


def _prepare_corpus(
    texts: List[Path], what: str, corpus_dir: Path, settings: PretrainSettings, tokenizer, objective, is_main: bool
) -> PackedCorpus:
    """Pack ``texts`` into ``corpus_dir`` once; later runs reuse the shards while the sources
    (name, size, SHA-1), the sequence length, the vocabulary and the row layout are unchanged."""
    if not texts:
        raise PretrainingDataError(f"No {what} set ([paths] in the config)")
    for text in texts:
        if not text.is_file():
            raise PretrainingDataError(f"Pretraining text not found: {text}")
        if text.stat().st_size == 0:
            raise PretrainingDataError(f"Pretraining text is empty: {text}")
    check_licence_opt_in(texts, settings.corpus.allow_restricted_licences)
    if is_main:
        wanted = {
            "format": FORMAT_VERSION,
            "sources": describe_sources(texts),
            "max_seq_length": settings.corpus.max_seq_length,
            "vocab_size": len(tokenizer),
            "segment_pairs": objective.segment_pairs,
        }
        meta_path = corpus_dir / "meta.json"
        fresh = meta_path.is_file() and all(
            json.loads(meta_path.read_text(encoding="utf8")).get(k) == v for k, v in wanted.items()
        )
        if not fresh:
            build_packed_corpus(
                texts, tokenizer, corpus_dir, settings.corpus.max_seq_length, packer=objective.packer()
            )
    if dist.is_initialized():
        dist.barrier()  # the other ranks read what rank 0 wrote
    return PackedCorpus.load(corpus_dir)


def _model_inputs(batch: Dict[str, torch.Tensor], pad_id: int, special_ids: torch.Tensor):
    """(attention mask, maskable positions) of a batch: padding is not attended to, and neither
    padding nor special tokens are ever masked."""
    ids = batch["input_ids"]
    attention = ids != pad_id
    return attention, attention & ~torch.isin(ids, special_ids)


def _evaluate_heldout(objective, model, heldout: PackedCorpus, settings, device, autocast, special_ids):
    """Mean metrics of the objective over a fixed held-out sample: the same rows, masked and
    sampled from the same seed every time, with dropout off, so evaluations compare."""
    n = min(len(heldout), settings.training.heldout_sequences)
    # Rows spread over the whole file (held-out text is grouped by source).
    rows = np.unique(np.linspace(0, len(heldout) - 1, n).round().astype(np.int64))
    rng = torch.Generator(device=device)
    rng.manual_seed(HELDOUT_SEED)
    totals: Dict[str, float] = {}
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(rows), settings.training.batch_size):
                chunk = rows[start : start + settings.training.batch_size]
                batch = objective.batch(heldout, chunk, [HELDOUT_SEED, start], device)
                attention, maskable = _model_inputs(batch, heldout.pad_id, special_ids)
                with autocast:
                    out = objective.loss(model, batch, maskable, attention, rng)
                for key, value in out.items():
                    totals[key] = totals.get(key, 0.0) + float(value) * len(chunk)
    finally:
        model.train(was_training)
    return {key: value / len(rows) for key, value in totals.items()}


def _save_checkpoint(path: Path, model, optimizer, scheduler, step: int, mask_rng, settings) -> None:
    rng = {
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "mask_rng": mask_rng.get_state(),
        "python_rng": random.getstate(),
    }
    # Every rank masks with its own generator: all of their states go into the checkpoint.
    if dist.is_initialized():
        per_rank: List[Optional[dict]] = [None] * dist.get_world_size()
        dist.all_gather_object(per_rank, rng)
        if dist.get_rank() != 0:
            return
    else:
        per_rank = [rng]
    state = {
        "step": step,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "rng_per_rank": per_rank,
        "settings": settings.to_dict(),
    }
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)  # never leave a half-written checkpoint behind


_CHECKPOINT_FIELDS = ("step", "model", "optimizer", "scheduler", "rng_per_rank")


def _read_checkpoint(path: Path) -> dict:
    """The saved state at ``path``; a :class:`CheckpointError` naming it when it is truncated, not a
    checkpoint, or lacks a field (nothing of the run has been changed yet)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as error:  # zip/pickle errors of a truncated or foreign file
        raise CheckpointError(path, f"unreadable checkpoint, truncated or not written by `spacy-biolm pretrain` "
                                    f"({type(error).__name__}: {error}); restore it, or delete it and start again "
                                    f"without --resume") from error
    missing = [key for key in _CHECKPOINT_FIELDS if not isinstance(state, dict) or key not in state]
    if missing:
        raise CheckpointError(path, f"not a complete pretraining checkpoint: no {missing}")
    return state


def _load_checkpoint(path: Path, model, optimizer, scheduler, mask_rng, rank: int, world: int, seed: int) -> int:
    state = _read_checkpoint(path)
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as error:  # missing/unexpected keys, shape mismatches
        raise CheckpointError(path, f"its weights do not fit the model of this config (another [model] or "
                                    f"vocabulary?): {error}") from error
    model.tie_embeddings()
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    per_rank = state["rng_per_rank"]
    if len(per_rank) != world:
        warnings.warn(
            f"Checkpoint was written by {len(per_rank)} process(es), resuming with {world}: "
            "weights and optimizer continue exactly, masking randomness does not."
        )
        mask_rng.manual_seed(seed + 7919 * rank + int(state["step"]))
        return int(state["step"])
    rng = per_rank[rank]
    torch.set_rng_state(rng["torch_rng"])
    if rng.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda_rng"])
    mask_rng.set_state(rng["mask_rng"])
    random.setstate(rng["python_rng"])
    return int(state["step"])


class _StopFlag:
    """Set by SIGINT/SIGTERM; the loop stops at the next step boundary, so a checkpoint never
    holds a half-applied update."""

    def __init__(self):
        self.requested = False

    def __call__(self, signum, frame):
        self.requested = True

    def agreed(self, device: torch.device) -> bool:
        """Whether any rank was asked to stop: all ranks must stop at the same step."""
        if not dist.is_initialized():
            return self.requested
        flag = torch.tensor([float(self.requested)], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())


def pretrain(
    settings: PretrainSettings,
    output_dir: Path,
    resume: bool = False,
    show_progress: bool = True,
) -> Dict[str, Any]:
    """Pretrain as ``settings`` say (ELECTRA or ALBERT); write checkpoints, logs, a plot and the
    HF export. Under ``torchrun`` every process trains a DDP replica on its share of each batch
    (``training.batch_size`` is per process) and rank 0 writes the outputs.

    Layout of ``output_dir``: ``corpus/`` (packed id shards) and ``heldout/`` (the packed
    ``[paths] heldout``), ``checkpoint.pt``, ``train_log.jsonl``, ``heldout_log.jsonl``,
    ``pretrain_curve.png``, ``pretrain_summary.json``, ``model/`` (the encoder to fine-tune),
    for ELECTRA ``generator/``, and with ``[export] release_dtype`` ``release/``. A stop signal
    (SIGINT/SIGTERM) ends the run at the next step boundary as ``max_steps`` would (checkpoint,
    export, held-out evaluation, summary, plot), then raises KeyboardInterrupt.
    """
    joins_group = int(os.environ.get("WORLD_SIZE", "1")) > 1 and not dist.is_initialized()
    try:
        return _pretrain(settings, Path(output_dir), resume, show_progress)
    finally:
        # Leave the group before the interpreter exits: Gloo's threads still running at exit
        # abort the process ("terminate called without an active exception"), failing torchrun.
        if joins_group and dist.is_initialized():
            dist.destroy_process_group()


def _pretrain(settings: PretrainSettings, output_dir: Path, resume: bool, show_progress: bool) -> Dict[str, Any]:
    rank, world, local_rank = _init_distributed()
    is_main = rank == 0
    output_dir.mkdir(parents=True, exist_ok=True)
    train = settings.training
    if settings.system.threads > 0:
        torch.set_num_threads(settings.system.threads)
    random.seed(settings.system.seed)
    torch.manual_seed(settings.system.seed)
    device = _device(settings.system.device, local_rank)

    init = resolve_init(settings.paths.init)
    tokenizer = _load_tokenizer(settings, init)
    objective = get_objective(settings, tokenizer)
    # max_steps = 0 exports the initialised encoder (the no-pretraining ablation): no corpus needed.
    corpus = heldout = None
    if train.max_steps > 0:
        corpus = _prepare_corpus(settings.paths.text_files(), "pretraining text", output_dir / "corpus",
                                 settings, tokenizer, objective, is_main)
        if settings.paths.heldout:
            heldout = _prepare_corpus([Path(settings.paths.heldout)], "held-out text", output_dir / "heldout",
                                      settings, tokenizer, objective, is_main)
    model = objective.build_model(init).to(device)
    max_positions = next(
        m.config.max_position_embeddings for m in model.modules() if hasattr(m, "config")
    )
    if settings.corpus.max_seq_length > max_positions:
        raise ValueError(
            f"corpus.max_seq_length ({settings.corpus.max_seq_length}) exceeds the model's "
            f"max_position_embeddings ({max_positions})"
        )
    optimizer = make_optimizer(model, train.learning_rate, train.weight_decay, train.adam_eps)
    scheduler = linear_schedule(optimizer, train.warmup_steps(), train.max_steps)
    mask_rng = torch.Generator(device=device)
    mask_rng.manual_seed(settings.system.seed + 7919 * rank)

    checkpoint = output_dir / CHECKPOINT_FILE
    log_path = output_dir / LOG_FILE
    heldout_log_path = output_dir / HELDOUT_LOG_FILE
    step = 0
    if resume and not checkpoint.is_file() and checkpoint.with_suffix(".tmp").is_file():
        # Killed while saving its first checkpoint: say so rather than silently starting over.
        raise CheckpointError(checkpoint, f"not found, only the half-written {checkpoint.with_suffix('.tmp').name} "
                                          "(the run was stopped while saving it); start again without --resume")
    if resume and checkpoint.is_file():
        step = _load_checkpoint(
            checkpoint, model, optimizer, scheduler, mask_rng, rank, world, settings.system.seed
        )
        if is_main:
            _truncate_log(log_path, step)
            _truncate_log(heldout_log_path, step)
    elif is_main:
        log_path.unlink(missing_ok=True)
        heldout_log_path.unlink(missing_ok=True)
    trained = DDP(model, device_ids=[device.index] if device.type == "cuda" else None) if world > 1 else model

    special_ids = torch.tensor(
        sorted(set(tokenizer.all_special_ids)), dtype=torch.long, device=device
    )
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if device.type == "cuda" and train.bf16
        else nullcontext()
    )

    def evaluate(at_step: int) -> None:
        """Held-out metrics at ``at_step``, on rank 0 (the others wait at the next all-reduce)."""
        nonlocal eval_seconds, last_evaluated
        if heldout is None or not is_main or at_step == last_evaluated:
            return
        last_evaluated = at_step
        began = time.time()
        record = {"step": at_step, **_evaluate_heldout(objective, model, heldout, settings, device, autocast, special_ids)}
        with heldout_log_path.open("a", encoding="utf8") as f:
            f.write(json.dumps(record) + "\n")
        eval_seconds += time.time() - began

    # Token counts and metrics stay on the device between log steps: reading a GPU value waits for
    # the GPU, and a small model spends more time waiting than computing.
    n_tokens_seen = torch.zeros((), dtype=torch.int64, device=device)
    eval_seconds = 0.0
    last_evaluated = -1
    started = time.time()
    window: List[Dict[str, torch.Tensor]] = []
    stop = _StopFlag()
    previous_handlers = {}
    if threading.current_thread() is threading.main_thread():  # signal handlers live there only
        previous_handlers = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    progress = tqdm(
        total=train.max_steps, initial=step, desc=f"pretrain {objective.name}",
        disable=not (show_progress and is_main), dynamic_ncols=True,
    )
    if step == 0 and train.max_steps > 0:
        evaluate(0)  # where the run starts from: a warm start's held-out loss before any update
    trained.train()
    stopping = False
    log = log_path.open("a", encoding="utf8") if is_main else None
    try:
        while step < train.max_steps:
            optimizer.zero_grad(set_to_none=True)
            accumulated: Dict[str, torch.Tensor] = {}
            for micro in range(train.grad_accumulation):
                micro_step = step * train.grad_accumulation + micro
                # One global batch per micro-step; each rank takes every world-th row of it.
                rows = batch_indices(len(corpus), train.batch_size * world, micro_step, settings.system.seed)
                batch = objective.batch(corpus, rows[rank::world], [settings.system.seed, micro_step, rank], device)
                attention, maskable = _model_inputs(batch, corpus.pad_id, special_ids)
                # Gradients are all-reduced once per optimizer step, not per micro-batch.
                sync = nullcontext() if world == 1 or micro == train.grad_accumulation - 1 else trained.no_sync()
                with sync:
                    with autocast:
                        out = objective.loss(trained, batch, maskable, attention, mask_rng)
                    (out["loss"] / train.grad_accumulation).backward()
                n_tokens_seen += attention.sum()
                for key, value in out.items():
                    share = value.detach().float() / train.grad_accumulation
                    accumulated[key] = accumulated[key] + share if key in accumulated else share
            torch.nn.utils.clip_grad_norm_(model.parameters(), train.max_grad_norm)
            optimizer.step()
            scheduler.step()
            step += 1
            window.append(accumulated)
            progress.update(1)
            stopping = stop.agreed(device)
            saving = step % train.checkpoint_every == 0 or stopping
            if saving:
                _average(window, step)  # never checkpoint weights that a non-finite loss updated
            if step % train.log_every == 0 or step == train.max_steps or stopping:
                # Read from the device, checked and averaged over ranks only here, not every step.
                record = _mean_over_ranks(_average(window, step), device)
                record.update(step=step, lr=scheduler.get_last_lr()[0])
                window = []
                if is_main:
                    log.write(json.dumps(record) + "\n")
                    log.flush()
                    progress.set_postfix({k: f"{record[k]:.3f}" for k in objective.progress_keys})
            if train.eval_every and step % train.eval_every == 0:
                evaluate(step)
            if saving:
                _save_checkpoint(checkpoint, model, optimizer, scheduler, step, mask_rng, settings)
            if stopping:
                break  # and export, evaluate and summarise the run so far, as at its end
    finally:
        if log is not None:
            log.close()
        for sig, handler in previous_handlers.items():
            signal.signal(sig, handler)
        progress.close()
    if not stopping and (step % train.checkpoint_every != 0 or step == 0):  # else the loop saved it
        _save_checkpoint(checkpoint, model, optimizer, scheduler, step, mask_rng, settings)
    train_seconds = time.time() - started - eval_seconds
    if step > 0:
        evaluate(step)
    n_tokens_seen = int(_mean_over_ranks({"n": float(n_tokens_seen)}, device)["n"] * world)

    summary: Dict[str, Any] = {}
    if is_main:
        _export(objective, model, output_dir, settings)
        history = read_log(log_path)
        heldout_history = read_log(heldout_log_path)
        summary = {
            "architecture": objective.name,
            "continued_from": settings.paths.init or None,
            "continued_from_dir": str(init.path) if init is not None else None,
            "steps": step,
            # Stopped by a signal before max_steps: continue with --resume.
            "stopped_early": stopping,
            "processes": world,
            "seconds_this_run": round(train_seconds, 1),
            "eval_seconds_this_run": round(eval_seconds, 1),
            "device": str(device),
            "n_sequences": len(corpus) if corpus is not None else 0,
            "corpus_tokens": corpus.n_tokens if corpus is not None else 0,
            # Which files (name, size, SHA-1) went in: their licences can be traced later.
            "sources": _corpus_sources(corpus),
            "heldout_sources": _corpus_sources(heldout),
            "encoder_parameters": sum(p.numel() for p in objective.encoder(model).parameters()),
            **_throughput(model, n_tokens_seen, train_seconds, device, settings.system.peak_tflops, world),
            "final": history[-1] if history else {},
            "heldout": heldout_history[-1] if heldout_history else {},
        }
        from ..run_record import stamp_json

        summary = stamp_json(summary, device=str(device))  # this run's commit and date (results/README.md reads them)
        (output_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2), encoding="utf8")
        if history:
            objective.plot(history, output_dir / "pretrain_curve.png", heldout=heldout_history)
    if dist.is_initialized():
        dist.barrier()
    if stopping:
        raise KeyboardInterrupt(
            f"Pretraining stopped at step {step}; checkpoint saved to {checkpoint}, the encoder so far to "
            f"{output_dir / 'model'}. Continue with --resume."
        )
    return summary


def _export(objective, model, output_dir: Path, settings: PretrainSettings) -> None:
    """``model/`` (and the objective's other parts); ``release/`` when a release dtype is set."""
    encoder_dir = objective.export(model, output_dir)
    if settings.export.release_dtype:
        export_release(encoder_dir, output_dir / RELEASE_DIR, settings.export.release_dtype)


def _corpus_sources(corpus: Optional[PackedCorpus]) -> List[Dict[str, Any]]:
    if corpus is None:
        return []
    return json.loads((corpus.path / "meta.json").read_text(encoding="utf8"))["sources"]


def _throughput(model, n_tokens: int, seconds: float, device: torch.device, peak_tflops: Optional[float],
                world: int) -> Dict[str, Any]:
    """Tokens per second (all processes) and, on GPU with a known peak, model FLOPs utilisation:
    6 x non-embedding parameters x tokens / time / peak (Kaplan et al.'s estimate of training
    FLOPs; embedding lookups do no matmuls and are left out)."""
    out: Dict[str, Any] = {"tokens_per_second": round(n_tokens / max(seconds, 1e-9), 1)}
    embedding_params = {
        id(p) for module in model.modules() if isinstance(module, torch.nn.Embedding) for p in module.parameters()
    }
    unique = {id(p): p for p in model.parameters()}
    flops_params = sum(p.numel() for key, p in unique.items() if key not in embedding_params)
    out["flops_parameters"] = flops_params
    if device.type == "cuda" and peak_tflops and n_tokens:
        achieved = 6 * flops_params * n_tokens / max(seconds, 1e-9)
        out["model_flops_utilization"] = round(achieved / (peak_tflops * 1e12 * world), 4)
    return out


def _mean_over_ranks(values: Dict[str, float], device: torch.device) -> Dict[str, float]:
    if not dist.is_initialized():
        return values
    keys = sorted(values)
    packed = torch.tensor([values[k] for k in keys], dtype=torch.float64, device=device)
    dist.all_reduce(packed)
    packed /= dist.get_world_size()
    return dict(zip(keys, packed.tolist()))


def _average(records: List[Dict[str, torch.Tensor]], step: int) -> Dict[str, float]:
    """Mean of each metric over the steps since the last record, read from the device at once;
    a loss that is not finite is an error (no checkpoint is written from such weights)."""
    keys = list(records[0])
    values = torch.stack([torch.stack([r[k] for r in records]) for k in keys])
    losses = values[keys.index("loss")].tolist()
    bad = [i for i, loss in enumerate(losses) if not math.isfinite(loss)]
    if bad:  # records[i] is of step (step - len(records) + 1 + i)
        raise FloatingPointError(f"Pretraining loss is {losses[bad[0]]} at step {step - len(losses) + 1 + bad[0]}")
    return dict(zip(keys, values.mean(dim=1).tolist()))


def read_summary(encoder_dir: Path) -> Optional[Dict[str, object]]:
    """The pretraining summary of the run that made ``encoder_dir``: beside a run's ``model/``, or
    inside a released encoder's directory (``released/<name>/``); None for any other encoder."""
    for path in (Path(encoder_dir) / SUMMARY_FILE, Path(encoder_dir).parent / SUMMARY_FILE):
        if path.is_file():
            return json.loads(path.read_text(encoding="utf8"))
    return None


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
