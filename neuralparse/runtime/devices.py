"""Device names, thread counts and prediction's number format as users write them, checked and
made into torch settings; and moving batches to a device without making the host wait.

All three are user input: a device that does not exist here (``tpu``, ``cuda:7`` on a machine
with one GPU, ``cuda`` without CUDA), a thread count below 1 or an unknown precision is an
:class:`~neuralparse.errors.InputError` naming the setting, not a torch traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import platform
from typing import TypeVar

import torch
from torch import Tensor

from neuralparse.errors import InputError

DEVICE_TYPES = ("cpu", "cuda", "mps")
PRECISIONS = ("float32", "bfloat16")
"""The number formats prediction can encode sentences in (:func:`encoding_precision`)."""


def resolve_device(name: str | torch.device, setting: str = "device") -> torch.device:
    """``auto`` picks CUDA when available; ``cpu``, ``cuda``, ``cuda:N`` (and ``mps`` on
    Apple GPUs) must exist on this machine.  ``setting`` names the option in messages."""
    if str(name) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        device = None
    if device is None or device.type not in DEVICE_TYPES:
        raise InputError(f"{setting}={name}: expected auto, cpu, cuda or cuda:N")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise InputError(f"{setting}={name} but CUDA is not available")
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise InputError(f"{setting}={name} but this machine has {count} CUDA device(s)")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"{setting}={name} but MPS is not available")
    return device


def to_device(tensor: Tensor, device: torch.device) -> Tensor:
    """``tensor`` on ``device``; to CUDA from pinned memory, a copy that does not wait for the
    work queued before it (one from pageable memory waits for the device to be idle); a tensor
    already on a device (the character vectors a model computed there) is moved as it is."""
    if device.type == "cuda" and tensor.device.type == "cpu":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


Batch = TypeVar("Batch")


def batch_to_device(batch: Batch, device: torch.device) -> Batch:
    """A dataclass of tensors (or ``None``) with every tensor :func:`to_device`."""
    moved = {}
    for field in dataclasses.fields(batch):  # type: ignore[arg-type]
        value = getattr(batch, field.name)
        moved[field.name] = None if value is None else to_device(value, device)
    return dataclasses.replace(batch, **moved)  # type: ignore[type-var]


def check_precision(precision: str, device: torch.device | None = None) -> None:
    """Refuse a precision that is not one of :data:`PRECISIONS`, and ``bfloat16`` on a
    device other than a CPU or CUDA GPU (``None``: any device)."""
    if precision not in PRECISIONS:
        raise InputError(f"precision={precision}: expected one of {', '.join(PRECISIONS)}")
    if precision == "bfloat16" and device is not None and device.type not in ("cpu", "cuda"):
        raise InputError(f"precision=bfloat16 is for the CPU and CUDA, not {device.type}")


def encoding_precision(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """The context in which prediction encodes sentences at ``precision`` on ``device``:
    nothing changes for ``float32``; ``bfloat16`` runs torch's matrix products and LSTMs in
    bfloat16 (``torch.autocast``: 8 bits of mantissa instead of 24, float32 accumulation, the
    weights left as they are), which CPUs with AVX512-BF16 or AMX and recent GPUs compute
    about twice as fast.  A device without such arithmetic (:func:`native_bfloat16`) encodes in
    float32 whatever the precision: there bfloat16 would be emulated, slower than float32, and
    on a CPU oneDNN has no bfloat16 LSTM at all ("could not create a primitive descriptor")."""
    check_precision(precision, device)
    if precision == "float32" or not native_bfloat16(device):
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)


def native_bfloat16(device: torch.device) -> bool:
    """Whether ``device`` computes bfloat16 products in hardware (elsewhere they are emulated,
    slower than float32): AVX512-BF16 or AMX on a CPU, compute capability 8 (Ampere) or later
    on CUDA."""
    if device.type == "cuda":
        return torch.cuda.get_device_capability(device)[0] >= 8
    if device.type == "cpu":
        return torch.backends.mkldnn.is_available() and bool(
            torch.ops.mkldnn._is_mkldnn_bf16_supported()
        )
    return False


def set_threads(threads: int | None, setting: str = "threads") -> None:
    """Use ``threads`` torch intra-op threads (``None``: leave torch's default)."""
    if threads is None:
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"{setting}={threads}: expected a positive number of threads")
    torch.set_num_threads(threads)


def flush_denormals() -> None:
    """Make this process's float arithmetic treat numbers below float32's normal range
    (about 1.2e-38) as zero, in the calling thread and the threads it starts later (torch's
    OpenMP threads, if it has not started them yet).  A CPU computes with such denormal
    numbers many times slower; training produces them as gradients shrink: on English-EWT the
    default model's training step in its 60th epoch took 90-95 ms with them against 83-86 ms
    flushed (2 threads), as fast as a fresh model's, and a resumed epoch 18-19 s against 20-21 s,
    with the same losses and dev scores.  Parsing with a trained model did not change speed.
    The setting is the process's: a notebook that trains keeps it afterwards."""
    torch.set_flush_denormal(True)


def cpu_model() -> str:
    """The CPU's model name (from ``/proc/cpuinfo`` where there is one), else its architecture."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_machine(device: torch.device) -> dict[str, object]:
    """What a measurement ran on, for the JSON of benchmarks: device, torch threads, torch and
    Python versions, CPU (architecture, model and the instruction set torch's kernels use:
    speed and float rounding depend on it), and the GPU's name on CUDA."""
    info: dict[str, object] = {
        "device": str(device),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    return info
