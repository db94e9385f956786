"""Prediction in float32 against bfloat16 (``precision=bfloat16``): speed, accuracy and how
many predictions change, for one trained model on one test file, in the same run.

The test file is parsed with UPOS/XPOS/FEATS blanked (text nobody tagged), greedily or with
a beam, at each precision: the scores are the CoNLL 2018 definitions
(:meth:`neuralparse.Parser.evaluate`: LAS on the universal part of DEPREL, the model's own
tags), and "same" counts the words whose head, label and predicted tags are the same as
float32's.  Speed is ``Parser.parse_file`` from the blanked CoNLL-U to a file, the precisions
alternated for ``--rounds`` rounds so that a busy machine slows both alike; the table gives
each precision's median words/s and the median over rounds of bfloat16's time over
float32's in the same round.  Accuracy needs a trained model; speed does not (the model's
weights change no shape), but report it from the model whose accuracy is beside it.

    python -m benchmarks.precision --checkpoint CKPT [--treebank UD_English-EWT | --test FILE]
        [--sentences N] [--device cpu] [--threads 2] [--rounds 5] [--beam K]
        [--out outputs/benchmarks/precision.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from benchmarks.common import ROOT, save_json
from neuralparse import Parser
from neuralparse.datasets import treebank_paths
from neuralparse.errors import InputError
from neuralparse.evaluation import evaluate
from neuralparse.evaluation.scores import predicted_tag_scores_only
from neuralparse.io import Sentence, read_conllu, write_conllu
from neuralparse.runtime.devices import PRECISIONS, describe_machine, native_bfloat16

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "precision.json"
SCORES = ("las", "uas", "upos", "xpos", "ufeats")


def same_words(ours: Sequence[Sentence], reference: Sequence[Sentence]) -> float:
    """Percentage of words whose head, label, UPOS, XPOS and FEATS agree."""
    agree = total = 0
    for a, b in zip(ours, reference, strict=True):
        columns = zip(a.heads or [], a.deprels, a.upos, a.xpos, a.feats, strict=True)
        others = zip(b.heads or [], b.deprels, b.upos, b.xpos, b.feats, strict=True)
        agree += sum(x == y for x, y in zip(columns, others, strict=True))
        total += len(a)
    return 100.0 * agree / max(total, 1)


def accuracy(parser: Parser, gold: list[Sentence], options: dict[str, Any]) -> dict[str, Any]:
    """Scores and parses of the blanked ``gold`` at every precision."""
    blanked = [s.without_tags() for s in gold]
    columns = parser.model.tagged_columns
    tags = "predict" if columns else "keep"
    parses = {p: parser.parse(blanked, tags=tags, precision=p, **options) for p in PRECISIONS}
    rows: dict[str, Any] = {}
    for precision, parsed in parses.items():
        # As Parser.evaluate scores: the tag columns the model does not predict are None.
        scores = predicted_tag_scores_only(evaluate(gold, parsed).to_dict(), columns)
        rows[precision] = {key: scores.get(key) for key in SCORES}
        rows[precision]["same_as_float32"] = same_words(parsed, parses["float32"])
    return rows


def speed(
    parser: Parser, gold: list[Sentence], rounds: int, options: dict[str, Any]
) -> dict[str, Any]:
    """Words/s of every round and precision, file to file, and bfloat16's time ratio."""
    seconds: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    with tempfile.TemporaryDirectory() as work:
        source, output = Path(work) / "untagged.conllu", Path(work) / "out.conllu"
        write_conllu([s.without_tags() for s in gold], source)
        for precision in PRECISIONS:  # warm-up: kernels, allocations
            parser.parse_file(source, output, precision=precision, **options)
        for _ in range(rounds):
            for precision in PRECISIONS:
                start = time.perf_counter()
                report = parser.parse_file(source, output, precision=precision, **options)
                seconds[precision].append(time.perf_counter() - start)
    words = report.words
    ratios = [b / f for b, f in zip(seconds["bfloat16"], seconds["float32"], strict=True)]
    return {
        "words": words,
        "seconds": seconds,
        "words_per_second": {p: words / statistics.median(s) for p, s in seconds.items()},
        "time_ratio_bfloat16": statistics.median(ratios),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--treebank", default="UD_English-EWT")
    parser.add_argument("--test", type=Path, help="a gold test file instead of the treebank's")
    parser.add_argument("--sentences", type=int, default=None, help="the first N only")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--beam", type=int, default=None, help="beam width (default: greedy)")
    parser.add_argument("--out", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    options: dict[str, Any] = {"search": "greedy"}
    if args.beam is not None:
        options = {"search": "beam", "beam_size": args.beam}
    try:
        test = args.test or treebank_paths(args.treebank, splits=("test",))["test"]
        model = Parser.load(args.checkpoint, device=args.device)
        gold = read_conllu(test)[: args.sentences]
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    device = model.device
    rows = accuracy(model, gold, options)
    timing = speed(model, gold, args.rounds, options)
    search = "greedy" if args.beam is None else f"beam {args.beam}"
    print(
        f"{test}, untagged input, {search}, {device}, {args.threads} threads, "
        f"bfloat16 in hardware: {native_bfloat16(device)}; CoNLL 2018 LAS; "
        f"speed: medians of {args.rounds} rounds, file to file"
    )
    print("| precision | LAS | UAS | UPOS | XPOS | UFeats | same as float32 | words/s | time |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for precision in PRECISIONS:
        row = rows[precision]
        cells = " | ".join("n/a" if row[key] is None else f"{row[key]:.2f}" for key in SCORES)
        ratio = 1.0 if precision == "float32" else timing["time_ratio_bfloat16"]
        print(
            f"| {precision} | {cells} | {row['same_as_float32']:.2f}% "
            f"| {timing['words_per_second'][precision]:,.0f} | {ratio:.2f} |"
        )
    save_json(
        {
            "command": " ".join(["python -m benchmarks.precision", *(argv or sys.argv[1:])]),
            "machine": describe_machine(device),
            "native_bfloat16": native_bfloat16(device),
            "checkpoint": str(args.checkpoint),
            "test": str(test),
            "search": search,
            "accuracy": rows,
            "speed": timing,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
