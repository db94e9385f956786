"""Every GPU-only check of ``docs/dev/gpu-checks.md`` in one command, within a time budget.

A GPU is lent for minutes at a time, on a bare machine: no trained model, nothing from an
earlier session.  This script trains the models the checks need (short runs on the GPU,
capped in minutes: good enough to time, not to report accuracy) unless ``--models DIR``
provides them (``DIR/<model>/checkpoint.pt``, carried with the checkout: converged models,
and minutes of device time saved), then runs the checks in order of value, each as a
subprocess, and skips a step once the budget no longer holds its estimate.  Everything
comes back in two files, whatever the number of steps: ``OUT/session.json`` (per step:
command, exit status, seconds, skipped or not, and the JSON the step wrote) and
``OUT/session.log`` (every step's output).

    python -m benchmarks.gpu_session [--out DIR] [--budget-minutes 9.5] [--device cuda]
        [--steps NAME ...] [--models DIR] [--rehearse]

``--rehearse`` runs every step on the CPU with tiny sizes: the commands are checked here
before device time is spent on them (the test suite does this).  The steps, most valuable
first:

* ``cuda_agreement``: every system's steps on CUDA against the CPU's
  (``tests/systems/test_contract.py -k cuda``) and a short training run on CUDA
  (``tests/test_training.py -k cuda``); ``device_check``: random walks and oracles;
* ``train_ewt``: the default model on English-EWT for ``--train-minutes``;
  ``ewt_greedy`` / ``ewt_beam``: English-EWT test file to file with it (``benchmarks.big_file``,
  one process and the default workers, graphs recorded by a warm-up); ``ewt_fresh``: the
  same without a warm-up, as a fresh ``predict.py`` process is; ``ewt_greedy_arc0``: greedy
  again without the arc term (``--arc-weight 0``: what the term costs on the card);
  ``big_file``: 100,000 sentences, time to first output and memory;
* ``epoch_cost_hu`` (every system, dev evaluation included) and ``epoch_cost_ewt``;
* ``train_hu_two_registers``, ``train_hu_three_step``, ``train_hu_swap`` and
  ``graphs_hu_two_registers``, ``graphs_hu_three_step``, ``graphs_hu_swap``: greedy and beam
  8 of each with and without CUDA graphs on English-EWT test (``benchmarks.throughput``);
* ``exit_rule_cost``: one call of two-registers' exit rule on the host, in tensors and
  compiled (``torch.compile``), on the slow configurations of random walks
  (``benchmarks.exit_rule_cost``; the first compiled call, which compiles, timed apart);
* ``graph_rules_hu``: the Hungarian two-registers model's greedy and beam 8 on
  Hungarian-Szeged test with CUDA graphs, with each ``graph_rule`` (``abandon``, ``tensor``,
  ``compiled``) and without graphs (``benchmarks.throughput --graph-rules``);
* ``epoch_cost_ewt_4000``: ``epoch_cost_ewt`` with batches of 4,000 words instead of 1,000
  (on the CPU that recipe kept English-EWT's accuracy with a quarter of the updates);
* ``ewt_precision``: English-EWT test parsed with the encoder in float32 and in bfloat16
  (``benchmarks.precision``: speed, accuracy, predictions that change);
* ``ewt_recipe_4000``: the default model trained on English-EWT to convergence with batches
  of 4,000 words (learning rate 0.006), capped at 3.5 minutes: whether the recipe that
  brings an epoch under 3 s on the card keeps the accuracy of ``make train``'s 1,000-word
  batches (its ``metrics.jsonl``, epoch times and dev and test scores, is the result).

The data root is ``NEURALPARSE_DATA`` (copy the shared treebanks into an ignored folder of the
checkout and carry it: see ``docs/dev/gpu-checks.md``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from benchmarks.common import ROOT, shared_split
from neuralparse.systems.two_registers import GRAPH_RULES

Command = Callable[["Context"], list[str]]


@dataclass
class Context:
    """Where a step reads and writes, and how large it runs."""

    device: str
    work: Path
    """Scratch folder of this session: models and the steps' JSON."""
    rehearse: bool
    train_minutes: float
    provided: Path | None = None
    """A folder of trained models, ``<name>/checkpoint.pt``, used instead of training them."""

    def json(self, step: str) -> Path:
        return self.work / f"{step}.json"

    def provided_model(self, name: str) -> Path | None:
        """The checkpoint of model ``name`` given with ``--models``, if there is one."""
        path = self.provided / name / "checkpoint.pt" if self.provided is not None else None
        return path if path is not None and path.is_file() else None

    def model(self, name: str) -> Path:
        return self.provided_model(name) or self.work / "models" / name / "checkpoint.pt"

    def train(self, name: str, *overrides: str) -> list[str]:
        """``train.py`` into ``models/<name>`` for ``train_minutes`` (tiny when rehearsing)."""
        tiny = ["trainer=quick", "trainer.max_epochs=1"]
        size = tiny if self.rehearse else [f"trainer.max_time_minutes={self.train_minutes}"]
        run = self.model(name).parent
        return self._train_py(run, *overrides, *size, "trainer.evaluate_test=false")

    def converge(self, step: str, minutes: float, *overrides: str) -> list[str]:
        """``train.py`` to convergence (early stopping, test evaluated) into ``runs/<step>``,
        ``minutes`` as the safety-net cap; its ``metrics.jsonl`` is the step's result."""
        tiny = ["trainer.max_epochs=2"] if self.rehearse else []
        return self._train_py(
            self.run(step), *overrides, *tiny, f"trainer.max_time_minutes={minutes}"
        )

    def _train_py(self, run: Path, *overrides: str) -> list[str]:
        """``train.py`` on this session's device into ``run``; a small model on a few
        sentences when rehearsing."""
        tiny = ["model=small", "data.max_train_sentences=60", "data.max_dev_sentences=20"]
        return [
            sys.executable,
            str(ROOT / "train.py"),
            *overrides,
            *(tiny if self.rehearse else []),
            f"trainer.device={self.device}",
            "trainer.threads=2",
            "trainer.progress=false",
            f"hydra.run.dir={run}",
        ]

    def run(self, step: str) -> Path:
        return self.work / "runs" / step

    def module(self, name: str, *arguments: str) -> list[str]:
        return [sys.executable, "-m", name, *arguments]


