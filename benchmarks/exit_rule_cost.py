"""What one call of two-registers' exit rule costs, three ways, on the same configurations:
on the host (``exit_legal`` on configurations rebuilt from the tensors, what the eager loop
does), as tensor operations (:func:`~neuralparse.systems.two_registers.tensor_rule.exit_rule`,
``graph_rule="tensor"``, searching at most ``SEARCH_ROWS`` rows as the CUDA-graph variant
does in a batch of up to 512 rows), and compiled (the same through ``torch.compile``,
``graph_rule="compiled"``, with the options the system uses).

The configurations are the slow rows (off the closed form's fast path, not terminal) met by
batched random walks on the engine, so every kind of register phase occurs.  For each number
of rows the script times a call of each way (the fastest of ``--repeats`` rounds over
``--calls`` calls, synchronising a GPU), and checks that the compiled rule gives exactly the
tensor rule's masks and that every row the tensor rule decides gets the host's mask.  It
prints a table and writes JSON (``--out``); the first compiled call, which compiles, is timed
apart.  CUDA graphs replay the tensor rule's operators one kernel each; compiled, they are a
few fused kernels.

    python -m benchmarks.exit_rule_cost [--device cpu|cuda] [--rows 1 8 64 256]
        [--repeats 3] [--calls 10] [--threads 1] [--sentences 64] [--out PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from functools import partial
from pathlib import Path

import torch

from benchmarks.common import ROOT, save_json
from neuralparse.runtime.devices import describe_machine
from neuralparse.systems import random_actions
from neuralparse.systems.two_registers.configuration import Configuration
from neuralparse.systems.two_registers.exit import exit_legal
from neuralparse.systems.two_registers.mask import fast_rows, words_view
from neuralparse.systems.two_registers.system import (
    COMPILE_OPTIONS,
    SEARCH_ROWS,
    TwoRegisters,
    reference_configurations,
    reference_rows,
)
from neuralparse.systems.two_registers.tensor_forms import Words
from neuralparse.systems.two_registers.tensor_rule import exit_rule

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "exit_rule_cost.json"


def slow_rows(
    sentences: int, max_length: int, device: torch.device, seed: int = 1
) -> tuple[Words, list[Configuration]]:
    """The slow rows met along one batched random walk (lengths 10 to ``max_length``), as
    :class:`Words` rows of one width and as host configurations."""
    system = TwoRegisters()
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(10, max_length + 1, (sentences,), generator=generator)
    state = system.initial(lengths.tolist(), device)
    views: list[Words] = []
    configs: list[Configuration] = []
    while not bool(system.terminal(state).all()):
        slow = torch.nonzero(~fast_rows(state) & ~system.terminal(state)).flatten()
        if slow.numel():
            views.append(words_view(state, slow))
            configs += reference_configurations(state, slow.tolist())
        legal = system.legal(state)
        actions = random_actions(legal.cpu(), generator).to(device)
        system.apply(state, actions)
    pooled = Words(
        **{f.name: torch.cat([getattr(v, f.name) for v in views]) for f in fields(Words)}
    )
    return pooled, configs


def take(words: Words, rows: torch.Tensor) -> Words:
    return Words(**{f.name: getattr(words, f.name)[rows] for f in fields(Words)})


def host_rule(configs: Sequence[Configuration]) -> list[list[bool]]:
    """The eager loop's reference (:func:`reference_rows` with the exit rule), as the tensor
    rule gives it: the legal mask, then which legal moves build an arc from the root."""
    legal, roots = reference_rows(configs, exit_legal)
    return [
        row + [ok and root for ok, root in zip(row, of_root, strict=True)]
        for row, of_root in zip(legal, roots, strict=True)
    ]


def fastest(work: Callable[[], object], device: torch.device, repeats: int, calls: int) -> float:
    """Milliseconds per call of ``work``: the fastest of ``repeats`` rounds of ``calls``."""
    best = float("inf")
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        for _ in range(calls):
            work()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, (time.perf_counter() - start) / calls)
    return 1000 * best


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--sentences", type=int, default=64, help="of the random walk")
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 8, 64, 256])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    pool, configs = slow_rows(args.sentences, max_length=40, device=device)
    print(f"{len(configs)} slow rows from random walks, width {pool.head.shape[1]}")
    # As the CUDA-graph variant calls it in a batch of up to 512 rows (`search_limit`).
    tensor_rule = partial(exit_rule, search_rows=SEARCH_ROWS)
    compiled = partial(torch.compile(exit_rule, **COMPILE_OPTIONS), search_rows=SEARCH_ROWS)
    start = time.perf_counter()
    compiled(take(pool, torch.arange(2, device=device)))
    compile_seconds = time.perf_counter() - start
    print(f"first compiled call (compiles): {compile_seconds:.1f} s")
    generator = torch.Generator().manual_seed(2)
    rows_out = []
    for count in args.rows:
        picked = torch.randint(len(configs), (count,), generator=generator)
        words, chosen = take(pool, picked.to(device)), [configs[i] for i in picked.tolist()]
        tensor_out, compiled_out = tensor_rule(words), compiled(words)
        same = all(torch.equal(a, b) for a, b in zip(tensor_out, compiled_out, strict=True))
        legal, roots, decided = (t.cpu() for t in tensor_out)
        host = host_rule(chosen)
        tensor_rows = torch.cat([legal, roots], 1).tolist()
        agree = all(
            h == t for h, t, d in zip(host, tensor_rows, decided.tolist(), strict=True) if d
        )
        row: dict[str, object] = {
            "rows": count,
            "decided": int(decided.sum()),
            "compiled_equals_tensor": same,
            "tensor_equals_host_where_decided": agree,
        }
        for name, work in (
            ("host_ms", partial(host_rule, chosen)),
            ("tensor_ms", partial(tensor_rule, words)),
            ("compiled_ms", partial(compiled, words)),
        ):
            row[name] = fastest(work, device, args.repeats, args.calls)
        rows_out.append(row)
    print("| rows | decided | host ms | tensor ms | compiled ms | compiled / tensor | same |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in rows_out:
        ratio = r["compiled_ms"] / r["tensor_ms"]
        same = r["compiled_equals_tensor"] and r["tensor_equals_host_where_decided"]
        print(
            f"| {r['rows']} | {r['decided']} | {r['host_ms']:.2f} | {r['tensor_ms']:.2f} | "
            f"{r['compiled_ms']:.2f} | {ratio:.2f} | {'yes' if same else 'NO'} |"
        )
    save_json(
        {
            "command": " ".join(["python -m benchmarks.exit_rule_cost", *(argv or sys.argv[1:])]),
            "machine": describe_machine(device),
            "compile_options": {k: str(v) for k, v in COMPILE_OPTIONS.items()},
            "first_compiled_call_seconds": compile_seconds,
            "slow_rows": len(configs),
            "rows": rows_out,
        },
        args.out,
    )
    everything_agrees = all(
        r["compiled_equals_tensor"] and r["tensor_equals_host_where_decided"] for r in rows_out
    )
    return 0 if everything_agrees else 1


if __name__ == "__main__":
    sys.exit(main())
