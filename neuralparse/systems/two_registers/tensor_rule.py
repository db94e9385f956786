"""The two-registers exit rule as tensor operations, for the phases whose closed forms are
masked reductions over the words (Pitler & McDonald 2015, Tables 2 and 4; the closed forms of
:mod:`~neuralparse.systems.two_registers.exit`,
:mod:`~neuralparse.systems.two_registers.registers_empty` and
:mod:`~neuralparse.systems.two_registers.empty_buffer`;
docs/dev/two-registers-completability.md).

Configurations are held as per-word rows
(:class:`~neuralparse.systems.two_registers.tensor_forms.Words`: stack membership, head and
tree root of every word, the scalars of Table 2), on which Table 2, Table 4 and every closed
form (:mod:`~neuralparse.systems.two_registers.tensor_forms`) are a fixed number of
elementwise operations and min / max reductions, with no host read and no loop over the
configuration.

:func:`exit_rule` applies each of the twelve moves to a copy of every row
(:func:`successors`: at most one arc, at most three words pushed, one popped), decides
Table 4 with repairs 1-5 (:func:`table4`), and decides the exit rule on each successor by
its phase (:func:`exit_finishes`, with the closed forms of
:mod:`~neuralparse.systems.two_registers.tensor_forms`): terminal, registers empty (a fresh
β1: (I0); β1 put back by Clear: ``gamma_closed_form``), phase A, phase B (with the anchor on
the stack, after E's next moves, at most :data:`ANCHORED_MOVES`), and an empty buffer with R1
alone (exact completability, ``r1_empty_buffer_closed_form``).  With an empty buffer and both
registers held the exact rule is a search over adopters and register choices with no bounded
tensor form yet; only the case where both registers already hang from the root and R2 < n is
decided here (``both_registers_clear_ends``).  A row with a legal move into another such
configuration is *undecided*, and the caller decides it on the host or abandons it
(:mod:`~neuralparse.systems.two_registers.mask`).

Cost: a few thousand small operators per call whatever the batch (3,999 per greedy step in
``python -m benchmarks.step_operators --two-registers-graphs``, against 509 for the variant
that abandons every slow row), O(n) work per row.  On the CPU that is 10-17 ms a call, more
than the host's 0.2-4.3 ms for the 1-64 slow rows of a step, so the eager loop keeps the host;
the CUDA-graph variant uses it with ``TwoRegisters(graph_rule="tensor")``, or compiled by
``torch.compile`` into a few fused kernels with ``graph_rule="compiled"``.  For that it stays
one traceable graph: moves are compared as ``int`` (:func:`one_of`) and no index depends on
the width.  Tests compare
every decided row with :func:`~neuralparse.systems.two_registers.exit.exit_legal`, on the
reachable configurations of short sentences, on random walks and on arbitrary
configurations.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import Tensor

from neuralparse.systems.two_registers.configuration import Move
from neuralparse.systems.two_registers.tensor_forms import (
    Words,
    anchor_on_stack,
    between,
    both_registers_clear_ends,
    far_side_if_attached,
    far_side_if_child,
    gamma_closed_form,
    highest,
    i0,
    lowest,
    phase_a_closed_form,
    phase_b_closed_form,
    r1_empty_buffer_closed_form,
)

N_MOVES = len(Move)


# --- Table 4 -------------------------------------------------------------------------------


def table4(w: Words) -> Tensor:
    """``[R, 12]``: Table 2's applicability and Table 4's preconditions with repairs 1-5
    (:func:`~neuralparse.systems.two_registers.configuration.table4_legal`)."""
    s1, s2 = w.stack_top()
    b1, r1, r2 = w.front, w.r1, w.r2
    # The head and tree root of each operand, read in one gather each.
    operands = {"s1": s1, "b1": b1, "r1": r1, "r2": r2}
    width = w.head.shape[1]
    where = torch.stack(list(operands.values()), 1).clamp(-1, width - 1) % width
    heads, roots = w.head.gather(1, where).unbind(1), w.root.gather(1, where).unbind(1)
    head_of, root_of = (
        dict(zip(operands, heads, strict=True)),
        dict(zip(operands, roots, strict=True)),
    )

    def attach(h: str, m: str) -> Tensor:
        """§4's arc conditions for two operands (``Configuration.can_attach``)."""
        ok = (operands[h] >= 0) & (operands[m] >= 1) & (head_of[m] < 0)
        ok &= (operands[h] != 0) | w.root_free
        return ok & (root_of[h] != operands[m])

    has_b1 = b1 <= w.n
    no_register_between = ~between(r1, s1, b1) & ~between(r2, s1, b1)
    left = has_b1 & attach("b1", "s1") & no_register_between
    right = has_b1 & attach("s1", "b1") & no_register_between
    reduce = (s1 >= 0) & (head_of["s1"] >= 0)
    store = has_b1 & ((r1 < 0) | (r2 < 0)) & (b1 > w.last)
    store_left = store & (r1 >= 0) & attach("b1", "r1")
    store_right = store & (r1 >= 0) & attach("r1", "b1")
    clear = (r1 >= 0) & ((r2 >= 0) | ~has_b1) & ((s2 < 0) | (s2 < r1)) & ~between(s1, r1, r2)
    clear &= ~w.covered1 | (head_of["r1"] >= 0)
    clear &= (r2 < 0) | ~w.covered2 | (head_of["r2"] >= 0)
    columns = [left, right, has_b1, reduce, store, store_left, store_right, clear]
    # Register-Stack(k, to-register / to-stack) with repairs 1 and 2.
    r_right = torch.where(r2 >= 0, r2, r1)
    s1_head = head_of["s1"]
    inside = (r1 >= 0) & (r2 >= 0) & (r1 < s1) & (s1 < r2)
    close_is_r1 = (r1 >= 0) & (s1 < r1)
    r_close = torch.where(close_is_r1, r1, r2)
    far_head = torch.where(close_is_r1, head_of["r2"], head_of["r1"])  # R_far's head
    r_far = torch.where(close_is_r1, r2, r1)
    dependents = w.head == s1[:, None]
    leftmost, rightmost = lowest(dependents), highest(dependents)
    shared = (s1 >= 0) & ((s2 < 0) | (r_right < 0) | (s2 < r_right))
    for k, rk in ((1, r1), (2, r2)):
        base = shared & (rk >= 0) & ((s1 > w.last) | ((k == 1) & ~w.covered1))
        far_child = far_side_if_child(s1_head, s1, rk)
        to_register = base & attach("s1", f"r{k}") & ~far_child
        to_register &= inside | (r_close < 0) | (s1_head != r_close)
        far_attached = far_side_if_attached(leftmost, rightmost, s1, rk)
        to_stack = base & attach(f"r{k}", "s1") & ~far_attached
        to_stack &= inside | (r_far < 0) | (far_head != s1)
        columns += [to_register, to_stack]
    return torch.stack(columns, 1)


