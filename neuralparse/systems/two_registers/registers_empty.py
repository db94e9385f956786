"""Closed forms of the two-registers dead-end rule with the registers empty (Pitler &
McDonald 2015, Tables 2 and 4; docs/dev/two-registers-completability.md): (I0) for a fresh
buffer front and :func:`gamma_closed_form` for a front put back by Clear, and the terms the
other closed forms (:mod:`~neuralparse.systems.two_registers.exit`,
:mod:`~neuralparse.systems.two_registers.empty_buffer`) read: the lowest stack word of H ∪ C.

Terms: *root free* — 0 has no dependent; H — headless stack words other than 0; C — stack
words other than 0 whose tree root is 0; minH/minC their lowest words.  The stack is
increasing bottom to top, so "minC < minH" is decided by the lowest stack word in H ∪ C."""

from __future__ import annotations

from collections.abc import Sequence

from neuralparse.systems.two_registers.configuration import Configuration


def lowest_decides(c: Configuration, words: Sequence[int]) -> bool | None:
    """``minC < minH`` over ``words`` (increasing; 0 skipped): ``True`` when the lowest word
    of H ∪ C is connected, ``False`` when it is headless, ``None`` when there is none."""
    head = c.head
    for v in words:
        if v == 0:
            continue
        if head[v] is None:
            return False
        if c.tree_root(v) == 0:
            return True
    return None


def i0(c: Configuration) -> bool:
    """(I0): root free ∨ minC < minH over the stack words other than 0.  With the registers
    empty and a fresh β1 (never put back by Clear) the arc-eager completion finishes ``c``
    iff (I0) holds (:mod:`~neuralparse.systems.two_registers.mask`)."""
    return c.leftmost[0] is None or bool(lowest_decides(c, c.stack))


def gamma_closed_form(c: Configuration) -> bool:
    """Whether the arc-eager completion (E with empty registers) finishes a configuration
    whose buffer front is a word put back by Clear (β1 <= last): with β1 = n headed, iff β1
    is connected; otherwise iff (I0) holds over the stack, or β1 is headed and connected and
    every headless stack word lies in the run of headless words on top of the stack (those
    go to β1, β1 is shifted and takes the rest of the buffer)."""
    b, head = c.front, c.head
    if b == c.n and head[b] is not None:
        return c.tree_root(b) == 0
    if i0(c):
        return True
    if head[b] is None or c.tree_root(b) != 0:
        return False
    stack = c.stack
    i = len(stack)
    while i and stack[i - 1] != 0 and head[stack[i - 1]] is None:
        i -= 1
    return all(v == 0 or head[v] is not None for v in stack[:i])