def _big_file(ctx: Context, step: str, sentences: int, warmup: int, *more: str) -> list[str]:
    """``benchmarks.big_file`` with the English-EWT model: on English-EWT test for a size up
    to that file's (2,077 sentences), else on its training file repeated."""
    sentences, warmup = (60, min(warmup, 20)) if ctx.rehearse else (sentences, warmup)
    test = str(shared_split("UD_English-EWT", "test"))
    source = ["--source", test] if sentences <= 2077 else []
    model = ["--checkpoint", str(ctx.model("ewt"))]
    sizes = ["--sentences", str(sentences), "--warmup", str(warmup)]
    common = ["--device", ctx.device, "--threads", "2", *model, *sizes, *source]
    return ctx.module("benchmarks.big_file", *common, *more, "--out", str(ctx.json(step)))


def _epoch_cost(ctx: Context, step: str, treebank: str, *more: str) -> list[str]:
    small = ["--max-train-sentences", "40", "--max-dev-sentences", "10", "--model", "small"]
    common = ["--device", ctx.device, "--threads", "2", "--treebank", treebank]
    tiny = small if ctx.rehearse else []
    return ctx.module("benchmarks.epoch_cost", *common, *more, *tiny, "--out", str(ctx.json(step)))


def _cuda_agreement(ctx: Context) -> list[str]:
    names = ("systems/test_contract.py", "test_training.py")
    files = [str(ROOT / "tests" / name) for name in names]
    return ctx.module("pytest", "-q", *files, "-k", "cuda")


def _device_check(ctx: Context) -> list[str]:
    sentences = "16" if ctx.rehearse else "128"
    return ctx.module("benchmarks.device_check", "--device", ctx.device, "--sentences", sentences)


def _precision(ctx: Context) -> list[str]:
    """Float32 against bfloat16 with the English-EWT model, greedy, on English-EWT test."""
    tiny = ["--sentences", "40", "--rounds", "1"] if ctx.rehearse else ["--rounds", "3"]
    common = ["--device", ctx.device, "--threads", "2", "--checkpoint", str(ctx.model("ewt"))]
    test = ["--test", str(shared_split("UD_English-EWT", "test"))]
    return ctx.module(
        "benchmarks.precision", *common, *test, *tiny, "--out", str(ctx.json("ewt_precision"))
    )


def _graph_rules_hu(ctx: Context) -> list[str]:
    """Two-registers' graphs on Hungarian-Szeged test (registers are frequent there) with
    each ``graph_rule``: abandon the register phases to the eager loop, or decide them in
    tensors (about eight times the operators per step), or in the compiled tensor rule."""
    model = str(ctx.model("hu_two_registers"))
    limit = ["--limit", "40"] if ctx.rehearse else []
    common = ["--device", ctx.device, "--threads", "2", "--beam", "8", "--compare-graphs"]
    rules = ["--graph-rules", *GRAPH_RULES, "--input", str(shared_split(*HU_TEST))]
    out = ["--json-out", str(ctx.json("graph_rules_hu"))]
    return ctx.module("benchmarks.throughput", *common, "--checkpoint", model, *rules, *limit, *out)


