"""Plots of pretraining runs."""

from pathlib import Path
from typing import Dict, List

__all__ = ["plot_pretraining_curve", "plot_albert_curve"]


def plot_pretraining_curve(history: List[Dict[str, float]], path: Path) -> Path:
    """Losses (left) and accuracies (right) per logged step, saved as a PNG."""
    import matplotlib

    matplotlib.use("Agg")  # no display on servers
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in history]
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax_loss.plot(steps, [r["gen_loss"] for r in history], label="generator MLM loss")
    ax_loss.plot(steps, [r["disc_loss"] for r in history], label="discriminator RTD loss")
    ax_loss.set_xlabel("step")
    ax_loss.set_yscale("log")
    ax_loss.legend()
    for key, label in (
        ("disc_acc", "discriminator accuracy"),
        ("disc_recall", "replaced tokens detected"),
        ("gen_acc", "generator MLM accuracy"),
    ):
        ax_acc.plot(steps, [r[key] for r in history], label=label)
    # The discriminator only learns something once it beats answering "original" everywhere.
    ax_acc.plot(
        steps, [1.0 - r["replaced_share"] for r in history], linestyle="--", color="grey",
        label="always 'original' (baseline)",
    )
    ax_acc.set_xlabel("step")
    ax_acc.set_ylim(0, 1)
    ax_acc.legend()
    fig.suptitle("ELECTRA pretraining")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_albert_curve(history: List[Dict[str, float]], path: Path) -> Path:
    """ALBERT: MLM and sentence-order losses (left) and accuracies (right) per logged step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in history]
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax_loss.plot(steps, [r["mlm_loss"] for r in history], label="masked LM loss")
    ax_loss.plot(steps, [r["sop_loss"] for r in history], label="sentence-order loss")
    ax_loss.set_xlabel("step")
    ax_loss.set_yscale("log")
    ax_loss.legend()
    ax_acc.plot(steps, [r["mlm_acc"] for r in history], label="masked LM accuracy")
    ax_acc.plot(steps, [r["sop_acc"] for r in history], label="sentence-order accuracy")
    ax_acc.axhline(0.5, linestyle="--", color="grey", label="sentence order by chance")
    ax_acc.set_xlabel("step")
    ax_acc.set_ylim(0, 1)
    ax_acc.legend()
    fig.suptitle("ALBERT pretraining")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
