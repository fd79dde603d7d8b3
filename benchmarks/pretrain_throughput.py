"""Pretraining throughput: our ELECTRA step against a plain transformers reference loop.

Both sides train the same ELECTRA (same config, same initial weights, same batches, same
optimizer settings) for ``--steps`` steps, interleaved step by step so that a shared, noisy
machine slows both alike. The reference is what one writes from the transformers docs:
``ElectraForMaskedLM`` and ``ElectraForPreTraining`` with tied embeddings, the generator's loss
and samples taken from full-vocabulary logits over every position, eager attention, the default
AdamW. Ours is spacy_biolm's ``ElectraRTD`` as the pretraining loop runs it (vocabulary logits
on masked positions only, SDPA attention, fused AdamW).

Peak memory is measured per side in its own process (CPU: peak RSS; GPU: peak allocated), over
a short run of the same shape.

    python benchmarks/pretrain_throughput.py --config configs/pretrain_tiny.cfg \\
        --text corpus/pretraining/text.txt --vocab pretrained/vocab --steps 60

writes ``benchmarks/results/pretrain_throughput_<device>.json`` and a loss-curve plot beside it.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

import numpy as np
import torch
from torch.nn import functional as F

from pretraining_inputs import ROOT, add_pretraining_inputs, check_pretraining_inputs
from process_memory import proc_status_mib
RESULTS = ROOT / "benchmarks" / "results"


def build_inputs(args):
    from transformers import AutoTokenizer

    from spacy_biolm.pretraining.corpus import PackedCorpus, build_packed_corpus
    from spacy_biolm.pretraining.settings import load_settings

    overrides = {"paths.text": str(args.text), "paths.vocab": str(args.vocab), "system.device": args.device}
    if args.batch_size:
        overrides["training.batch_size"] = args.batch_size
    settings = load_settings(args.config, overrides)
    tokenizer = AutoTokenizer.from_pretrained(args.vocab)
    if args.corpus:  # a memory-measuring child reuses the parent's corpus
        return settings, tokenizer, PackedCorpus.load(args.corpus)
    args.corpus = Path(tempfile.mkdtemp(prefix="bench_corpus_"))
    corpus = build_packed_corpus([Path(args.text)], tokenizer, args.corpus, settings.corpus.max_seq_length)
    return settings, tokenizer, corpus


class ReferenceElectra:
    """ELECTRA pretraining written plainly with transformers' heads over the whole vocabulary."""

    def __init__(self, disc_cfg, gen_cfg, state_from):
        from transformers import ElectraForMaskedLM, ElectraForPreTraining

        self.discriminator = ElectraForPreTraining(disc_cfg)
        self.generator = ElectraForMaskedLM(gen_cfg)
        self.discriminator.load_state_dict(state_from.discriminator.state_dict())
        self.generator.load_state_dict(state_from.generator.state_dict())
        self.generator.electra.embeddings = self.discriminator.electra.embeddings
        self.generator.generator_lm_head.weight = self.discriminator.electra.embeddings.word_embeddings.weight

    def modules(self):
        return [self.discriminator, self.generator]

    def parameters(self):
        seen, params = set(), []
        for module in self.modules():
            for p in module.parameters():
                if id(p) not in seen:
                    seen.add(id(p))
                    params.append(p)
        return params

    def loss(self, input_ids, attention, maskable, mask_id, objective, rng):
        from spacy_biolm.pretraining.electra import mask_for_mlm

        masked, selected = mask_for_mlm(input_ids, maskable, mask_id, objective.mask_prob, objective.keep_prob, rng)
        labels = input_ids.masked_fill(~selected, -100)
        gen = self.generator(masked, attention_mask=attention, labels=labels)  # logits for every token
        with torch.no_grad():
            probs = F.softmax(gen.logits[selected].float() / objective.temperature, dim=-1)
            sampled = torch.multinomial(probs, 1, generator=rng).squeeze(-1)
            corrupted = input_ids.clone()
            corrupted[selected] = sampled
            is_replaced = ((corrupted != input_ids) & attention).long()
        disc = self.discriminator(corrupted, attention_mask=attention, labels=is_replaced)
        return gen.loss + objective.disc_weight * disc.loss


