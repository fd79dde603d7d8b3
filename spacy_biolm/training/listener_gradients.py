"""How hard each head of a multi-task pipeline pulls on the transformer it shares.

Every component listening to one ``transformer`` sends it a gradient; the transformer adds them
and one optimizer step follows, which Adam scales by the sum's size. A head whose gradient is a
hundredth of another's barely moves the encoder: it learns as on a frozen one. The listener's
``grad_factor`` scales what a head sends; this measures the sizes it should balance: for a few
training batches of a config, the L2 norm of each head's gradient into the transformer (the sum of
squares spacy-transformers adds to the transformer's loss), one head at a time, the weights left
unchanged. A ``tok2vec`` shared by listeners is measured the same way.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from statistics import mean
from typing import Dict, Iterator, List, Optional

__all__ = ["listener_gradients"]


def listener_gradients(config_path: Path, n_batches: int = 6, overrides: Optional[Dict[str, object]] = None,
                       use_gpu: int = -1) -> Dict[str, object]:
    """Initialise ``config_path`` (with ``overrides``) as ``spacy train`` does and, for its first
    ``n_batches`` training batches (epoch after epoch), measure each listening head's gradient norm into its
    transformer. Returns ``{"upstream": its name, "heads": {name: {"grad_factor", "mean_norm"}},
    "batches": [{"examples", "norms": {name: norm}}], "ratio_to_largest": {name: ratio}}``."""
    from spacy.training.initialize import init_nlp
    from spacy.util import load_config, registry, resolve_dot_names
    from thinc.api import SGD, require_gpu

    if n_batches < 1:
        raise ValueError(f"n_batches must be at least 1, got {n_batches}")
    if use_gpu >= 0:
        require_gpu(use_gpu)
    config = load_config(Path(config_path), overrides=overrides or {}, interpolate=False)
    nlp = init_nlp(config, use_gpu=use_gpu)
    upstreams = [name for name, pipe in nlp.pipeline if getattr(pipe, "listening_components", None)]
    if len(upstreams) != 1:
        raise ValueError(f"{config_path}: expected one transformer or tok2vec with listeners, found {upstreams or 'none'}")
    upstream = upstreams[0]
    heads: List[str] = list(nlp.get_pipe(upstream).listening_components)
    resolved = nlp.config.interpolate()
    training = registry.resolve(resolved["training"])
    (train_corpus,) = resolve_dot_names(resolved, [training["train_corpus"]])
    unchanged = SGD(learn_rate=0.0)  # gradients computed, weights not moved: every batch meets the initial model
    batches = []
    for batch in islice(_epochs(training["batcher"], train_corpus, nlp, config_path), n_batches):
        norms = {}
        for head in heads:
            losses: Dict[str, float] = {}
            nlp.update(batch, sgd=unchanged, losses=losses, exclude=[h for h in heads if h != head])
            norms[head] = losses.get(upstream, 0.0) ** 0.5
        batches.append({"examples": len(batch), "norms": norms})
    means = {head: mean(b["norms"][head] for b in batches) for head in heads}
    largest = max(means.values()) or 1.0
    return {
        "upstream": upstream,
        "heads": {head: {"grad_factor": _grad_factor(nlp, head), "mean_norm": means[head]} for head in heads},
        "ratio_to_largest": {head: means[head] / largest for head in heads},
        "batches": batches,
    }


def _epochs(batcher, corpus, nlp, config_path) -> Iterator[list]:
    """The training batches, epoch after epoch (a small corpus may give fewer than asked in one)."""
    while True:
        n_batches = 0
        for batch in batcher(corpus(nlp)):
            n_batches += 1
            yield batch
        if not n_batches:
            raise ValueError(f"{config_path}: the training corpus gave no batch")


def _grad_factor(nlp, head: str) -> Optional[float]:
    """The ``grad_factor`` of ``head``'s transformer listener (None when it has no such setting)."""
    for node in nlp.get_pipe(head).model.walk():
        if "grad_factor" in node.attrs:
            return float(node.attrs["grad_factor"])
    return None
