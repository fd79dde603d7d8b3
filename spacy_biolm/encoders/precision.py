"""The precision of an encoder's training passes: float32, or bfloat16 autocast.

Fine-tuning a small encoder on 2 CPU cores spends most of a step in the encoder's matrix
products, which CPUs with AMX or AVX512-BF16 run faster in bfloat16, as GPUs do (a whole update of
configs/release_multitask.cfg against float32: ``benchmarks/results/train_precision.json``, from
``benchmarks/train_precision.py``). ``train_precision = "bfloat16"`` runs the
encoder's *training* forward under ``torch.autocast`` in bfloat16 on the encoder's device: the
weights, their gradients and the optimizer stay float32 (bfloat16 has float32's exponent range,
so no gradient scaler is needed), and the hidden states leave the encoder in float32. Prediction
passes (evaluation, ``nlp(text)``, the shipped pipeline) are float32 on every machine, so a
trained pipeline gives the same answers wherever it runs.

On a device without native bfloat16 (an older CPU, a pre-Ampere GPU) autocast would emulate it,
slower than float32: the pass runs in float32 there, with a warning, and the step's result is
that of ``train_precision = "float32"``.

Import-light: torch is imported when a pass asks for its context.
"""

import contextlib
import warnings
from typing import Any, ContextManager

__all__ = ["TRAIN_PRECISIONS", "check_train_precision", "native_bfloat16", "training_autocast"]

TRAIN_PRECISIONS = ("float32", "bfloat16")
_warned_devices: set = set()


def check_train_precision(train_precision: str, mixed_precision: bool = False) -> None:
    """Raise ValueError unless ``train_precision`` is one of :data:`TRAIN_PRECISIONS`, and when it
    is set beside thinc's ``mixed_precision`` (float16 with a gradient scaler, on a GPU)."""
    if train_precision not in TRAIN_PRECISIONS:
        raise ValueError(f"train_precision must be one of {', '.join(TRAIN_PRECISIONS)}, got {train_precision!r}")
    if mixed_precision and train_precision != "float32":
        raise ValueError(f"mixed_precision (float16 with a gradient scaler, on a GPU) and train_precision "
                         f"{train_precision!r} are two ways to train in lower precision: set one")


def native_bfloat16(device: Any) -> bool:
    """Whether ``device`` (a ``torch.device``) computes bfloat16 matrix products natively: a CUDA
    GPU that supports bf16, or a CPU with AMX tiles or AVX512-BF16."""
    import torch

    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    if device.type == "cpu":
        return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())
    return False


def training_autocast(train_precision: str, module: Any) -> ContextManager:
    """The context the training forward of ``module`` (a torch encoder) runs in: bfloat16 autocast
    on its device for ``"bfloat16"`` where the device computes it natively (else float32, warning
    once per device), nothing for ``"float32"``. The backward pass runs outside it, as autocast requires."""
    check_train_precision(train_precision)
    if train_precision == "float32":
        return contextlib.nullcontext()
    import torch

    from .devices import module_device

    device = module_device(module)

    if not native_bfloat16(device):
        if str(device) not in _warned_devices:
            _warned_devices.add(str(device))
            warnings.warn(f"train_precision 'bfloat16': {device} has no native bfloat16 (AMX, AVX512-BF16 or a "
                          "bf16 GPU), where autocast is slower than float32; training in float32", stacklevel=2)
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)
