"""How torch's OpenMP threads wait between parallel regions in ``predict.py``.

On the CPU, torch runs its larger operators (the BiLSTMs' steps, the scorer's projection, the
greedy step's bigger tensors) on its OpenMP threads, and a parse is thousands of short
parallel regions.  Between two regions a thread either spins for a while (OpenMP's default;
GNU libgomp spins about 300,000 times) or, with ``OMP_WAIT_POLICY=PASSIVE``, goes to sleep
at once and must be woken for the next region.

Which is better depends on whether the cores are free:

- **Free cores, one process** (the usual ``predict.py`` on the CPU): waking sleeping threads
  for every region costs about a sixth of the parse.  ``predict.py`` on English-EWT test
  (untrained default model, 2 threads, 2-core machine, six alternations): 1.93 s median with
  ``PASSIVE`` against 1.60 s with OpenMP's default; a second thread made the encoder 1.5
  times faster with the default and barely faster with ``PASSIVE``.
- **Cores shared with other busy processes**: a thread that spins while the thread it waits
  for is descheduled wastes the core that thread needs.  The same run with one CPU-bound
  process beside it: 2.5 s with ``PASSIVE``, 5.2-5.7 s with the default.  Training's many
  small operators collapse the same way (:class:`~neuralparse.config.TrainerConfig`'s
  ``threads``), which is why ``train.py`` always sets ``PASSIVE``.

So :func:`choose_waiting` keeps OpenMP's default where ``predict.py`` parses on the CPU in
a single process and sets ``PASSIVE`` where it shares the machine with processes of its own:
several ``torchrun`` ranks, or a GPU run, whose worker processes read and write on the CPU
cores (:mod:`neuralparse.pipeline`).  Whether ``device=auto`` will find a GPU is judged
before torch is imported (OpenMP reads these variables once, when torch loads it), from the
GPU drivers' files.  A user's ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is always kept: on a
machine whose cores other programs keep busy, ``OMP_WAIT_POLICY=PASSIVE`` is the setting to
give.
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
    """Whether ``predict.py`` with ``device`` runs beside processes of its own: several
    ``torchrun`` ranks (``WORLD_SIZE``), or a GPU run (``cuda``, or ``auto`` where a GPU
    driver is loaded)."""
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
