"""Greedy decoding and beam search replayed from CUDA graphs, for GPU throughput.

On a GPU the eager search loops are bound by the host, not by the device: each transition
launches about a hundred small kernels (gathers, masks, one small matrix product), and the
host spends more time issuing them than the GPU spends running them.  A CUDA graph records a
whole decoding run once and replays it with one launch, so the per-transition cost becomes
the kernels' own running time.

A graph replays a fixed sequence of kernels on fixed memory, which sets three conditions:

* **Fixed shapes and addresses.**  A batch of ``B`` sentences padded to ``W`` columns is
  decoded on a graph for ``(bucket(B), bucket(W))``: the extra rows are one-word sentences,
  the extra columns padding, so a long run over a corpus reuses a handful of graphs (kept in
  an LRU).  The graphs read the batch's projected tokens from one storage that they share
  (they never run at once), so the largest input is held once, as eager decoding holds it.
* **A fixed number of transitions**: the graph runs ``max_transitions(W - 1)`` steps instead of
  stopping when every configuration is terminal; the extra steps leave terminal
  configurations unchanged (``apply``'s contract), so the parses are the eager loop's.  Hence
  only systems whose bound is linear qualify.
* **No host synchronisation** inside a step: the system's features, legal mask and
  transitions must never read a tensor's value on the host (no ``.item()``, ``nonzero`` or
  data-dependent shapes).  Systems declare this with ``graph_safe``; the test suite checks
  the declaration on the CPU by running their steps under an operator census that refuses
  synchronising operators.  A system that needs the host only in rare configurations
  (two-registers' register phases) offers a host-free variant for greedy graphs
  (``TransitionSystem.for_graphs``) that abandons a configuration where it would need the
  host (or, with its exit rule in tensors, lets it wait a step for the search, which takes
  a limited number of rows a step, and abandons it if the steps run out); after the replay the
  abandoned sentences (one host read per batch says which) are decoded again by the eager
  loop, so the trees are still the eager loop's.  Swap, whose steps are host-free but whose
  bound is quadratic, does the same with a linear budget of
  swaps (:func:`~neuralparse.systems.swap.graph_swap_budget`), and so do the systems whose
  linear bound is about twice what their derivations take (three-step's valencies,
  2-planar's SWITCHes, two-registers' register moves), since a graph runs every one of its
  steps.

Recording a bucket costs two runs of the whole fixed-length search (a warm-up and the
capture), so a graph pays only when its bucket comes back.  Training's dev evaluation knows
that its batches return every epoch and records at once; prediction (:class:`GraphCache`)
decodes a bucket's first batch eagerly and records on its second, so one pass over a small
file costs what the eager loop costs, and a large one replays.

Beam search qualifies on the same terms (:func:`~neuralparse.search.beam.fixed_length_beam`):
it ranks successors with a full stable sort instead of ``topk`` plus a host-side check for
ties, and keeps decided sentences in the batch (no compaction), so its results are those of
``beam_decode(..., compact=False)``.  Both variants record beam search too, and a sentence
they leave undecided is searched again eagerly: swap's when its budget leaves an unfinished
item above the best finished one, two-registers' when an item it abandoned scored at least as
high as the best finished one (below that, the abandoned item's successors could only have
displaced items that score lower still).

On the CPU the same fixed-length loops run eagerly (no graph), which is how their equality with
:func:`~neuralparse.search.greedy.greedy_decode` and
:func:`~neuralparse.search.beam.beam_decode` is tested without a GPU.  Should recording
fail on some GPU or driver (an operator that synchronises there), decoding logs a warning once
and goes on with the eager greedy loop: the same trees, at the eager speed.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from dataclasses import dataclass

import torch
from torch import Tensor

from neuralparse.model.inputs import ModelInput
from neuralparse.model.parser import ParserModel
from neuralparse.model.scorer import TokenTable
from neuralparse.search.beam import beam_decode, fixed_length_beam
from neuralparse.search.greedy import greedy_decode, greedy_decode_counted, greedy_step
from neuralparse.systems import TransitionSystem

log = logging.getLogger("neuralparse.search")

ROW_BUCKET = 128
"""Batch sizes are rounded up to a multiple of this (a partial last batch reuses a graph)."""
WIDTH_BUCKET = 8
"""Padded widths (longest sentence + 1) are rounded up to a multiple of this."""
MAX_GRAPHS = 32
"""Graphs kept at once; the least recently used one is dropped (its memory freed) beyond.
Besides the shared input, a graph holds its run's arc log, node pool and temporaries: about
40 MB for 2,048 sentences of up to 160 words with arc-eager (measured on an H200)."""


def bucket(value: int, size: int) -> int:
    return -(-value // size) * size


def supports_graphs(system: TransitionSystem, device: torch.device, *, beam: bool = False) -> bool:
    """Whether :class:`GraphedSearch` replays graphs for ``system`` on ``device``, for greedy
    decoding or (``beam``) beam search."""
    if device.type != "cuda":
        return False
    return system.for_graphs(beam=beam) is not None


def fixed_length_greedy(
    model: ParserModel, system: TransitionSystem, table: TokenTable, lengths: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """Greedy decoding for exactly ``max_transitions(table.width - 1)`` steps, with no host
    synchronisation (the body that a graph records): heads and label ids
    ``[B, table.width]``, and which configurations ``system`` abandoned ``[B]``
    (``TransitionSystem.for_graphs``; their trees are unfinished)."""
    n_max = table.width - 1
    state = system.initial(lengths, lengths.device, n_max=n_max)
    rows = torch.arange(state.batch_size, device=lengths.device)
    for _ in range(system.max_transitions(n_max)):
        greedy_step(model, system, table, rows, state)
    return (*system.heads_and_labels(state), system.abandoned(state))


class GraphCache:
    """The graphed searches of one parser: greedy decoding (key ``None``) and beam search
    (key: the beam size), each created by the first CUDA batch that asks for it and reused by
    every later batch.  Whoever decodes many batches with one model keeps one (prediction:
    per file, per stream and per ``Parser``).  Its searches decode a bucket's first batch
    eagerly and record the bucket's graph on its second (``first_batch_eager``): prediction
    cannot know whether a bucket will come back."""

    def __init__(self) -> None:
        self.searches: dict[int | None, GraphedSearch] = {}

    def search(
        self, model: ParserModel, system: TransitionSystem, beam_size: int | None
    ) -> GraphedSearch:
        """The graphed search of ``model`` and ``system`` with ``beam_size`` (``None``:
        greedy), created on first use."""
        found = self.searches.get(beam_size)
        if found is None or found.model is not model or found.system is not system:
            found = GraphedSearch(model, system, beam_size, first_batch_eager=True)
            self.searches[beam_size] = found
        return found


@dataclass
class _Graph:
    """A bucket's input buffers and, on CUDA, its recorded decoding run and that run's
    outputs (refreshed by each replay)."""

    rows: Tensor
    lengths: Tensor
    arcs: Tensor | None = None
    """The arc log-probabilities ``[S, W - 1, W]`` of decoding's arc term, or None."""
    graph: torch.cuda.CUDAGraph | None = None
    outputs: tuple[Tensor, ...] = ()


