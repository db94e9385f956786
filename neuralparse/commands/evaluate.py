"""The ``evaluate`` command: score a predicted CoNLL-U file against a gold one.

    neuralparse evaluate GOLD PRED [--json] [--verbose]
    python -m neuralparse.evaluate GOLD PRED [--json] [--verbose]

The metric definitions are in :mod:`neuralparse.evaluation.metrics`; ``--help`` summarises them.
Exit status: 0 on success, 2 when the files cannot be read or do not hold the same text.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from neuralparse.errors import InputError
from neuralparse.evaluation.alignment import Segmentation, evaluate_system_files
from neuralparse.evaluation.metrics import Scores
from neuralparse.runtime.cli import ArgumentParser, report_error, run_program

CONVENTIONS = """\
conventions:
  scores are percentages; a score whose denominator is 0 prints as n/a (null in JSON).
  CoNLL 2018 shared task definitions (Zeman et al. 2018, official conll18_ud_eval.py), on
  files with the same words:
  UAS: correct head. LAS: correct head and universal part of DEPREL (the part before ':',
  so nmod:poss = nmod). 'LAS full labels' (las_full) compares the whole DEPREL.
  CLAS, MLAS, BLEX are F1 over content words (universal DEPREL not aux case cc clf cop det
  mark punct): 2 * correct / (gold content words + predicted content words); the table shows
  correct / gold and the predicted count. CLAS: head and universal DEPREL; MLAS: also UPOS,
  universal FEATS and the functional children (aux case cc clf cop det mark) with their
  universal DEPREL, UPOS and universal FEATS; BLEX: head, universal DEPREL and LEMMA.
  UPOS, XPOS: string equal. UFeats: FEATS restricted to the universal features (order and
  language-specific features ignored). AllTags: UPOS, XPOS and UFeats. Lemmas: equal, or the
  gold LEMMA is '_'. A score that needs a column that is '_' throughout GOLD is n/a.
  'no punct' follows CoNLL-X: words whose gold FORM (not UPOS) is made only of Unicode
  punctuation characters (category P*) are not scored; 'LAS no punct' compares full labels.
  exact match is per sentence over all words; 'labeled' compares full labels.
  non-projective arcs (Gomez-Rodriguez & Nivre 2013 sec. 5.2): h -> d is non-projective iff
  some word strictly between h and d is not dominated by h. Precision counts arcs that are
  non-projective in PRED, recall arcs that are non-projective in GOLD; a hit has the gold
  head (the labeled variants also need the full label). All words count.
  crossed/uncrossed recall (Pitler & McDonald 2015 Table 7): UAS of the non-punctuation words
  whose gold incoming arc crosses / does not cross another gold arc (root arcs included).
  another tokenization (other words or sentence boundaries) is aligned as the CoNLL 2018
  scorer does: both files need the same text once whitespace is removed; tokens and sentences
  match when they cover the same characters, words when their tokens do or, in a multiword
  token, along the longest common subsequence of their forms (case ignored). Tokens,
  Sentences, Words F1 score that segmentation. Every CoNLL 2018 score is then an F1 over
  aligned words (precision over PRED's words, recall over GOLD's; a head is right when it is
  aligned with the gold head; JSON: 'tokenization', and f1_counts with --verbose), and the
  other scores, which need the same words, are n/a.
