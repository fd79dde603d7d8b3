"""The prepared GPU pretraining run (issue 45): continue an ELECTRA encoder on biomed_text in one
device call, as fast as the card allows, and bring back an fp16 export that the next call resumes.

Continues ``released/minilm_electra_biomed`` (or ``--resume-from`` an earlier output of this
script) with replaced-token detection, using the engine's own pieces (electra.py, attention.py,
corpus.py, warm_start.py, export.py); it imports neither spaCy nor thinc, so it runs on a bare
machine with PyTorch, transformers and tokenizers only.

Settings (``--baseline`` gives today's loop: loop.py's step with the released run's settings):

==================  ==========================================  ==============================
setting             efficient (default)                         --baseline
==================  ==========================================  ==============================
precision           bf16 autocast on CUDA (``--no-bf16``)        bf16 autocast on CUDA
TF32 matmuls        on (``--no-tf32``)                           off
torch.compile       discriminator + generator encoder            off
                    (``--no-compile``)
attention           SDPA                                         SDPA
optimizer           fused AdamW                                  fused AdamW
batch               ``--batch-size`` (CUDA default 512, lr       128 (lr 1e-4)
                    scaled by sqrt(batch / 128))
data loading        next batch gathered and copied (pinned,      in the step
                    non-blocking) by a background thread
==================  ==========================================  ==============================

Rows are packed documents (corpus.py: sentences of one document fill a row up to the length;
the summary records the padding share of the packed corpus, ``padding_share``).

Budgets are in steps (``--max-steps``, reproducible) with a wall-clock safety stop
(``--time-budget`` seconds of training) that records where it stopped. The learning rate follows
one plan over ``--plan-steps`` (linear warmup ``--warmup-fraction``, linear decay), and the step
counter continues across resumed runs, so successive calls walk along the same schedule. Resume:

- from a full output directory (same machine): weights, AdamW moments and counters (``state.pt``);
- from a brought-back export (``export.tar.*`` parts or an unpacked output): the fp16 weights and
  the counters; AdamW moments start afresh, re-warmed over ``--rewarmup-steps``.

Outputs (``--out``): ``summary.json`` (tokens/s, MFU = 6 x non-embedding parameters of generator
and discriminator x tokens / s / peak, as pretrain_summary.json defines it; held-out RTD loss
before and after; device; settings; cumulative steps and tokens over resumed runs),
``model/`` (the discriminator, float16 safetensors with tokenizer and MODEL_CARD.md: loads with
``AutoModel.from_pretrained``), ``generator.safetensors`` + ``generator_config.json`` (the
generator without the embeddings it shares), ``state.json``. ``--bring-back DIR`` also writes what
the device tool returns (at most 8 files of 16 MiB): summary.json, MODEL_CARD.md and the export as
a tar cut into 15 MiB parts ``export.tar.00``, ``export.tar.01``, ...

Device call (one H100, at most 10 minutes; the device image has PyTorch but transformers 5 and
no spaCy/thinc). Build the wheels once, here: ``.venv/bin/pip download --no-deps -d wheels
transformers==4.53.2 tokenizers==0.21.4 huggingface-hub==0.34.4`` (``wheels/`` is ignored by
``*.whl``; ``.git/info/exclude`` it if the folder itself shows), and copy the text into an ignored
folder: ``mkdir -p gpu_text && cp ../shared/data/pretraining/biomed_text/{heldout,medquad}.txt.xz
gpu_text/``. The working tree travels too (about 49 MB with the released encoder), so what fits
beside it is about 18 MB: the wheels (~14 MB), the held-out text and one small text file.
Then ``run`` with ``carry: ["wheels", "gpu_text"]``, ``timeout_s: 600`` and::

    pip install -q --no-deps --no-index wheels/*.whl && python3 benchmarks/pretrain_gpu.py \
      --text gpu_text/medquad.txt.xz --heldout gpu_text/heldout.txt.xz --out /tmp/pg --work-dir /tmp/pgw \
      --max-steps 100000 --plan-steps 100000 --time-budget 300 --compare-baseline 30 --bring-back $OUT

(about 9 minutes: install and packing ~1, baseline ~0.5, compile ~1-2, training 5, held-out and
export ~0.5). The export comes back in 4 parts of 15 MiB (45 MB fp16 discriminator).

A later call resumes from what came back (carry it in ``prev/``: ``--resume-from prev``), on the
same warm machine from ``/tmp/pg`` itself (``--resume-from /tmp/pg``, optimizer included).
``--compare-baseline S`` first times the ``--baseline`` settings for S seconds on the same
batches (no weights kept) and records both in the summary.
"""

