"""The two-registers exit rule as tensor operations, for the phases whose closed forms are
masked reductions over the words (Pitler & McDonald 2015, Tables 2 and 4; the closed forms of
:mod:`~neuralparse.systems.two_registers.exit`,
:mod:`~neuralparse.systems.two_registers.registers_empty` and
:mod:`~neuralparse.systems.two_registers.empty_buffer`;
docs/dev/two-registers-completability.md).

A configuration is held as per-word rows (:class:`Words`): stack membership, head and tree
root of every word, and the scalars of Table 2.  Because the stack is increasing bottom to top
(Shift and Right-Arc push β1, Clear pushes ψ above σ2), membership alone is the stack: σ1 is
the highest member, σ2 the highest below it, and "the stack words left of R1" a mask.  So
every closed form below is a fixed number of elementwise operations and min / max reductions
over the words, with no host read and no loop over the configuration.

:func:`exit_rule` applies each of the twelve moves to a copy of every row
(:func:`successors`: at most one arc, at most three words pushed, one popped), decides
Table 4 with repairs 1-5 (:func:`table4`), and decides the exit rule on each successor by
its phase (:func:`exit_finishes`): terminal, registers empty (a fresh β1: (I0); β1 put back
by Clear: :func:`gamma_closed_form`), phase A, phase B (with the anchor on the stack, after
E's next moves, at most :data:`ANCHORED_MOVES`), and an empty buffer with R1 alone (exact
completability, :func:`r1_empty_buffer_closed_form`).  Successors with an empty buffer and
both registers held are not decided here (their exact rule is a search with no bounded
tensor form yet): a row with a legal move into that phase is *undecided*, and the caller
decides it on the host or abandons it (:mod:`~neuralparse.systems.two_registers.mask`).

Cost: a few thousand small operators per call whatever the batch (3,838 per greedy step in
``python -m benchmarks.step_operators --two-registers-graphs``, against 509 for the variant
that abandons every slow row), O(n) work per row.  On the CPU that is 10-17 ms a call, more
than the host's 0.2-4.3 ms for the 1-64 slow rows of a step, so the eager loop keeps the host;
the CUDA-graph variant uses it with ``TwoRegisters(graph_rule="tensor")``.  Tests compare
every decided row with :func:`~neuralparse.systems.two_registers.exit.exit_legal`, on the
reachable configurations of short sentences, on random walks and on arbitrary
configurations.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import torch
from torch import Tensor

from neuralparse.systems.two_registers.configuration import Move

INF = 1 << 30
""":func:`lowest` of an empty set (and the mask's minH / minC when there is no such word):
above every word index and step count, and small enough that sums and differences of a few
of them stay far inside int64."""
N_MOVES = len(Move)


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

    def where(self, rows: Tensor, other: Words) -> Words:
        """``other``'s rows where ``rows [R]`` holds, this one's elsewhere."""
        picked = {}
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            picked[f.name] = torch.where(rows if mine.dim() == 1 else rows[:, None], theirs, mine)
        return Words(**picked)

    def connected(self, v: Tensor) -> Tensor:
        """An arc from ``v`` would hang a tree from the root: ``v`` is in the root's tree, or
        is the root while it has no dependent (false for a null ``v``)."""
        return (v >= 0) & (self.at(self.root, v) == 0) & ((v != 0) | self.root_free)

    def headless(self, v: Tensor) -> Tensor:
        """``v`` is a word other than 0 without a head (false for a null ``v``)."""
        return (v >= 1) & (self.at(self.head, v) < 0)


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
    leftmost[:, spare], rightmost[:, spare] = INF, -1
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


# --- Table 4 -------------------------------------------------------------------------------


def can_attach(w: Words, h: Tensor, m: Tensor) -> Tensor:
    """§4: ``m`` is not the root and has no head, ``h`` is not its descendant, and the root
    takes a single dependent."""
    ok = (h >= 0) & (m >= 1) & (w.at(w.head, m) < 0)
    ok &= (h != 0) | w.root_free
    return ok & (w.at(w.root, h) != m)


def table4(w: Words) -> Tensor:
    """``[R, 12]``: Table 2's applicability and Table 4's preconditions with repairs 1-5
    (:func:`~neuralparse.systems.two_registers.configuration.table4_legal`)."""
    index = w.index
    s1 = highest(w.on_stack)
    s2 = highest(w.on_stack & (index < s1[:, None]))
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
        """:func:`can_attach` of two operands."""
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
        far_child = (s1_head >= 0) & (between(s1_head, rk, s1) | between(s1_head, s1, rk))
        to_register = base & attach("s1", f"r{k}") & ~far_child
        to_register &= inside | (r_close < 0) | (s1_head != r_close)
        far_attached = torch.where(rk < s1, leftmost < rk, rightmost > rk)
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


def apply_moves(w: Words, t: Tensor) -> tuple[Words, Tensor]:
    """Move ``t[r]`` applied to row ``r`` as Table 2 says (meaningful where :func:`table4`
    allows it), and the head of the arc it adds (-1: none)."""
    s1 = highest(w.on_stack)
    index = w.index
    front, r1, r2 = w.front, w.r1, w.r2
    none = torch.full_like(front, -1)
    store = (t >= Move.STORE_NO_ARC) & (t <= Move.STORE_RIGHT)
    rs1 = (t == Move.REGISTER_STACK_1_TO_REGISTER) | (t == Move.REGISTER_STACK_1_TO_STACK)
    rs2 = (t == Move.REGISTER_STACK_2_TO_REGISTER) | (t == Move.REGISTER_STACK_2_TO_STACK)
    to_register = (t == Move.REGISTER_STACK_1_TO_REGISTER) | (
        t == Move.REGISTER_STACK_2_TO_REGISTER
    )
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
        dep, head = torch.where(t == move, d, dep), torch.where(t == move, h, head)
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
    clear = t == Move.CLEAR
    gamma = torch.where(s1 == front - 1, s1, torch.where(r2 == front - 1, r2, none))
    psi = [s1, torch.where(covered1, none, r1), torch.where(covered2, none, r2)]
    psi = [torch.where(v == gamma, none, v) for v in psi]
    last = torch.stack([gamma, *psi], 1).max(1).values
    # The stack: one word popped, then up to three pushed.
    pops = (t == Move.LEFT_ARC) | (t == Move.REDUCE) | clear | (rs & ~to_register & (s1 < rk))
    pushed = torch.zeros_like(w.on_stack)
    for word, when in (
        (front, (t == Move.SHIFT) | (t == Move.RIGHT_ARC)),
        *((v, clear) for v in psi),
    ):
        pushed |= (when & (word >= 0))[:, None] & (index == word[:, None])
    popped = (pops & (s1 >= 0))[:, None] & (index == s1[:, None])
    moved = (t == Move.SHIFT) | (t == Move.RIGHT_ARC) | store
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
    top = highest(w.on_stack)
    second = highest(w.on_stack & (w.index < top[:, None]))
    return (top == w.front - 1) & (top > w.r2) & (top > w.r1) & (second <= w.r1)


def phase_b_closed_form(w: Words) -> Tensor:
    """:func:`~neuralparse.systems.two_registers.exit.phase_b_closed_form`, its four stages
    on every row at once: the events of stage 2 (at most four) are sorted and replayed in a
    fixed number of steps."""
    index = w.index
    r1, r2, head, root = w.r1, w.r2, w.head, w.root
    rf = w.root_free
    root1, root2 = w.at(root, r1), w.at(root, r2)
    connected1 = ((root1 == 0) & (r1 != 0)) | ((r1 == 0) & rf)
    connected2 = root2 == 0
    headless1 = (r1 != 0) & (w.at(head, r1) < 0)
    headless2 = w.at(head, r2) < 0
    covered2 = w.covered2

    def may_adopt(word: Tensor, r: Tensor) -> Tensor:
        """Repair 2 for ``word [R]`` or every word (``word [R, W]``) adopting register ``r``."""
        g = head.gather(1, word) if word.dim() == 2 else w.at(head, word)
        r = r[:, None] if word.dim() == 2 else r
        return ~((g >= 0) & (((r < g) & (g < word)) | ((word < g) & (g < r))))

    # 1. The lowest word right of R2 adopts the headless registers when it is connected.
    u0 = lowest(w.on_stack & (index > r2[:, None]))
    u0 = torch.where(u0 < INF, u0, -1)
    adopts = (u0 >= 0) & (w.at(head, u0) != r2) & (w.at(root, u0) == 0)
    adopt1 = adopts & headless1 & may_adopt(u0, r1)
    adopt2 = adopts & headless2 & may_adopt(u0, r2)
    headless1, connected1, covered2 = headless1 & ~adopt1, connected1 | adopt1, covered2 | adopt1
    headless2, connected2 = headless2 & ~adopt2, connected2 | adopt2
    # 2. Events among the words between the registers, replayed top down.
    middle = w.on_stack & (index > r1[:, None]) & (index < r2[:, None])
    every = index.expand_as(head)
    adopter = middle & (head >= 0) & (root == 0)
    events = []  # (word, kind): kind 1 / 2 adopts that register, 0 a tree root's turn
    for kind, r, headless in ((1, r1, headless1), (2, r2, headless2)):
        top = highest(adopter & may_adopt(every, r))
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
    far_from_r1 = torch.where(index > r1[:, None], leftmost < r1[:, None], rightmost > r1[:, None])
    count = headless.sum(1)
    # Clear ends the parse: R1 gives every headless stack word its head.
    g = head
    adopter = (left | (index == u0[:, None])) & (root == 0) & ((index != 0) | w.root_free[:, None])
    adopter &= ~((g >= 0) & (between(g, r1[:, None], index) | between(g, index, r1[:, None])))
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
    anchors1, anchors2 = (r1 >= 0) & w.connected(r1), (r2 >= 0) & w.connected(r2)
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
    closed form here: all but an empty buffer with both registers held.  With the anchor on
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
    decided = failed | ~((buffer_empty & (w.r2 >= 0)) | still)
    empty = torch.where(
        buffer_empty,
        w.unattached == 0,
        torch.where(w.front <= w.last, gamma_closed_form(w), i0(w)),
    )
    held = torch.where(w.r2 < 0, phase_a_closed_form(w), phase_b_closed_form(w))
    held = torch.where(buffer_empty, r1_empty_buffer_closed_form(w), held)
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
