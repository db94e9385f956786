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

  Beside a one-thread training run a 2-thread training epoch took 16 times one thread's time
  (30.4 s against 1.9 s on 500 sentences; 2.0 s with ``PASSIVE``).

So :func:`choose_waiting` keeps OpenMP's default where the application runs on the CPU in a
single process on free cores and sets ``PASSIVE`` where it shares the machine: with processes
of its own (several ``torchrun`` ranks, or a GPU run, whose prediction workers read and write
on the CPU cores, :mod:`neuralparse.prediction.pipeline`), or, on Linux, with other programs
that keep more of the cores busy at start-up than its threads can spare (:func:`busy_cores`:
two readings of ``/proc/stat`` 0.15 s apart).  Whether ``device=auto`` will find a GPU is judged
before torch is imported (OpenMP reads these variables once, when torch loads it), from the
GPU drivers' files.  A user's ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` is always kept: on a
machine whose cores other programs start keeping busy later, ``OMP_WAIT_POLICY=PASSIVE`` (or
one thread) is the setting to give.  Training uses one thread by default
(:class:`~neuralparse.config.TrainerConfig`), where none of this matters.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, MutableMapping

WAIT_POLICY = "OMP_WAIT_POLICY"
SPIN_COUNT = "GOMP_SPINCOUNT"
GPU_DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/kfd")
"""NVIDIA's and AMD ROCm's kernel drivers: without either, torch finds no GPU on Linux."""
PROC_STAT = "/proc/stat"
SAMPLE_SECONDS = 0.15
"""How long :func:`busy_cores` watches the cores (the kernel counts CPU time in ticks of
10 ms: 15 a core)."""
SPARE_CORES = 0.5
"""Threads may exceed the cores left free by this much before they sleep instead of spinning
(a background program's occasional half core does not cost spinning its gain)."""
SLEEPING = (
    "OpenMP threads sleep between parallel regions (OMP_WAIT_POLICY=PASSIVE): the cores are "
    "shared with other processes"
)
"""The log line of a run for which :func:`choose_waiting` set ``PASSIVE``."""


def gpu_driver_present() -> bool:
    """Whether a GPU driver that torch could use is loaded (Linux; False elsewhere)."""
    return any(os.path.exists(path) for path in GPU_DRIVER_FILES)


def cpu_times(stat: str) -> tuple[int, int]:
    """``(busy, total)`` ticks of all cores from the text of ``/proc/stat`` (its ``cpu`` line:
    user, nice, system, idle, iowait, irq, softirq, steal; idle and iowait are not busy)."""
    fields = [int(value) for value in stat.split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def busy_cores(
    read: Callable[[], str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    cores: int | None = None,
) -> float | None:
    """How many cores other programs keep busy now: the share of CPU time not idle over
    :data:`SAMPLE_SECONDS`, times the cores (this process, still starting, uses next to none).
    None where ``/proc/stat`` cannot be read (not Linux)."""

    def read_stat() -> str:
        with open(PROC_STAT, encoding="ascii") as source:
            return source.read()

    read = read or read_stat
    try:
        busy_before, total_before = cpu_times(read())
        sleep(SAMPLE_SECONDS)
        busy_after, total_after = cpu_times(read())
    except (OSError, ValueError, IndexError):
        return None
    elapsed = total_after - total_before
    if elapsed <= 0:
        return None
    return (busy_after - busy_before) / elapsed * (cores or os.cpu_count() or 1)


def shares_the_cores(
    device: str,
    environ: Mapping[str, str] = os.environ,
    threads: int | None = 1,
    busy: Callable[[], float | None] | None = None,
) -> bool:
    """Whether ``predict.py`` or ``train.py`` on ``device`` with ``threads`` torch threads
    (None: one a core) runs beside other busy processes: several ``torchrun`` ranks
    (``WORLD_SIZE``), a GPU run (``cuda``, or ``auto`` where a GPU driver is loaded; there
    ``PASSIVE`` stays as it was, nothing having been measured on a GPU yet), or, with more
    than one thread, other programs keeping busy more cores than the threads can spare."""
    if int(environ.get("WORLD_SIZE", "1")) > 1:
        return True
    on_gpu = gpu_driver_present() if device == "auto" else device != "cpu"
    if on_gpu:
        return True
    cores = os.cpu_count() or 1
    wanted = cores if threads is None else threads
    if wanted <= 1:
        return False  # one thread waits for no other
    taken = (busy or busy_cores)()
    return taken is not None and wanted > cores - taken + SPARE_CORES


def choose_waiting(
    device: str,
    environ: MutableMapping[str, str] = os.environ,
    threads: int | None = 1,
    busy: Callable[[], float | None] | None = None,
) -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in ``environ`` (this process's environment, or that of
    a process about to start) when :func:`shares_the_cores`, unless the user chose how OpenMP
    waits; in this process it must run before torch is imported (see the module docstring).
    Whether it set it (for the log)."""
    if WAIT_POLICY in environ or SPIN_COUNT in environ:
        return False
    if shares_the_cores(device, environ, threads, busy):
        environ[WAIT_POLICY] = "PASSIVE"
        return True
    return False