import argparse
import json
import math
import queue
import shutil
import sys
import tarfile
import tempfile
import threading
import time
import types
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
RELEASED = ROOT / "released" / "minilm_electra_biomed"
MIRROR = ROOT.parent / "shared" / "data" / "pretraining" / "biomed_text"
DEFAULT_TEXTS = ("elife", "evidence_inference", "medquad", "cdc_mmwr", "cdc_pcd", "craft")
# Masking seed of the held-out evaluation (loop.py's HELDOUT_SEED): the same positions every time.
HELDOUT_SEED = 20240601
BASE_BATCH, BASE_LR = 128, 1e-4  # the released run's batch and peak rate
PART_BYTES = 15 * 1024 * 1024


def _import_engine():
    """The engine's modules without ``spacy_biolm/__init__`` (which imports spaCy) when spaCy is
    missing: the pretraining modules themselves need only torch, numpy and transformers."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        import spacy_biolm  # noqa: F401
    except ImportError:
        package = types.ModuleType("spacy_biolm")
        package.__path__ = [str(ROOT / "spacy_biolm")]
        sys.modules["spacy_biolm"] = package
    from spacy_biolm.pretraining import attention, corpus, electra, export, warm_start

    return attention, corpus, electra, export, warm_start


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--init", default=str(RELEASED), help="HF encoder directory to continue (first run)")
    p.add_argument("--resume-from", type=Path, default=None, help="an earlier --out or --bring-back directory")
    p.add_argument("--text", nargs="+", default=None, help="pretraining text (.txt or .txt.xz); default: the mirror's open files")
    p.add_argument("--heldout", default=None, help="held-out text; default: the mirror's heldout.txt.xz")
    p.add_argument("--work-dir", type=Path, default=None, help="packed corpora (reused); default OUT/../pretrain_gpu_corpus")
    p.add_argument("--max-seq-length", type=int, default=128)
    p.add_argument("--max-steps", type=int, default=1000, help="steps of this run")
    p.add_argument("--time-budget", type=float, default=0.0, help="stop training after this many seconds (0: none)")
    p.add_argument("--plan-steps", type=int, default=100_000, help="length of the learning-rate plan across runs")
    p.add_argument("--warmup-fraction", type=float, default=0.01)
    p.add_argument("--rewarmup-steps", type=int, default=100, help="warmup after a resume without optimizer state")
    p.add_argument("--batch-size", type=int, default=0, help="per device; 0: 512 on CUDA, 128 on CPU")
    p.add_argument("--learning-rate", type=float, default=0.0, help="0: 1e-4 x sqrt(batch / 128)")
    p.add_argument("--baseline", action="store_true", help="today's settings: batch 128, eager, no TF32, no prefetch")
    p.add_argument("--no-compile", dest="compile", action="store_false", default=None)
    p.add_argument("--compile", dest="compile", action="store_true")
    p.add_argument("--no-tf32", dest="tf32", action="store_false", default=None)
    p.add_argument("--no-bf16", dest="bf16", action="store_false", default=True)
    p.add_argument("--no-prefetch", dest="prefetch", action="store_false", default=None)
    p.add_argument("--compare-baseline", type=float, default=0.0, help="seconds of baseline timing first (0: none)")
    p.add_argument("--baseline-batch-size", type=int, default=BASE_BATCH, help="batch of the --compare-baseline timing")
    p.add_argument("--heldout-sequences", type=int, default=512)
    p.add_argument("--peak-tflops", type=float, default=989.0, help="dense bf16 peak (H100 SXM 989; H200 the same)")
    p.add_argument("--device", default="auto")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-save-optimizer", dest="save_optimizer", action="store_false", default=True,
                   help="do not write state.pt (fp32 weights + AdamW moments, for a resume on the same machine)")
    p.add_argument("--write-result", type=Path, default=None,
                   help="also write the summary with this command line as a benchmark result (benchmarks/results/...)")
    p.add_argument("--bring-back", type=Path, default=None, help="also write the files to return (summary, card, parts)")
    args = p.parse_args(argv)
    if args.baseline:
        args.compile = False if args.compile is None else args.compile
        args.tf32 = False if args.tf32 is None else args.tf32
        args.prefetch = False if args.prefetch is None else args.prefetch
    return args


def _settings(args, device) -> Dict[str, Any]:
    cuda = device.type == "cuda"
    batch = args.batch_size or (BASE_BATCH if args.baseline or not cuda else 512)
    lr = args.learning_rate or (BASE_LR * math.sqrt(batch / BASE_BATCH))
    return {
        "baseline": args.baseline,
        "bf16": bool(args.bf16 and cuda),
        "tf32": bool(args.tf32 if args.tf32 is not None else True) and cuda,
        "compile": bool(args.compile if args.compile is not None else cuda),
        "prefetch": bool(args.prefetch if args.prefetch is not None else True),
        "attention": "sdpa",
        "fused_adamw": True,
        "batch_size": batch,
        "learning_rate": lr,
        "max_seq_length": args.max_seq_length,
        "plan_steps": args.plan_steps,
        "warmup_fraction": args.warmup_fraction,
        "rewarmup_steps": args.rewarmup_steps,
        "weight_decay": 0.01,
        "adam_eps": 1e-6,
        "max_grad_norm": 1.0,
        "mask_prob": 0.15,
        "keep_prob": 0.15,
        "disc_weight": 50.0,
        "seed": args.seed,
    }


# --- model, optimizer, schedule ------------------------------------------------------------------

def _make_optimizer(torch, model, lr, weight_decay, eps):
    """AdamW without decay on biases and LayerNorm weights, fused (loop.make_optimizer)."""
    decay, no_decay, seen = [], [], set()
    for name, param in model.named_parameters():
        if id(param) in seen or not param.requires_grad:
            continue
        seen.add(id(param))
        (no_decay if param.ndim < 2 or "LayerNorm" in name else decay).append(param)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, eps=eps, betas=(0.9, 0.999), fused=True)


def lr_factor(step: int, plan_steps: int, warmup_fraction: float, rewarm_from: Optional[int], rewarmup: int) -> float:
    """The plan's factor at global ``step``: linear warmup over ``warmup_fraction`` of the plan,
    linear decay to zero at ``plan_steps``; after a resume without AdamW moments (``rewarm_from``),
    a short linear re-warmup to the plan's value."""
    warmup = max(1, round(warmup_fraction * plan_steps))
    factor = (step + 1) / warmup if step < warmup else max(0.0, (plan_steps - step) / max(1, plan_steps - warmup))
    if rewarm_from is not None and step < rewarm_from + rewarmup:
        factor *= (step - rewarm_from + 1) / max(1, rewarmup)
    return factor


