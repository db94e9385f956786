"""Keep the resident memory of long prediction runs bounded by the chunk size.

Prediction streams its input in chunks, so the Python objects it holds never depend on the
length of the input; yet the resident memory of ``predict.py`` kept rising with it, without a
plateau (English-EWT train repeated 20 times, 250,880 sentences: 1.20 GB, against 0.65 GB for
EWT train once).  Two native caches grew below Python:

- glibc's heap.  Every batch allocates tensors of a new shape; once a large block has been
  freed, glibc raises its mmap threshold (up to 32 MiB) and its trim threshold (twice that),
  so that later blocks come from the heap, where freed memory is neither reused for the next,
  larger shapes nor returned to the system.  :func:`bound_native_heap` fixes the thresholds
  (``mallopt``): free memory at the top of the heap beyond 128 KiB goes back to the system,
  and blocks of 32 MiB or more are mapped and unmapped on their own.
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

The mmap threshold was first fixed at 128 KiB, glibc's default, which bounded memory as well
but made every tensor of more than 128 KiB a fresh mapping whose pages the kernel faults in
and zeroes on first use: that cost about a quarter of the parsing time (EWT train repeated to
50,000 sentences, 2 threads: 99.1 CPU seconds against 66.5 with no settings, 72.2 with the
mmap threshold at 32 MiB and the trim threshold at 128 KiB; peaks 473, 765 and 568 MB, the
last without a rising trend).  Fixing the trim threshold is what bounds the heap; the mmap
threshold is fixed too because ``mallopt`` of either stops glibc's adjustment of both, which
would leave the mmap threshold at its 128 KiB default.

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
_MALLOPT = {
    -3: ("MALLOC_MMAP_THRESHOLD_", 32 * 1024 * 1024),
    -1: ("MALLOC_TRIM_THRESHOLD_", 128 * 1024),
}
"""``M_MMAP_THRESHOLD`` (glibc's largest, 32 MiB on 64-bit systems) and ``M_TRIM_THRESHOLD``
(128 KiB, glibc's default) in malloc.h's numbering, with the variables that set them."""


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
    for param, (variable, value) in _MALLOPT.items():
        if variable not in os.environ:
            libc.mallopt(param, value)
