"""How torch's OpenMP threads wait between parallel regions in ``predict.py`` and ``train.py``.

On the CPU, torch runs its larger operators (the BiLSTMs' steps, the scorer's projection, the
greedy step's bigger tensors, their gradients) on its OpenMP threads, and a parse or a
training epoch is thousands of short parallel regions.  Between two regions a thread either
spins for a while (OpenMP's default; GNU libgomp spins about 300,000 times) or, with
``OMP_WAIT_POLICY=PASSIVE``, goes to sleep at once and must be woken for the next region.

Which is better depends on whether the cores are free (2-core machine, English-EWT, the
default model; ``benchmarks.predict_settings`` and ``benchmarks.epoch_cost``):

- **Free cores, one process**: waking sleeping threads for every region costs a quarter of
  ``predict.py``'s time on EWT test with 2 threads (median 1.99 s with ``PASSIVE`` against
  1.50 s).  Training suffers more: with ``PASSIVE`` a second thread made a training epoch
  *slower* than one thread (11.2-13.5 s against 8.0-8.7 s on 3,000 sentences), with the
  default it made it 1.5 times faster (5.4-5.8 s).
- **Cores shared with other busy processes**: a thread that spins while the thread it waits
  for has lost its core wastes the core that thread needs.  With one CPU-bound process
  beside them, ``predict.py`` took 4.8 s with the default against 2.4 s with ``PASSIVE``,
  and a 2-thread training epoch 20.7 s against 10.2 s (one thread: 9.0 s).

So :func:`choose_waiting` keeps OpenMP's default where the application runs on the CPU in a
single process and sets ``PASSIVE`` where it shares the machine with processes of its own:
several ``torchrun`` ranks, or a GPU run, whose prediction workers read and write on the CPU
cores (:mod:`neuralparse.prediction.pipeline`).  Whether ``device=auto`` will find a GPU is judged
before torch is imported (OpenMP reads these variables once, when torch loads it), from the
GPU drivers' files.  A user's ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is always kept: on a
machine whose cores other programs keep busy, ``OMP_WAIT_POLICY=PASSIVE`` (or one thread) is
the setting to give.  Training uses one thread by default
(:class:`~neuralparse.config.TrainerConfig`), where none of this matters.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

WAIT_POLICY = "OMP_WAIT_POLICY"
SPIN_COUNT = "GOMP_SPINCOUNT"
GPU_DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/kfd")
"""NVIDIA's and AMD ROCm's kernel drivers: without either, torch finds no GPU on Linux."""


def gpu_driver_present() -> bool:
    """Whether a GPU driver that torch could use is loaded (Linux; False elsewhere)."""
    return any(os.path.exists(path) for path in GPU_DRIVER_FILES)


def shares_the_cores(device: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``predict.py`` or ``train.py`` on ``device`` runs beside processes of its own:
    several ``torchrun`` ranks (``WORLD_SIZE``), or a GPU run (``cuda``, or ``auto`` where a
    GPU driver is loaded; there ``PASSIVE`` stays as it was, nothing having been measured on
    a GPU yet)."""
    if int(environ.get("WORLD_SIZE", "1")) > 1:
        return True
    if device == "auto":
        return gpu_driver_present()
    return device != "cpu"


def choose_waiting(device: str, environ: MutableMapping[str, str] = os.environ) -> None:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in ``environ`` (this process's environment, or that of
    a process about to start) when :func:`shares_the_cores`, unless the user chose how OpenMP
    waits; in this process it must run before torch is imported (see the module docstring)."""
    if WAIT_POLICY in environ or SPIN_COUNT in environ:
        return
    if shares_the_cores(device, environ):
        environ[WAIT_POLICY] = "PASSIVE"
