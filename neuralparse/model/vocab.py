"""Vocabularies: symbols <-> indices, with padding and unknown entries, as plain data.

Index 0 is padding and index 1 the unknown symbol in every vocabulary, so that a symbol never
seen in training (or too rare to be kept) still maps to a trained vector.  A model with
pretrained word vectors also has a :class:`PretrainedVocabulary`: the words of the vectors file
that it keeps, saved with the other vocabularies so that a checkpoint never needs the file.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from neuralparse.evaluation.conll18 import universal_label
from neuralparse.model.contextual import ContextualSpec
from neuralparse.model.vectors import read_vectors

log = logging.getLogger("neuralparse.vocab")

PAD = "<pad>"
UNK = "<unk>"
PAD_INDEX = 0
UNK_INDEX = 1
EMPTY_COLUMN = "_"


@dataclass
class Vocabulary:
    """An indexed symbol list; ``counts[i]`` is the training frequency of symbol ``i``."""

    symbols: list[str]
    counts: list[int]
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.symbols[:2] != [PAD, UNK]:
            raise ValueError("a vocabulary starts with the padding and unknown symbols")
        if len(self.counts) != len(self.symbols):
            raise ValueError("one count per symbol expected")
        self.index = {symbol: i for i, symbol in enumerate(self.symbols)}

    @classmethod
    def build(cls, symbols: Iterable[str], min_count: int = 1) -> Vocabulary:
        """Symbols seen at least ``min_count`` times, most frequent first (ties: sorted)."""
        counter = Counter(symbols)
        frequent = (s for s, c in counter.items() if c >= min_count)
        kept = sorted(frequent, key=lambda s: (-counter[s], s))
        return cls([PAD, UNK, *kept], [0, 0, *(counter[s] for s in kept)])

    def __len__(self) -> int:
        return len(self.symbols)

    def lookup(self, symbol: str) -> int:
        return self.index.get(symbol, UNK_INDEX)

    def encode(self, symbols: Sequence[str]) -> list[int]:
        return [self.index.get(s, UNK_INDEX) for s in symbols]

    def count_tensor(self) -> Tensor:
        return torch.tensor(self.counts, dtype=torch.float)

    def to_dict(self) -> dict[str, Any]:
        return {"symbols": list(self.symbols), "counts": list(self.counts)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vocabulary:
        return cls(list(data["symbols"]), [int(c) for c in data["counts"]])


@dataclass
class PretrainedVocabulary(Vocabulary):
    """The words of a pretrained vectors file that a model keeps, in the file's order, and the
    vectors' dimension; ``counts[i]`` is how many training words look up entry ``i``.

    A form looks up its exact spelling first, then its lower-cased one (vectors files are
    often lower-cased, and a capitalised sentence-initial word should still find its vector).
    ``vectors`` holds the rows of the file while a model is being created for training; a
    vocabulary read from a checkpoint has none (the model's state_dict holds them).
    """

    dim: int = 0
    vectors: Tensor | None = field(default=None, repr=False, compare=False)

    def lookup(self, symbol: str) -> int:
        found = self.index.get(symbol)
        return self.index.get(symbol.lower(), UNK_INDEX) if found is None else found

    def encode(self, symbols: Sequence[str]) -> list[int]:
        return [self.lookup(s) for s in symbols]

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "dim": self.dim}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PretrainedVocabulary:
        return cls(list(data["symbols"]), [int(c) for c in data["counts"]], int(data["dim"]))


def pretrained_vocabulary(
    forms: Iterable[str], path: str, max_extra_words: int
) -> PretrainedVocabulary:
    """The entries of vectors file ``path`` that training words ``forms`` look up, plus the
    first ``max_extra_words`` other entries of the file (its most frequent words, in the usual
    frequency-sorted files): words that training never saw but test text may contain."""
    counts = Counter(forms)
    wanted = set(counts) | {f.lower() for f in counts}
    extra = 0

    def keep(word: str) -> bool:
        nonlocal extra
        if word in (PAD, UNK):  # those indices are taken
            return False
        if word in wanted:
            return True
        extra += 1
        return extra <= max_extra_words

    vectors = read_vectors(path, keep)
    specials = torch.zeros(2, vectors.dim)
    vocab = PretrainedVocabulary(
        [PAD, UNK, *vectors.words],
        [0] * (len(vectors.words) + 2),
        vectors.dim,
        torch.cat([specials, vectors.vectors]),
    )
    for form, count in counts.items():
        vocab.counts[vocab.lookup(form)] += count
    covered = sum(counts.values()) - vocab.counts[UNK_INDEX]
    vocab.counts[UNK_INDEX] = 0  # like every vocabulary's unknown entry
    log.info(
        "pretrained vectors %s: %d words of %d dimensions kept (%d outside the training words); "
        "they cover %.1f%% of the training words",
        path,
        len(vectors.words),
        vectors.dim,
        min(extra, max_extra_words),
        100 * covered / max(sum(counts.values()), 1),
    )
    return vocab


def split_feats(feats: str) -> list[str]:
    """The ``Attribute=Value`` pairs of a FEATS cell (none for ``_``)."""
    return [] if feats == EMPTY_COLUMN else feats.split("|")


def column_present(values: Iterable[str]) -> bool:
    """Whether a column carries information (some cell is not ``_``)."""
    return any(v != EMPTY_COLUMN for v in values)


@dataclass
class Vocabularies:
    """Everything a model needs to turn sentences into indices.

    A column's vocabulary is ``None`` when that column is disabled in the model config or the
    training data leaves it empty.  ``upos`` and ``xpos`` serve both as gold-tag inputs and as
    the classes of the tagging heads; ``feats`` holds the ``Attribute=Value`` pairs that the
    gold-tag encoder embeds, ``feats_classes`` the whole FEATS strings that the FEATS head
    predicts (one class each).
    """

    words: Vocabulary
    chars: Vocabulary | None = None
    upos: Vocabulary | None = None
    xpos: Vocabulary | None = None
    feats: Vocabulary | None = None
    feats_classes: Vocabulary | None = None
    pretrained: PretrainedVocabulary | None = None
    contextual: ContextualSpec | None = None
    """The contextual encoder the model reads features of (not a vocabulary: what encoding a
    corpus needs besides the vocabularies)."""
    relations: Vocabulary | None = None
    """The universal part of DEPREL, for the auxiliary arc scorer's relations
    (``model.arc_loss_weight``)."""

    def tag_classes(self, columns: Iterable[str]) -> dict[str, Vocabulary]:
        """The class vocabularies of the tagging heads for ``columns`` (``upos``, ``xpos``,
        ``feats``) that the data has."""
        found = {"upos": self.upos, "xpos": self.xpos, "feats": self.feats_classes}
        return {name: found[name] for name in columns if found[name] is not None}

    def to_dict(self) -> dict[str, Any]:
        # Without vectors, a contextual encoder or relations the dict stays what it was before
        # they existed, so that resuming from an older checkpoint finds the same vocabularies.
        return {
            name: (vocab.to_dict() if vocab is not None else None)
            for name, vocab in vars(self).items()
            if not (name in ("pretrained", "contextual", "relations") and vocab is None)
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vocabularies:
        def read(name: str, value: dict[str, Any] | None) -> Any:
            if value is None:
                return None
            if name == "contextual":
                return ContextualSpec.from_dict(value)
            kind = PretrainedVocabulary if name == "pretrained" else Vocabulary
            return kind.from_dict(value)

        return cls(**{name: read(name, value) for name, value in data.items()})


def normalize_form(form: str) -> str:
    """Word-embedding key: lower-cased, digits collapsed, so that 1999 and 2001 share a vector
    (the characters still see the exact form)."""
    return "".join("0" if ch.isdigit() else ch for ch in form.lower())


def build_vocabularies(
    sentences: Sequence[Any],
    *,
    min_word_count: int = 2,
    use_chars: bool = True,
    use_upos: bool = True,
    use_xpos: bool = True,
    use_feats: bool = True,
    feats_pairs: bool = True,
    pretrained_vectors: str | None = None,
    pretrained_max_words: int = 0,
    contextual: ContextualSpec | None = None,
    relations: bool = False,
) -> Vocabularies:
    """Vocabularies of the training sentences (objects with ``forms``, ``upos``, ``xpos``,
    ``feats``); a column enters only when enabled and present in the data.  FEATS gets its
    pair vocabulary (gold-tag input) when ``feats_pairs``, else its class vocabulary (the
    tagging head's).  With ``pretrained_vectors`` (a file path), the vocabulary of the vectors
    (:func:`pretrained_vocabulary`) keeps up to ``pretrained_max_words`` words that training
    never saw.  ``contextual`` records the contextual encoder the model reads.  With
    ``relations``, the sentences' ``deprels`` give the relation vocabulary (universal part)."""
    forms = [f for s in sentences for f in s.forms]
    upos = [t for s in sentences for t in s.upos]
    xpos = [t for s in sentences for t in s.xpos]
    feats = [f for s in sentences for f in s.feats]
    return Vocabularies(
        words=Vocabulary.build((normalize_form(f) for f in forms), min_word_count),
        chars=Vocabulary.build(ch for f in forms for ch in f) if use_chars else None,
        upos=Vocabulary.build(upos) if use_upos and column_present(upos) else None,
        xpos=Vocabulary.build(xpos) if use_xpos and column_present(xpos) else None,
        feats=(
            Vocabulary.build(p for cell in feats for p in split_feats(cell))
            if use_feats and feats_pairs and column_present(feats)
            else None
        ),
        feats_classes=(
            Vocabulary.build(feats)
            if use_feats and not feats_pairs and column_present(feats)
            else None
        ),
        pretrained=(
            pretrained_vocabulary(forms, pretrained_vectors, pretrained_max_words)
            if pretrained_vectors
            else None
        ),
        contextual=contextual,
        relations=(
            Vocabulary.build(universal_label(r) for s in sentences for r in s.deprels)
            if relations
            else None
        ),
    )


def vocabularies_for(
    sentences: Sequence[Any], model: Any, contextual: ContextualSpec | None = None
) -> Vocabularies:
    """:func:`build_vocabularies` with the switches of a model configuration
    (:class:`neuralparse.config.ModelConfig`) and its contextual encoder's description."""
    return build_vocabularies(
        sentences,
        min_word_count=model.min_word_count,
        use_chars=model.use_chars,
        use_upos=model.use_upos,
        use_xpos=model.use_xpos,
        use_feats=model.use_feats,
        feats_pairs=model.tag_input == "gold",
        pretrained_vectors=model.pretrained_vectors,
        pretrained_max_words=model.pretrained_max_words,
        contextual=contextual,
        relations=model.arc_loss_weight > 0,
    )
