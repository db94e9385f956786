"""The planar system (Gómez-Rodríguez & Nivre 2013, §3.3), the 2-planar system (§5.1) and
their k-stack generalisation (§5) on the batched tensor
:class:`~neuralparse.systems.state.State`: :class:`Planar` (registry name ``planar``),
:class:`TwoPlanar` (``two_planar``) and :class:`Multiplanar`.

Transitions, restrictions, the UD root convention and the static oracle are those of the
pure-Python reference :mod:`neuralparse.systems.planar.reference` (read its docstring first);
this module implements them on tensors and is tested against it.  2-planar: two stacks, the
active one (``"stack"``) and the inactive one (``"stack1"``); SHIFT pushes the buffer front
onto both (SHIFT2P), SWITCH swaps them, no two consecutive SWITCHes (§5.1.3) and no SWITCH
onto an empty stack.

=============  ==================================================  ===========================
Transition     Effect (``σ`` active stack, ``j`` buffer front)      Condition
=============  ==================================================  ===========================
SHIFT          push ``j`` on every stack                           ``j < n``, or one headless
                                                                   word left (then the root
                                                                   arc to it is logged)
REDUCE         pop ``σ``                                           kill restriction if ``i``
                                                                   is on no other stack
LEFT-ARC_l     ``+ (j, l, i)``, ``i`` = top of ``σ``, no pop       ``i`` headless, not
                                                                   connected to ``j``
RIGHT-ARC_l    ``+ (i, l, j)``, no pop                             ``j`` headless, not
                                                                   connected; last-word rule
SWITCH (k>1)   rotate the stacks: the next one becomes active       < k-1 in a row; a reachable
                                                                   stack is non-empty
=============  ==================================================  ===========================

Representation.  The active stack is ``"stack"`` (so the common features read it), the
others ``"stack1"`` .. ``"stack{k-1}"`` in SWITCH order; SWITCH only rotates the top and size
pointers, the stacks share the node pool.  Per-configuration scalars: ``headless`` (number of
headless words), ``headless_sum`` (sum of their ids, which names the last one for the root
arc), ``killed`` (the word killed while headless, 0 if none), ``switches`` (SWITCHes in a row)
and ``plane`` (index of the active plane, for the oracle).

Per-word book-keeping and its cost (the documented exception).  A word lies on up to k
stacks and can get a head, or join another tree, while another stack still holds it deep
down; a per-node attribute of one stack node cannot express that without rewriting the other
stack.  So per-word facts live in a per-configuration table ``words [B, 5, n_max + 2]``
(int16 unless sentences are very long) kept in ``State.tables``, so that
:meth:`State.reorder` gathers it: has-head, lives (number of stacks, or the buffer, holding
the word), and a union-find over the trees (parent, rank, and the tree's live count at its
representative).  Footnote 7: under SINGLE-HEAD, acyclicity is "not in the same tree"; union
by rank keeps every tree's depth below log2(n), so the find of the few queried words takes
``bit_length(n_max + 2)`` gathers (no data-dependent loop, no host sync).  Cost per
transition: O(1) tensor writes per configuration for apply and O(log n) gathers for the mask
(greedy: flat in practice); beam reordering also copies each selected configuration's table
row, O(n) per configuration, which is what makes beam steps grow with n (measured with
``benchmarks/transition_cost.py``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from types import MappingProxyType

import torch
from torch import Tensor

from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.planar.reference import in_class as reference_in_class
from neuralparse.systems.state import NULL_TOKEN, State
from neuralparse.trees.planarity import plane_assignment

SHIFT, REDUCE, LEFT_ARC, RIGHT_ARC, SWITCH = range(5)

# Columns of the per-word table ``state.tables["words"]``.
HAS_HEAD, LIVES, PARENT, RANK, TREE_LIVES = range(5)
WORD_COLUMNS = 5


def _table_dtype(width: int, k: int) -> torch.dtype:
    """The narrowest integer type for the table: it is copied whole by beam reordering."""
    return torch.int16 if k * width < 2**15 else torch.int32


def _table_get(words: Tensor, index: Tensor, column: int) -> Tensor:
    """``words[b, column, index[b]]`` (as long) for ``index`` of shape ``[B]`` or ``[B, Q]``."""
    flat = index if index.dim() == 2 else index[:, None]
    value = words[:, column].gather(1, flat).long()
    return value if index.dim() == 2 else value[:, 0]


def _table_set(words: Tensor, where: Tensor, index: Tensor, column: int, value: Tensor) -> None:
    """``words[b, column, index[b]] = value[b]`` where ``where[b]`` (in place, no sync)."""
    rows = torch.arange(words.shape[0], device=words.device)
    old = words[rows, column, index]
    words[rows, column, index] = torch.where(where, value.to(words.dtype), old)


def graph_switch_budget(n: int) -> int:
    """The SWITCHes an ``n``-word sentence may take on a CUDA graph
    (:meth:`Multiplanar.for_graphs`): a quarter of its words, plus four.  The 2-planar
    static oracle's derivations of the five shared treebanks' 2-planar training sentences
    take 2.57n-2.87n transitions on average and at most 4n - 2, within the budget's
    4n - 1 + n // 4 + 4, against a worst case of 8n - 1."""
    return n // 4 + 4


