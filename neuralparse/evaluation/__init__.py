"""Evaluation of predicted dependency trees: attachment scores, exact match, and the
non-projectivity metrics of Gómez-Rodríguez & Nivre (2013 §5.2) and Pitler & McDonald (2015
Table 7). See :mod:`neuralparse.evaluation.metrics` for the definitions; the CLI is
``python -m neuralparse.evaluate``."""

from neuralparse.evaluation.metrics import (
    CORE_KEYS,
    LabelScores,
    LengthScores,
    Ratio,
    ScoreAccumulator,
    Scores,
    check_aligned,
    evaluate,
    evaluate_files,
    is_punctuation,
    universal_label,
)

__all__ = [
    "CORE_KEYS",
    "LabelScores",
    "LengthScores",
    "Ratio",
    "ScoreAccumulator",
    "Scores",
    "check_aligned",
    "evaluate",
    "evaluate_files",
    "is_punctuation",
    "universal_label",
]