def make_models(settings, tokenizer, device):
    from spacy_biolm.pretraining.attention import use_sdpa_attention
    from spacy_biolm.pretraining.electra import ElectraRTD, make_configs

    torch.manual_seed(settings.system.seed)
    disc_cfg, gen_cfg = make_configs(settings.model, len(tokenizer), tokenizer.pad_token_id)
    ours = ElectraRTD(disc_cfg, gen_cfg)
    reference = ReferenceElectra(disc_cfg, gen_cfg, ours)  # same initial weights
    if settings.model.attention == "sdpa":
        use_sdpa_attention(ours)
    ours.to(device).train()
    for module in reference.modules():
        module.to(device).train()
    # to() keeps parameter identity, so the reference's ties survive the move.
    return ours, reference


class Side:
    """One training loop, stepped from outside so two sides can be interleaved."""

    def __init__(self, name, model, settings, tokenizer, corpus, device):
        from spacy_biolm.pretraining.loop import make_optimizer

        self.name, self.model, self.settings, self.corpus, self.device = name, model, settings, corpus, device
        self.mask_id = tokenizer.mask_token_id
        self.special = torch.tensor(sorted(set(tokenizer.all_special_ids)), device=device)
        train = settings.training
        if name == "ours":
            self.optimizer = make_optimizer(model, train.learning_rate, train.weight_decay, train.adam_eps)
        else:
            self.optimizer = torch.optim.AdamW(
                model.parameters(), lr=train.learning_rate, weight_decay=train.weight_decay, eps=train.adam_eps
            )
        self.rng = torch.Generator(device=device)
        self.rng.manual_seed(settings.system.seed)
        self.autocast = (
            torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" and train.bf16 else _null()
        )
        self.seconds, self.tokens, self.losses = 0.0, 0, []

    def step(self, step: int) -> None:
        from spacy_biolm.pretraining.corpus import batch_indices

        train = self.settings.training
        rows = batch_indices(len(self.corpus), train.batch_size, step, self.settings.system.seed)
        ids = torch.from_numpy(self.corpus.rows(rows).astype(np.int64)).to(self.device)
        _sync(self.device)
        started = time.perf_counter()
        attention = ids != self.corpus.pad_id
        maskable = attention & ~torch.isin(ids, self.special)
        self.optimizer.zero_grad(set_to_none=True)
        with self.autocast:
            if self.name == "ours":
                loss = self.model(ids, attention, maskable, self.mask_id, self.settings.objective, self.rng)["loss"]
            else:
                loss = self.model.loss(ids, attention, maskable, self.mask_id, self.settings.objective, self.rng)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), train.max_grad_norm)
        self.optimizer.step()
        value = float(loss.detach())
        _sync(self.device)
        self.seconds += time.perf_counter() - started
        self.tokens += int(attention.sum())
        self.losses.append(value)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def peak_memory_of(side: str, args) -> float:
    """Memory (MiB) of a short run of one side in a fresh process: {"peak_mib", "before_steps_mib"}
    (CPU: RSS, the difference is what the training steps add; GPU: allocated)."""
    cmd = [sys.executable, __file__, "--only", side, "--config", str(args.config), "--text", str(args.text),
           "--vocab", str(args.vocab), "--steps", str(args.memory_steps), "--device", args.device,
           "--corpus", str(args.corpus)]
    if args.batch_size:
        cmd += ["--batch-size", str(args.batch_size)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"memory run of {side} failed")
    return json.loads(out.strip().splitlines()[-1])


