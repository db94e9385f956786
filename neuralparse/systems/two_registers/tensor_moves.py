"""Tables 2 and 4 of the two-registers system (Pitler & McDonald 2015) as tensor operations
on configurations held as per-word rows
(:class:`~neuralparse.systems.two_registers.tensor_forms.Words`): :func:`table4` (which moves
are allowed, repairs 1-5 included) and :func:`apply_moves` / :func:`successors` (what a move
does), each a fixed number of elementwise operations, gathers and min / max reductions over
the words, with no host read.  The exit rule
(:mod:`~neuralparse.systems.two_registers.tensor_rule`) and the searches of
:mod:`~neuralparse.systems.two_registers.tensor_both_registers` are built on them."""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import Tensor

from neuralparse.systems.two_registers.configuration import Move
from neuralparse.systems.two_registers.tensor_forms import (
    Words,
    between,
    far_side_if_attached,
    far_side_if_child,
    highest,
    lowest,
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
