"""A single exit plan for the two-registers dead-end rule (Pitler & McDonald 2015, Tables 2
and 4; design note ``docs/dev/notes/03-two-registers.md``, item 5): the ``"exit"``
alternative to the sixteen completion plans of
:mod:`neuralparse.systems.two_registers.configuration`.

The dead-end rule masks every move after which the configuration cannot be finished.  Any
deterministic plan ``E`` (a move chooser that looks at the configuration only) gives a sound
rule "Table 4 and ``E`` finishes the successor": ``E``'s own move from a configuration it
finishes leads to one it finishes too, so no legal configuration is a dead end.  The
reference rule runs sixteen plans per candidate move; this module has one,
:func:`exit_move`, whose success has a closed form by phase
(docs/dev/two-registers-completability.md): :func:`exit_legal` decides "``E`` finishes the
successor" (:func:`exit_finishes`: (I0), :func:`gamma_closed_form`,
:func:`phase_a_closed_form`, :func:`phase_b_closed_form`, :func:`anchored_closed_form`), one
pass over the stack instead of O(n) simulated moves.  With an empty buffer and a register
held the rule is wider than ``E``: there it asks whether *any* move sequence completes the
configuration (:func:`r1_empty_buffer_closed_form`, :func:`both_registers_empty_buffer`).
That keeps it sound: a configuration ``E`` finishes stays accepted along its moves (every
configuration it finishes is completable), and a completable one has a move to a
completable one.  The simulation is kept as :func:`exit_legal_by_simulation` (``E`` run
up to an empty buffer with a register held, that phase's rule from there), the reference the
other closed forms are checked against (same mask on every configuration checked).

``E`` by phase (σ1, σ2: stack top and the word below; M: stack words between the registers;
U: stack words right of ``Rright``; *connected*: in the tree of the root 0, or 0 itself while
it has no dependent):

* **registers empty**: the arc-eager completion every plan shares (Left-Arc headless stack
  tops to β1, chain the buffer into its last word, Right-Arc that word from the highest
  connected stack word);
* **R1 held, R2 empty, buffer not empty** (phase A): pop the words above R1 (Left-Arc when
  headless, Reduce otherwise), then Store(no-arc) β1;
* **both registers held, buffer not empty** (phase B): a connected σ1 right of R1 first adopts
  a headless register (Register-Stack to-register); words right of R2 are popped (Left-Arc,
  Reduce), headless M words get their head from a register (R2, or a connected R1 other than
  the root first); then β1 is shifted as the *anchor*: it adopts the headless registers
  (covered ones first), takes its head from a connected register, or hands that role to the
  next buffer word by Left-Arc, and Clear puts it back as γ;
* **buffer empty, a register held**: the same moves where they apply (the last word ``n`` as
  anchor when it is the only word right of R1), headless words below R1 attached to a
  register by Register-Stack to-stack, then Clear once no register would be lost headless.
  ``E`` misses some completable configurations there, with both registers even when the
  eight register completions of the reference plans are tried beside it (1,058 of the
  150,252 completable at n = 6); the rule accepts every completable one
  (:func:`r1_empty_buffer_closed_form`, :func:`both_registers_empty_buffer`).

What was checked, and the numbers: ``docs/dev/two-registers-completability.md`` ("What the
exit rule was checked against"); tests: ``tests/systems/test_two_registers_exit.py``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from neuralparse.systems.two_registers.configuration import (
    ARC_MOVES,
    REGISTER_STACK_MOVES,
    Configuration,
    Move,
    apply_move,
    arc_eager_completion_move,
    follows_to_tree,
    run_plan,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.empty_buffer import (
    both_registers_empty_buffer,
    r1_empty_buffer_closed_form,
)
from neuralparse.systems.two_registers.registers_empty import (
    gamma_closed_form,
    i0,
    lowest_decides,
)

_RS = {(k, to_register): move for move, (k, to_register) in REGISTER_STACK_MOVES.items()}


def _headless(c: Configuration, v: int | None) -> bool:
    return v is not None and v != 0 and c.head[v] is None


def _connected(c: Configuration, v: int | None) -> bool:
    return v is not None and c.connected(v)


def _first_legal(c: Configuration, moves: Sequence[Move]) -> Move | None:
    return next((m for m in moves if table4_legal(c, m)), None)


def _held(c: Configuration) -> list[int]:
    return [k for k in (1, 2) if c.register(k) is not None]


def _covered_headless(c: Configuration) -> list[int]:
    """Registers Clear would drop without a head (repair 3 forbids Clear then)."""
    return [k for k in _held(c) if c.is_covered(k) and _headless(c, c.register(k))]


def _adopt(c: Configuration) -> Move | None:
    """A connected σ1 becomes the head of a headless register: the register joins the
    root's tree."""
    if not _connected(c, c.sigma1):
        return None
    return _first_legal(c, [_RS[k, True] for k in _held(c) if _headless(c, c.register(k))])


