"""Keep the resident memory of long prediction runs bounded by the chunk size.

Prediction streams its input in chunks, so the Python objects it holds never depend on the
length of the input; yet the resident memory of ``predict.py`` kept rising with it, without a
plateau (English-EWT train repeated 20 times, 250,880 sentences: 1.20 GB, against 0.65 GB for
EWT train once).  Two native caches grew below Python:

- glibc's heap.  Every batch allocates tensors of a new shape; once a large block has been
  freed, glibc raises its mmap threshold (up to 32 MB) so that later blocks come from the heap,
  where freed memory between live blocks is neither reused for the next, larger shapes nor
  returned to the system.  :func:`bound_native_heap` fixes the thresholds at 128 KiB
  (``mallopt``): large blocks are mapped and unmapped on their own, and free memory at the top
  of the heap goes back to the system.
- oneDNN's primitive cache, which keeps a compiled primitive with its buffers for each of the
  last 1,024 shapes it has run.  ``ONEDNN_PRIMITIVE_CACHE_CAPACITY=0`` turns it off; oneDNN
  reads the variable once, so :func:`bound_primitive_cache` must run before torch's first CPU
  operation (``predict.py`` calls it before importing torch).

Both are needed: measured peaks of ``predict.py`` with the untrained default model on EWT train
(benchmarks/memory.py, 2 shared CPU cores), 10,000 -> 100,000 sentences: 576 -> 819 MB as
glibc and oneDNN come, 436 -> 543 MB with both settings; each alone gave 468 -> 598 MB (heap)
and 508 -> 612 MB (oneDNN cache).  ``malloc_trim`` between chunks changed nothing.  With both,
1,000,000 sentences peaked at 570 MB (1.31 times the 10,000-sentence peak), and at 509 MB
(1.17 times) once prediction also let each chunk go before reading the next.

Settings the user made (the variables above, ``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``) are kept; ``NEURALPARSE_MEMORY_TUNING=0`` changes nothing.  Only
glibc has ``mallopt``: elsewhere the heap is left as it is.
"""

from __future__ import annotations

import ctypes
import os
import sys

SWITCH = "NEURALPARSE_MEMORY_TUNING"
"""``0`` leaves the allocators' defaults alone."""
ONEDNN_CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
THRESHOLD_BYTES = 128 * 1024
"""glibc's default mmap threshold, kept fixed instead of rising."""
_MALLOPT = {-3: "MALLOC_MMAP_THRESHOLD_", -1: "MALLOC_TRIM_THRESHOLD_"}
"""``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` (malloc.h) and the variables that set them."""


def _enabled() -> bool:
    return os.environ.get(SWITCH, "1") != "0"


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (which has ``mallopt``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.gnu_get_libc_version  # noqa: B018  # only glibc has it
    except (OSError, AttributeError):
        return None
    return libc


def bound_primitive_cache() -> None:
    """Turn oneDNN's primitive cache off unless the user sized it (before torch runs)."""
    if _enabled():
        os.environ.setdefault(ONEDNN_CACHE, "0")


def bound_native_heap() -> None:
    """Fix glibc's mmap and trim thresholds (see the module docstring), each unless the user
    set it; nothing on other C libraries or with the switch off."""
    libc = _glibc() if _enabled() else None
    if libc is None:
        return
    for param, variable in _MALLOPT.items():
        if variable not in os.environ:
            libc.mallopt(param, THRESHOLD_BYTES)
