"""Attachment scores, the CoNLL 2018 shared task metrics, and non-projectivity-aware metrics
for dependency parses.

Every score is a percentage (0-100, float) of a count of correct items over a count of
eligible items. When nothing is eligible (denominator 0, e.g. no non-projective arc in the
predicted trees) the score is ``None`` in Python and ``null`` in JSON, never 0 and never an
exception: "undefined" and "all wrong" are different facts (Gómez-Rodríguez & Nivre 2013 §5.2
print "–" for the precision of a parser that outputs no non-projective arcs).

Definitions (``n`` = words, i.e. syntactic words with integer CoNLL-U ids). The first group
follows the CoNLL 2018 shared task (Zeman et al. 2018, "CoNLL 2018 Shared Task: Multilingual
Parsing from Raw Text to Universal Dependencies"; the official scorer ``conll18_ud_eval.py``,
https://universaldependencies.org/conll18/evaluation.html) for files with the same words (gold
tokenization), where the scorer's word alignment is the identity; the constants and comparisons
it fixes are in :mod:`neuralparse.evaluation.conll18`:

- ``uas``: words with the correct head, over all words (punctuation included).
- ``las``: words with the correct head and the correct *universal part* of DEPREL (the part
  before ``:``, so ``nmod:poss`` vs ``nmod`` is right), over all words.
- ``clas`` / ``mlas`` / ``blex``: F1 over content words, i.e. words whose universal relation is
  one of :data:`~neuralparse.evaluation.conll18.CONTENT_DEPRELS` (not ``aux case cc clf cop det
  mark punct``). Recall counts the gold content words, precision the words whose *predicted*
  relation is a content relation, so even with gold tokenization F1 = ``2 * correct / (gold +
  predicted)`` is not an accuracy. A gold content word is correct for ``clas`` when its head
  and universal relation are correct; for ``mlas`` when moreover its UPOS and universal
  features are correct and its functional children (relations ``aux case cc clf cop det
  mark``) are the same words on both sides, each with the same universal relation, UPOS and
  universal features; for ``blex`` when head, universal relation and LEMMA are correct.
- ``upos`` / ``xpos``: words whose UPOS / XPOS string is correct. ``ufeats``: words whose FEATS
  restricted to the universal features is correct (``Number=Sing|Typo=Yes`` equals
  ``Number=Sing``; order is ignored). ``alltags``: UPOS, XPOS and universal FEATS all correct.
  ``lemmas``: words whose LEMMA is correct, where a gold LEMMA ``_`` accepts any prediction (as
  the scorer does).
- A tag score is only reported (otherwise ``None``) when both sides supplied that column for
  every sentence and the gold column is not ``_`` throughout; ``alltags`` needs UPOS, XPOS and
  FEATS, ``mlas`` UPOS and FEATS, ``lemmas`` and ``blex`` LEMMA.

The other scores:

- ``las_full``: like ``las`` but on the full DEPREL (``nmod:poss`` vs ``nmod`` is wrong); this
  was ``las`` before the CoNLL 2018 definition was adopted.
- ``uas_nopunct`` / ``las_nopunct``: CoNLL-X convention (Buchholz & Marsi 2006): words whose
  gold FORM consists entirely of Unicode punctuation (every character's category starts with
  ``P``) are not scored. This uses the FORM, not UPOS, so it also works on files without tags.
  ``las_nopunct`` compares full labels, as CoNLL-X did.
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
- Breakdowns: ``per_label`` is keyed by the full gold/predicted label and its ``las`` needs the
  full label; ``per_length`` gives ``uas`` and ``las`` (CoNLL 2018, as above) by sentence length.

:class:`ScoreAccumulator` takes one sentence at a time as plain lists (for the trainer);
:func:`evaluate` and :func:`evaluate_files` compare two parsed files word by word and refuse
files whose sentences or words differ (:class:`~neuralparse.errors.InputError`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from operator import eq
from pathlib import Path

from neuralparse.errors import InputError
from neuralparse.evaluation.conll18 import (
    CONTENT_DEPRELS,
    F1Counts,
    TagColumns,
    functional_children,
    lemma_matches,
    universal_features,
    universal_label,
)
from neuralparse.evaluation.scores import (
    CORE_KEYS,
    F1_KEYS,
    SCORE_KEYS,
    TAG_SCORE_COLUMNS,
    LabelScores,
    LengthScores,
    Ratio,
    Scores,
    percent,
    predicted_tag_scores_only,
)
from neuralparse.io import Sentence, read_conllu
from neuralparse.io.sentence import UNSPECIFIED
from neuralparse.trees.core import crossed_arcs, is_projective, nonprojective_arcs

__all__ = [
    "CORE_KEYS",
    "F1_KEYS",
    "LENGTH_BUCKETS",
    "SCORE_KEYS",
    "TAG_SCORE_COLUMNS",
    "LabelScores",
    "LengthScores",
    "Ratio",
    "ScoreAccumulator",
    "Scores",
    "check_aligned",
    "evaluate",
    "evaluate_files",
    "is_punctuation",
    "percent",
    "predicted_tag_scores_only",
    "tag_columns",
]

#: Sentence-length buckets for the per-length breakdown: (low, high), both inclusive;
#: ``None`` means unbounded.
LENGTH_BUCKETS: tuple[tuple[int, int | None], ...] = (
    (1, 10),
    (11, 20),
    (21, 30),
    (31, 40),
    (41, None),
)


@lru_cache(maxsize=1 << 16)
def is_punctuation(form: str) -> bool:
    """CoNLL-X punctuation: a non-empty FORM made only of Unicode punctuation (category P*).
    Memoised: evaluation asks for every word, and forms repeat."""
    return bool(form) and all(unicodedata.category(char).startswith("P") for char in form)


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


@dataclass(frozen=True)
class _Side:
    """One side's tree and tag columns, normalized as the CoNLL 2018 scorer compares them:
    universal relations and universal features."""

    heads: Sequence[int]
    relations: list[str]
    tags: TagColumns | None
    features: list[str]  # empty without tags

    @classmethod
    def of(cls, heads: Sequence[int], deprels: Sequence[str], tags: TagColumns | None) -> _Side:
        relations = [universal_label(deprel) for deprel in deprels]
        features = [] if tags is None else [universal_features(f) for f in tags.feats]
        return cls(heads, relations, tags, features)


def _morphology_matches(gold: _Side, pred: _Side) -> list[bool] | None:
    """Per word, what MLAS checks beyond CLAS: UPOS, universal features and the functional
    children all equal on both sides; ``None`` when a side has no tag columns."""
    if gold.tags is None or pred.tags is None:
        return None
    gold_children = functional_children(gold.heads, gold.relations, gold.tags.upos, gold.features)
    pred_children = functional_children(pred.heads, pred.relations, pred.tags.upos, pred.features)
    return [
        gold.tags.upos[i] == pred.tags.upos[i]
        and gold.features[i] == pred.features[i]
        and gold_children[i] == pred_children[i]
        for i in range(len(gold.heads))
    ]


def _lemma_matches(gold: _Side, pred: _Side) -> list[bool] | None:
    """Per word, whether the LEMMA counts as correct; ``None`` when a side has no lemmas."""
    if gold.tags is None or pred.tags is None:
        return None
    gold_lemmas, pred_lemmas = gold.tags.lemmas, pred.tags.lemmas
    if gold_lemmas is None or pred_lemmas is None:
        return None
    return [lemma_matches(g, p) for g, p in zip(gold_lemmas, pred_lemmas, strict=True)]


@dataclass
class ScoreAccumulator:
    """Counts for the scores of :class:`Scores`, fed one sentence at a time.

    Usable without files (e.g. by the trainer on batches of predicted trees)::

        acc = ScoreAccumulator()
        for gold, pred in pairs:
            acc.add(gold.heads, gold.deprels, pred_heads, pred_deprels, gold.forms)
        scores = acc.result()

    The tag scores, MLAS and BLEX also need the keyword arguments ``gold_tags`` and
    ``pred_tags``; a column that either side did not supply for some sentence, or that is ``_``
    throughout the gold side, leaves the scores that need it unreported
    (:data:`TAG_SCORE_COLUMNS`).
    """

    uas: Ratio = field(default_factory=Ratio)
    las: Ratio = field(default_factory=Ratio)
    las_full: Ratio = field(default_factory=Ratio)
    upos: Ratio = field(default_factory=Ratio)
    xpos: Ratio = field(default_factory=Ratio)
    ufeats: Ratio = field(default_factory=Ratio)
    alltags: Ratio = field(default_factory=Ratio)
    lemmas: Ratio = field(default_factory=Ratio)
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
    clas: F1Counts = field(default_factory=F1Counts)
    mlas: F1Counts = field(default_factory=F1Counts)
    blex: F1Counts = field(default_factory=F1Counts)
    labels: dict[str, _LabelCounts] = field(default_factory=dict)
    lengths: list[_LengthCounts] = field(
        default_factory=lambda: [_LengthCounts() for _ in LENGTH_BUCKETS]
    )
    #: :class:`TagColumns` fields with a gold value other than ``_`` in some sentence.
    annotated_columns: set[str] = field(default_factory=set)
    #: :class:`TagColumns` fields that the gold or predicted side lacked for some sentence.
    missing_columns: set[str] = field(default_factory=set)

    def add(
        self,
        gold_heads: Sequence[int],
        gold_deprels: Sequence[str],
        pred_heads: Sequence[int],
        pred_deprels: Sequence[str],
        forms: Sequence[str],
        *,
        gold_tags: TagColumns | None = None,
        pred_tags: TagColumns | None = None,
    ) -> None:
        """Score one sentence; ``forms`` are the gold forms (they decide punctuation).

        Both trees must be well-formed (the non-projectivity metrics need dominance).
        ``gold_tags`` / ``pred_tags`` are the tag columns of each side, for the tag scores,
        MLAS and BLEX.
        """
        n = len(gold_heads)
        lengths = [n, len(gold_deprels), len(pred_heads), len(pred_deprels), len(forms)]
        lengths += [len(tags) for tags in (gold_tags, pred_tags) if tags is not None]
        if set(lengths) != {n}:
            raise ValueError(
                "gold heads/deprels, predicted heads/deprels, forms and tag columns differ in "
                f"length: {lengths}"
            )
        bucket = self.lengths[_bucket_index(n)]  # raises ValueError for an empty sentence
        gold = _Side.of(gold_heads, gold_deprels, gold_tags)
        pred = _Side.of(pred_heads, pred_deprels, pred_tags)
        # Per word (index 0 = word 1): the head right; head and full label right; head and
        # universal relation right (the CoNLL 2018 LAS).
        head_ok = list(map(eq, gold_heads, pred_heads))
        labeled_ok = [
            h and g == p for h, g, p in zip(head_ok, gold_deprels, pred_deprels, strict=True)
        ]
        attached = [
            h and g == p for h, g, p in zip(head_ok, gold.relations, pred.relations, strict=True)
        ]
        heads_right, labeled_right, attached_right = sum(head_ok), sum(labeled_ok), sum(attached)
        self.uas.add(heads_right, n)
        self.las.add(attached_right, n)
        self.las_full.add(labeled_right, n)
        bucket.unlabeled.add(heads_right, n)
        bucket.labeled.add(attached_right, n)
        bucket.sentences += 1
        self.exact_unlabeled.add(int(heads_right == n), 1)
        self.exact_labeled.add(int(labeled_right == n), 1)
        # Most trees are projective: then no arc crosses another (root arcs included) and
        # none is non-projective, and neither needs working out.
        gold_projective = is_projective(gold_heads)
        self._add_scoring_tokens(gold_heads, gold_projective, forms, head_ok, labeled_ok)
        self._add_nonprojective(gold_heads, gold_projective, pred_heads, head_ok, labeled_ok)
        self._add_labels(gold_deprels, pred_deprels, labeled_ok)
        self._note_columns(gold_tags, pred_tags)
        lemmas_ok = _lemma_matches(gold, pred)
        self._add_tags(gold, pred, lemmas_ok)
        self._add_content_words(gold, pred, attached, lemmas_ok)

    def _add_scoring_tokens(
        self,
        gold_heads: Sequence[int],
        gold_projective: bool,
        forms: Sequence[str],
        head_ok: list[bool],
        labeled_ok: list[bool],
    ) -> None:
        """The CoNLL-X scores (punctuation left out) and their split by whether the gold arc
        crosses another one."""
        scored = [i for i, form in enumerate(forms) if not is_punctuation(form)]
        self.uas_nopunct.add(sum(head_ok[i] for i in scored), len(scored))
        self.las_nopunct.add(sum(labeled_ok[i] for i in scored), len(scored))
        crossed = set() if gold_projective else crossed_arcs(gold_heads)
        in_crossed = [i for i in scored if i + 1 in crossed]
        crossed_right = sum(head_ok[i] for i in in_crossed)
        self.crossed_recall.add(crossed_right, len(in_crossed))
        self.uncrossed_recall.add(
            sum(head_ok[i] for i in scored) - crossed_right, len(scored) - len(in_crossed)
        )

    def _add_nonprojective(
        self,
        gold_heads: Sequence[int],
        gold_projective: bool,
        pred_heads: Sequence[int],
        head_ok: list[bool],
        labeled_ok: list[bool],
    ) -> None:
        """Precision over the predicted tree's non-projective arcs, recall over the gold
        tree's, unlabeled and labeled."""
        for heads, projective, unlabeled, labeled in (
            (
                pred_heads,
                is_projective(pred_heads),
                self.nonproj_precision,
                self.nonproj_labeled_precision,
            ),
            (gold_heads, gold_projective, self.nonproj_recall, self.nonproj_labeled_recall),
        ):
            words = [] if projective else sorted(nonprojective_arcs(heads))
            unlabeled.add(sum(head_ok[word - 1] for word in words), len(words))
            labeled.add(sum(labeled_ok[word - 1] for word in words), len(words))

    def _note_columns(self, gold_tags: TagColumns | None, pred_tags: TagColumns | None) -> None:
        """Record which tag columns this sentence supplied and which the gold side annotates."""
        for column in ("upos", "xpos", "feats", "lemmas"):
            gold_values = None if gold_tags is None else getattr(gold_tags, column)
            pred_values = None if pred_tags is None else getattr(pred_tags, column)
            if gold_values is None or pred_values is None:
                self.missing_columns.add(column)
            elif any(value != UNSPECIFIED for value in gold_values):
                self.annotated_columns.add(column)

    def _add_tags(self, gold: _Side, pred: _Side, lemmas_ok: list[bool] | None) -> None:
        """UPOS, XPOS, UFeats and AllTags of every word when both sides have tags; Lemmas
        when both have lemmas."""
        if gold.tags is not None and pred.tags is not None:
            n = len(gold.heads)
            upos_ok = list(map(eq, gold.tags.upos, pred.tags.upos))
            xpos_ok = list(map(eq, gold.tags.xpos, pred.tags.xpos))
            ufeats_ok = list(map(eq, gold.features, pred.features))
            self.upos.add(sum(upos_ok), n)
            self.xpos.add(sum(xpos_ok), n)
            self.ufeats.add(sum(ufeats_ok), n)
            self.alltags.add(sum(map(all, zip(upos_ok, xpos_ok, ufeats_ok, strict=True))), n)
        if lemmas_ok is not None:
            self.lemmas.add(sum(lemmas_ok), len(lemmas_ok))

    def _add_content_words(
        self, gold: _Side, pred: _Side, attached: list[bool], lemmas_ok: list[bool] | None
    ) -> None:
        """CLAS of every word; MLAS when both sides have tags, BLEX when both have lemmas."""
        in_gold = [relation in CONTENT_DEPRELS for relation in gold.relations]
        in_pred = sum(relation in CONTENT_DEPRELS for relation in pred.relations)
        clas_ok = [g and a for g, a in zip(in_gold, attached, strict=True)]
        self.clas.add(sum(clas_ok), sum(in_gold), in_pred)
        morphology_ok = _morphology_matches(gold, pred)
        if morphology_ok is not None:
            self.mlas.add(
                sum(map(all, zip(clas_ok, morphology_ok, strict=True))), sum(in_gold), in_pred
            )
        if lemmas_ok is not None:
            self.blex.add(
                sum(map(all, zip(clas_ok, lemmas_ok, strict=True))), sum(in_gold), in_pred
            )

    def _add_labels(
        self, gold_deprels: Sequence[str], pred_deprels: Sequence[str], labeled_ok: list[bool]
    ) -> None:
        """The per-label counts of ``--verbose`` (full labels)."""
        labels = self.labels
        for gold_label, pred_label, ok in zip(gold_deprels, pred_deprels, labeled_ok, strict=True):
            gold_counts = labels.get(gold_label) or labels.setdefault(gold_label, _LabelCounts())
            gold_counts.gold += 1
            if gold_label == pred_label:
                gold_counts.predicted += 1
                gold_counts.label_match += 1
                gold_counts.attached += ok
            else:
                pred_counts = labels.get(pred_label) or labels.setdefault(
                    pred_label, _LabelCounts()
                )
                pred_counts.predicted += 1

    def reported(self, key: str) -> bool:
        """Whether the score ``key`` is reported: always, except for a score that needs a tag
        column which is missing on a side or ``_`` throughout the gold side."""
        return all(
            column in self.annotated_columns and column not in self.missing_columns
            for column in TAG_SCORE_COLUMNS.get(key, ())
        )

    def result(self) -> Scores:
        """The percentages of everything added so far."""
        ratios = {
            name: Ratio(ratio.correct, ratio.total)
            for name, ratio in vars(self).items()
            if isinstance(ratio, Ratio) and self.reported(name)
        }
        f1_counts = {name: replace(getattr(self, name)) for name in F1_KEYS if self.reported(name)}
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
        values = {name: ratio.percent for name, ratio in ratios.items()}
        values.update((name, counts.f1) for name, counts in f1_counts.items())
        return Scores.from_values(
            values,
            words=self.uas.total,
            sentences=self.exact_unlabeled.total,
            ratios=ratios,
            f1_counts=f1_counts,
            per_label=per_label,
            per_length=per_length,
        )


