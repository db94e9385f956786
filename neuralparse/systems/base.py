"""The transition-system interface on the batched :class:`~neuralparse.systems.state.State`.

A system fixes its unlabeled transitions (in the paper's names), which of them build arcs,
and the label inventory given at construction.  Actions are the unlabeled transitions with
the arc-building ones multiplied by the labels, e.g. ``SHIFT``, ``LEFT-ARC:nsubj``; with an
empty label inventory every transition is one action (unlabeled parsing).

Conventions shared by every system:

* ``apply`` changes the state **in place** and ignores terminal configurations (whatever
  action is passed for them), so a batch can keep stepping until all are terminal;
  ``reorder`` (beam search) returns a new state.
* ``legal`` is all False for terminal configurations; every non-terminal configuration has at
  least one legal action (no dead ends), and every legal sequence reaches a terminal
  configuration within ``max_transitions(n)`` steps whose arcs form a single-rooted tree of the
  system's class (soundness), exactly one word attached to the root 0 (UD).
* With ``root_label`` (default ``"root"``) in an inventory that has other labels too, arcs from
  the root 0 take exactly that label and word-to-word arcs never do (the UD rule).
* ``initial`` builds the state layout a system declares (``state_stacks``, ``state_scalars``,
  ``state_node_attrs``, ``state_front``, ``state_class``) and lets ``prepare`` add what
  depends on the lengths; per-word facts go into per-word tables (``State.tables``), which
  ``reorder`` gathers with the per-configuration scalars.
* ``features`` returns token indices ``[B, F]`` named by ``feature_names``: 0 is the root,
  1..n words, -1 null.  Stack tops and buffer front, as in Kiperwasser & Goldberg (2016).
* Static oracles run on the engine itself, batched: ``oracle_actions(state, gold)`` chooses one
  action per configuration from tensors (gold heads, labels, children counts and
  system-specific tables), so that oracle replay over a treebank costs the same constant work
  per transition as parsing.  ``oracle(heads, deprels)`` wraps it for one tree.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

import torch
from torch import Tensor

from neuralparse.systems.sequences import run_oracle
from neuralparse.systems.state import State
from neuralparse.trees.lifting import lift


@dataclass
class Gold:
    """Gold trees of a batch as tensors ``[B, n_max + 1]`` (column 0 = the root; padding and
    the root's own head are -1), plus what static oracles consult.

    ``attached[b, v]`` counts the dependents of ``v`` attached so far; it is oracle-side
    book-keeping, updated by :func:`run_oracle` from the arc log after every step.
    ``extra`` holds system-specific per-word tables (projective order, components...);
    ``memo`` whatever else a static oracle keeps from one step to the next for a batch
    (two-registers' per-tree oracle guides), so that the parser state holds none of it.
    """

    heads: Tensor
    labels: Tensor
    n_children: Tensor
    attached: Tensor
    extra: dict[str, Tensor] = field(default_factory=dict)
    memo: dict[object, object] = field(default_factory=dict)

    def at(self, table: Tensor, tokens: Tensor, fill: int = -1) -> Tensor:
        """``table[b, tokens[b]]``, or ``fill`` where ``tokens[b]`` is the null index -1."""
        value = table.gather(1, tokens.clamp(min=0)[:, None])[:, 0]
        return torch.where(tokens >= 0, value, torch.full_like(value, fill))

    def complete(self, tokens: Tensor) -> Tensor:
        """Whether each token already has all its gold dependents (False for null)."""
        return (self.at(self.attached, tokens) == self.at(self.n_children, tokens)) & (tokens >= 0)


def in_buffer(state: State, tokens: Tensor) -> Tensor:
    """Whether each token lies in the buffer range ``front..length`` (False for -1)."""
    return (tokens >= state.scalars["front"]) & (tokens <= state.lengths) & (tokens >= 0)


def add_where(table: Tensor, tokens: Tensor, where: Tensor, step: int) -> None:
    """``table[b, tokens[b]] += step`` where ``where[b]``, without reading the host."""
    table.scatter_add_(1, tokens.clamp(min=0)[:, None], (where.long() * step)[:, None])


def set_where(table: Tensor, tokens: Tensor, where: Tensor, value: bool) -> None:
    """``table[b, tokens[b]] = value`` where ``where[b]``, without reading the host."""
    index = tokens.clamp(min=0)[:, None]
    current = table.gather(1, index)
    table.scatter_(1, index, torch.where(where[:, None], value, current))


class TransitionSystem(ABC):
    """Abstract transition system over a :class:`State` batch (see the module docstring)."""

    name: ClassVar[str]
    transitions: ClassVar[tuple[str, ...]]
    """Unlabeled transitions, in the paper's names; their index is the transition id."""
    arc_transitions: ClassVar[frozenset[str]]
    """The transitions that build an arc and therefore take a label."""
    feature_names: ClassVar[tuple[str, ...]] = ("s0", "s1", "s2", "b0")
    arc_operands: ClassVar[Mapping[str, tuple[str, str]]] = MappingProxyType({})
    """``transition -> (head, dependent)``, both names of ``feature_names``: the arc the
    transition builds joins those two feature tokens of the configuration (the paper's table
    of the transitions, read off the features).  Decoding's arc term
    (:mod:`neuralparse.search.arc_term`) weighs each such transition by the arc scorer's
    probability of its arc; a transition left out (three-step's Dist, whose head and dependent
    are not features) is scored by the transition scorer alone."""
    arc_term_by_default: ClassVar[bool] = True
    """Whether decoding applies the model's arc term (``model.arc_decoding_weight``) when the
    caller names no weight (an explicit ``arc_weight`` always wins).  The term scores a
    transition that builds none of the offered arcs by the probability that none of them is
    right, which is what such a transition means where it separates their words for good
    (arc-eager's SHIFT and REDUCE).  Where an arc joins two stack words (arc-standard's,
    swap's, arc-hybrid's RIGHT-ARC), SHIFT only defers it, and the term pushes the arc before
    its dependent has its own dependents: those systems lost 1.6-3.6 LAS with it on Gothic-PROIEL
    and Greek-GDT (none on Hungarian-Szeged), where the others gained up to 0.6
    (docs/results.md, "The arc term and the systems whose arcs join two stack words")."""
    graph_safe: ClassVar[bool] = False
    """Whether greedy decoding and beam search may be recorded as a CUDA graph
    (:mod:`neuralparse.search.graphs`): ``features``, ``legal`` and ``apply`` never read a
    tensor's value on the host, and ``max_transitions`` is linear in the sentence length.
    A system that reads the host only in rare configurations may offer a host-free variant
    for greedy graphs instead (:meth:`for_graphs`)."""
    linear_budget: bool = False
    """True on a :meth:`for_graphs` variant whose step bound is a budget (:meth:`abandoned`)."""

    derivations_in_class: ClassVar[bool] = True
    """Whether every tree the system derives is in its class (:meth:`in_class`), as random
    walks are checked; False where ``in_class`` names only the trees the static oracle
    reproduces exactly, a subset of what the transitions can build (three-step)."""

    # The initial state's layout (see :meth:`initial`).
    state_class: ClassVar[type[State]] = State
    state_stacks: Mapping[str, bool] = MappingProxyType({"stack": True})
    """Named stacks; True: the stack starts holding the root 0, False: empty."""
    state_scalars: Mapping[str, int] = MappingProxyType({})
    """Per-configuration scalars besides ``front`` and ``steps``, with their initial values."""
    state_node_attrs: Mapping[str, int] = MappingProxyType({})
    """Per-node attributes of the stacks' nodes, with their default values."""
    state_front: int = 1
    """The first buffer word (0 where the root starts in the buffer)."""

    def __init__(self, labels: Sequence[str] = (), *, root_label: str | None = "root") -> None:
        self.labels: tuple[str, ...] = tuple(labels)
        if len(set(self.labels)) != len(self.labels):
            raise ValueError("duplicate labels in the label inventory")
        self.label_index = {label: i for i, label in enumerate(self.labels)}
        # The UD root-label rule only makes sense when other labels exist for other arcs.
        self.root_label_id = (
            self.label_index[root_label]
            if root_label in self.label_index and len(self.labels) > 1
            else -1
        )
        action_transition: list[int] = []
        action_label: list[int] = []
        width = max(1, len(self.labels))
        table = [[0] * width for _ in self.transitions]
        for t, transition in enumerate(self.transitions):
            if transition in self.arc_transitions and self.labels:
                for label_id in range(len(self.labels)):
                    table[t][label_id] = len(action_transition)
                    action_transition.append(t)
                    action_label.append(label_id)
            else:
                table[t] = [len(action_transition)] * width
                action_transition.append(t)
                action_label.append(-1)
        self._action_transition = action_transition
        self._action_label = action_label
        self._action_table = table
        self._tensors: dict[torch.device, tuple[Tensor, Tensor, Tensor, Tensor]] = {}
        self._operand_tensors: dict[torch.device, tuple[Tensor, Tensor, Tensor, Tensor]] = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(labels={len(self.labels)})"

    # -- action inventory -------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        return len(self._action_transition)

    def transition_id(self, transition: str) -> int:
        return self.transitions.index(transition)

    def action_names(self) -> list[str]:
        """Readable action names such as ``SHIFT`` and ``LEFT-ARC:nsubj``."""
        return [self.action_name(a) for a in range(self.num_actions)]

    def action_name(self, action: int) -> str:
        transition, label = self.decode(action)
        return transition if label is None else f"{transition}:{label}"

    def encode(self, transition: str, label: str | None = None) -> int:
        """The action id of a transition (with its label when it builds an arc)."""
        t = self.transition_id(transition)
        if transition in self.arc_transitions and self.labels:
            if label is None:
                raise ValueError(f"{transition} needs a label")
            return self._action_table[t][self.label_index[label]]
        return self._action_table[t][0]

    def decode(self, action: int) -> tuple[str, str | None]:
        """``(transition, label or None)`` of an action id."""
        label_id = self._action_label[action]
        label = self.labels[label_id] if label_id >= 0 else None
        return self.transitions[self._action_transition[action]], label

    def action_tensors(self, device: torch.device) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``(transition of each action [A], label of each action [A], action of
        (transition, label) [T, max(1, L)], whether each action's label is the root label)``,
        cached per device."""
        if device not in self._tensors:
            at = torch.tensor(self._action_transition, dtype=torch.long, device=device)
            al = torch.tensor(self._action_label, dtype=torch.long, device=device)
            table = torch.tensor(self._action_table, dtype=torch.long, device=device)
            is_root = (al == self.root_label_id) & (al >= 0)
            self._tensors[device] = (at, al, table, is_root)
        return self._tensors[device]

    def arc_operand_tensors(self, device: torch.device) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``(feature column of each head [K], of each dependent [K], operand of each action
        [A], membership [A, K])`` for the ``K`` transitions of :attr:`arc_operands`, in its
        order: an action whose transition is not one of them has operand ``K``, and
        ``membership[a, k]`` is 1.0 where action ``a`` is one of operand ``k``'s; cached per
        device."""
        if device not in self._operand_tensors:
            column = {feature: i for i, feature in enumerate(self.feature_names)}
            named = list(self.arc_operands.items())
            heads = [column[head] for _, (head, _) in named]
            dependents = [column[dependent] for _, (_, dependent) in named]
            operand = {self.transition_id(transition): k for k, (transition, _) in enumerate(named)}
            of_action = torch.tensor(
                [operand.get(t, len(named)) for t in self._action_transition], device=device
            )
            membership = torch.eye(len(named) + 1, device=device)[of_action, : len(named)]
            self._operand_tensors[device] = (
                torch.tensor(heads, dtype=torch.long, device=device),
                torch.tensor(dependents, dtype=torch.long, device=device),
                of_action,
                membership,
            )
        return self._operand_tensors[device]

    def actions_for(self, transitions: Tensor, labels: Tensor) -> Tensor:
        """Vectorized :meth:`encode`: action ids from transition ids and label ids ``[B]``
        (label ignored for transitions that build no arc)."""
        _, _, table, _ = self.action_tensors(transitions.device)
        return table[transitions, labels.clamp(min=0)]

    # -- the state machine ------------------------------------------------------------------
    def initial(
        self,
        lengths: Tensor | Sequence[int],
        device: torch.device | None = None,
        *,
        n_max: int | None = None,
    ) -> State:
        """The initial configurations for sentences of the given lengths.  ``n_max``, when
        given, is at least the longest of them: the state then never reads the lengths on
        the host (which a CUDA graph forbids) to size its tables.

        Builds the layout the system declares (``state_class``, ``state_stacks``,
        ``state_scalars``, ``state_node_attrs``, ``state_front``), then lets :meth:`prepare`
        add what depends on the lengths."""
        state = self.state_class.create(
            self.lengths_tensor(lengths, device),
            stacks=self.state_stacks,
            scalars=self.state_scalars,
            node_attrs=self.state_node_attrs,
            front=self.state_front,
            n_max=n_max,
        )
        self.prepare(state)
        return state

    def prepare(self, state: State) -> None:
        """Complete a freshly created initial state (per-word tables, counters computed from
        the lengths...); nothing by default."""
        return None

    @abstractmethod
    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        """``(legal [B, T], builds a root arc [B, T])`` per unlabeled transition; all False
        for terminal configurations."""

    @abstractmethod
    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        """Apply ``transitions[b]`` (with label id ``labels[b]``) where ``active[b]``."""

    @abstractmethod
    def terminal(self, state: State) -> Tensor:
        """``[B]`` whether each configuration is terminal."""

    @abstractmethod
    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        """Whether the system can derive this (single-rooted) tree; ``deprels`` matter only for
        systems whose reach depends on labels (three-step's First Available principle)."""

    def training_tree(
        self, heads: Sequence[int], deprels: Sequence[str]
    ) -> tuple[list[int], list[str]]:
        """The tree this system is trained to derive for a gold tree: the tree itself when in
        class, otherwise the tree lifted into the class, shortest non-projective arc first
        (Nivre & Nilsson 2005 §3), as Pitler & McDonald (2015 §7) prepare training data."""
        if self.in_class(heads, deprels):
            return list(heads), list(deprels)
        return lift(heads, lambda tree: self.in_class(tree, deprels)).heads, list(deprels)

    def output_tree(
        self, heads: Sequence[int], deprels: Sequence[str]
    ) -> tuple[list[int], list[str]]:
        """The final tree of a derivation: the derived tree itself, except for systems that
        derive an encoding (pseudo-projective parsing decodes it here)."""
        return list(heads), list(deprels)

    @abstractmethod
    def max_transitions(self, n: int) -> int:
        """The worst-case number of transitions for an ``n``-word sentence."""

    @abstractmethod
    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        """The static oracle's action ``[B]`` for each configuration (any value for terminal
        ones)."""

    # -- dynamic oracle (training with error exploration) -----------------------------------
    has_dynamic_oracle: ClassVar[bool] = False
    """Whether :meth:`action_costs` and :meth:`follow` are implemented: the system can be
    trained from configurations its own model reaches (``trainer.oracle=dynamic``)."""

    def action_costs(self, state: State, gold: Gold) -> Tensor:
        """``[B, A]`` the dynamic oracle's cost of every action (Goldberg & Nivre 2012): how
        many gold arcs that can still be built become unbuildable, plus one when the action
        builds a gold arc with a wrong label.  Values of illegal actions are meaningless."""
        raise NotImplementedError(f"{self.name} has no dynamic oracle")

    def follow(self, state: State, gold: Gold, actions: Tensor) -> None:
        """Update the dynamic oracle's book-keeping in ``gold`` for ``actions``, just before
        they are applied to ``state``."""
        raise NotImplementedError(f"{self.name} has no dynamic oracle")

    @staticmethod
    def lengths_tensor(lengths: Tensor | Sequence[int], device: torch.device | None) -> Tensor:
        """Sentence lengths as a long tensor on ``device`` (default: where they are)."""
        if not isinstance(lengths, Tensor):
            lengths = torch.tensor(list(lengths), dtype=torch.long)
        return lengths.to(device=device or lengths.device, dtype=torch.long)

    def legal(self, state: State) -> Tensor:
        """``[B, A]`` legal actions (all False for terminal configurations).

        One gather from a ``[B, 2T]`` table: columns ``T + t`` say "t is legal and builds a
        root arc", so an action labeled with the root label reads those and every other
        action reads "t is legal and builds no root arc" (the UD root-label rule).
        """
        legal_t, root_arc = self.transition_legal(state)
        at, _, _, is_root = self.action_tensors(state.device)
        if self.root_label_id < 0:
            return legal_t.gather(1, at.expand(legal_t.shape[0], -1))
        table = torch.cat([legal_t & ~root_arc, legal_t & root_arc], 1)
        index = at + len(self.transitions) * is_root.long()
        return table.gather(1, index.expand(legal_t.shape[0], -1))

    def apply(self, state: State, actions: Tensor, where: Tensor | None = None) -> None:
        """Apply one action per configuration, in place.  Terminal configurations, and those
        where ``where`` is False when it is given, are left unchanged."""
        at, al, _, _ = self.action_tensors(state.device)
        actions = actions.to(device=state.device, dtype=torch.long)
        active = ~self.terminal(state)
        if where is not None:
            active = active & where
        self.apply_transitions(state, active, at[actions], al[actions])
        state.scalars["steps"] = state.scalars["steps"] + active.long()

    def scored_actions(self, state: State) -> Tensor | None:
        """The actions whose scores the greedy decoder needs in this step, ascending ids
        ``[A']`` that include every legal action of every configuration, or None for all of
        them (the default).  A system whose actions fall into phases (three-step's steps)
        names those of the phases under way, so that the scorer's output layer computes only
        their rows; the choice is the same, since an illegal action is never chosen."""
        return None

    def for_graphs(self, *, beam: bool = False) -> TransitionSystem | None:
        """The system whose steps a CUDA graph records for greedy decoding (for beam search
        with ``beam``): this one when :attr:`graph_safe`, None when there is none.  A system
        whose steps read the host only in rare configurations (two-registers), or whose step
        bound is not linear (swap) or far above what derivations take (three-step,
        2-planar), returns a host-free variant that abandons a configuration there, or past
        a linear budget (:meth:`abandoned`); the graph's caller
        decodes those sentences again with this system, eagerly, so the trees are the eager
        loop's.  A graph-safe system whose eager steps read the host where that is free
        (three-step, on the CPU) returns a variant that does not."""
        return self if self.graph_safe else None

    def abandoned(self, state: State) -> Tensor:
        """``[B]`` configurations that a :meth:`for_graphs` variant gave up: with a
        :attr:`linear_budget`, those unfinished after ``max_transitions(n_max)`` steps (none
        before its last step); none otherwise."""
        if not self.linear_budget:
            return torch.zeros(state.batch_size, dtype=torch.bool, device=state.device)
        spent = state.scalars["steps"] >= self.max_transitions(state.n_max)
        return spent & ~self.terminal(state)

    def heads_and_labels(self, state: State) -> tuple[Tensor, Tensor]:
        """``[B, n_max + 1]`` heads and label ids (-1 where none; column 0 unused)."""
        return state.heads_and_labels()

    def features(self, state: State) -> Tensor:
        """``[B, F]`` token indices of ``feature_names`` (-1 = null)."""
        return torch.cat([state.stack_tokens("stack", 3), state.buffer_tokens(1)], 1)

    def reorder(self, state: State, parent: Tensor) -> State:
        """Beam search: configuration ``b`` of the result continues ``parent[b]``."""
        return state.reorder(parent)

    summary_size: int = 0
    """Width ``E`` of :meth:`summary_features` (0: the system has none)."""

    def summary_features(self, state: State) -> Tensor | None:
        """``[B, summary_size]`` float features that summarize each configuration beyond the
        tokens of ``features`` (the model feeds them to its scorer), or None when the system
        has none (``summary_size == 0``, the default)."""
        return None

    # -- oracles ----------------------------------------------------------------------------
    def gold_extra(self, heads: Sequence[int]) -> dict[str, list[int]]:
        """System-specific per-node tables (index 0..n) for the oracle; none by default."""
        return {}

    def gold(self, trees: Sequence[tuple[Sequence[int], Sequence[str] | None]], device) -> Gold:
        """Gold tensors for a batch of ``(heads, deprels)`` (deprels may be None when the
        system is unlabeled)."""
        n_max = max((len(h) for h, _ in trees), default=0)
        width = n_max + 1
        head_rows: list[list[int]] = []
        label_rows: list[list[int]] = []
        extra_rows: dict[str, list[list[int]]] = {}
        for tree_heads, deprels in trees:
            pad = [-1] * (n_max - len(tree_heads))
            head_rows.append([-1, *tree_heads, *pad])
            if self.labels:
                if deprels is None:
                    raise ValueError(f"{self.name} is labeled: the oracle needs deprels")
                try:
                    label_rows.append([-1, *(self.label_index[d] for d in deprels), *pad])
                except KeyError as err:
                    raise ValueError(f"label {err.args[0]!r} not in the label inventory") from None
            else:
                label_rows.append([-1] * width)
            for key, values in self.gold_extra(tree_heads).items():
                extra_rows.setdefault(key, []).append([*values, *pad])
        heads = torch.tensor(head_rows, dtype=torch.long, device=device).view(-1, width)
        labels = torch.tensor(label_rows, dtype=torch.long, device=device).view(-1, width)
        # Count children: padding (-1) and the root's own head go to a spare column.
        spare = torch.where(heads >= 0, heads, width)
        n_children = torch.zeros((heads.shape[0], width + 1), dtype=torch.long, device=device)
        n_children.scatter_add_(1, spare, torch.ones_like(spare))
        extras = {
            key: torch.tensor(rows, dtype=torch.long, device=device).view(-1, width)
            for key, rows in extra_rows.items()
        }
        return Gold(heads, labels, n_children[:, :width], torch.zeros_like(heads), extras)

    def oracle(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> list[int]:
        """The static oracle's action sequence for one tree (raises ValueError when the tree
        is not in the system's class, i.e. the sequence would not reproduce it)."""
        result = run_oracle(self, [(heads, deprels)])
        if not result.reproduced[0]:
            raise ValueError(f"{self.name}: the oracle does not reproduce this tree")
        return result.actions[0]
