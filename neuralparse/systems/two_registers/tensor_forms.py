"""The two-registers exit rule's closed forms as tensor operations, phase by phase (Pitler &
McDonald 2015, Tables 2 and 4; the closed forms of :mod:`~neuralparse.systems.two_registers.exit`,
:mod:`~neuralparse.systems.two_registers.registers_empty` and
:mod:`~neuralparse.systems.two_registers.empty_buffer`;
docs/dev/two-registers-completability.md), on configurations held as per-word rows.

A configuration is a row of per-word tensors (:class:`Words`): stack membership, head and tree
root of every word, and the scalars of Table 2.  Because the stack is increasing bottom to top
(Shift and Right-Arc push β1, Clear pushes ψ above σ2), membership alone is the stack: σ1 is
the highest member, σ2 the highest below it, and "the stack words left of R1" a mask.  So
every closed form here is a fixed number of elementwise operations and min / max reductions
over the words, with no host read and no loop over the configuration.
:mod:`~neuralparse.systems.two_registers.tensor_rule` dispatches to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

import torch
from torch import Tensor

if TYPE_CHECKING:
    from neuralparse.systems.two_registers.configuration import Configuration

INF = 1 << 30
""":func:`lowest` of an empty set (and the mask's minH / minC when there is no such word):
above every word index and step count, and small enough that sums and differences of a few
of them stay far inside int64."""


@dataclass
class Words:
    """Configurations as rows of per-word tensors ``[R, W]`` (word ``v`` in column ``v``; the
    last column is a spare that no word uses: head -1, not on the stack, its own root) and
    scalars ``[R]`` (a null register or stack position is -1)."""

    n: Tensor
    on_stack: Tensor
    head: Tensor
    root: Tensor
    """The root of each word's partial tree (the word itself while it is headless)."""
    front: Tensor
    """β1; ``n + 1`` once the buffer is empty."""
    r1: Tensor
    r2: Tensor
    covered1: Tensor
    covered2: Tensor
    last: Tensor
    root_free: Tensor
    """0 has no dependent yet."""
    unattached: Tensor

    @property
    def index(self) -> Tensor:
        return torch.arange(self.head.shape[1], device=self.head.device)

    def at(self, table: Tensor, v: Tensor) -> Tensor:
        """``table[r, v[r]]``; a null ``v`` (-1), or one past the words (β1 of an empty
        buffer), reads the spare column."""
        width = table.shape[1]
        return table.gather(1, (v.clamp(-1, width - 1) % width)[:, None])[:, 0]

    def repeat(self, times: int) -> Words:
        """Every row ``times`` times in a row (row ``r * times + k``)."""
        return Words(
            **{f.name: getattr(self, f.name).repeat_interleave(times, 0) for f in fields(self)}
        )

    def take(self, rows: Tensor) -> Words:
        """The rows ``rows`` (indices), in that order."""
        return Words(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})

    def where(self, rows: Tensor, other: Words) -> Words:
        """``other``'s rows where ``rows [R]`` holds, this one's elsewhere."""
        picked = {}
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            picked[f.name] = torch.where(rows if mine.dim() == 1 else rows[:, None], theirs, mine)
        return Words(**picked)

    def stack_top(self) -> tuple[Tensor, Tensor]:
        """σ1 and σ2 (-1 when none): the highest stack word and the highest below it."""
        top = highest(self.on_stack)
        return top, highest(self.on_stack & (self.index < top[:, None]))

    def connected(self, v: Tensor) -> Tensor:
        """An arc from ``v`` would hang a tree from the root: ``v`` is in the root's tree, or
        is the root while it has no dependent (false for a null ``v``)."""
        return (v >= 0) & (self.at(self.root, v) == 0) & ((v != 0) | self.root_free)

    def headless(self, v: Tensor) -> Tensor:
        """``v`` is a word other than 0 without a head (false for a null ``v``)."""
        return (v >= 1) & (self.at(self.head, v) < 0)