# --- Table 2: the twelve successors of every row -------------------------------------------


def successors(w: Words) -> tuple[Words, Tensor]:
    """Every move applied to every row (row ``r * 12 + m`` is move ``m`` on row ``r``;
    meaningful where :func:`table4` allows it), and the head of the arc each adds (-1:
    none)."""
    rows = w.n.shape[0]
    moves = torch.arange(N_MOVES, device=w.n.device).repeat(rows)
    return apply_moves(w.repeat(N_MOVES), moves)


def one_of(t: Tensor, *moves: Move) -> Tensor:
    """Rows whose move ``t`` is one of ``moves``, compared as ``int``s: tracing for
    ``torch.compile`` turns a tensor compared with an ``IntEnum`` member into a Python bool."""
    hit = t == int(moves[0])
    for move in moves[1:]:
        hit = hit | (t == int(move))
    return hit


def apply_moves(w: Words, t: Tensor) -> tuple[Words, Tensor]:
    """Move ``t[r]`` applied to row ``r`` as Table 2 says (meaningful where :func:`table4`
    allows it), and the head of the arc it adds (-1: none)."""
    s1 = highest(w.on_stack)
    index = w.index
    front, r1, r2 = w.front, w.r1, w.r2
    none = torch.full_like(front, -1)
    store = (t >= int(Move.STORE_NO_ARC)) & (t <= int(Move.STORE_RIGHT))
    rs1 = one_of(t, Move.REGISTER_STACK_1_TO_REGISTER, Move.REGISTER_STACK_1_TO_STACK)
    rs2 = one_of(t, Move.REGISTER_STACK_2_TO_REGISTER, Move.REGISTER_STACK_2_TO_STACK)
    to_register = one_of(t, Move.REGISTER_STACK_1_TO_REGISTER, Move.REGISTER_STACK_2_TO_REGISTER)
    rs, rk = rs1 | rs2, torch.where(rs1, r1, r2)
    # The arc (dependent, head) of each move.
    pairs = {
        Move.LEFT_ARC: (s1, front),
        Move.RIGHT_ARC: (front, s1),
        Move.STORE_LEFT: (r1, front),
        Move.STORE_RIGHT: (front, r1),
    }
    dep, head = none, none
    for move, (d, h) in pairs.items():
        this = one_of(t, move)
        dep, head = torch.where(this, d, dep), torch.where(this, h, head)
    dep = torch.where(rs, torch.where(to_register, rk, s1), dep)
    head = torch.where(rs, torch.where(to_register, s1, rk), head)
    builds = dep >= 0
    new_heads = torch.where(builds[:, None] & (index == dep[:, None]), head[:, None], w.head)
    joins = builds[:, None] & (w.root == dep[:, None])
    roots = torch.where(joins, w.at(w.root, head)[:, None], w.root)
    # Footnote 2: IsCovered.
    covered1 = w.covered1 | (rs2 & (r1 >= 0) & (s1 < r1))
    covered2 = w.covered2 | (rs1 & (r2 >= 0) & (s1 > r2))
    # Clear: γ goes back to the buffer, ψ = {σ1} ∪ NotCovered(R1) ∪ NotCovered(R2) − {γ}.
    clear = one_of(t, Move.CLEAR)
    gamma = torch.where(s1 == front - 1, s1, torch.where(r2 == front - 1, r2, none))
    psi = [s1, torch.where(covered1, none, r1), torch.where(covered2, none, r2)]
    psi = [torch.where(v == gamma, none, v) for v in psi]
    last = torch.stack([gamma, *psi], 1).max(1).values
    # The stack: one word popped, then up to three pushed.
    pops = one_of(t, Move.LEFT_ARC, Move.REDUCE) | clear | (rs & ~to_register & (s1 < rk))
    pushed = torch.zeros_like(w.on_stack)
    for word, when in (
        (front, one_of(t, Move.SHIFT, Move.RIGHT_ARC)),
        *((v, clear) for v in psi),
    ):
        pushed |= (when & (word >= 0))[:, None] & (index == word[:, None])
    popped = (pops & (s1 >= 0))[:, None] & (index == s1[:, None])
    moved = one_of(t, Move.SHIFT, Move.RIGHT_ARC) | store
    after = replace(
        w,
        on_stack=(w.on_stack & ~popped) | pushed,
        head=new_heads,
        root=roots,
        front=front + moved.long() - (clear & (gamma >= 0)).long(),
        r1=torch.where(clear, none, torch.where(store & (r1 < 0), front, r1)),
        r2=torch.where(clear, none, torch.where(store & (r1 >= 0), front, r2)),
        covered1=covered1 & ~clear,
        covered2=covered2 & ~clear,
        last=torch.where(clear & (last >= 0), last, w.last),
        root_free=w.root_free & ~(builds & (head == 0)),
        unattached=w.unattached - builds.long(),
    )
    return after, head


