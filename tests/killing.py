"""Run ``predict.py`` or ``train.py`` as a subprocess and kill it at a random, seeded moment
with SIGKILL (no chance to clean up), SIGTERM (what ``kill`` and batch schedulers send) or
SIGINT (Ctrl-C): the machinery of the fault-injection tests
(``test_fault_injection_prediction.py``, ``test_fault_injection_training.py``)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
SEED = 20261126
EXIT_STATUS = {
    signal.SIGKILL: {-signal.SIGKILL},
    # Through the handlers; or, when the signal comes after the work is done (the default
    # actions are back then: neuralparse.runtime.cli.run_program), by the signal itself.
    signal.SIGTERM: {143, -signal.SIGTERM},
    signal.SIGINT: {130, -signal.SIGINT},
}
"""How a run killed by each signal may end."""


Ready = Callable[[], bool]
"""Whether a run has come as far as a kill should wait for."""


def exists(pattern: Path) -> Ready:
    """Whether a file matches ``pattern`` (a glob pattern for names in its parent)."""
    return lambda: any(pattern.parent.glob(pattern.name))


def default_signals() -> None:
    """In a child before it runs its program: SIGINT and SIGTERM delivered and handled as from
    a terminal, whatever signal state the test process inherited.  A command that a
    non-interactive shell starts in the background (``cmd &``, as CI runners may start the
    suite) has SIGINT ignored, every process below it inherits that, and Python then
    installs no KeyboardInterrupt handler: a Ctrl-C test would kill nothing and pass."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})


def launch(script: str, arguments: Sequence[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(REPO / script), *arguments],
        cwd=REPO,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=default_signals,
    )


def wait_for(process: subprocess.Popen[bytes], ready: Ready) -> None:
    while process.poll() is None and not ready():
        time.sleep(0.01)


def run_whole(script: str, arguments: Sequence[str], ready: Ready) -> tuple[float, float]:
    """Run the script to its end; returns the seconds until ``ready`` and after."""
    start = time.perf_counter()
    process = launch(script, arguments)
    wait_for(process, ready)
    started = time.perf_counter()
    _, errors = process.communicate(timeout=300)
    assert process.returncode == 0, errors.decode()[-3000:]
    return started - start, time.perf_counter() - started


def run_killed(
    script: str, arguments: Sequence[str], ready: Ready, delay: float, signum: int
) -> int:
    """Start the script, wait until it is ``ready``, then ``delay`` seconds more, send
    ``signum``; returns the exit status (0 when it finished first)."""
    process = launch(script, arguments)
    wait_for(process, ready)
    deadline = time.perf_counter() + delay
    while process.poll() is None and time.perf_counter() < deadline:
        time.sleep(0.005)
    if process.poll() is None:
        process.send_signal(signum)
    _, errors = process.communicate(timeout=300)
    assert process.returncode in {0, *EXIT_STATUS[signum]}, errors.decode()[-3000:]
    if signum != signal.SIGKILL:
        assert b"Traceback" not in errors, errors.decode()[-3000:]
    return process.returncode


def partials(folder: Path) -> list[Path]:
    """The temporary files of outputs and checkpoints being written in ``folder``."""
    return sorted(folder.glob(".*.partial"))


def remove_partials(folder: Path, signum: int) -> None:
    """Check that a run killed with ``signum`` left no temporary file, unless SIGKILL left
    some (nothing can remove them), which are then removed for the next run."""
    if signum != signal.SIGKILL:
        assert partials(folder) == []
    for leftover in partials(folder):
        leftover.unlink()


def kills(count: int, signals: Sequence[int], seed: int) -> list[tuple[int, float, float]]:
    """``count`` (signal, u, v) triples, the signals in turn and ``u``, ``v`` uniform in
    [0, 1), seeded: where each kill comes."""
    rng = random.Random(seed)
    return [(signals[k % len(signals)], rng.random(), rng.random()) for k in range(count)]