def _between_registers(c: Configuration) -> Move | None:
    """σ1 between the registers must leave the stack before Clear: Reduce it, or give it a
    head from a register (R2 first; a connected R1 other than the root first, so that σ1
    becomes connected and can adopt).  ``None``: no register can take it."""
    s1 = c.sigma1
    assert s1 is not None and c.r1 is not None and c.r2 is not None
    if c.head[s1] is not None:
        return Move.REDUCE
    prefer_r1 = c.r1 != 0 and _connected(c, c.r1) and not _connected(c, c.r2)
    order = (1, 2) if prefer_r1 else (2, 1)
    return _first_legal(c, [_RS[k, False] for k in order])


def _is_anchor(c: Configuration) -> bool:
    """σ1 is the last buffer word taken (``β1 − 1``) and the only stack word right of R1:
    Clear would put it back as γ."""
    s1, s2, r1, r_right = c.sigma1, c.sigma2, c.r1, c.r_right
    assert r1 is not None and r_right is not None
    return s1 is not None and s1 > r_right and s1 == c.front - 1 and (s2 is None or s2 < r1)


def _anchor_move(c: Configuration) -> Move | None:
    """The anchor adopts the headless registers (covered ones first), then takes its head
    from a connected register, or passes that role on to the next buffer word (Left-Arc;
    the next word is shifted and anchors instead); Clear then returns it as γ.  ``None``
    when it cannot adopt the register it must: the caller then treats it as any word right
    of the registers (with a buffer: pops it, and the next word anchors)."""
    lose = _covered_headless(c) or [k for k in _held(c) if _headless(c, c.register(k))]
    if lose:
        return _first_legal(c, [_RS[lose[0], True]])
    if _headless(c, c.sigma1):
        anchors = [k for k in (2, 1) if k in _held(c) and _connected(c, c.register(k))]
        move = _first_legal(c, [_RS[k, False] for k in anchors])
        if move is not None:
            return move
        if anchors and not c.buffer_empty:
            return Move.LEFT_ARC
    return Move.CLEAR


def _phase_a_move(c: Configuration) -> Move | None:
    s1 = c.sigma1
    assert c.r1 is not None
    if s1 is not None and s1 > c.r1:
        return Move.LEFT_ARC if _headless(c, s1) else Move.REDUCE
    return Move.STORE_NO_ARC


def _phase_b_move(c: Configuration) -> Move | None:
    s1 = c.sigma1
    assert c.r1 is not None and c.r2 is not None
    if _is_anchor(c):
        move = _anchor_move(c)
        if move is not None:
            return move
    if s1 is not None and s1 > c.r1:
        move = _adopt(c)
        if move is not None:
            return move
        if s1 > c.r2:
            return Move.REDUCE if c.head[s1] is not None else Move.LEFT_ARC
        return _between_registers(c)
    return Move.SHIFT


def _empty_buffer_move(c: Configuration) -> Move | None:
    s1, s2 = c.sigma1, c.sigma2
    r1, r_right = c.r1, c.r_right
    assert r1 is not None and r_right is not None
    move = _adopt(c)
    if move is not None:
        return move
    if s1 is not None and s1 > r_right:
        if s1 == c.n and (s2 is None or s2 < r1):
            move = _anchor_move(c)
            if move is not None:
                return move
        if c.head[s1] is not None:
            return Move.REDUCE
        # A register connected to the root first, R2 before R1.
        held = [k for k in (2, 1) if k in _held(c)]
        order = sorted(held, key=lambda k: not _connected(c, c.register(k)))
        return _first_legal(c, [_RS[k, False] for k in order])
    if c.r2 is not None and s1 is not None and r1 < s1 < c.r2:
        return _between_registers(c)
    # σ1 below R1: Clear once no register would be lost headless.  With R2 = n, R2 comes
    # back as γ and R1 returns to the stack, where γ can still take it unless R1 is its
    # tree root.
    gamma = c.r2 if c.r2 == c.n else None
    losing = [
        k
        for k in _held(c)
        if _headless(c, c.register(k))
        and (c.is_covered(k) or gamma is None or (k == 1 and c.tree_root(gamma) == r1))
    ]
    if not losing:
        return Move.CLEAR
    if s1 is None or s1 == 0:
        return None
    if _headless(c, s1):
        order = _held(c)[::-1] if r1 == 0 else _held(c)
        return _first_legal(c, [_RS[k, False] for k in order])
    return Move.REDUCE


