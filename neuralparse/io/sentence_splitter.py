"""Sentence boundaries in running text, learned from a training treebank.

spaCy's rule-based sentencizer ends a sentence at punctuation, which serves well-edited prose
but not the conventions of every treebank: Turkish-IMST ends sentences with ``...``, Greek-GDT
with ``:`` before a list, and writes ``Δρ.`` inside sentences; English web text often has no
final punctuation at all.  A :class:`SentenceSplitter` learns where the training treebank ends
its sentences: an averaged perceptron (Collins 2002) with a margin decides after each token of
a paragraph whether a sentence ends there, from the token, its neighbours, the shape of the
next token and whether a space follows.  It reads tokens as a tokenizer gives them, so it is
trained on the treebank's tokens (a multiword token's surface form, not its words) in document
order, a paragraph at a time where the treebank marks paragraphs (``# newpar``, ``# newdoc``):
the end of a paragraph always ends a sentence, and is not learned.

The weights are plain data (feature → weight), kept in the checkpoint beside the model.
"""

from __future__ import annotations

import random
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from neuralparse.io.sentence import Sentence

EPOCHS = 5
"""Passes of the perceptron over the training boundaries."""
SEED = 1
"""The order in which the paragraphs are visited in each pass is shuffled with this seed."""
MARGIN = 1.0
"""A decision is learned from until it is right by this much (a perceptron with margin):
without one, a position that the first passes got right by chance, such as an abbreviation
that shares its final ``.`` with sentence ends, stays on the edge of the decision."""
MIN_WEIGHT = 1e-3
"""Averaged weights of smaller magnitude are dropped from what is stored."""


@dataclass(frozen=True)
class Token:
    """One token of running text: its form and whether a space follows it."""

    form: str
    space_after: bool = True


def shape(form: str) -> str:
    """A coarse class of a token: ``X`` capitalized, ``x`` lower case, ``d`` digits, ``p``
    punctuation, ``o`` anything else (scripts without case count as ``x``)."""
    first = form[:1]
    if not first:
        return "o"
    if first.isdigit():
        return "d"
    if first.isalpha():
        return "X" if first.isupper() else "x"
    if unicodedata.category(first).startswith("P"):
        return "p"
    return "o"


def features(tokens: Sequence[Token], index: int) -> list[str]:
    """What the decision after ``tokens[index]`` reads (``index`` is not the last token)."""
    previous = tokens[index - 1].form.lower() if index else "<s>"
    token = tokens[index]
    word = token.form.lower()
    following = tokens[index + 1].form
    after = tokens[index + 2].form.lower() if index + 2 < len(tokens) else "</p>"
    next_shape = shape(following)
    space = "1" if token.space_after else "0"
    # No bias feature: a position whose features were never seen in training scores 0, and
    # a sentence ends only where the evidence says so.
    return [
        f"w={word}",
        f"n={following.lower()}",
        f"s={next_shape}",
        f"sp={space}",
        f"ws={word}|{next_shape}",
        f"wsp={word}|{space}",
        f"wn={word}|{following.lower()}",
        f"pw={previous}|{word}",
        f"last={word[-1:]}|{next_shape}|{space}",
        f"len={min(len(word), 6)}|{word[-1:]}",
        f"nn={following.lower()}|{after}",
    ]


def paragraphs_of(sentences: Iterable[Sentence]) -> list[tuple[list[Token], list[int]]]:
    """The treebank's running text: per paragraph its tokens and the indexes of the tokens
    that end a sentence (its last token included)."""
    paragraphs: list[tuple[list[Token], list[int]]] = []
    for sentence in sentences:
        starts = any(c.startswith(("# newpar", "# newdoc")) for c in sentence.comments)
        if starts or not paragraphs:
            paragraphs.append(([], []))
        tokens, ends = paragraphs[-1]
        tokens.extend(surface_tokens(sentence))
        ends.append(len(tokens) - 1)
    return paragraphs


def surface_tokens(sentence: Sentence) -> list[Token]:
    """The tokens of a sentence, read from its CoNLL-U lines in one pass: a multiword token's
    line in place of its words' lines, ``SpaceAfter=No`` from the MISC of the line kept."""
    tokens = []
    covered = 0  # the last word under a multiword token seen so far
    for line in sentence.to_conllu().splitlines():
        cells = line.split("\t")
        if len(cells) != 10:  # a comment
            continue
        first, dash, last = cells[0].partition("-")
        if dash:
            covered = int(last)
        elif not first.isdigit() or int(first) <= covered:  # an empty node, or a word under one
            continue
        tokens.append(Token(cells[1], "SpaceAfter=No" not in cells[9].split("|")))
    return tokens


@dataclass(frozen=True)
class SentenceSplitter:
    """Where sentences end in running text: the averaged perceptron's weights."""

    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))

    def __bool__(self) -> bool:
        return bool(self.weights)

    def score(self, tokens: Sequence[Token], index: int) -> float:
        """Positive when a sentence ends after ``tokens[index]``."""
        weights = self.weights
        return sum(weights.get(name, 0.0) for name in features(tokens, index))

    def ends(self, tokens: Sequence[Token]) -> list[int]:
        """The indexes of the tokens of one paragraph that end a sentence (the last one
        always, when there is one)."""
        last = len(tokens) - 1
        return [i for i in range(last) if self.score(tokens, i) > 0] + ([last] if tokens else [])

    @classmethod
    def train(cls, sentences: Iterable[Sentence], epochs: int = EPOCHS) -> SentenceSplitter:
        """The splitter learned from a treebank's sentences in document order (see the
        module)."""
        examples = []
        for tokens, ends in paragraphs_of(sentences):
            boundaries = set(ends)
            examples.append(
                [(features(tokens, i), i in boundaries) for i in range(len(tokens) - 1)]
            )
        weights: dict[str, float] = defaultdict(float)
        totals: dict[str, float] = defaultdict(float)  # for the average, Daumé's trick
        stamp: dict[str, int] = defaultdict(int)
        step = 0
        order = random.Random(SEED)
        for _ in range(epochs):
            order.shuffle(examples)
            for paragraph in examples:
                for names, is_end in paragraph:
                    step += 1
                    change = 1.0 if is_end else -1.0
                    if change * sum(weights[name] for name in names) >= MARGIN:
                        continue
                    for name in names:
                        totals[name] += (step - stamp[name]) * weights[name]
                        stamp[name] = step
                        weights[name] += change
        averaged = {}
        for name, weight in weights.items():
            total = totals[name] + (step - stamp[name]) * weight
            value = total / max(step, 1)
            if abs(value) >= MIN_WEIGHT:
                averaged[name] = round(value, 6)
        return cls(averaged)

    def to_dict(self) -> dict[str, float]:
        """Plain data for a checkpoint."""
        return dict(self.weights)

    @classmethod
    def from_dict(cls, data: object) -> SentenceSplitter:
        """The splitter of :meth:`to_dict`'s data; a :class:`ValueError` says what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"sentence splitter weights are a {type(data).__name__}, not a dict")
        for name, value in data.items():
            if not isinstance(name, str) or isinstance(value, bool):
                raise ValueError(f"sentence splitter weight {name!r} is not a named number")
            if not isinstance(value, int | float):
                raise ValueError(f"sentence splitter weight {name!r} is not a number")
        return cls({name: float(value) for name, value in data.items()})