def only(args) -> None:
    """Child process of :func:`peak_memory_of`: train one side, print its peak memory."""
    device = torch.device(args.device)
    settings, tokenizer, corpus = build_inputs(args)
    # Both are built, as in the timed run, then the other side is dropped before measuring.
    model = make_models(settings, tokenizer, device)[0 if args.only == "ours" else 1]
    side = Side(args.only, model, settings, tokenizer, corpus, device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated() / 2**20
    else:
        before = proc_status_mib("VmRSS")
    for step in range(args.steps):
        side.step(step)
    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated() / 2**20
    else:
        peak = proc_status_mib("VmHWM")
    print(json.dumps({"peak_mib": round(peak, 1), "before_steps_mib": round(before, 1)}))


def main(argv=None) -> Dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_pretraining_inputs(parser)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup-steps", type=int, default=3, help="untimed steps per side first")
    parser.add_argument("--memory-steps", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=0, help="0: the config's")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--only", choices=["ours", "reference"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    check_pretraining_inputs(parser, args)
    if args.only:
        only(args)
        return {}

    device = torch.device(args.device)
    settings, tokenizer, corpus = build_inputs(args)
    ours_model, reference_model = make_models(settings, tokenizer, device)
    sides = [Side("ours", ours_model, settings, tokenizer, corpus, device),
             Side("reference", reference_model, settings, tokenizer, corpus, device)]
    from tqdm import tqdm

    for step in tqdm(range(args.warmup_steps + args.steps), desc="interleaved steps"):
        if step == args.warmup_steps:
            for side in sides:
                side.seconds, side.tokens = 0.0, 0
        for side in sides if step % 2 == 0 else reversed(sides):  # alternate who goes first
            side.step(step)

    tail = max(1, args.steps // 4)
    result = {
        "benchmark": "pretrain_throughput",
        "device": _describe(device),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "config": str(args.config),
        "model": vars(settings.model),
        "batch_size": settings.training.batch_size,
        "max_seq_length": settings.corpus.max_seq_length,
        "vocab_size": len(tokenizer),
        "timed_steps": args.steps,
        "sides": {},
    }
    for side in sides:
        result["sides"][side.name] = {
            "tokens_per_second": round(side.tokens / side.seconds, 1),
            "seconds": round(side.seconds, 2),
            "loss_first": side.losses[0],
            f"loss_mean_last_{tail}": float(np.mean(side.losses[-tail:])),
            "losses": side.losses,
        }
    for side in sides:
        memory = peak_memory_of(side.name, args)
        result["sides"][side.name].update(
            peak_memory_mib=memory["peak_mib"],
            step_memory_mib=round(memory["peak_mib"] - memory["before_steps_mib"], 1),
        )
    ours, ref = result["sides"]["ours"], result["sides"]["reference"]
    result["speedup_tokens_per_second"] = round(ours["tokens_per_second"] / ref["tokens_per_second"], 3)
    result["memory_ratio"] = round(ours["peak_memory_mib"] / ref["peak_memory_mib"], 3)
    result["step_memory_ratio"] = round(ours["step_memory_mib"] / max(ref["step_memory_mib"], 1e-9), 3)
    key = f"loss_mean_last_{tail}"
    result["final_loss_relative_difference"] = round(abs(ours[key] - ref[key]) / ref[key], 4)
    output = args.output or RESULTS / f"pretrain_throughput_{device.type}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    from spacy_biolm.run_record import stamp_json  # the commit and date of this run (results/README.md)

    result = stamp_json(result)
    output.write_text(json.dumps(result, indent=2), encoding="utf8")
    _plot(result, output.with_suffix(".png"))
    print(
        f"ours {ours['tokens_per_second']:.0f} tok/s vs reference {ref['tokens_per_second']:.0f} tok/s: "
        f"{result['speedup_tokens_per_second']:.2f}x; peak memory {ours['peak_memory_mib']:.0f} vs "
        f"{ref['peak_memory_mib']:.0f} MiB (training steps add {ours['step_memory_mib']:.0f} vs {ref['step_memory_mib']:.0f}); mean loss over the last {tail} steps {ours[key]:.3f} vs {ref[key]:.3f}"
        f" -> {output}"
    )
    return result


def _describe(device) -> str:
    from spacy_biolm.encoders.devices import describe_device

    return describe_device(device.index or 0 if device.type == "cuda" else -1)


def _plot(result: Dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, side in result["sides"].items():
        ax.plot(side["losses"], label=f"{name} ({side['tokens_per_second']:.0f} tok/s)")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (MLM + 50 x RTD)")
    ax.set_yscale("log")
    ax.set_title(f"ELECTRA pretraining, {result['device']}: {result['speedup_tokens_per_second']:.2f}x")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
