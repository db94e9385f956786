"""How much decoding's arc term adds: models trained with the auxiliary arc scorer
(``model.arc_loss_weight``), each parsed with several arc-term weights
(``model.arc_decoding_weight``, :mod:`neuralparse.search.arc_term`) on its treebank's dev and
test files, untagged (UPOS/XPOS/FEATS blanked), scored with the CoNLL 2018 definitions (LAS on
the universal part of DEPREL).  The weight is chosen on dev; test shows whether the choice
carries over.  Weight 0 is the transition scorer alone, so every row compares with its own
baseline in the same run.

    python -m experiments.arc_term --checkpoints RUN/checkpoint.pt [...] [--weights 0 0.25 0.5 1]
        [--splits dev test] [--search greedy|beam] [--threads 1]
        [--out experiments/results/arc_term.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import torch

from neuralparse import Parser
from neuralparse.datasets import treebank_paths

SCORES = ("las", "uas", "upos", "ufeats")


def weigh(parser: Parser, weight: float) -> None:
    """Parse with ``weight`` from now on (the checkpoint's model must have the arc scorer)."""
    if parser.model.arcs is None:
        raise SystemExit("the checkpoint's model has no arc scorer (model.arc_loss_weight 0)")
    parser.model.config = dataclasses.replace(parser.model.config, arc_decoding_weight=weight)


def run(
    checkpoint: Path, weights: list[float], splits: list[str], search: str
) -> list[dict[str, Any]]:
    parser = Parser.load(checkpoint, device="cpu", search=search)
    treebank = parser.config["data"]["treebank"]
    paths = treebank_paths(treebank, splits=splits)
    rows = []
    for weight in weights:
        weigh(parser, weight)
        row: dict[str, Any] = {"checkpoint": str(checkpoint), "treebank": treebank}
        row |= {"weight": weight, "search": search}
        for split in splits:
            start = time.perf_counter()
            scores = parser.evaluate(paths[split], untagged=True)
            row[split] = {key: scores.get(key) for key in SCORES}
            row[split]["seconds"] = time.perf_counter() - start
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", type=Path, nargs="+", required=True)
    parser.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.25, 0.5, 1.0])
    parser.add_argument("--splits", nargs="+", default=["dev", "test"])
    parser.add_argument("--search", default="greedy", choices=["greedy", "beam"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("experiments/results/arc_term.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    rows = [
        row
        for path in args.checkpoints
        for row in run(path, args.weights, args.splits, args.search)
    ]
    print(
        f"untagged input, CoNLL 2018 LAS (universal DEPREL), {args.search}, "
        f"{args.threads} thread(s); arc-term weight 0 = the transition scorer alone"
    )
    header = " | ".join(f"{split} LAS | {split} UAS | {split} s" for split in args.splits)
    print(f"| checkpoint | treebank | weight | {header} |")
    print("| --- | --- | ---: |" + " ---: | ---: | ---: |" * len(args.splits))
    for row in rows:
        cells = " | ".join(
            f"{row[s]['las']:.2f} | {row[s]['uas']:.2f} | {row[s]['seconds']:.1f}"
            for s in args.splits
        )
        print(f"| {row['checkpoint']} | {row['treebank']} | {row['weight']:g} | {cells} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "las_definition": "CoNLL 2018 (universal part of DEPREL)",
        "input": "untagged (UPOS/XPOS/FEATS blanked)",
        "threads": args.threads,
        "rows": rows,
    }
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
