"""Plots of pretraining runs: losses (left) and accuracies (right) per logged step."""

from pathlib import Path
from typing import Dict, List, Sequence, Tuple

__all__ = ["plot_pretraining_curve", "plot_albert_curve"]


def plot_pretraining_curve(history: List[Dict[str, float]], path: Path) -> Path:
    """ELECTRA: generator and discriminator losses; discriminator and generator accuracies next to
    answering "original" everywhere (the discriminator has learnt something only above it)."""
    baseline = [1.0 - r["replaced_share"] for r in history]
    return _two_panels(
        history,
        losses=[("gen_loss", "generator MLM loss"), ("disc_loss", "discriminator RTD loss")],
        accuracies=[("disc_acc", "discriminator accuracy"), ("disc_recall", "replaced tokens detected"),
                    ("gen_acc", "generator MLM accuracy")],
        baseline=(baseline, "always 'original' (baseline)"),
        title="ELECTRA pretraining",
        path=path,
    )


def plot_albert_curve(history: List[Dict[str, float]], path: Path) -> Path:
    """ALBERT: masked LM and sentence-order losses and accuracies, next to chance for the order."""
    return _two_panels(
        history,
        losses=[("mlm_loss", "masked LM loss"), ("sop_loss", "sentence-order loss")],
        accuracies=[("mlm_acc", "masked LM accuracy"), ("sop_acc", "sentence-order accuracy")],
        baseline=([0.5] * len(history), "sentence order by chance"),
        title="ALBERT pretraining",
        path=path,
    )


def _two_panels(
    history: List[Dict[str, float]],
    losses: Sequence[Tuple[str, str]],
    accuracies: Sequence[Tuple[str, str]],
    baseline: Tuple[List[float], str],
    title: str,
    path: Path,
) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # no display on servers
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in history]
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    for key, label in losses:
        ax_loss.plot(steps, [r[key] for r in history], label=label)
    ax_loss.set_xlabel("step")
    ax_loss.set_yscale("log")
    ax_loss.legend()
    for key, label in accuracies:
        ax_acc.plot(steps, [r[key] for r in history], label=label)
    ax_acc.plot(steps, baseline[0], linestyle="--", color="grey", label=baseline[1])
    ax_acc.set_xlabel("step")
    ax_acc.set_ylim(0, 1)
    ax_acc.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
