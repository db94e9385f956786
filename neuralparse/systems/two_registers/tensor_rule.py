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
registers held, the case where both already hang from the root and R2 < n has a closed form
(``both_registers_clear_ends``); the rest with R2 < n is the reference's search over adopters
and register choices, which :mod:`~neuralparse.systems.two_registers.tensor_both_registers`
enumerates in fixed size on at most ``search_rows`` rows per call, and so is the case R2 = n
(Clear returning R2 at some depth of the stack) for stacks of at most
:data:`~neuralparse.systems.two_registers.tensor_both_registers.SHALLOW_STACK_LIMIT` words;
deeper ones, whose search costs ``O(W³)`` elements a row, on at most
:data:`DEEP_SEARCH_ROWS` rows per call.  A row with a legal move into a configuration left
undecided is *undecided*, and the caller waits, decides it on the host or abandons it
(:mod:`~neuralparse.systems.two_registers.mask`).

Cost: thousands of small operators per call whatever the batch (14,612 per greedy step in
``python -m benchmarks.step_operators --two-registers-graphs``, 3,999 of them without the
searches, against 509 for the variant that abandons every slow row), O(n) work per row and
O(n²) per searched row (times the depths of G2: O(n³) for a deep stack).  On the CPU that
is 10-17 ms a call without the search and about 0.1 s more with 8 rows of 42 words
searched, more than the host's 0.2-4.3 ms for the 1-64 slow rows of a step, so the eager
loop keeps the host;
the CUDA-graph variant uses it with ``TwoRegisters(graph_rule="tensor")``, or compiled by
``torch.compile`` into a few fused kernels with ``graph_rule="compiled"``.  For that it stays
one traceable graph: moves are compared as ``int``
(:func:`~neuralparse.systems.two_registers.tensor_moves.one_of`) and no index depends on
the width.  Tests compare
every decided row with :func:`~neuralparse.systems.two_registers.exit.exit_legal`, on the
reachable configurations of short sentences, on random walks and on arbitrary
configurations.
"""

from __future__ import annotations

import torch
from torch import Tensor

from neuralparse.systems.two_registers.configuration import Move
from neuralparse.systems.two_registers.tensor_both_registers import (
    SHALLOW_STACK_LIMIT,
    search_some,
)
from neuralparse.systems.two_registers.tensor_forms import (
    Words,
    anchor_on_stack,
    both_registers_clear_ends,
    gamma_closed_form,
    highest,
    i0,
    phase_a_closed_form,
    phase_b_closed_form,
    r1_empty_buffer_closed_form,
)
from neuralparse.systems.two_registers.tensor_moves import apply_moves, successors, table4


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


DEEP_SEARCH_ROWS = 6
"""The configurations with R2 = n and a stack deeper than
:data:`~neuralparse.systems.two_registers.tensor_both_registers.SHALLOW_STACK_LIMIT` words a
limited call searches (``W`` rows of ``W²`` elements each, whether there are any or not):
the successors of one configuration in that phase that need it (never more than six on the
Hungarian model's dev parses with beam 8); one with more stays undecided."""


def exit_finishes(
    w: Words, wanted: Tensor | None = None, search_rows: int | None = None, group: int = 1
) -> tuple[Tensor, Tensor]:
    """``(decided, finishes)``: the exit rule's verdict on each configuration, by its phase
    (:func:`~neuralparse.systems.two_registers.exit.exit_finishes`), where the phase has a
    closed form here: all but an empty buffer with both registers held, and that one when
    :func:`both_registers_clear_ends` decides it or on the rows of ``wanted`` that
    :func:`~neuralparse.systems.two_registers.tensor_both_registers.search_some` picks, in
    whole groups of ``group`` rows: at most ``search_rows`` with R2 < n or a stack of at
    most :data:`~neuralparse.systems.two_registers.tensor_both_registers.
    SHALLOW_STACK_LIMIT` words, and at most :data:`DEEP_SEARCH_ROWS` of the deeper ones
    with R2 = n; all of them when ``search_rows`` is None, which only the eager loop can
    afford.  With the anchor on the stack, E's next moves are applied first
    (at most :data:`ANCHORED_MOVES`)."""
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
    deep = (w.r2 == w.n) & (w.on_stack.sum(1) > SHALLOW_STACK_LIMIT)
    search = both & ~both_known & ~failed
    if wanted is not None:
        search &= wanted
    searched, completable = search_some(
        w, search & ~deep, search_rows, group, SHALLOW_STACK_LIMIT + 1
    )
    deep_searched, deep_completable = search_some(
        w, search & deep, None if search_rows is None else DEEP_SEARCH_ROWS, group
    )
    searched |= deep_searched
    completable |= deep_completable
    both_known = both_known | searched
    both_complete = torch.where(searched, completable, both_complete)
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


def exit_rule(w: Words, search_rows: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(legal [R, 12], root arc [R, 12], decided [R])``: Table 4 and the exit rule on every
    move (:func:`~neuralparse.systems.two_registers.exit.exit_legal`); a row is decided when
    every move Table 4 allows leads to a configuration :func:`exit_finishes` decides.  A
    terminal configuration has no legal move."""
    terminal = (w.front > w.n) & (w.r1 < 0) & (w.r2 < 0)
    allowed = table4(w) & ~terminal[:, None]
    after, arc_head = successors(w)
    decided, finishes = exit_finishes(after, allowed.flatten(), search_rows, allowed.shape[1])
    shape = allowed.shape
    legal = allowed & finishes.view(shape)
    decided = (~allowed | decided.view(shape)).all(1)
    return legal, legal & (arc_head.view(shape) == 0), decided