"""

DESCRIPTION = (
    "Score the dependency trees and tags of PRED against GOLD (the same words, or another "
    "tokenization of the same text), with the CoNLL 2018 shared task metrics and more."
)

#: Row titles of the human-readable table, in order; every key is a :class:`Scores` field.
ROWS: tuple[tuple[str, str], ...] = (
    ("uas", "UAS"),
    ("las", "LAS (CoNLL 2018: universal part of DEPREL)"),
    ("las_full", "LAS full labels"),
    ("clas", "CLAS F1 (content words)"),
    ("mlas", "MLAS F1 (CLAS + UPOS, UFeats, function words)"),
    ("blex", "BLEX F1 (CLAS + lemma)"),
    ("upos", "UPOS"),
    ("xpos", "XPOS"),
    ("ufeats", "UFeats (universal features)"),
    ("alltags", "AllTags (UPOS + XPOS + UFeats)"),
    ("lemmas", "Lemmas"),
    ("uas_nopunct", "UAS no punct"),
    ("las_nopunct", "LAS no punct (full labels)"),
    ("exact_unlabeled", "Exact match unlabeled"),
    ("exact_labeled", "Exact match labeled (full labels)"),
    ("nonproj_precision", "Non-proj. arcs precision"),
    ("nonproj_recall", "Non-proj. arcs recall"),
    ("nonproj_labeled_precision", "Non-proj. arcs labeled precision (full labels)"),
    ("nonproj_labeled_recall", "Non-proj. arcs labeled recall (full labels)"),
    ("crossed_recall", "Crossed arcs recall"),
    ("uncrossed_recall", "Uncrossed arcs recall"),
)


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _counts(scores: Scores, key: str) -> str:
    """The counts column of a row: ``correct / total``; for an F1 score ``correct / gold`` and
    the predicted count; empty for a score that is not reported."""
    if key in scores.f1_counts:
        counts = scores.f1_counts[key]
        return f"{counts.correct:>9} / {counts.gold:<9}  predicted {counts.predicted}"
    if key in scores.ratios:
        ratio = scores.ratios[key]
        return f"{ratio.correct:>9} / {ratio.total:<9}"
    return ""


def format_table(
    scores: Scores,
    *,
    verbose: bool = False,
    segmentation: Segmentation | None = None,
    aligned: bool = False,
) -> str:
    """The aligned human-readable report; ``verbose`` adds per-label and per-length tables,
    ``segmentation`` the Tokens, Sentences and Words F1 rows, ``aligned`` (the tokenizations
    differ) a note instead of the tables."""
    width = max(len(title) for _, title in ROWS)
    lines = []
    if aligned:
        lines.append(
            "The tokenizations differ: scores are F1 over the words aligned by characters "
            "(CoNLL 2018); the others need the same words."
        )
    lines.append(f"{'Metric':<{width}}  {'Score':>7}  {'Correct':>9} / {'Total':<9}")
    for key, title in ROWS:
        lines.append(f"{title:<{width}}  {_score(getattr(scores, key)):>7}  {_counts(scores, key)}")
    if segmentation is not None:
        for title, counts in (
            ("Tokens F1", segmentation.tokens),
            ("Sentences F1", segmentation.sentences),
            ("Words F1", segmentation.words),
        ):
            lines.append(
                f"{title:<{width}}  {_score(counts.f1):>7}  {counts.correct:>9} / "
                f"{counts.gold:<9}  predicted {counts.predicted}  P {_score(counts.precision)}"
                f"  R {_score(counts.recall)}"
            )
    lines.append(f"{'Words':<{width}}  {scores.words:>7}")
    lines.append(f"{'Sentences':<{width}}  {scores.sentences:>7}")
    if verbose and not aligned:  # the breakdowns need the same words
        label_width = max([len("Label"), *(len(label) for label in scores.per_label)])
        lines += [
            "",
            "Per label (full DEPREL; LAS needs the full label):",
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
            "Per sentence length (CoNLL 2018 LAS):",
            f"{'Length':<7}  {'Sentences':>9}  {'Words':>7}  {'UAS':>7}  {'LAS':>7}",
        ]
        for s in scores.per_length:
            lines.append(
                f"{s.bucket:<7}  {s.sentences:>9}  {s.words:>7}  {_score(s.uas):>7}"
                f"  {_score(s.las):>7}"
            )
    return "\n".join(line.rstrip() for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m neuralparse.evaluate",
        description=DESCRIPTION,
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
        help="add per-label (full labels) and per-sentence-length breakdowns and the "
        "labeled non-projective scores (full labels); JSON keys per_label, per_length, "
        "nonproj_labeled_precision, nonproj_labeled_recall, and f1_counts (counts, precision, "
        "recall and F1 of CLAS, MLAS, BLEX, or of every CoNLL 2018 score when the "
        "tokenizations differ)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = evaluate_system_files(args.gold, args.pred)
    except (InputError, OSError) as error:
        return report_error(error)
    scores = result.scores
    if args.json:
        output = scores.to_dict(verbose=args.verbose)
        if result.aligned:  # with the same words the JSON keeps exactly its keys of before
            output["tokenization"] = result.segmentation.to_dict()
        print(json.dumps(output, indent=2))
    else:
        print(
            format_table(
                scores,
                verbose=args.verbose,
                segmentation=result.segmentation,
                aligned=result.aligned,
            )
        )
    return 0


if __name__ == "__main__":
    run_program(main)
