"""What a picture of a dependency tree shows and where, before any SVG is written: the measures
and colours of :mod:`neuralparse.pictures`, the marks on each arc (:func:`arc_marks`: its own
colour when it crosses another arc, a glow when it is non-projective, the differences from a
gold tree), text widths estimated from character classes, the level of each arc
(:func:`arc_levels`), where arcs meet their words and where the words stand."""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neuralparse.errors import InputError
from neuralparse.trees.core import check_tree, crossing_pairs, nonprojective_arcs

if TYPE_CHECKING:
    from neuralparse.io.sentence import Sentence

FONT_FAMILY = "'DejaVu Sans', Verdana, 'Liberation Sans', Arial, sans-serif"
FORM_SIZE = 15
UPOS_SIZE = 11
LABEL_SIZE = 12
MARGIN = 14
WORD_GAP = 18  # horizontal space between the widest texts of neighbouring words
LEVEL_STEP = 24  # vertical distance between stacked arcs
FIRST_LEVEL = 24  # height of the lowest arcs above the words
CORNER = 7  # radius of an arc's rounded corners
ATTACH_STEP = 6  # horizontal distance between arcs meeting at the same word
ARROW = 7  # length of an arrowhead

INK = "#222222"
ARC_INK = "#555555"
TAG_INK = "#777777"
WRONG_INK = "#c00000"
GLOW = "#ffd21f"
# Dark2 without its yellow, which is too pale for labels; red is kept for wrong arcs.
CROSSING_COLOURS = ("#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#1f78b4", "#a6761d")
_NARROW = frozenset("iljtfrI.,:;'!|()[]` ")


@dataclass(frozen=True, slots=True)
class ArcMark:
    """How one arc is drawn: the arc ``head -> dependent`` and what the picture marks on it.

    ``colour`` is its own colour when it crosses another arc, otherwise the ordinary arc ink.
    ``gold_head``/``gold_deprel`` are ``None`` when no gold tree was given.
    """

    dependent: int
    head: int
    deprel: str
    crossing: bool
    nonprojective: bool
    colour: str
    gold_head: int | None = None
    gold_deprel: str | None = None

    @property
    def wrong_head(self) -> bool:
        return self.gold_head is not None and self.gold_head != self.head

    @property
    def wrong_label(self) -> bool:
        """Right head, other DEPREL (a wrong head is marked as such, whatever its label)."""
        return (
            self.gold_deprel is not None and not self.wrong_head and self.gold_deprel != self.deprel
        )

    @property
    def label(self) -> str:
        """The text drawn on the arc."""
        return f"{self.deprel} ({self.gold_deprel})" if self.wrong_label else self.deprel


def _where(sentence: Sentence) -> dict[str, str | int | None]:
    return {"source": sentence.source, "line": sentence.line or None, "sent_id": sentence.sent_id}


def _colours(heads: Sequence[int]) -> dict[int, str]:
    """A colour for each crossed arc (by dependent): left to right, the least used colour that
    none of the arcs it crosses has yet, so that arcs crossing each other look different."""
    partners: dict[int, set[int]] = {}
    for a, b in crossing_pairs(heads):
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    used = dict.fromkeys(CROSSING_COLOURS, 0)
    colours: dict[int, str] = {}
    for dependent in sorted(partners, key=lambda d: (min(d, heads[d - 1]), max(d, heads[d - 1]))):
        taken = {colours[p] for p in partners[dependent] if p in colours}
        free = [c for c in CROSSING_COLOURS if c not in taken] or list(CROSSING_COLOURS)
        colour = min(free, key=lambda c: used[c])
        used[colour] += 1
        colours[dependent] = colour
    return colours


def _word_difference(sentence: Sentence, gold: Sentence) -> str:
    """Why ``gold`` cannot be the gold tree of ``sentence``: the first word that differs."""
    of = f"sentence {sentence.sent_id} of {sentence.source}"
    if len(gold.forms) != len(sentence.forms):
        return f"gold sentence has {len(gold.forms)} words, {of} has {len(sentence.forms)}"
    pairs = zip(gold.forms, sentence.forms, strict=True)
    word = next(i for i, (a, b) in enumerate(pairs, start=1) if a != b)
    return (
        f"gold word {word} is {gold.forms[word - 1]!r}, word {word} of {of} is "
        f"{sentence.forms[word - 1]!r}"
    )


