"""Three-step parsing (Lacroix & Béchet 2014): targets, the two valency passes as readable
pure-Python configurations, and the composed static oracle.

This is the reference the tensor system :class:`neuralparse.systems.three_step.ThreeStep` is
tested against (and :mod:`experiments.three_step_oracle_coverage` runs); it has no torch in it.

Step 1 (§4.1) parses the *projectivized* tree: each arc lifted by
:func:`neuralparse.trees.lifting.lift` keeps its label and serves as the *anchor* of the
non-projective arc it replaced ("artificial anchors from projectivization", §5.1, CDG
Treebank 2; footnote 4: the anchor has the label of the non-projective arc).

Steps 2 and 3 (§4.2) recover the non-projective arcs with polarized valencies and the First
Available principle (§3, rule D1: the closest dual valencies with the same name pair up):

* Step 2, left to right (Table 3), finds **left** non-projective arcs, whose head lies to the
  *right* of the dependent: the dependent (met first) gets ``↙l``, the head later pairs it
  with ``↖l`` (Table 5: ``y`` (2) gets ``↙clit-l-obj``, ``allé`` (4) adds (4, clit-l-obj, 2)).
* Step 3, right to left (Table 4), is the mirror image and finds **right** arcs (head left of
  the dependent) with ``↘l`` / ``↗l`` (Table 5: (1, modif, 6)).

Decisions where the paper is inconsistent (design note ``docs/dev/notes/04-three-step.md``):

* PutValency does **not** move the word: a separate Shift follows, as in the Table 5
  derivation (Table 3 makes PutValency shift).  A word carries at most one valency per pass
  and, once it has one, makes no more Dist moves (Table 3's order: its Dist moves, then its
  valency), so a word never pairs with itself.
* Step 3 is the exact mirror of step 2.  The paper's printed initial configuration
  ``([w0..w_{n-1}], [w_n])`` leaves ``w_n`` unreachable by Table 4's transitions, which act
  on the stack top; we start from ``([w0..wn], [])`` and end in ``([w0], [w1..wn])``, Table 4's
  terminal form.  (Table 5 writes ``↙``/DistLeft in the right pass; we use ``↘``/Dist-Right.)
* θ is a per-word label array with a consumed flag; ``Dist(l)`` pairs the focus word with the
  nearest unconsumed ``l`` valency (FA).  A Dist move is legal only if it keeps the structure
  a tree (the dependent must not dominate the focus word), and a word re-headed in step 2 may
  not take a valency in step 3 (no word receives a non-projective head twice).
* The non-projective arc found replaces the anchor of its dependent (same word, new head,
  the valency's label).

Recoverability: LIFO pairing per label reproduces a set of same-direction, same-label arcs
iff no two of them cross strictly (shared endpoints are fine given "Dist before PutValency"
at a word).  :func:`three_step_target` therefore gives valencies to a *largest* subset of the
lifted arcs without such crossings (maximum independent set of each label's crossing graph);
the other lifted arcs stay on their anchors.  Every intermediate tree mixes gold heads and
anchors, each an ancestor of the word in the gold tree, so it is acyclic and the oracle never
meets the acyclicity check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from neuralparse.trees.core import arcs_cross, check_tree
from neuralparse.trees.lifting import lift

Direction = Literal["left", "right"]
"""``left``: step 2, arcs whose head is right of the dependent; ``right``: step 3."""

UNLABELED = "_"
"""Valency name used when a tree has no labels (all valencies then share one name)."""

SHIFT = "SHIFT"
PUT_VALENCY = "PUT-VALENCY"
DIST = "DIST"
PassAction = tuple[str, str | None]
"""``(SHIFT, None)``, ``(PUT-VALENCY, label)`` or ``(DIST, label)``; in step 3 they are the
paper's RShift, PutValency(↘l) and Dist-Right(↗l)."""


def arc_direction(head: int, dependent: int) -> Direction:
    """Which pass recovers a non-projective arc: ``left`` when the head is to the right."""
    return "left" if head > dependent else "right"


