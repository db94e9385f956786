"""The two-registers system on the engine's state batch (Pitler & McDonald 2015, Table 2 as
tensor operations): :class:`TwoRegisters` (registry name ``two_registers``), its state
:class:`TwoRegistersState` and the helpers that rebuild reference configurations
(:mod:`~neuralparse.systems.two_registers.configuration`) from tensor rows."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import torch
from torch import Tensor

from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.state import State
from neuralparse.systems.two_registers.configuration import (
    ARC_MOVES,
    Configuration,
    Move,
    apply_move,
    is_legal,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.exit import exit_legal
from neuralparse.systems.two_registers.mask import (
    HEAD,
    INF,
    fast_mask,
    fast_rows,
    initial_bookkeeping,
    mark_stack,
    refresh_bookkeeping,
    stack_lists,
    update_bookkeeping,
    words_view,
)
from neuralparse.systems.two_registers.oracle import OracleGuide, RegisterPlan, oracle_guide
from neuralparse.systems.two_registers.tensor_rule import exit_rule
from neuralparse.trees.crossing import is_k_crossing_interval

# The transitions are tensor operations on the batch (stack nodes, the buffer range, the
# registers, IsCovered and `last` as per-configuration scalars; Clear pushes at most three
# nodes), with a per-word head table.  The legal mask (`mask`) is a closed form
# in tensors on the rows with empty registers and a fresh buffer front, and the reference
# is_legal on a configuration rebuilt from the tensors elsewhere (register phases, γ, stale
# book-keeping): O(n) Python per such row, so the cost per transition is flat only where few
# rows hold registers (true of the oracle's derivations on UD, not of random walks).  Beam
# reorder copies the head table row, O(n) per configuration.  Mirrored Configurations are
# kept only while the static oracle runs (oracle_actions creates them).
#
# Host reads (why TwoRegisters is not `graph_safe`).  Host-free: `initial` given `n_max`,
# `features`, `terminal`, the transitions with the mask's book-keeping (`_apply_tensors`,
# `update_bookkeeping`, `mark_stack`), the fast rows' closed-form mask (`fast_rows`,
# `fast_mask`) and the exit rule's tensor form (`tensor_rule.exit_rule`: every phase, an
# empty buffer with both registers held searched on `search_limit(B)` rows a step, and with
# R2 = n and a stack deeper than SHALLOW_STACK_LIMIT words on DEEP_SEARCH_ROWS rows a
# step).  Not: every step, `transition_legal` reads which rows are slow
# (`torch.nonzero`) and decides those on configurations rebuilt on the host (on the CPU the
# host is the cheaper of the two there), and `apply_transitions` checks on the host that
# each action has its operands.  Greedy decoding and beam search are
# recorded as CUDA graphs by the variant of `for_graphs`: it decides the fast rows, with
# `graph_rule="tensor"` also the slow rows that the tensor rule decides, and abandons the
# rest (greedy decoding first lets a row beyond the search's limit wait a step); the graph's
# caller decodes (searches) the sentences with an abandoned configuration again eagerly, so
# the trees are the eager loop's.  A converged Hungarian-Szeged model's
# greedy parses of the test set abandon 21.8% of the sentences by default and none with the
# tensor rule, at about 29 times the operators per step (`python -m
# benchmarks.graph_fallback --graph-rule ...`, `python -m benchmarks.step_operators
# --two-registers-graphs`); an English model's never leave the fast path.  Which pays on a
# GPU is not measured yet, so the default stays "abandon".  "compiled" is the tensor rule
# through torch.compile: a handful of fused kernels instead of thousands of operators.

DEAD_END_RULES = ("plans", "exit")
"""Values of ``TwoRegisters(dead_end_rule=...)``."""
GRAPH_RULES = ("abandon", "tensor", "compiled")
"""Values of ``TwoRegisters(graph_rule=...)``: what the :meth:`~TwoRegisters.for_graphs`
variant does with a configuration off the fast path."""
COMPILE_OPTIONS: dict[str, object] = {"dynamic": True, "fullgraph": True}
"""How ``graph_rule="compiled"`` compiles the tensor rule (``torch.compile``): one graph for
every batch shape, failing rather than breaking into pieces."""

SEARCH_ROWS = 8
"""The fewest configurations a step of the :meth:`~TwoRegisters.for_graphs` variant searches
with an empty buffer and both registers held
(:func:`~neuralparse.systems.two_registers.tensor_both_registers.search_some`; None: every
one, for tests); :func:`search_limit` gives a large batch more.  Such rows are rare.  A row
beyond the limit is left undecided: greedy decoding makes it wait a step, beam search
abandons it (decoded again eagerly)."""
ROWS_PER_SEARCH = 64
"""A batch of ``B`` rows searches ``B / ROWS_PER_SEARCH`` configurations a step (at least
:data:`SEARCH_ROWS`): the search grows with the batch as the rest of a step does, so a large
batch (a beam's items) does not queue for a fixed number of searches."""


def search_limit(batch_size: int) -> int | None:
    """How many configurations a step of a batch of ``batch_size`` rows searches (a Python
    integer, fixed for a CUDA graph's batch)."""
    if SEARCH_ROWS is None:
        return None
    return max(SEARCH_ROWS, -(-batch_size // ROWS_PER_SEARCH))


TRANSITION_NAMES = tuple(move.engine_name for move in Move)
"""The engine's transition names, in ``Move`` order (transition id == ``Move`` value)."""


ARC_HEAD = {
    Move.LEFT_ARC: "beta1",
    Move.RIGHT_ARC: "sigma1",
    Move.STORE_LEFT: "beta1",
    Move.STORE_RIGHT: "r1",
    Move.REGISTER_STACK_1_TO_REGISTER: "sigma1",
    Move.REGISTER_STACK_1_TO_STACK: "r1",
    Move.REGISTER_STACK_2_TO_REGISTER: "sigma1",
    Move.REGISTER_STACK_2_TO_STACK: "r2",
}
"""The configuration attribute holding the head of the arc each arc-building move adds."""


def root_arc_move(c: Configuration, move: Move) -> bool:
    """Whether ``move`` would build an arc whose head is the root 0 (UD root label)."""
    attribute = ARC_HEAD.get(move)
    return attribute is not None and getattr(c, attribute) == 0


@dataclass
class TwoRegistersState(State):
    """The engine state; ``configs`` holds mirrored reference configurations only while a
    static oracle runs on the batch (:meth:`TwoRegisters.oracle_actions` creates them; the
    oracle's guides stay with the gold trees, in :attr:`Gold.memo`).  Parsing never builds
    them."""

    configs: list[Configuration] = field(default_factory=list)

    def gathered(self, parent: Tensor) -> dict[str, Any]:
        configs = [self.configs[p].copy() for p in parent.tolist()] if self.configs else []
        return {**super().gathered(parent), "configs": configs}


def reference_configurations(state: State, rows: Sequence[int]) -> list[Configuration]:
    """The reference configurations of the given rows, rebuilt from the tensors (stack, the
    per-word head table, registers, IsCovered, ``last``): O(n) each.  Their ``arcs`` list
    is empty (the order in which arcs were built is not kept on the engine)."""
    return [_configuration(*row) for row in _host_rows(state, rows)]


def distinct_configurations(
    state: State, rows: Sequence[int]
) -> tuple[list[Configuration], list[int]]:
    """:func:`reference_configurations` of the distinct rows among ``rows`` (equal tensors,
    equal configurations), and the index of each row's among them.  Beam items often differ
    only in the labels of their arcs, which the configurations do not hold: on English-EWT
    test with beam 8 a third as many configurations as slow rows."""
    first: dict[tuple, int] = {}
    configs: list[Configuration] = []
    which = []
    for n, stack, heads, scalars in _host_rows(state, rows):
        key = (n, tuple(stack), heads[: n + 1].tobytes(), tuple(scalars))
        if key not in first:
            first[key] = len(configs)
            configs.append(_configuration(n, stack, heads, scalars))
        which.append(first[key])
    return configs, which


_SCALARS = ("front", "r1", "r2", "covered1", "covered2", "last", "unattached")


def _host_rows(
    state: State, rows: Sequence[int]
) -> list[tuple[int, list[int], np.ndarray, list[int]]]:
    """``(n, stack bottom first, head row, the _SCALARS)`` of each row, read to the host."""
    rows = list(rows)
    if not rows:
        return []
    s = state.scalars
    stacks = stack_lists(state, rows)
    index = torch.tensor(rows, dtype=torch.long, device=state.device)
    heads = state.tables["words"][index, HEAD].cpu().numpy()
    picked = torch.stack([s[name][index] for name in _SCALARS], 1).tolist()
    lengths = state.lengths[index].tolist()
    return list(zip(lengths, stacks, heads, picked, strict=True))


def _configuration(
    n: int, stack: list[int], heads: np.ndarray, scalars: list[int]
) -> Configuration:
    c = Configuration.initial(n)
    c.stack = stack
    # Only the headed words need Python work (few of them early in a long sentence).
    dependents = np.flatnonzero(heads[1 : n + 1] >= 0) + 1
    for v, h in zip(dependents.tolist(), heads[dependents].tolist(), strict=True):
        c.head[v] = h
        if c.leftmost[h] is None or v < c.leftmost[h]:
            c.leftmost[h] = v
        if c.rightmost[h] is None or v > c.rightmost[h]:
            c.rightmost[h] = v
    front, r1, r2, covered1, covered2, last, unattached = scalars
    c.front = front
    c.r1 = None if r1 < 0 else r1
    c.r2 = None if r2 < 0 else r2
    c.covered1 = bool(covered1)
    c.covered2 = bool(covered2)
    c.last = last
    c.unattached = unattached
    return c


def reference_rows(
    configs: Sequence[Configuration], legal_test: Callable[[Configuration, Move], bool] = is_legal
) -> tuple[list[list[bool]], list[list[bool]]]:
    legal = [
        [False] * len(Move) if c.is_terminal() else [legal_test(c, m) for m in Move]
        for c in configs
    ]
    roots = [[root_arc_move(c, m) for m in Move] for c in configs]
    return legal, roots


def _structurally_applicable(state: State, transitions: Tensor) -> Tensor:
    """Whether each transition has its operands (a stack top, a buffer word, a register, a
    free register): what Table 2 needs to apply at all.  Table 4 is the mask's business."""
    s = state.scalars
    s1 = state.pool.token[state.tops["stack"]]
    has_s1, has_b1 = s1 >= 0, s["front"] <= state.lengths
    has_r1, has_r2 = s["r1"] >= 0, s["r2"] >= 0
    store = has_b1 & ~has_r2
    table = torch.stack(
        [
            has_s1 & has_b1,  # Left-Arc
            has_s1 & has_b1,  # Right-Arc
            has_b1,  # Shift
            has_s1,  # Reduce
            store,
            store & has_r1,
            store & has_r1,
            has_r1,  # Clear
            has_s1 & has_r1,
            has_s1 & has_r1,
            has_s1 & has_r2,
            has_s1 & has_r2,
        ],
        1,
    )
    return table.gather(1, transitions.clamp(0, len(Move) - 1)[:, None])[:, 0]


class TwoRegisters(TransitionSystem):
    """Pitler & McDonald (2015) two-registers on the engine (see the section comment and
    :mod:`neuralparse.systems.two_registers.mask` for the legal mask)."""

    name = "two_registers"
    transitions = TRANSITION_NAMES
    arc_transitions = frozenset(TRANSITION_NAMES[m] for m in ARC_MOVES)
    feature_names = ("s0", "s1", "s2", "b0", "r1", "r2")
    arc_operands = MappingProxyType(
        {
            "LEFT-ARC": ("b0", "s0"),
            "RIGHT-ARC": ("s0", "b0"),
            "STORE(left)": ("b0", "r1"),
            "STORE(right)": ("r1", "b0"),
            "REGISTER-STACK(1,to-register)": ("s0", "r1"),
            "REGISTER-STACK(1,to-stack)": ("r1", "s0"),
            "REGISTER-STACK(2,to-register)": ("s0", "r2"),
            "REGISTER-STACK(2,to-stack)": ("r2", "s0"),
        }
    )

    def __init__(
        self,
        labels: Sequence[str] = (),
        *,
        root_label: str | None = "root",
        dead_end_rule: str = "exit",
        graph_rule: str = "abandon",
    ) -> None:
        """``dead_end_rule``: ``"exit"`` (one exit plan decided by closed forms,
        :func:`~neuralparse.systems.two_registers.exit.exit_legal`; the default) or
        ``"plans"`` (the sixteen completion plans, :func:`is_legal`); both leave no dead end
        and keep every oracle move legal, and they gave the same parses with every trained
        model we compared (the exit rule's beam search is 3-4 times faster).

        ``graph_rule`` (CUDA graphs only): ``"abandon"`` (the default) makes the
        :meth:`for_graphs` variant abandon every configuration off the fast path, which the
        eager loop then decodes again; ``"tensor"`` (with the exit rule) decides them by the
        exit rule's tensor form
        (:func:`~neuralparse.systems.two_registers.tensor_rule.exit_rule`) and abandons only
        those it leaves undecided (an empty buffer with both registers held beyond
        :func:`search_limit` rows of a step, or, with R2 = n and a stack deeper than
        ``SHALLOW_STACK_LIMIT`` words, beyond ``DEEP_SEARCH_ROWS``; greedy decoding waits
        for the search instead): fewer sentences
        decoded twice, about 29 times the operators per step; ``"compiled"``
        decides the same through ``torch.compile`` (:data:`COMPILE_OPTIONS`), whose fused
        kernels replace those thousands of small operators, at the price of compiling on
        the first batch (about a minute and a half on a CPU)."""
        super().__init__(labels, root_label=root_label)
        if dead_end_rule not in DEAD_END_RULES:
            raise ValueError(f"dead_end_rule: one of {DEAD_END_RULES}, not {dead_end_rule!r}")
        if graph_rule not in GRAPH_RULES:
            raise ValueError(f"graph_rule: one of {GRAPH_RULES}, not {graph_rule!r}")
        if graph_rule != "abandon" and dead_end_rule != "exit":
            raise ValueError(
                f"graph_rule={graph_rule!r} decides the exit rule: needs dead_end_rule='exit'"
            )
        self.dead_end_rule = dead_end_rule
        self.graph_rule = graph_rule
        self.exit_rule = exit_rule
        """The tensor rule of ``graph_rule`` "tensor" and "compiled" (compiled lazily, on
        its first call)."""
        if graph_rule == "compiled":
            self.exit_rule = torch.compile(exit_rule, **COMPILE_OPTIONS)
        self.abandons_slow_rows = False
        """Set on the :meth:`for_graphs` variant: slow rows are abandoned, not decided, and
        so are the rows unfinished after its linear budget of steps (:meth:`max_transitions`)."""
        self.waits_undecided_rows = False
        """Set on the greedy :meth:`for_graphs` variant of the tensor rule: a row the rule
        leaves undecided waits (takes no transition this step) instead of being abandoned."""
        if dead_end_rule == "exit":
            self.legal_test: Callable[[Configuration, Move], bool] = exit_legal
        else:
            self.legal_test = is_legal

    state_class = TwoRegistersState
    state_stacks = MappingProxyType({"stack": False})
    state_scalars = MappingProxyType(
        {
            "r1": -1,
            "r2": -1,
            "covered1": 0,
            "covered2": 0,
            "last": -1,
            "abandoned": 0,
            "waiting": 0,
        }
    )
    state_front = 0  # the root 0 starts in the buffer

    def prepare(self, state: State) -> None:
        """The legal mask's book-keeping (:func:`initial_bookkeeping`)."""
        scalars, tables = initial_bookkeeping(state.lengths, state.n_max)
        state.scalars.update(scalars)
        state.tables.update(tables)

    def finished(self, state: State) -> Tensor:
        """Configurations whose parse is complete: the buffer consumed, both registers empty."""
        s = state.scalars
        return (s["front"] > state.lengths) & (s["r1"] < 0) & (s["r2"] < 0)

    def terminal(self, state: State) -> Tensor:
        """Finished configurations, and those the :meth:`for_graphs` variant abandoned."""
        return self.finished(state) | (state.scalars["abandoned"] == 1)

    def for_graphs(self, *, beam: bool = False) -> TwoRegisters:
        """A host-free variant for CUDA graphs, greedy decoding and beam search:
        :meth:`transition_legal` decides the fast rows by the closed form, which is the rule
        there, with ``graph_rule="tensor"`` the others by the exit rule's tensor form where it
        decides them, and abandons every other non-terminal configuration
        (:meth:`abandoned`; it counts as terminal from then on).  Beam search searches a
        sentence again when an item it gave up scored at least as high as its best finished
        item (:func:`~neuralparse.search.beam.fixed_length_beam`).

        In greedy decoding with ``graph_rule`` "tensor" or "compiled", a row that the rule
        leaves undecided (more rows to search than :func:`search_limit`) is not abandoned but
        waits: it takes no transition in that step and is searched again in the next, which
        changes no tree since a configuration's scores do not depend on the step.  A row
        still unfinished when the steps run out is abandoned then.  Beam search cannot wait
        (a sentence's items advance together), so it abandons."""
        variant = copy.copy(self)
        variant.abandons_slow_rows = variant.linear_budget = True
        variant.waits_undecided_rows = not beam and self.graph_rule != "abandon"
        return variant

    def abandoned(self, state: State) -> Tensor:
        """Configurations the :meth:`for_graphs` variant gave up, and those unfinished once
        its budget of steps is spent (:meth:`max_transitions`; with waiting rows, all)."""
        given_up = state.scalars["abandoned"] == 1
        if self.waits_undecided_rows:
            return given_up | ~self.finished(state)
        return given_up | super().abandoned(state)

    def apply(self, state: State, actions: Tensor, where: Tensor | None = None) -> None:
        """As the engine's, but a row waiting for the search (:meth:`for_graphs`) is left
        unchanged."""
        if self.waits_undecided_rows:
            moving = state.scalars["waiting"] == 0
            where = moving if where is None else where & moving
        super().apply(state, actions, where)

    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        """The closed form on fast rows, the rule's reference (:func:`is_legal`, or
        ``exit_legal``, which agrees with the same closed form there) on the others
        (:mod:`~neuralparse.systems.two_registers.mask`); the :meth:`for_graphs` variant
        decides the others by the exit rule's tensor form where it can (``graph_rule``) and
        abandons the rest."""
        fast = fast_rows(state)
        legal, roots = fast_mask(state)
        slow = ~fast & ~self.terminal(state)
        legal = legal & fast[:, None]
        roots = roots & fast[:, None]
        if self.abandons_slow_rows:  # no host read
            abandon = slow
            if self.graph_rule != "abandon":
                view = words_view(state)
                # Exact on every row it touches, so fast rows may be refreshed too.
                every = torch.arange(state.batch_size, device=state.device)
                refresh_bookkeeping(state, every, view)
                limit = search_limit(state.batch_size)
                rule_legal, rule_roots, decided = self.exit_rule(view, limit)
                use = (slow & decided)[:, None]
                legal = torch.where(use, rule_legal, legal)
                roots = torch.where(use, rule_roots, roots)
                undecided = slow & ~decided
                if self.waits_undecided_rows:  # greedy: searched again next step
                    state.scalars["waiting"] = undecided.long()
                    abandon = torch.zeros_like(undecided)
                else:
                    abandon = undecided
            state.scalars["abandoned"] = state.scalars["abandoned"] | abandon.long()
            return legal, roots
        index = torch.nonzero(slow).flatten()
        if index.numel() == 0:
            return legal, roots
        refresh_bookkeeping(state, index, words_view(state, index))
        # On the host: on the CPU the tensor form costs 10-17 ms a call for 1-64 rows
        # (thousands of small operators), the host 0.2-4.3 ms, and such rows are rare.
        rows = index.tolist()
        mirrored = state.configs if isinstance(state, TwoRegistersState) else []
        if mirrored:
            configs, which = [mirrored[b] for b in rows], list(range(len(rows)))
        else:
            configs, which = distinct_configurations(state, rows)
        slow_legal, slow_roots = reference_rows(configs, self.legal_test)
        of_row = torch.tensor(which, dtype=torch.long)
        legal[index] = torch.tensor(slow_legal, dtype=torch.bool)[of_row].to(state.device)
        roots[index] = torch.tensor(slow_roots, dtype=torch.bool)[of_row].to(state.device)
        return legal, roots

    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        """Table 2 on the active rows as tensor operations.  Rows that ``apply`` leaves out
        (terminal, or masked by its ``where``) are not looked at, whatever action they
        carry; an active row whose transition lacks its operands (Table 2: e.g. Reduce on an
        empty stack) raises ``ValueError``, a caller bug since ``legal`` never offers it.
        Table 4 itself is not re-checked here (the mask is), and the :meth:`for_graphs`
        variant, which may not read the host, trusts the mask for the operands too."""
        ok = _structurally_applicable(state, transitions) | ~active
        if not self.abandons_slow_rows and not bool(ok.all()):
            b = int(torch.nonzero(~ok)[0, 0])
            move = Move(int(transitions[b]))
            raise ValueError(f"two_registers: {move.readable} is not applicable in row {b}")
        configs = state.configs if isinstance(state, TwoRegistersState) else []
        if configs:
            rows = torch.nonzero(active).flatten().tolist()
            moves = [Move(int(t)) for t in transitions[rows].tolist()]
            for b, move in zip(rows, moves, strict=True):  # no half-applied step
                if not table4_legal(configs[b], move):
                    raise ValueError(f"two_registers: {move.readable} is not applicable in row {b}")
            for b, move in zip(rows, moves, strict=True):
                apply_move(configs[b], move)
        fast = fast_rows(state)
        s1 = state.pool.token[state.tops["stack"]]
        _apply_tensors(state, active, transitions, labels, fast, s1)

    def features(self, state: State) -> Tensor:
        registers = torch.stack([state.scalars["r1"], state.scalars["r2"]], 1)
        return torch.cat([state.stack_tokens("stack", 3), state.buffer_tokens(1), registers], 1)

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        """2-Crossing-Interval and single-rooted (the trees of design note 03, item 4, are in the
        class but not derivable; no UD training tree we tried is one of them)."""
        return sum(1 for h in heads if h == 0) == 1 and is_k_crossing_interval(heads, 2)

    def max_transitions(self, n: int) -> int:
        """§6: 5n + 5 (the root vertex 0 is shifted or stored too).  The :meth:`for_graphs`
        variant, which a graph runs for all its steps, has 2n + 2(n // 4 + 4): static-oracle
        derivations of the shared treebanks' training sentences take 1.91n-1.98n on average,
        and every one fits."""
        return min(2 * n + 2 * (n // 4 + 4), 5 * n + 5) if self.linear_budget else 5 * n + 5

    def gold_extra(self, heads: Sequence[int]) -> dict[str, list[int]]:
        """The register pair ``(a, b)`` chosen for each crossing interval (found by the
        reference oracle): ``register_b[a] = b``, ``interval_right[a] = r``."""
        n = len(heads)
        partner, right = [-1] * (n + 1), [-1] * (n + 1)
        guide = oracle_guide(heads, table4_legal)
        for plan in guide.plans if guide is not None else ():
            partner[plan.a], right[plan.a] = plan.b, plan.right
        return {"register_b": partner, "interval_right": right}

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        assert isinstance(state, TwoRegistersState)
        if not state.configs:
            state.configs = reference_configurations(state, range(state.batch_size))
        moves: list[int] = []
        labels: list[int] = []
        heads_rows = gold.heads.tolist()
        label_rows = gold.labels.tolist()
        partner_rows = gold.extra["register_b"].tolist()
        right_rows = gold.extra["interval_right"].tolist()
        for b, c in enumerate(state.configs):
            guide = gold.memo.get(("guide", b))
            if guide is None:
                heads = heads_rows[b][1 : c.n + 1]
                plans = [
                    RegisterPlan(-1, right_rows[b][a], a, partner_rows[b][a])
                    for a in range(c.n + 1)
                    if partner_rows[b][a] >= 0
                ]
                guide = gold.memo["guide", b] = OracleGuide(heads, plans, self.legal_test)
            assert isinstance(guide, OracleGuide)
            guide.config = c
            move = None if c.is_terminal() else guide.next_move()
            move = Move.SHIFT if move is None else move
            label = -1
            if move in ARC_MOVES:
                label = label_rows[b][successor(c, move).arcs[-1][1]]
            moves.append(int(move))
            labels.append(label)
        device = state.device
        return self.actions_for(
            torch.tensor(moves, dtype=torch.long, device=device),
            torch.tensor(labels, dtype=torch.long, device=device),
        )


def _apply_tensors(
    state: State, active: Tensor, transitions: Tensor, labels: Tensor, fast: Tensor, s1: Tensor
) -> None:
    """Table 2 as tensor operations over the batch (constant work per configuration), with
    the mask's book-keeping (``fast``: the rows :func:`fast_rows` accepted before the step,
    ``s1``: their stack tops); the arcs built go to the state's arc log."""
    s = state.scalars
    front, r1, r2 = s["front"], s["r1"], s["r2"]
    s0 = state.pool.token[state.tops["stack"]]
    t = torch.where(active, transitions, torch.full_like(transitions, -1))
    left, right = t == Move.LEFT_ARC, t == Move.RIGHT_ARC
    shift, reduce = t == Move.SHIFT, t == Move.REDUCE
    store = (t == Move.STORE_NO_ARC) | (t == Move.STORE_LEFT) | (t == Move.STORE_RIGHT)
    clear = t == Move.CLEAR
    rs1 = (t == Move.REGISTER_STACK_1_TO_REGISTER) | (t == Move.REGISTER_STACK_1_TO_STACK)
    rs2 = (t == Move.REGISTER_STACK_2_TO_REGISTER) | (t == Move.REGISTER_STACK_2_TO_STACK)
    to_register = (t == Move.REGISTER_STACK_1_TO_REGISTER) | (
        t == Move.REGISTER_STACK_2_TO_REGISTER
    )
    rk = torch.where(rs1, r1, r2)
    rs = rs1 | rs2
    # Arcs: (dependent, head) per transition.
    none = torch.full_like(front, -1)
    dep = torch.where(left, s0, torch.where(right, front, none))
    head = torch.where(left, front, torch.where(right, s0, none))
    store_left, store_right = t == Move.STORE_LEFT, t == Move.STORE_RIGHT
    dep = torch.where(store_left, r1, torch.where(store_right, front, dep))
    head = torch.where(store_left, front, torch.where(store_right, r1, head))
    dep = torch.where(rs & to_register, rk, torch.where(rs & ~to_register, s0, dep))
    head = torch.where(rs & to_register, s0, torch.where(rs & ~to_register, rk, head))
    builds = left | right | store_left | store_right | rs
    state.log_arcs(builds, dep, head, labels)
    update_bookkeeping(state, active, transitions, fast, s1, builds, dep, head)
    # IsCovered (footnote 2).
    s["covered1"] = torch.where(rs2 & (s0 < r1), 1, s["covered1"])
    s["covered2"] = torch.where(rs1 & (r2 >= 0) & (s0 > r2), 1, s["covered2"])
    # Clear's γ and ψ (Table 2), before the stack changes.
    gamma_t = torch.where(s0 == front - 1, s0, torch.where(r2 == front - 1, r2, none))
    psi = torch.stack(
        [
            s0,
            torch.where(s["covered1"] == 0, r1, none),
            torch.where(s["covered2"] == 0, r2, none),
        ],
        1,
    )
    psi = torch.where((psi == gamma_t[:, None]) | (psi < 0), -1, psi)
    psi = torch.sort(torch.where(psi < 0, INF, psi), 1).values
    pop = left | reduce | (clear & (s0 >= 0)) | (rs & ~to_register & (s0 < rk))
    state.pop("stack", pop)
    state.push("stack", shift | right, front)
    for i in range(3):
        word = psi[:, i]
        state.push("stack", clear & (word < INF), torch.where(word < INF, word, 0))
    pushed = torch.cat(
        [torch.where(shift | right, front, -1)[:, None], torch.where(clear[:, None], psi, -1)], 1
    )
    mark_stack(state.tables["words"], torch.where(pop, s0, -1), pushed)
    last = torch.maximum(gamma_t, torch.where(psi < INF, psi, -1).max(1).values)
    s["last"] = torch.where(clear & (last >= 0), last, s["last"])
    # Registers and the buffer range.
    s["r1"] = torch.where(store & (r1 < 0), front, torch.where(clear, none, r1))
    s["r2"] = torch.where(store & (r1 >= 0), front, torch.where(clear, none, r2))
    s["covered1"] = torch.where(clear, 0, s["covered1"])
    s["covered2"] = torch.where(clear, 0, s["covered2"])
    s["front"] = front + (shift | right | store).long() - (clear & (gamma_t >= 0)).long()
