"""Loading a trained pipeline to run it: the one loader of every command that runs one.

``load_pipeline`` puts it on a GPU or the CPU, sets the torch threads, and optionally replaces
the ``nn.Linear`` layers of its encoders by int8 ones (``int8=True``). The int8 encoders are
PyTorch's dynamic quantisation (``torch.ao``, deprecated in favour of torchao and working in the
pinned torch): weights stored as int8 with a scale per output channel, activations quantised on
the fly per batch, integer matrix products (fbgemm/onednn) on CPU. Attention's softmax, layer
norms, embeddings and the task heads stay float32. A scale per channel rather than one per matrix
halved the F1 it costs the release's NER; ``benchmarks/results/int8.json`` has what remains and
the speed-up. It is an inference option: the quantised layers have no gradients, and a pipeline
saved after it would store int8 modules its config cannot rebuild, so its ``to_disk`` is refused.
"""

from pathlib import Path
from typing import Union

__all__ = ["load_pipeline", "quantize_encoders"]


def quantize_encoders(nlp) -> int:
    """Replace, in place, every ``torch.nn.Linear`` of the pipeline's HF encoders (those of its
    disabled components too; each encoder once, however many components share it) by a dynamically
    quantised int8 Linear (a weight scale per output channel); returns the number of encoders
    quantised. CPU only: raises ValueError for an encoder on a GPU."""
    import warnings

    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    from .training.shared_encoder import pipeline_encoders

    encoders = pipeline_encoders(nlp, include_disabled=True)
    for encoder in encoders:
        device = next(encoder.parameters()).device
        if device.type != "cpu":
            raise ValueError(f"int8 encoders run on the CPU only; the pipeline's {type(encoder).__name__} is on {device}")
        encoder.eval()
        with warnings.catch_warnings():  # torch.ao's deprecation notices, said once in the module docstring
            warnings.simplefilter("ignore", (DeprecationWarning, UserWarning))
            quantize_dynamic(encoder, {torch.nn.Linear: per_channel_dynamic_qconfig}, inplace=True)
    if encoders:
        def refuse_to_disk(*args, **kwargs):
            raise ValueError("this pipeline's encoders were quantised to int8 at load time (an inference option); "
                             "save the pipeline it was loaded from instead")

        nlp.to_disk = refuse_to_disk
        nlp.meta["int8_encoders"] = len(encoders)
    return len(encoders)


def load_pipeline(model: Union[str, Path], gpu_id: int = -1, threads: int = 0, int8: bool = False):
    """``spacy.load(model)`` (a package name or a pipeline folder) on GPU ``gpu_id`` (the CPU for
    -1), with ``threads`` torch threads (0: torch's default) and, with ``int8``, its encoders'
    Linear layers quantised to int8 (:func:`quantize_encoders`; CPU only)."""
    import spacy

    if int8 and gpu_id >= 0:
        raise ValueError(f"int8 encoders run on the CPU only: give gpu_id -1, not {gpu_id}")
    if threads > 0:
        import torch

        torch.set_num_threads(threads)
    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    nlp = spacy.load(model)
    if int8 and not quantize_encoders(nlp):
        raise ValueError(f"{model}: int8 was asked for, but the pipeline runs no HF encoder to quantise")
    return nlp
