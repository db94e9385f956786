"""File-to-file prediction with the host work in worker processes, overlapped with decoding.

On a GPU, decoding is fast and the rest of prediction is Python on the host: reading and
validating CoNLL-U, encoding sentences as index tensors, putting trees and tags back into the
sentences and formatting the output.  Python threads cannot run that work in parallel (the
GIL), so it runs here in worker processes, while the main process decodes:

* The main process cuts the input file into pieces of whole sentences
  (:func:`~neuralparse.io.pieces.cut_pieces`: bytes, line numbers, no parsing) and hands them
  round robin to the workers.
* A worker reads its piece into sentences (:func:`~neuralparse.io.pieces.read_piece`: the
  readers' own validation, errors naming the file, line and sentence), keeps them, and sends
  their encoding (:class:`~neuralparse.model.inputs.EncodedCorpus`) to the main process.
* The main process gathers the pieces, in input order, into chunks of exactly the sizes
  the single-process path cuts
  (:meth:`~neuralparse.prediction.options.PredictOptions.chunk_sizes`), and merges their
  encodings into the very corpus that
  :meth:`EncodedCorpus.build <neuralparse.model.inputs.EncodedCorpus.build>` makes of the
  chunk (:func:`assemble`), so the batches, and so the trees, are those of the single-process
  path bit for bit.  A thread decodes the chunk on the device and sends each piece the
  predictions of its words.
* The worker holding the piece puts them into its sentences and formats the CoNLL-U text,
  which the main process writes in input order.

The data flows one way (file -> pieces -> sentences -> tensors -> predictions -> text -> file),
as plain bytes, strings and numpy arrays between the processes.  While one chunk is decoded
the workers read the next one and format the previous one; at most about one chunk is read
ahead of the chunks being decoded (two at most), so memory is bounded whatever the file's size.

Workers are forked: that is fast, they inherit the model's vocabularies and transition
system, and they never touch CUDA (a forked process cannot; PyTorch's data loader forks its
workers from CUDA processes the same way).  Each is forked as the first pieces go out, so that
it reads its piece while the next one forks, and all before the decoding thread starts.  They
run one torch thread each, ignore Ctrl-C (the main process stops them), die on SIGTERM and
exit when the main process is gone.  A worker's error travels back as data and is
raised by the main process when it reaches that piece, so that the first error of the input is
the one reported, as reading the file in one process reports it; every way out terminates the
workers.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import multiprocessing
import os
import queue
import signal
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypedDict, Unpack

import numpy as np
import torch
from torch import Tensor

from neuralparse.errors import InputError
from neuralparse.io.conllu import SkippedSentence
from neuralparse.io.pieces import Piece, PieceSentences
from neuralparse.io.sentence import Sentence
from neuralparse.model.inputs import EncodedCorpus

_POLL_SECONDS = 1.0
"""How often a waiting process checks that the others are alive."""
_STOP_SECONDS = 5.0
"""How long workers get to exit after the last task before they are terminated."""


@dataclass(frozen=True)
class Predictions:
    """What decoding gives for consecutive sentences, flat over their words in input order:
    each word's head and label id (those of the derivation, before
    :meth:`~neuralparse.systems.TransitionSystem.output_tree`; label -1 for none) and its
    class in each tag column that reaches the output.  CPU tensors, or numpy arrays between
    processes (:meth:`to_numpy`: they pickle without torch's help)."""

    heads: Tensor | np.ndarray
    labels: Tensor | np.ndarray
    tags: dict[str, Tensor | np.ndarray]

    def words(self, start: int, end: int) -> Predictions:
        """The predictions of the words ``start:end``."""
        return Predictions(
            self.heads[start:end],
            self.labels[start:end],
            {column: values[start:end] for column, values in self.tags.items()},
        )

    def to_numpy(self) -> Predictions:
        return Predictions(
            np.asarray(self.heads),
            np.asarray(self.labels),
            {column: np.asarray(values) for column, values in self.tags.items()},
        )


@dataclass(frozen=True)
class Stages:
    """The work of prediction, which the pipeline runs where it belongs."""

    read: Callable[[Piece], PieceSentences]
    """In a worker: the sentences of a piece."""
    encode: Callable[[Sequence[Sentence]], EncodedCorpus]
    """In a worker: the encoding of sentences."""
    flags: Callable[[Sequence[Sentence]], np.ndarray]
    """In a worker: ``[sentences, K]`` booleans, combined per chunk for :attr:`on_chunk`."""
    annotate: Callable[[Sequence[Sentence], Predictions], str]
    """In a worker: the CoNLL-U text of sentences with their predictions."""
    on_chunk: Callable[[np.ndarray], None]
    """In the main process, before a chunk is decoded: whether any of its sentences has each
    flag (``[K]``)."""
    decode: Callable[[EncodedCorpus, Callable[[], None]], Predictions]
    """In the main process (a thread of it): the predictions of a chunk; the second argument
    is to be called between batches (it raises when the run stops)."""


# -- what travels between the processes ------------------------------------------------------


@dataclass
class EncodedPiece:
    """A piece's sentences as the worker that holds them encoded them (numpy arrays).

    ``fields`` are the :class:`EncodedCorpus` fields of the piece's sentences except
    ``starts``; ``forms`` are the distinct word forms in the order of their first appearance,
    which ``form_ids`` index (the rows of ``char_table``), so that :func:`assemble` can number
    the forms of a chunk as :meth:`EncodedCorpus.build` does."""

    index: int
    counted: int
    """Sentences the piece was cut with, malformed ones included."""
    fields: dict[str, np.ndarray | None]
    forms: list[str]
    skipped: list[SkippedSentence]
    flags: np.ndarray

    @classmethod
    def of(
        cls,
        piece: Piece,
        read: PieceSentences,
        encode: Callable[[Sequence[Sentence]], EncodedCorpus],
        flags: Callable[[Sequence[Sentence]], np.ndarray],
    ) -> EncodedPiece:
        """The encoding of the sentences ``read`` from ``piece`` (none when lenient reading
        skipped them all: such a piece only counts)."""
        fields: dict[str, np.ndarray | None] = {"lengths": np.zeros(0, dtype=np.int64)}
        forms: list[str] = []
        if read.sentences:
            corpus = encode(read.sentences)
            for field in dataclasses.fields(corpus):
                value = getattr(corpus, field.name)
                if field.name != "starts":
                    fields[field.name] = value.numpy() if value is not None else None
            if corpus.form_ids is not None:
                forms = list(dict.fromkeys(f for s in read.sentences for f in s.forms))
        return cls(piece.index, piece.sentences, fields, forms, read.skipped, flags(read.sentences))

    @property
    def sentences(self) -> int:
        return len(self.word_starts) - 1

    @functools.cached_property
    def word_starts(self) -> np.ndarray:
        """Where each sentence's words begin among the piece's words, and the total."""
        lengths = self.fields["lengths"]
        assert lengths is not None
        return np.concatenate([[0], np.cumsum(lengths)])


@dataclass(frozen=True)
class Segment:
    """Sentences ``start:end`` of an encoded piece, as part of a chunk."""

    piece: EncodedPiece
    start: int
    end: int

    @property
    def words(self) -> tuple[int, int]:
        """The range of the segment's words among the piece's words."""
        starts = self.piece.word_starts
        return int(starts[self.start]), int(starts[self.end])


def assemble(segments: Sequence[Segment]) -> EncodedCorpus:
    """The :class:`EncodedCorpus` that :meth:`EncodedCorpus.build` makes of the sentences of
    ``segments``, in their order, from their pieces' encodings.

    Every field is a per-word column (cut out and joined) except the character table: the
    chunk numbers its distinct forms in the order they first appear, and a form that several
    pieces hold is one row, so the batches see the characters that the single-process path
    gives them.  Two-dimensional columns (FEATS pairs) are as wide as the chunk needs."""
    columns: dict[str, Tensor | None] = {}
    for name, value in segments[0].piece.fields.items():
        if value is None or name in ("form_ids", "char_table"):
            columns[name] = None
            continue
        parts = []
        for segment in segments:
            first, last = (segment.start, segment.end) if name == "lengths" else segment.words
            parts.append(segment.piece.fields[name][first:last])  # type: ignore[index]
        columns[name] = torch.from_numpy(_joined(parts))
    if segments[0].piece.fields.get("form_ids") is not None:
        columns["form_ids"], columns["char_table"] = _chunk_forms(segments)
    lengths = columns["lengths"]
    assert lengths is not None
    return EncodedCorpus(starts=torch.cumsum(lengths, 0) - lengths, **columns)  # type: ignore[arg-type]


def _joined(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Per-word arrays one after the other; ``[words, K]`` ones cut or padded to the width that
    their longest row needs (at least 1), as :func:`~neuralparse.model.inputs._pad_rows` pads
    a chunk's rows (padding is 0, which no value is)."""
    if parts[0].ndim == 2:
        width = max([1, *(int((part != 0).sum(1).max(initial=0)) for part in parts)])
        parts = [
            part[:, :width]
            if part.shape[1] >= width
            else np.pad(part, ((0, 0), (0, width - part.shape[1])))
            for part in parts
        ]
    return np.concatenate(parts)


def _chunk_forms(segments: Sequence[Segment]) -> tuple[Tensor, Tensor]:
    """``form_ids`` and ``char_table`` of a chunk: forms numbered in order of first
    appearance in the chunk, one character row each."""
    numbers: dict[str, int] = {}
    ids: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    for segment in segments:
        piece = segment.piece
        first, last = segment.words
        local = piece.fields["form_ids"][first:last]  # type: ignore[index]
        if segment.start == 0 and segment.end == piece.sentences:
            order = np.arange(len(piece.forms))  # the piece's own order of first appearance
        else:
            seen, where = np.unique(local, return_index=True)
            order = seen[np.argsort(where, kind="stable")]
        known = len(numbers)
        chunk_ids = np.array(
            [numbers.setdefault(piece.forms[i], len(numbers)) for i in order.tolist()],
            dtype=np.int64,
        )
        renumber = np.zeros(len(piece.forms), dtype=np.int64)
        renumber[order] = chunk_ids
        ids.append(renumber[local])
        rows.append(piece.fields["char_table"][order[chunk_ids >= known]])  # type: ignore[index]
    return torch.from_numpy(np.concatenate(ids)), torch.from_numpy(np.concatenate(rows))


@dataclass(frozen=True)
class _Failure:
    """An exception raised in a worker, as data: raised again by the main process."""

    kind: type[BaseException]
    reason: str
    where: tuple[str | None, int | None, str | None] | None
    """``(source, line, sent_id)`` of an :class:`InputError`."""

    @classmethod
    def of(cls, error: BaseException) -> _Failure:
        if isinstance(error, InputError):
            return cls(type(error), error.reason, (error.source, error.line, error.sent_id))
        return cls(type(error), "".join(traceback.format_exception(error)), None)

    def exception(self) -> BaseException:
        if self.where is not None and issubclass(self.kind, InputError):
            source, line, sent_id = self.where
            return self.kind(self.reason, source=source, line=line, sent_id=sent_id)
        return RuntimeError(f"a prediction worker failed:\n{self.reason}")


# -- the workers ----------------------------------------------------------------------------


def _serve(tasks: Any, results: Any, stages: Stages, parent: int) -> None:
    """A worker's loop: read and encode pieces, annotate and format their sentences."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the main process: it stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    torch.set_num_threads(1)
    results.cancel_join_thread()  # exiting must not wait for a main process that is gone
    held: dict[int, list[Sentence]] = {}
    while True:
        try:
            task = tasks.get(timeout=_POLL_SECONDS)
        except queue.Empty:
            if os.getppid() != parent:
                return
            continue
        if task is None:
            return
        kind, index, *rest = task
        try:
            if kind == "read":
                (piece,) = rest
                read = stages.read(piece)
                if read.sentences:
                    held[index] = read.sentences
                encoded = EncodedPiece.of(piece, read, stages.encode, stages.flags)
                results.put(("encoded", index, encoded))
            else:
                start, end, predictions = rest
                sentences = held[index][start:end]
                if end == len(held[index]):
                    del held[index]
                results.put(("text", index, start, stages.annotate(sentences, predictions)))
        except Exception as error:  # every failure goes back to the main process
            start = rest[0] if kind == "annotate" else None
            results.put(("failed", index, start, _Failure.of(error)))


@dataclass
class _Worker:
    process: Any
    tasks: Any


def _start_worker(results: Any, stages: Stages) -> _Worker:
    """A forked worker (see the module docstring)."""
    context = multiprocessing.get_context("fork")
    tasks = context.Queue()
    process = context.Process(
        target=_serve, args=(tasks, results, stages, os.getpid()), daemon=True
    )
    # What the worker inherits stays out of its garbage collections, which would otherwise
    # touch (and so copy) every page that holds it.
    gc.freeze()
    try:
        process.start()
    finally:
        gc.unfreeze()
    return _Worker(process, tasks)


def _stop_workers(workers: Sequence[_Worker], *, finished: bool) -> None:
    """End the workers: let them finish their last task when ``finished``, else at once."""
    for worker in workers:
        worker.tasks.cancel_join_thread()
        if finished:
            worker.tasks.put(None)
        else:
            worker.process.terminate()
    deadline = time.monotonic() + (_STOP_SECONDS if finished else 1.0)
    for worker in workers:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.tasks.close()


# -- the main process ------------------------------------------------------------------------


class _Stopped(Exception):
    """The run stopped while the decoding thread was decoding."""


class _Run:
    """The main process's side of one pipelined prediction (see the module docstring)."""

    def __init__(
        self,
        pieces: Iterator[Piece],
        out: TextIO,
        stages: Stages,
        *,
        workers: int,
        chunk_sizes: Iterator[int],
        read_ahead: int,
        on_output: Callable[[], None],
    ) -> None:
        self.pieces: Iterator[Piece] | None = pieces
        self.out = out
        self.stages = stages
        self.results: Any = multiprocessing.get_context("fork").Queue()
        self.count = workers
        self.workers: list[_Worker] = []  # forked as the first pieces are handed out
        self.chunk_sizes = chunk_sizes
        self.chunk_size = next(chunk_sizes)  # the size of the chunk being gathered
        self.read_ahead = read_ahead
        self.on_output = on_output
        self.owner: dict[int, _Worker] = {}
        self.dispatched = 0  # pieces handed out
        self.unread = 0  # their sentences not yet gathered into a chunk
        self.arrived: dict[int, EncodedPiece | _Failure] = {}
        self.next_piece = 0  # the next piece to gather
        self.current: EncodedPiece | None = None  # a piece partly gathered
        self.taken = 0  # its sentences gathered
        self.sentences = 0
        self.skipped: list[SkippedSentence] = []
        self.writes: deque[tuple[int, int]] = deque()  # (piece, first sentence), in order
        self.texts: dict[tuple[int, int], str | _Failure] = {}
        self.decoding = 0  # chunks handed to the decoding thread and not yet done
        self.decode_error: BaseException | None = None
        self.stop = threading.Event()
        self.chunks: queue.Queue[tuple[EncodedCorpus, list[Segment]] | None] = queue.Queue()
        # Started with the first chunk, after the workers: a fork copies a process's memory but
        # only its calling thread, so one thread is safest (the first chunk needs the first
        # pieces, one per worker, so all of them are started by then, but on odd inputs).
        self.decoder = threading.Thread(target=self._decode_chunks, name="decode", daemon=True)

    def _decode_chunks(self) -> None:
        """The decoding thread, the only one to use the device."""

        def check() -> None:
            if self.stop.is_set():
                raise _Stopped

        while (job := self.chunks.get()) is not None and not self.stop.is_set():
            corpus, segments = job
            try:
                predictions = self.stages.decode(corpus, check)
                offset = 0
                for segment in segments:
                    first, last = segment.words
                    words = predictions.words(offset, offset + last - first).to_numpy()
                    offset += last - first
                    task = ("annotate", segment.piece.index, segment.start, segment.end, words)
                    self.owner[segment.piece.index].tasks.put(task)
            except BaseException as error:  # raised again by the main thread
                self.decode_error = error
            self.results.put(("decoded",))

    def run(self) -> tuple[int, list[SkippedSentence]]:
        """Parse everything; returns the sentences parsed and those skipped."""
        while True:
            self._hand_out()
            while self.decoding < 2 and (segments := self._next_chunk()) is not None:
                flags = np.concatenate([s.piece.flags[s.start : s.end] for s in segments])
                self.stages.on_chunk(flags.any(0))
                self.chunks.put((assemble(segments), segments))
                self.decoding += 1
                if self.decoder.ident is None:
                    self.decoder.start()
            self._write_ready()
            if self._finished():
                return self.sentences, self.skipped
            self._receive()

    def _hand_out(self) -> None:
        while self.pieces is not None and self.unread < self.read_ahead:
            piece = next(self.pieces, None)
            if piece is None:
                self.pieces = None
                return
            if len(self.workers) < self.count and self.decoder.ident is None:
                # Forked as the pieces go out: each one works while the next one forks.
                self.workers.append(_start_worker(self.results, self.stages))
            worker = self.workers[piece.index % len(self.workers)]
            self.owner[piece.index] = worker
            worker.tasks.put(("read", piece.index, piece))
            self.dispatched += 1
            self.unread += piece.sentences

    def _next_chunk(self) -> list[Segment] | None:
        """The next chunk's sentences once the pieces that hold them arrived (fewer than
        ``chunk_size`` at the end of the input).  The first failed piece in input order is
        raised here, after the text of every sentence before it was written."""
        available = self.current.sentences - self.taken if self.current is not None else 0
        index = self.next_piece
        while available < self.chunk_size and index in self.arrived:
            arrived = self.arrived[index]
            if isinstance(arrived, _Failure):
                self._drain_writes()
                raise arrived.exception()
            available += arrived.sentences
            index += 1
        if available < self.chunk_size and not (self.pieces is None and index == self.dispatched):
            return None
        segments: list[Segment] = []
        count = 0
        while count < self.chunk_size and (self.current is not None or self.next_piece < index):
            if self.current is None:
                piece = self.arrived.pop(self.next_piece)
                assert isinstance(piece, EncodedPiece)
                self.next_piece += 1
                self.unread -= piece.counted
                self.sentences += piece.sentences
                self.skipped.extend(piece.skipped)
                if not piece.sentences:
                    continue
                self.current, self.taken = piece, 0
            take = min(self.chunk_size - count, self.current.sentences - self.taken)
            segments.append(Segment(self.current, self.taken, self.taken + take))
            count += take
            self.taken += take
            if self.taken == self.current.sentences:
                self.current = None
        if not segments:
            return None
        self.chunk_size = next(self.chunk_sizes)
        self.writes.extend((segment.piece.index, segment.start) for segment in segments)
        return segments

    def _write_ready(self) -> None:
        while self.writes and self.writes[0] in self.texts:
            text = self.texts.pop(self.writes.popleft())
            if isinstance(text, _Failure):
                raise text.exception()
            self.out.write(text)
            self.on_output()

    def _drain_writes(self) -> None:
        """Wait for and write every text that is due."""
        self._write_ready()
        while self.writes:
            self._receive()
            self._write_ready()

    def _finished(self) -> bool:
        return (
            self.pieces is None
            and self.next_piece == self.dispatched
            and self.current is None
            and not self.decoding
            and not self.writes
        )

    def _receive(self) -> None:
        """Wait for one message from a worker or the decoding thread."""
        while True:
            try:
                message = self.results.get(timeout=_POLL_SECONDS)
                break
            except queue.Empty:
                for number, worker in enumerate(self.workers):
                    if not worker.process.is_alive():
                        raise RuntimeError(
                            f"prediction worker {number} died (exit code {worker.process.exitcode})"
                        ) from None
        kind = message[0]
        if kind == "decoded":
            self.decoding -= 1
            if self.decode_error is not None:
                raise self.decode_error
        elif kind == "encoded":
            self.arrived[message[1]] = message[2]
        elif kind == "text" or message[2] is not None:  # a text, or the failure to make one
            self.texts[(message[1], message[2])] = message[3]
        else:  # the failure to read a piece
            self.arrived[message[1]] = message[3]

    def close(self, *, finished: bool) -> None:
        """Stop the decoding thread (at its next batch) and the workers."""
        self.stop.set()
        if self.decoder.ident is not None:
            self.chunks.put(None)
            self.decoder.join()
        _stop_workers(self.workers, finished=finished)
        self.results.cancel_join_thread()
        self.results.close()


class PipelineSettings(TypedDict):
    """How :func:`run_pipeline` runs (the keywords of ``_Run``)."""

    workers: int
    chunk_sizes: Iterator[int]
    read_ahead: int
    on_output: Callable[[], None]


def run_pipeline(
    pieces: Iterator[Piece], out: TextIO, stages: Stages, **settings: Unpack[PipelineSettings]
) -> tuple[int, list[SkippedSentence]]:
    """Parse the sentences of ``pieces`` with ``workers`` processes into ``out`` in chunks of
    the successive ``chunk_sizes``, handing out pieces while fewer than ``read_ahead`` of their
    sentences wait to be decoded; ``on_output()`` is called after each write.  Returns the
    number of sentences parsed and those that lenient reading skipped, in input order."""
    run = _Run(pieces, out, stages, **settings)
    finished = False
    try:
        outcome = run.run()
        finished = True
        return outcome
    finally:
        run.close(finished=finished)
