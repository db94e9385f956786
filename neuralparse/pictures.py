"""Pictures of dependency trees: one self-contained SVG per sentence, and HTML pages of them.

A picture shows the syntactic words of a :class:`~neuralparse.io.Sentence` in order (FORM, UPOS
beneath when the sentence has tags), each arc above the words from head to dependent with its
DEPREL, and the root arc as a vertical arrow coming down from above everything.  Node 0 is the
left edge of the sentence (docs/dev/CONVENTIONS.md); an arrow from above crosses exactly the
arcs that its arc from the left edge would cross, so the picture shows the crossings that the
tree theory counts, root arcs included.

Marks, all explained in a legend under the words:

* every arc that crosses another has a colour of its own
  (:func:`~neuralparse.trees.core.crossing_pairs`);
* a non-projective arc, one spanning a word that its head does not dominate
  (:func:`~neuralparse.trees.core.nonprojective_arcs`), glows yellow;
* given a gold tree of the same words, an arc with the wrong head is dashed with a red label,
  and one with the right head but another DEPREL (the whole label, subtypes included) has a red
  label followed by the gold one in brackets.

The SVG has no script, no stylesheet and no external reference, so it can be embedded in HTML
(:func:`figure`, ``Sentence._repr_html_`` in notebooks, :func:`html_page`) or saved on its own.
Text sizes are estimated from character classes, not measured, so layouts are generous.
What is marked and where everything goes is decided in :mod:`neuralparse.picture_layout`;
this module writes the SVG and the pages.  It draws only; ``python -m neuralparse.show`` is
its command line.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from neuralparse.picture_layout import (
    ARC_INK,
    ARROW,
    ATTACH_STEP,
    CORNER,
    CROSSING_COLOURS,
    FIRST_LEVEL,
    FONT_FAMILY,
    FORM_SIZE,
    GLOW,
    INK,
    LABEL_SIZE,
    LEVEL_STEP,
    MARGIN,
    TAG_INK,
    UPOS_SIZE,
    WORD_GAP,
    WRONG_INK,
    ArcMark,
    arc_levels,
    arc_marks,
    attachments,
    text_width,
    word_positions,
)

if TYPE_CHECKING:
    from neuralparse.io.sentence import Sentence

__all__ = [
    "ARC_INK",
    "ARROW",
    "ATTACH_STEP",
    "CORNER",
    "CROSSING_COLOURS",
    "FIRST_LEVEL",
    "FONT_FAMILY",
    "FORM_SIZE",
    "GLOW",
    "INK",
    "LABEL_SIZE",
    "LEVEL_STEP",
    "MARGIN",
    "TAG_INK",
    "UPOS_SIZE",
    "WORD_GAP",
    "WRONG_INK",
    "ArcMark",
    "Picture",
    "arc_levels",
    "arc_marks",
    "draw",
    "figure",
    "html_page",
    "sentence_text",
    "text_width",
]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class Picture:
    """An SVG document and its size in CSS pixels."""

    svg: str
    width: int
    height: int
    marks: tuple[ArcMark, ...]


def _clean(text: str) -> str:
    """``text`` escaped for XML text and attributes; characters XML cannot hold become U+FFFD."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=True)


@dataclass(slots=True)
class _Canvas:
    """SVG elements being collected, and the extent they cover."""

    elements: list[str]
    left: float = 0.0
    right: float = 0.0

    def cover(self, left: float, right: float) -> None:
        self.left = min(self.left, left)
        self.right = max(self.right, right)

    def text(
        self,
        x: float,
        y: float,
        content: str,
        *,
        size: float,
        fill: str,
        anchor: str = "middle",
        bold: bool = False,
        halo: bool = False,
        extra: str = "",
        cls: str = "",
    ) -> None:
        attributes = [
            f'x="{x:.1f}"',
            f'y="{y:.1f}"',
            f'font-size="{size}"',
            f'fill="{fill}"',
            f'text-anchor="{anchor}"',
        ]
        if cls:
            attributes.insert(0, f'class="{cls}"')
        if bold:
            attributes.append('font-weight="bold"')
        if halo:
            # A white outline under the glyphs keeps labels readable where arcs pass behind.
            attributes.append(
                'stroke="#ffffff" stroke-width="4" stroke-linejoin="round" paint-order="stroke"'
            )
        self.elements.append(f"<text {' '.join(attributes)}>{_clean(content)}{extra}</text>")


