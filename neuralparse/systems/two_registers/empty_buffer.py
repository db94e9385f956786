"""Closed forms of the two-registers dead-end rule with an empty buffer and a register held
(Pitler & McDonald 2015, Tables 2 and 4; docs/dev/two-registers-completability.md): exact
completability with R1 alone, and two tests that no move sequence completes a configuration,
which the exit rule (:mod:`~neuralparse.systems.two_registers.exit`) asks before it simulates
its plans with both registers held."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from neuralparse.systems.two_registers.configuration import Configuration
from neuralparse.systems.two_registers.registers_empty import lowest_decides, tree_root


def r1_empty_buffer_closed_form(c: Configuration) -> bool:
    """Empty buffer, R1 held alone: whether *some* move sequence completes ``c`` (exact, and
    equal to what E and :data:`~neuralparse.systems.two_registers.exit.EXIT_FAMILY` finish
    there).  The only moves left are Reduce,
    Register-Stack(1, ·) between σ1 and R1 (type (2): only while ``σ2 < R1``), and Clear
    (``σ2 < R1``), which either ends the parse (γ null) or, with σ1 = n alone right of R1,
    puts n back as γ.  Write L and U for the stack words left and right of R1.

    * **Clear ends the parse**: every word needs its head before it, and R1 is the only word
      that can give one, to each headless stack word (repair 2: no child of the word on the
      far side of R1).  A word adopting a headless R1 must be in the root's tree (or be 0
      while the root is free): a headless adopter could get its head only from R1 (a
      cycle), and so could the headless root of any other adopter's tree.  By the same
      cycle, a headed R1 must be in the root's tree, and R1 = 0 gives at most one head, and
      only while the root is free.  The adopter is u0 (the lowest word of U) or in L (type
      (2)), its head not between it and R1 (repair 2); every word of U above u0 must already
      have its head (it can only be reduced).
    * **Clear returns n** (U = [n]): with n headed, it must be in the root's tree (the
      arc-eager completion then takes every headless stack word as n's dependent); with n
      headless, either R1 gives it its head (then n is in the root's tree iff R1 is), or
      Clear puts R1 on the stack above L and the completion needs (I0) over L ∪ {R1}.  (n
      adopting R1 instead leaves (I0) over L, which implies the former.)

    Checked equal to exact completability (memoised search over Table 4 moves) on every
    Table 4 successor of this phase of every configuration reachable under the rule, n <= 6
    (91,905 at n = 6; ``python docs/dev/two_registers_empty_buffer.py 6``), and to the
    simulation of E and its family (``python docs/dev/two_registers_exhaustive.py 6
    --exit``).  One pass over the stack;
    each quantity is a minimum, a count or an "any" over stack words, with tree roots."""
    r1, stack, head, n = c.r1, c.stack, c.head, c.n
    assert r1 is not None and c.r2 is None and c.buffer_empty
    split = bisect_right(stack, r1)
    left, right = stack[:split], stack[split:]
    if any(head[w] is None for w in right[1:]):
        return False
    root_free = c.leftmost[0] is None
    headless = [w for w in stack if w != 0 and head[w] is None]
    # Repair 2 for R1 -> w: no child of w on the far side of R1.
    if not any(c.far_side_if_attached(w, r1) for w in headless):
        if r1 == 0:
            ends = not headless or (len(headless) == 1 and root_free)
        elif head[r1] is not None:
            ends = not headless or tree_root(head, r1) == 0
        else:  # repair 2 for x -> R1: x's head not between x and R1
            ends = any(c.connected(x) and not c.far_side_if_child(x, r1) for x in left + right[:1])
        if ends:
            return True
    if right != [n]:
        return False
    if head[n] is not None:
        return tree_root(head, n) == 0
    if not c.far_side_if_attached(n, r1) and c.connected(r1):
        return True
    return root_free or bool(lowest_decides(c, [*left, r1]))


def stuck_right_of_registers(c: Configuration) -> bool:
    """Empty buffer, a register held: a headless stack word right of ``Rright`` above
    another such word never gets a head, so no plan finishes ``c``.  With the buffer empty
    the registers stay (Store needs β1, Clear needs ``σ2 < R1``); the word cannot be
    Left-Arced (no β1), reduced (headless), given a head by Register-Stack (type (2):
    ``σ2 < Rright``) or removed by Clear while it or a word above it is σ1 (``σ2 > R1``)."""
    stack, head = c.stack, c.head
    r_right = c.r1 if c.r2 is None else c.r2
    j = len(stack) - 1
    while j > 0 and stack[j - 1] > r_right:  # type: ignore[operator]
        if head[stack[j]] is None:
            return True
        j -= 1
    return False


def registers_trapped_below_a_headless_word(c: Configuration) -> bool:
    """Empty buffer, a register held, and Clear can only end the parse (γ = n is possible
    only with ``R2 = n`` or ``n`` alone right of R1 on the stack): a headless stack word
    whose tree holds every register never gets a head, so no plan finishes ``c``.  Its head
    would have to come from a register by Register-Stack(k, to-stack) (no β1 for the arc
    moves), which closes a cycle; the registers stay in its tree as long as it is
    headless."""
    stack, head, n = c.stack, c.head, c.n
    if c.r2 == n or (stack and stack[-1] == n and (len(stack) < 2 or stack[-2] < c.r1)):  # type: ignore[operator]
        return False
    w = tree_root(head, c.r1)  # type: ignore[arg-type]
    if w == 0 or w == c.r1 or (c.r2 is not None and tree_root(head, c.r2) != w):
        return False
    i = bisect_left(stack, w)
    return i < len(stack) and stack[i] == w
