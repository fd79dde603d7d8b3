"""Where torch inputs go: the one place that decides the device of an encoder's input tensors.

Every conversion of numpy/cupy arrays into torch inputs for an encoder goes through
``tensors_for``, so inputs always land on the device of the module's own parameters (the GPU
when spaCy runs on one, ``spacy.require_gpu()`` / ``--gpu-id``; the CPU otherwise), however the
module got there (built at ``initialize``, loaded from disk, moved by the user).

Import-light: torch is imported when a tensor is made.
"""

from typing import Any, Dict, Mapping

__all__ = ["module_device", "tensors_for", "describe_device"]


def module_device(module: Any):
    """The ``torch.device`` of ``module``'s parameters (thinc's default device for a module
    without parameters)."""
    from thinc.api import get_torch_default_device

    for parameter in module.parameters():
        return parameter.device
    return get_torch_default_device()


def tensors_for(module: Any, arrays: Mapping[str, Any]) -> Dict[str, Any]:
    """``arrays`` (numpy or cupy) as torch tensors on ``module``'s device, keys kept."""
    import torch

    device = module_device(module)
    return {key: torch.as_tensor(value, device=device) for key, value in arrays.items()}


def describe_device(gpu_id: int) -> str:
    """What results files record as the device: the GPU's name for ``gpu_id`` >= 0, else the CPU
    with its core count (the figure a 2-core budget is stated in)."""
    import os
    import platform

    if gpu_id >= 0:
        import torch

        return f"{torch.cuda.get_device_name(gpu_id)} (cuda:{gpu_id})"
    return f"cpu ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"
