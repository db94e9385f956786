"""File-to-file prediction of a big input, in one process and with worker processes.

Writes an input of ``--sentences`` sentences (default 100,000) made by repeating a CoNLL-U
file (default English-EWT train, found with :func:`neuralparse.datasets.treebank_paths`) with
the tags, tree and enhanced graph blanked, as text nobody tagged or parsed, into a temporary
folder (never into the project).  Then, for each ``--workers`` value (``0`` is the
single-process path, ``auto`` the default policy of :func:`neuralparse.prediction.worker_count`)
it parses that file with :func:`~neuralparse.prediction.predict_file` in a fresh process of its
own, which loads the model, parses ``--warmup`` sentences in one process and then parses the
file with the same :class:`~neuralparse.search.graphs.GraphCache` (on CUDA the warm-up records
the graphs of the batch shapes and the timed parse replays them, as in a long run, or a
notebook's ``Parser``, after its first batches; ``predict.py``, one file per process, records
its graphs within its parse, and ``--warmup 0`` measures that), and reports:

* sentences/s and words/s, file to file (the call of ``predict_file``: reading, encoding,
  decoding, writing, and starting and stopping the workers);
* the time to first output: from the call (the model is loaded) to the first bytes written
  (:attr:`~neuralparse.prediction.PredictionReport.first_output`);
* host memory during the parse (after the warm-up), polled every 0.1 s by this script from
  ``/proc``: the peak resident set of the parsing process, and the peaks of the resident sets
  and of the proportional sets (``Pss``: shared pages split between the processes that share
  them, the workers' copy-on-write pages from the fork included) of that process and its
  workers together; also its ``VmHWM``, its peak over its whole life;
* on CUDA the peak of ``torch.cuda.max_memory_allocated`` during the parse;
* whether the output is byte for byte the output of the first ``--workers`` value.

Several ``--sentences`` sizes show whether memory stays bounded (the goal: the peak on 100,000
sentences within 1.5 times the peak on 10,000).  ``--torchrun N`` also parses the file under
``torchrun --nproc_per_node=N`` on the CPU (each rank in one process) and checks that its
output is the single-process output.  Without ``--checkpoint`` the model is an untrained one
of the default preset with the vocabularies of the repeated file
(:func:`benchmarks.common.untrained_parser`): speed depends on sizes, not weights, except
through the transitions of systems whose derivations vary in length.  Linux only (``/proc``).

    python -m benchmarks.big_file [--sentences 100000] [--workers 0 8 12 auto]
        [--device cpu|cuda] [--checkpoint PATH] [--threads N] [--chunk-size 10000]
        [--search greedy|beam] [--arc-weight W] [--warmup 2000] [--torchrun 2] [--source FILE]
        [--out outputs/benchmarks/big_file.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from benchmarks.common import (
    ROOT,
    save_json,
    shared_split,
    untrained_checkpoint,
    write_blanked,
)
from neuralparse.prediction import PredictOptions, predict_file
from neuralparse.runtime.checkpoint import load_parser
from neuralparse.runtime.devices import describe_machine, resolve_device
from neuralparse.runtime.openmp import choose_waiting
from neuralparse.search.graphs import GraphCache

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "big_file.json"
POLL_SECONDS = 0.1


@dataclass
class Run:
    workers: str
    sentences: int
    words: int
    seconds: float
    """The call of predict_file."""
    first_output: float
    """Seconds from the call to the first bytes written."""
    peak_main_mb: float
    """Peak VmRSS of the parsing process during the parse."""
    peak_rss_mb: float
    """Peak of the summed VmRSS of the parsing process and its workers during the parse
    (shared pages counted in each)."""
    peak_pss_mb: float
    """Peak of the summed Pss of the parsing process and its workers during the parse."""
    main_hwm_mb: float
    """VmHWM of the parsing process: its peak over its life, loading and warm-up included."""
    peak_gpu_mb: float | None
    same_output: bool

    @property
    def sentences_per_second(self) -> float:
        return self.sentences / max(self.seconds, 1e-9)


# -- the parsing process ------------------------------------------------------------------------


def parse_once(spec: dict[str, object]) -> dict[str, object]:
    """Load the model, warm up, parse the file (in the process that runs this)."""
    torch.set_num_threads(int(spec["threads"]))  # type: ignore[call-overload]
    device = resolve_device(str(spec["device"]))
    parser = load_parser(str(spec["checkpoint"]), device)
    common = {
        "chunk_size": spec["chunk_size"],
        "search": spec["search"],
        "arc_weight": spec["arc_weight"],
    }
    workers = spec["workers"] if spec["workers"] == "auto" else int(spec["workers"])  # type: ignore[call-overload]
    graphs = GraphCache()  # the warm-up's graphs serve the timed parse
    # Twice: a bucket's first batch is decoded eagerly, its second records the graph.
    for _ in range(2 if spec["warmup"] else 0):
        predict_file(
            parser, str(spec["warmup"]), os.devnull, PredictOptions(workers=0, **common),  # type: ignore[arg-type]
            device=device, graphs=graphs,
        )  # fmt: skip
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    Path(str(spec["marker"])).touch()  # the driver measures memory from now on
    start = time.perf_counter()
    report = predict_file(
        parser, str(spec["input"]), str(spec["output"]),
        PredictOptions(workers=workers, **common), device=device, graphs=graphs,  # type: ignore[arg-type]
    )  # fmt: skip
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "sentences": report.sentences,
        "words": report.words,
        "first_output": report.first_output,
        "peak_gpu_mb": (
            torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
        ),
    }


# -- the driver -----------------------------------------------------------------------------


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                pending += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
    return found


def proc_kib(path: str, field: str) -> int:
    """A ``kB`` field of a ``/proc`` file (0 once the process is gone)."""
    try:
        with open(path, encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(spec: dict[str, object]) -> tuple[dict[str, float], dict[str, float]]:
    """Parse as ``spec`` says in a process of its own, polling the memory of its process
    tree once it created ``spec["marker"]`` (the model loaded and warmed up); returns what
    the process reported and the peaks in MB: ``main`` (its VmRSS), ``rss`` and ``pss`` (the
    sums over it and its workers) and ``hwm`` (its VmHWM, warm-up included)."""
    marker = Path(str(spec["marker"]))
    marker.unlink(missing_ok=True)
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        env = dict(os.environ)
        choose_waiting(str(spec["device"]), env)  # OpenMP's waiting as predict.py's
        process = subprocess.Popen(
            [*CHILD, json.dumps(spec)], cwd=ROOT, env=env, stdout=output, stderr=errors
        )
        peaks = dict.fromkeys(("main", "rss", "pss", "hwm"), 0)
        while process.poll() is None:
            status = f"/proc/{process.pid}/status"
            peaks["hwm"] = max(peaks["hwm"], proc_kib(status, "VmHWM"))
            if marker.exists():
                tree = process_tree(process.pid)
                peaks["main"] = max(peaks["main"], proc_kib(status, "VmRSS"))
                rss = sum(proc_kib(f"/proc/{p}/status", "VmRSS") for p in tree)
                pss = sum(proc_kib(f"/proc/{p}/smaps_rollup", "Pss") for p in tree)
                peaks["rss"], peaks["pss"] = max(peaks["rss"], rss), max(peaks["pss"], pss)
            time.sleep(POLL_SECONDS)
        output.seek(0)
        errors.seek(0)
        if process.returncode != 0:
            raise RuntimeError(f"parsing failed ({process.returncode}):\n{errors.read().decode()}")
        result = json.loads(output.read().decode().strip().splitlines()[-1])
    return result, {name: kib / 1024 for name, kib in peaks.items()}


def digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 22):
            sha.update(block)
    return sha.hexdigest()


def format_table(runs: Sequence[Run]) -> str:
    lines = [
        f"{'workers':>7s} {'sentences':>9s} {'seconds':>8s} {'sent/s':>7s} {'words/s':>8s} "
        f"{'first s':>7s} {'main MB':>8s} {'RSS MB':>8s} {'PSS MB':>8s} {'HWM MB':>8s} "
        f"{'GPU MB':>7s} same"
    ]
    for run in runs:
        gpu = f"{run.peak_gpu_mb:7.0f}" if run.peak_gpu_mb is not None else f"{'-':>7s}"
        lines.append(
            f"{run.workers:>7s} {run.sentences:9d} {run.seconds:8.2f} "
            f"{run.sentences_per_second:7.0f} {run.words / max(run.seconds, 1e-9):8.0f} "
            f"{run.first_output:7.2f} {run.peak_main_mb:8.0f} {run.peak_rss_mb:8.0f} "
            f"{run.peak_pss_mb:8.0f} {run.main_hwm_mb:8.0f} {gpu} "
            f"{'yes' if run.same_output else 'NO'}"
        )
    return "\n".join(lines)


def run_workers(
    args: argparse.Namespace, spec: dict[str, object], count: int, words: int
) -> list[Run]:
    """One run per ``--workers`` value on the input of ``spec``; the first one's output is
    the reference (kept as ``reference.conllu`` beside the input)."""
    runs: list[Run] = []
    reference = Path(str(spec["input"])).with_name("reference.conllu")
    for workers in args.workers:
        out = Path(str(spec["input"])).with_name(f"output-{workers}.conllu")
        spec = {**spec, "workers": workers, "output": str(out)}
        result, peak = measure(spec)
        if not runs:
            out.replace(reference)
        same = digest(reference) == digest(out if runs else reference)
        runs.append(
            Run(
                workers, count, words, result["seconds"], result["first_output"], peak["main"],
                peak["rss"], peak["pss"], peak["hwm"], result["peak_gpu_mb"], same,
            )
        )  # fmt: skip
        print(format_table(runs[-1:]).split("\n", 1)[1], flush=True)
        out.unlink(missing_ok=True)
    return runs


def run_torchrun(ranks: int, spec: dict[str, object], count: int) -> dict[str, object]:
    """The input of ``spec`` parsed under ``torchrun`` with ``ranks`` CPU processes, compared
    with ``reference.conllu``."""
    out = Path(str(spec["input"])).with_name("output-torchrun.conllu")
    spec = {**spec, "device": "cpu", "workers": "0", "warmup": "", "output": str(out)}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nproc_per_node={ranks}"]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(
        [*torchrun, *CHILD[1:], json.dumps(spec)], cwd=ROOT, check=True, capture_output=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    seconds = time.perf_counter() - started  # torchrun's start-up included
    same = digest(out) == digest(out.with_name("reference.conllu"))
    print(f"torchrun, {ranks} ranks on the CPU: {seconds:.1f}s in all, same output: "
          f"{'yes' if same else 'NO'}", flush=True)  # fmt: skip
    out.unlink()
    return {"ranks": ranks, "sentences": count, "seconds": seconds, "same_output": same}


CHILD = [sys.executable, "-m", "benchmarks.big_file", "--child"]
"""This script in a process of its own (run from the checkout: ``cwd=ROOT``)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, nargs="+", default=[100_000])
    parser.add_argument("--workers", nargs="+", default=["0", "auto"])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--checkpoint", type=Path, help="trained parser (default: untrained)")
    parser.add_argument("--source", type=Path, help="CoNLL-U to repeat (default EWT train)")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--chunk-size", type=int, default=10_000)
    parser.add_argument("--search", default="greedy")
    parser.add_argument("--warmup", type=int, default=2000, help="sentences parsed first")
    parser.add_argument(
        "--arc-weight", type=float, help="the arc term's weight (default: the model's)"
    )
    parser.add_argument("--torchrun", type=int, default=0, help="also under torchrun, N ranks")
    parser.add_argument("--out", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        result = parse_once(json.loads(args.child))
        if int(os.environ.get("RANK", "0")) == 0:
            print(json.dumps(result), flush=True)
        return 0
    source = args.source or shared_split("en_ewt", "train")
    device = resolve_device(args.device)
    runs: list[Run] = []
    sharded: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        checkpoint = args.checkpoint or untrained_checkpoint(source, workdir / "untrained.pt")
        warmup = workdir / "warmup.conllu"
        if args.warmup:
            write_blanked(source, warmup, args.warmup)
        for count in args.sentences:
            path = workdir / "input.conllu"
            started = time.perf_counter()
            words = write_blanked(source, path, count)
            print(f"{count} sentences, {words} words, {path.stat().st_size / 2**20:.0f} MB "
                  f"written in {time.perf_counter() - started:.1f}s", flush=True)  # fmt: skip
            spec = {
                "checkpoint": str(checkpoint), "device": str(device), "threads": args.threads,
                "chunk_size": args.chunk_size, "search": args.search,
                "arc_weight": args.arc_weight,
                "warmup": str(warmup) if args.warmup else "", "input": str(path),
                "marker": str(workdir / "parsing"),
            }  # fmt: skip
            runs += run_workers(args, spec, count, words)
            if args.torchrun:
                sharded.append(run_torchrun(args.torchrun, spec, count))
    print(format_table(runs))
    result = {
        "source": str(source),
        "model": str(args.checkpoint) if args.checkpoint else "untrained (default preset)",
        "chunk_size": args.chunk_size,
        "search": args.search,
        "arc_weight": args.arc_weight,
        "environment": {
            **describe_machine(device),
            "threads": args.threads,
            "cpus": os.cpu_count(),
        },
        "runs": [{**asdict(run), "sentences_per_second": run.sentences_per_second} for run in runs],
        "torchrun": sharded,
    }
    save_json(result, args.out)
    same = all(run.same_output for run in runs) and all(s["same_output"] for s in sharded)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
