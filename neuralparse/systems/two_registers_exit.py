"""A single exit plan for the two-registers dead-end rule (Pitler & McDonald 2015, Tables 2
and 4; SEED-NOTES "Two-registers" 5): the ``"exit"`` alternative to the sixteen completion
plans of :mod:`neuralparse.systems.two_registers`.

The dead-end rule masks every move after which the configuration cannot be finished.  Any
deterministic plan ``E`` (a move chooser that looks at the configuration only) gives a sound
rule "Table 4 and ``E`` finishes the successor": ``E``'s own move from a configuration it
finishes leads to one it finishes too, so no legal configuration is a dead end.  The same
holds for a family of plans ("some member finishes the successor").  The reference rule runs
sixteen plans per candidate move; this module runs one, :func:`exit_move`, except with an
empty buffer and a register held, where eight more are tried (below).  The point is a plan
whose success can later be written as a closed form over O(1) book-keeping
(docs/dev/two-registers-completability.md); the reference here is its O(n) simulation.

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
  ``E`` misses some completable configurations here, so the eight register completions of
  the reference plans (:data:`~neuralparse.systems.two_registers.COMPLETION_PLANS` without
  ``anchored``, which an empty buffer makes irrelevant) are tried as well.

What was checked (``python docs/dev/two_registers_exhaustive.py 6 --exit``; numbers in
docs/dev/two-registers-completability.md):

* every configuration reachable under this rule is a non-dead end and every terminal one a
  complete tree (n <= 6); the rule allows every move the reference allows, and more;
* in phase B, ``E`` finishes exactly the completable configurations (memoised search over
  Table 4 moves) among the Table 4 successors of configurations reachable under the
  reference mask, n <= 6; among those reachable under this rule it misses a handful (2 of
  3,230 at n = 5), where the sixteen plans miss more;
* the static oracle under this rule derives every 2-Crossing-Interval tree with n <= 7 that
  it derives under the reference rule (all but the gap of SEED-NOTES 4), and every in-class
  training tree of the shared treebanks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from neuralparse.systems.two_registers import (
    COMPLETION_PLANS,
    REGISTER_STACK_MOVES,
    Configuration,
    Move,
    _arc_eager_completion_move,
    _register_completion_move,
    follows_to_tree,
    successor,
    table4_legal,
)

Plan = Callable[[Configuration], Move | None]

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
        return _arc_eager_completion_move(c)
    if c.buffer_empty:
        return _empty_buffer_move(c)
    if c.r2 is None:
        return _phase_a_move(c)
    return _phase_b_move(c)


def _with_register_completion(index: int) -> Plan:
    plan = [p for p in COMPLETION_PLANS if not p.anchored][index]

    def move(c: Configuration) -> Move | None:
        if c.r1 is not None and c.buffer_empty:
            return _register_completion_move(c, plan)
        return exit_move(c)

    return move


EXIT_FAMILY: tuple[Plan, ...] = (exit_move, *(_with_register_completion(i) for i in range(8)))
"""``E`` and the eight plans that differ from it only with an empty buffer and a register
held (there they empty the registers as the reference plans do)."""


def exit_completable(c: Configuration) -> bool:
    """Whether the exit rule counts ``c`` as finishable: ``E`` finishes it, or, with an empty
    buffer and a register held, one of :data:`EXIT_FAMILY` does.

    Sound although the family is consulted only with an empty buffer: from a configuration
    ``E`` finishes, ``E``'s move leads to one ``E`` finishes; from one a member finishes
    with an empty buffer, the member's move leads to one it finishes, with an empty buffer
    (where it is consulted) or with empty registers (where all members are ``E``)."""
    if c.is_terminal():
        return c.unattached == 0
    plans = EXIT_FAMILY if c.r1 is not None and c.buffer_empty else EXIT_FAMILY[:1]
    return any(follows_to_tree(c, plan) for plan in plans)


def exit_legal(c: Configuration, move: Move) -> bool:
    """Table 4 with repairs 1-5 and the exit dead-end rule."""
    return table4_legal(c, move) and exit_completable(successor(c, move))
