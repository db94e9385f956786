"""What an evaluation gives: :class:`Scores` (percentages, ``None`` where undefined, with the
counts behind them and the ``--verbose`` breakdowns), the keys of its JSON form, and which
scores need which tag columns.  The definitions of the scores are in
:mod:`neuralparse.evaluation.metrics`, which counts them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from neuralparse.evaluation.conll18 import F1Counts

#: The metrics of ``--json`` and :meth:`Scores.to_dict`, in output order.
CORE_KEYS: tuple[str, ...] = (
    "uas",
    "las",
    "las_full",
    "clas",
    "mlas",
    "blex",
    "upos",
    "xpos",
    "ufeats",
    "alltags",
    "lemmas",
    "uas_nopunct",
    "las_nopunct",
    "exact_unlabeled",
    "exact_labeled",
    "nonproj_precision",
    "nonproj_recall",
    "crossed_recall",
    "uncrossed_recall",
    "words",
    "sentences",
)

#: The scores that need tag columns, and the :class:`TagColumns` fields each one needs.
TAG_SCORE_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "upos": ("upos",),
    "xpos": ("xpos",),
    "ufeats": ("feats",),
    "alltags": ("upos", "xpos", "feats"),
    "lemmas": ("lemmas",),
    "mlas": ("upos", "feats"),
    "blex": ("lemmas",),
}

#: The CoNLL 2018 content-word scores, reported as F1 (see :class:`F1Counts`).
F1_KEYS: tuple[str, ...] = ("clas", "mlas", "blex")


def predicted_tag_scores_only(scores: dict[str, Any], predicted: Iterable[str]) -> dict[str, Any]:
    """``scores`` (a :meth:`Scores.to_dict`) with every score that depends on a tag column
    (:data:`TAG_SCORE_COLUMNS`) set to ``None`` unless all its columns are among
    ``predicted``: a column the system copied from its input would score its tagger as
    perfect."""
    have = set(predicted)
    return {
        key: None if key in TAG_SCORE_COLUMNS and not set(TAG_SCORE_COLUMNS[key]) <= have else value
        for key, value in scores.items()
    }


def percent(correct: int, total: int) -> float | None:
    """``100 * correct / total``, or ``None`` when ``total`` is 0 (the score is undefined)."""
    return 100.0 * correct / total if total else None


@dataclass
class Ratio:
    """A count of correct items over a count of eligible items."""

    correct: int = 0
    total: int = 0

    def add(self, correct: int, total: int) -> None:
        """Count ``total`` more eligible items, ``correct`` of them correct."""
        self.correct += correct
        self.total += total

    @property
    def percent(self) -> float | None:
        return percent(self.correct, self.total)


@dataclass(frozen=True)
class LabelScores:
    """Per gold/predicted label figures for ``--verbose``.

    Labels are full DEPRELs (``nmod:poss`` and ``nmod`` are separate rows). ``precision`` /
    ``recall`` compare the label alone (words predicted with this label whose gold label is the
    same, over predicted / gold words with this label); ``las`` is the fraction of gold words
    with this label that got both the correct head and this full label.
    """

    gold: int
    predicted: int
    precision: float | None
    recall: float | None
    las: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "gold": self.gold,
            "predicted": self.predicted,
            "precision": self.precision,
            "recall": self.recall,
            "las": self.las,
        }


@dataclass(frozen=True)
class LengthScores:
    """Attachment scores of the sentences whose length falls in one bucket; ``las`` is the
    CoNLL 2018 LAS (universal part of DEPREL), so the buckets recombine into ``las``."""

    bucket: str
    sentences: int
    words: int
    uas: float | None
    las: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"sentences": self.sentences, "words": self.words, "uas": self.uas, "las": self.las}


@dataclass(frozen=True)
class Scores:
    """Result of an evaluation; see the module docstring for every definition.

    ``ratios`` holds the (correct, total) counts behind each reported percentage except the
    content-word F1 scores, whose counts are in ``f1_counts``; neither holds a tag score that
    is not reported (``None`` because a column is missing).
    """

    uas: float | None
    las: float | None
    las_full: float | None
    clas: float | None
    mlas: float | None
    blex: float | None
    upos: float | None
    xpos: float | None
    ufeats: float | None
    alltags: float | None
    lemmas: float | None
    uas_nopunct: float | None
    las_nopunct: float | None
    exact_unlabeled: float | None
    exact_labeled: float | None
    nonproj_precision: float | None
    nonproj_recall: float | None
    crossed_recall: float | None
    uncrossed_recall: float | None
    words: int
    sentences: int
    nonproj_labeled_precision: float | None
    nonproj_labeled_recall: float | None
    ratios: Mapping[str, Ratio] = field(default_factory=dict)
    f1_counts: Mapping[str, F1Counts] = field(default_factory=dict)
    per_label: Mapping[str, LabelScores] = field(default_factory=dict)
    per_length: tuple[LengthScores, ...] = ()

    def to_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        """The ``--json`` object: exactly :data:`CORE_KEYS`; ``verbose`` adds the labeled
        non-projective scores, ``f1_counts`` (counts, precision, recall and F1 of each reported
        content-word score), ``per_label`` (by label) and ``per_length`` (by bucket)."""
        result: dict[str, Any] = {key: getattr(self, key) for key in CORE_KEYS}
        if verbose:
            result["nonproj_labeled_precision"] = self.nonproj_labeled_precision
            result["nonproj_labeled_recall"] = self.nonproj_labeled_recall
            result["f1_counts"] = {key: counts.to_dict() for key, counts in self.f1_counts.items()}
            result["per_label"] = {label: s.to_dict() for label, s in self.per_label.items()}
            result["per_length"] = {s.bucket: s.to_dict() for s in self.per_length}
        return result

    @classmethod
    def from_values(
        cls, values: Mapping[str, float | None], *, words: int, sentences: int, **details: Any
    ) -> Scores:
        """The scores ``values`` (by :data:`SCORE_KEYS` name), ``None`` for every other score;
        ``details`` are the ``ratios``, ``f1_counts``, ``per_label`` and ``per_length``."""
        unknown = sorted(set(values) - set(SCORE_KEYS))
        if unknown:
            raise ValueError(f"not scores: {unknown}")
        scores = {key: values.get(key) for key in SCORE_KEYS}
        return cls(**scores, words=words, sentences=sentences, **details)


#: Every score of :class:`Scores`: :data:`CORE_KEYS` but the two counts, and the labeled
#: non-projective scores of ``--verbose``.
SCORE_KEYS: tuple[str, ...] = (
    *(key for key in CORE_KEYS if key not in ("words", "sentences")),
    "nonproj_labeled_precision",
    "nonproj_labeled_recall",
)
