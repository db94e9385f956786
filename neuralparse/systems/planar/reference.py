"""Pure-Python reference of the multiplanar transition systems and their static oracle.

Gómez-Rodríguez & Nivre (2013): the planar system (§3.3) is the one-stack case and the
2-planar system (§5.1) the two-stack case of one family with ``k`` stacks, one per plane
(§5, "using k stacks instead of only one"):

* ``SHIFT`` pushes the buffer front onto *every* stack (§5.1 SHIFT2P);
* ``REDUCE`` pops the active stack; it needs no head (§5.1; design note
  ``docs/dev/notes/02-multiplanar.md``);
* ``LEFT-ARC`` adds ``front -> top`` and ``RIGHT-ARC`` adds ``top -> front`` without popping
  (the divisible LEFT-ARC / RIGHT-ARC of §3.1, Figure 6);
* ``SWITCH`` (k > 1) makes the next stack active; for k = 2 it swaps the two stacks.

This module is the readable specification that the tensor systems of
:mod:`neuralparse.systems.planar.system` (planar and 2-planar) are tested
against; it copies its lists on every transition and makes no attempt at speed.

Restrictions (the legal mask)
-----------------------------
* SINGLE-HEAD and ACYCLICITY, §3.3.2 / §5.1.2 (``LEFT-ARC_ShAc``, ``RIGHT-ARC_ShAc``): the
  dependent has no head and the two words are not connected (``¬ i <->* j``).  Under
  SINGLE-HEAD the new dependent is the root of its own tree, so "connected" is "same tree
  root" (footnote 7's component book-keeping; design note 02).
* No more than ``k - 1`` consecutive SWITCHes (§5.1.3: "no two consecutive SWITCHes" for
  k = 2), so greedy decoding cannot loop; and no SWITCH that can only reach empty stacks (for
  k = 2: the inactive stack must be non-empty), which would be a dead end at the last word
  (active stack empty, SHIFT not yet legal, SWITCH back banned) and is useless elsewhere.

UD root convention (our choice; the paper leaves forests)
---------------------------------------------------------
Root arcs are not built by a transition: arcs from node 0 would belong to a plane and then
the class would not be k-planarity over word-to-word arcs (CONVENTIONS.md).  Instead the
terminal configuration must leave **exactly one** headless word, which is attached to the
root 0 when the heads are read off (:meth:`Configuration.tree`).  Three restrictions make
that hold for every legal sequence without creating dead ends.  Call a word *live* while it
is on a stack or in the buffer, a tree (connected component) live while one of its words is,
and a word *killed* when a REDUCE removes it from the last stack holding it:

1. **Kills** (REDUCE of a word held by the active stack only): the word's tree must stay
   live (a dead tree can never be connected to the rest).  A headless word may be killed
   only if no headless word was killed before (it becomes the final root, so there can be
   one such), and, while the last word ``n`` is the buffer front and has a head, only if it
   is the root of ``n``'s tree (otherwise ``n``'s tree could never reach the dead root).
2. **SHIFT of the last word** is legal only when every other word has a head, since nothing
   can build arcs afterwards.
3. **RIGHT-ARC into the last word** from outside the tree of a killed headless word is
   illegal: that tree can then only be joined through ``n``, which must stay headless.

Soundness: a terminal configuration has one headless word, no cycle and single heads;
Lemma 6 gives k-planarity.  No dead ends: from any legal configuration, SHIFT up to the last
word, then sweep each stack (LEFT-ARC from ``n`` to headless tops of other trees, RIGHT-ARC
from the killed root's tree into a headless ``n``, REDUCE otherwise); every step of that
sweep passes the three checks.  Completeness: the Lemma 7 sequence for a single-rooted
k-planar tree never violates them (a word killed while headless can only be the tree's
root, and every tree that still has to be joined has a live word that a later arc uses).
Checked exhaustively over all reachable configurations: for n <= 5 words (k = 1, 2) and
n <= 4 (k = 3) the derivable trees are exactly the class and no configuration is a dead end.

Static oracle
-------------
:func:`oracle` follows the completeness construction of Lemma 5 (planar) and Lemma 7
(2-planar, extended to k planes): arcs are split into planes by colouring the crossings
graph (§4.1, :func:`neuralparse.trees.planarity.plane_assignment`); at each buffer front
``j``, for each plane that has arcs from ``j`` to the left, the plane's stack is reduced down
to each left endpoint (largest first) and the arc is built; then ``j`` is shifted.  SWITCH
is only used to reach a plane that has work at ``j``, so no two SWITCHes are consecutive
for k = 2 and the sequence is short (planes are visited cyclically from the active one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from neuralparse.errors import TreeError
from neuralparse.trees.core import check_tree
from neuralparse.trees.planarity import is_planar, min_planarity, plane_assignment

SHIFT = "SHIFT"
REDUCE = "REDUCE"
LEFT_ARC = "LEFT-ARC"
RIGHT_ARC = "RIGHT-ARC"
SWITCH = "SWITCH"

NO_WORD = 0
"""Marks "none" in word-valued fields (word ids start at 1)."""


def transitions(k: int) -> tuple[str, ...]:
    """The unlabeled transitions of the k-stack system (no SWITCH for the planar one)."""
    base = (SHIFT, REDUCE, LEFT_ARC, RIGHT_ARC)
    return (*base, SWITCH) if k > 1 else base


def in_class(heads: Sequence[int], k: int) -> bool:
    """Whether the system with ``k`` stacks can derive ``heads``: a single-rooted tree whose
    word-to-word arcs are k-planar (Table 1's measure, CONVENTIONS.md)."""
    if sum(1 for h in heads if h == 0) != 1:
        return False
    if k == 1:
        return is_planar(heads)
    return min_planarity(heads, max_k=k) is not None


@dataclass(frozen=True)
class Configuration:
    """A configuration ``(σ_1..σ_k, B, A)`` of the k-stack system (§5.1).

    Fields:
        n: sentence length; the buffer is the range ``front..n``.
        stacks: ``stacks[0]`` is the active stack, then the others in SWITCH order; each is a
            tuple of words, bottom first (stacks are ordered, Lemma 1).
        plane: index of the plane (stack) that is active; SWITCH advances it modulo k.
        front: first buffer word (``n + 1`` when the buffer is empty).
        heads: ``heads[w]`` for words 1..n (index 0 unused); ``NO_WORD`` where headless.
        switches: number of SWITCHes applied since the last other transition.
        killed_root: the headless word that a REDUCE removed from its last stack, or
            ``NO_WORD``; it must become the root of the final tree (restriction 1).
    """

    n: int
    stacks: tuple[tuple[int, ...], ...]
    plane: int
    front: int
    heads: tuple[int, ...]
    switches: int = 0
    killed_root: int = NO_WORD

    @classmethod
    def initial(cls, n: int, k: int) -> Configuration:
        """``c_s(w_1..w_n) = ([], .., [], [1..n], ∅)`` (§5.1)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        return cls(n, tuple(() for _ in range(k)), 0, 1, (NO_WORD,) * (n + 1))

    @property
    def k(self) -> int:
        return len(self.stacks)

    @property
    def terminal(self) -> bool:
        """Terminal configurations have an empty buffer (§5.1 C_t)."""
        return self.front > self.n

    @property
    def active_top(self) -> int:
        return self.stacks[0][-1] if self.stacks[0] else NO_WORD

    def tree_root(self, word: int) -> int:
        """The root of ``word``'s tree in the arcs built so far (follows heads)."""
        while self.heads[word] != NO_WORD:
            word = self.heads[word]
        return word

    def headless_count(self) -> int:
        return sum(1 for w in range(1, self.n + 1) if self.heads[w] == NO_WORD)

    def lives(self, word: int) -> int:
        """How many containers (stacks, buffer) hold ``word``; 0 once it is killed."""
        in_buffer = 1 if word >= self.front else 0
        return in_buffer + sum(1 for stack in self.stacks if word in stack)

    def tree_lives(self, root: int) -> int:
        """Sum of :meth:`lives` over the words of the tree rooted at ``root``."""
        return sum(self.lives(w) for w in range(1, self.n + 1) if self.tree_root(w) == root)

    # -- restrictions -----------------------------------------------------------------
    def can_kill(self, word: int) -> bool:
        """Restriction 1: may ``word``, held by the active stack only, be reduced?"""
        root = self.tree_root(word)
        if self.tree_lives(root) < 2:
            return False
        if self.heads[word] != NO_WORD:
            return True
        if self.killed_root != NO_WORD:
            return False
        last_front = self.front == self.n
        return not last_front or self.tree_root(self.n) in (self.n, word)

    def is_legal(self, transition: str) -> bool:
        """Preconditions of §5.1 / §5.1.2 / §5.1.3 plus the root restrictions above."""
        if self.terminal:
            return False
        top, front = self.active_top, self.front
        if transition == SHIFT:
            return front < self.n or self.headless_count() == 1
        if transition == SWITCH:
            # Cycling onto empty stacks only could end in one: SHIFT is the only other move
            # there, so such a SWITCH is pointless before the last word and a dead end at it.
            reachable = self.stacks[1 : self.k - self.switches]
            return self.switches < self.k - 1 and any(reachable)
        if top == NO_WORD:
            return False
        if transition == REDUCE:
            held_elsewhere = any(top in stack for stack in self.stacks[1:])
            return held_elsewhere or self.can_kill(top)
        if transition == LEFT_ARC:
            return self.heads[top] == NO_WORD and self.tree_root(front) != top
        if transition == RIGHT_ARC:
            if self.heads[front] != NO_WORD or self.tree_root(top) == front:
                return False
            if front == self.n and self.killed_root != NO_WORD:
                return self.tree_root(top) == self.killed_root
            return True
        raise ValueError(f"unknown transition {transition!r}")

    def legal(self) -> list[str]:
        """The legal transitions, in the order of :func:`transitions`."""
        return [t for t in transitions(self.k) if self.is_legal(t)]

    # -- transitions --------------------------------------------------------------------
    def apply(self, transition: str) -> Configuration:
        """The successor configuration; raises ``ValueError`` if ``transition`` is illegal."""
        if not self.is_legal(transition):
            raise ValueError(f"{transition} is not legal in {self}")
        top, front = self.active_top, self.front
        if transition == SWITCH:
            stacks = (*self.stacks[1:], self.stacks[0])
            plane = (self.plane + 1) % self.k
            return replace(self, stacks=stacks, plane=plane, switches=self.switches + 1)
        if transition == SHIFT:
            stacks = tuple((*stack, front) for stack in self.stacks)
            return replace(self, stacks=stacks, front=front + 1, switches=0)
        if transition == REDUCE:
            killed = self.killed_root
            held_elsewhere = any(top in stack for stack in self.stacks[1:])
            if not held_elsewhere and self.heads[top] == NO_WORD:
                killed = top
            stacks = (self.stacks[0][:-1], *self.stacks[1:])
            return replace(self, stacks=stacks, switches=0, killed_root=killed)
        heads = list(self.heads)
        if transition == LEFT_ARC:
            heads[top] = front
        else:
            heads[front] = top
        return replace(self, heads=tuple(heads), switches=0)

    def tree(self) -> list[int]:
        """Heads (word 1 first) of a terminal configuration: the one headless word is
        attached to the root 0 (the UD root convention above)."""
        if not self.terminal:
            raise ValueError("the configuration is not terminal")
        return [h if h != NO_WORD else 0 for h in self.heads[1:]]


def run(n: int, k: int, sequence: Sequence[str]) -> Configuration:
    """Apply ``sequence`` from the initial configuration (each transition must be legal)."""
    config = Configuration.initial(n, k)
    for transition in sequence:
        config = config.apply(transition)
    return config


def oracle(heads: Sequence[int], k: int) -> list[str]:
    """Static oracle: the Lemma 5 / Lemma 7 transition sequence that derives ``heads``.

    ``heads`` must be a single-rooted tree whose word-to-word arcs are k-planar
    (:func:`in_class`); otherwise :class:`~neuralparse.errors.TreeError` is raised.  The
    returned sequence is legal in :class:`Configuration` and ends in a terminal
    configuration whose :meth:`~Configuration.tree` is ``heads``.
    """
    check_tree(heads, single_root=True)
    if not in_class(heads, k):
        raise TreeError(f"the tree is not {k}-planar over its word-to-word arcs")
    planes = plane_assignment(heads, k) or {}
    n = len(heads)
    # left[j][p]: left endpoints i < j of the arcs between i and j on plane p, ascending.
    left: list[list[list[int]]] = [[[] for _ in range(k)] for _ in range(n + 1)]
    for dep, head in enumerate(heads, start=1):
        if head != 0:
            left[max(head, dep)][planes[dep]].append(min(head, dep))
    for per_plane in left:
        for endpoints in per_plane:
            endpoints.sort()

    sequence: list[str] = []
    stacks: list[list[int]] = [[] for _ in range(k)]  # indexed by plane
    active = 0
    for j in range(1, n + 1):
        # Visit the planes with work at j cyclically, starting from the active one.
        start = active
        for offset in range(k):
            plane = (start + offset) % k
            endpoints = left[j][plane]
            if not endpoints:
                continue
            sequence.extend([SWITCH] * ((plane - active) % k))
            active = plane
            stack = stacks[plane]
            for i in reversed(endpoints):
                while stack[-1] != i:
                    stack.pop()
                    sequence.append(REDUCE)
                sequence.append(LEFT_ARC if heads[i - 1] == j else RIGHT_ARC)
        for stack in stacks:
            stack.append(j)
        sequence.append(SHIFT)
    return sequence