def words_of(configs: Sequence[Configuration]) -> Words:
    """The reference's configurations as rows (for the host to run a tensor form on
    configurations it holds as :class:`~neuralparse.systems.two_registers.configuration.
    Configuration`, and for the tests)."""
    width = max(c.n for c in configs) + 2
    on_stack = torch.zeros((len(configs), width), dtype=torch.bool)
    head = torch.full((len(configs), width), -1, dtype=torch.long)
    for b, c in enumerate(configs):
        on_stack[b, c.stack] = True
        head[b, : c.n + 1] = torch.tensor([-1 if h is None else h for h in c.head])

    def scalar(values: list[int]) -> Tensor:
        return torch.tensor(values)

    def null(v: int | None) -> int:
        return -1 if v is None else v

    return Words(
        n=scalar([c.n for c in configs]),
        on_stack=on_stack,
        head=head,
        root=tree_roots(head),
        front=scalar([c.front for c in configs]),
        r1=scalar([null(c.r1) for c in configs]),
        r2=scalar([null(c.r2) for c in configs]),
        covered1=torch.tensor([c.covered1 for c in configs]),
        covered2=torch.tensor([c.covered2 for c in configs]),
        last=scalar([c.last for c in configs]),
        root_free=torch.tensor([c.leftmost[0] is None for c in configs]),
        unattached=scalar([c.unattached for c in configs]),
    )


def tree_roots(head: Tensor) -> Tensor:
    """The tree root of every word of ``head [R, W]`` (-1: none) by pointer doubling: a fixed
    ``ceil(log2 W) + 1`` gathers, whatever the trees."""
    index = torch.arange(head.shape[1], device=head.device).expand_as(head)
    root = torch.where(head >= 0, head, index)
    for _ in range(max(1, (head.shape[1] - 1).bit_length())):
        root = root.gather(1, root)
    return root


def extreme_dependents(head: Tensor) -> tuple[Tensor, Tensor]:
    """The leftmost and rightmost dependent of every word (INF / -1 when none; repair 2)."""
    spare = head.shape[1] - 1
    target = torch.where(head >= 0, head, spare)
    index = torch.arange(head.shape[1], device=head.device).expand_as(head)
    leftmost = torch.full_like(head, INF).scatter_reduce(1, target, index, "amin")
    rightmost = torch.full_like(head, -1).scatter_reduce(1, target, index, "amax")
    leftmost[:, -1].fill_(INF)
    rightmost[:, -1].fill_(-1)
    return leftmost, rightmost


def lowest(mask: Tensor) -> Tensor:
    """The lowest word of each row's ``mask`` (INF when none)."""
    index = torch.arange(mask.shape[1], device=mask.device)
    return torch.where(mask, index, INF).min(1).values


def highest(mask: Tensor) -> Tensor:
    """The highest word of each row's ``mask`` (-1 when none)."""
    index = torch.arange(mask.shape[1], device=mask.device)
    return torch.where(mask, index, -1).max(1).values


def between(x: Tensor, lo: Tensor, hi: Tensor) -> Tensor:
    """``x ∈ (lo, hi)``, false when one of them is null."""
    return (x >= 0) & (lo >= 0) & (hi >= 0) & (lo < x) & (x < hi)


def far_side_if_child(head_of_v: Tensor, v: Tensor, child: Tensor) -> Tensor:
    """Repair 2: ``v``, whose head is ``head_of_v``, would have ``child`` on the far side of
    its head (``Configuration.far_side_if_child``)."""
    return (head_of_v >= 0) & (between(head_of_v, child, v) | between(head_of_v, v, child))


def far_side_if_attached(leftmost: Tensor, rightmost: Tensor, v: Tensor, parent: Tensor) -> Tensor:
    """Repair 2: ``v``, with these extreme dependents (INF / -1 when none), would have a
    dependent on the far side of ``parent`` (``Configuration.far_side_if_attached``)."""
    return torch.where(parent < v, leftmost < parent, rightmost > parent)


# --- the closed forms, by phase ------------------------------------------------------------


