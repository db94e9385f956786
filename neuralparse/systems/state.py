"""The batched parser state shared by every transition system.

A :class:`State` holds ``B`` configurations (sentences x beam items) as tensors on one device.
Its design makes every transition, legal mask and beam reordering cost O(1) per
configuration, whatever the sentence length:

* **Stacks are persistent linked lists** in a :class:`NodePool` shared by all configurations
  of the batch (and by the states a beam search derives from each other).  A node is
  ``(token, next)`` plus optional named per-node attributes (``has_head``...).  A stack is a
  pointer to its top node and a size per configuration; pushing allocates one node, popping
  follows ``next``.  Nodes are never modified after they are written, so several
  configurations (beam items) can share a stack suffix, and an attribute that changes on a
  stack top is updated copy-on-write (pop, then push a new node).  Node 0 is the *null* node
  (token -1, next 0), so reading below the bottom of a stack needs no branch; node 1 is the
  artificial root 0, shared by every configuration.
* **The buffer** is the contiguous range ``front..length`` of word indices (scalar ``front``);
  systems that push words back (swap, two-registers' Clear) keep them on an extra stack named
  ``"buffer"`` in front of that range.
* **Registers and counters** are named per-configuration scalars (``[B]`` long tensors).
* **Per-word tables** (``State.tables``) are named tensors ``[B, ...]`` whose first dimension
  is the batch: what a system must know about every word and cannot keep on a stack node
  (planar's has-head and union-find, three-step's dense tree and valencies, two-registers'
  head table).  :meth:`State.reorder` gathers them like the scalars, so a beam step costs
  O(n) per configuration for a system that has them (the documented exception to O(1)).
* **Arcs** are logged per step (dependent, head, label; -1 when a step builds no arc) and
  assembled into heads only at the end, following the back-pointers recorded by
  :meth:`State.reorder` when a beam search selects successors.

Per step the pool grows by ``B`` nodes per push; its storage grows geometrically, so the copy
on growth costs O(1) amortized per node.  Nothing here loops in Python over configurations or
tokens, and everything runs unchanged on CPU and CUDA (tensors live on ``State.device``).

Systems add what they need by name: extra stacks (``State.tops``/``State.sizes``), per-config
scalars (``State.scalars``), per-word tables (``State.tables``) and per-node attributes
(``NodePool.attrs``), which is how the mildly non-projective systems (a second stack,
registers, valencies) fit.  A subclass of :class:`State` with per-configuration fields of its
own extends :meth:`State.gathered`, the one copy path of :meth:`State.reorder`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Self

import torch
from torch import Tensor

NULL_NODE = 0
"""Pool index of the null node: token -1, next 0 (itself)."""
ROOT_NODE = 1
"""Pool index of the shared node holding the artificial root 0."""
NULL_TOKEN = -1


class NodePool:
    """Append-only storage of immutable linked-list nodes for persistent stacks.

    ``token[i]`` and ``next[i]`` describe node ``i``; ``attrs[name][i]`` hold the optional
    per-node attributes declared at construction (with their default values, used for the
    null and root nodes).  Allocation hands out ``count`` fresh consecutive indices; storage
    doubles when full, so the amortized cost per node is constant.
    """

    def __init__(
        self,
        device: torch.device,
        capacity: int = 1024,
        attrs: Mapping[str, int] | None = None,
    ) -> None:
        self.device = device
        self.defaults: dict[str, int] = dict(attrs or {})
        capacity = max(capacity, 2)
        self.token = torch.full((capacity,), NULL_TOKEN, dtype=torch.long, device=device)
        self.next = torch.zeros(capacity, dtype=torch.long, device=device)
        self.attrs: dict[str, Tensor] = {
            name: torch.full((capacity,), default, dtype=torch.long, device=device)
            for name, default in self.defaults.items()
        }
        # fill_, not ``token[ROOT_NODE] = 0``: on CUDA that copies a host scalar, which a
        # CUDA graph capture refuses.
        self.token[ROOT_NODE].fill_(0)
        self.used = 2  # null node and root node

    @property
    def capacity(self) -> int:
        return self.token.shape[0]

    def _grow(self, needed: int) -> None:
        capacity = self.capacity
        while capacity < needed:
            capacity *= 2

        def grown(old: Tensor, fill: int) -> Tensor:
            new = torch.full((capacity,), fill, dtype=old.dtype, device=self.device)
            new[: self.used] = old[: self.used]
            return new

        self.token = grown(self.token, NULL_TOKEN)
        self.next = grown(self.next, 0)
        self.attrs = {name: grown(t, self.defaults[name]) for name, t in self.attrs.items()}

    def push(self, tokens: Tensor, below: Tensor, **attrs: Tensor) -> Tensor:
        """Allocate one node per entry: ``token = tokens[b]``, ``next = below[b]``, and the
        given attributes (others take their defaults).  Returns the new node indices."""
        unknown = set(attrs) - set(self.attrs)
        if unknown:
            raise KeyError(f"unknown node attributes {sorted(unknown)}")
        count = tokens.shape[0]
        if self.used + count > self.capacity:
            self._grow(self.used + count)
        start, stop = self.used, self.used + count
        self.token[start:stop] = tokens
        self.next[start:stop] = below
        for name, t in self.attrs.items():
            if name in attrs:
                t[start:stop] = attrs[name]
            else:
                t[start:stop] = self.defaults[name]
        self.used = stop
        return torch.arange(start, stop, device=self.device)


@dataclass(frozen=True)
class LogEntry:
    """One cell of the arc log, a persistent (cons) list so that beam items share history.

    ``kind == "arc"``: ``tensors = (dep, head, label)``, ``[B]`` each, ``dep = -1`` where a
    configuration built no arc.  ``kind == "reorder"``: ``tensors = (parent,)`` where
    ``parent[b]`` is the index, in the previous batch, of the configuration that became ``b``.
    Appending or reordering creates one cell: O(1), however long the history.
    """

    kind: str
    tensors: tuple[Tensor, ...]
    previous: LogEntry | None


def assemble_arcs(
    log: LogEntry | None, batch: int, n_max: int, device: torch.device
) -> tuple[Tensor, Tensor]:
    """Heads and labels ``[batch, n_max + 1]`` (column 0 and unattached words: -1).

    Walks the log backwards once (O(steps) tensor operations of size ``batch``), mapping each
    final configuration to its ancestors through the reorder back-pointers.
    """
    width = n_max + 1
    lineage = torch.arange(batch, device=device)
    deps: list[Tensor] = []
    hds: list[Tensor] = []
    lbs: list[Tensor] = []
    entry = log
    while entry is not None:
        if entry.kind == "reorder":
            lineage = entry.tensors[0][lineage]
        else:
            dep, head, label = entry.tensors
            deps.append(dep[lineage])
            hds.append(head[lineage])
            lbs.append(label[lineage])
        entry = entry.previous
    # Flat scatter: slot b * width + dep, and one spare slot at the end for "no arc".
    heads = torch.full((batch * width + 1,), -1, dtype=torch.long, device=device)
    labels = heads.clone()
    if deps:
        dep = torch.stack(deps, 1)
        offsets = torch.arange(batch, device=device)[:, None] * width
        slot = torch.where(dep >= 0, offsets + dep, batch * width).flatten()
        heads.scatter_(0, slot, torch.stack(hds, 1).flatten())
        labels.scatter_(0, slot, torch.stack(lbs, 1).flatten())
    return heads[:-1].view(batch, width), labels[:-1].view(batch, width)


@dataclass
class State:
    """``B`` parser configurations.  See the module docstring for the representation.

    Fields:
        lengths: ``[B]`` number of words of each configuration's sentence.
        pool: node storage shared by the stacks (and by states derived through reorder).
        tops, sizes: per named stack, ``[B]`` top node index and size.
        scalars: per-config named scalars ``[B]``; always ``front`` (first word of the buffer
            range) and ``steps`` (transitions applied so far).
        log: the newest cell of the arc log (None before the first arc step).
        known_n_max: the longest sentence when the creator knew it (else read from
            ``lengths`` on the host when needed).
        tables: per-config named per-word tables ``[B, ...]`` (first dimension the batch),
            gathered by :meth:`reorder` like the scalars.
    """

    lengths: Tensor
    pool: NodePool
    tops: dict[str, Tensor]
    sizes: dict[str, Tensor]
    scalars: dict[str, Tensor]
    log: LogEntry | None = None
    known_n_max: int | None = None
    tables: dict[str, Tensor] = field(default_factory=dict)

    @property
    def batch_size(self) -> int:
        return self.lengths.shape[0]

    @property
    def device(self) -> torch.device:
        return self.lengths.device

    @property
    def n_max(self) -> int:
        if self.known_n_max is not None:
            return self.known_n_max
        return int(self.lengths.max().item()) if self.batch_size else 0

    @classmethod
    def create(
        cls,
        lengths: Tensor,
        *,
        stacks: Mapping[str, bool],
        scalars: Mapping[str, int] | None = None,
        node_attrs: Mapping[str, int] | None = None,
        front: int = 1,
        capacity_hint: int = 0,
        n_max: int | None = None,
    ) -> State:
        """Initial state: each stack in ``stacks`` holds the root node (True) or is empty;
        the buffer range starts at word ``front``; scalars start at the given values."""
        lengths = lengths.to(dtype=torch.long)
        device = lengths.device
        batch = lengths.shape[0]
        pool = NodePool(device, capacity=max(1024, capacity_hint), attrs=node_attrs)
        tops = {
            name: torch.full((batch,), ROOT_NODE if has_root else NULL_NODE, device=device)
            for name, has_root in stacks.items()
        }
        sizes = {
            name: torch.full((batch,), 1 if has_root else 0, device=device)
            for name, has_root in stacks.items()
        }
        values = {"front": front, "steps": 0, **(scalars or {})}
        state_scalars = {
            name: torch.full((batch,), value, dtype=torch.long, device=device)
            for name, value in values.items()
        }
        return cls(lengths, pool, tops, sizes, state_scalars, known_n_max=n_max)

    # -- reading -------------------------------------------------------------------------
    def stack_tokens(self, name: str, depth: int) -> Tensor:
        """``[B, depth]`` tokens of the top ``depth`` nodes of a stack (top first; -1 below
        the bottom).  O(depth) per configuration."""
        node = self.tops[name]
        out = []
        for _ in range(depth):
            out.append(self.pool.token[node])
            node = self.pool.next[node]
        return torch.stack(out, 1)

    def node_attr(self, name: str, node: Tensor) -> Tensor:
        return self.pool.attrs[name][node]

    def buffer_tokens(self, depth: int) -> Tensor:
        """``[B, depth]`` first buffer words (pushed-back words first, then the range
        ``front..length``; -1 past the end).  O(depth) per configuration."""
        front = self.scalars["front"]
        if "buffer" not in self.tops:
            offsets = torch.arange(depth, device=self.device)
            words = front[:, None] + offsets
            return torch.where(words <= self.lengths[:, None], words, NULL_TOKEN)
        node = self.tops["buffer"]
        size = self.sizes["buffer"]
        out = []
        for i in range(depth):
            from_range = front + (i - size).clamp(min=0)
            range_word = torch.where(from_range <= self.lengths, from_range, NULL_TOKEN)
            out.append(torch.where(size > i, self.pool.token[node], range_word))
            node = self.pool.next[node]
        return torch.stack(out, 1)

    def buffer_size(self) -> Tensor:
        size = (self.lengths - self.scalars["front"] + 1).clamp(min=0)
        if "buffer" in self.sizes:
            size = size + self.sizes["buffer"]
        return size

    # -- writing -------------------------------------------------------------------------
    def push(self, name: str, where: Tensor, tokens: Tensor, **attrs: Tensor) -> None:
        """Push ``tokens[b]`` on stack ``name`` for the configurations where ``where``."""
        new = self.pool.push(tokens, self.tops[name], **attrs)
        self.tops[name] = torch.where(where, new, self.tops[name])
        self.sizes[name] = self.sizes[name] + where.long()

    def pop(self, name: str, where: Tensor) -> None:
        self.tops[name] = torch.where(where, self.pool.next[self.tops[name]], self.tops[name])
        self.sizes[name] = self.sizes[name] - where.long()

    def log_arcs(self, where: Tensor, dep: Tensor, head: Tensor, label: Tensor) -> None:
        dep = torch.where(where, dep, torch.full_like(dep, -1))
        self.log = LogEntry("arc", (dep, head, label), self.log)

    # -- beam search ---------------------------------------------------------------------
    def reorder(self, parent: Tensor) -> Self:
        """A new state of the same class whose configuration ``b`` continues configuration
        ``parent[b]`` of this one.  Gathers per-configuration scalars (O(1) each) and per-word
        tables (O(n) each); the node pool is shared and the arc log gains one back-pointer
        entry.  Fields that :meth:`gathered` does not name are shared with this state."""
        parent = parent.to(device=self.device, dtype=torch.long)
        return replace(self, **self.gathered(parent))

    def gathered(self, parent: Tensor) -> dict[str, Any]:
        """The fields :meth:`reorder` replaces, gathered along ``parent``: a subclass with
        per-configuration fields of its own adds them here (and only here)."""
        return {
            "lengths": self.lengths[parent],
            "tops": {k: v[parent] for k, v in self.tops.items()},
            "sizes": {k: v[parent] for k, v in self.sizes.items()},
            "scalars": {k: v[parent] for k, v in self.scalars.items()},
            "tables": {k: v[parent] for k, v in self.tables.items()},
            "log": LogEntry("reorder", (parent,), self.log),
        }

    def heads_and_labels(self) -> tuple[Tensor, Tensor]:
        """``[B, n_max + 1]`` heads and label indices of the arcs built so far (-1: none)."""
        return assemble_arcs(self.log, self.batch_size, self.n_max, self.device)
