"""Scoring a system output whose tokenization differs from the gold one: the character alignment
of the CoNLL 2018 shared task (Zeman et al. 2018, "CoNLL 2018 Shared Task: Multilingual Parsing
from Raw Text to Universal Dependencies", §3; https://universaldependencies.org/conll18/
evaluation.html), written here from that definition.

- Both files must hold the same text once whitespace is removed: the concatenation of their
  token FORMs (a multiword token contributes its own FORM, not its words'), without the
  characters of Unicode category Zs. Otherwise there is nothing to align and
  :class:`~neuralparse.errors.InputError` names the first difference.
- Every token, sentence and word gets a character span of that text: a token the span of its
  FORM, a sentence the span from its first to its last token, a word the span of its token (the
  words of a multiword token share it).
- Tokens, Sentences: a gold and a predicted span match when they are equal.
- Words are aligned in text order. A word outside multiword tokens aligns with the word of the
  other side that has the same span. Where either side has a multiword token, the stretch of
  text it covers is widened until both sides have whole words at its ends (a multiword token
  that starts inside it, or a plain word that ends inside it, belongs to it), and the words of
  the two sides inside the stretch are aligned along a longest common subsequence of their
  lower-cased FORMs.
- Every score is a precision / recall / F1: recall over the gold words, precision over the
  predicted words (for CLAS, MLAS and BLEX: the words whose own relation is a content relation),
  and an aligned pair is correct as in :mod:`neuralparse.evaluation.metrics`, where "the same
  head" now means that the predicted head is aligned with the gold head (or both are the root),
  and MLAS compares functional children through the alignment too. Words: the aligned words.

:func:`evaluate_system` scores files with the same words exactly as
:func:`~neuralparse.evaluation.metrics.evaluate` does (accuracies, and every other metric of
:class:`~neuralparse.evaluation.metrics.Scores`) and aligns the others; the scores defined only
for the same words (full labels, no punctuation, exact match, non-projective and crossing arcs,
the breakdowns) are then not reported.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuralparse.errors import InputError
from neuralparse.evaluation.conll18 import (
    CONTENT_DEPRELS,
    FUNCTIONAL_DEPRELS,
    F1Counts,
    lemma_matches,
    universal_features,
    universal_label,
)
from neuralparse.evaluation.metrics import evaluate
from neuralparse.evaluation.scores import CORE_KEYS, TAG_SCORE_COLUMNS, Scores
from neuralparse.io import Sentence, read_conllu
from neuralparse.io.sentence import UNSPECIFIED

#: The CoNLL 2018 scores of an aligned evaluation, in :class:`Scores` field names: those of
#: :data:`~neuralparse.evaluation.scores.CORE_KEYS` up to ``lemmas``, but ``las_full``.
ALIGNED_KEYS: tuple[str, ...] = tuple(
    key for key in CORE_KEYS[: CORE_KEYS.index("lemmas") + 1] if key != "las_full"
)

_MULTIWORD_ID = re.compile(r"([0-9]+)-([0-9]+)")
# Heads as word indices into a whole file; the root, and on the predicted side a head that no
# gold word is aligned with (never equal to a gold head).
_ROOT = -1
_UNALIGNED = -2

Span = tuple[int, int]
"""Characters ``[start, end)`` of the text without whitespace."""


@dataclass(frozen=True)
class Segmentation:
    """How well the system output reproduces the gold tokens, sentences and words: precision,
    recall and F1 of matching tokens and sentences, and of aligned words."""

    tokens: F1Counts
    sentences: F1Counts
    words: F1Counts

    def to_dict(self) -> dict[str, dict[str, int | float | None]]:
        return {
            "tokens": self.tokens.to_dict(),
            "sentences": self.sentences.to_dict(),
            "words": self.words.to_dict(),
        }


@dataclass(frozen=True)
class SystemScores:
    """The scores of a system output and its segmentation.

    ``aligned`` tells whether the words differed, so that ``scores`` are F1 over aligned words
    (their counts, precision and recall are in ``scores.f1_counts``); otherwise ``scores`` are
    those of :func:`~neuralparse.evaluation.metrics.evaluate`.
    """

    scores: Scores
    segmentation: Segmentation
    aligned: bool


@dataclass
class _Side:
    """One file as the alignment sees it; words are numbered through the whole file."""

    sentences: Sequence[Sentence]
    text: str = ""
    token_spans: list[Span] = field(default_factory=list)
    token_sentence: list[int] = field(default_factory=list)  # each token's, for messages
    sentence_spans: list[Span] = field(default_factory=list)
    word_spans: list[Span] = field(default_factory=list)
    multiword: list[bool] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)  # word index of the head, or _ROOT
    relations: list[str] = field(default_factory=list)  # universal part of DEPREL
    upos: list[str] = field(default_factory=list)
    xpos: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)  # universal features
    lemmas: list[str] = field(default_factory=list)
    functional_children: list[list[int]] = field(default_factory=list)


def _where(sentence: Sentence) -> dict[str, Any]:
    return {"source": sentence.source, "line": sentence.line or None, "sent_id": sentence.sent_id}


def _tokens(sentence: Sentence) -> list[tuple[str, int, int]]:
    """``(FORM, first word, last word)`` of every token of ``sentence`` (words 1-based): a
    multiword token with the FORM of its range line, any other word on its own."""
    ranges: dict[int, tuple[int, str]] = {}
    # The range lines are only in the sentence's CoNLL-U block, which it writes back as read.
    for line in sentence.to_conllu().splitlines():
        cells = line.split("\t")
        match = _MULTIWORD_ID.fullmatch(cells[0])
        if match is not None and len(cells) > 1:
            ranges[int(match[1])] = (int(match[2]), cells[1])
    tokens: list[tuple[str, int, int]] = []
    word = 1
    while word <= len(sentence):
        last, form = ranges.get(word, (word, sentence.forms[word - 1]))
        tokens.append((form, word, last))
        word = last + 1
    return tokens


def _without_spaces(form: str) -> str:
    """``form`` without its space characters (Unicode category Zs), as the texts are compared."""
    return "".join(char for char in form if unicodedata.category(char) != "Zs")


def _side(sentences: Sequence[Sentence]) -> _Side:
    side = _Side(sentences)
    pieces: list[str] = []
    offset = 0
    for index, sentence in enumerate(sentences):
        if sentence.heads is None:
            raise InputError("the sentence has no tree (HEAD is _)", **_where(sentence))
        first_word = len(side.forms)
        start = offset
        for form, first, last in _tokens(sentence):
            text = _without_spaces(form)
            if not text:
                raise InputError(
                    f"token {form!r} (words {first}-{last}) is only whitespace, which the "
                    "character alignment cannot place",
                    **_where(sentence),
                )
            span = (offset, offset + len(text))
            offset += len(text)
            pieces.append(text)
            side.token_spans.append(span)
            side.token_sentence.append(index)
            side.word_spans.extend([span] * (last - first + 1))
            side.multiword.extend([last > first] * (last - first + 1))
        side.sentence_spans.append((start, offset))
        side.forms.extend(sentence.forms)
        side.heads.extend(first_word + head - 1 if head else _ROOT for head in sentence.heads)
        side.relations.extend(universal_label(deprel) for deprel in sentence.deprels)
        side.upos.extend(sentence.upos)
        side.xpos.extend(sentence.xpos)
        side.features.extend(universal_features(feats) for feats in sentence.feats)
        side.lemmas.extend(sentence.lemmas)
    side.functional_children.extend([] for _ in side.forms)
    for word, (head, relation) in enumerate(zip(side.heads, side.relations, strict=True)):
        if head != _ROOT and relation in FUNCTIONAL_DEPRELS:
            side.functional_children[head].append(word)
    side.text = "".join(pieces)
    return side


def _position(side: _Side, at: int, label: str) -> str:
    """Where character ``at`` of ``side``'s text is: its token, sentence, file and line."""
    if at >= len(side.text):
        return f"{label} ends there"
    token = bisect.bisect_right([start for start, _ in side.token_spans], at) - 1
    start, end = side.token_spans[token]
    sentence = side.sentences[side.token_sentence[token]]
    where = ", ".join(
        part
        for part in (
            sentence.source,
            f"line {sentence.line}" if sentence.line else None,
            f"sentence {sentence.sent_id}" if sentence.sent_id is not None else None,
        )
        if part
    )
    return f"{label} has {side.text[at : at + 20]!r} in token {side.text[start:end]!r} ({where})"