def lowest_decides(w: Words, words: Tensor) -> tuple[Tensor, Tensor]:
    """``minC < minH`` over the words of mask ``words`` (0 left out): ``(decided, value)``,
    the value of the lowest word of H ∪ C (connected: true; headless: false)."""
    index = w.index
    headless = w.head < 0
    candidates = words & (index >= 1) & (headless | (w.root == 0))
    v = lowest(candidates)
    decided = v < INF
    return decided, decided & (w.at(w.head, torch.where(decided, v, -1)) >= 0)


def i0(w: Words) -> Tensor:
    """(I0): root free ∨ minC < minH over the stack."""
    return w.root_free | lowest_decides(w, w.on_stack)[1]


def gamma_closed_form(w: Words) -> Tensor:
    """:func:`~neuralparse.systems.two_registers.registers_empty.gamma_closed_form`."""
    b = w.front
    b_headed = w.at(w.head, b) >= 0
    b_connected = b_headed & (w.at(w.root, b) == 0)
    # The run of headless words on top of the stack goes to β1; below it all must be headed.
    index = w.index
    headless = (w.head < 0) & (index >= 1)
    floor = highest(w.on_stack & ~headless)
    all_headed_below = ~(w.on_stack & headless & (index <= floor[:, None])).any(1)
    general = i0(w) | (b_connected & all_headed_below)
    return torch.where((b == w.n) & b_headed, b_connected, general)


def phase_a_closed_form(w: Words) -> Tensor:
    """:func:`~neuralparse.systems.two_registers.exit.phase_a_closed_form`."""
    r1 = w.r1
    decided, value = lowest_decides(w, w.on_stack & (w.index < r1[:, None]))
    r1_connected = (r1 != 0) & (w.at(w.head, r1) >= 0) & (w.at(w.root, r1) == 0)
    return w.root_free | torch.where(decided, value, r1_connected)


def anchor_on_stack(w: Words) -> Tensor:
    """:func:`~neuralparse.systems.two_registers.exit.anchor_on_stack` (both registers held)."""
    top, second = w.stack_top()
    return (top == w.front - 1) & (top > w.r2) & (top > w.r1) & (second <= w.r1)


