"""Peak resident memory of ``predict.py`` against the number of sentences it parses.

For each size N this writes an input of N sentences made by repeating a CoNLL-U file (default
English-EWT train, found with :func:`neuralparse.datasets.treebank_paths`, never copied into
the project) and sampling it evenly for the rest (:func:`benchmarks.common.spread`), with
UPOS, XPOS, FEATS, HEAD, DEPREL and DEPS blanked, as text nobody tagged or parsed, then runs
``predict.py`` on it
file to file in a subprocess of its own.  It reports the process's peak resident set and CPU
time (the kernel's accounting, ``wait4``) and its resident set (``VmRSS`` of
``/proc/<pid>/status``) at ten even times of the run, which show whether memory levels off or
keeps rising.  Streaming prediction holds one chunk (``chunk_size`` sentences) at a time, so
the target is a peak at 1,000,000 sentences within 1.2 times the peak at 10,000.

Without ``--checkpoint`` the parser is an *untrained* model of the default preset (the joint
tagger-parser, :func:`benchmarks.common.untrained_parser`) saved as a checkpoint in the
temporary folder: memory depends on the sizes, not on the weights.  ``--env KEY=VALUE`` sets
variables for the parsing process (``NEURALPARSE_MEMORY_TUNING=0`` measures without the
allocator settings of :mod:`neuralparse.runtime.memory`).  Linux only (``/proc``, ``wait4``).

    python -m benchmarks.memory [--sentences 10000 100000 1000000] [--checkpoint PATH]
        [--source FILE] [--threads 1] [--chunk-size 10000] [--env KEY=VALUE ...]
        [--json-out outputs/benchmarks/memory.json]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from benchmarks.common import (
    ROOT,
    predict_command,
    save_json,
    shared_split,
    untrained_checkpoint,
    write_blanked,
)
from neuralparse.runtime.devices import describe_machine

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "memory.json"
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
POLL_SECONDS = 0.1
TIMELINE_POINTS = 10
"""Resident-set samples kept per run, evenly spaced in time."""


@dataclass
class Run:
    sentences: int
    words: int
    seconds: float
    cpu_seconds: float
    """User and system CPU time of the parsing process."""
    peak_rss_mb: float
    """The parsing process's resident high-water mark (``ru_maxrss``)."""
    rss_timeline_mb: list[float]
    """VmRSS at evenly spaced times of the run."""


def resident_kib(pid: int) -> int | None:
    """``VmRSS`` of ``/proc/<pid>/status`` (None once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def measure(command: Sequence[str], env: dict[str, str]) -> tuple[float, float, float, list[float]]:
    """Run ``command`` sampling its resident set; returns (seconds, CPU seconds, peak MB,
    resident MB at :data:`TIMELINE_POINTS` even times).  Fails when the command fails.

    The peak and the CPU time come from the kernel's accounting of the finished process
    (``wait4``), exact and, unlike the wall time, little changed by other work on the
    machine."""
    start = time.perf_counter()
    samples: list[int] = []
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=errors
        )
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            rss = resident_kib(process.pid)
            if rss is not None:
                samples.append(rss)
            time.sleep(POLL_SECONDS)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if process.returncode != 0:
            errors.seek(0)
            message = errors.read().decode(errors="replace")
            raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{message}")
    timeline = (
        [
            samples[round(k * (len(samples) - 1) / (TIMELINE_POINTS - 1))] / 1024
            for k in range(TIMELINE_POINTS)
        ]
        if samples
        else []
    )
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1024, [round(mb, 1) for mb in timeline]


def format_table(runs: Sequence[Run]) -> str:
    lines = [
        f"{'sentences':>10s} {'words':>11s} {'seconds':>8s} {'CPU s':>8s} {'sent/CPU s':>10s} "
        f"{'peak MB':>8s} {'x first':>7s}  RSS MB at 10% .. 100% of the run"
    ]
    for run in runs:
        ratio = run.peak_rss_mb / runs[0].peak_rss_mb
        timeline = " ".join(f"{mb:.0f}" for mb in run.rss_timeline_mb[1:])
        lines.append(
            f"{run.sentences:10d} {run.words:11d} {run.seconds:8.1f} {run.cpu_seconds:8.1f} "
            f"{run.sentences / max(run.cpu_seconds, 1e-9):10.0f} {run.peak_rss_mb:8.0f} "
            f"{ratio:7.2f}  {timeline}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--source", type=Path, help="CoNLL-U to repeat (default EWT train)")
    parser.add_argument("--checkpoint", type=Path, help="trained parser (default: untrained)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of predict.py")
    parser.add_argument("--chunk-size", type=int, default=10_000)
    parser.add_argument(
        "--env", nargs="*", default=[], metavar="KEY=VALUE", help="for the parsing process"
    )
    parser.add_argument("--json-out", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    source = args.source or shared_split("UD_English-EWT", "train")
    extra = dict(item.split("=", 1) for item in args.env)
    env = {**os.environ, **extra}
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        checkpoint = args.checkpoint or untrained_checkpoint(source, workdir / "untrained.pt")
        for count in sorted(args.sentences):
            path = workdir / "input.conllu"
            words = write_blanked(source, path, count, evenly=True)
            command = predict_command(
                checkpoint, path, workdir / "parsed.conllu", args.threads,
                f"chunk_size={args.chunk_size}",
            )  # fmt: skip
            runs.append(Run(count, words, *measure(command, env)))
            print(format_table(runs[-1:]).split("\n", 1)[1], flush=True)
            path.unlink()
    print(format_table(runs))
    result = {
        "source": str(source),
        "model": str(args.checkpoint) if args.checkpoint else "untrained (default ModelConfig)",
        "chunk_size": args.chunk_size,
        "env": extra,
        "environment": {**describe_machine(torch.device("cpu")), "threads": args.threads},
        "peak": "ru_maxrss of the predict.py process",
        "runs": [asdict(run) for run in runs],
        "peak_ratio_last_to_first": runs[-1].peak_rss_mb / runs[0].peak_rss_mb,
    }
    save_json(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
