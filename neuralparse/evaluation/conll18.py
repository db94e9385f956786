"""Definitions of the CoNLL 2018 shared task metrics (Zeman et al. 2018, "CoNLL 2018 Shared
Task: Multilingual Parsing from Raw Text to Universal Dependencies", §3; the official scorer
``conll18_ud_eval.py`` by Milan Straka and Martin Popel, described at
https://universaldependencies.org/conll18/evaluation.html).

This module holds the pieces that the official scorer fixes and that
:class:`~neuralparse.evaluation.metrics.ScoreAccumulator` applies word by word: the content and
functional relations, the universal features, how FEATS and LEMMA are compared, the functional
children that MLAS checks, and the precision/recall/F1 counts of the content-word metrics.
It is our own implementation, for files with the same words (gold tokenization), where the
scorer's word alignment is the identity, and for other tokenizations through the character
alignment of :mod:`neuralparse.evaluation.alignment`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from neuralparse.io.sentence import UNSPECIFIED

#: Universal relations of content words: the words that CLAS, MLAS and BLEX score. Every other
#: relation (the functional ones below, ``punct``, and anything that is not a UD relation) is
#: left out, on both the gold and the predicted side.
CONTENT_DEPRELS: frozenset[str] = frozenset(
    {
        "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl",
        "dislocated", "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod",
        "conj", "fixed", "flat", "compound", "list", "parataxis", "orphan", "goeswith",
        "reparandum", "root", "dep",
    }
)  # fmt: skip

#: Universal relations of function words: MLAS checks a content word's children with these.
FUNCTIONAL_DEPRELS: frozenset[str] = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})

#: The universal features (UD v2): UFeats and MLAS compare FEATS restricted to these, so
#: language-specific and layered features (``Gender[psor]``) are ignored.
UNIVERSAL_FEATURES: frozenset[str] = frozenset(
    {
        "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy",
        "Number", "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice",
        "Evident", "Polarity", "Person", "Polite",
    }
)  # fmt: skip


def universal_label(deprel: str) -> str:
    """The universal part of a UD relation: ``nmod:poss`` -> ``nmod``."""
    return deprel.split(":", 1)[0]


@lru_cache(maxsize=1 << 16)
def universal_features(feats: str) -> str:
    """FEATS restricted to :data:`UNIVERSAL_FEATURES`, sorted: the string UFeats compares.

    ``Number=Sing|Typo=Yes|Case=Nom`` -> ``Case=Nom|Number=Sing``; ``_`` -> ``""``, so a word
    without features equals one with only language-specific features.  Memoised: a treebank
    has a few thousand distinct FEATS strings, and every word of every evaluation asks.
    """
    kept = (feat for feat in feats.split("|") if feat.split("=", 1)[0] in UNIVERSAL_FEATURES)
    return "|".join(sorted(kept))


def lemma_matches(gold: str, predicted: str) -> bool:
    """The scorer's LEMMA test: equal, or the gold LEMMA is ``_`` (unannotated: any prediction
    counts as correct)."""
    return gold in (UNSPECIFIED, predicted)


@dataclass(frozen=True)
class TagColumns:
    """The morphological columns of one sentence, one entry per word (word 1 first).

    ``lemmas`` is optional because a caller may have tags but no lemmas (the Lemmas and BLEX
    scores are then not reported).
    """

    upos: Sequence[str]
    xpos: Sequence[str]
    feats: Sequence[str]
    lemmas: Sequence[str] | None = None

    def __post_init__(self) -> None:
        lengths = [len(self.upos), len(self.xpos), len(self.feats)]
        if self.lemmas is not None:
            lengths.append(len(self.lemmas))
        if len(set(lengths)) > 1:
            raise ValueError(f"tag columns differ in length: {lengths}")

    def __len__(self) -> int:
        return len(self.upos)


@dataclass
class F1Counts:
    """The counts behind a CoNLL 2018 content-word score (CLAS, MLAS, BLEX).

    ``gold`` counts the gold content words, ``predicted`` the words whose *predicted* relation
    is a content relation, ``correct`` the gold content words scored correct. The official score
    is the F1 ``2 * correct / (gold + predicted)``; it differs from an accuracy over gold
    content words even with gold tokenization, because a word can be a content word on one side
    only (e.g. gold ``obl`` predicted ``case``).
    """

    correct: int = 0
    gold: int = 0
    predicted: int = 0

    def add(self, correct: int, gold: int, predicted: int) -> None:
        """Count more words: ``gold`` content words on the gold side, ``predicted`` on the
        predicted side, ``correct`` gold content words scored correct."""
        self.correct += correct
        self.gold += gold
        self.predicted += predicted

    @property
    def precision(self) -> float | None:
        return 100.0 * self.correct / self.predicted if self.predicted else None

    @property
    def recall(self) -> float | None:
        return 100.0 * self.correct / self.gold if self.gold else None

    @property
    def f1(self) -> float | None:
        total = self.gold + self.predicted
        return 200.0 * self.correct / total if total else None

    def to_dict(self) -> dict[str, int | float | None]:
        return {
            "correct": self.correct,
            "gold": self.gold,
            "predicted": self.predicted,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


#: A functional child as MLAS compares it: (word, universal relation, UPOS, universal FEATS).
FunctionalChild = tuple[int, str, str, str]


def functional_children(
    heads: Sequence[int], relations: Sequence[str], upos: Sequence[str], feats: Sequence[str]
) -> list[list[FunctionalChild]]:
    """For each word (index 0 = word 1), its children whose relation is functional, in word
    order. ``relations`` are universal relations and ``feats`` universal features (the
    normalized columns); MLAS needs a content word's list to be the same on both sides."""
    children: list[list[FunctionalChild]] = [[] for _ in heads]
    for word, (head, relation) in enumerate(zip(heads, relations, strict=True), 1):
        if head and relation in FUNCTIONAL_DEPRELS:
            children[head - 1].append((word, relation, upos[word - 1], feats[word - 1]))
    return children