def phase_b_closed_form(w: Words) -> Tensor:
    """:func:`~neuralparse.systems.two_registers.exit.phase_b_closed_form`, its four stages
    on every row at once: the events of stage 2 (at most four) are sorted and replayed in a
    fixed number of steps."""
    index = w.index
    r1, r2, head, root = w.r1, w.r2, w.head, w.root
    rf = w.root_free
    root1, root2 = w.at(root, r1), w.at(root, r2)
    connected1, connected2 = w.connected(r1), w.connected(r2)
    headless1, headless2 = w.headless(r1), w.headless(r2)
    covered2 = w.covered2

    # 1. The lowest word right of R2 adopts the headless registers when it is connected.
    u0 = lowest(w.on_stack & (index > r2[:, None]))
    u0 = torch.where(u0 < INF, u0, -1)
    adopts = (u0 >= 0) & (w.at(head, u0) != r2) & (w.at(root, u0) == 0)
    u0_head = w.at(head, u0)
    adopt1 = adopts & headless1 & ~far_side_if_child(u0_head, u0, r1)
    adopt2 = adopts & headless2 & ~far_side_if_child(u0_head, u0, r2)
    headless1, connected1, covered2 = headless1 & ~adopt1, connected1 | adopt1, covered2 | adopt1
    headless2, connected2 = headless2 & ~adopt2, connected2 | adopt2
    # 2. Events among the words between the registers, replayed top down.
    middle = w.on_stack & (index > r1[:, None]) & (index < r2[:, None])
    adopter = middle & (head >= 0) & (root == 0)
    events = []  # (word, kind): kind 1 / 2 adopts that register, 0 a tree root's turn
    for kind, r, headless in ((1, r1, headless1), (2, r2, headless2)):
        top = highest(adopter & ~far_side_if_child(head, index, r[:, None]))
        events.append((torch.where(headless, top, -1), kind))
    for m in (root1, torch.where(root2 == root1, -1, root2)):
        turn = (r1 < m) & (m < r2) & (w.at(head, m) < 0)
        events.append((torch.where(turn, m, -1), 0))
    words = torch.stack([m for m, _ in events], 1)
    kinds = torch.tensor([kind for _, kind in events], device=words.device).expand_as(words)
    order = torch.argsort(words * 3 + kinds, 1, descending=True)
    words, kinds = words.gather(1, order), kinds.gather(1, order)
    root_used = torch.zeros_like(rf)
    failed = torch.zeros_like(rf)
    for e in range(words.shape[1]):
        m, kind = words[:, e], kinds[:, e]
        live = (m >= 0) & ~failed
        headless1 = headless1 & ~(live & (kind == 1))
        connected1 = connected1 | (live & (kind == 1))
        headless2 = headless2 & ~(live & (kind == 2))
        connected2 = connected2 | (live & (kind == 2))
        turn = live & (kind == 0)
        usable1 = (root1 != m) & ((r1 != 0) | (rf & ~root_used))
        usable2 = root2 != m
        prefer1 = (r1 != 0) & connected1 & ~connected2
        first, second = (
            torch.where(prefer1, usable1, usable2),
            torch.where(prefer1, usable2, usable1),
        )
        takes1 = torch.where(prefer1, first, ~first & second)
        failed |= turn & ~first & ~second
        go = turn & (first | second)
        root_used |= go & takes1 & (r1 == 0)
        new_root = torch.where(takes1, root1, root2)
        new_connected = torch.where(takes1, connected1, connected2)
        was1, was2 = go & (root1 == m), go & (root2 == m)
        root1, connected1 = torch.where(was1, new_root, root1), connected1 | (was1 & new_connected)
        root2, connected2 = torch.where(was2, new_root, root2), connected2 | (was2 & new_connected)
    rf = rf & ~root_used
    connected1 = torch.where(r1 == 0, rf, connected1)
    # 3. The anchor β1 adopts the headless registers and hangs from a connected one.
    adopted1, adopted2 = headless1, headless2
    covered2 = covered2 | adopted1
    w_connected = (connected1 | connected2) & (~adopted1 | (w.n - w.front >= 1))
    rf = rf & ~(w_connected & ~connected2 & (r1 == 0))
    # 4. After Clear: the arc-eager completion over the words below R1 and the uncovered
    #    registers, the run of headless words on top hanging from the anchor.
    is_r1, is_r2 = index == r1[:, None], index == r2[:, None]
    rest = (w.on_stack & (index < r1[:, None])) | (is_r1 & ~w.covered1[:, None])
    rest |= is_r2 & ~covered2[:, None]
    adopted = (is_r1 & adopted1[:, None]) | (is_r2 & adopted2[:, None])
    headless = (index >= 1) & (head < 0) & ~adopted
    floor = highest(rest & ~headless)
    scanned = rest & (index >= 1) & (index <= floor[:, None])
    decisive = (is_r1 & (w_connected | connected1)[:, None]) | (
        is_r2 & (w_connected | connected2)[:, None]
    )
    decisive |= root == 0
    v = lowest(scanned & (headless | decisive))
    found = v < INF
    v_headless = headless.gather(1, torch.where(found, v, 0)[:, None])[:, 0]
    value = torch.where(found, torch.where(v_headless, rf, True), w_connected | rf)
    return value & ~failed