class Multiplanar(TransitionSystem):
    """The k-stack system of §5 (``k = 1``: §3.3 planar); subclasses fix ``k`` and ``name``."""

    k: int = 1
    feature_names = ("s0", "s1", "s2", "b0")
    arc_operands = MappingProxyType({"LEFT-ARC": ("b0", "s0"), "RIGHT-ARC": ("s0", "b0")})
    graph_safe = True

    def __init__(self, labels: Sequence[str] = (), *, root_label: str | None = "root") -> None:
        super().__init__(labels, root_label=root_label)
        # The root arc is implicit (logged by the last SHIFT): it takes the root label when
        # the inventory has one, as the UD rule of the base class demands.
        self.root_arc_label = self.label_index.get(root_label, -1) if root_label else -1
        self.stack_names = ("stack", *(f"stack{m}" for m in range(1, self.k)))

    # -- state ------------------------------------------------------------------------------
    state_scalars = MappingProxyType({"killed": 0, "switches": 0, "plane": 0})

    @property
    def state_stacks(self) -> dict[str, bool]:
        return dict.fromkeys(self.stack_names, False)

    def prepare(self, state: State) -> None:
        """The per-word table and the headless counters of the initial configurations."""
        lengths = state.lengths
        batch = lengths.shape[0]
        width = state.n_max + 2
        positions = torch.arange(width, device=lengths.device).expand(batch, width)
        is_word = (positions >= 1) & (positions <= lengths[:, None])
        dtype = _table_dtype(width, self.k)
        words = torch.zeros((batch, WORD_COLUMNS, width), dtype=dtype, device=lengths.device)
        words[:, LIVES] = is_word.to(dtype)
        words[:, PARENT] = positions.to(dtype)
        words[:, TREE_LIVES] = is_word.to(dtype)
        state.tables["words"] = words
        state.scalars["headless"] = lengths.clone()
        state.scalars["headless_sum"] = lengths * (lengths + 1) // 2

    def terminal(self, state: State) -> Tensor:
        return state.scalars["front"] > state.lengths

    def max_transitions(self, n: int) -> int:
        """SHIFTs (n) + arcs (n - 1) + REDUCEs (at most n per stack), and at most k - 1
        SWITCHes before each of them and before the end (§5.1.3, Proposition 11); in the
        :meth:`for_graphs` variant, at most :func:`graph_switch_budget` SWITCHes."""
        if n <= 0:
            return 0
        others = n + (n - 1) + self.k * n
        worst = others + (self.k - 1) * (others + 1)
        return min(others + graph_switch_budget(n), worst) if self.linear_budget else worst

    def for_graphs(self, *, beam: bool = False) -> Multiplanar:
        """The system itself with one stack; with more, the variant that CUDA graphs record
        (greedy and beam): the same steps for a linear budget of SWITCHes
        (:func:`graph_switch_budget`) instead of the worst case, k - 1 before every other
        transition, which a graph would otherwise always run; a configuration unfinished
        then is abandoned (:meth:`abandoned`) and decoded again eagerly by the caller."""
        if self.k == 1:
            return self
        variant = copy.copy(self)
        variant.linear_budget = True
        return variant

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        return reference_in_class(heads, self.k)

    # -- reading the configuration ---------------------------------------------------------
    def _find(self, state: State, nodes: Tensor) -> Tensor:
        """Union-find representatives ``[B, Q]`` of the words ``nodes [B, Q]`` (clamped)."""
        parent = state.tables["words"][:, PARENT]
        rep = nodes
        # Union by rank: depth <= floor(log2(tree size)); a fixed number of gathers.
        for _ in range(max(1, parent.shape[1]).bit_length()):
            rep = parent.gather(1, rep).long()
        return rep

    def _view(self, state: State) -> dict[str, Tensor]:
        """The quantities the mask, apply and the oracle share, computed once per step."""
        words = state.tables["words"]
        width = words.shape[2]
        front = state.scalars["front"]
        top = state.pool.token[state.tops["stack"]]
        top_index = top.clamp(min=0)
        front_index = front.clamp(max=width - 1)
        last_index = state.lengths.clamp(max=width - 1)
        killed = state.scalars["killed"]
        reps = self._find(state, torch.stack([top_index, front_index, killed, last_index], 1))
        return {
            "words": words,
            "top": top,
            "top_index": top_index,
            "front": front,
            "front_index": front_index,
            "last_index": last_index,
            "rep_top": reps[:, 0],
            "rep_front": reps[:, 1],
            "rep_killed": reps[:, 2],
            "rep_last": reps[:, 3],
        }

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        v = self._view(state)
        words, top = v["words"], v["top"]
        running = ~self.terminal(state)
        has_top = running & (top >= 1)
        last = v["front"] == state.lengths
        killed = state.scalars["killed"]
        top_headed = _table_get(words, v["top_index"], HAS_HEAD).bool()
        front_headed = _table_get(words, v["front_index"], HAS_HEAD).bool()
        last_headed = _table_get(words, v["last_index"], HAS_HEAD).bool()
        connected = v["rep_top"] == v["rep_front"]

        shift = running & (~last | (state.scalars["headless"] == 1))
        # Restriction 1 (planar.reference): a kill keeps the tree live; a headless kill needs
        # no earlier one and, at the last word, must not strand the last word's tree.
        held_elsewhere = _table_get(words, v["top_index"], LIVES) >= 2
        tree_live = _table_get(words, v["rep_top"], TREE_LIVES) >= 2
        headless_kill_ok = (killed == 0) & (~last | ~last_headed | (v["rep_last"] == v["rep_top"]))
        reduce = has_top & (held_elsewhere | (tree_live & (top_headed | headless_kill_ok)))
        left = has_top & ~top_headed & ~connected
        # Restriction 3: into the last word only from the killed root's tree, if any.
        right = has_top & ~front_headed & ~connected
        right = right & (~last | (killed == 0) | (v["rep_top"] == v["rep_killed"]))
        columns = [shift, reduce, left, right]
        if self.k > 1:
            switches = state.scalars["switches"]
            reachable = torch.zeros_like(shift)
            for m in range(1, self.k):
                within = switches <= self.k - 1 - m  # stack m is reachable in this run
                reachable = reachable | (within & (state.sizes[self.stack_names[m]] > 0))
            columns.append(running & (switches < self.k - 1) & reachable)
        legal = torch.stack(columns, 1)
        return legal, torch.zeros_like(legal)

    # -- transitions -----------------------------------------------------------------------
    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        v = self._view(state)
        words, top, front = v["words"], v["top"], v["front"]
        top_index, front_index = v["top_index"], v["front_index"]
        shift = active & (transitions == SHIFT)
        reduce = active & (transitions == REDUCE)
        left = active & (transitions == LEFT_ARC)
        right = active & (transitions == RIGHT_ARC)
        switch = active & (transitions == SWITCH)
        arc = left | right

        # Book-keeping that reads the table before it changes.
        top_lives = _table_get(words, top_index, LIVES)
        top_headed = _table_get(words, top_index, HAS_HEAD).bool()
        rep_top, rep_front = v["rep_top"], v["rep_front"]
        killing_headless = reduce & (top_lives == 1) & ~top_headed
        last_shift = shift & (front == state.lengths)
        root_word = state.scalars["headless_sum"]

        # SHIFT: the front moves from the buffer (1 life) onto all k stacks (k lives).
        for name in self.stack_names:
            state.push(name, shift, front)
        _table_set(words, shift, front_index, LIVES, torch.full_like(front, self.k))
        tree_lives_front = _table_get(words, rep_front, TREE_LIVES)
        _table_set(words, shift, rep_front, TREE_LIVES, tree_lives_front + self.k - 1)

        # REDUCE: one life less for the word and its tree.
        state.pop("stack", reduce)
        _table_set(words, reduce, top_index, LIVES, top_lives - 1)
        tree_lives_top = _table_get(words, rep_top, TREE_LIVES)
        _table_set(words, reduce, rep_top, TREE_LIVES, tree_lives_top - 1)
        state.scalars["killed"] = torch.where(killing_headless, top, state.scalars["killed"])

        # LEFT-ARC / RIGHT-ARC: the dependent gets a head; union of the two trees by rank.
        dependent = torch.where(left, top_index, front_index)
        _table_set(words, arc, dependent, HAS_HEAD, torch.ones_like(front))
        rank_top = _table_get(words, rep_top, RANK)
        rank_front = _table_get(words, rep_front, RANK)
        front_wins = rank_front > rank_top
        winner = torch.where(front_wins, rep_front, rep_top)
        loser = torch.where(front_wins, rep_top, rep_front)
        lives_sum = _table_get(words, rep_top, TREE_LIVES) + _table_get(
            words, rep_front, TREE_LIVES
        )
        _table_set(words, arc, loser, PARENT, winner)
        _table_set(words, arc, winner, TREE_LIVES, lives_sum)
        _table_set(words, arc & (rank_top == rank_front), winner, RANK, rank_top + 1)
        state.scalars["headless"] = state.scalars["headless"] - arc.long()
        state.scalars["headless_sum"] = state.scalars["headless_sum"] - torch.where(
            arc, dependent, torch.zeros_like(dependent)
        )

        # SWITCH: rotate the stack pointers; the next stack becomes active.
        if self.k > 1:
            names = self.stack_names
            tops = [state.tops[name] for name in names]
            sizes = [state.sizes[name] for name in names]
            for m, name in enumerate(names):
                source = (m + 1) % self.k
                state.tops[name] = torch.where(switch, tops[source], tops[m])
                state.sizes[name] = torch.where(switch, sizes[source], sizes[m])
            plane = state.scalars["plane"]
            state.scalars["plane"] = torch.where(switch, (plane + 1) % self.k, plane)
        state.scalars["switches"] = torch.where(
            switch, state.scalars["switches"] + 1, torch.zeros_like(front)
        )

        # SHIFT and SHIFT-1 only differ by the root arc, logged when the last word leaves.
        state.scalars["front"] = front + shift.long()
        root_label = torch.full_like(labels, self.root_arc_label)
        state.log_arcs(
            arc | last_shift,
            torch.where(last_shift, root_word, dependent),
            torch.where(last_shift, 0, torch.where(left, front, top)),
            torch.where(last_shift, root_label, labels),
        )

    # -- features ------------------------------------------------------------------------------
    def features(self, state: State) -> Tensor:
        parts = [state.stack_tokens("stack", 3), state.buffer_tokens(1)]
        parts += [state.stack_tokens(name, 1) for name in self.stack_names[1:]]
        return torch.cat(parts, 1)

    # -- static oracle (Lemma 5 / Lemma 7, as reference.oracle) -----------------------------
    def gold_extra(self, heads: Sequence[int]) -> dict[str, list[int]]:
        """``plane[d]``: plane of the arc into ``d`` (-1: root arc or not k-planar);
        ``lowest{p}[j]``: smallest left endpoint of ``j``'s arcs on plane ``p`` (-1: none)."""
        n = len(heads)
        planes = plane_assignment(heads, self.k) if n else {}
        plane = [-1] * (n + 1)
        lowest = [[-1] * (n + 1) for _ in range(self.k)]
        if planes is None:  # not in the class: the oracle will fail, as it must
            return {"plane": plane, **{f"lowest{p}": lowest[p] for p in range(self.k)}}
        for dep, head in enumerate(heads, start=1):
            if head == 0:
                continue
            p = planes[dep]
            plane[dep] = p
            right, left = max(head, dep), min(head, dep)
            if lowest[p][right] == -1 or left < lowest[p][right]:
                lowest[p][right] = left
        return {"plane": plane, **{f"lowest{p}": lowest[p] for p in range(self.k)}}

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        v = self._view(state)
        words, top, front = v["words"], v["top"], v["front"]
        front_tok = torch.where(front <= state.lengths, front, torch.full_like(front, NULL_TOKEN))
        head_of_top = gold.at(gold.heads, top)
        head_of_front = gold.at(gold.heads, front_tok)
        has_head = words[:, HAS_HEAD]

        def built(left_end: Tensor) -> Tensor:
            """Whether the gold arc between ``left_end`` and the front is already built."""
            into_front = head_of_front == left_end
            dependent = torch.where(into_front, front_tok, left_end).clamp(min=0)
            return has_head.gather(1, dependent[:, None])[:, 0].bool()

        plane_now = state.scalars["plane"]
        is_left = (top >= 1) & (head_of_top == front_tok)
        is_right = (top >= 1) & (head_of_front == top)
        arc_dep = torch.where(is_left, top, front_tok)
        arc_here = (is_left | is_right) & (gold.at(gold.extra["plane"], arc_dep) == plane_now)
        arc_here = arc_here & ~built(top)

        pending = []
        for p in range(self.k):
            lowest = gold.at(gold.extra[f"lowest{p}"], front_tok)
            pending.append((lowest >= 1) & ~built(lowest))
        pending_t = torch.stack(pending, 1)
        pending_here = pending_t.gather(1, plane_now[:, None])[:, 0]
        pending_elsewhere = pending_t.any(1) & ~pending_here

        transition = torch.full_like(front, SHIFT)
        transition = torch.where(pending_elsewhere, SWITCH, transition)
        transition = torch.where(pending_here, REDUCE, transition)
        transition = torch.where(arc_here & is_right, RIGHT_ARC, transition)
        transition = torch.where(arc_here & is_left, LEFT_ARC, transition)
        label = torch.where(is_left, gold.at(gold.labels, top), gold.at(gold.labels, front_tok))
        return self.actions_for(transition, label)


class Planar(Multiplanar):
    """The planar system, §3.3, with SINGLE-HEAD and ACYCLICITY (§3.3.2) and the UD root
    restrictions of :mod:`neuralparse.systems.planar.reference`.  Its class: single-rooted
    trees whose word-to-word arcs do not cross."""

    name = "planar"
    k = 1
    transitions = ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC")
    arc_transitions = frozenset({"LEFT-ARC", "RIGHT-ARC"})


class TwoPlanar(Multiplanar):
    """The 2-planar system, §5.1 ``S2P`` with ShAc (§5.1.2), the SWITCH restrictions and the
    UD root restrictions.  Its class: single-rooted trees whose word-to-word arcs are
    2-planar (§4.1)."""

    name = "two_planar"
    k = 2
    transitions = ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC", "SWITCH")
    arc_transitions = frozenset({"LEFT-ARC", "RIGHT-ARC"})
    feature_names = ("s0", "s1", "s2", "b0", "t0")
