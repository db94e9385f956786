"""Coverage of the three-step composed static oracle (Lacroix & Béchet 2014) on UD treebanks.

``python -m experiments.three_step_oracle_coverage [FILE.conllu ...] [--engine] [--limit N]``

For each file (default: the train set of every treebank under
:func:`neuralparse.datasets.data_root`) prints the number of trees,
the fraction the composed oracle reproduces exactly, the fraction of non-projective gold arcs
(Gómez-Rodríguez & Nivre §5.2 definition) it reproduces with their label, and the lifted arcs
it leaves on their anchors, by label: First Available conflicts, i.e. two lifted arcs with the
same direction and label crossing strictly (design note 04,
docs/dev/notes/04-three-step.md).  With ``--engine`` the oracle is also replayed on the tensor
engine, batched, and its reproduced count is checked against the reference.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import torch

from benchmarks.common import oracle_derivations, training_trees
from neuralparse.datasets import data_root
from neuralparse.io import read_conllu
from neuralparse.systems.three_step.reference import three_step_target, valency_oracle
from neuralparse.trees.core import nonprojective_arcs


def coverage(path: Path, *, engine: bool, limit: int | None, batch: int = 256) -> dict:
    sentences = read_conllu(path)[:limit]
    reproduced = nonprojective = recovered_np = 0
    losses: Counter[str] = Counter()
    for sentence in sentences:
        heads, deprels = sentence.heads, sentence.deprels
        target = three_step_target(heads, deprels)
        derived = valency_oracle(target)  # replayed on the reference configurations
        exact = derived.heads == list(heads) and derived.deprels == list(deprels)
        reproduced += exact
        if exact != (not target.unrecovered):
            raise AssertionError(f"{path}: {sentence.sent_id}: criterion and replay disagree")
        for d in nonprojective_arcs(heads):
            nonprojective += 1
            recovered_np += derived.heads[d - 1] == heads[d - 1]
        losses.update(arc.label for arc in target.unrecovered)
    row = {
        "file": str(path),
        "trees": len(sentences),
        "reproduced": reproduced,
        "nonprojective_arcs": nonprojective,
        "nonprojective_recovered": recovered_np,
        "losses": dict(losses.most_common()),
    }
    if engine:
        # Lifting keeps the labels: the training trees' inventory is the gold trees'.
        system, _ = training_trees("three_step", sentences)
        gold = [(s.heads, s.deprels) for s in sentences]
        derivations = oracle_derivations(system, gold, batch_size=batch)
        row["engine_reproduced"] = sum(ok for _, ok in derivations)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--engine", action="store_true", help="also replay on the engine")
    parser.add_argument("--limit", type=int, default=None, help="first N sentences per file")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (small tensors: 1 is fastest)"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    root = data_root()
    files = args.files or sorted(root.glob("UD_*/train.conllu"))
    if not files:
        print(f"no files given and no treebanks under {root}", file=sys.stderr)
        return 1
    print("| treebank | trees | reproduced | np arcs | np arcs recovered | losses by label |")
    print("|---|---:|---:|---:|---:|---|")
    for path in files:
        row = coverage(path, engine=args.engine, limit=args.limit)
        trees, np_arcs = row["trees"], row["nonprojective_arcs"]
        tree_pct = 100 * row["reproduced"] / max(1, trees)
        arc_pct = 100 * row["nonprojective_recovered"] / max(1, np_arcs)
        losses = ", ".join(f"{k} {v}" for k, v in list(row["losses"].items())[:6]) or "-"
        engine = f" (engine {row['engine_reproduced']})" if "engine_reproduced" in row else ""
        print(
            f"| {path.parent.name} | {trees} | {row['reproduced']} ({tree_pct:.2f}%){engine} "
            f"| {np_arcs} | {row['nonprojective_recovered']} ({arc_pct:.2f}%) | {losses} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