def _exit_rule_cost(ctx: Context) -> list[str]:
    """Two-registers' exit rule, host / tensors / compiled, per call (no model needed)."""
    tiny = ["--sentences", "8", "--rows", "1", "16", "--repeats", "1"] if ctx.rehearse else []
    out = ["--out", str(ctx.json("exit_rule_cost"))]
    return ctx.module("benchmarks.exit_rule_cost", "--device", ctx.device, *tiny, *out)


def _graphs_hu(ctx: Context, system: str) -> list[str]:
    """Greedy and beam 8 of a Hungarian model, with and without CUDA graphs, on English-EWT
    test (throughput's default input)."""
    model = ["--systems", system, "--checkpoint", str(ctx.model(f"hu_{system}"))]
    limit = ["--limit", "40"] if ctx.rehearse else []
    common = ["--device", ctx.device, "--threads", "2", "--beam", "8", "--compare-graphs"]
    out = ["--json-out", str(ctx.json(f"graphs_hu_{system}"))]
    return ctx.module("benchmarks.throughput", *common, *model, *limit, *out)


@dataclass(frozen=True)
class Step:
    name: str
    minutes: float
    """What the step is expected to take on the GPU: it is skipped when less is left."""
    command: Command
    needs: tuple[str, ...] = ()
    """Steps whose models it reads: skipped when one of them failed or was skipped."""
    trains: str | None = None
    """The model the step trains; a model provided with ``--models`` is not trained again."""
    result_lines: bool = False
    """The step's result is its training run's ``metrics.jsonl`` (:meth:`Context.converge`),
    not the JSON file it writes."""


HU = ("data=hu_szeged",)
RECIPE_4000_LR = 0.006
"""The learning rate tried with 4,000-word batches: the default's 0.004 scaled as on the CPU
on 2026-11-27, when 4,000 words at 0.003 kept English-EWT's accuracy of 1,000 at 0.002."""
HU_TEST = ("UD_Hungarian-Szeged", "test")
STEPS: tuple[Step, ...] = (
    Step("cuda_agreement", 1.0, _cuda_agreement),
    Step("device_check", 0.5, _device_check),
    Step("train_ewt", 3.0, lambda ctx: ctx.train("ewt"), trains="ewt"),
    Step(
        "ewt_greedy",
        0.7,
        lambda ctx: _big_file(ctx, "ewt_greedy", 2077, 2077, "--workers", "0", "auto"),
        ("train_ewt",),
    ),
    Step(
        "ewt_fresh",
        0.5,
        lambda ctx: _big_file(ctx, "ewt_fresh", 2077, 0, "--workers", "0"),
        ("train_ewt",),
    ),
    Step(
        "ewt_greedy_arc0",
        0.7,
        lambda ctx: _big_file(
            ctx, "ewt_greedy_arc0", 2077, 2077, "--workers", "0", "--arc-weight", "0"
        ),
        ("train_ewt",),
    ),
    Step(
        "ewt_beam",
        0.7,
        lambda ctx: _big_file(ctx, "ewt_beam", 2077, 2077, "--workers", "0", "--search", "beam"),
        ("train_ewt",),
    ),
    Step(
        "big_file",
        2.0,
        lambda ctx: _big_file(ctx, "big_file", 100_000, 2000, "--workers", "auto", "0"),
        ("train_ewt",),
    ),
    Step(
        "epoch_cost_hu",
        2.0,
        lambda ctx: _epoch_cost(ctx, "epoch_cost_hu", "UD_Hungarian-Szeged", "--epochs", "2"),
    ),
    Step(
        "epoch_cost_ewt",
        1.0,
        lambda ctx: _epoch_cost(
            ctx, "epoch_cost_ewt", "UD_English-EWT", "--systems", "arc_eager", "--epochs", "3"
        ),
    ),
    Step(
        "train_hu_two_registers",
        1.5,
        lambda ctx: ctx.train("hu_two_registers", *HU, "system=two_registers"),
        trains="hu_two_registers",
    ),
    Step(
        "train_hu_three_step",
        1.5,
        lambda ctx: ctx.train("hu_three_step", *HU, "system=three_step"),
        trains="hu_three_step",
    ),
    Step(
        "train_hu_swap",
        1.5,
        lambda ctx: ctx.train("hu_swap", *HU, "system=swap"),
        trains="hu_swap",
    ),
    # One step per system: a step cut by the budget loses only its own rows (on 2026-12-04
    # the three in one step ran past 6.7 minutes, two-registers' rows alone took 1.5).
    *(
        Step(f"graphs_hu_{name}", 2.5, partial(_graphs_hu, system=name), (f"train_hu_{name}",))
        for name in ("two_registers", "three_step", "swap")
    ),
    Step("exit_rule_cost", 2.5, _exit_rule_cost),
    Step("graph_rules_hu", 3.5, _graph_rules_hu, ("train_hu_two_registers",)),
    Step(
        "epoch_cost_ewt_4000",
        0.8,
        lambda ctx: _epoch_cost(
            ctx,
            "epoch_cost_ewt_4000",
            "UD_English-EWT",
            *("--systems", "arc_eager", "--epochs", "3", "--batch-tokens", "4000"),
        ),
    ),
    Step("ewt_precision", 0.6, _precision, ("train_ewt",)),
    Step(
        "ewt_recipe_4000",
        4.0,
        lambda ctx: ctx.converge(
            "ewt_recipe_4000", 3.5, "trainer.batch_tokens=4000", f"trainer.lr={RECIPE_4000_LR}"
        ),
        result_lines=True,
    ),
)
NAMES = tuple(step.name for step in STEPS)


