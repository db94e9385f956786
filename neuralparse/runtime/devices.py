"""Device names as users write them (``auto``, ``cpu``, ``cuda``, ``cuda:1``) made into devices."""

from __future__ import annotations

import torch

from neuralparse.errors import InputError


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when available; an unavailable or unknown device is an input error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"device={name} but CUDA is not available")
    return torch.device(name)
