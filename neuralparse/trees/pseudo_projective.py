"""Pseudo-projective encoding and decoding (Nivre & Nilsson 2005).

A projective parser can still output non-projective trees if the training trees are
projectivized by lifting (:func:`~neuralparse.trees.lifting.lift`, target ``"projective"``)
and the lifts are recorded in the arc labels, so that after parsing a heuristic search can move
each lifted word back under its syntactic head ("deprojectivization", Nivre & Nilsson 2005 §3).

Label schemes (Nivre & Nilsson 2005 §3, Table 1), for a word ``d`` with label ``l`` whose arc
was lifted from its syntactic head ``s`` (label ``ls``) to its linear head ``h``:

=============  =============================  ======================================
scheme         label of the lifted arc        arcs on the path from ``h`` down to ``s``
=============  =============================  ======================================
``head``       ``l^ls``  (paper: l↑ls)         unchanged
``path``       ``l^``    (paper: l↑)           ``x~`` for each label ``x`` (paper: x↓)
``head+path``  ``l^ls``  (paper: l↑ls)         ``x~`` for each label ``x`` (paper: x↓)
=============  =============================  ======================================

An arc can be both lifted and on a path (``l^ls~``).  Markers are ASCII: ``^`` (lifted, paper
↑) separates the label from the syntactic head's label, and a final ``~`` (paper ↓) marks a
path arc.  UD labels are lower-case letters with ``:`` subtypes, so neither character occurs
in them; :func:`encode` refuses labels that contain a marker, which makes
:func:`strip_markers` the identity on every label it did not produce.

Path marks are made as the lifts are made: lifting ``d`` from ``x`` to ``head(x)`` traverses
``x``'s arc, which gets ``~``.  The mark belongs to ``x``'s label, so it stays with ``x`` if
``x`` is lifted itself later; decoding works top-down and puts ``x`` back before it searches for
``d``'s head, so the marked chain below ``h`` is intact again by then.  (Marking the path in the
final projective tree instead loses the chain whenever the syntactic head was lifted out of
``h``'s subtree.)

Decoding (Nivre & Nilsson 2005 §3): lifted arcs are processed top-down, taking each time the
first lifted word in a breadth-first, left-to-right traversal of the current tree.  For a
lifted word ``d`` under ``h``, the syntactic head is searched breadth-first, left to right,
among the descendants of ``h`` outside ``d``'s own subtree (so that no cycle can arise):

* ``head``: the first descendant whose label (markers removed) is ``ls``;
* ``path``: only ``~``-marked arcs are followed, and the target is the first node reached that
  has no ``~``-marked dependent (the end of a lifting path);
* ``head+path``: only ``~``-marked arcs are followed, the target is the first node whose label
  is ``ls`` (a lifted label without ``ls``, ``l^``, falls back to the ``path`` target).

When nothing matches, ``d`` keeps its linear head.  Finally all markers are removed, so the
result is always a single-headed, acyclic tree with plain labels.

Observed on every tree of up to 6 words and on random trees (tests/test_pseudo_projective.py):
with pairwise distinct labels Head and Head+Path recover every tree exactly; Path recovers a
tree exactly whenever one word was lifted (any labels), Head+Path whenever a single lift
operation was made.  Otherwise equal labels can mislead the search.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from neuralparse.errors import InputError
from neuralparse.trees.core import check_tree, children
from neuralparse.trees.lifting import lift

Scheme = Literal["head", "path", "head+path"]
SCHEMES: tuple[Scheme, ...] = ("head", "path", "head+path")

#: Separates a lifted arc's label from the syntactic head's label (Nivre & Nilsson's ↑).
LIFT_MARK = "^"
#: Final mark of an arc on a lifting path (Nivre & Nilsson's ↓).
PATH_MARK = "~"


@dataclass(frozen=True)
class EncodedLabel:
    """A label split into its parts: ``base`` (the original label), ``lifted`` (has ``^``),
    ``head_label`` (the syntactic head's label after ``^``; ``None`` when absent or empty) and
    ``on_path`` (ends with ``~``)."""

    base: str
    lifted: bool = False
    head_label: str | None = None
    on_path: bool = False

    def __str__(self) -> str:
        label = self.base
        if self.lifted:
            label += LIFT_MARK + (self.head_label or "")
        if self.on_path:
            label += PATH_MARK
        return label


def parse_label(label: str) -> EncodedLabel:
    """Split an encoded label into its parts; a label without markers parses to itself."""
    on_path = label.endswith(PATH_MARK)
    if on_path:
        label = label[: -len(PATH_MARK)]
    base, lifted, head_label = label.partition(LIFT_MARK)
    return EncodedLabel(base, bool(lifted), head_label or None, on_path)


def strip_markers(deprel: str) -> str:
    """The original label of an encoded one (identity on labels without markers)."""
    return parse_label(deprel).base


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise InputError(f"unknown pseudo-projective scheme {scheme!r}; expected one of {SCHEMES}")


def _check_labels(heads: Sequence[int], deprels: Sequence[str]) -> None:
    if len(deprels) != len(heads):
        raise InputError(f"{len(deprels)} labels for {len(heads)} words")


def encode(
    heads: Sequence[int], deprels: Sequence[str], scheme: Scheme = "head+path"
) -> tuple[list[int], list[str]]:
    """Projectivize by lifting (Nivre & Nilsson 2005 §3) and encode the lifts in the labels
    with ``scheme`` (see the module docstring).  Returns a projective tree and its labels.

    Raises :class:`~neuralparse.errors.TreeError` for a malformed tree and
    :class:`~neuralparse.errors.InputError` for a bad scheme, a label count that does not match,
    or a label that already contains a marker character.
    """
    _check_scheme(scheme)
    check_tree(heads)
    _check_labels(heads, deprels)
    for d, label in enumerate(deprels, start=1):
        if LIFT_MARK in label or PATH_MARK in label:
            raise InputError(
                f"label {label!r} of word {d} contains a pseudo-projective marker "
                f"({LIFT_MARK!r} or {PATH_MARK!r}) and could not be decoded unambiguously"
            )
    result = lift(heads, "projective")
    new_heads = result.heads
    with_head = scheme in ("head", "head+path")
    with_path = scheme in ("path", "head+path")
    # Each lift of d from h to head(h) traverses h's arc: mark it (the mark stays with h's
    # label if h is lifted later, as the arc it names is then h's new one).
    on_path = {h for _, h in result.steps} if with_path else set()
    labels: list[EncodedLabel] = []
    for d, label in enumerate(deprels, start=1):
        syntactic_head = result.lifted_dependents.get(d)
        head_label = deprels[syntactic_head - 1] if with_head and syntactic_head else None
        labels.append(EncodedLabel(label, syntactic_head is not None, head_label, d in on_path))
    return new_heads, [str(label) for label in labels]


def decode(
    heads: Sequence[int], deprels: Sequence[str], scheme: Scheme = "head+path"
) -> tuple[list[int], list[str]]:
    """Deprojectivize (Nivre & Nilsson 2005 §3): move every lifted word back under the node
    found by the breadth-first search of ``scheme`` (module docstring), keep its head when
    nothing matches, and strip all markers.  The result is a well-formed tree whenever
    ``heads`` is one; labels without markers pass through unchanged.

    Raises :class:`~neuralparse.errors.TreeError` for a malformed tree and
    :class:`~neuralparse.errors.InputError` for a bad scheme or label count.
    """
    _check_scheme(scheme)
    check_tree(heads)
    _check_labels(heads, deprels)
    current = list(heads)
    labels = [parse_label(label) for label in deprels]
    follow_path_only = scheme in ("path", "head+path")
    while (d := _first_lifted_breadth_first(current, labels)) is not None:
        lifted = labels[d - 1]
        target = _search_syntactic_head(
            current, labels, d, lifted.head_label if scheme != "path" else None, follow_path_only
        )
        if target is not None:
            current[d - 1] = target
        # Processed: drop the lift mark (path marks stay for the searches still to come).
        labels[d - 1] = EncodedLabel(lifted.base, False, None, lifted.on_path)
    return current, [label.base for label in labels]


def _breadth_first(
    kids: Sequence[Sequence[int]], start: int, follow: Callable[[int], bool]
) -> list[int]:
    """Nodes below ``start`` in breadth-first, left-to-right order, descending only into the
    dependents for which ``follow`` holds (``start`` itself excluded)."""
    order: list[int] = []
    queue = deque(c for c in kids[start] if follow(c))
    while queue:
        v = queue.popleft()
        order.append(v)
        queue.extend(c for c in kids[v] if follow(c))
    return order


def _first_lifted_breadth_first(heads: Sequence[int], labels: Sequence[EncodedLabel]) -> int | None:
    """The first word with a lift mark in a top-down, breadth-first, left-to-right traversal."""
    for v in _breadth_first(children(heads), 0, lambda _: True):
        if labels[v - 1].lifted:
            return v
    return None


def _search_syntactic_head(
    heads: Sequence[int],
    labels: Sequence[EncodedLabel],
    dependent: int,
    head_label: str | None,
    follow_path_only: bool,
) -> int | None:
    """Breadth-first search below ``dependent``'s linear head, outside ``dependent``'s subtree,
    for its syntactic head: by label when ``head_label`` is given, else for the end of a path
    of ``~``-marked arcs.  ``None`` when nothing matches."""
    kids = children(heads)

    def follow(v: int) -> bool:
        # Never enter the lifted word's own subtree: attaching it there would make a cycle.
        return v != dependent and (labels[v - 1].on_path or not follow_path_only)

    for v in _breadth_first(kids, heads[dependent - 1], follow):
        if head_label is not None:
            if labels[v - 1].base == head_label:
                return v
        elif follow_path_only and not any(labels[c - 1].on_path for c in kids[v]):
            return v
    return None