def arc_marks(sentence: Sentence, gold: Sentence | None = None) -> list[ArcMark]:
    """The arcs of ``sentence`` in dependent order, with what a picture marks on each.

    Raises :class:`InputError` when the sentence has no tree while a gold tree is given, when
    ``gold`` has other words or no tree, and (:class:`~neuralparse.errors.TreeError`) when a
    tree has a cycle; several words attached to the root are drawn as they are.
    """
    if sentence.heads is None:
        if gold is not None:
            raise InputError("sentence has no tree (HEAD is _) to compare", **_where(sentence))
        return []
    heads = sentence.heads
    check_tree(heads, **_where(sentence))
    gold_heads: Sequence[int | None] = [None] * len(heads)
    gold_deprels: Sequence[str | None] = [None] * len(heads)
    if gold is not None:
        if gold.forms != sentence.forms:
            raise InputError(_word_difference(sentence, gold), **_where(gold))
        if gold.heads is None:
            raise InputError("gold sentence has no tree (HEAD is _)", **_where(gold))
        check_tree(gold.heads, **_where(gold))
        gold_heads, gold_deprels = gold.heads, gold.deprels
    colours = _colours(heads)
    nonprojective = nonprojective_arcs(heads)
    return [
        ArcMark(
            dependent=d,
            head=h,
            deprel=sentence.deprels[d - 1],
            crossing=d in colours,
            nonprojective=d in nonprojective,
            colour=colours.get(d, ARC_INK),
            gold_head=gold_heads[d - 1],
            gold_deprel=gold_deprels[d - 1],
        )
        for d, h in enumerate(heads, start=1)
    ]


def text_width(text: str, size: float) -> float:
    """An estimate of the width of ``text`` at font size ``size``, rather too wide than narrow."""
    width = 0.0
    for char in text:
        if unicodedata.combining(char):
            continue
        if unicodedata.east_asian_width(char) in "WF":
            width += 1.0
        elif char in _NARROW:
            width += 0.36
        elif char.isupper() or char.isdigit() or char in "mwMW@%":
            width += 0.74
        else:
            width += 0.6
    return width * size


def arc_levels(heads: Sequence[int]) -> dict[int, int]:
    """The level (1 = lowest) of each word-to-word arc, by dependent.

    Shorter arcs are placed first, each one level above every placed arc whose span shares some
    inside with its own: nested arcs sit below the arcs around them, arcs crossing each other
    never share a level (their flat tops would overlap), and arcs that only touch end to end
    share one.  A label sits on the flat top of its arc, inside its span, so labels of one level
    never overlap; labels of different levels are a level apart.
    """
    spans = sorted(
        ((min(h, d), max(h, d), d) for d, h in enumerate(heads, start=1) if h != 0),
        key=lambda span: (span[1] - span[0], span[0]),
    )
    placed: list[tuple[int, int, int]] = []
    levels: dict[int, int] = {}
    for left, right, dependent in spans:
        below = [lv for lo, hi, lv in placed if max(lo, left) < min(hi, right)]
        level = 1 + max(below, default=0)
        placed.append((left, right, level))
        levels[dependent] = level
    return levels


def attachments(heads: Sequence[int], levels: dict[int, int]) -> dict[tuple[int, int], int]:
    """Where each arc meets each of its two words, in steps of :data:`ATTACH_STEP` from the
    word's centre, keyed by ``(word, dependent)``.  Arcs leaving to the left sit left of the
    centre, the higher ones nearer to it, so that no leg crosses the top of a lower arc at its
    own word; right likewise; the root arrow takes the centre."""
    sides: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for d, h in enumerate(heads, start=1):
        if h == 0:
            continue
        for word, other in ((h, d), (d, h)):
            side = -1 if other < word else 1
            sides.setdefault((word, side), []).append((levels[d], d))
    offsets: dict[tuple[int, int], int] = {}
    for (word, side), arcs in sides.items():
        arcs.sort(reverse=True)  # highest first: nearest to the centre
        for rank, (_level, dependent) in enumerate(arcs, start=1):
            offsets[(word, dependent)] = side * rank
    return offsets


def word_positions(widths: Sequence[float], marks: Sequence[ArcMark]) -> list[float]:
    """The x of each word's centre (word 1 at 0): neighbours apart by their half widths and
    :data:`WORD_GAP`, and the two ends of each arc far enough apart for its label to fit on
    its flat top between the corners and the other arcs' legs."""
    need: dict[int, list[tuple[int, float]]] = {}
    for mark in marks:
        if mark.head == 0:
            continue
        left, right = sorted((mark.head, mark.dependent))
        width = text_width(mark.label, LABEL_SIZE) + 2 * CORNER + 4 * ATTACH_STEP
        need.setdefault(right, []).append((left, width))
    # Root labels all sit on the top line: neighbouring ones must not overlap.
    roots = [m for m in marks if m.head == 0]
    for before, after in itertools.pairwise(roots):
        width = (
            text_width(before.label, LABEL_SIZE) + text_width(after.label, LABEL_SIZE)
        ) / 2 + WORD_GAP
        need.setdefault(after.dependent, []).append((before.dependent, width))
    xs: list[float] = []
    for index, width in enumerate(widths):
        x = xs[-1] + (widths[index - 1] + width) / 2 + WORD_GAP if xs else 0.0
        for left, span in need.get(index + 1, []):
            x = max(x, xs[left - 1] + span)
        xs.append(x)
    return xs