def _flops_parameters(torch, model) -> int:
    """Non-embedding parameters of generator and discriminator (loop._throughput's count)."""
    embedding = {id(p) for m in model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()}
    unique = {id(p): p for p in model.parameters()}
    return sum(p.numel() for key, p in unique.items() if key not in embedding)


def _own_generator_state(model) -> Dict[str, Any]:
    """The generator's tensors without those it shares with the discriminator (embeddings, LM
    head weight): what resuming needs beside the discriminator."""
    return {k: v for k, v in model.generator.state_dict().items()
            if not k.startswith("electra.embeddings.") and k != "generator_lm_head.weight"}


def _build_model(torch, engine, source: Path, kind: str):
    """``kind`` "encoder": warm start from an HF encoder dir; "export": this script's export."""
    attention, _, electra, _, warm_start = engine
    if kind == "encoder" and "ElectraForPreTraining" in json.loads((source / "config.json").read_text()).get(
            "architectures", []):
        # An exported discriminator (the released encoder): its RTD head continues too; the
        # generator (not released) starts fresh at a quarter of its width.
        from transformers import ElectraForPreTraining

        disc = ElectraForPreTraining.from_pretrained(source, torch_dtype=torch.float32)
        model = electra.ElectraRTD(disc.config, electra.generator_config(disc.config, 0.25))
        model.discriminator = disc
        model.tie_embeddings()
    elif kind == "encoder":
        model = warm_start.electra_from_encoder(source, electra.ModelSize(generator_fraction=0.25))
    else:
        from safetensors.torch import load_file
        from transformers import ElectraConfig, ElectraForPreTraining

        disc = ElectraForPreTraining.from_pretrained(source / "model", torch_dtype=torch.float32)
        gen_config = ElectraConfig.from_json_file(str(source / "generator_config.json"))
        model = electra.ElectraRTD(disc.config, gen_config)
        model.discriminator = disc
        model.tie_embeddings()
        missing, unexpected = model.generator.load_state_dict(
            {k: v.float() for k, v in load_file(str(source / "generator.safetensors")).items()}, strict=False)
        bad = [k for k in missing if not k.startswith("electra.embeddings.") and k != "generator_lm_head.weight"]
        if bad or unexpected:
            raise ValueError(f"{source}: generator weights do not fit: missing {bad}, unexpected {unexpected}")
        model.tie_embeddings()
    attention.use_sdpa_attention(model)
    return model.float()