def exit_move(c: Configuration) -> Move | None:
    """The exit plan ``E`` (module docstring); ``None`` where it gives up."""
    if c.r1 is None:
        return arc_eager_completion_move(c)
    if c.buffer_empty:
        return _empty_buffer_move(c)
    if c.r2 is None:
        return _phase_a_move(c)
    return _phase_b_move(c)


def _at_empty_buffer_with_a_register(c: Configuration) -> bool:
    return c.is_terminal() or (c.r1 is not None and c.buffer_empty)


def exit_finishes_by_simulation(c: Configuration) -> bool:
    """Whether the exit rule counts ``c`` as finishable, by running ``E`` (O(n) moves) up to
    a terminal configuration or to an empty buffer with a register held, where the rule is
    exact completability (:func:`r1_empty_buffer_closed_form`,
    :func:`both_registers_empty_buffer`, checked against a search in the tests).
    :func:`exit_finishes` decides the same with closed forms."""
    end = run_plan(c, exit_move, _at_empty_buffer_with_a_register)
    if end is None:
        return False
    if end.is_terminal():
        return end.unattached == 0
    return exit_finishes(end)


def exit_legal_by_simulation(c: Configuration, move: Move) -> bool:
    """:func:`exit_legal` with ``E`` simulated (the reference the closed forms are checked
    against)."""
    return table4_legal(c, move) and exit_finishes_by_simulation(successor(c, move))


# =========================================================================================
# Closed forms of "E finishes c"
# =========================================================================================
# Each function below decides, for one phase, whether E finishes c, from aggregates of the
# stack instead of a run of E; those with the registers empty (i0, gamma_closed_form) live
# in the module registers_empty, and the exact ones of the empty-buffer phases in
# empty_buffer.  They are the closed forms of docs/dev/two-registers-completability.md,
# checked equal to the simulation on every Table 4 successor of every configuration
# reachable under the exit rule, n <= 6 (`python docs/dev/two_registers_exhaustive.py 6
# --exit`).  Terms: *root free* — 0 has no dependent; H — headless stack words other than 0;
# C — stack words other than 0 whose tree root is 0; minH/minC their lowest words.  The stack
# is increasing bottom to top (Shift and Right-Arc push β1, Clear pushes ψ above σ2), so
# "minC < minH" is decided by the lowest stack word in H ∪ C, and the stack's parts below,
# between and right of the registers are contiguous.  Still O(n) per configuration (a scan of
# the stack, tree roots by walking heads), but a single pass with early exits instead of
# O(n) simulated moves.


def phase_a_closed_form(c: Configuration) -> bool:
    """Phase A (R1 held, R2 empty, buffer not empty): E pops the words above R1, stores β1
    and, in phase B, anchors it; it finishes ``c`` iff (I0) holds over the words below R1
    and R1 itself, R1 counting as headless if it is, connected if its tree root is 0,
    otherwise as headed and not connected (its tree root is a stack word left of it, or a
    headless word right of it, which E hangs below β1)."""
    r1 = c.r1
    assert r1 is not None
    if c.leftmost[0] is None:
        return True
    stack = c.stack
    decided = lowest_decides(c, stack[: bisect_left(stack, r1)])
    if decided is not None:
        return decided
    if r1 == 0:
        return False
    return c.head[r1] is not None and c.tree_root(r1) == 0