class GraphedSearch:
    """Greedy decoding, or beam search with ``beam_size`` items, of padded, bucketed
    batches, replayed from one CUDA graph per bucket on CUDA and run eagerly with the same
    padding elsewhere (see the module docstring).

    Gives the trees of :func:`~neuralparse.search.greedy.greedy_decode` (heads and label ids)
    or of :func:`~neuralparse.search.beam.beam_decode` with ``compact=False`` (heads, label
    ids and scores); call it like them without the model, system and beam size.
    """

    def __init__(
        self,
        model: ParserModel,
        system: TransitionSystem,
        beam_size: int | None = None,
        *,
        first_batch_eager: bool = False,
    ) -> None:
        recorded = system.for_graphs(beam=beam_size is not None)
        if recorded is None:
            search = "greedy decoding" if beam_size is None else "beam search"
            raise ValueError(f"{system.name}: {search} cannot be replayed from a CUDA graph")
        self.model = model
        self.system = system
        self.recorded = recorded
        """The system the graphs run: ``system.for_graphs(beam=...)``."""
        self.beam_size = beam_size
        self.graphs: OrderedDict[tuple[int, int, float], _Graph] = OrderedDict()
        """By bucket (sentences, width) and the arc term's weight, which a graph records."""
        self.storage: dict[str, Tensor] = {}
        """Flat storage of the projected tokens (``rows``) and of the arc log-probabilities
        (``arcs``), shared by every graph's input table."""
        self.failure: str | None = None
        """Why recording failed (then every batch is decoded eagerly)."""
        self.first_batch_eager = first_batch_eager
        """Decode the first batch of a bucket eagerly, and record its graph only when the
        bucket comes back.  Recording runs the whole fixed-length search twice (a warm-up and
        the capture), so a bucket seen once loses by it: one pass over a small file gives
        each length batch its own bucket, and on an H200 two-registers' greedy decoding of
        English-EWT test took 28 s recording every batch against 5.3 s eagerly."""
        self.seen: set[tuple[int, int, float]] = set()
        """The buckets whose first batch was decoded eagerly."""

    def _fixed_length(self, table: TokenTable, lengths: Tensor) -> tuple[Tensor, ...]:
        """The decoding run that a graph records (eager off CUDA)."""
        if self.beam_size is None:
            return fixed_length_greedy(self.model, self.recorded, table, lengths)
        return fixed_length_beam(self.model, self.recorded, table, lengths, self.beam_size)

    def _eager(self, batch: ModelInput, table: TokenTable) -> tuple[Tensor, ...]:
        """The same search without graphs: a bucket's first batch (``first_batch_eager``),
        or every batch once recording failed."""
        if self.beam_size is None:
            return greedy_decode(self.model, self.system, batch, table)
        return beam_decode(self.model, self.system, batch, self.beam_size, table=table)

    @torch.inference_mode()
    def __call__(self, batch: ModelInput, table: TokenTable | None = None) -> tuple[Tensor, ...]:
        """Heads and label ids ``[B, n_max + 1]`` of a batch on the model's device, and for
        beam search the scores ``[B]`` (``table``: the batch already encoded)."""
        table = table if table is not None else self.model.encode(batch)
        if self.failure is not None:
            return self._eager(batch, table)
        sentences, width = batch.lengths.shape[0], table.width
        key = (bucket(sentences, ROW_BUCKET), bucket(width, WIDTH_BUCKET), table.arc_weight)
        entry = self.graphs.pop(key, None)
        if entry is None and self.first_batch_eager and key not in self.seen:
            self.seen.add(key)
            return self._eager(batch, table)
        if entry is None:
            try:
                entry = self._record(*key[:2], table)
            except RuntimeError as error:
                self.failure = str(error)
                self.graphs.clear()
                log.warning(
                    "%s: CUDA graph not recorded, decoding eagerly: %s", self.system.name, error
                )
                return self._eager(batch, table)
        self.graphs[key] = entry
        while len(self.graphs) > MAX_GRAPHS:
            self.graphs.popitem(last=False)
        self._fill(entry, table, batch.lengths)
        if entry.graph is None:
            replayed = TokenTable(entry.rows, key[1], entry.arcs, table.arc_weight)
            outputs = self._fixed_length(replayed, entry.lengths)
        else:
            entry.graph.replay()
            outputs = entry.outputs  # written by the replay
        outputs = tuple(
            (out[:sentences, :width] if out.dim() == 2 else out[:sentences]).clone()
            for out in outputs
        )
        *results, abandoned = outputs
        if self.recorded is not self.system and bool(abandoned.any()):
            self._redecode(batch, table, results, abandoned.nonzero().flatten())
        return tuple(results)

    def _redecode(
        self, batch: ModelInput, table: TokenTable, results: list[Tensor], redo: Tensor
    ) -> None:
        """Decode the sentences ``redo`` again with the eager loop, into ``results`` (heads,
        label ids and, for beam search, scores; the abandoned ones: their graph derivations
        are unfinished)."""
        if self.beam_size is None:
            redone = greedy_decode_counted(self.model, self.system, batch, table, sentences=redo)
        else:
            redone = beam_decode(
                self.model, self.system, batch, self.beam_size,
                compact=False, table=table, sentences=redo,
            )  # fmt: skip
        for out, new in zip(results, redone, strict=False):
            if out.dim() == 2:
                out[redo] = -1
                out[redo, : new.shape[1]] = new
            else:
                out[redo] = new

    def _input(self, name: str, shape: tuple[int, ...], like: Tensor) -> Tensor:
        """A ``shape`` view of the shared input storage ``name``.  Growing the storage keeps
        the graphs that read the old one (their views keep it alive): dropping them made
        the next batch of their shape record again (a whole eager run and a capture), which
        with the arc term's storage, square in the width, befell training's second dev
        evaluation.  The storage at least doubles, so what the old ones hold is at
        most as much again as the newest."""
        needed = math.prod(shape)
        storage = self.storage.get(name)
        if storage is None or storage.numel() < needed:
            grown = 2 * storage.numel() if storage is not None else 0
            # Zeros, not garbage: padding rows are scored too and must stay finite.
            storage = self.storage[name] = like.new_zeros(max(needed, grown))
        return storage[:needed].view(shape)

    def _record(self, sentences: int, width: int, like: TokenTable) -> _Graph:
        """Input buffers of a bucket and, on CUDA, the graph of a decoding run over them."""
        device = like.rows.device
        rows = self._input("rows", (sentences * width + 1, *like.rows.shape[1:]), like.rows)
        arcs = None
        if like.arc_log_probs is not None:
            arcs = self._input("arcs", (sentences, width - 1, width), like.arc_log_probs)
        lengths = torch.ones(sentences, dtype=torch.long, device=device)
        if device.type != "cuda":
            return _Graph(rows, lengths, arcs)
        table = TokenTable(rows, width, arcs, like.arc_weight)
        # A first run on a side stream initialises what capture may not (library handles,
        # the system's action tables on this device), as torch.cuda.graph requires.
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            self._fixed_length(table, lengths)
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outputs = self._fixed_length(table, lengths)
        return _Graph(rows, lengths, arcs, graph, outputs)

    @staticmethod
    def _fill(entry: _Graph, table: TokenTable, lengths: Tensor) -> None:
        """Copy a batch's projected tokens and lengths into a bucket's input buffers."""
        sentences, width = lengths.shape[0], table.width
        slots = table.rows.shape[1:]
        padded = entry.rows[:-1].view(entry.lengths.shape[0], -1, *slots)
        padded[:sentences, :width] = table.rows[:-1].view(sentences, width, *slots)
        entry.rows[-1] = table.rows[-1]
        if entry.arcs is not None and table.arc_log_probs is not None:
            entry.arcs[:sentences, : width - 1, :width] = table.arc_log_probs
        entry.lengths.fill_(1)
        entry.lengths[:sentences] = lengths