# --- data -----------------------------------------------------------------------------------------

def _packed(engine, texts: List[Path], tokenizer, out_dir: Path, max_seq_length: int):
    """Pack once; reuse while the sources and length are unchanged (as loop._prepare_corpus)."""
    _, corpus, _, _, _ = engine
    from spacy_biolm.pretraining.sources import describe_sources

    wanted = {"format": corpus.FORMAT_VERSION, "sources": describe_sources(texts), "max_seq_length": max_seq_length,
              "vocab_size": len(tokenizer)}
    meta = out_dir / "meta.json"
    if not (meta.is_file() and all(json.loads(meta.read_text()).get(k) == v for k, v in wanted.items())):
        corpus.build_packed_corpus(texts, tokenizer, out_dir, max_seq_length)
    return corpus.PackedCorpus.load(out_dir)


class _Batches:
    """Batch ``i`` of the run: rows of the pseudo-random permutation (corpus.batch_indices), as
    int64 on the device. With ``prefetch`` a thread gathers and copies the next ones (pinned
    memory, non-blocking) while the GPU computes."""

    def __init__(self, torch, engine, packed, batch_size, seed, device, prefetch, first_step):
        self.torch, self.packed, self.batch_size, self.seed, self.device = torch, packed, batch_size, seed, device
        self.batch_indices = engine[1].batch_indices
        self.step = first_step
        self.queue: Optional[queue.Queue] = None
        if prefetch:
            self.queue = queue.Queue(maxsize=3)
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._fill, args=(first_step,), daemon=True)
            self.thread.start()

    def _load(self, step):
        import numpy as np

        rows = self.batch_indices(len(self.packed), self.batch_size, step, self.seed)
        ids = self.torch.from_numpy(self.packed.rows(rows).astype(np.int64))
        if self.device.type == "cuda":
            ids = ids.pin_memory()
        return ids

    def _fill(self, step):
        while not self.stop.is_set():
            try:
                ids = self._load(step)
                if self.device.type == "cuda":
                    ids = ids.to(self.device, non_blocking=True)
            except Exception as error:  # surfaced in next()
                self.queue.put(error)
                return
            while not self.stop.is_set():
                try:
                    self.queue.put(ids, timeout=0.1)
                    break
                except queue.Full:
                    continue
            step += 1

    def next(self):
        self.step += 1
        if self.queue is None:
            return self._load(self.step - 1).to(self.device, non_blocking=True)
        item = self.queue.get()
        if isinstance(item, Exception):
            raise item
        return item

    def close(self):
        if self.queue is not None:
            self.stop.set()
            self.thread.join(timeout=5)


# --- steps ----------------------------------------------------------------------------------------

def _inputs(torch, ids, pad_id, special_ids):
    attention = ids != pad_id
    return attention, attention & ~torch.isin(ids, special_ids)