def anchor_on_stack(c: Configuration) -> bool:
    """Phase B: the only stack word right of R1 is ``β1 − 1`` and lies right of R2 (E's
    anchor, shifted by E or by the parser)."""
    r1, r2, stack = c.r1, c.r2, c.stack
    assert r1 is not None
    if r2 is None or not stack:
        return False
    top = stack[-1]
    return top == c.front - 1 and top > r2 and top > r1 and (len(stack) < 2 or stack[-2] <= r1)


def phase_b_closed_form(c: Configuration) -> bool:
    """Whether E finishes a phase-B configuration (both registers held, buffer not empty)
    without an anchor on the stack (:func:`anchor_on_stack` false), by the four stages of
    docs/dev/two-registers-completability.md: (1) the words right of R2 are popped, the
    lowest adopting the headless registers when it is connected; (2) the words between the
    registers, top down, get a head from a register; (3) the anchor β1 adopts the headless
    registers and hangs from a connected one; (4) after Clear, the arc-eager completion with
    β1 = the anchor over the words below R1 and the uncovered registers."""
    r1, r2 = c.r1, c.r2
    assert r1 is not None and r2 is not None and not c.buffer_empty
    head, stack = c.head, c.stack
    rf = c.leftmost[0] is None
    i1 = bisect_left(stack, r1)
    i2 = bisect_left(stack, r2, i1)
    root1, root2 = c.tree_root(r1), c.tree_root(r2)
    connected1 = (root1 == 0 and r1 != 0) or (r1 == 0 and rf)
    connected2 = root2 == 0
    headless1 = r1 != 0 and head[r1] is None
    headless2 = head[r2] is None
    covered1, covered2 = c.covered1, c.covered2

    def may_adopt(word: int, r: int) -> bool:
        """Repair 2: the word's head must not lie between it and the register."""
        return not c.far_side_if_child(word, r)

    # 1. Words right of R2 are popped; the lowest can adopt (type (2)), and does when
    #    connected (type (3): not when its head is R2).
    if i2 < len(stack):
        u0 = stack[i2]
        if head[u0] != r2 and c.tree_root(u0) == 0:
            if headless1 and may_adopt(u0, r1):
                headless1, connected1, covered2 = False, True, True  # footnote 2
            if headless2 and may_adopt(u0, r2):
                headless2, connected2 = False, True
    # 2. Words between the registers, top down: a connected one adopts; a headless one needs
    #    a register whose tree it does not hold (the root only while free).  Only a few words
    #    change anything (events): the highest connected word that may adopt each headless
    #    register, and the headless words that are tree roots of a register (at most two:
    #    root1, root2, and a register's new tree root is always the other's).  Every other
    #    headless word can hang from R2 (it is not R2's tree root), or from R1 when R1 > 0 is
    #    preferred, and that changes no tree root, connection or use of the root.
    middle = stack[i1:i2]
    events: list[tuple[int, int]] = []  # (word, register it adopts; 0: a tree root's turn)
    for k, r, headless in ((1, r1, headless1), (2, r2, headless2)):
        adopters = (m for m in middle if head[m] is not None and may_adopt(m, r))
        top = max((m for m in adopters if c.tree_root(m) == 0), default=None)
        if headless and top is not None:
            events.append((top, k))
    events += [(m, 0) for m in {root1, root2} if r1 < m < r2 and head[m] is None]
    root_used = False
    for m, adopts in sorted(events, reverse=True):
        if adopts == 1:
            headless1, connected1 = False, True
            continue
        if adopts == 2:
            headless2, connected2 = False, True
            continue
        usable1 = root1 != m and (r1 != 0 or (rf and not root_used))
        usable2 = root2 != m
        if r1 != 0 and connected1 and not connected2:
            k = 1 if usable1 else 2 if usable2 else 0
        else:
            k = 2 if usable2 else 1 if usable1 else 0
        if k == 0:
            return False
        if k == 1:
            root_used = root_used or r1 == 0
            new_root, new_connected = root1, connected1
        else:
            new_root, new_connected = root2, connected2
        # The register whose tree root m was now hangs from R_k.
        if root1 == m:
            root1, connected1 = new_root, connected1 or new_connected
        if root2 == m:
            root2, connected2 = new_root, connected2 or new_connected
    rf = rf and not root_used
    if r1 == 0:
        connected1 = rf
    # 3. The anchor w = β1 adopts every headless register (R1 covers R2), then hangs from a
    #    connected register: directly, or, when it heads R1, through the next buffer word.
    adopted1, adopted2 = headless1, headless2
    if adopted1:
        covered2 = True
    w_connected = False
    if connected1 or connected2:
        w_connected = not adopted1 or c.n - c.front >= 1
        if w_connected and not connected2 and r1 == 0:
            rf = False  # w hangs from the root
    # 4. After Clear, β1 = w: the arc-eager completion over the words below R1 and the
    #    uncovered registers; headless words on top hang from w.
    rest = stack[:i1]
    if not covered1:
        rest.append(r1)
    if not covered2:
        rest.append(r2)

    def is_headless(v: int) -> bool:
        adopted = (v == r1 and adopted1) or (v == r2 and adopted2)
        return v != 0 and head[v] is None and not adopted

    i = len(rest)
    while i and is_headless(rest[i - 1]):
        i -= 1
    for v in rest[:i]:
        if v == 0:
            continue
        if is_headless(v):
            return rf  # a headless word lies below every connected one
        if (v == r1 and (w_connected or connected1)) or (v == r2 and (w_connected or connected2)):
            return True
        if c.tree_root(v) == 0:
            return True
    return w_connected or rf


