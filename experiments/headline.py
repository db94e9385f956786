"""The headline figures of trained models: test accuracy on untagged and on tagged input, and
CPU parsing speed, side by side in one run.

For each checkpoint: the treebank's test file parsed greedily with UPOS/XPOS/FEATS blanked
(text nobody tagged: the headline setting) and as distributed, scored with the CoNLL 2018
definitions (:meth:`neuralparse.Parser.evaluate`: LAS on the universal part of DEPREL, the
model's own tags); then the test sentences parsed file to file (``Parser.parse_file``, tags
predicted) ``--repeats`` times with ``--threads`` torch threads, reporting the best words/s,
from two inputs a user would give: CoNLL-U with UPOS/XPOS/FEATS blanked, and plain text (one
sentence per line, its words separated by spaces).
The models run one after the other in the same process, so their speeds compare as ratios.

    python -m experiments.headline --checkpoints outputs/make_train/checkpoint.pt
        outputs/contextual_en/checkpoint.pt [--treebank UD_English-EWT | --test FILE] [--threads 2]
        [--repeats 3] [--out experiments/results/headline.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from neuralparse import Parser
from neuralparse.datasets import treebank_paths
from neuralparse.io import read_conllu, write_conllu

SCORES = ("las", "uas", "clas", "mlas", "upos", "xpos", "ufeats", "alltags")


def headline(checkpoint: Path, test: Path, repeats: int) -> dict[str, Any]:
    parser = Parser.load(checkpoint, device="cpu")
    row: dict[str, Any] = {"checkpoint": str(checkpoint), "system": parser.system.name}
    for setting, untagged in (("untagged", True), ("tagged", False)):
        scores = parser.evaluate(test, untagged=untagged)
        row[setting] = {key: scores.get(key) for key in SCORES}
    sentences = read_conllu(test)
    row["words"] = sum(len(s) for s in sentences)
    with tempfile.TemporaryDirectory() as work:
        untagged, text = Path(work) / "untagged.conllu", Path(work) / "text.txt"
        write_conllu([s.without_tags() for s in sentences], untagged)
        text.write_text("".join(" ".join(s.forms) + "\n" for s in sentences), encoding="utf-8")
        for name, source, input_format in (("conllu", untagged, "conllu"), ("text", text, "text")):
            seconds = []
            for _ in range(repeats):
                start = time.perf_counter()
                report = parser.parse_file(
                    source, Path(work) / "out.conllu", input_format=input_format, progress=False
                )
                seconds.append(time.perf_counter() - start)
            # A form with a space in it is two words of the text file.
            row[f"words_per_second_{name}"] = report.words / min(seconds)
    row["words_per_second"] = row["words_per_second_conllu"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoints", type=Path, nargs="+", required=True)
    parser.add_argument("--treebank", default="UD_English-EWT")
    parser.add_argument("--test", type=Path, help="a test file instead of the treebank's")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("experiments/results/headline.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    test = args.test or treebank_paths(args.treebank)["test"]
    rows = [headline(path, test, args.repeats) for path in args.checkpoints]
    print(f"{args.treebank} test ({test}), CoNLL 2018 definitions, greedy, {args.threads} threads")
    print(
        "| checkpoint | input | LAS | UAS | CLAS | MLAS | UPOS | XPOS | UFeats "
        "| words/s, untagged CoNLL-U | words/s, text |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        for setting in ("untagged", "tagged"):
            s = row[setting]
            cells = " | ".join(
                "n/a" if s[k] is None else f"{s[k]:.2f}"
                for k in ("las", "uas", "clas", "mlas", "upos", "xpos", "ufeats")
            )
            speed = " | ".join(
                f"{row[f'words_per_second_{name}']:,.0f}" if setting == "untagged" else ""
                for name in ("conllu", "text")
            )
            print(f"| {row['checkpoint']} | {setting} | {cells} | {speed} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {"treebank": args.treebank, "test": str(test), "threads": args.threads, "rows": rows}
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