@dataclass(frozen=True)
class NonProjectiveArc:
    """A lifted arc of the gold tree: ``head -> dependent`` with its label, anchored on
    ``anchor -> dependent`` in the projectivized tree."""

    dependent: int
    head: int
    label: str
    anchor: int

    @property
    def direction(self) -> Direction:
        return arc_direction(self.head, self.dependent)


@dataclass(frozen=True)
class ThreeStepTarget:
    """What each step must build for one gold tree.

    ``projective_heads``: step 1's tree (anchors included); ``deprels``: the labels (shared by
    anchors and the arcs they stand for); ``recovered``: the lifted arcs given valencies;
    ``unrecovered``: the lifted arcs left on their anchors (FA conflicts).
    """

    projective_heads: list[int]
    deprels: list[str]
    recovered: list[NonProjectiveArc]
    unrecovered: list[NonProjectiveArc]

    @property
    def final_heads(self) -> list[int]:
        """The tree the composed oracle builds: anchors replaced by the recovered arcs."""
        heads = list(self.projective_heads)
        for arc in self.recovered:
            heads[arc.dependent - 1] = arc.head
        return heads


def _max_independent_set(nodes: list[int], edges: dict[int, set[int]]) -> set[int]:
    """A largest set of pairwise non-adjacent ``nodes`` (exact branch and bound; the crossing
    graphs of one label's lifted arcs are tiny).  Ties keep the earlier nodes."""
    if not nodes:
        return set()
    degree = {v: len(edges[v] & set(nodes)) for v in nodes}
    # Nodes without conflicts are always taken.
    free = [v for v in nodes if degree[v] == 0]
    if free:
        rest = [v for v in nodes if degree[v] > 0]
        return set(free) | _max_independent_set(rest, edges)
    pivot = max(nodes, key=lambda v: (degree[v], -v))
    with_pivot = {pivot} | _max_independent_set(
        [v for v in nodes if v != pivot and v not in edges[pivot]], edges
    )
    without = _max_independent_set([v for v in nodes if v != pivot], edges)
    return without if len(without) > len(with_pivot) else with_pivot


def choose_recoverable(arcs: Sequence[NonProjectiveArc]) -> list[NonProjectiveArc]:
    """A largest subset of ``arcs`` in which no two arcs with the same direction and label
    cross strictly: the arcs the First Available principle can pair correctly."""
    groups: dict[tuple[Direction, str], list[NonProjectiveArc]] = {}
    for arc in arcs:
        groups.setdefault((arc.direction, arc.label), []).append(arc)
    chosen: set[int] = set()
    for group in groups.values():
        by_dep = {a.dependent: a for a in group}
        edges = {
            a.dependent: {
                b.dependent
                for b in group
                if b is not a and arcs_cross((a.head, a.dependent), (b.head, b.dependent))
            }
            for a in group
        }
        chosen |= _max_independent_set(sorted(by_dep), edges)
    return [a for a in arcs if a.dependent in chosen]


def three_step_target(
    heads: Sequence[int], deprels: Sequence[str] | None = None
) -> ThreeStepTarget:
    """Projectivize ``heads`` by lifting (Nivre & Nilsson 2005) and split the lifted arcs
    into those the valency passes recover and those left on their anchors (§5.1)."""
    labels = list(deprels) if deprels is not None else [UNLABELED] * len(heads)
    lifted = lift(heads, "projective", labels)
    arcs = [
        NonProjectiveArc(d, original, labels[d - 1], lifted.heads[d - 1])
        for d, original in sorted(lifted.lifted_dependents.items())
    ]
    recovered = choose_recoverable(arcs)
    chosen = {a.dependent for a in recovered}
    return ThreeStepTarget(
        projective_heads=list(lifted.heads),
        deprels=labels,
        recovered=recovered,
        unrecovered=[a for a in arcs if a.dependent not in chosen],
    )


