"""What the gap between gold tags and no tags is made of: the gold-tag parser given the joint
model's predicted tags.

The default joint model parses untagged text several LAS points below a parser that reads
gold UPOS, XPOS and FEATS (docs/results.md).  Either its tagger's errors cost those points (a
parser given the same predicted tags would lose them too), or the joint model makes less of
what it knows than a parser reading tags does.  For the accuracy study's runs of one system
and seed on each treebank (``experiments/study_runs/<data>/<system>/seed<k>`` and its
``gold_tags/seed<k>`` beside it), this parses test with:

- the joint model on untagged input (the headline setting; its tags are predicted too);
- the gold-tag model given gold UPOS, XPOS and FEATS (what the gap is measured against);
- the gold-tag model given the joint model's predicted tags for all three columns (a
  pipeline: tagger, then parser), for FEATS only (gold UPOS and XPOS), and for UPOS and XPOS
  only (gold FEATS), which says which column's errors cost the most;
- the gold-tag model on untagged input.

Scores are the CoNLL 2018 shared task's (LAS: head and universal part of DEPREL), greedy.

    python -m experiments.tag_gap [--data el_gdt hu_szeged ...] [--system arc_eager]
        [--seed 1] [--runs experiments/study_runs] [--threads 2] [--out experiments/results]

Writes ``tag_gap.{csv,json,md}`` to ``--out``; a treebank without both runs' checkpoints is
skipped with a message (checkpoints stay in the checkout that trained them).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from experiments.report import write_results
from experiments.runs import DATA_KEYS, ROOT, STUDY_RUNS, load_run

if TYPE_CHECKING:
    from neuralparse import Parser
    from neuralparse.io import Sentence

RESULTS = ROOT / "experiments" / "results"
GIVEN = {
    "gold": ("upos", "xpos", "feats"),
    "predicted": (),
    "predicted_feats": ("upos", "xpos"),
    "predicted_pos": ("feats",),
}
"""Tag settings of the gold-tag parser: the columns it gets from gold, the rest predicted."""


def given_tags(
    gold: Sequence[Sentence], predicted: Sequence[Sentence], gold_columns: Sequence[str]
) -> list[Sentence]:
    """The gold sentences with ``gold_columns`` kept and the other tag columns taken from
    the joint model's ``predicted`` sentences."""
    replaced = [c for c in ("upos", "xpos", "feats") if c not in gold_columns]
    return [
        g.with_tags(**{column: getattr(p, column) for column in replaced})
        for g, p in zip(gold, predicted, strict=True)
    ]


def gap_row(joint: Parser, tagged: Parser, gold: Sequence[Sentence]) -> dict:
    """LAS of the joint model on untagged input and of the gold-tag model in every setting of
    :data:`GIVEN` and on untagged input, with the joint model's tag accuracy."""
    from neuralparse.evaluation import evaluate

    untagged = [s.without_tags() for s in gold]
    predicted = joint.parse(untagged, tags="predict")
    scores = evaluate(gold, predicted).to_dict()
    row = {
        "words": sum(len(s) for s in gold),
        "joint_untagged": scores["las"],
        **{f"joint_{tag}": scores[tag] for tag in ("upos", "xpos", "ufeats")},
    }
    for setting, gold_columns in GIVEN.items():
        given = given_tags(gold, predicted, gold_columns)
        row[f"tagged_{setting}"] = evaluate(gold, tagged.parse(given, tags="keep")).las
    row["tagged_untagged"] = evaluate(gold, tagged.parse(untagged, tags="keep")).las
    row["gap"] = row["tagged_gold"] - row["joint_untagged"]
    row["pipeline_minus_joint"] = row["tagged_predicted"] - row["joint_untagged"]
    return row


def markdown(rows: Sequence[dict], command: str) -> str:
    head = [
        f"LAS (CoNLL 2018) on test, greedy, of the joint model on untagged input and of the "
        f"gold-tag model given gold, predicted and mixed tags ({date.today()}; `{command}`)",
        "",
        "| treebank | system | joint model, untagged | gold-tag model: gold tags | predicted "
        "tags | predicted FEATS only | predicted UPOS+XPOS only | no tags | gap | pipeline "
        "− joint | joint UPOS | joint UFeats |",
        "| --- | --- |" + " ---: |" * 10,
    ]
    lines = [
        f"| {r['data']} | {r['system']} | {r['joint_untagged']:.2f} | {r['tagged_gold']:.2f} | "
        f"{r['tagged_predicted']:.2f} | {r['tagged_predicted_feats']:.2f} | "
        f"{r['tagged_predicted_pos']:.2f} | {r['tagged_untagged']:.2f} | {r['gap']:.2f} | "
        f"{r['pipeline_minus_joint']:+.2f} | {r['joint_upos']:.2f} | {r['joint_ufeats']:.2f} |"
        for r in rows
    ]
    return "\n".join(head + lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=list(DATA_KEYS), choices=DATA_KEYS)
    parser.add_argument("--system", default="arc_eager")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--runs", type=Path, default=STUDY_RUNS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = []
    for data in args.data:
        joint_dir = args.runs / data / args.system / f"seed{args.seed}"
        tagged_dir = args.runs / data / args.system / "gold_tags" / f"seed{args.seed}"
        missing = [d for d in (joint_dir, tagged_dir) if not (d / "checkpoint.pt").is_file()]
        if missing:
            print(f"{data}: skipped, no checkpoint in {', '.join(map(str, missing))}")
            continue
        joint = load_run(joint_dir, "cpu", args.threads, quick=False)
        tagged = load_run(tagged_dir, "cpu", args.threads, quick=False)
        if joint.test_file.resolve() != tagged.test_file.resolve():
            print(f"error: {data}: the two runs were tested on different files", file=sys.stderr)
            return 1
        row = {"data": data, "system": args.system, "seed": args.seed}
        rows.append({**row, **gap_row(joint.parser, tagged.parser, joint.gold)})
        print(f"{data}: done", flush=True)
    if not rows:
        print(f"error: no treebank has both runs under {args.runs}", file=sys.stderr)
        return 1
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m experiments.tag_gap", *arguments]).strip()
    md = markdown(rows, command)
    document = {"command": command, "date": str(date.today()), "rows": rows}
    write_results(args.out, "tag_gap", rows, document, md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