def run_session(
    steps: Sequence[Step],
    ctx: Context,
    budget_seconds: float,
    log: Path,
    progress: Callable[[list[dict]], None] = lambda records: None,
) -> list[dict]:
    """Run ``steps`` in order within ``budget_seconds``; one record per step, handed to
    ``progress`` after every step (a lent machine can be taken back mid-session)."""
    start = time.perf_counter()
    records: list[dict] = []
    # A provided model satisfies the steps that read it, listed among ``steps`` or not.
    succeeded = {s.name for s in STEPS if s.trains and ctx.provided_model(s.trains) is not None}
    with log.open("w", encoding="utf-8") as sink:
        for step in steps:
            progress(records)
            command = step.command(ctx)
            record: dict = {"step": step.name, "command": " ".join(command)}
            provided = ctx.provided_model(step.trains) if step.trains is not None else None
            if provided is not None:
                records.append({**record, "skipped": f"provided: {provided}"})
                succeeded.add(step.name)
                print(f"[{step.name}] skipped: {provided} provided", flush=True)
                continue
            left = budget_seconds - (time.perf_counter() - start)
            missing = [name for name in step.needs if name not in succeeded]
            if missing or left < 60 * step.minutes:
                reason = f"needs {', '.join(missing)}" if missing else f"{left:.0f} s left"
                records.append({**record, "skipped": reason})
                print(f"[{step.name}] skipped: {reason}", flush=True)
                continue
            sink.write(f"\n===== {step.name}: {record['command']}\n")
            sink.flush()
            began = time.perf_counter()
            try:
                done = subprocess.run(
                    command, stdout=sink, stderr=subprocess.STDOUT, timeout=left, cwd=ROOT
                )
                status = done.returncode
            except subprocess.TimeoutExpired:
                status = "timeout"
            record.update(status=status, seconds=round(time.perf_counter() - began, 1))
            output = (
                ctx.run(step.name) / "metrics.jsonl" if step.result_lines else ctx.json(step.name)
            )
            if output.is_file():
                text = output.read_text(encoding="utf-8")
                if step.result_lines:
                    record["result"] = [json.loads(line) for line in text.splitlines() if line]
                else:
                    record["result"] = json.loads(text)
            if status == 0:
                succeeded.add(step.name)
            records.append(record)
            print(f"[{step.name}] exit {status} in {record['seconds']} s", flush=True)
    return records


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "gpu_session")
    parser.add_argument("--budget-minutes", type=float, default=9.5)
    parser.add_argument("--train-minutes", type=float, default=2.5)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", nargs="+", choices=NAMES, help="default: all, in order")
    parser.add_argument(
        "--models",
        type=Path,
        help="trained models to use instead of training them: DIR/<model>/checkpoint.pt for "
        "ewt, hu_two_registers, hu_three_step, hu_swap",
    )
    parser.add_argument("--rehearse", action="store_true", help="tiny sizes, on the CPU")
    args = parser.parse_args(argv)
    device = "cpu" if args.rehearse else args.device
    wanted = [step for step in STEPS if args.steps is None or step.name in args.steps]
    args.out.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python -m benchmarks.gpu_session", *(argv or sys.argv[1:])])

    def save(records: list[dict]) -> list[str]:
        """Write ``session.json`` as it stands; the names of the steps that failed."""
        failed = [r["step"] for r in records if r.get("status") not in (0, None)]
        session = {"command": command, "device": device, "steps": records, "failed": failed}
        text = json.dumps(session, indent=2) + "\n"
        (args.out / "session.json").write_text(text, "utf-8")
        return failed

    with tempfile.TemporaryDirectory(prefix="gpu_session_") as scratch:
        ctx = Context(device, Path(scratch), args.rehearse, args.train_minutes, args.models)
        log = args.out / "session.log"
        records = run_session(wanted, ctx, 60 * args.budget_minutes, log, save)
    failed = save(records)
    print(f"saved {args.out / 'session.json'}; failed: {', '.join(failed) or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