def anchored_closed_form(c: Configuration) -> bool:
    """Phase B with the anchor on the stack: E's next few moves keep it there (at most two
    adoptions, a head from a register, Clear) or drop it (popped, or Left-Arced to the next
    word, which anchors instead); each changes O(1), and :func:`exit_finishes` decides the
    configuration they lead to.  Written as those moves applied to a copy."""
    d = c.copy()
    for _ in range(6):
        if d.r1 is None or d.buffer_empty or not anchor_on_stack(d):
            return exit_finishes(d)
        move = exit_move(d)
        if move is None or not table4_legal(d, move):
            return False
        apply_move(d, move)
    return follows_to_tree(d, exit_move)  # not seen: the anchor stays at most five moves


def phase(c: Configuration) -> str:
    """The phase :func:`exit_finishes` dispatches on (for the checks that compare the closed
    forms with the simulation phase by phase)."""
    if c.r1 is None:
        if c.buffer_empty:
            return "terminal"
        return "registers empty, β1 = γ" if c.front <= c.last else "registers empty, fresh β1"
    if c.buffer_empty:
        return "empty buffer, R1 alone" if c.r2 is None else "empty buffer, both registers"
    if c.r2 is None:
        return "phase A"
    return "phase B, anchor on the stack" if anchor_on_stack(c) else "phase B, no anchor"


def exit_finishes(c: Configuration) -> bool:
    """:func:`exit_finishes_by_simulation` by phase, each by its closed form: terminal,
    registers empty with a fresh β1 (I0) or with β1 = γ, phase A, phase B with or without
    the anchor on the stack, an empty buffer with R1 alone or with both registers."""
    if c.r1 is None:
        if c.front > c.n:
            return c.unattached == 0  # terminal
        return gamma_closed_form(c) if c.front <= c.last else i0(c)
    if c.front > c.n:
        if c.r2 is None:
            return r1_empty_buffer_closed_form(c)
        return both_registers_empty_buffer(c)
    if c.r2 is None:
        return phase_a_closed_form(c)
    return anchored_closed_form(c) if anchor_on_stack(c) else phase_b_closed_form(c)


def _shallow_successor(c: Configuration, move: Move) -> Configuration:
    """The successor for reading only: the per-word lists are shared with ``c`` unless
    ``move`` builds an arc (cheaper than :func:`successor` by a copy of four O(n) lists and
    :func:`dataclasses.replace`).  Whatever changes it must copy it first, as
    :func:`follows_to_tree` and :func:`anchored_closed_form` do."""
    after = object.__new__(Configuration)
    after.__dict__.update(c.__dict__)
    after.stack = c.stack.copy()
    if move in ARC_MOVES:
        after.head = c.head.copy()
        after.leftmost = c.leftmost.copy()
        after.rightmost = c.rightmost.copy()
        after.arcs = c.arcs.copy()
    apply_move(after, move)
    return after


def exit_legal(c: Configuration, move: Move) -> bool:
    """Table 4 with repairs 1-5 and the exit dead-end rule (:func:`exit_finishes` on the
    successor)."""
    return table4_legal(c, move) and exit_finishes(_shallow_successor(c, move))