def exit_move_anchored(w: Words, allowed: Tensor) -> Tensor:
    """E's move in phase B with the anchor on the stack (``_phase_b_move``), ``allowed`` its
    Table 4 row: the anchor adopts the registers Clear would lose headless (covered ones
    first), else, headless itself, takes its head from a connected register (R2 first) or
    hands the anchor on by Left-Arc, else Clear; when it cannot adopt the register it must, it
    is popped like any word right of the registers (adopting first when connected)."""
    s1 = highest(w.on_stack)
    r1, r2 = w.r1, w.r2
    headless1, headless2 = w.headless(r1), w.headless(r2)

    def legal(move: Move) -> Tensor:
        return allowed[:, move]

    move = torch.full_like(s1, int(Move.CLEAR))
    anchors1, anchors2 = w.connected(r1), w.connected(r2)
    hand_on = anchors1 | anchors2  # (the buffer is not empty in phase B)
    move = torch.where(hand_on, int(Move.LEFT_ARC), move)
    move = torch.where(
        anchors1 & legal(Move.REGISTER_STACK_1_TO_STACK), int(Move.REGISTER_STACK_1_TO_STACK), move
    )
    move = torch.where(
        anchors2 & legal(Move.REGISTER_STACK_2_TO_STACK), int(Move.REGISTER_STACK_2_TO_STACK), move
    )
    move = torch.where(w.headless(s1), move, int(Move.CLEAR))
    # The register the anchor must adopt: covered and headless first.
    lose1 = (w.covered1 & headless1) | (~(w.covered2 & headless2) & headless1)
    lose = torch.where(lose1, 1, torch.where(headless2, 2, 0))
    adopt = torch.where(
        lose == 1, int(Move.REGISTER_STACK_1_TO_REGISTER), int(Move.REGISTER_STACK_2_TO_REGISTER)
    )
    adopts = allowed.gather(1, adopt[:, None])[:, 0]
    # Popped instead: a connected word adopts a headless register first.
    popped = torch.where(w.at(w.head, s1) >= 0, int(Move.REDUCE), int(Move.LEFT_ARC))
    if_connected = w.connected(s1)
    popped = torch.where(
        if_connected & headless2 & legal(Move.REGISTER_STACK_2_TO_REGISTER),
        int(Move.REGISTER_STACK_2_TO_REGISTER),
        popped,
    )
    popped = torch.where(
        if_connected & headless1 & legal(Move.REGISTER_STACK_1_TO_REGISTER),
        int(Move.REGISTER_STACK_1_TO_REGISTER),
        popped,
    )
    return torch.where(lose > 0, torch.where(adopts, adopt, popped), move)