def _arc_title(mark: ArcMark, forms: Sequence[str]) -> str:
    """The tooltip of an arc: its words and every mark, in words."""

    def word(index: int) -> str:
        return "ROOT" if index == 0 else f"{index} {forms[index - 1]}"

    notes = []
    if mark.crossing:
        notes.append("crosses another arc")
    if mark.nonprojective:
        notes.append("non-projective")
    if mark.wrong_head and mark.gold_head is not None:
        notes.append(f"wrong head: gold is {word(mark.gold_head)} ({mark.gold_deprel})")
    if mark.wrong_label:
        notes.append(f"wrong label: gold is {mark.gold_deprel}")
    suffix = f" [{'; '.join(notes)}]" if notes else ""
    return f"{word(mark.head)} -> {word(mark.dependent)} {mark.deprel}{suffix}"


def _arc_classes(mark: ArcMark) -> str:
    names = ["arc"]
    if mark.head == 0:
        names.append("root")
    for flag, name in (
        (mark.crossing, "crossing"),
        (mark.nonprojective, "nonprojective"),
        (mark.wrong_head, "wrong-head"),
        (mark.wrong_label, "wrong-label"),
    ):
        if flag:
            names.append(name)
    return " ".join(names)


def _legend_entries(marks: Sequence[ArcMark], gold: bool, glow: str) -> list[tuple[str, str]]:
    """The legend as ``(sample SVG at the origin, text)`` pairs, only for marks in use."""
    entries: list[tuple[str, str]] = []
    crossing = sum(m.crossing for m in marks)
    if crossing:
        # Colour swatches: short strokes would read as the dashes of a wrong head.
        sample = "".join(
            f'<rect x="{i * 9}" y="-4" width="7" height="8" rx="1.5" fill="{c}"/>'
            for i, c in enumerate(CROSSING_COLOURS[:3])
        )
        entries.append((sample, f"crosses another arc ({crossing})"))
    nonprojective = sum(m.nonprojective for m in marks)
    if nonprojective:
        sample = (
            f'<line x1="0" y1="0" x2="25" y2="0" stroke="{CROSSING_COLOURS[0]}" '
            f'stroke-width="2.5" filter="url(#{glow})"/>'
        )
        entries.append(
            (sample, f"non-projective: spans a word its head does not dominate ({nonprojective})")
        )
    if gold:
        wrong_heads = sum(m.wrong_head for m in marks)
        wrong_labels = sum(m.wrong_label for m in marks)
        sample = (
            f'<line x1="0" y1="0" x2="25" y2="0" stroke="{ARC_INK}" stroke-width="1.6" '
            'stroke-dasharray="5 3"/>'
        )
        entries.append((sample, f"wrong head ({wrong_heads} of {len(marks)})"))
        sample = (
            f'<text x="0" y="4" font-size="{LABEL_SIZE}" fill="{WRONG_INK}" '
            'font-weight="bold">abc</text>'
        )
        entries.append((sample, f"wrong label, gold label in brackets ({wrong_labels})"))
    return entries


def _glow_filter(glow: str, width: int, height: int) -> str:
    # A region around the whole picture (three times its size, for the shifted word group): the
    # default region, the element's box plus 10%, has no height for the legend's straight line.
    return (
        f'<filter id="{glow}" filterUnits="userSpaceOnUse" x="{-width}" y="{-height}" '
        f'width="{3 * width}" height="{3 * height}">'
        '<feMorphology in="SourceAlpha" operator="dilate" radius="3" result="wide"/>'
        f'<feFlood flood-color="{GLOW}" flood-opacity="0.95"/>'
        '<feComposite in2="wide" operator="in" result="glow"/>'
        '<feMerge><feMergeNode in="glow"/><feMergeNode in="SourceGraphic"/></feMerge>'
        "</filter>"
    )