def r1_empty_buffer_closed_form(w: Words) -> Tensor:
    """:func:`~neuralparse.systems.two_registers.empty_buffer.r1_empty_buffer_closed_form`:
    empty buffer, R1 held alone, exact completability."""
    index, head, root = w.index, w.head, w.root
    r1, n = w.r1, w.n
    left = w.on_stack & (index < r1[:, None])
    right = w.on_stack & (index > r1[:, None])
    u0 = lowest(right)
    stuck = (right & (index > u0[:, None]) & (head < 0)).any(1)
    headless = w.on_stack & (index >= 1) & (head < 0)
    leftmost, rightmost = extreme_dependents(head)
    far_from_r1 = far_side_if_attached(leftmost, rightmost, index, r1[:, None])
    count = headless.sum(1)
    # Clear ends the parse: R1 gives every headless stack word its head.
    adopter = (left | (index == u0[:, None])) & (root == 0) & ((index != 0) | w.root_free[:, None])
    adopter &= ~far_side_if_child(head, index, r1[:, None])
    r1_headed = w.at(head, r1) >= 0
    ends = torch.where(
        r1 == 0,
        (count == 0) | ((count == 1) & w.root_free),
        torch.where(r1_headed, (count == 0) | (w.at(root, r1) == 0), adopter.any(1)),
    )
    ends &= ~(headless & far_from_r1).any(1)
    # Clear returns n (the only word right of R1).
    only_n = u0 == n  # then n is the only word right of R1
    n_headed = w.at(head, n) >= 0
    n_hangs = ~w.at(far_from_r1, n) & w.connected(r1)
    completion = w.root_free | lowest_decides(w, left | (index == r1[:, None]))[1]
    returns_n = only_n & torch.where(n_headed, w.at(root, n) == 0, n_hangs | completion)
    return ~stuck & (ends | returns_n)


def both_registers_clear_ends(w: Words) -> tuple[Tensor, Tensor]:
    """Empty buffer, both registers held, R2 < n, both registers already in the root's
    tree: ``(decided, completable)``.  Then no register needs an adopter, and the search of
    :func:`~neuralparse.systems.two_registers.empty_buffer.both_registers_empty_buffer` for
    Clear ending the parse (T) has a single play: every headless word that acts (the stack
    words left of R2 and the lowest one right of it; those above it must be headed) takes
    its head from R1 where it may (only R1 at or left of ``last``), else from R2; it fails
    when some word can take none, or when IsCovered(R1) then blocks a word at or left of
    ``last``.  When T fails, Clear returning σ1 = n (G1) may still complete the
    configuration: undecided when n alone is right of R1 on the stack.  This is the cheap
    case decided on every row; the full search of the phase
    (:mod:`~neuralparse.systems.two_registers.tensor_both_registers`) runs on few rows."""
    index, head, root = w.index, w.head, w.root
    r1, r2, last = w.r1[:, None], w.r2[:, None], w.last[:, None]
    upper = w.on_stack & (index > r2)
    u0 = lowest(upper)
    stuck = (upper & (index > u0[:, None]) & (head < 0)).any(1)
    turns = (w.on_stack & (index < r2)) | (index == u0[:, None])
    headless = turns & (index >= 1) & (head < 0)
    leftmost, rightmost = extreme_dependents(head)
    # Type (3): a word left of R1 may not take a head while it heads R2, one right of R2
    # while it heads R1.
    far_head = torch.where(
        index < r1,
        w.at(head, w.r2)[:, None],
        torch.where(index > r2, w.at(head, w.r1)[:, None], -2),
    )
    low = index <= last

    def receives(rk: Tensor) -> Tensor:
        """Rk -> word (Register-Stack(k, to-stack)): type (3), a free root, repair 2 (type
        (1), only R1 at or left of ``last``, is in the choice below)."""
        ok = (far_head != index) & ((rk != 0) | w.root_free[:, None])
        return ok & ~far_side_if_attached(leftmost, rightmost, index, rk)

    from_r1, from_r2 = receives(r1), receives(r2)
    # R2's tree hangs from the root, so the root has its dependent: R1 = 0 gives no head
    # (``receives``), and R2-first for R1 = 0 and the single root arc never come into play.
    takes1 = from_r1
    takes2 = ~low & ~from_r1 & from_r2
    fails = (headless & ~takes1 & ~takes2).any(1)
    covered1 = w.covered1 | (headless & takes2 & (index < r1)).any(1)
    blocked = covered1 & (headless & low).any(1)
    ends = ~stuck & ~fails & ~blocked
    top, second = w.stack_top()
    n_may_return = (top == w.n) & (second < w.r1)
    applies = (w.r2 != w.n) & (w.at(root, w.r1) == 0) & (w.at(root, w.r2) == 0)
    return applies & (ends | ~n_may_return), ends
