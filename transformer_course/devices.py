"""Where lesson 9's translator runs: the device, its precision, and an honest name for it.

CUDA comes first, then Apple's MPS, then the CPU. On a CUDA GPU with bfloat16 support (compute
capability 8.0 and up: A100, H100, RTX 30xx and later) the forward pass runs in bfloat16
autocast: the matrix products use the tensor cores, and bfloat16 keeps float32's exponent range,
so no loss scaling is needed. Older GPUs (Colab's free T4 among them) train in float32.
Reports name the hardware, because a speed or a training time means nothing without it.
"""

from __future__ import annotations

import os
import platform
from contextlib import AbstractContextManager, nullcontext

import torch


def choose_device(preferred: str | torch.device | None = None) -> torch.device:
    """CUDA if present, else Apple's MPS, else the CPU (or ``preferred`` when given)."""
    if preferred is not None:
        return torch.device(preferred)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def uses_bfloat16(device: torch.device) -> bool:
    """Whether training on ``device`` runs in bfloat16 autocast (CUDA, compute capability >= 8)."""
    return device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 8


def autocast_context(device: torch.device) -> AbstractContextManager:
    """bfloat16 autocast where :func:`uses_bfloat16`; full precision elsewhere."""
    if uses_bfloat16(device):
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return nullcontext()


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so that a clock read afterwards measures it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def hardware_description(device: torch.device) -> str:
    """A one-line description of where training ran, for honest reporting."""
    if device.type == "cuda":
        precision = "bfloat16 autocast" if uses_bfloat16(device) else "float32"
        return f"GPU {torch.cuda.get_device_name(device)} ({precision})"
    if device.type == "mps":
        return "Apple GPU (MPS)"
    cores = os.cpu_count() or 0
    threads = torch.get_num_threads()
    plural = "s" if threads != 1 else ""
    return f"CPU {platform.processor() or platform.machine()}, {cores} cores, {threads} thread{plural}"
