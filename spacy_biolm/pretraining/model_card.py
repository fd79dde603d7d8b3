"""The model card of an encoder released with the project (``released/<name>/``).

A released encoder is the ``release/`` export of a pretraining run (float16 safetensors, HF config
and tokenizer) that won the encoder ablation. The run's ``pretrain_summary.json`` and held-out log
travel with it; the card is generated from them and from the ablation's results, so every number
in it is one a run wrote: corpus files with their SHA-1 and licences, steps, batch and tokens,
hardware, speed, the held-out losses at each evaluation, and the downstream scores beside the
reference encoder's.

The ablation itself (its table, each encoder's mean dev score) is evaluation's
(:mod:`spacy_biolm.evaluation.encoder_choice`), a layer above this one: the caller passes those two
functions in (``spacy-biolm pretrain model-card`` passes ``ablation_table`` and ``mean_dev``).
"""

import json
from pathlib import Path
from typing import Callable, Dict, Optional, Union

from .loop import HELDOUT_LOG_FILE, SUMMARY_FILE, read_log
from .sources import recorded_licences

__all__ = ["CURVE", "CARD", "ABLATION_RECORD", "model_card", "write_model_card"]

PathLike = Union[str, Path]
#: Renders the ablation's results as a Markdown table.
AblationTable = Callable[[Dict[str, object]], str]
#: One encoder's record of the ablation -> its mean dev score over the tasks ({"mean", "std"}).
MeanDev = Callable[[Dict[str, object]], Optional[Dict[str, object]]]
CURVE = "pretrain_curve.png"
CARD = "MODEL_CARD.md"
# Which ablation chose the encoder, under which name: what a test checks `all`'s encoder against.
ABLATION_RECORD = "ablation.json"


def model_card(
    released_dir: PathLike,
    ablation: Dict[str, object],
    ablation_name: str,
    ablation_file: str,
    hardware: str,
    corpus_dir: Optional[PathLike] = None,
    notes: str = "",
    *,
    ablation_table: AblationTable,
    mean_dev: MeanDev,
) -> str:
    """Markdown card of the encoder in ``released_dir`` (with ``pretrain_summary.json``,
    ``pretraining_settings.json`` and ``heldout_log.jsonl`` beside its weights). ``ablation`` is the
    encoder ablation's results (``spacy-biolm evaluate encoders``), where this encoder is
    ``ablation_name``; ``ablation_file`` is where those results are kept. ``hardware`` names the
    machine the run used (the summary records only the torch device type). ``ablation_table`` and
    ``mean_dev`` read the ablation (:func:`spacy_biolm.evaluation.encoder_choice.ablation_table` and
    :func:`~spacy_biolm.evaluation.encoder_choice.mean_dev`)."""
    released_dir = Path(released_dir)
    summary = _read(released_dir / SUMMARY_FILE)
    settings = _read(released_dir / "pretraining_settings.json")
    config = _read(released_dir / "config.json")
    if ablation_name not in ablation.get("encoders", {}):
        raise KeyError(f"{ablation_file} has no encoder {ablation_name!r}; it has {sorted(ablation.get('encoders', {}))}")
    training, corpus = settings["training"], settings["corpus"]
    sequences = summary["steps"] * training["batch_size"] * training.get("grad_accumulation", 1)
    name = released_dir.name
    start = summary.get("continued_from")
    lines = [
        f"# {name}",
        "",
        f"An ELECTRA discriminator ({config['num_hidden_layers']} layers, hidden {config['hidden_size']}, "
        f"{config['num_attention_heads']} heads, vocabulary {config['vocab_size']:,}; "
        f"{summary['encoder_parameters']:,} parameters), stored as {config.get('torch_dtype', 'float32')} safetensors. "
        + (f"Continued from the published checkpoint `{start}` with replaced-token detection on biomedical text."
           if start else "Pretrained from scratch with replaced-token detection on biomedical text."),
        "",
        "## Pretraining",
        "",
        f"- Steps: {summary['steps']:,} of {training['batch_size']} sequences of up to {corpus['max_seq_length']} "
        f"WordPieces ({sequences:,} sequences; the packed corpus holds {summary['corpus_tokens']:,} WordPieces "
        f"in {summary['n_sequences']:,} sequences, so about {sequences / summary['n_sequences']:.1f} passes).",
        f"- Peak learning rate {training['learning_rate']}, warmup {training['warmup_fraction']:.0%} of the steps, "
        f"linear decay to 0 at the last step; bf16 {training.get('bf16', False)}.",
        f"- Hardware: {hardware} ({summary['device']}, {summary['processes']} process(es)); "
        f"{summary['seconds_this_run']:,.0f} s of training at {summary['tokens_per_second']:,.0f} WordPieces/s"
        + (f", model FLOPs utilisation {summary['model_flops_utilization']:.2%}." if summary.get("model_flops_utilization") else "."),
        "",
        "| text file | SHA-1 | documents per licence |",
        "|---|---|---|",
        *(f"| {s['name']} | `{s['sha1'][:12]}` | "
          f"{', '.join(f'{k} {v:,}' for k, v in s['licences'].items()) or 'not recorded'} |"
          for s in recorded_licences(summary.get("sources", []), corpus_dir)),
        "",
        "Held-out text (`heldout.txt.xz`), the same masked sample at each evaluation:",
        "",
        "| step | RTD loss | RTD accuracy | recall of replaced tokens | generator MLM loss |",
        "|---:|---:|---:|---:|---:|",
        *(f"| {row['step']:,} | {row['disc_loss']:.4f} | {row['disc_acc']:.4f} | {row['disc_recall']:.4f} | {row['gen_loss']:.3f} |"
          for row in read_log(released_dir / HELDOUT_LOG_FILE)),
        "",
    ]
    if (released_dir / CURVE).is_file():
        lines += [f"![training and held-out losses]({CURVE})", ""]
    record, chosen = ablation["encoders"][ablation_name], ablation.get("chosen")
    dev, reference = mean_dev(record), ablation.get("reference")
    verdict = (f"It is the ablation's chosen encoder (reference: `{reference}`)." if chosen == ablation_name
               else f"The ablation chose `{chosen}`, not this encoder.")
    lines += [
        "## Downstream: the encoder ablation",
        "",
        f"From `{ablation_file}`, where this encoder is `{ablation_name}` (mean dev "
        f"{100 * dev['mean']:.2f}, seed std {100 * dev['std']:.2f}). {verdict}",
        "",
        ablation_table(ablation),
        "",
    ]
    if notes:
        lines += ["## Notes", "", notes, ""]
    return "\n".join(lines)


def write_model_card(released_dir: PathLike, ablation_path: PathLike, ablation_name: str, hardware: str,
                     corpus_dir: Optional[PathLike] = None, notes: str = "", *,
                     ablation_table: AblationTable, mean_dev: MeanDev) -> Path:
    """Write ``released_dir/MODEL_CARD.md`` (:func:`model_card`) and ``ablation.json`` (the
    ablation's file and the encoder's name in it); returns the card's path."""
    ablation = _read(Path(ablation_path))
    card = model_card(released_dir, ablation, ablation_name, str(ablation_path), hardware, corpus_dir, notes,
                      ablation_table=ablation_table, mean_dev=mean_dev)
    path = Path(released_dir) / CARD
    path.write_text(card, encoding="utf8")
    record = {"ablation": str(ablation_path), "name": ablation_name}
    (Path(released_dir) / ABLATION_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")
    return path


def _read(path: Path) -> Dict[str, object]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} missing: a released encoder keeps its pretraining run's {path.name} beside its weights")
    return json.loads(path.read_text(encoding="utf8"))
