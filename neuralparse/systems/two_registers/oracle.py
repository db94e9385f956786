"""Static oracle for the two-registers system, following the completeness proof (Pitler &
McDonald 2015, §5.2) as design note
``docs/dev/notes/03-two-registers.md``, item 8, spells it out.

For each crossing interval ``[l, r]`` two vertices ``a < b`` incident to all its crossed arcs
and containing every far-side vertex (Definition 3) are chosen.  Then:

* outside intervals, and for arcs lying entirely in ``L = [l, a)``, ``M = (a, b)`` or
  ``R = (b, r]``: the arc-eager static oracle (Left-Arc, Right-Arc, Reduce when a word has
  its head and all its dependents, Shift);
* ``a`` is stored when it reaches the buffer front, then ``b`` (with the arc between them);
* arcs between a stack word and a register are added by Register-Stack from the stack top
  downwards, to-register before to-stack (to-stack may pop the word), with Reduces between;
* before a word with an arc to ``a`` or ``b`` is shifted, the stack words right of ``b`` are
  reduced (type (2) precondition ``σ2 < Rright``);
* Clear once every arc inside the interval and every arc from ``a``/``b`` to the left is
  built; ``a``/``b``/``r`` come back through γ and ψ for their arcs further right;
* but when ``b`` has an arc with a stack word ``w <= last`` (one an earlier Clear put back),
  which Table 4's type (1) keeps R2 from reaching by Register-Stack, Clear as soon as the
  other register arcs are built and before anything after ``b`` is shifted, so that ``b``
  comes back as γ and the arc is a Left-Arc/Right-Arc (:meth:`OracleGuide.clear_for_gamma`).

Several pairs ``(a, b)`` may fit an interval; they are tried in order, interval by interval,
until the derivation reproduces the tree.  Trees hit by the completeness gap of note 03, item 4
(e.g. ``[3,5,4,5,0,1]``) have no derivation; :func:`oracle` returns ``None`` for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

from neuralparse.systems.two_registers.configuration import (
    Configuration,
    Move,
    apply_move,
    is_legal,
    successor,
)
from neuralparse.trees.crossing import CrossingInterval, crossing_intervals, far_side_vertices

LegalTest = Callable[[Configuration, Move], bool]


@dataclass(frozen=True)
class RegisterPlan:
    """One crossing interval ``[left, right]`` and its two register vertices ``a < b``."""

    left: int
    right: int
    a: int
    b: int


def register_pairs(interval: CrossingInterval, far_side: set[int]) -> list[tuple[int, int]]:
    """Every pair ``a < b`` satisfying Definition 3 for ``interval``: all its crossed arcs are
    incident to ``a`` or ``b``, and every far-side vertex of the interval is ``a`` or ``b``."""
    forced = {v for v in far_side if interval.left <= v <= interval.right}
    vertices = sorted({v for arc in interval.arcs for v in arc} | forced)
    pairs = []
    for a, b in combinations(vertices, 2):
        if forced <= {a, b} and all(a in arc or b in arc for arc in interval.arcs):
            pairs.append((a, b))
    return pairs


class OracleGuide:
    """The oracle's decisions for ``heads`` with fixed register choices.  A decision depends
    only on the configuration (set ``config``, then call :meth:`next_move`), so the engine
    can ask it for any configuration of a batch; :meth:`run` follows it from the start."""

    def __init__(
        self, heads: Sequence[int], plans: Sequence[RegisterPlan], legal: LegalTest = is_legal
    ) -> None:
        self.legal = legal
        self.gold = [-1, *heads]  # gold[v] = head of v; gold[0] unused
        self.n = len(heads)
        self.dependents: list[list[int]] = [[] for _ in range(self.n + 1)]
        for d, h in enumerate(heads, start=1):
            self.dependents[h].append(d)
        self.plans = list(plans)
        self.plan_of_a = {p.a: p for p in plans}
        self.config = Configuration.initial(self.n)
        self.moves: list[Move] = []

    # --- gold-tree helpers ---------------------------------------------------------------
    def unbuilt(self, head: int | None, dep: int | None) -> bool:
        """Whether ``head -> dep`` is a gold arc not built yet."""
        if head is None or dep is None or dep == 0:
            return False
        return self.gold[dep] == head and self.config.head[dep] is None

    def complete(self, v: int) -> bool:
        """``v`` has its head (or is the root) and all its dependents."""
        head = self.config.head
        return (v == 0 or head[v] is not None) and all(
            head[d] is not None for d in self.dependents[v]
        )

    def interval_done(self, plan: RegisterPlan) -> bool:
        """Every arc between a register (``a`` or ``b``) and a word up to ``r`` is built:
        the registers may be cleared.  Arcs of the words that Clear leaves on the stack or
        puts back as γ with words further right are built afterwards."""
        c = self.config
        for v in (plan.a, plan.b):
            if v != 0 and c.head[v] is None and self.gold[v] <= plan.right:
                return False
            if any(c.head[d] is None for d in self.dependents[v] if d <= plan.right):
                return False
        return True

    def clear_for_gamma(self, plan: RegisterPlan) -> bool:
        """Whether Clear is due now so that ``b`` comes back as γ: ``b`` still has an arc
        with a word ``w <= last`` (put back by an earlier Clear, e.g. the head of ``b``
        when it closed the previous interval).

        No Register-Stack move can build that arc: Table 4's type (1) precondition
        ``σ1 > last ∨ (k = 1 ∧ ¬IsCovered(R1))`` never holds for R2 and ``w``.  Once Clear
        has put ``b`` on the stack (ψ) no move joins two stack words, so the only way left
        is γ: Clear while ``R2 = β1 − 1`` (Table 2), i.e. before anything after ``b`` is
        shifted, and build the arc by Left-Arc/Right-Arc with ``b`` at the buffer front.
        Clear is therefore taken as soon as the arcs that must precede it are built: every
        arc of ``a`` with a word up to ``r`` and every arc of ``b`` with a word between
        ``last`` and ``b`` (Register-Stack, the candidates tried before Clear).  The arcs of
        ``b`` with words further right follow after Clear, arc-eager style."""
        c = self.config
        a, b = plan.a, plan.b
        if c.r2 != b or c.beta1 != b + 1:
            return False
        partners = [w for w in (self.gold[b], *self.dependents[b]) if w < b]
        missing = [w for w in partners if self.unbuilt(w, b) or self.unbuilt(b, w)]
        if not any(w <= c.last for w in missing) or any(w > c.last for w in missing):
            return False
        if a != 0 and c.head[a] is None and self.gold[a] <= plan.right:
            return False
        return all(c.head[d] is not None for d in self.dependents[a] if d <= plan.right)

    def has_register_arc(self, v: int) -> bool:
        c = self.config
        return any(self.unbuilt(v, r) or self.unbuilt(r, v) for r in (c.r1, c.r2) if r is not None)

    # --- the decision --------------------------------------------------------------------
    def next_move(self) -> Move | None:
        """The first legal move among the candidates the §5.2 construction allows here."""
        return next((m for m in self.candidates() if self.legal(self.config, m)), None)

    def candidates(self) -> list[Move]:
        c = self.config
        s1, b1 = c.sigma1, c.beta1
        if c.r1 is None:
            if b1 in self.plan_of_a:
                return [Move.STORE_NO_ARC]  # a reaches the buffer front: store it
            return self.arc_eager_moves()
        plan = self.plan_of_a[c.r1]
        # Register-Stack arcs for the stack top, to-register first (to-stack may pop σ1).
        moves = [
            move
            for move, rk, to_register in (
                (Move.REGISTER_STACK_1_TO_REGISTER, c.r1, True),
                (Move.REGISTER_STACK_2_TO_REGISTER, c.r2, True),
                (Move.REGISTER_STACK_1_TO_STACK, c.r1, False),
                (Move.REGISTER_STACK_2_TO_STACK, c.r2, False),
            )
            if (self.unbuilt(s1, rk) if to_register else self.unbuilt(rk, s1))
        ]
        if c.r2 is None and b1 == plan.b:
            # b reaches the buffer front: store it with the arc between a and b, if any.
            if self.unbuilt(b1, c.r1):
                return [*moves, Move.STORE_LEFT]
            if self.unbuilt(c.r1, b1):
                return [*moves, Move.STORE_RIGHT]
            return [*moves, Move.STORE_NO_ARC]
        if c.r2 is not None:
            if self.interval_done(plan) or self.clear_for_gamma(plan):
                moves.append(Move.CLEAR)
            if s1 is not None and 0 < s1 < plan.b and self.complete(s1):
                moves.append(Move.REDUCE)  # Register-Stack phase: uncover the next word
            if not c.buffer_empty and self.unbuilt(b1, s1):
                moves.append(Move.LEFT_ARC)
            if not c.buffer_empty and self.has_register_arc(b1):
                # Its register arc needs it on the stack with σ2 < Rright: reduce the words
                # right of b first, then shift it.
                if s1 is not None and s1 > plan.b and self.gold[b1] != s1:
                    return [*moves, Move.REDUCE] if self.complete(s1) else moves
                moves.append(Move.SHIFT)
        # Arc-eager inside L, M and R; Clear once nothing else applies (γ brings the
        # boundary word back for its arcs further right).
        return [*moves, *self.arc_eager_moves(), Move.CLEAR]

    def arc_eager_moves(self) -> list[Move]:
        """The arc-eager static oracle on σ1 and β1, most preferred first."""
        c = self.config
        s1, b1 = c.sigma1, c.beta1
        moves = []
        if not c.buffer_empty:
            if self.unbuilt(b1, s1):
                moves.append(Move.LEFT_ARC)
            if self.unbuilt(s1, b1):
                moves.append(Move.RIGHT_ARC)
        if s1 is not None and s1 != 0 and self.complete(s1):
            moves.append(Move.REDUCE)
        # Shifting is the arc-eager default; it also stands in for a Reduce that the
        # dead-end rules forbid (the complete word then waits on the stack).
        if not c.buffer_empty:
            moves.append(Move.SHIFT)
        return moves

    def run(self) -> bool:
        """Follow the oracle to a terminal configuration; whether it rebuilt the tree."""
        c = self.config
        limit = 5 * self.n + 5  # §6: at most 5n transitions
        while not c.is_terminal() and len(self.moves) <= limit:
            move = self.next_move()
            if move is None:
                return False
            built = len(c.arcs)
            apply_move(c, move)
            self.moves.append(move)
            if len(c.arcs) != built:
                head, dep = c.arcs[-1]
                if self.gold[dep] != head:
                    return False
        return c.is_terminal() and c.heads() == self.gold[1:]

    def current_plan(self) -> int | None:
        """Index of the interval being built (the one in the registers, else the first
        with an arc still missing); where a failed attempt should change its choice."""
        c = self.config
        for index, plan in enumerate(self.plans):
            if plan.a == c.r1 or not self.interval_done(plan):
                return index
        return None


def plans_for(heads: Sequence[int], choice: Sequence[int]) -> list[RegisterPlan]:
    intervals = crossing_intervals(heads)
    far = far_side_vertices(heads)
    plans = []
    for interval, index in zip(intervals, choice, strict=True):
        a, b = register_pairs(interval, far)[index]
        plans.append(RegisterPlan(interval.left, interval.right, a, b))
    return plans


def oracle(heads: Sequence[int], legal: LegalTest = is_legal) -> list[Move] | None:
    """A transition sequence that rebuilds ``heads`` exactly, or ``None`` when the tree is
    not reachable (outside 2-Crossing-Interval, or the gap of note 03, item 4)."""
    guide = oracle_guide(heads, legal)
    return None if guide is None else guide.moves


def oracle_guide(heads: Sequence[int], legal: LegalTest = is_legal) -> OracleGuide | None:
    """The guide (register choices) whose derivation rebuilds ``heads`` exactly, found by
    trying the pairs ``(a, b)`` of each interval in turn; ``None`` when there is none.

    ``legal`` is the mask the moves must pass: the full mask by default;
    :func:`~neuralparse.systems.two_registers.configuration.table4_legal` skips the O(n)
    dead-end check (the derivation is then legal under Table 4 and the repairs, not
    necessarily under the dead-end rules)."""
    intervals = crossing_intervals(heads)
    far = far_side_vertices(heads)
    options = [register_pairs(interval, far) for interval in intervals]
    if any(not pairs for pairs in options):
        return None  # some interval needs more than two vertices: not 2-Crossing-Interval
    choice = [0] * len(intervals)
    while True:
        run = OracleGuide(heads, plans_for(heads, choice), legal)
        if run.run():
            return run
        # Advance the choice of the interval where the attempt failed, else give up.
        failed_at = run.current_plan()
        if failed_at is None or choice[failed_at] + 1 >= len(options[failed_at]):
            return None
        choice[failed_at] += 1
        for later in range(failed_at + 1, len(choice)):
            choice[later] = 0


def derivable(heads: Sequence[int], legal: LegalTest = is_legal) -> bool:
    """Whether some legal transition sequence builds exactly ``heads``: exhaustive search over
    the legal transitions that add gold arcs only (memoised; exponential in the worst case,
    meant for small trees in tests and for diagnosing the gap of note 03, item 4)."""
    gold = [-1, *heads]
    seen: set[tuple] = set()

    def search(c: Configuration) -> bool:
        if c.is_terminal():
            return c.heads() == gold[1:]
        key = (tuple(c.stack), c.front, c.r1, c.r2, tuple(c.head), c.covered1, c.covered2, c.last)
        if key in seen:
            return False
        seen.add(key)
        for move in (m for m in Move if legal(c, m)):
            after = successor(c, move)
            if len(after.arcs) > len(c.arcs):
                head, dep = after.arcs[-1]
                if gold[dep] != head:
                    continue
            if search(after):
                return True
        return False

    return search(Configuration.initial(len(heads)))