def is_fully_recoverable(heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
    """Whether the composed oracle reproduces the tree exactly: no two lifted arcs with the
    same direction and label cross strictly (design note 04)."""
    return not three_step_target(heads, deprels).unrecovered


@dataclass
class ValencyPassConfig:
    """A configuration of step 2 (``direction="left"``) or step 3 (``"right"``), in the
    paper's terms ``(σ, β, θ, A)``.

    ``heads``/``labels`` are indexed by word (index 0 unused): the tree being corrected.
    ``focus`` is the word the transitions act on (step 2: the first buffer word; step 3: the
    stack top); ``0`` or ``n + 1`` past the end.  ``valency[w]`` is the label of the valency
    ``w`` carries in this pass (``None``: none) and ``consumed[w]`` whether it was paired.
    ``reheaded[w]``: ``w`` received a non-projective head in this or an earlier pass.
    ``arcs``: the non-projective arcs added, ``(head, label, dependent)`` as in the paper.
    """

    direction: Direction
    heads: list[int]
    labels: list[str]
    focus: int
    valency: list[str | None]
    consumed: list[bool]
    reheaded: list[bool]
    arcs: list[tuple[int, str, int]] = field(default_factory=list)

    @classmethod
    def initial(
        cls,
        direction: Direction,
        heads: Sequence[int],
        labels: Sequence[str],
        reheaded: Sequence[bool] | None = None,
    ) -> ValencyPassConfig:
        """Step 2: ``([w0], [w1..wn], (), A)``; step 3: ``([w0..wn], [], (), A)``."""
        n = len(heads)
        return cls(
            direction=direction,
            heads=[-1, *heads],
            labels=["", *labels],
            focus=1 if direction == "left" else n,
            valency=[None] * (n + 1),
            consumed=[False] * (n + 1),
            reheaded=[False, *reheaded] if reheaded is not None else [False] * (n + 1),
        )

    @property
    def n(self) -> int:
        return len(self.heads) - 1

    def order(self) -> list[int]:
        """The words in the order this pass visits them."""
        words = list(range(1, self.n + 1))
        return words if self.direction == "left" else words[::-1]

    def visited(self) -> list[int]:
        """Words already reached (the focus included), in visiting order."""
        if self.direction == "left":
            return list(range(1, min(self.focus, self.n) + 1))
        return list(range(self.n, max(self.focus, 1) - 1, -1))

    @property
    def stack(self) -> list[int]:
        if self.direction == "left":
            return [0, *range(1, self.focus)]
        return [0, *range(1, self.focus + 1)]

    @property
    def buffer(self) -> list[int]:
        if self.direction == "left":
            return list(range(self.focus, self.n + 1))
        return list(range(self.focus + 1, self.n + 1))

    @property
    def theta(self) -> list[tuple[int, str]]:
        """Unconsumed valencies ``(word, label)`` in the order they were put."""
        return [
            (w, label)
            for w in self.visited()
            if (label := self.valency[w]) is not None and not self.consumed[w]
        ]

    def is_terminal(self) -> bool:
        return not 1 <= self.focus <= self.n

    def first_available(self, label: str) -> int | None:
        """The nearest unconsumed word with valency ``label`` (FA principle), if any."""
        for w, valency_label in reversed(self.theta):
            if valency_label == label:
                return w
        return None

    def dominates(self, ancestor: int, word: int) -> bool:
        """Whether ``ancestor`` is ``word`` or one of its ancestors in the current tree."""
        seen = 0
        while word > 0 and seen <= self.n:
            if word == ancestor:
                return True
            word = self.heads[word]
            seen += 1
        return word == ancestor

    def is_legal(self, action: PassAction) -> bool:
        if self.is_terminal():
            return False
        kind, label = action
        j = self.focus
        if kind == SHIFT:
            return True
        if self.valency[j] is not None:
            return False  # one valency per word per pass, and no Dist after it
        if kind == PUT_VALENCY:
            return not self.reheaded[j]
        if kind == DIST:
            assert label is not None
            i = self.first_available(label)
            return i is not None and not self.dominates(i, j)
        raise ValueError(f"unknown valency-pass action {action!r}")

    def legal_actions(self, labels: Sequence[str]) -> list[PassAction]:
        """Every legal action over the label inventory ``labels``."""
        candidates: list[PassAction] = [(SHIFT, None)]
        candidates += [(PUT_VALENCY, label) for label in labels]
        candidates += [(DIST, label) for label in labels]
        return [a for a in candidates if self.is_legal(a)]

    def apply(self, action: PassAction) -> None:
        """Apply a legal action in place (raises ValueError for an illegal one)."""
        if not self.is_legal(action):
            raise ValueError(f"illegal {action} in {self.direction} pass at word {self.focus}")
        kind, label = action
        j = self.focus
        if kind == SHIFT:
            self.focus += 1 if self.direction == "left" else -1
        elif kind == PUT_VALENCY:
            self.valency[j] = label
        else:
            assert label is not None
            i = self.first_available(label)
            assert i is not None
            self.consumed[i] = True
            self.reheaded[i] = True
            self.heads[i] = j
            self.labels[i] = label
            self.arcs.append((j, label, i))

    def tree(self) -> tuple[list[int], list[str]]:
        """Current heads and labels, word 1 first."""
        return self.heads[1:], self.labels[1:]


def pass_oracle(
    direction: Direction, n: int, recovered: Sequence[NonProjectiveArc]
) -> list[PassAction]:
    """The static oracle of one valency pass: at each word, Dist moves for the recovered arcs
    it heads (nearest dependent first, as FA pairs them), then PutValency if it is the
    dependent of one, then Shift."""
    mine = [a for a in recovered if a.direction == direction]
    headed: dict[int, list[NonProjectiveArc]] = {}
    for arc in mine:
        headed.setdefault(arc.head, []).append(arc)
    dependents = {a.dependent: a for a in mine}
    words = range(1, n + 1) if direction == "left" else range(n, 0, -1)
    actions: list[PassAction] = []
    for w in words:
        for arc in sorted(headed.get(w, []), key=lambda a: abs(a.head - a.dependent)):
            actions.append((DIST, arc.label))
        if w in dependents:
            actions.append((PUT_VALENCY, dependents[w].label))
        actions.append((SHIFT, None))
    return actions


@dataclass(frozen=True)
class ValencyDerivation:
    """Steps 2 and 3 of a derivation and the tree they leave."""

    step2: list[PassAction]
    step3: list[PassAction]
    heads: list[int]
    deprels: list[str]


def run_valency_passes(
    heads: Sequence[int],
    deprels: Sequence[str],
    step2: Sequence[PassAction],
    step3: Sequence[PassAction],
) -> ValencyDerivation:
    """Apply steps 2 and 3 to step 1's tree (raises ValueError on an illegal action or a pass
    that does not end in its terminal configuration)."""
    reheaded: list[bool] | None = None
    current_heads, current_labels = list(heads), list(deprels)
    for direction, actions in (("left", step2), ("right", step3)):
        config = ValencyPassConfig.initial(direction, current_heads, current_labels, reheaded)
        for action in actions:
            config.apply(action)
        if not config.is_terminal():
            raise ValueError(f"the {direction} pass did not reach its terminal configuration")
        current_heads, current_labels = config.tree()
        reheaded = config.reheaded[1:]
    check_tree(current_heads)
    return ValencyDerivation(list(step2), list(step3), current_heads, current_labels)


def valency_oracle(target: ThreeStepTarget) -> ValencyDerivation:
    """Steps 2 and 3 of the composed static oracle for a target, replayed on the reference
    configurations (the result's tree is ``target.final_heads``)."""
    n = len(target.projective_heads)
    return run_valency_passes(
        target.projective_heads,
        target.deprels,
        pass_oracle("left", n, target.recovered),
        pass_oracle("right", n, target.recovered),
    )