def draw(sentence: Sentence, gold: Sentence | None = None) -> Picture:
    """The picture of ``sentence``, with the arcs that differ from ``gold`` marked when given.

    Raises :class:`InputError` as :func:`arc_marks` does.
    """
    marks = arc_marks(sentence, gold)
    heads = sentence.heads
    forms = sentence.forms
    tags = [tag if tag != "_" else "" for tag in sentence.upos]
    has_tags = any(tags)
    # Ids are unique per content, so that several pictures in one HTML page keep their own.
    digest = hashlib.sha1(
        repr((forms, tags, heads, sentence.deprels, [m.label for m in marks])).encode()
    ).hexdigest()[:10]
    glow = f"np-glow-{digest}"

    levels = arc_levels(heads) if heads is not None else {}
    offsets = attachments(heads, levels) if heads is not None else {}
    crowd = [0] * (len(forms) + 1)  # the most arcs on one side of each word
    for (word, _dependent), rank in offsets.items():
        crowd[word] = max(crowd[word], abs(rank))
    widths = [
        max(
            text_width(form, FORM_SIZE),
            text_width(tag, UPOS_SIZE),
            2 * ATTACH_STEP * (crowd[i] + 1),
        )
        for i, (form, tag) in enumerate(zip(forms, tags, strict=True), start=1)
    ]
    xs = word_positions(widths, marks)

    top_level = max(levels.values(), default=0)
    foot = MARGIN + LABEL_SIZE / 2 + FIRST_LEVEL + top_level * LEVEL_STEP if heads else MARGIN
    form_y = foot + 4 + FORM_SIZE
    bottom = form_y + (4 + UPOS_SIZE if has_tags else 0)

    canvas = _Canvas([])
    arcs: list[str] = []
    for mark in marks:
        arcs.append(_arc_svg(mark, xs, levels, offsets, foot, forms, glow, canvas))
    for index, (form, tag) in enumerate(zip(forms, tags, strict=True)):
        x = xs[index]
        canvas.cover(x - widths[index] / 2, x + widths[index] / 2)
        is_root = heads is not None and heads[index] == 0
        canvas.text(x, form_y, form, size=FORM_SIZE, fill=INK, bold=is_root, cls="form")
        if tag:
            canvas.text(x, bottom, tag, size=UPOS_SIZE, fill=TAG_INK, cls="upos")

    shift = MARGIN - canvas.left
    width = canvas.right - canvas.left + 2 * MARGIN
    legend, legend_height, legend_width = _legend(
        _legend_entries(marks, gold is not None, glow), bottom + 14, max(width, 420.0)
    )
    width = max(width, legend_width + 2 * MARGIN)
    height = bottom + legend_height + MARGIN
    w, h = round(width + 0.5), round(height + 0.5)
    text = " ".join(forms)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" role="img" font-family="{_clean(FONT_FAMILY)}">',
        f"<title>{_clean(text)}</title>",
        f"<defs>{_glow_filter(glow, w, h)}</defs>" if any(m.nonprojective for m in marks) else "",
        f'<rect width="{w}" height="{h}" fill="#ffffff"/>',
        f'<g transform="translate({shift:.1f} 0)">',
        *arcs,
        *canvas.elements,
        "</g>",
        *legend,
        "</svg>",
    ]
    return Picture("".join(part for part in parts if part), w, h, tuple(marks))


def _arc_svg(
    mark: ArcMark,
    xs: Sequence[float],
    levels: dict[int, int],
    offsets: dict[tuple[int, int], int],
    foot: float,
    forms: Sequence[str],
    glow: str,
    canvas: _Canvas,
) -> str:
    """The group of one arc: its path, arrowhead and label (the label is added to ``canvas``
    too, after every arc, so that no arc is drawn over a label)."""
    dependent = mark.dependent
    end = xs[dependent - 1] + offsets.get((dependent, dependent), 0) * ATTACH_STEP
    if mark.head == 0:
        top = foot - FIRST_LEVEL - max(levels.values(), default=0) * LEVEL_STEP
        path = f"M{end:.1f},{top + LABEL_SIZE / 2 + 2:.1f} V{foot - ARROW + 1:.1f}"
        label_x = end
        canvas.cover(end - text_width(mark.label, LABEL_SIZE) / 2, end)
    else:
        start = xs[mark.head - 1] + offsets[(mark.head, dependent)] * ATTACH_STEP
        top = foot - FIRST_LEVEL - (levels[dependent] - 1) * LEVEL_STEP
        turn = CORNER if end > start else -CORNER
        path = (
            f"M{start:.1f},{foot:.1f} V{top + CORNER:.1f} "
            f"Q{start:.1f},{top:.1f} {start + turn:.1f},{top:.1f} H{end - turn:.1f} "
            f"Q{end:.1f},{top:.1f} {end:.1f},{top + CORNER:.1f} V{foot - ARROW + 1:.1f}"
        )
        label_x = (start + end) / 2
    style = [
        f'stroke="{mark.colour}"',
        f'stroke-width="{2.4 if mark.crossing else 1.4}"',
        'fill="none"',
    ]
    if mark.wrong_head:
        style.append('stroke-dasharray="5 3"')
    if mark.nonprojective:
        style.append(f'filter="url(#{glow})"')
    wrong = mark.wrong_head or mark.wrong_label
    label_ink = WRONG_INK if wrong else (mark.colour if mark.crossing else INK)
    extra = ""
    shown = mark.label
    if mark.wrong_label:
        # The gold label follows in grey, not in the red of the wrong one.
        shown = mark.deprel
        gold_label = _clean(str(mark.gold_deprel))
        extra = f'<tspan fill="{TAG_INK}" font-weight="normal"> ({gold_label})</tspan>'
    canvas.text(
        label_x,
        top + LABEL_SIZE * 0.35,
        shown,
        size=LABEL_SIZE,
        fill=label_ink,
        bold=wrong,
        halo=True,
        extra=extra,
        cls="label",
    )
    base = foot - ARROW
    arrow = f"{end - 3.5:.1f},{base:.1f} {end + 3.5:.1f},{base:.1f} {end:.1f},{foot:.1f}"
    return (
        f'<g data-head="{mark.head}" data-dependent="{dependent}">'
        f'<path class="{_arc_classes(mark)}" d="{path}" {" ".join(style)}>'
        f"<title>{_clean(_arc_title(mark, forms))}</title></path>"
        f'<polygon points="{arrow}" fill="{mark.colour}"/></g>'
    )