ANCHORED_MOVES = 3
"""E keeps the anchor on the stack for at most three moves: it adopts the headless registers
(then none of them is connected, so it takes no head from one) and Clear follows, or it adopts
one, takes its head from the other and Clear follows (``anchored_closed_form``).  A row still
anchored after them would be left undecided."""


def exit_finishes(w: Words) -> tuple[Tensor, Tensor]:
    """``(decided, finishes)``: the exit rule's verdict on each configuration, by its phase
    (:func:`~neuralparse.systems.two_registers.exit.exit_finishes`), where the phase has a
    closed form here: all but an empty buffer with both registers held, and that one when
    :func:`both_registers_clear_ends` decides it.  With the anchor on
    the stack, E's next moves are applied first (at most :data:`ANCHORED_MOVES`)."""
    failed = torch.zeros_like(w.root_free)
    for _ in range(ANCHORED_MOVES):
        anchored = (w.r1 >= 0) & (w.r2 >= 0) & (w.front <= w.n) & anchor_on_stack(w) & ~failed
        allowed = table4(w)
        move = exit_move_anchored(w, allowed)
        ok = allowed.gather(1, move[:, None])[:, 0]
        failed |= anchored & ~ok
        w = w.where(anchored & ok, apply_moves(w, move)[0])
    registers_empty = w.r1 < 0
    buffer_empty = w.front > w.n
    phase_b = (w.r2 >= 0) & ~buffer_empty
    still = phase_b & anchor_on_stack(w) & ~failed
    both_known, both_complete = both_registers_clear_ends(w)
    both = buffer_empty & (w.r2 >= 0)
    decided = failed | ~((both & ~both_known) | still)
    empty = torch.where(
        buffer_empty,
        w.unattached == 0,
        torch.where(w.front <= w.last, gamma_closed_form(w), i0(w)),
    )
    held = torch.where(w.r2 < 0, phase_a_closed_form(w), phase_b_closed_form(w))
    held = torch.where(
        buffer_empty, torch.where(w.r2 < 0, r1_empty_buffer_closed_form(w), both_complete), held
    )
    return decided, ~failed & torch.where(registers_empty, empty, held)


def exit_rule(w: Words) -> tuple[Tensor, Tensor, Tensor]:
    """``(legal [R, 12], root arc [R, 12], decided [R])``: Table 4 and the exit rule on every
    move (:func:`~neuralparse.systems.two_registers.exit.exit_legal`); a row is decided when
    every move Table 4 allows leads to a configuration :func:`exit_finishes` decides.  A
    terminal configuration has no legal move."""
    terminal = (w.front > w.n) & (w.r1 < 0) & (w.r2 < 0)
    allowed = table4(w) & ~terminal[:, None]
    after, arc_head = successors(w)
    decided, finishes = exit_finishes(after)
    shape = allowed.shape
    legal = allowed & finishes.view(shape)
    decided = (~allowed | decided.view(shape)).all(1)
    return legal, legal & (arc_head.view(shape) == 0), decided
