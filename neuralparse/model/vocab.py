"""Vocabularies: symbols <-> indices, with padding and unknown entries, as plain data.

Index 0 is padding and index 1 the unknown symbol in every vocabulary, so that a symbol never
seen in training (or too rare to be kept) still maps to a trained vector.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

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

    def tag_classes(self, columns: Iterable[str]) -> dict[str, Vocabulary]:
        """The class vocabularies of the tagging heads for ``columns`` (``upos``, ``xpos``,
        ``feats``) that the data has."""
        found = {"upos": self.upos, "xpos": self.xpos, "feats": self.feats_classes}
        return {name: found[name] for name in columns if found[name] is not None}

    def to_dict(self) -> dict[str, Any]:
        return {
            name: (vocab.to_dict() if vocab is not None else None)
            for name, vocab in vars(self).items()
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vocabularies:
        return cls(
            **{
                name: (Vocabulary.from_dict(value) if value is not None else None)
                for name, value in data.items()
            }
        )


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
) -> Vocabularies:
    """Vocabularies of the training sentences (objects with ``forms``, ``upos``, ``xpos``,
    ``feats``); a column enters only when enabled and present in the data.  FEATS gets its
    pair vocabulary (gold-tag input) when ``feats_pairs``, else its class vocabulary (the
    tagging head's)."""
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
    )


def vocabularies_for(sentences: Sequence[Any], model: Any) -> Vocabularies:
    """:func:`build_vocabularies` with the switches of a model configuration
    (:class:`neuralparse.config.ModelConfig`)."""
    return build_vocabularies(
        sentences,
        min_word_count=model.min_word_count,
        use_chars=model.use_chars,
        use_upos=model.use_upos,
        use_xpos=model.use_xpos,
        use_feats=model.use_feats,
        feats_pairs=model.tag_input == "gold",
    )
