"""Attachment scores and non-projectivity-aware metrics for dependency parses.

Every score is a percentage (0-100, float) of a count of correct items over a count of
eligible items. When nothing is eligible (denominator 0, e.g. no non-projective arc in the
predicted trees) the score is ``None`` in Python and ``null`` in JSON, never 0 and never an
exception: "undefined" and "all wrong" are different facts (Gómez-Rodríguez & Nivre 2013 §5.2
print "–" for the precision of a parser that outputs no non-projective arcs).

Definitions (``n`` = words, i.e. syntactic words with integer CoNLL-U ids):

- ``uas`` / ``las``: words with the correct head / correct head and the full DEPREL
  (``nmod:poss`` vs ``nmod`` is wrong), over all words.
- ``las_universal``: like ``las`` but labels are compared on the universal part before ``:``.
- ``uas_nopunct`` / ``las_nopunct``: CoNLL-X convention (Buchholz & Marsi 2006): words whose
  gold FORM consists entirely of Unicode punctuation (every character's category starts with
  ``P``) are not scored. This uses the FORM, not UPOS, so it also works on files without tags.
- ``exact_unlabeled`` / ``exact_labeled``: sentences whose every word (punctuation included) has
  the correct head / head and full label.
- ``nonproj_precision`` / ``nonproj_recall`` (Gómez-Rodríguez & Nivre 2013 §5.2): an arc
  ``i -> j`` is non-projective iff some word ``k`` strictly between ``i`` and ``j`` is not
  dominated by ``i``. Precision: of the arcs that are non-projective *in the predicted tree*,
  the fraction whose head equals the gold head. Recall: of the arcs non-projective *in the gold
  tree*, the fraction predicted with the correct head (whether or not the prediction is itself
  non-projective; §5.2 footnote 13). These are unlabeled; the paper's labeled LP-NP / LR-NP
  (head and full label correct) are ``nonproj_labeled_precision`` / ``nonproj_labeled_recall``.
  All words count, punctuation included: non-projectivity is a property of the whole tree.
- ``crossed_recall`` / ``uncrossed_recall`` (Pitler & McDonald 2015 Table 7): the scoring
  tokens are partitioned by whether their incoming arc crosses another arc of the *gold* tree
  (root arcs included, §2), and each part gets its UAS. As in the paper, the scoring tokens are
  the CoNLL-X ones (punctuation excluded), so the two parts recombine into ``uas_nopunct``.
  Crossing is decided on the complete gold tree, punctuation arcs included.

:class:`ScoreAccumulator` takes one sentence at a time as plain lists (for the trainer);
:func:`evaluate` and :func:`evaluate_files` compare two parsed files word by word and refuse
files whose sentences or words differ (:class:`~neuralparse.errors.InputError`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuralparse.errors import InputError
from neuralparse.io import Sentence, read_conllu
from neuralparse.trees.core import crossed_arcs, nonprojective_arcs

#: Sentence-length buckets for the per-length breakdown: (low, high), both inclusive;
#: ``None`` means unbounded.
LENGTH_BUCKETS: tuple[tuple[int, int | None], ...] = (
    (1, 10),
    (11, 20),
    (21, 30),
    (31, 40),
    (41, None),
)

#: The metrics of ``--json`` and :meth:`Scores.to_dict`, in output order.
CORE_KEYS: tuple[str, ...] = (
    "uas",
    "las",
    "las_universal",
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


def is_punctuation(form: str) -> bool:
    """CoNLL-X punctuation: a non-empty FORM made only of Unicode punctuation (category P*)."""
    return bool(form) and all(unicodedata.category(char).startswith("P") for char in form)


def universal_label(deprel: str) -> str:
    """The universal part of a UD relation: ``nmod:poss`` -> ``nmod``."""
    return deprel.split(":", 1)[0]


def percent(correct: int, total: int) -> float | None:
    """``100 * correct / total``, or ``None`` when ``total`` is 0 (the score is undefined)."""
    return 100.0 * correct / total if total else None


@dataclass
class Ratio:
    """A count of correct items over a count of eligible items."""

    correct: int = 0
    total: int = 0

    def add(self, is_correct: bool) -> None:
        self.total += 1
        self.correct += int(is_correct)

    @property
    def percent(self) -> float | None:
        return percent(self.correct, self.total)


@dataclass(frozen=True)
class LabelScores:
    """Per gold/predicted label figures for ``--verbose``.

    ``precision`` / ``recall`` compare the label alone (words predicted with this label whose
    gold label is the same, over predicted / gold words with this label); ``las`` is the
    fraction of gold words with this label that got both the correct head and this label.
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
    """Attachment scores of the sentences whose length falls in one bucket."""

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

    ``ratios`` holds the (correct, total) counts behind each percentage, by metric name.
    """

    uas: float | None
    las: float | None
    las_universal: float | None
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
    per_label: Mapping[str, LabelScores] = field(default_factory=dict)
    per_length: tuple[LengthScores, ...] = ()

    def to_dict(self, *, verbose: bool = False) -> dict[str, Any]:
        """The ``--json`` object: exactly :data:`CORE_KEYS`; ``verbose`` adds the labeled
        non-projective scores, ``per_label`` (by label) and ``per_length`` (by bucket)."""
        result: dict[str, Any] = {key: getattr(self, key) for key in CORE_KEYS}
        if verbose:
            result["nonproj_labeled_precision"] = self.nonproj_labeled_precision
            result["nonproj_labeled_recall"] = self.nonproj_labeled_recall
            result["per_label"] = {label: s.to_dict() for label, s in self.per_label.items()}
            result["per_length"] = {s.bucket: s.to_dict() for s in self.per_length}
        return result


def _bucket_name(low: int, high: int | None) -> str:
    return f"{low}+" if high is None else f"{low}-{high}"


def _bucket_index(length: int) -> int:
    for index, (low, high) in enumerate(LENGTH_BUCKETS):
        if length >= low and (high is None or length <= high):
            return index
    raise ValueError(f"no length bucket for a sentence of {length} words")


@dataclass
class _LabelCounts:
    gold: int = 0
    predicted: int = 0
    label_match: int = 0  # gold label == predicted label == this label
    attached: int = 0  # ... and the head is correct too


@dataclass
class _LengthCounts:
    sentences: int = 0
    unlabeled: Ratio = field(default_factory=Ratio)
    labeled: Ratio = field(default_factory=Ratio)


@dataclass
class ScoreAccumulator:
    """Counts for the scores of :class:`Scores`, fed one sentence at a time.

    Usable without files (e.g. by the trainer on batches of predicted trees)::

        acc = ScoreAccumulator()
        for gold, pred in pairs:
            acc.add(gold.heads, gold.deprels, pred_heads, pred_deprels, gold.forms)
        scores = acc.result()
    """

    uas: Ratio = field(default_factory=Ratio)
    las: Ratio = field(default_factory=Ratio)
    las_universal: Ratio = field(default_factory=Ratio)
    uas_nopunct: Ratio = field(default_factory=Ratio)
    las_nopunct: Ratio = field(default_factory=Ratio)
    exact_unlabeled: Ratio = field(default_factory=Ratio)
    exact_labeled: Ratio = field(default_factory=Ratio)
    nonproj_precision: Ratio = field(default_factory=Ratio)
    nonproj_recall: Ratio = field(default_factory=Ratio)
    nonproj_labeled_precision: Ratio = field(default_factory=Ratio)
    nonproj_labeled_recall: Ratio = field(default_factory=Ratio)
    crossed_recall: Ratio = field(default_factory=Ratio)
    uncrossed_recall: Ratio = field(default_factory=Ratio)
    labels: dict[str, _LabelCounts] = field(default_factory=dict)
    lengths: list[_LengthCounts] = field(
        default_factory=lambda: [_LengthCounts() for _ in LENGTH_BUCKETS]
    )

    def add(
        self,
        gold_heads: Sequence[int],
        gold_deprels: Sequence[str],
        pred_heads: Sequence[int],
        pred_deprels: Sequence[str],
        forms: Sequence[str],
    ) -> None:
        """Score one sentence; ``forms`` are the gold forms (they decide punctuation).

        Both trees must be well-formed (the non-projectivity metrics need dominance).
        """
        n = len(gold_heads)
        lengths = {len(gold_deprels), len(pred_heads), len(pred_deprels), len(forms)}
        if lengths != {n}:
            raise ValueError(
                "gold heads/deprels, predicted heads/deprels and forms differ in length: "
                f"{[n, len(gold_deprels), len(pred_heads), len(pred_deprels), len(forms)]}"
            )
        gold_nonproj = nonprojective_arcs(gold_heads)
        pred_nonproj = nonprojective_arcs(pred_heads)
        gold_crossed = crossed_arcs(gold_heads)
        bucket = self.lengths[_bucket_index(n)]  # raises ValueError for an empty sentence
        all_attached = all_labeled = True
        for word in range(1, n + 1):
            gold_label, pred_label = gold_deprels[word - 1], pred_deprels[word - 1]
            head_ok = gold_heads[word - 1] == pred_heads[word - 1]
            label_ok = gold_label == pred_label
            labeled_ok = head_ok and label_ok
            all_attached &= head_ok
            all_labeled &= labeled_ok
            self.uas.add(head_ok)
            self.las.add(labeled_ok)
            self.las_universal.add(
                head_ok and universal_label(gold_label) == universal_label(pred_label)
            )
            if not is_punctuation(forms[word - 1]):
                self.uas_nopunct.add(head_ok)
                self.las_nopunct.add(labeled_ok)
                crossing = self.crossed_recall if word in gold_crossed else self.uncrossed_recall
                crossing.add(head_ok)
            if word in pred_nonproj:
                self.nonproj_precision.add(head_ok)
                self.nonproj_labeled_precision.add(labeled_ok)
            if word in gold_nonproj:
                self.nonproj_recall.add(head_ok)
                self.nonproj_labeled_recall.add(labeled_ok)
            self._add_label(gold_label, pred_label, labeled_ok)
            bucket.unlabeled.add(head_ok)
            bucket.labeled.add(labeled_ok)
        self.exact_unlabeled.add(all_attached)
        self.exact_labeled.add(all_labeled)
        bucket.sentences += 1

    def _add_label(self, gold_label: str, pred_label: str, labeled_ok: bool) -> None:
        gold_counts = self.labels.setdefault(gold_label, _LabelCounts())
        gold_counts.gold += 1
        self.labels.setdefault(pred_label, _LabelCounts()).predicted += 1
        if gold_label == pred_label:
            gold_counts.label_match += 1
            gold_counts.attached += int(labeled_ok)

    def result(self) -> Scores:
        """The percentages of everything added so far."""
        ratios = {
            name: Ratio(ratio.correct, ratio.total)
            for name, ratio in vars(self).items()
            if isinstance(ratio, Ratio)
        }
        per_label = {
            label: LabelScores(
                gold=counts.gold,
                predicted=counts.predicted,
                precision=percent(counts.label_match, counts.predicted),
                recall=percent(counts.label_match, counts.gold),
                las=percent(counts.attached, counts.gold),
            )
            for label, counts in sorted(self.labels.items())
        }
        per_length = tuple(
            LengthScores(
                bucket=_bucket_name(low, high),
                sentences=counts.sentences,
                words=counts.unlabeled.total,
                uas=counts.unlabeled.percent,
                las=counts.labeled.percent,
            )
            for (low, high), counts in zip(LENGTH_BUCKETS, self.lengths, strict=True)
        )
        return Scores(
            uas=self.uas.percent,
            las=self.las.percent,
            las_universal=self.las_universal.percent,
            uas_nopunct=self.uas_nopunct.percent,
            las_nopunct=self.las_nopunct.percent,
            exact_unlabeled=self.exact_unlabeled.percent,
            exact_labeled=self.exact_labeled.percent,
            nonproj_precision=self.nonproj_precision.percent,
            nonproj_recall=self.nonproj_recall.percent,
            crossed_recall=self.crossed_recall.percent,
            uncrossed_recall=self.uncrossed_recall.percent,
            words=self.uas.total,
            sentences=self.exact_unlabeled.total,
            nonproj_labeled_precision=self.nonproj_labeled_precision.percent,
            nonproj_labeled_recall=self.nonproj_labeled_recall.percent,
            ratios=ratios,
            per_label=per_label,
            per_length=per_length,
        )


def _where(sentence: Sentence) -> str:
    parts = [sentence.source or "<input>", f"line {sentence.line}"]
    if sentence.sent_id is not None:
        parts.append(f"sentence {sentence.sent_id}")
    return ", ".join(parts)


def _form_at(forms: Sequence[str], word: int) -> str:
    return repr(forms[word - 1]) if word <= len(forms) else "<missing>"


def check_aligned(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> None:
    """Raise :class:`InputError` unless both sides have the same sentences with the same words.

    The message names the first differing sentence (id, file and line on both sides: the gold
    side through the error's location prefix) and word
    (1-based index and both forms), or the two sentence counts.
    """
    for index, (gold_sentence, pred_sentence) in enumerate(zip(gold, pred, strict=False), 1):
        gold_forms, pred_forms = gold_sentence.forms, pred_sentence.forms
        if gold_forms == pred_forms:
            continue
        word = next(
            (i for i, (g, p) in enumerate(zip(gold_forms, pred_forms, strict=False), 1) if g != p),
            min(len(gold_forms), len(pred_forms)) + 1,
        )
        raise InputError(
            f"sentence {index} differs between gold and prediction at word {word}: "
            f"gold {_form_at(gold_forms, word)} vs predicted {_form_at(pred_forms, word)} "
            f"(gold has {len(gold_forms)} words, prediction has {len(pred_forms)}; "
            f"prediction at {_where(pred_sentence)})",
            source=gold_sentence.source,
            line=gold_sentence.line,
            sent_id=gold_sentence.sent_id,
        )
    if len(gold) != len(pred):
        gold_shorter = len(gold) < len(pred)
        shorter, longer = ("gold", "prediction") if gold_shorter else ("prediction", "gold")
        first_extra = (pred if gold_shorter else gold)[min(len(gold), len(pred))]
        raise InputError(
            f"gold has {len(gold)} sentences but prediction has {len(pred)}: {shorter} ends "
            f"before {longer}'s sentence {min(len(gold), len(pred)) + 1} "
            f"at {_where(first_extra)}",
            source=first_extra.source,
            line=first_extra.line,
            sent_id=first_extra.sent_id,
        )


def evaluate(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> Scores:
    """Score predicted sentences against gold ones (same sentences, same words, same order)."""
    check_aligned(gold, pred)
    accumulator = ScoreAccumulator()
    for gold_sentence, pred_sentence in zip(gold, pred, strict=True):
        accumulator.add(
            gold_sentence.heads,
            gold_sentence.deprels,
            pred_sentence.heads,
            pred_sentence.deprels,
            gold_sentence.forms,
        )
    return accumulator.result()


def evaluate_files(gold_path: str | Path, pred_path: str | Path) -> Scores:
    """Read two CoNLL-U files (both must hold well-formed trees) and :func:`evaluate` them."""
    return evaluate(read_conllu(gold_path), read_conllu(pred_path))
