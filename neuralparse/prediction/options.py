"""What a prediction run is asked to do, and what it reports: :class:`PredictOptions` (search,
batch and chunk sizes, what happens to the input's tags and DEPS, worker processes) and
:class:`PredictionReport` (sentences, words, time, skipped sentences)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import torch

from neuralparse.errors import InputError
from neuralparse.io import ReadReport
from neuralparse.runtime.devices import check_precision
from neuralparse.search import SEARCHES

TAG_MODES = ("auto", "predict", "keep")
"""What prediction does with the UPOS / XPOS / FEATS columns (:attr:`PredictOptions.tags`)."""
DEPS_MODES = ("clear", "keep")
"""What prediction does with the DEPS column (enhanced dependencies) of its input."""
FIRST_CHUNK_SENTENCES = 256
"""The smallest first chunk that :attr:`PredictOptions.first_chunk_size` chooses itself."""


@dataclass(frozen=True)
class PredictOptions:
    """How to decode and how much to hold in memory at once."""

    search: str = "greedy"
    beam_size: int = 8
    """Beam width for ``search="beam"`` (ignored by greedy search)."""
    batch_size: int = 1024
    """At most this many sentences per batch."""
    batch_tokens: int = 8000
    """At most this many words per greedy batch (a longer sentence is a batch of its own)."""
    beam_batch_tokens: int = 32_000
    """At most this many words per beam-search batch, counting each of the ``beam_size``
    items: larger than ``batch_tokens`` because beam steps cost more per sentence, so fewer,
    fuller batches pay (on 2 CPU threads, 32,000 took 0.6-0.8 of the time 8,000 took)."""
    chunk_size: int = 10_000
    """Sentences read ahead, sorted by length and parsed before the next chunk is read."""
    first_chunk_size: int | None = None
    """Sentences in the first chunk; each next chunk doubles it, up to ``chunk_size``
    (:meth:`chunk_sizes`).  Output is written a chunk at a time, so a smaller first chunk
    brings the first output forward, at some cost in speed: a small chunk's length batches
    mix short and long sentences, so they need more transitions.  ``None``: ``chunk_size /
    16`` (at least 256) on CUDA, where the first chunk's batch shapes are also recorded as CUDA
    graphs before anything can be written; ``chunk_size`` on the CPU (English-EWT dev on the
    CPU took 1.45 times as long in chunks of 625, 1,250 and 126 sentences as in one)."""
    arc_weight: float | None = None
    """The weight of the arc scorer's term in decoding (:mod:`neuralparse.search.arc_term`):
    ``None`` uses the model's (``model.arc_decoding_weight``, 0.75 in the default model); ``0``
    decodes with the transition scores alone, faster (the arc scorer is not run) and a
    little less accurate.  A model without an arc scorer accepts only ``None`` or 0."""
    cuda_graphs: bool = True
    """On CUDA, replay greedy decoding and beam search from CUDA graphs for the systems that
    allow it (:mod:`neuralparse.search.graphs`); same trees, far less host work per
    transition.  A batch shape's graph is recorded when the shape comes back (the first
    batch of each shape is decoded eagerly), so a small file costs what eager decoding does
    and a large one replays."""
    tags: str = "auto"
    """UPOS / XPOS / FEATS of the output: ``auto`` fills the empty (``_``) ones with the
    model's predictions (FEATS only in a sentence without any: elsewhere a FEATS ``_`` means
    "no features"), ``predict`` overwrites all, ``keep`` leaves them as given."""
    deps: str = "clear"
    """DEPS of the output: ``clear`` writes ``_`` (the input's enhanced graph describes the
    input's tree, not the predicted one; empty nodes go with it), ``keep`` leaves it."""
    precision: str = "float32"
    """Number format of the sentence encoder (character and sentence BiLSTMs, tagging
    layers, the scorer's projection, a contextual encoder's Transformer): ``float32``, or
    ``bfloat16``, about twice as fast where the hardware computes it (CPUs with AVX512-BF16 or
    AMX, Ampere or later GPUs) at slightly different scores
    (:func:`~neuralparse.runtime.devices.encoding_precision`).  The tagging heads and the
    search stay in float32."""
    workers: int | str = "auto"
    """Processes that read, encode and write an input file while the model decodes
    (:mod:`~neuralparse.prediction.pipeline`); 0 parses in this process alone.  ``auto`` uses
    them for a file on CUDA, more for larger files
    (:func:`~neuralparse.prediction.runner.worker_count`), and none on the CPU, where the cores
    are busy decoding.  The output is the same bytes either way."""

    def __post_init__(self) -> None:
        if self.search not in SEARCHES:
            raise InputError(f"unknown search {self.search!r}; available: {list(SEARCHES)}")
        if self.tags not in TAG_MODES:
            raise InputError(f"unknown tags mode {self.tags!r}; available: {TAG_MODES}")
        if self.deps not in DEPS_MODES:
            raise InputError(f"unknown deps mode {self.deps!r}; available: {DEPS_MODES}")
        positive = ("beam_size", "batch_size", "batch_tokens", "beam_batch_tokens", "chunk_size")
        for name in positive:
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be positive, got {getattr(self, name)}")
        check_precision(self.precision)
        weight = self.arc_weight
        if weight is not None and (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not 0 <= weight < float("inf")
        ):
            raise InputError(f"arc_weight must be a number >= 0 or None, got {weight!r}")
        if self.first_chunk_size is not None and self.first_chunk_size < 1:
            raise InputError(f"first_chunk_size must be positive, got {self.first_chunk_size}")
        if self.workers != "auto" and (
            isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 0
        ):
            raise InputError(f"workers must be 'auto' or a count >= 0, got {self.workers!r}")

    def chunk_sizes(self, device: torch.device) -> Iterator[int]:
        """Sentences per chunk, chunk after chunk, on ``device`` (see
        :attr:`first_chunk_size`); every way of parsing a file cuts it the same, so that its
        batches, and so its trees, are the same."""
        size = self.first_chunk_size
        if size is None:
            size = max(FIRST_CHUNK_SENTENCES, self.chunk_size // 16)
            size = size if device.type == "cuda" else self.chunk_size
        size = min(size, self.chunk_size)
        while size < self.chunk_size:
            yield size
            size *= 2
        while True:
            yield self.chunk_size

    @property
    def batch_words(self) -> int:
        """Words of the input per batch."""
        if self.search == "beam":
            return max(1, self.beam_batch_tokens // self.beam_size)
        return self.batch_tokens


@dataclass
class PredictionReport:
    """What a prediction run did."""

    source: str = ""
    sentences: int = 0
    words: int = 0
    seconds: float = 0.0
    read: ReadReport = field(default_factory=ReadReport)
    first_output: float | None = None
    """Seconds from the start of :func:`~neuralparse.prediction.runner.predict_file` to the
    first output written."""

    @property
    def skipped(self) -> int:
        """Sentences that ``lenient`` reading left out."""
        return self.read.skipped_count

    def summary(self) -> str:
        seconds = max(self.seconds, 1e-9)
        text = (
            f"{self.source}: parsed {self.sentences} sentences, {self.words} words in "
            f"{self.seconds:.2f}s ({self.sentences / seconds:.0f} sentences/s, "
            f"{self.words / seconds:.0f} words/s)"
        )
        if self.skipped:
            text += f"; skipped {self.skipped} malformed sentences ({self.read.summary()})"
        return text