def _heldout_loss(torch, model, heldout, n, batch_size, device, autocast, special_ids, mask_id, objective):
    """Mean RTD/MLM metrics over ``n`` held-out rows spread over the file, masked from a fixed
    seed, dropout off (loop._evaluate_heldout)."""
    import numpy as np

    rows = np.unique(np.linspace(0, len(heldout) - 1, min(n, len(heldout))).round().astype(np.int64))
    rng = torch.Generator(device=device)
    rng.manual_seed(HELDOUT_SEED)
    totals: Dict[str, float] = {}
    model.eval()
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            chunk = rows[start:start + batch_size]
            ids = torch.from_numpy(heldout.rows(chunk).astype(np.int64)).to(device)
            attention, maskable = _inputs(torch, ids, heldout.pad_id, special_ids)
            with autocast:
                out = model(ids, attention, maskable, mask_id, objective, rng)
            for key, value in out.items():
                totals[key] = totals.get(key, 0.0) + float(value) * len(chunk)
    model.train()
    return {key: round(value / len(rows), 6) for key, value in totals.items()}


def _train(torch, model, optimizer, batches, n_steps, time_budget, settings, first_step, rewarm_from, device,
           autocast, special_ids, mask_id, objective, pad_id, rng, sync_every=50):
    """``n_steps`` optimizer steps from global ``first_step`` (or until ``time_budget`` seconds);
    returns (steps done, tokens, seconds, last metrics, stopped_by)."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    tokens = torch.zeros((), dtype=torch.int64, device=device)
    last: Dict[str, Any] = {}
    done, stopped_by = 0, "max_steps"
    if device.type == "cuda":
        torch.cuda.synchronize()
    began = time.perf_counter()
    while done < n_steps:
        step = first_step + done
        factor = lr_factor(step, settings["plan_steps"], settings["warmup_fraction"], rewarm_from,
                           settings["rewarmup_steps"])
        for group in optimizer.param_groups:
            group["lr"] = settings["learning_rate"] * factor
        ids = batches.next()
        attention, maskable = _inputs(torch, ids, pad_id, special_ids)
        with autocast:
            out = model(ids, attention, maskable, mask_id, objective, rng)
        out["loss"].backward()
        torch.nn.utils.clip_grad_norm_(params, settings["max_grad_norm"], foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        tokens += attention.sum()
        done += 1
        if done % sync_every == 0 or done == n_steps:
            last = {k: float(v.detach()) for k, v in out.items()}  # one device sync per sync_every steps
            if not math.isfinite(last["loss"]):
                raise FloatingPointError(f"loss {last['loss']} at step {step + 1}")
        # The host clock, read every step without waiting for the device (at most a few queued
        # steps ahead of it; the end synchronises before the time is taken).
        if time_budget and time.perf_counter() - began >= time_budget and done < n_steps:
            stopped_by = "time_budget"
            break
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - began
    if not last:
        last = {k: float(v.detach()) for k, v in out.items()}
    return done, int(tokens), seconds, last, stopped_by


def _throughput(tokens, seconds, flops_params, device, peak_tflops) -> Dict[str, Any]:
    out = {"tokens": tokens, "seconds": round(seconds, 2), "tokens_per_second": round(tokens / max(seconds, 1e-9), 1)}
    achieved = 6 * flops_params * tokens / max(seconds, 1e-9)
    out["achieved_tflops"] = round(achieved / 1e12, 4)
    if device.type == "cuda" and peak_tflops:
        out["model_flops_utilization"] = round(achieved / (peak_tflops * 1e12), 4)
    return out


# --- export and resume ----------------------------------------------------------------------------

def _export(torch, model, tokenizer, out: Path, state: Dict[str, Any]) -> None:
    """``out/model`` (float16 discriminator + tokenizer), the generator's own tensors, state.json."""
    from safetensors.torch import save_file

    model_dir = out / "model"
    if model_dir.exists():
        shutil.rmtree(model_dir)
    disc = model.discriminator
    disc.save_pretrained(model_dir, safe_serialization=True,
                         state_dict={k: v.detach().to(torch.float16).contiguous() for k, v in disc.state_dict().items()})
    config = json.loads((model_dir / "config.json").read_text())
    config["torch_dtype"] = "float16"
    (model_dir / "config.json").write_text(json.dumps(config, indent=2))
    tokenizer.model_max_length = disc.config.max_position_embeddings
    tokenizer.save_pretrained(model_dir)
    save_file({k: v.detach().to(torch.float16).contiguous() for k, v in _own_generator_state(model).items()},
              str(out / "generator.safetensors"), metadata={"format": "pt"})
    model.generator.config.to_json_file(str(out / "generator_config.json"))
    (out / "state.json").write_text(json.dumps(state, indent=2))


