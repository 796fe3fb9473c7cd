"""Which device a grading run has: `--device auto|cpu|cuda`.

Only checks that need CUDA ask (assignment.toml's `device = "cuda"`); a run
of the other checks never imports torch for this.
"""

from __future__ import annotations

import os
import sys

CHOICES = ("auto", "cpu", "cuda")


class DeviceError(ValueError):
    """--device cuda on a machine without a usable CUDA GPU."""


# What a machine with a GPU driver has: NVIDIA's driver, WSL's GPU bridge, ROCm's (torch.cuda serves it too).
DRIVER_PATHS = ("/proc/driver/nvidia", "/dev/nvidiactl", "/dev/dxg", "/dev/kfd")


def cuda_available() -> bool:
    if sys.platform == "darwin" or (sys.platform.startswith("linux") and not any(map(os.path.exists, DRIVER_PATHS))):
        return False  # no driver, no GPU: said without importing torch (a second of CPU)
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def resolve(requested: str) -> str:
    """ "cuda" or "cpu" for what was asked; `DeviceError` for cuda where there is none."""
    if requested not in CHOICES:
        raise DeviceError(f"--device {requested}: choose one of {', '.join(CHOICES)}")
    if requested == "cpu":
        return "cpu"
    if cuda_available():
        return "cuda"
    if requested == "cuda":
        raise DeviceError(
            "--device cuda: no CUDA GPU is usable here (torch.cuda.is_available() is False); "
            "use --device cpu or auto, or grade on a GPU machine"
        )
    return "cpu"
