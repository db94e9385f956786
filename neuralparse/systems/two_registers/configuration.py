"""The two-registers configuration and its moves (Pitler & McDonald 2015, §4-6, Tables 2-4):
the plain-Python reference semantics, written to read like Table 2 (:func:`apply_move`) and
Table 4 (:func:`table4_legal`), with the completion plans of the dead-end rule.  The static
oracle (:mod:`neuralparse.systems.two_registers.oracle`) and the exit rule
(:mod:`neuralparse.systems.two_registers.exit`) run on it, and the engine
(:class:`~neuralparse.systems.two_registers.system.TwoRegisters`, registry name
``two_registers``) decides its slow rows with it and is tested against it step by step.

Configuration (§4): ``c = (σ, β, R1, R2, A)``.  Initial ``([], [0..n], null, null, {})``:
the artificial root 0 starts in the buffer and is shifted or stored like a word.  Terminal:
empty buffer and empty registers (Table 2).  The buffer is always a contiguous range
``front..n`` (Clear only ever puts back ``γ = β1 - 1``), so it is the scalar ``front``, with
``β1 = n + 1`` standing for the empty buffer (design note
``docs/dev/notes/03-two-registers.md``, item 7, whose other readings are followed too: ψ
pushed left to right after popping σ1, ``last`` starting at −1 and set to ``max(γ ∪ ψ)`` by
Clear, arc-eager's has-head preconditions kept).

Transitions (Table 2): the arc-eager four, ``Store(left | right | no-arc)``, ``Clear`` and
``Register-Stack(k, to-register | to-stack)`` for ``k in {1, 2}``.

Preconditions: Table 4 with the book-keeping of footnotes 2-3 (``IsCovered(Rk)`` flags, set
only by Register-Stack arcs over a register; ``last``), plus, as §4 says, for every arc
``(h, m)``: ``m`` is not the root, ``m`` has no head yet, and ``h`` is not a descendant of
``m``.  The literal table has gaps (design note 03, items 1-6); the repairs made here:

1. Type (3) with ``R1 < σ1 < R2``: Table 4's "otherwise" case makes the two Register-Stack
   arcs of ``[3,5,5,1,0]`` block each other.  Between the registers the type-(3) checks
   protect nothing (a register on either side is never on the far side of the other), so
   they are applied only when ``σ1`` lies outside ``[R1, R2]``.
2. A Register-Stack arc must not make its stack word a word with a child on the far side of
   its parent (Definition 3 (b)); ``[3,5,2,1,0]`` is derivable otherwise.  Checked in O(1)
   from each word's head and leftmost/rightmost child.
3. Clear requires every covered register to have a head (Clear drops covered registers;
   a headless one could never be attached again).
4. Rootedness: an arc from 0 is legal only while 0 has no dependent (exactly one word is
   attached to 0 at the end, as UD requires; the dead-end masking guarantees "at least").
5. Acyclicity (note 03, item 6): the new dependent is always headless, i.e. the root of its own
   tree, so ``h -> m`` closes a cycle exactly when the tree root of ``h`` is ``m``.
6. Dead ends (note 03, item 5: a quarter of the literal random walks get stuck): masking, no
   finishing step.  A move is legal only if afterwards one of sixteen fixed completion
   plans (:class:`CompletionPlan`) still finishes the parse with a single-rooted tree.
   Plans choose moves from the configuration alone, so a plan that completes ``c`` also
   completes the successor along its own first move: no legal configuration is a dead end,
   and every terminal one holds a complete tree.  Tested exhaustively up to 5 words and on
   random walks; the oracle's derivations of all 2-CI UD training trees pass the mask.  The
   price: the check runs the plans, O(n) per candidate move, except where the closed form of
   :mod:`neuralparse.systems.two_registers.mask` decides (registers empty, fresh ``β1``).
   The engine's default, ``TwoRegisters(dead_end_rule="exit")``, uses one exit plan instead
   (:mod:`neuralparse.systems.two_registers.exit`): the same guarantees, a slightly larger
   mask, and its success decided by closed forms (one scan of the stack) everywhere but the
   empty-buffer register phases; ``dead_end_rule="plans"`` keeps this rule.

Known completeness gap (note 03, item 4): ``[3,5,4,5,0,1]`` and ``[3,6,4,6,1,0]`` are
2-Crossing-Interval but unreachable even by Table 4 with repairs 1-5 alone: a word between
``a`` and ``b`` needs a crossed arc to ``a`` but must be removed by Left-Arc before ``b`` can
be stored.  No UD training tree of the shared treebanks hits it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum


class Move(IntEnum):
    """The unlabeled transitions of Table 2, in a fixed inventory order (the value is the
    engine's transition id), each with its two names: ``readable``, as Table 2/3 writes it
    (``Register-Stack(2, to-stack)``), and ``engine_name``, the transition's name in the
    engine's action names (``REGISTER-STACK(2,to-stack)``)."""

    readable: str
    engine_name: str

    def __new__(cls, value: int, readable: str, engine_name: str) -> Move:
        move = int.__new__(cls, value)
        move._value_ = value
        move.readable = readable
        move.engine_name = engine_name
        return move

    LEFT_ARC = 0, "Left-Arc", "LEFT-ARC"
    RIGHT_ARC = 1, "Right-Arc", "RIGHT-ARC"
    SHIFT = 2, "Shift", "SHIFT"
    REDUCE = 3, "Reduce", "REDUCE"
    STORE_NO_ARC = 4, "Store(no-arc)", "STORE(no-arc)"
    STORE_LEFT = 5, "Store(left)", "STORE(left)"
    STORE_RIGHT = 6, "Store(right)", "STORE(right)"
    CLEAR = 7, "Clear", "CLEAR"
    REGISTER_STACK_1_TO_REGISTER = (
        8,
        "Register-Stack(1, to-register)",
        "REGISTER-STACK(1,to-register)",
    )
    REGISTER_STACK_1_TO_STACK = 9, "Register-Stack(1, to-stack)", "REGISTER-STACK(1,to-stack)"
    REGISTER_STACK_2_TO_REGISTER = (
        10,
        "Register-Stack(2, to-register)",
        "REGISTER-STACK(2,to-register)",
    )
    REGISTER_STACK_2_TO_STACK = 11, "Register-Stack(2, to-stack)", "REGISTER-STACK(2,to-stack)"


REGISTER_STACK_MOVES: dict[Move, tuple[int, bool]] = {
    # move -> (k, to_register)
    Move.REGISTER_STACK_1_TO_REGISTER: (1, True),
    Move.REGISTER_STACK_1_TO_STACK: (1, False),
    Move.REGISTER_STACK_2_TO_REGISTER: (2, True),
    Move.REGISTER_STACK_2_TO_STACK: (2, False),
}
ARC_MOVES = frozenset(
    {Move.LEFT_ARC, Move.RIGHT_ARC, Move.STORE_LEFT, Move.STORE_RIGHT, *REGISTER_STACK_MOVES}
)
"""Transitions that add one arc (they carry a dependency label in a labeled parser)."""


def in_open_interval(x: int | None, lo: int | None, hi: int | None) -> bool:
    """``x ∈ (lo, hi)``; false whenever one of them is null (Table 4 reads a null register
    or stack position as lying nowhere)."""
    return x is not None and lo is not None and hi is not None and lo < x < hi


@dataclass
class Configuration:
    """One two-registers configuration ``(σ, β, R1, R2, A)`` with its book-keeping.

    ``head[v]`` is the head of vertex ``v`` (``None`` while unattached; ``head[0]`` stays
    ``None``), ``leftmost[v]``/``rightmost[v]`` its extreme dependents (for repair 2),
    ``covered1``/``covered2`` the IsCovered flags of footnote 2, ``last`` the vertex of
    footnote 3 (−1 before the first Clear so that vertex 0 can be stored), ``unattached``
    the number of words without a head, ``arcs`` the arcs ``(head, dependent)`` in the order
    they were built.
    """

    n: int
    stack: list[int] = field(default_factory=list)
    front: int = 0
    r1: int | None = None
    r2: int | None = None
    head: list[int | None] = field(default_factory=list)
    leftmost: list[int | None] = field(default_factory=list)
    rightmost: list[int | None] = field(default_factory=list)
    covered1: bool = False
    covered2: bool = False
    last: int = -1
    unattached: int = 0
    arcs: list[tuple[int, int]] = field(default_factory=list)

    @classmethod
    def initial(cls, n: int) -> Configuration:
        """``([], [0..n], null, null, {})`` (Table 2, two-registers)."""
        none: list[int | None] = [None] * (n + 1)
        return cls(n=n, head=list(none), leftmost=list(none), rightmost=list(none), unattached=n)

    def copy(self) -> Configuration:
        # Field by field rather than dataclasses.replace, which costs more than the copy
        # itself on the legal mask's slow path.
        twin = object.__new__(Configuration)
        twin.__dict__.update(self.__dict__)
        twin.stack = self.stack.copy()
        twin.head = self.head.copy()
        twin.arcs = self.arcs.copy()
        twin.leftmost = self.leftmost.copy()
        twin.rightmost = self.rightmost.copy()
        return twin

    # --- positions -----------------------------------------------------------------------
    @property
    def beta1(self) -> int:
        """The buffer front; ``n + 1`` when the buffer is empty (note 03, item 7)."""
        return self.front

    @property
    def buffer_empty(self) -> bool:
        return self.front > self.n

    @property
    def sigma1(self) -> int | None:
        return self.stack[-1] if self.stack else None

    @property
    def sigma2(self) -> int | None:
        return self.stack[-2] if len(self.stack) >= 2 else None

    def register(self, k: int) -> int | None:
        return self.r1 if k == 1 else self.r2

    @property
    def r_right(self) -> int | None:
        """``Rright := (R2 = null) ? R1 : R2`` (Table 4)."""
        return self.r1 if self.r2 is None else self.r2

    def is_terminal(self) -> bool:
        """Empty buffer and empty registers (Table 2)."""
        return self.buffer_empty and self.r1 is None and self.r2 is None

    def heads(self) -> list[int]:
        """The arcs as a heads list (word 1 first); unattached words get ``-1``."""
        return [-1 if h is None else h for h in self.head[1:]]

    @property
    def root_has_dependent(self) -> bool:
        return self.leftmost[0] is not None

    def tree_root(self, v: int) -> int:
        """The root of the partial tree containing ``v`` (follows heads; the reference may
        walk, the tensor version keeps this per word)."""
        while (h := self.head[v]) is not None:
            v = h
        return v

    def connected(self, v: int) -> bool:
        """Whether an arc from ``v`` would hang a tree from the root: ``v`` is in the root's
        tree, or is the root itself while it has no dependent."""
        return self.tree_root(v) == 0 and (v != 0 or not self.root_has_dependent)

    # --- arcs ----------------------------------------------------------------------------
    def can_attach(self, h: int | None, m: int | None) -> bool:
        """§4: ``m`` is not the root, has no head, ``h`` is not its descendant; rootedness:
        0 takes a single dependent."""
        if h is None or m is None or m == 0 or self.head[m] is not None:
            return False
        if h == 0 and self.root_has_dependent:
            return False
        return self.tree_root(h) != m

    def far_side_if_attached(self, v: int, parent: int) -> bool:
        """Whether ``v`` would have a dependent on the far side of ``parent``."""
        lm, rm = self.leftmost[v], self.rightmost[v]
        if parent < v:
            return lm is not None and lm < parent
        return rm is not None and rm > parent

    def far_side_if_child(self, v: int, child: int) -> bool:
        """Whether ``v`` (with its current head) would have ``child`` on the far side."""
        g = self.head[v]
        return g is not None and (child < g < v or v < g < child)

    def add_arc(self, h: int, m: int) -> None:
        self.head[m] = h
        self.unattached -= 1
        self.arcs.append((h, m))
        if self.leftmost[h] is None or m < self.leftmost[h]:
            self.leftmost[h] = m
        if self.rightmost[h] is None or m > self.rightmost[h]:
            self.rightmost[h] = m

    def is_covered(self, k: int) -> bool:
        return self.covered1 if k == 1 else self.covered2


# --- preconditions (Table 4 + repairs) ---------------------------------------------------
def _no_register_between(c: Configuration) -> bool:
    """Type (2) for Left-Arc/Right-Arc: ``R1 ∉ (σ1, β1) ∧ R2 ∉ (σ1, β1)``."""
    return not (
        in_open_interval(c.r1, c.sigma1, c.beta1) or in_open_interval(c.r2, c.sigma1, c.beta1)
    )


def _register_stack_legal(c: Configuration, k: int, to_register: bool) -> bool:
    """Table 4's three Register-Stack rows with repairs 1 and 2."""
    s1, rk = c.sigma1, c.register(k)
    if s1 is None or rk is None:
        return False
    head, dep = (s1, rk) if to_register else (rk, s1)
    if not c.can_attach(head, dep):
        return False
    # Type (1): (σ1 > last) ∨ (k = 1 ∧ ¬IsCovered(R1)).
    if not (s1 > c.last or (k == 1 and not c.covered1)):
        return False
    # Type (2): σ2 < Rright.
    s2, r_right = c.sigma2, c.r_right
    if s2 is not None and r_right is not None and not s2 < r_right:
        return False
    # Type (3), applied only outside the registers (repair 1).  Rclose/Rfar as in Table 4.
    between = c.r1 is not None and c.r2 is not None and c.r1 < s1 < c.r2
    if not between:
        r_close, r_far = (c.r1, c.r2) if c.r1 is not None and s1 < c.r1 else (c.r2, c.r1)
        if to_register and r_close is not None and c.head[s1] == r_close:
            return False  # (Rclose, σ1) ∈ A
        if not to_register and r_far is not None and c.head[r_far] == s1:
            return False  # (σ1, Rfar) ∈ A
    # Repair 2: σ1 must not get a dependent on the far side of its parent.
    if to_register:
        return not c.far_side_if_child(s1, rk)
    return not c.far_side_if_attached(s1, rk)


def table4_legal(c: Configuration, move: Move) -> bool:
    """Table 2's applicability, Table 4's preconditions, §4's arc conditions and repairs
    1-5 (module docstring); without the dead-end rules of :func:`dead_end_free`."""
    s1, b1 = c.sigma1, c.beta1
    if move is Move.LEFT_ARC:
        return not c.buffer_empty and c.can_attach(b1, s1) and _no_register_between(c)
    if move is Move.RIGHT_ARC:
        return not c.buffer_empty and c.can_attach(s1, b1) and _no_register_between(c)
    if move is Move.SHIFT:
        return not c.buffer_empty
    if move is Move.REDUCE:
        # Arc-eager's own has-head precondition (note 03, item 7).
        return s1 is not None and c.head[s1] is not None
    if move in (Move.STORE_NO_ARC, Move.STORE_LEFT, Move.STORE_RIGHT):
        if c.buffer_empty or not (c.r1 is None or c.r2 is None) or not b1 > c.last:
            return False
        if move is Move.STORE_LEFT:
            return c.r1 is not None and c.can_attach(b1, c.r1)
        if move is Move.STORE_RIGHT:
            return c.r1 is not None and c.can_attach(c.r1, b1)
        return True
    if move is Move.CLEAR:
        if c.r1 is None or not (c.r2 is not None or c.buffer_empty):
            return False
        if c.sigma2 is not None and not c.sigma2 < c.r1:
            return False
        if in_open_interval(s1, c.r1, c.r2):
            return False
        # Repair 3: a covered register is dropped, so it must already have its head.
        return all(
            not c.is_covered(k) or c.head[r] is not None
            for k, r in ((1, c.r1), (2, c.r2))
            if r is not None
        )
    k, to_register = REGISTER_STACK_MOVES[move]
    return _register_stack_legal(c, k, to_register)


def gamma(c: Configuration) -> int | None:
    """Clear's ``γ := (σ1 = β1 − 1) ? σ1 : (R2 = β1 − 1) ? R2 : null`` (Table 2)."""
    if c.sigma1 is not None and c.sigma1 == c.beta1 - 1:
        return c.sigma1
    if c.r2 is not None and c.r2 == c.beta1 - 1:
        return c.r2
    return None


@dataclass(frozen=True)
class CompletionPlan:
    """A fixed way to finish a configuration with a single-rooted tree (note 03, item 5).

    A plan chooses the next move from the configuration alone, so following it from ``c``
    and from its own successor is the same path: if the plan completes ``c``, its first move
    is legal (plans only take Table 4 moves) and leads to a configuration it completes too.
    Masking every move after which no plan completes the configuration
    (:func:`dead_end_free`) therefore leaves no dead end, and every terminal configuration
    holds a complete tree.

    Every plan finishes arc-eager style once the registers are empty: Left-Arc each
    headless stack word to β1, shift all but the last word, and attach the last word to
    the stack word that connects it to the root.  The plans differ in how they empty the
    registers:

    * ``anchored``: while the buffer is not empty, keep the registers and hang the rest of
      the sentence from them (the words right of the registers form a Left-Arc chain whose
      last word gets its head by Register-Stack to-stack); otherwise empty them at once;
    * ``clear_first``: Clear as soon as it is legal and loses no headless register, rather
      than first attaching the stack top (by Left-Arc or Register-Stack to-stack);
    * ``register_order``: which register a headless stack top is attached to first;
    * ``adopt_first``: a headless stack top first becomes the head of a headless register.

    In both, a register that Clear would lose headless (covered, or put back on the stack
    with an empty buffer) first gets a head by Register-Stack to-register, preferably from
    a stack word connected to the root.
    """

    anchored: bool
    clear_first: bool
    register_order: tuple[int, int] = (2, 1)
    adopt_first: bool = False

    def __call__(self, c: Configuration) -> Move | None:
        if c.r1 is None:
            return arc_eager_completion_move(c)
        if self.anchored and not c.buffer_empty:
            return _anchored_move(c)
        return register_completion_move(c, self)


def arc_eager_completion_move(c: Configuration) -> Move | None:
    s1, b1 = c.sigma1, c.beta1
    if s1 is not None and s1 != 0 and c.head[s1] is None:
        if table4_legal(c, Move.LEFT_ARC):
            return Move.LEFT_ARC
        # β1 hangs below σ1 (γ put back by Clear): move it out of the way.
        return Move.SHIFT if b1 < c.n and c.head[b1] is not None else None
    if b1 < c.n:
        return Move.SHIFT
    if c.head[b1] is None:
        if c.unattached == 1 and table4_legal(c, Move.RIGHT_ARC):
            return Move.RIGHT_ARC
    elif c.unattached == 0:
        return Move.SHIFT
    return Move.REDUCE if s1 is not None and s1 != 0 and c.head[s1] is not None else None


def _anchored_move(c: Configuration) -> Move | None:
    s1, r_right = c.sigma1, c.r_right
    assert r_right is not None
    if s1 is not None and s1 > r_right:
        if c.head[s1] is not None:
            return Move.REDUCE
        return Move.LEFT_ARC if table4_legal(c, Move.LEFT_ARC) else None
    return Move.SHIFT


def register_completion_move(c: Configuration, plan: CompletionPlan) -> Move | None:
    """How ``plan`` empties the registers: attach the stack words top-down (to β1, else to
    a register), give every register that Clear would lose a head from a stack word
    (preferably one connected to the root), then Clear."""
    if c.r2 is None and not c.buffer_empty:
        return Move.STORE_NO_ARC
    g = gamma(c)
    losing = [
        k
        for k, register, covered in ((1, c.r1, c.covered1), (2, c.r2, c.covered2))
        if register is not None
        and register != 0
        and c.head[register] is None
        and (covered or (c.buffer_empty and register != g))
    ]
    clear = [] if losing else [Move.CLEAR]
    candidates: list[Move] = list(clear) if plan.clear_first else []
    s1 = c.sigma1
    to_register = [_REGISTER_STACK[k, True] for k in losing]
    if s1 is not None and c.connected(s1):
        candidates += to_register
    if s1 is not None and s1 != 0:
        if c.head[s1] is not None:
            candidates.append(Move.REDUCE)
        else:
            candidates.append(Move.LEFT_ARC)
            if plan.adopt_first:
                # σ1 first becomes the head of a headless register, then gets its own head
                # from the other register.
                candidates += [
                    _REGISTER_STACK[k, True]
                    for k in plan.register_order
                    if c.register(k) not in (None, 0) and c.head[c.register(k)] is None
                ]
            candidates += [_REGISTER_STACK[k, False] for k in plan.register_order]
    candidates += to_register + clear
    return next((m for m in candidates if table4_legal(c, m)), None)


_REGISTER_STACK = {
    (k, to_register): move for move, (k, to_register) in REGISTER_STACK_MOVES.items()
}

COMPLETION_PLANS = tuple(
    CompletionPlan(anchored, clear_first, order, adopt_first)
    for anchored in (False, True)
    for clear_first in (True, False)
    for order in ((2, 1), (1, 2))
    for adopt_first in (False, True)
)
"""All the plans :func:`completable` tries (16 combinations of the four choices)."""


def run_plan(
    c: Configuration,
    plan: Callable[[Configuration], Move | None],
    until: Callable[[Configuration], bool],
) -> Configuration | None:
    """The configuration where ``plan`` (a move chooser), run on a copy of ``c``, first
    reaches ``until``; ``None`` when it stops or picks an illegal move before (budget 5n + 5
    moves, the §6 bound with room)."""
    c = c.copy()
    for _ in range(5 * c.n + 5):
        if until(c):
            return c
        move = plan(c)
        if move is None or not table4_legal(c, move):
            return None
        apply_move(c, move)
    return None


def follows_to_tree(c: Configuration, plan: Callable[[Configuration], Move | None]) -> bool:
    """Whether ``plan`` (a move chooser) takes ``c`` to a complete terminal configuration;
    O(n) moves on one copy of ``c``."""
    end = run_plan(c, plan, Configuration.is_terminal)
    return end is not None and end.unattached == 0


def completable(c: Configuration) -> bool:
    """Whether one of the completion plans finishes ``c`` with a single-rooted tree.

    Plans that cannot differ from ``c`` on are skipped: with empty registers every plan
    finishes arc-eager style (none stores again), and with an empty buffer ``anchored``
    changes nothing."""
    if c.r1 is None:
        return follows_to_tree(c, COMPLETION_PLANS[0])
    plans = (p for p in COMPLETION_PLANS if not (p.anchored and c.buffer_empty))
    return any(follows_to_tree(c, plan) for plan in plans)


def dead_end_free(c: Configuration, move: Move) -> bool:
    """Whether a completion plan still finishes the successor (repair 6 in the module
    docstring; note 03, item 5)."""
    return completable(successor(c, move))


def is_legal(c: Configuration, move: Move) -> bool:
    """The full legal mask of one transition: Table 4 + repairs + dead-end rules."""
    return table4_legal(c, move) and dead_end_free(c, move)


def legal_moves(c: Configuration) -> list[Move]:
    return [m for m in Move if is_legal(c, m)]


# --- transitions (Table 2) ---------------------------------------------------------------
def apply_move(c: Configuration, move: Move) -> None:
    """Apply ``move`` to ``c`` in place, exactly as Table 2's rows say."""
    if move is Move.LEFT_ARC:
        c.add_arc(c.beta1, c.stack.pop())
    elif move is Move.RIGHT_ARC:
        c.add_arc(c.stack[-1], c.beta1)
        c.stack.append(c.beta1)
        c.front += 1
    elif move is Move.SHIFT:
        c.stack.append(c.beta1)
        c.front += 1
    elif move is Move.REDUCE:
        c.stack.pop()
    elif move in (Move.STORE_NO_ARC, Move.STORE_LEFT, Move.STORE_RIGHT):
        b1 = c.beta1
        if move is Move.STORE_LEFT:
            c.add_arc(b1, c.r1)  # type: ignore[arg-type]
        elif move is Move.STORE_RIGHT:
            c.add_arc(c.r1, b1)  # type: ignore[arg-type]
        if c.r1 is None:
            c.r1 = b1
        else:
            c.r2 = b1
        c.front += 1
    elif move is Move.CLEAR:
        _clear(c)
    else:
        k, to_register = REGISTER_STACK_MOVES[move]
        _register_stack(c, k, to_register)


def _clear(c: Configuration) -> None:
    """Clear (Table 2): ``ψ := {σ1} ∪ NotCovered(R1) ∪ NotCovered(R2) − {γ}`` pushed left to
    right after popping σ1; γ goes back to the buffer front; ``last := max(γ ∪ ψ)``
    (footnote 3; note 03, item 7)."""
    g = gamma(c)
    psi = {v for v in (c.sigma1, c.r1 if not c.covered1 else None) if v is not None}
    if c.r2 is not None and not c.covered2:
        psi.add(c.r2)
    psi.discard(g)  # type: ignore[arg-type]
    if c.stack:
        c.stack.pop()
    c.stack.extend(sorted(psi))
    if g is not None:
        c.front -= 1
    touched = [*psi, *([g] if g is not None else [])]
    if touched:
        c.last = max(touched)
    c.r1 = c.r2 = None
    c.covered1 = c.covered2 = False


def _register_stack(c: Configuration, k: int, to_register: bool) -> None:
    """Register-Stack(k, dir) (Table 2) with the IsCovered updates of footnote 2."""
    s1, rk = c.stack[-1], c.register(k)
    assert rk is not None
    if to_register:
        c.add_arc(s1, rk)
    else:
        c.add_arc(rk, s1)
    # Footnote 2: R1 is covered by an arc from R2 to a word left of R1, R2 by one from R1 to
    # a word right of R2.
    if k == 2 and c.r1 is not None and s1 < c.r1:
        c.covered1 = True
    if k == 1 and c.r2 is not None and s1 > c.r2:
        c.covered2 = True
    # ψ := (dir = to-stack ∧ σ1 < Rk) ? null : σ1
    if not to_register and s1 < rk:
        c.stack.pop()


def successor(c: Configuration, move: Move) -> Configuration:
    """The configuration after ``move`` (a copy; ``c`` is left unchanged)."""
    result = c.copy()
    apply_move(result, move)
    return result
