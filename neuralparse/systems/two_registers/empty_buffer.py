"""Closed forms of the two-registers dead-end rule with an empty buffer and a register held
(Pitler & McDonald 2015, Tables 2 and 4; docs/dev/two-registers-completability.md): whether
*some* move sequence completes the configuration, with R1 alone
(:func:`r1_empty_buffer_closed_form`) and with both registers held
(:func:`both_registers_empty_buffer`).  The exit rule
(:mod:`~neuralparse.systems.two_registers.exit`) decides these phases by them.

With the buffer empty only Reduce, Register-Stack and Clear are left: the stack only
shrinks, each stack word acts once, when it is σ1 (its *turn*, top down), and every arc
joins a register and σ1.  Clear either ends the parse (γ null) or puts ``n`` back in the
buffer (γ = σ1 = n, or γ = R2 = n), after which the arc-eager completion decides
(:func:`~neuralparse.systems.two_registers.registers_empty.gamma_closed_form`).

With both registers held and R2 = n the search below takes milliseconds on almost every
configuration but grows as the fourth power of the stack on some (4 s at 40 words on
configurations built to defeat it, 5 s on one of 33 random ones of 120 words);
past :data:`SEARCH_BUDGET` the same search enumerated as tensors decides instead
(:func:`~neuralparse.systems.two_registers.tensor_both_registers.clear_returns_r2`: about a
second at 120 words whatever the configuration)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, product

from neuralparse.systems.two_registers.configuration import (
    REGISTER_STACK_MOVES,
    Configuration,
    Move,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.registers_empty import (
    gamma_closed_form,
    lowest_decides,
)
from neuralparse.systems.two_registers.tensor_both_registers import clear_returns_r2
from neuralparse.systems.two_registers.tensor_forms import words_of

SEARCH_BUDGET = 1000
"""The sets of acting words and adopters whose plays the search of G2 tries (each ``O(n)``
work, 30-90 µs) before it hands the configuration to the tensor enumeration."""


def r1_empty_buffer_closed_form(c: Configuration) -> bool:
    """Empty buffer, R1 held alone: whether *some* move sequence completes ``c``.  The only
    moves left are Reduce, Register-Stack(1, ·) between σ1 and R1 (type (2): only while
    ``σ2 < R1``), and Clear (``σ2 < R1``), which either ends the parse (γ null) or, with σ1
    = n alone right of R1, puts n back as γ.  Write L and U for the stack words left and
    right of R1.

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
    (91,905 at n = 6; ``python docs/dev/two_registers_empty_buffer.py 6``).  One pass over
    the stack; each quantity is a minimum, a count or an "any" over stack words, with tree
    roots."""
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
            ends = not headless or c.tree_root(r1) == 0
        else:  # repair 2 for x -> R1: x's head not between x and R1
            ends = any(c.connected(x) and not c.far_side_if_child(x, r1) for x in left + right[:1])
        if ends:
            return True
    if right != [n]:
        return False
    if head[n] is not None:
        return c.tree_root(n) == 0
    if not c.far_side_if_attached(n, r1) and c.connected(r1):
        return True
    return root_free or bool(lowest_decides(c, [*left, r1]))


# =========================================================================================
# Both registers held
# =========================================================================================
# Every headless word must end with a head from a register (Register-Stack(k, to-stack),
# in its turn) and every headless register with a head from a stack word that *adopts* it
# (Register-Stack(k, to-register)).  A *play* fixes who adopts each register and which
# register heads each headless word.  The arcs' order matters only within one word's turn
# (it adopts first: receiving a head pops a word left of the register, and type (3) then
# forbids adopting) and through two flags that only ever turn on as the turns go down the
# stack: IsCovered(R1), set by any Register-Stack(2, ·) arc of a word left of R1, after
# which the words at or left of ``last`` (the bottom of the stack) can do no arc at all
# (type (1)), and the root's single dependent (R1 = 0 giving a head, or 0 adopting).  A
# word's choice of register can close a cycle only if its tree holds a register or an
# adopter (every new arc hangs a tree from a register's tree or a register from an
# adopter's tree); every other headless word takes R1 when it may (no IsCovered, no root
# arc: R1 > 0 there, since R1 = 0 leaves no word left of R1), else R2; with R1 = 0, R2
# first.  Exact completability on every Table 4 successor in this phase of every
# configuration reachable under the exit rule, n <= 6 (``python
# docs/dev/two_registers_empty_buffer.py 6``), and on random walks up to 30 words
# (``tests/systems/test_two_registers_exit.py``).


@dataclass(frozen=True)
class _Play:
    """A legal play of the acting words: ``parent`` maps each tree root that gets a head
    to the tree root it then hangs from (a headless word: its register's tree root; an
    adopted register: its adopter's); ``covered1`` is IsCovered(R1) after it and
    ``root_arcs`` the arcs it gives the root."""

    parent: dict[int, int]
    covered1: bool
    root_arcs: int

    def settles(self, v: int) -> int | None:
        """The tree root that tree root ``v`` ends under (``None``: the play closes a
        cycle)."""
        for _ in range(len(self.parent) + 1):
            if v not in self.parent:
                return v
            v = self.parent[v]
        return None


class _Plays:
    """The Register-Stack arcs of one configuration (empty buffer, both registers held):
    which are legal for which word before the play, and the legal plays of a set of acting
    words (:meth:`plays`)."""

    def __init__(self, c: Configuration) -> None:
        assert c.r1 is not None and c.r2 is not None
        self.c = c
        self.register = {1: c.r1, 2: c.r2}
        self.root_free = c.leftmost[0] is None
        self._roots: dict[int, int] = {}
        self.tree = {k: self.root(r) for k, r in self.register.items()}
        self.headless_registers = [
            k for k, r in self.register.items() if r != 0 and c.head[r] is None
        ]

    def root(self, v: int) -> int:
        if v not in self._roots:
            self._roots[v] = self.c.tree_root(v)
        return self._roots[v]

    def far(self, w: int) -> int | None:
        """Type (3) outside the registers: a word may not take a head while it heads R_far
        (R2 for words left of R1, R1 for words right of R2)."""
        return 2 if w < self.register[1] else 1 if w > self.register[2] else None

    def may_receive(self, w: int, k: int) -> bool:
        """Rk → w (Register-Stack(k, to-stack)) as far as it does not depend on the play:
        type (1) (k = 1 at or left of ``last``), type (3), repair 2, a free root."""
        c, rk = self.c, self.register[k]
        if not (w > c.last or k == 1):
            return False
        far = self.far(w)
        if far is not None and c.head[self.register[far]] == w:
            return False
        if rk == 0 and not self.root_free:
            return False
        return not c.far_side_if_attached(w, rk)

    def may_adopt(self, x: int, k: int) -> bool:
        """x → Rk (Register-Stack(k, to-register)) at the start of x's turn: type (1), type
        (3) (x not headed by R_close), repair 2, a free root."""
        c, r1, r2 = self.c, self.register[1], self.register[2]
        if not (x > c.last or k == 1):
            return False
        if (x < r1 and c.head[x] == r1) or (x > r2 and c.head[x] == r2):
            return False
        if x == 0 and not self.root_free:
            return False
        return not c.far_side_if_child(x, self.register[k])

    def adopter_choices(
        self, words: list[int], registers: tuple[int, ...], *, by_kind_of_root: bool = False
    ) -> Iterator[dict[int, int]]:
        """Every assignment of an adopter among ``words`` to each of ``registers``, one
        word per class of words a play cannot tell apart (same legal adoptions, region,
        tree root, and whether it is 0).  ``by_kind_of_root``: headless tree roots other than
        the registers' count as one when their own options are the same
        (:meth:`_kind_of_root`; right when the play is judged by the registers' trees
        alone, as when Clear ends the parse), so the number of classes is bounded."""
        classes: dict[tuple, int] = {}
        for x in words:
            legal = tuple(self.may_adopt(x, k) for k in (1, 2))
            region = (x < self.register[1], x <= self.c.last, x > self.register[2])
            root = self._kind_of_root(x) if by_kind_of_root else self.root(x)
            classes.setdefault((legal, region, root, x == 0), x)
        options = [[x for x in classes.values() if self.may_adopt(x, k)] for k in registers]
        for adopters in product(*options):
            yield dict(zip(registers, adopters, strict=True))

    def _kind_of_root(self, x: int) -> tuple:
        """x's tree root as a play sees it when only the registers' trees matter: 0, a
        register's tree root (by which), x itself (with its own receiving options), or
        another headless word, known by its receiving options and region only.  Two such
        words are interchangeable: the one whose tree holds the adopter has its register
        chosen by the play, the other takes the one it would take anyway, and the two
        registers cannot both hang in one headless word's tree (that closes a cycle)."""
        r = self.root(x)
        if r == 0 or r in (self.tree[1], self.tree[2]):
            return ("register tree", r == 0, r == self.tree[1], r == self.tree[2])
        receives = (self.may_receive(r, 1), self.may_receive(r, 2))
        if r == x:
            return ("itself", receives)
        return (
            "headless word",
            receives,
            r < self.register[1],
            r <= self.c.last,
            r > self.register[2],
        )

    def plays(self, turns: list[int], adopter: dict[int, int]) -> Iterator[_Play]:
        """The legal plays in which every headless word of ``turns`` gets a head from a
        register and each register of ``adopter`` is adopted by its word."""
        c, last = self.c, self.c.last
        headless = [w for w in turns if w != 0 and c.head[w] is None]
        trees = {self.tree[1], self.tree[2], *(self.root(x) for x in adopter.values())}
        special = [w for w in headless if w in trees]
        giver: dict[int, int] = {}
        for w in headless:
            if w not in trees:
                order = (1,) if w <= last else (2, 1) if self.register[1] == 0 else (1, 2)
                k = next((k for k in order if self.may_receive(w, k)), None)
                if k is None:
                    return
                giver[w] = k
        r1 = self.register[1]
        for choice in product((1, 2), repeat=len(special)):
            giver.update(zip(special, choice, strict=True))
            if any(
                not self.may_receive(w, giver[w]) or adopter.get(self.far(w)) == w  # type: ignore[arg-type]
                for w in special
            ):
                continue
            covered1 = (
                c.covered1
                or any(w < r1 and k == 2 for w, k in giver.items())
                or any(x < r1 and k == 2 for k, x in adopter.items())
            )
            if covered1 and any(w <= last for w in [*giver, *adopter.values()]):
                continue
            root_arcs = sum(k == 1 for k in giver.values()) * (r1 == 0)
            root_arcs += sum(x == 0 for x in adopter.values())
            if root_arcs > 1:  # (a single one only while the root is free: may_*)
                continue
            parent = {w: self.tree[k] for w, k in giver.items()}
            parent.update({self.register[k]: self.root(x) for k, x in adopter.items()})
            yield _Play(parent, covered1, root_arcs)


def _clear_ends_the_parse(c: Configuration, p: _Plays) -> bool:
    """T (R2 < n): every stack word that can act does (type (2) leaves only the lowest
    word right of R2 a turn there; the others must be headed already), every word and
    register ends headed, and Clear (γ null) ends the parse: some play hangs both
    registers' trees from the root."""
    upper = [w for w in c.stack if w > p.register[2]]
    if any(c.head[w] is None for w in upper[1:]):
        return False
    turns = [w for w in c.stack if w < p.register[2]] + upper[:1]
    for adopter in p.adopter_choices(turns, tuple(p.headless_registers), by_kind_of_root=True):
        for play in p.plays(turns, adopter):
            if play.settles(p.tree[1]) == 0 and play.settles(p.tree[2]) == 0:
                return True
    return False


def _clear_returns_sigma1(c: Configuration) -> bool:
    """G1 (R2 < n): Clear returns σ1 = n, which needs n alone right of R1 on the stack; only
    n's own turn (at most three Register-Stack arcs, in some order) comes before the Clear,
    after which the arc-eager completion decides."""
    stack = c.stack
    if not stack or stack[-1] != c.n or (len(stack) > 1 and stack[-2] > c.r1):  # type: ignore[operator]
        return False
    frontier = [c]
    for _ in range(4):
        arcs = []
        for d in frontier:
            if table4_legal(d, Move.CLEAR) and gamma_closed_form(successor(d, Move.CLEAR)):
                return True
            arcs += [successor(d, m) for m in REGISTER_STACK_MOVES if table4_legal(d, m)]
        frontier = arcs
    return False


def _clear_returns_r2(c: Configuration, p: _Plays, budget: int | None = None) -> bool | None:
    """G2 (R2 = n, so no word lies right of R2): the top words take their turns and leave
    the stack, the word then on top (σ1 of the Clear, left of R1) may still adopt, and
    Clear returns R2 = n; afterwards the arc-eager completion finishes iff n is headed and
    in the root's tree, or n is headless and (I0) holds over the stack Clear leaves (σ1
    and an uncovered R1 pushed back).  None: undecided after ``budget`` sets of plays."""
    stack = c.stack
    first = bisect_right(stack, p.register[1])  # the words between the registers leave first
    tried = 0
    for depth in range(len(stack) - first, len(stack) + 1):
        rest, turns = stack[: len(stack) - depth], stack[len(stack) - depth :]
        if 0 in turns:
            break
        top = rest[-1:]
        for size in range(len(p.headless_registers) + 1):
            for registers in combinations(p.headless_registers, size):
                for adopter in p.adopter_choices(turns + top, registers):
                    tried += 1
                    if budget is not None and tried > budget:
                        return None
                    for play in p.plays(turns, adopter):
                        if _cleared_r2_completes(c, p, play, rest, adopter):
                            return True
    return False


def _cleared_r2_completes(
    c: Configuration, p: _Plays, play: _Play, rest: list[int], adopter: dict[int, int]
) -> bool:
    """G2's Clear after ``play``: repair 3, then the arc-eager completion with β1 = n."""
    head, r1, n = c.head, p.register[1], c.n
    headed1 = (r1 != 0 and head[r1] is not None) or 1 in adopter
    headed2 = head[n] is not None or 2 in adopter
    if (play.covered1 and not headed1) or (c.covered2 and not headed2):
        return False
    if headed2:
        return play.settles(p.tree[2]) == 0
    if p.root_free and play.root_arcs == 0:
        return True
    pushed = sorted({*rest[-1:], *([] if play.covered1 else [r1])})
    for v in rest[:-1] + pushed:
        if v == 0:
            continue
        if head[v] is None and not (v == r1 and headed1):
            return False
        if play.settles(p.root(v)) == 0:
            return True
    return False


def both_registers_empty_buffer(c: Configuration) -> bool:
    """Empty buffer, both registers held: whether *some* move sequence completes ``c``.
    With R2 = n the only way is Clear returning R2 (γ = R2); with R2 < n, Clear ending the
    parse or returning σ1 = n (the section above; docs/dev/two-registers-completability.md,
    "Empty buffer, both registers held")."""
    p = _Plays(c)
    if c.r2 == c.n:
        found = _clear_returns_r2(c, p, SEARCH_BUDGET)
        if found is None:
            found = bool(clear_returns_r2(words_of([c]), len(c.stack) + 1))
        return found
    return _clear_returns_sigma1(c) or _clear_ends_the_parse(c, p)
