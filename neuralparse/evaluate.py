"""Score a predicted CoNLL-U file against a gold one.

    python -m neuralparse.evaluate GOLD PRED [--json] [--verbose]

The metric definitions are in :mod:`neuralparse.evaluation.metrics`; ``--help`` summarises them.
Exit status: 0 on success, 2 when the files cannot be read or do not hold the same words.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from neuralparse.errors import InputError
from neuralparse.evaluation.metrics import Scores, evaluate_files

CONVENTIONS = """\
conventions:
  scores are percentages; a score whose denominator is 0 prints as n/a (null in JSON).
  LAS compares full labels (nmod:poss != nmod); 'LAS universal' compares the part before ':'.
  'no punct' follows CoNLL-X: words whose gold FORM (not UPOS) is made only of Unicode
  punctuation characters (category P*) are not scored.
  exact match is per sentence over all words.
  non-projective arcs (Gomez-Rodriguez & Nivre 2013 sec. 5.2): h -> d is non-projective iff
  some word strictly between h and d is not dominated by h. Precision counts arcs that are
  non-projective in PRED, recall arcs that are non-projective in GOLD; a hit has the gold
  head (the labeled variants also need the full label). All words count.
  crossed/uncrossed recall (Pitler & McDonald 2015 Table 7): UAS of the non-punctuation words
  whose gold incoming arc crosses / does not cross another gold arc (root arcs included).
"""

#: Row titles of the human-readable table, in order; every key is a :class:`Scores` field.
ROWS: tuple[tuple[str, str], ...] = (
    ("uas", "UAS"),
    ("las", "LAS"),
    ("las_universal", "LAS universal label"),
    ("uas_nopunct", "UAS no punct"),
    ("las_nopunct", "LAS no punct"),
    ("exact_unlabeled", "Exact match unlabeled"),
    ("exact_labeled", "Exact match labeled"),
    ("nonproj_precision", "Non-proj. arcs precision"),
    ("nonproj_recall", "Non-proj. arcs recall"),
    ("nonproj_labeled_precision", "Non-proj. arcs labeled precision"),
    ("nonproj_labeled_recall", "Non-proj. arcs labeled recall"),
    ("crossed_recall", "Crossed arcs recall"),
    ("uncrossed_recall", "Uncrossed arcs recall"),
)


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def format_table(scores: Scores, *, verbose: bool = False) -> str:
    """The aligned human-readable report; ``verbose`` adds per-label and per-length tables."""
    width = max(len(title) for _, title in ROWS)
    lines = [f"{'Metric':<{width}}  {'Score':>7}  {'Correct':>9} / {'Total':<9}"]
    for key, title in ROWS:
        ratio = scores.ratios[key]
        lines.append(
            f"{title:<{width}}  {_score(getattr(scores, key)):>7}  "
            f"{ratio.correct:>9} / {ratio.total:<9}"
        )
    lines.append(f"{'Words':<{width}}  {scores.words:>7}")
    lines.append(f"{'Sentences':<{width}}  {scores.sentences:>7}")
    if verbose:
        label_width = max([len("Label"), *(len(label) for label in scores.per_label)])
        lines += [
            "",
            f"{'Label':<{label_width}}  {'Gold':>7}  {'Pred':>7}  {'Prec':>7}  {'Recall':>7}"
            f"  {'LAS':>7}",
        ]
        for label, s in scores.per_label.items():
            lines.append(
                f"{label:<{label_width}}  {s.gold:>7}  {s.predicted:>7}  {_score(s.precision):>7}"
                f"  {_score(s.recall):>7}  {_score(s.las):>7}"
            )
        lines += [
            "",
            f"{'Length':<7}  {'Sentences':>9}  {'Words':>7}  {'UAS':>7}  {'LAS':>7}",
        ]
        for s in scores.per_length:
            lines.append(
                f"{s.bucket:<7}  {s.sentences:>9}  {s.words:>7}  {_score(s.uas):>7}"
                f"  {_score(s.las):>7}"
            )
    return "\n".join(line.rstrip() for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m neuralparse.evaluate",
        description="Score the dependency trees of PRED against GOLD (same sentences and words).",
        epilog=CONVENTIONS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("gold", metavar="GOLD", help="gold CoNLL-U file")
    parser.add_argument("pred", metavar="PRED", help="predicted CoNLL-U file")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object instead of the table"
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="add per-label and per-sentence-length breakdowns (JSON keys per_label, "
        "per_length, nonproj_labeled_precision, nonproj_labeled_recall)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        scores = evaluate_files(args.gold, args.pred)
    except (InputError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(scores.to_dict(verbose=args.verbose), indent=2))
    else:
        print(format_table(scores, verbose=args.verbose))
    return 0


if __name__ == "__main__":
    sys.exit(main())
