"""Evaluation of predicted dependency trees: attachment scores, the CoNLL 2018 shared task
metrics (Zeman et al. 2018: LAS on universal relations, CLAS, MLAS, BLEX, UPOS, XPOS, UFeats,
AllTags, Lemmas), exact match, and the non-projectivity metrics of Gómez-Rodríguez & Nivre
(2013 §5.2) and Pitler & McDonald (2015 Table 7). See :mod:`neuralparse.evaluation.metrics` for
the definitions and :mod:`neuralparse.evaluation.conll18` for what the official CoNLL 2018
scorer fixes; the CLI is ``python -m neuralparse.evaluate``."""

from neuralparse.evaluation.conll18 import (
    CONTENT_DEPRELS,
    FUNCTIONAL_DEPRELS,
    UNIVERSAL_FEATURES,
    F1Counts,
    TagColumns,
    universal_features,
    universal_label,
)
from neuralparse.evaluation.metrics import (
    CORE_KEYS,
    F1_KEYS,
    TAG_SCORE_COLUMNS,
    LabelScores,
    LengthScores,
    Ratio,
    ScoreAccumulator,
    Scores,
    check_aligned,
    evaluate,
    evaluate_files,
    is_punctuation,
    predicted_tag_scores_only,
    tag_columns,
)

__all__ = [
    "CONTENT_DEPRELS",
    "CORE_KEYS",
    "F1_KEYS",
    "FUNCTIONAL_DEPRELS",
    "TAG_SCORE_COLUMNS",
    "UNIVERSAL_FEATURES",
    "F1Counts",
    "LabelScores",
    "LengthScores",
    "Ratio",
    "ScoreAccumulator",
    "Scores",
    "TagColumns",
    "check_aligned",
    "evaluate",
    "evaluate_files",
    "is_punctuation",
    "predicted_tag_scores_only",
    "tag_columns",
    "universal_features",
    "universal_label",
]
