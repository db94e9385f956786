"""The two-registers legal mask on the engine's state batch: a tensor fast path with an exact
fallback (Pitler & McDonald 2015, Tables 2 and 4; design note
``docs/dev/notes/03-two-registers.md``, items 5-6).

The mask is the one of the system's dead-end rule (Table 4, repairs 1-5 and repair 6:
:func:`~neuralparse.systems.two_registers.exit.exit_legal` by default,
:func:`~neuralparse.systems.two_registers.configuration.is_legal` with
``dead_end_rule="plans"``; both agree with the closed form below on fast rows), computed in two
ways:

* **Fast rows**: registers empty, buffer not empty and ``β1 > last`` (``β1`` was never put back
  by Clear; "fresh"), with valid book-keeping.  There every Table 4 precondition is a tensor
  expression and repair 6 has a closed form.  Write H for the headless stack words other than
  0, C for the stack words other than 0 whose tree root is 0, ``minH``/``minC`` for their
  lowest words (∞ when none) and *root free* for "0 has no dependent".  Then a completion plan
  finishes the configuration iff

      root free  ∨  minC < minH                                             (I0)

  (the registers-empty plan Left-Arcs every headless stack word to the buffer, chains the
  buffer to its last word and Right-Arcs that word from the highest stack word connected to
  0; it fails exactly when a headless word lies below every connected one and the root is
  taken).  Left-Arc, Right-Arc, Shift and Reduce lead to fast configurations again (or to a
  terminal one, complete iff no word is headless), so their rule is (I0) on the successor's
  ``minH``/``minC``; Store(no-arc) is dead-end free iff (I0) holds before it.  A fresh ``β1``
  is headless and its tree holds no stack word, so Left-Arc and Right-Arc never close a cycle
  there.  These equivalences were checked against the reference on every configuration
  reachable under the mask for n <= 6 (``docs/dev/two_registers_exhaustive.py``), and the
  tests compare both masks step by step on random batches.
* **Other rows** (a register held, ``β1 = γ``, or book-keeping stale after a register
  phase): the reference
  :class:`~neuralparse.systems.two_registers.configuration.Configuration` is rebuilt from
  the tensors and the rule decides, O(n) per row; or, in the CUDA-graph variant with
  ``graph_rule="tensor"``, the exit rule's tensor form
  (:mod:`~neuralparse.systems.two_registers.tensor_rule`) where it decides the row.  When
  such a row is fast again its book-keeping is recomputed from the tensors
  (:func:`refresh_bookkeeping`).

Book-keeping (per configuration, in ``State.scalars`` and ``State.tables`` so that beam
reordering carries it):
``min_headless`` (minH), ``min_connected`` (minC), ``root_free``, ``unattached`` (headless
words), ``stale`` (1 once a move other than the four arc-eager ones ran, until the row is
refreshed), and the table ``words [B, 3, n_max + 2]``: each word's head (-1: none), whether
it is connected to 0 and whether it is on the stack; the last column is a spare that stays
(-1, 0, 0) for null indices.  Because the stack is increasing bottom to top (Shift pushes
``β1``, Clear pushes ``ψ > σ2``), the lowest H or C word changes on a pop only when the
popped word was the only one, so both minima are O(1) scalars.  Cost: O(1) tensor work per
configuration and step on fast rows; the other rows cost O(n) Python each on the host (the
exit rule's closed forms are scans of the stack lists, and with an empty buffer and both
registers held a search over a few adopters and register choices, which with R2 = n hands a
configuration that would take it long to the tensor enumeration, ``O(n³)``;
docs/dev/two-registers-completability.md), or O(n) tensor work in the tensor form; a beam
reorder copies the table row, O(n) per configuration.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from neuralparse.systems.state import State
from neuralparse.systems.two_registers.tensor_forms import INF, Words, lowest, tree_roots

HEAD, CONNECTED, ON_STACK = 0, 1, 2
"""Rows of the per-word table ``state.tables["words"]``: each word's head (-1: none), whether
it is connected to 0 (kept exact on fast rows only), whether it is on the stack."""
FAST_MOVES = (0, 1, 2, 3)
"""Left-Arc, Right-Arc, Shift, Reduce (``Move`` values): the moves that keep the book-keeping
exact on a fast row."""


def initial_bookkeeping(lengths: Tensor, n_max: int) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """Scalars and per-word tables of the initial configurations
    ``([], [0..n], null, null, {})`` of sentences of ``lengths`` (at most ``n_max``)."""
    batch = lengths.shape[0]
    width = n_max + 2
    device = lengths.device
    words = torch.zeros((batch, 3, width), dtype=torch.long, device=device)
    words[:, HEAD] = -1
    words[:, CONNECTED, 0] = 1  # the root is in its own tree
    full = lambda v: torch.full((batch,), v, dtype=torch.long, device=device)  # noqa: E731
    scalars = {
        "min_headless": full(INF),
        "min_connected": full(INF),
        "root_free": full(1),
        "unattached": lengths.clone().long(),
        "stale": full(0),
        "right_link": full(0),
    }
    return scalars, {"words": words}


def _column(words: Tensor, row: int, index: Tensor) -> Tensor:
    """``words[b, row, index[b]]``; a negative or too large index reads the spare column."""
    width = words.shape[2]
    spare = torch.where((index >= 0) & (index < width - 1), index, width - 1)
    return words[:, row].gather(1, spare[:, None])[:, 0]


def _set_column(words: Tensor, row: int, where: Tensor, index: Tensor, value: Tensor) -> None:
    width = words.shape[2]
    spare = torch.where(where & (index >= 0) & (index < width - 1), index, width - 1)
    current = words[:, row].gather(1, spare[:, None])[:, 0]
    fill = -1 if row == HEAD else 0
    value = torch.where(where, value, current)
    value = torch.where(spare == width - 1, torch.full_like(value, fill), value)
    words[:, row].scatter_(1, spare[:, None], value[:, None])


def mark_stack(words: Tensor, popped: Tensor, pushed: Tensor) -> None:
    """Stack membership after a step: the word ``popped [B]`` leaves the stack, then the
    words ``pushed [B, k]`` enter it (-1, or INF: none)."""
    spare = words.shape[2] - 1
    on_stack = words[:, ON_STACK]
    on_stack.scatter_(1, torch.where(popped >= 0, popped, spare)[:, None], 0)
    on_stack.scatter_(1, torch.where((pushed >= 0) & (pushed < spare), pushed, spare), 1)
    on_stack[:, spare].fill_(0)


def fast_rows(state: State) -> Tensor:
    """``[B]`` rows whose mask the closed form decides (see the module docstring)."""
    s = state.scalars
    s1 = state.pool.token[state.tops["stack"]]
    words = state.tables["words"]
    # Right-Arc's acyclicity check needs the tree root of σ1 unless no word was ever given a
    # head to its right without being popped (then every stack word's tree root lies at or
    # left of it, so not at the fresh β1), or σ1 is headless or connected to 0.
    tangled = (
        (s["right_link"] == 1)
        & (_column(words, HEAD, s1) >= 0)
        & (_column(words, CONNECTED, s1) == 0)
    )
    return (
        (s["r1"] < 0)
        & (s["front"] <= state.lengths)
        & (s["front"] > s["last"])
        & (s["stale"] == 0)
        & ~tangled
    )


def fast_mask(state: State) -> tuple[Tensor, Tensor]:
    """``(legal [B, 12], root arc [B, 12])`` by the closed form; meaningful on fast rows."""
    s = state.scalars
    words = state.tables["words"]
    front, n = s["front"], state.lengths
    s1 = state.pool.token[state.tops["stack"]]
    s1_headed = _column(words, HEAD, s1) >= 0
    s1_connected = _column(words, CONNECTED, s1) == 1
    min_h, min_c, root_free = s["min_headless"], s["min_connected"], s["root_free"] == 1
    unattached = s["unattached"]
    is_last = front == n

    def i0(min_c_after: Tensor, min_h_after: Tensor, free_after: Tensor) -> Tensor:
        return free_after | (min_c_after < min_h_after)

    inf = torch.full_like(min_h, INF)
    left = (s1 >= 1) & ~s1_headed & i0(min_c, torch.where(min_h == s1, inf, min_h), root_free)
    from_root = s1 == 0
    right_applicable = (s1 >= 0) & (~from_root | root_free)
    right_after = i0(
        torch.where(s1_connected & (min_c == INF), front, min_c),
        min_h,
        root_free & ~from_root,
    )
    right = right_applicable & torch.where(is_last, unattached == 1, right_after)
    shift_after = i0(min_c, torch.where((front >= 1) & (min_h == INF), front, min_h), root_free)
    shift = ~is_last & shift_after
    reduce = (s1 >= 1) & s1_headed & i0(torch.where(min_c == s1, inf, min_c), min_h, root_free)
    store = i0(min_c, min_h, root_free)
    no = torch.zeros_like(store)
    legal = torch.stack([left, right, shift, reduce, store, *([no] * 7)], 1)
    root = torch.stack([no, right & from_root, *([no] * 10)], 1)
    return legal, root


def update_bookkeeping(
    state: State,
    active: Tensor,
    transitions: Tensor,
    fast_before: Tensor,
    s1: Tensor,
    builds: Tensor,
    dep: Tensor,
    head: Tensor,
) -> None:
    """After a step: heads, counters for every row; minH/minC/connectedness exactly on rows
    that were fast and took one of the four arc-eager moves, ``stale`` on the others.
    ``s1``, ``front`` and the arc are read before the step changed the state; call this
    before ``front`` is updated (the caller passes the pre-step front through ``dep`` for
    Right-Arc and Shift)."""
    s = state.scalars
    words = state.tables["words"]
    front = s["front"]
    t = torch.where(active, transitions, torch.full_like(transitions, -1))
    builds = builds & active
    s["unattached"] = s["unattached"] - builds.long()
    s["root_free"] = torch.where(builds & (head == 0), 0, s["root_free"])
    # Left-Arc and Register-Stack(to-stack) pop a dependent they give a head to its right.
    popping = (t == 0) | (t == 9) | (t == 11)
    s["right_link"] = torch.where(builds & (head > dep) & ~popping, 1, s["right_link"])
    fast_move = (t >= 0) & (t <= 3)
    keep = fast_before & fast_move
    s1_connected = _column(words, CONNECTED, s1) == 1
    _set_column(words, HEAD, builds, dep, head)
    left, right, shift, reduce = (keep & (t == m) for m in FAST_MOVES)
    _set_column(words, CONNECTED, right, front, s1_connected.long())
    min_h, min_c = s["min_headless"], s["min_connected"]
    inf = torch.full_like(min_h, INF)
    min_h = torch.where(left & (min_h == s1), inf, min_h)
    min_h = torch.where(shift & (front >= 1) & (min_h == INF), front, min_h)
    min_c = torch.where(right & s1_connected & (min_c == INF), front, min_c)
    min_c = torch.where(reduce & (min_c == s1), inf, min_c)
    s["min_headless"], s["min_connected"] = min_h, min_c
    s["stale"] = torch.where(active & ~keep, 1, s["stale"])


def stack_lists(state: State, rows: list[int]) -> list[list[int]]:
    """The stacks (bottom first) of the given rows, walked on the host: O(depth) each, one
    array step per level for all rows at once."""
    token = state.pool.token[: state.pool.used].cpu().numpy()
    nxt = state.pool.next[: state.pool.used].cpu().numpy()
    index = np.asarray(rows, dtype=np.int64)
    node = state.tops["stack"].cpu().numpy()[index]
    sizes = state.sizes["stack"].cpu().numpy()[index]
    depth = int(sizes.max(initial=0))
    levels = np.empty((len(rows), depth), dtype=np.int64)  # top first
    for level in range(depth):
        levels[:, level] = token[node]
        node = nxt[node]
    return [levels[i, :size][::-1].tolist() for i, size in enumerate(sizes.tolist())]


def words_view(state: State, rows: Tensor | None = None) -> Words:
    """The configurations of ``rows`` (every row when None) as
    :class:`~neuralparse.systems.two_registers.tensor_forms.Words`, tree roots computed from
    the head table."""
    s = state.scalars
    words = state.tables["words"] if rows is None else state.tables["words"][rows]

    def scalar(name: str) -> Tensor:
        return s[name] if rows is None else s[name][rows]

    head = words[:, HEAD]
    return Words(
        n=state.lengths if rows is None else state.lengths[rows],
        on_stack=words[:, ON_STACK] == 1,
        head=head,
        root=tree_roots(head),
        front=scalar("front"),
        r1=scalar("r1"),
        r2=scalar("r2"),
        covered1=scalar("covered1") == 1,
        covered2=scalar("covered2") == 1,
        last=scalar("last"),
        root_free=scalar("root_free") == 1,
        unattached=scalar("unattached"),
    )


def refresh_bookkeeping(state: State, rows: Tensor, view: Words) -> None:
    """Recompute minH, minC and connectedness of the ``rows`` (``view`` holds them) that are
    fast again after a register phase (registers empty, a fresh β1), and clear their
    ``stale``."""
    s = state.scalars
    again = (view.r1 < 0) & (view.front <= view.n) & (view.front > view.last)
    index = view.index
    stacked = view.on_stack & (index >= 1)
    min_h = lowest(stacked & (view.head < 0))
    min_c = lowest(stacked & (view.root == 0))
    connected = (view.root == 0).long()
    connected[:, -1].fill_(0)  # the spare column
    words = state.tables["words"]
    old = words[rows]
    refreshed = torch.where(again[:, None], connected, old[:, CONNECTED])
    words[rows] = torch.stack([old[:, HEAD], refreshed, old[:, ON_STACK]], 1)
    for name, value in (("min_headless", min_h), ("min_connected", min_c)):
        s[name][rows] = torch.where(again, value, s[name][rows])
    s["stale"][rows] = torch.where(again, 0, s["stale"][rows])