def _where(sentence: Sentence) -> str:
    parts = [sentence.source or "<input>", f"line {sentence.line}"]
    if sentence.sent_id is not None:
        parts.append(f"sentence {sentence.sent_id}")
    return ", ".join(parts)


def _error_at(message: str, sentence: Sentence) -> InputError:
    """An :class:`InputError` located at ``sentence``: its file, line and id."""
    return InputError(message, source=sentence.source, line=sentence.line, sent_id=sentence.sent_id)


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
        raise _error_at(
            f"sentence {index} differs between gold and prediction at word {word}: "
            f"gold {_form_at(gold_forms, word)} vs predicted {_form_at(pred_forms, word)} "
            f"(gold has {len(gold_forms)} words, prediction has {len(pred_forms)}; "
            f"prediction at {_where(pred_sentence)})",
            gold_sentence,
        )
    if len(gold) != len(pred):
        gold_shorter = len(gold) < len(pred)
        shorter, longer = ("gold", "prediction") if gold_shorter else ("prediction", "gold")
        first_extra = (pred if gold_shorter else gold)[min(len(gold), len(pred))]
        raise _error_at(
            f"gold has {len(gold)} sentences but prediction has {len(pred)}: {shorter} ends "
            f"before {longer}'s sentence {min(len(gold), len(pred)) + 1} "
            f"at {_where(first_extra)}",
            first_extra,
        )


def tag_columns(sentence: Sentence) -> TagColumns:
    """The UPOS, XPOS, FEATS and LEMMA columns of a sentence."""
    return TagColumns(sentence.upos, sentence.xpos, sentence.feats, sentence.lemmas)


def evaluate(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> Scores:
    """Score predicted sentences against gold ones (same sentences, same words, same order),
    tag columns included."""
    check_aligned(gold, pred)
    accumulator = ScoreAccumulator()
    for gold_sentence, pred_sentence in zip(gold, pred, strict=True):
        accumulator.add(
            gold_sentence.heads,
            gold_sentence.deprels,
            pred_sentence.heads,
            pred_sentence.deprels,
            gold_sentence.forms,
            gold_tags=tag_columns(gold_sentence),
            pred_tags=tag_columns(pred_sentence),
        )
    return accumulator.result()


def evaluate_files(gold_path: str | Path, pred_path: str | Path) -> Scores:
    """Read two CoNLL-U files (both must hold well-formed trees) and :func:`evaluate` them."""
    return evaluate(read_conllu(gold_path), read_conllu(pred_path))
