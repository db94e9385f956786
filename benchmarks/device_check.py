"""Check that every transition system runs unchanged on another device (CUDA).

For each system, on ``--device``: uniformly random legal walks over sentences of random lengths
must end in well-formed single-rooted trees (no dead ends); the static oracle, run batched on
the device for those of them in the system's class (for three-step: those its oracle can
reproduce), must reproduce them; and its action sequences must equal the ones the same oracle
takes on the CPU. Class soundness itself is tested on the CPU (``tests/systems``). Prints one
row per system and exits non-zero on any failure; ``--json`` prints the rows as JSON instead.

    python -m benchmarks.device_check --device cuda [--systems two_planar swap] [--sentences 256]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from neuralparse.systems import SYSTEMS, get_system, random_walks, run_oracle
from neuralparse.trees.core import check_tree

LABELS = ("root", "dep", "obj")


def check_system(name: str, device: torch.device, sentences: int, max_length: int, seed: int):
    system = get_system(name, LABELS)
    lengths = torch.randint(
        1, max_length + 1, (sentences,), generator=torch.Generator().manual_seed(seed)
    )
    generator = torch.Generator(device=device).manual_seed(seed)
    start = time.perf_counter()
    state, finished = random_walks(system, lengths.tolist(), generator=generator, device=device)
    heads, labels = (t.cpu() for t in system.heads_and_labels(state))
    trees = []
    well_formed = finished
    for b, n in enumerate(lengths.tolist()):
        tree = heads[b, 1 : n + 1].tolist()
        deprels = [system.labels[x] for x in labels[b, 1 : n + 1].tolist()]
        try:
            check_tree(tree, single_root=True)
        except ValueError:
            well_formed = False
            continue
        if system.in_class(tree, deprels):
            trees.append((tree, deprels))
    on_device = run_oracle(system, trees, device)
    on_cpu = run_oracle(system, trees, "cpu")
    return {
        "system": name,
        "device": str(device),
        "sentences": sentences,
        "walks_well_formed": bool(well_formed),
        "oracle_reproduced": sum(on_device.reproduced),
        "oracle_trees": len(trees),
        "same_actions_as_cpu": on_device.actions == on_cpu.actions,
        "seconds": round(time.perf_counter() - start, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--systems", nargs="+", default=sorted(SYSTEMS), choices=sorted(SYSTEMS))
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--max-length", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    rows = [
        check_system(name, device, args.sentences, args.max_length, args.seed)
        for name in args.systems
    ]
    ok = all(
        r["walks_well_formed"]
        and r["same_actions_as_cpu"]
        and r["oracle_reproduced"] == r["oracle_trees"]
        for r in rows
    )
    if args.json:
        print(json.dumps({"ok": ok, "rows": rows}, indent=2))
    else:
        keys = list(rows[0])
        print("\t".join(keys))
        for row in rows:
            print("\t".join(str(row[k]) for k in keys))
        print("all checks passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
