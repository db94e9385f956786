"""The divisible framework of Gómez-Rodríguez & Nivre (2013) §3, executable in plain Python.

Configurations are ``(σ, β, A)`` with the stack ``σ`` written bottom first (top at the right),
the buffer ``β`` front first, and ``A`` a set of labeled arcs ``(head, dependent, label)``.
Unlike the paper's root-less configurations we keep the artificial root 0 at the bottom of the
stack, as the engine does (Nivre 2009 §2.2), so both can be compared state for state.

The five elementary transitions (§3) are partial functions returning ``None`` where undefined:

* ``SHIFT (σ, j|β, A) ⇒ (σ|j, β, A)``;   ``UNSHIFT (σ|i, β, A) ⇒ (σ, i|β, A)``
* ``REDUCE (σ|i, β, A) ⇒ (σ, β, A)``
* ``LEFT-ARC_l (σ|i, j|β, A) ⇒ (σ|i, j|β, A ∪ {(j, l, i)})``
* ``RIGHT-ARC_l (σ|i, j|β, A) ⇒ (σ|i, j|β, A ∪ {(i, l, j)})``

(arcs only when not already in ``A``, the paper's footnote 4).  Restrictions ``t|_S`` are
predicates on configurations (``H_σ`` etc., §3.1, plus the UD single-root sets of our fused
systems), and a transition of a divisible system is a composition ``t1|s1 ; ... ; tp|sp``
(Definitions 6 and 7).  Arc-standard (two-top-stack form, Example 3 footnote 5), arc-eager
(Example 4) and arc-hybrid (Example 6) are declared below as such compositions; the tests
check that every fused tensor transition of :mod:`neuralparse.systems` equals its composition
(same stack, buffer, arcs and applicability).  Swap is not divisible (§3.1, end).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

Arc = tuple[int, int, str | None]


@dataclass(frozen=True)
class Configuration:
    """``(σ, β, A)``: stack bottom first, buffer front first, arcs ``(head, dep, label)``."""

    stack: tuple[int, ...]
    buffer: tuple[int, ...]
    arcs: frozenset[Arc]

    @classmethod
    def initial(cls, n: int) -> Configuration:
        """``([0], [1..n], {})``."""
        return cls((0,), tuple(range(1, n + 1)), frozenset())

    def has_head(self, node: int) -> bool:
        return any(dep == node for _, dep, _ in self.arcs)

    def heads(self, n: int) -> list[int]:
        """Heads of words 1..n (-1 where none)."""
        result = [-1] * n
        for head, dep, _ in self.arcs:
            result[dep - 1] = head
        return result


Elementary = Callable[[Configuration, str | None], Configuration | None]
Restriction = Callable[[Configuration], bool]


def shift(c: Configuration, label: str | None = None) -> Configuration | None:
    if not c.buffer:
        return None
    return Configuration((*c.stack, c.buffer[0]), c.buffer[1:], c.arcs)


def unshift(c: Configuration, label: str | None = None) -> Configuration | None:
    if not c.stack:
        return None
    return Configuration(c.stack[:-1], (c.stack[-1], *c.buffer), c.arcs)


def reduce(c: Configuration, label: str | None = None) -> Configuration | None:
    if not c.stack:
        return None
    return Configuration(c.stack[:-1], c.buffer, c.arcs)


def left_arc(c: Configuration, label: str | None = None) -> Configuration | None:
    if not c.stack or not c.buffer:
        return None
    arc = (c.buffer[0], c.stack[-1], label)
    return None if arc in c.arcs else Configuration(c.stack, c.buffer, c.arcs | {arc})


def right_arc(c: Configuration, label: str | None = None) -> Configuration | None:
    if not c.stack or not c.buffer:
        return None
    arc = (c.stack[-1], c.buffer[0], label)
    return None if arc in c.arcs else Configuration(c.stack, c.buffer, c.arcs | {arc})


ELEMENTARY: dict[str, Elementary] = {
    "SHIFT": shift,
    "UNSHIFT": unshift,
    "REDUCE": reduce,
    "LEFT-ARC": left_arc,
    "RIGHT-ARC": right_arc,
}


# -- restrictions (sets of configurations, §3.1) ------------------------------------------------
def h_sigma(c: Configuration) -> bool:
    """``H_σ``: the stack top has a head."""
    return bool(c.stack) and c.has_head(c.stack[-1])


def not_h_sigma(c: Configuration) -> bool:
    """``H̄_σ``: the stack top has no head."""
    return bool(c.stack) and not c.has_head(c.stack[-1])


def sigma_top_not_root(c: Configuration) -> bool:
    """The stack top is a word, not the root 0 (Nivre 2009 Figure 2, ``i ≠ 0``)."""
    return bool(c.stack) and c.stack[-1] != 0


def root_arc_last(c: Configuration) -> bool:
    """Arcs from the root only as ``([0], [j])``: the root arc is built last (UD single root)."""
    return sigma_top_not_root(c) or (len(c.stack) == 1 and len(c.buffer) == 1)


def buffer_keeps_a_word(c: Configuration) -> bool:
    """``|β| ≥ 2``: arc-eager's SHIFT never empties the buffer (UD single root)."""
    return len(c.buffer) >= 2