def _unpack_parts(source: Path) -> Path:
    """A --bring-back directory (export.tar.00, ...) unpacked to a temporary directory."""
    parts = sorted(source.glob("export.tar.*"))
    target = Path(tempfile.mkdtemp(prefix="pretrain_gpu_resume_"))
    joined = target / "export.tar"
    with joined.open("wb") as f:
        for part in parts:
            f.write(part.read_bytes())
    with tarfile.open(joined) as tar:
        tar.extractall(target, filter="data")
    joined.unlink()
    return target


def _bring_back(out: Path, dest: Path) -> List[str]:
    """summary.json, MODEL_CARD.md and the export as tar parts of at most 15 MiB (the device
    tool returns at most 8 files of 16 MiB each, two folders deep)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(out / "summary.json", dest / "summary.json")
    shutil.copy2(out / "model" / "MODEL_CARD.md", dest / "MODEL_CARD.md")
    tar_path = out / "export.tar"
    with tarfile.open(tar_path, "w") as tar:
        for name in ("model", "generator.safetensors", "generator_config.json", "state.json", "summary.json"):
            tar.add(out / name, arcname=name)
    written = []
    with tar_path.open("rb") as f:
        index = 0
        while True:
            chunk = f.read(PART_BYTES)
            if not chunk:
                break
            name = f"export.tar.{index:02d}"
            (dest / name).write_bytes(chunk)
            written.append(name)
            index += 1
    tar_path.unlink()
    if len(written) > 6:
        raise ValueError(f"export is {len(written)} parts: more than the device tool brings back")
    return ["summary.json", "MODEL_CARD.md", *written]


def _model_card(summary: Dict[str, Any]) -> str:
    run, total = summary["this_run"], summary["cumulative"]
    held = summary["heldout"]
    s = summary["settings"]
    return "\n".join([
        f"# {summary['name']}",
        "",
        f"ELECTRA discriminator continued with replaced-token detection from `{summary['continued_from']}` "
        f"by `benchmarks/pretrain_gpu.py` (float16 safetensors; loads with `AutoModel.from_pretrained`). "
        "Not the released encoder: it has not been through the encoder ablation.",
        "",
        f"- Steps: {total['steps']:,} in {total['runs']} run(s), {total['tokens']:,} WordPieces "
        f"(this run: {run['steps']:,} steps, {run['tokens']:,} WordPieces on {summary['device_name']}).",
        f"- Batch {s['batch_size']} x {s['max_seq_length']}, peak rate {s['learning_rate']:.2e} over a "
        f"{s['plan_steps']:,}-step plan; bf16 {s['bf16']}, compile {s['compile']}, TF32 {s['tf32']}.",
        f"- Speed this run: {run['tokens_per_second']:,.0f} WordPieces/s"
        + (f", model FLOPs utilisation {run['model_flops_utilization']:.2%}" if "model_flops_utilization" in run else "")
        + ".",
        f"- Held-out RTD loss: {held['before']['disc_loss']:.4f} before this run, {held['after']['disc_loss']:.4f} after "
        f"(discriminator accuracy {held['before']['disc_acc']:.4f} -> {held['after']['disc_acc']:.4f}).",
        "- Text: " + ", ".join(f"{x['name']} (SHA-1 {x['sha1'][:12]})" for x in summary["sources"]) + ".",
        "",
    ])


# --- main -----------------------------------------------------------------------------------------

def main(argv: Optional[List[str]] = None) -> Dict[str, Any]:
    args = parse_args(argv)
    import torch
    from transformers import AutoTokenizer

    engine = _import_engine()
    electra = engine[2]
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device)
    settings = _settings(args, device)
    torch.backends.cuda.matmul.allow_tf32 = settings["tf32"]
    torch.backends.cudnn.allow_tf32 = settings["tf32"]
    torch.manual_seed(args.seed)
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    # Where this run starts: the previous state, or the encoder to warm-start.
    previous: Dict[str, Any] = {"step": 0, "tokens": 0, "runs": 0, "seconds": 0.0, "history": []}
    optimizer_state = None
    source, kind = Path(args.init), "encoder"
    if args.resume_from is not None:
        source = Path(args.resume_from)
        if not (source / "state.json").is_file() and list(source.glob("export.tar.*")):
            source = _unpack_parts(source)
        if not (source / "state.json").is_file():
            raise FileNotFoundError(f"--resume-from {args.resume_from}: no state.json or export.tar.* parts")
        previous = json.loads((source / "state.json").read_text())
        kind = "export"
        if (source / "state.pt").is_file():
            optimizer_state = torch.load(source / "state.pt", map_location="cpu", weights_only=False)
    tokenizer = AutoTokenizer.from_pretrained(source / "model" if kind == "export" else source)
    model = _build_model(torch, engine, source, kind)
    if optimizer_state is not None:
        model.load_state_dict(optimizer_state["model"])  # fp32 weights beside the fp16 export
        model.tie_embeddings()
    model.to(device).train()
    continued_from = previous.get("continued_from") or str(args.init)

    texts = [Path(t) for t in args.text] if args.text else [MIRROR / f"{n}.txt.xz" for n in DEFAULT_TEXTS]
    heldout_text = Path(args.heldout) if args.heldout else MIRROR / "heldout.txt.xz"
    work = args.work_dir or out.parent / "pretrain_gpu_corpus"
    packed = _packed(engine, texts, tokenizer, work / "train", args.max_seq_length)
    heldout = _packed(engine, [heldout_text], tokenizer, work / "heldout", args.max_seq_length)

    objective = electra.ObjectiveSettings(mask_prob=settings["mask_prob"], keep_prob=settings["keep_prob"],
                                          disc_weight=settings["disc_weight"])
    special_ids = torch.tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long, device=device)
    mask_id, pad_id = tokenizer.mask_token_id, packed.pad_id
    flops_params = _flops_parameters(torch, model)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if settings["bf16"] else nullcontext()
    rng = torch.Generator(device=device)
    rng.manual_seed(args.seed + 7919 * (previous["runs"] + 1))

    def timed(run_settings, steps, budget, first_step, rewarm_from, optimizer):
        batches = _Batches(torch, engine, packed, run_settings["batch_size"], args.seed, device,
                           run_settings["prefetch"], first_step)
        try:
            return _train(torch, model, optimizer, batches, steps, budget, run_settings, first_step, rewarm_from,
                          device, autocast, special_ids, mask_id, objective, pad_id, rng)
        finally:
            batches.close()

    summary: Dict[str, Any] = {"name": out.name, "device_name": _device_name(torch, device), "device": str(device),
                               "torch": torch.__version__, "flops_parameters": flops_params,
                               "padding_share": round(1 - packed.n_tokens / (len(packed) * packed.max_seq_length), 4)}

    if args.compare_baseline > 0 and not args.baseline:
        # Today's settings on the same model, timed first; weights restored afterwards.
        base = _settings(parse_args(["--out", str(out), "--baseline", "--max-seq-length", str(args.max_seq_length),
                                     "--batch-size", str(args.baseline_batch_size),
                                     "--plan-steps", str(args.plan_steps)]), device)
        torch.backends.cuda.matmul.allow_tf32 = base["tf32"]
        saved = {k: v.detach().clone() for k, v in model.state_dict().items()}
        opt = _make_optimizer(torch, model, base["learning_rate"], base["weight_decay"], base["adam_eps"])
        warm = timed(base, 5, 0, 0, None, opt)  # warm-up steps (allocator, kernels)
        done, tokens, seconds, _, _ = timed(base, 10 ** 9, args.compare_baseline, 5, None, opt)
        summary["baseline"] = {"settings": base, "steps": done, "warmup_steps": warm[0],
                               **_throughput(tokens, seconds, flops_params, device, args.peak_tflops)}
        model.load_state_dict(saved)
        model.tie_embeddings()
        del opt, saved
        torch.backends.cuda.matmul.allow_tf32 = settings["tf32"]

    hold = lambda: _heldout_loss(torch, model, heldout, args.heldout_sequences, settings["batch_size"], device,  # noqa: E731
                                 autocast, special_ids, mask_id, objective)
    before = hold()
    optimizer = _make_optimizer(torch, model, settings["learning_rate"], settings["weight_decay"], settings["adam_eps"])
    rewarm_from = None
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state["optimizer"])
    elif kind == "export":
        rewarm_from = previous["step"]
    compile_seconds = None
    if settings["compile"]:
        began = time.perf_counter()
        model.discriminator.compile(dynamic=False)
        model.generator.electra.compile(dynamic=False)
        # First steps trace and compile: run them outside the timed window (they do train).
        warm = timed(settings, min(3, args.max_steps), 0, previous["step"], rewarm_from, optimizer)
        compile_seconds = round(time.perf_counter() - began, 1)
        first_done, first_tokens = warm[0], warm[1]
    else:
        first_done, first_tokens = 0, 0
    done, tokens, seconds, last, stopped_by = timed(
        settings, args.max_steps - first_done, args.time_budget, previous["step"] + first_done, rewarm_from, optimizer)
    done += first_done
    if settings["compile"]:  # the held-out batches have other shapes: evaluate uncompiled
        model.discriminator._compiled_call_impl = None
        model.generator.electra._compiled_call_impl = None
    after = hold()
    step = previous["step"] + done
    total_tokens = previous["tokens"] + tokens + first_tokens
    this_run = {"first_step": previous["step"], "steps": done, "stopped_by": stopped_by, "compile_seconds": compile_seconds,
                "timed_steps": done - first_done, **_throughput(tokens, seconds, flops_params, device, args.peak_tflops)}
    this_run["tokens"] = tokens + first_tokens
    history = previous.get("history", []) + [{"steps": done, "tokens": this_run["tokens"], "device": summary["device_name"],
                                              "tokens_per_second": this_run["tokens_per_second"]}]
    state = {"step": step, "tokens": total_tokens, "runs": previous["runs"] + 1, "continued_from": continued_from,
             "seconds": round(previous.get("seconds", 0.0) + seconds, 1), "history": history,
             "lr_factor_next": lr_factor(step, settings["plan_steps"], settings["warmup_fraction"], rewarm_from,
                                         settings["rewarmup_steps"])}
    from spacy_biolm.pretraining.sources import describe_sources

    summary.update({
        "continued_from": continued_from,
        "resumed_from": str(args.resume_from) if args.resume_from else None,
        "optimizer_resumed": optimizer_state is not None,
        "settings": settings,
        "this_run": this_run,
        "cumulative": {"steps": step, "tokens": total_tokens, "runs": state["runs"], "train_seconds": state["seconds"]},
        "final": {k: round(v, 6) for k, v in last.items()},
        "heldout": {"sequences": min(args.heldout_sequences, len(heldout)), "before": before, "after": after},
        "sources": describe_sources(texts), "heldout_sources": describe_sources([heldout_text]),
        "n_sequences": len(packed), "corpus_tokens": packed.n_tokens,
    })
    if "baseline" in summary and summary["baseline"]["tokens_per_second"]:
        summary["speedup_vs_baseline"] = round(this_run["tokens_per_second"] / summary["baseline"]["tokens_per_second"], 3)
    from spacy_biolm.run_record import stamp_json

    summary = stamp_json(summary, device=summary["device_name"])
    _export(torch, _plain(model), tokenizer, out, state)
    if args.save_optimizer:
        torch.save({"model": _plain(model).state_dict(), "optimizer": optimizer.state_dict()}, out / "state.pt")
    (out / "model" / "MODEL_CARD.md").write_text(_model_card(summary), encoding="utf8")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf8")
    if args.write_result is not None:
        command = "python benchmarks/pretrain_gpu.py " + " ".join(sys.argv[1:] if argv is None else argv)
        result = {"what": "benchmarks/pretrain_gpu.py: efficient settings against --baseline (--compare-baseline), "
                          "same model and batches, one process", "command": command, **summary}
        args.write_result.parent.mkdir(parents=True, exist_ok=True)
        args.write_result.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    if args.bring_back is not None:
        summary["brought_back"] = _bring_back(out, args.bring_back)
    print(json.dumps({k: summary[k] for k in ("device_name", "settings", "this_run", "cumulative", "heldout")
                      if k in summary} | ({"baseline": summary["baseline"]} if "baseline" in summary else {})))
    return summary


def _plain(model):
    """The model with compiled submodules' state under their own names (Module.compile keeps them)."""
    return model


def _device_name(torch, device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    import platform

    return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


if __name__ == "__main__":
    main()
