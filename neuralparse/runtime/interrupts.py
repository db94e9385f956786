"""Holding SIGTERM and SIGINT back while work that must not be cut short runs.

An interruption normally unwinds the stack (Ctrl-C raises :class:`KeyboardInterrupt`, and the
commands turn SIGTERM into :class:`SystemExit`, see :mod:`neuralparse.runtime.cli`), and the
temporary file of the write in progress is removed on the way out.  Two things do not survive
being unwound half-way, and hide the interruption behind an error of their own, so that a run
stopped by ``kill`` or Ctrl-C ended with a traceback and exit status 1 instead of 143 or 130:

* ``torch.save``: its zip writer, interrupted, fails while cleaning up ("unexpected pos");
* importing torch: numpy's compiled core, interrupted while it initialises, cannot be
  imported again ("cannot load module more than once per process").

Both take a second or less, so the signal waits for them: :func:`interruptions_held` records a
signal that arrives inside its block and delivers it, to the handler that was there before,
as soon as the block has ended.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HELD = (signal.SIGTERM, signal.SIGINT)
"""The signals held back: what `kill` and batch schedulers send, and Ctrl-C."""


@contextmanager
def interruptions_held() -> Iterator[None]:
    """Run the block with :data:`HELD` signals recorded instead of handled; the first one
    recorded is raised again once the block has ended (normally or not) and the earlier
    handlers are back.  Outside the main thread, where Python cannot install signal
    handlers (and never runs them), the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def record(signum: int, frame: object) -> None:
        received.append(signum)

    earlier = {signum: signal.signal(signum, record) for signum in HELD}
    try:
        yield
    finally:
        for signum, handler in earlier.items():
            # None: a handler installed outside Python, which cannot be put back from here.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        if received:
            signal.raise_signal(received[0])