def reduce_keeps_root_dependent(c: Configuration) -> bool:
    """``|σ| ≥ 3`` and ``β`` non-empty: arc-eager never reduces the root's dependent early."""
    return len(c.stack) >= 3 and bool(c.buffer)


def eager_root_rule(c: Configuration) -> bool:
    """Arc-eager RIGHT-ARC: from 0 only while the root is free; with the last word only when
    the root has its dependent and no stack word is left headless (UD single root)."""
    root_free = not any(head == 0 for head, _, _ in c.arcs)
    if c.stack[-1] == 0:
        return root_free
    if len(c.buffer) != 1:
        return True
    headless = any(not c.has_head(w) for w in c.stack if w != 0)
    return not headless and not root_free


def both(*restrictions: Restriction) -> Restriction:
    """The intersection of restriction sets."""
    return lambda c: all(r(c) for r in restrictions)


@dataclass(frozen=True)
class Step:
    """One restricted elementary transition ``t|_S`` of a composition."""

    transition: str
    restriction: Restriction | None = None


@dataclass(frozen=True)
class Composite:
    """``t1|s1 ; ... ; tp|sp`` (Definition 7): defined where every step is."""

    steps: tuple[Step, ...]

    def __call__(self, c: Configuration, label: str | None = None) -> Configuration | None:
        current: Configuration | None = c
        for step in self.steps:
            if step.restriction is not None and not step.restriction(current):
                return None
            current = ELEMENTARY[step.transition](current, label)
            if current is None:
                return None
        return current


def compose(*steps: str | Step) -> Composite:
    return Composite(tuple(s if isinstance(s, Step) else Step(s) for s in steps))


@dataclass(frozen=True)
class DivisibleSystem:
    """A transition system whose transitions are compositions of elementary ones."""

    name: str
    transitions: Mapping[str, Composite]
    terminal: Restriction

    def apply(self, c: Configuration, transition: str, label: str | None = None):
        return self.transitions[transition](c, label)

    def applicable(self, c: Configuration) -> set[str]:
        """The transitions defined on ``c`` (none when ``c`` is terminal)."""
        if self.terminal(c):
            return set()
        return {t for t, comp in self.transitions.items() if comp(c, None) is not None}


def _stack_terminal(c: Configuration) -> bool:
    return c.stack == (0,) and not c.buffer


ARC_STANDARD = DivisibleSystem(
    "arc_standard",
    {
        # Example 3, footnote 5 (arcs between the two top stack nodes, as Nivre 2009).
        "SHIFT": compose("SHIFT"),
        "LEFT-ARC": compose("UNSHIFT", Step("LEFT-ARC", sigma_top_not_root), "REDUCE", "SHIFT"),
        "RIGHT-ARC": compose("UNSHIFT", Step("RIGHT-ARC", root_arc_last), "SHIFT", "REDUCE"),
    },
    _stack_terminal,
)

ARC_EAGER = DivisibleSystem(
    "arc_eager",
    {
        # Example 4.
        "SHIFT": compose(Step("SHIFT", buffer_keeps_a_word)),
        "REDUCE": compose(Step("REDUCE", both(h_sigma, reduce_keeps_root_dependent))),
        "LEFT-ARC": compose(Step("LEFT-ARC", both(not_h_sigma, sigma_top_not_root)), "REDUCE"),
        "RIGHT-ARC": compose(Step("RIGHT-ARC", eager_root_rule), "SHIFT"),
    },
    lambda c: not c.buffer,
)

ARC_HYBRID = DivisibleSystem(
    "arc_hybrid",
    {
        # Example 6.
        "SHIFT": compose("SHIFT"),
        "LEFT-ARC": compose(Step("LEFT-ARC", sigma_top_not_root), "REDUCE"),
        "RIGHT-ARC": compose("UNSHIFT", Step("RIGHT-ARC", root_arc_last), "SHIFT", "REDUCE"),
    },
    _stack_terminal,
)

DIVISIBLE: dict[str, DivisibleSystem] = {s.name: s for s in (ARC_STANDARD, ARC_EAGER, ARC_HYBRID)}