def _check_same_text(gold: _Side, pred: _Side) -> None:
    if gold.text == pred.text:
        return
    at = next(
        (i for i, (g, p) in enumerate(zip(gold.text, pred.text, strict=False)) if g != p),
        min(len(gold.text), len(pred.text)),
    )
    raise InputError(
        f"gold and prediction have different texts (whitespace aside) from character {at + 1}: "
        f"{_position(gold, at, 'gold')}, {_position(pred, at, 'prediction')}; words can only "
        "be aligned on the same text"
    )


def _lcs_pairs(gold_forms: Sequence[str], pred_forms: Sequence[str]) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of two form lists, case-insensitive; among
    the longest, the one that keeps equal forms paired as early as possible."""
    gold_keys = [form.lower() for form in gold_forms]
    pred_keys = [form.lower() for form in pred_forms]
    # longest[i][j]: length of a longest common subsequence of gold_keys[i:] and pred_keys[j:].
    longest = [[0] * (len(pred_keys) + 1) for _ in range(len(gold_keys) + 1)]
    for i in reversed(range(len(gold_keys))):
        for j in reversed(range(len(pred_keys))):
            if gold_keys[i] == pred_keys[j]:
                longest[i][j] = longest[i + 1][j + 1] + 1
            else:
                longest[i][j] = max(longest[i + 1][j], longest[i][j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < len(gold_keys) and j < len(pred_keys):
        if gold_keys[i] == pred_keys[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif longest[i][j] == longest[i + 1][j]:  # skipping the gold word loses nothing
            i += 1
        else:
            j += 1
    return pairs


def _outside(side: _Side, word: int, end: int) -> bool:
    """Whether ``word`` (and every later one) lies beyond a stretch of text ending at ``end``:
    a multiword token's word when its token starts there or later, a plain word when it ends
    after it."""
    if word >= len(side.forms):
        return True
    start, stop = side.word_spans[word]
    return start >= end if side.multiword[word] else stop > end


def _multiword_stretch(gold: _Side, pred: _Side, g: int, p: int) -> tuple[range, range]:
    """The words of each side in the stretch of text that the multiword token of gold word
    ``g`` or predicted word ``p`` starts (see the module docstring)."""
    if gold.multiword[g]:
        end = gold.word_spans[g][1]
        # A plain word of the other side that starts before the token overlaps it without
        # fitting it: it stays unaligned, outside the stretch.
        if not pred.multiword[p] and pred.word_spans[p][0] < gold.word_spans[g][0]:
            p += 1
    else:
        end = pred.word_spans[p][1]
        if gold.word_spans[g][0] < pred.word_spans[p][0]:  # a plain gold word, as above
            g += 1
    first_g, first_p = g, p
    # Take words in text order (gold first on a tie) until neither side has one left inside;
    # each multiword token taken may extend the stretch to its own end.
    while not (_outside(gold, g, end) and _outside(pred, p, end)):
        take_gold = g < len(gold.forms) and (
            p >= len(pred.forms) or gold.word_spans[g][0] <= pred.word_spans[p][0]
        )
        side, word = (gold, g) if take_gold else (pred, p)
        if side.multiword[word]:
            end = max(end, side.word_spans[word][1])
        if take_gold:
            g += 1
        else:
            p += 1
    return range(first_g, g), range(first_p, p)


def _align_words(gold: _Side, pred: _Side) -> list[tuple[int, int]]:
    """The aligned (gold word, predicted word) pairs, in text order."""
    pairs: list[tuple[int, int]] = []
    g = p = 0
    while g < len(gold.forms) and p < len(pred.forms):
        if gold.multiword[g] or pred.multiword[p]:
            gold_words, pred_words = _multiword_stretch(gold, pred, g, p)
            matched = _lcs_pairs(
                [gold.forms[i] for i in gold_words], [pred.forms[j] for j in pred_words]
            )
            pairs.extend((gold_words[i], pred_words[j]) for i, j in matched)
            g, p = gold_words.stop, pred_words.stop
        elif gold.word_spans[g] == pred.word_spans[p]:
            pairs.append((g, p))
            g, p = g + 1, p + 1
        elif gold.word_spans[g][0] <= pred.word_spans[p][0]:
            g += 1
        else:
            p += 1
    return pairs


def _matching_spans(gold: Iterable[Span], pred: Iterable[Span]) -> int:
    return len(set(gold) & set(pred))


def _annotated_columns(sentences: Iterable[Sentence]) -> set[str]:
    """The tag columns (:class:`~neuralparse.evaluation.conll18.TagColumns` names) that are
    not ``_`` throughout the gold side: only their scores are reported, as with the same words."""
    columns: set[str] = set()
    for sentence in sentences:
        for column, values in (
            ("upos", sentence.upos),
            ("xpos", sentence.xpos),
            ("feats", sentence.feats),
            ("lemmas", sentence.lemmas),
        ):
            if column not in columns and any(value != UNSPECIFIED for value in values):
                columns.add(column)
    return columns


def _aligned_scores(gold: _Side, pred: _Side, pairs: Sequence[tuple[int, int]]) -> Scores:
    gold_of = {p: g for g, p in pairs}

    def gold_head(p: int) -> int:
        head = pred.heads[p]
        return _ROOT if head == _ROOT else gold_of.get(head, _UNALIGNED)

    def children(side: _Side, word: int, as_gold: bool) -> list[tuple[int, str, str, str]]:
        return [
            (child if as_gold else gold_of.get(child, _UNALIGNED), side.relations[child],
             side.upos[child], side.features[child])
            for child in side.functional_children[word]
        ]  # fmt: skip

    correct = dict.fromkeys(ALIGNED_KEYS, 0)
    for g, p in pairs:
        head_ok = gold_head(p) == gold.heads[g]
        labeled_ok = head_ok and gold.relations[g] == pred.relations[p]
        upos_ok = gold.upos[g] == pred.upos[p]
        xpos_ok = gold.xpos[g] == pred.xpos[p]
        features_ok = gold.features[g] == pred.features[p]
        lemma_ok = lemma_matches(gold.lemmas[g], pred.lemmas[p])
        correct["uas"] += head_ok
        correct["las"] += labeled_ok
        correct["upos"] += upos_ok
        correct["xpos"] += xpos_ok
        correct["ufeats"] += features_ok
        correct["alltags"] += upos_ok and xpos_ok and features_ok
        correct["lemmas"] += lemma_ok
        if labeled_ok and gold.relations[g] in CONTENT_DEPRELS:
            correct["clas"] += 1
            correct["blex"] += lemma_ok
            correct["mlas"] += (
                upos_ok
                and features_ok
                and children(gold, g, as_gold=True) == children(pred, p, as_gold=False)
            )

    def content(side: _Side) -> int:
        return sum(relation in CONTENT_DEPRELS for relation in side.relations)

    annotated = _annotated_columns(gold.sentences)
    f1_counts = {}
    for key in ALIGNED_KEYS:
        if not set(TAG_SCORE_COLUMNS.get(key, ())) <= annotated:
            continue
        if key in ("clas", "mlas", "blex"):
            f1_counts[key] = F1Counts(correct[key], content(gold), content(pred))
        else:
            f1_counts[key] = F1Counts(correct[key], len(gold.forms), len(pred.forms))

    return Scores.from_values(
        {key: counts.f1 for key, counts in f1_counts.items()},
        words=len(gold.forms),
        sentences=len(gold.sentences),
        f1_counts=f1_counts,
    )


def score_by_alignment(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> SystemScores:
    """Align the words of ``pred`` with those of ``gold`` by characters and score them (the
    module docstring has the definitions), whatever the two tokenizations are."""
    gold_side, pred_side = _side(gold), _side(pred)
    _check_same_text(gold_side, pred_side)
    pairs = _align_words(gold_side, pred_side)
    segmentation = Segmentation(
        tokens=F1Counts(
            _matching_spans(gold_side.token_spans, pred_side.token_spans),
            len(gold_side.token_spans),
            len(pred_side.token_spans),
        ),
        sentences=F1Counts(
            _matching_spans(gold_side.sentence_spans, pred_side.sentence_spans),
            len(gold_side.sentence_spans),
            len(pred_side.sentence_spans),
        ),
        words=F1Counts(len(pairs), len(gold_side.forms), len(pred_side.forms)),
    )
    return SystemScores(_aligned_scores(gold_side, pred_side, pairs), segmentation, aligned=True)


def _same_words(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> bool:
    return len(gold) == len(pred) and all(
        g.forms == p.forms for g, p in zip(gold, pred, strict=True)
    )


def _same_words_segmentation(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> Segmentation:
    """Sentences and words all match; tokens match where they cover the same words (the two
    sides may still group words into multiword tokens differently)."""
    words = sum(len(sentence) for sentence in gold)
    gold_tokens = pred_tokens = matching = 0
    for gold_sentence, pred_sentence in zip(gold, pred, strict=True):
        gold_ranges = {(first, last) for _, first, last in _tokens(gold_sentence)}
        pred_ranges = {(first, last) for _, first, last in _tokens(pred_sentence)}
        gold_tokens += len(gold_ranges)
        pred_tokens += len(pred_ranges)
        matching += len(gold_ranges & pred_ranges)
    return Segmentation(
        tokens=F1Counts(matching, gold_tokens, pred_tokens),
        sentences=F1Counts(len(gold), len(gold), len(pred)),
        words=F1Counts(words, words, words),
    )


def evaluate_system(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> SystemScores:
    """Score a system output against gold sentences, whatever its tokenization: with the same
    sentences and words as :func:`~neuralparse.evaluation.metrics.evaluate` does, otherwise by
    character alignment (:func:`score_by_alignment`)."""
    if _same_words(gold, pred):
        return SystemScores(
            evaluate(gold, pred), _same_words_segmentation(gold, pred), aligned=False
        )
    return score_by_alignment(gold, pred)


def evaluate_system_files(gold_path: str | Path, pred_path: str | Path) -> SystemScores:
    """Read two CoNLL-U files (both must hold well-formed trees) and :func:`evaluate_system`
    them."""
    return evaluate_system(read_conllu(gold_path), read_conllu(pred_path))