def _legend(
    entries: Sequence[tuple[str, str]], top: float, width: float
) -> tuple[list[str], float, float]:
    """The legend's elements, placed in rows from ``top`` that wrap before ``width``, with
    the height and the width they take."""
    if not entries:
        return [], 0.0, 0.0
    row_height = LABEL_SIZE + 8
    elements = ['<g class="legend">']
    x, y, widest = 0.0, top + row_height / 2, 0.0
    for sample, text in entries:
        entry = 28 + 6 + text_width(text, LABEL_SIZE)
        if x > 0 and x + entry > width - 2 * MARGIN:
            x, y = 0.0, y + row_height
        elements.append(f'<g transform="translate({MARGIN + x:.1f} {y:.1f})">{sample}')
        elements.append(
            f'<text class="legend" x="34" y="{LABEL_SIZE * 0.35:.1f}" font-size="{LABEL_SIZE}" '
            f'fill="{INK}">{_clean(text)}</text></g>'
        )
        x += entry + 18
        widest = max(widest, x - 18)
    elements.append("</g>")
    return elements, y + row_height / 2 - top + 4, widest


def figure(sentence: Sentence, gold: Sentence | None = None) -> str:
    """The picture as an HTML fragment that scrolls sideways when wider than the page."""
    svg = draw(sentence, gold).svg
    return f'<div class="neuralparse-tree" style="overflow-x:auto">{svg}</div>'


def sentence_text(sentence: Sentence) -> str:
    """The ``# text`` of the sentence, or its words joined by spaces when it has none."""
    for comment in sentence.comments:
        key, equals, value = comment.lstrip("# ").partition("=")
        if equals and key.strip() == "text":
            return value.strip()
    return " ".join(sentence.forms)


def html_page(
    sentences: Sequence[Sentence], golds: Sequence[Sentence] | None = None, *, title: str = ""
) -> str:
    """A standalone HTML page: each sentence's id and text as a heading, then its picture.

    ``golds``, when given, holds the gold sentence of each sentence, in the same order.
    """
    if golds is not None and len(golds) != len(sentences):
        raise ValueError(f"{len(golds)} gold sentences for {len(sentences)} sentences")
    sections = []
    for index, sentence in enumerate(sentences):
        gold = golds[index] if golds is not None else None
        sections.append(
            "<section>"
            f"<h2><code>{_clean(sentence.sent_id or f'#{index + 1}')}</code> "
            f"{_clean(sentence_text(sentence))}</h2>"
            f"{figure(sentence, gold)}</section>"
        )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_clean(title or 'dependency trees')}</title>"
        "<style>body{font-family:sans-serif;margin:1.5em;color:#222}"
        "h2{font-size:1.05em;font-weight:normal;margin:1.6em 0 .4em}"
        "code{font-weight:bold;margin-right:.6em}</style></head><body>\n"
        + "\n".join(sections)
        + "\n</body></html>\n"
    )
