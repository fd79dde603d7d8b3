"""Plots of pretraining runs: losses (left) and accuracies (right) per logged step; the same
metrics on the held-out text, when evaluated, as dashed lines of the same colour."""

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = ["plot_electra_curve", "plot_albert_curve"]

History = List[Dict[str, float]]


def plot_electra_curve(history: History, path: Path, heldout: Optional[History] = None) -> Path:
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
        heldout=heldout,
    )


def plot_albert_curve(history: History, path: Path, heldout: Optional[History] = None) -> Path:
    """ALBERT: masked LM and sentence-order losses and accuracies, next to chance for the order."""
    return _two_panels(
        history,
        losses=[("mlm_loss", "masked LM loss"), ("sop_loss", "sentence-order loss")],
        accuracies=[("mlm_acc", "masked LM accuracy"), ("sop_acc", "sentence-order accuracy")],
        baseline=([0.5] * len(history), "sentence order by chance"),
        title="ALBERT pretraining",
        path=path,
        heldout=heldout,
    )


def _two_panels(
    history: List[Dict[str, float]],
    losses: Sequence[Tuple[str, str]],
    accuracies: Sequence[Tuple[str, str]],
    baseline: Tuple[List[float], str],
    title: str,
    path: Path,
    heldout: Optional[History] = None,
) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # no display on servers
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in history]
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    for ax, curves in ((ax_loss, losses), (ax_acc, accuracies)):
        for key, label in curves:
            (line,) = ax.plot(steps, [r[key] for r in history], label=label)
            if heldout:
                ax.plot([r["step"] for r in heldout], [r[key] for r in heldout], linestyle="--", marker=".",
                        color=line.get_color(), label=f"{label} (held-out)")
    ax_loss.set_xlabel("step")
    ax_loss.set_yscale("log")
    ax_loss.legend(fontsize="small")
    ax_acc.plot(steps, baseline[0], linestyle="--", color="grey", label=baseline[1])
    ax_acc.set_xlabel("step")
    ax_acc.set_ylim(0, 1)
    ax_acc.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
