"""``predict.py``'s speed on one file under several settings (environment variables and
``predict.py`` options), with the cores free or shared with busy processes.

Settings that must be made before torch starts (how OpenMP threads wait,
:mod:`neuralparse.runtime.openmp`; the heap, :mod:`neuralparse.runtime.memory`) can only be
compared across processes, so every round runs ``predict.py`` once per setting, file to file,
the settings in turn, and the table gives each setting's median over the rounds and its ratio
to the first setting's median.  The time is ``predict.py``'s own (reading, parsing and writing;
model loading excluded), the CPU time the whole process's.  ``--busy N`` keeps N CPU-bound
processes running beside every run, as on a machine other programs use.

A setting is ``default`` (nothing added) or space-separated pairs: an upper-case
``KEY=VALUE`` sets an environment variable, a lower-case ``key=value`` is a ``predict.py``
option (``precision=bfloat16``), so a setting can compare options in the same alternated
rounds as the environment (a fresh process each run, as a user meets them).  Without
``--checkpoint`` the parser is an untrained model of the default preset with English-EWT
train's vocabularies (speed does not depend on the weights); the input is English-EWT test
with its tags and trees blanked.

    python -m benchmarks.predict_settings [--settings default OMP_WAIT_POLICY=PASSIVE
        precision=bfloat16]
        [--rounds 6] [--busy 0 1] [--threads 2] [--input FILE] [--checkpoint PATH]
        [--json-out outputs/benchmarks/predict_settings.json]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
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
from neuralparse.io import read_conllu
from neuralparse.runtime.devices import describe_machine

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "predict_settings.json"
DEFAULT_SETTINGS = ("default", "OMP_WAIT_POLICY=PASSIVE")
_REPORT = re.compile(r"parsed \d+ sentences, (\d+) words in ([0-9.]+)s")


@dataclass(frozen=True)
class Setting:
    """What one setting adds to ``predict.py``'s runs."""

    environment: dict[str, str] = field(default_factory=dict)
    options: tuple[str, ...] = ()


def parse_setting(text: str) -> Setting:
    """``default`` -> nothing added; ``"A=1 b=2"`` -> environment ``{"A": "1"}`` and the
    ``predict.py`` option ``b=2`` (upper-case keys are environment variables)."""
    if text == "default":
        return Setting()
    pairs = text.split()
    if not all("=" in pair for pair in pairs):
        raise SystemExit(f"--settings: {text!r} is neither 'default' nor KEY=VALUE pairs")
    environment, options = {}, []
    for pair in pairs:
        key, value = pair.split("=", 1)
        if key.isupper():
            environment[key] = value
        else:
            options.append(pair)
    return Setting(environment, tuple(options))


def run_predict(command: Sequence[str], env: dict[str, str]) -> dict[str, float]:
    """One ``predict.py`` run: its reported seconds and words, and the process's CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = _REPORT.findall(finished.stderr)
    if finished.returncode != 0 or not found:
        failed = f"{' '.join(command)} failed ({finished.returncode})"
        raise RuntimeError(f"{failed}:\n{finished.stderr}")
    words, seconds = found[-1]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": float(seconds), "words": int(words), "cpu_seconds": round(cpu, 3)}


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` CPU-bound processes running while the block runs."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def summarise(runs: Sequence[dict[str, float]], reference: float) -> dict[str, float]:
    seconds = [run["seconds"] for run in runs]
    median = statistics.median(seconds)
    return {
        "median_seconds": median,
        "min_seconds": min(seconds),
        "max_seconds": max(seconds),
        "median_words_per_second": runs[0]["words"] / median,
        "median_cpu_seconds": statistics.median(run["cpu_seconds"] for run in runs),
        "time_vs_first": median / reference,
    }


def format_table(rows: Sequence[dict[str, object]]) -> str:
    lines = [
        f"{'busy':>4s} {'setting':40s} {'median s':>8s} {'min-max s':>11s} {'words/s':>8s} "
        f"{'CPU s':>6s} {'time / first':>12s}"
    ]
    for row in rows:
        lines.append(
            f"{row['busy']:4d} {str(row['setting'])[:40]:40s} {row['median_seconds']:8.2f} "
            f"{row['min_seconds']:5.2f}-{row['max_seconds']:<5.2f} "
            f"{row['median_words_per_second']:8.0f} {row['median_cpu_seconds']:6.2f} "
            f"{row['time_vs_first']:12.2f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", nargs="+", default=list(DEFAULT_SETTINGS))
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--busy", type=int, nargs="+", default=[0])
    parser.add_argument("--threads", type=int, default=2, help="torch threads of predict.py")
    parser.add_argument("--input", type=Path, help="CoNLL-U or text (default: EWT test blanked)")
    parser.add_argument("--checkpoint", type=Path, help="trained parser (default: untrained)")
    parser.add_argument("--json-out", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    settings = {text: parse_setting(text) for text in args.settings}
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        source = args.input
        if source is None:
            test = shared_split("UD_English-EWT", "test")
            source = workdir / "input.conllu"
            write_blanked(test, source, len(read_conllu(test)))
        checkpoint = args.checkpoint or untrained_checkpoint(
            shared_split("UD_English-EWT", "train"), workdir / "untrained.pt"
        )
        output = workdir / "parsed.conllu"
        for busy in args.busy:
            runs: dict[str, list[dict[str, float]]] = {text: [] for text in settings}
            with busy_processes(busy):
                for _ in range(args.rounds):
                    for text, setting in settings.items():
                        command = predict_command(
                            checkpoint, source, output, args.threads, *setting.options
                        )
                        environment = {**os.environ, **setting.environment}
                        runs[text].append(run_predict(command, environment))
            reference = statistics.median(run["seconds"] for run in runs[args.settings[0]])
            for text in settings:
                row = {"busy": busy, "setting": text, **summarise(runs[text], reference)}
                rows.append({**row, "runs": runs[text]})
                print(format_table([row]).split("\n", 1)[1], flush=True)
    print(format_table(rows))
    result = {
        "input": str(args.input or "English-EWT test, blanked"),
        "model": str(args.checkpoint) if args.checkpoint else "untrained (default ModelConfig)",
        "rounds": args.rounds,
        "environment": {**describe_machine(torch.device("cpu")), "threads": args.threads},
        "time": "predict.py's own report: reading, parsing, writing (model loading excluded)",
        "rows": rows,
    }
    save_json(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
