"""Batch prediction: stream sentences through a trained parser with bounded memory.

The input is read ``chunk_size`` sentences at a time.  Each chunk is encoded once
(:class:`~neuralparse.model.inputs.EncodedCorpus`), its sentences are sorted by length into
batches of at most ``batch_tokens`` words (``beam_batch_tokens`` for beam search, counting
every beam item) and ``batch_size`` sentences, every batch is decoded on the state batch
(greedy or beam search, one loop iteration per transition for the whole batch), and the chunk
is written back in input order before the next one is read.  Memory therefore depends on the
chunk and batch sizes, never on the length of the input.  Sorting by length keeps padding low
and puts very long sentences (hundreds of words) together in small batches: a greedy batch of
500-word sentences holds at most ``batch_tokens / 500`` of them, and a sentence longer than
the budget is parsed alone.

Every tree goes through :meth:`TransitionSystem.output_tree` (pseudo-projective parsing
decodes its lifted labels there) and back into its own sentence with
:meth:`Sentence.with_tree`, so CoNLL-U input keeps every byte except HEAD and DEPREL.  A
tagging model's UPOS / XPOS / FEATS go into the sentence too, as ``tags`` says: ``auto`` fills
the words whose column is ``_`` (all of them for plain text) and keeps given tags, ``predict``
overwrites every word's tags, ``keep`` changes no tag.  The parser itself never reads the
input's tags (unless it is a gold-tag model), so ``tags`` changes no tree.  DEPS (the
enhanced graph) is written as ``_``, and empty nodes are left out, unless ``deps="keep"``:
the input's enhanced graph belongs to the input's tree, not to the predicted one.

Under ``torchrun --nproc_per_node=N`` every rank reads the same input; rank ``r`` parses the
sentences ``r, r + N, ...`` of each chunk, rank 0 gathers the parsed chunk and writes it in
input order (:func:`predict_file`).

With ``workers`` (by default on CUDA, :func:`worker_count`) an input file is read, encoded and
written by worker processes while this process decodes (:mod:`neuralparse.pipeline`), with
the same chunks and batches, so the output is the same bytes; only the Python work of the host
moves (the GIL keeps threads from sharing it).
"""

from __future__ import annotations

import io
import itertools
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

import numpy as np
import torch
from torch import Tensor
from tqdm import tqdm

from neuralparse.errors import InputError
from neuralparse.io import ReadReport, Sentence, SkippedSentencesWarning, iter_conllu, iter_text
from neuralparse.io.pieces import cut_pieces, read_piece
from neuralparse.io.raw import DEFAULT_LANGUAGE, iter_raw, resolve_language
from neuralparse.io.sentence import is_tag_value
from neuralparse.io.sources import (
    ENCODING,
    decoded_lines,
    guarded_lines,
    partial_file,
    replacing,
)
from neuralparse.io.text import explain_format, probe
from neuralparse.model.encoder import NOT_A_TAG
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.vocab import Vocabulary, column_present
from neuralparse.pipeline import Predictions, Stages, run_pipeline
from neuralparse.runtime import distributed
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import LoadedParser
from neuralparse.search import SEARCHES
from neuralparse.search.beam import beam_decode
from neuralparse.search.graphs import GraphedSearch, supports_graphs
from neuralparse.search.greedy import greedy_decode
from neuralparse.systems import TransitionSystem

log = logging.getLogger("neuralparse.predict")

STDIO = "-"
"""The path that means standard input or output."""
_STDOUT_SPOOL_BYTES = 8 * 1024 * 1024
"""Output for standard output held in memory before the spool moves to a temporary file."""

INPUT_FORMATS = ("auto", "conllu", "text", "raw")
"""``raw`` (untokenized text, :mod:`neuralparse.io.raw`) is never detected: it must be asked."""
TAG_MODES = ("auto", "predict", "keep")
DEPS_MODES = ("clear", "keep")
"""What prediction does with the DEPS column (enhanced dependencies) of its input."""
"""What prediction does with the UPOS / XPOS / FEATS columns (see the module docstring)."""


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
    cuda_graphs: bool = True
    """On CUDA, replay greedy decoding and beam search from CUDA graphs for the systems that
    allow it (:mod:`neuralparse.search.graphs`); same trees, far less host work per
    transition."""
    tags: str = "auto"
    """UPOS / XPOS / FEATS of the output: ``auto`` fills the empty (``_``) ones with the
    model's predictions, ``predict`` overwrites all, ``keep`` leaves them as given."""
    deps: str = "clear"
    """DEPS of the output: ``clear`` writes ``_`` (the input's enhanced graph describes the
    input's tree, not the predicted one; empty nodes go with it), ``keep`` leaves it."""
    workers: int | str = "auto"
    """Processes that read, encode and write an input file while the model decodes
    (:mod:`neuralparse.pipeline`); 0 parses in this process alone.  ``auto`` uses them for a
    file on CUDA, more for larger files (:func:`worker_count`), and none on the CPU, where the
    cores are busy decoding.  The output is the same bytes either way."""

    def __post_init__(self) -> None:
        if self.search not in SEARCHES:
            raise InputError(f"unknown search {self.search!r}; available: {list(SEARCHES)}")
        if self.tags not in TAG_MODES:
            raise InputError(f"unknown tags mode {self.tags!r}; available: {TAG_MODES}")
        if self.deps not in DEPS_MODES:
            raise InputError(f"unknown deps mode {self.deps!r}; available: {DEPS_MODES}")
        for name in ("beam_size", "batch_size", "batch_tokens", "beam_batch_tokens", "chunk_size"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be positive, got {getattr(self, name)}")
        if self.workers != "auto" and (
            isinstance(self.workers, bool) or not isinstance(self.workers, int) or self.workers < 0
        ):
            raise InputError(f"workers must be 'auto' or a count >= 0, got {self.workers!r}")

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
    """Seconds from the start of :func:`predict_file` to the first output written."""

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


# -- decoding ------------------------------------------------------------------------------


@torch.inference_mode()
def decode(
    parser: LoadedParser, batch: ModelInput, options: PredictOptions
) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
    """Heads and label ids ``[B, n_max + 1]`` of a batch on the model's device, and the
    predicted tag classes ``{column: [B, n_max]}`` (empty for a gold-tag model)."""
    model = parser.model
    table, tag_scores = model.encode_and_tag(batch)
    tags = model.best_tags(tag_scores)
    beam_size = options.beam_size if options.search == "beam" else None
    if options.cuda_graphs and supports_graphs(parser.system, batch.lengths.device):
        if beam_size not in parser.graphed:
            parser.graphed[beam_size] = GraphedSearch(model, parser.system, beam_size)
        heads, labels = parser.graphed[beam_size](batch, table)[:2]
    elif beam_size is None:
        heads, labels = greedy_decode(model, parser.system, batch, table)
    else:
        heads, labels, _ = beam_decode(model, parser.system, batch, beam_size, table=table)
    return heads, labels, tags


def batches_by_length(lengths: Tensor, options: PredictOptions) -> list[Tensor]:
    """Sentence ids of a chunk in batches of similar length, shortest first, within the word
    and sentence budgets of ``options``."""
    return [
        piece
        for batch in token_batches(lengths, options.batch_words, shuffle=False)
        for piece in batch.split(options.batch_size)
    ]


def check_words(sentences: Iterable[Sentence]) -> None:
    """Refuse a sentence without words (one given in code: the readers never make one)."""
    for sentence in sentences:
        if len(sentence) == 0:
            raise InputError(
                "sentence has no words",
                source=sentence.source,
                line=sentence.line or None,
                sent_id=sentence.sent_id,
            )


def decode_chunk(
    parser: LoadedParser,
    corpus: EncodedCorpus,
    options: PredictOptions,
    *,
    device: torch.device,
    tag_columns: Iterable[str],
    on_batch: Callable[[int, int], None] | None = None,
) -> Predictions:
    """Decode every sentence of ``corpus`` in batches by length (:func:`batches_by_length`);
    ``on_batch(sentences, words)`` is called after each batch.  The predictions are gathered
    on ``device`` and moved to the CPU once, at the end: on CUDA nothing in between waits for
    the device, so the host prepares the next batches while it decodes."""
    total = int(corpus.lengths.sum())
    heads = torch.empty(total, dtype=torch.long, device=device)
    labels = torch.empty_like(heads)
    tags = {column: torch.empty_like(heads) for column in tag_columns}
    for ids in batches_by_length(corpus.lengths, options):
        lengths = corpus.lengths[ids]
        # Where each word of the batch goes: index tensors, not boolean masks, because masked
        # indexing would wait for the device to learn the result's size.
        inside = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
        rows, offsets = inside.nonzero(as_tuple=True)
        positions = _on_device(corpus.starts[ids][rows] + offsets, device)
        rows, offsets = _on_device(rows, device), _on_device(offsets, device)
        batch = ModelInput(
            **{
                name: None if value is None else _on_device(value, device)
                for name, value in vars(corpus.batch(ids)).items()
            }
        )
        found_heads, found_labels, found_tags = decode(parser, batch, options)
        heads[positions] = found_heads[rows, offsets + 1]  # column 0 is the root
        labels[positions] = found_labels[rows, offsets + 1]
        for column, values in tags.items():
            values[positions] = found_tags[column][rows, offsets]
        if on_batch is not None:
            on_batch(len(ids), int(lengths.sum()))
    return Predictions(heads.cpu(), labels.cpu(), {c: t.cpu() for c, t in tags.items()})


def _on_device(tensor: Tensor, device: torch.device) -> Tensor:
    """``tensor`` on ``device``; to CUDA from pinned memory, a copy that does not wait for the
    work queued before it (one from pageable memory waits for the device to be idle)."""
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


_TAG_COLUMN_NAMES = {"upos": "UPOS", "xpos": "XPOS", "feats": "FEATS"}


@dataclass(frozen=True)
class Annotator:
    """Puts decoded predictions into their sentences: the tree through the system's
    :meth:`~neuralparse.systems.TransitionSystem.output_tree`, the tags as ``tags`` says, DEPS
    as ``deps`` says, with one :meth:`Sentence.with_prediction` per sentence.  The tag classes
    are checked as cells once, here, rather than word by word."""

    system: TransitionSystem
    tag_classes: dict[str, list[str]]
    """The class names of the tag columns whose predictions reach the output."""
    checked_tags: bool
    """Every class a tagging head can predict is a valid cell (:func:`is_tag_value`)."""
    fill_tags: bool
    clear_deps: bool

    @classmethod
    def for_parser(cls, parser: LoadedParser, options: PredictOptions) -> Annotator:
        vocabularies = tag_vocabularies(parser, options.tags)
        checked = all(
            is_tag_value(_TAG_COLUMN_NAMES[column], symbol)
            for column, vocabulary in vocabularies.items()
            for symbol in vocabulary.symbols[NOT_A_TAG:]
        )
        return cls(
            parser.system,
            {column: vocabulary.symbols for column, vocabulary in vocabularies.items()},
            checked,
            options.tags == "auto",
            options.deps == "clear",
        )

    def __call__(self, sentences: Sequence[Sentence], predictions: Predictions) -> list[Sentence]:
        """``sentences`` with their ``predictions`` (flat over their words, in their order)."""
        system, labels = self.system, self.system.labels
        heads, label_ids = predictions.heads.tolist(), predictions.labels.tolist()
        tags = [
            (column, self.tag_classes[column], values.tolist())
            for column, values in predictions.tags.items()
        ]
        parsed = []
        start = 0
        for sentence in sentences:
            end = start + len(sentence)
            names = [labels[k] if k >= 0 else "_" for k in label_ids[start:end]]
            tree_heads, deprels = system.output_tree(heads[start:end], names)
            predicted = {c: [classes[k] for k in ids[start:end]] for c, classes, ids in tags}
            parsed.append(
                sentence.with_prediction(
                    tree_heads,
                    deprels,
                    **predicted,
                    fill_tags=self.fill_tags,
                    clear_deps=self.clear_deps,
                    checked_tags=self.checked_tags,
                )
            )
            start = end
        return parsed


def parse_sentences(
    parser: LoadedParser,
    sentences: Sequence[Sentence],
    options: PredictOptions,
    *,
    device: torch.device,
    on_batch: Callable[[int, int], None] | None = None,
) -> list[Sentence]:
    """``sentences`` with predicted trees, in their order (one chunk's worth: everything is
    encoded at once).  ``on_batch(sentences, words)`` is called after each batch."""
    check_words(sentences)
    if not sentences:
        return []
    corpus = EncodedCorpus.build(sentences, parser.vocabs, max_word_chars(parser))
    annotate = Annotator.for_parser(parser, options)
    predictions = decode_chunk(
        parser, corpus, options, device=device, tag_columns=annotate.tag_classes, on_batch=on_batch
    )
    return annotate(sentences, predictions)


def tag_vocabularies(parser: LoadedParser, mode: str) -> dict[str, Vocabulary]:
    """The class vocabularies of the columns whose predictions reach the output in tag mode
    ``mode`` (none for ``keep``); ``predict`` with a model that cannot tag is an error."""
    if mode == "keep":
        return {}
    columns = parser.model.tagged_columns
    if mode == "predict" and not columns:
        raise InputError(
            "tags=predict but this model has no tagging heads (it reads gold UPOS/XPOS/FEATS "
            "from its input); use tags=keep, or a model trained with model=default"
        )
    return parser.vocabs.tag_classes(columns)


def max_word_chars(parser: LoadedParser) -> int:
    """The character cut-off the model was trained with."""
    return int(parser.model.config.max_word_chars)


def chunks(sentences: Iterable[Sentence], size: int) -> Iterator[list[Sentence]]:
    """``sentences`` in lists of ``size``.  A chunk is let go before the next one is read,
    and callers drop theirs too, so that one chunk, not two, is held at a time (the peak
    memory on 1,000,000 sentences fell from 1.31 to 1.17 times that on 10,000)."""
    iterator = iter(sentences)
    while True:
        chunk = list(itertools.islice(iterator, size))
        if not chunk:
            return
        yield chunk
        del chunk


def gold_tag_inputs(parser: LoadedParser) -> list[tuple[str, str]]:
    """``(column name, Sentence attribute)`` of the tag columns a gold-tag model reads (none
    for a tagging model, which reads no tags)."""
    if not parser.model.reads_gold_tags:
        return []
    vocabs = parser.vocabs
    columns = (("UPOS", vocabs.upos, "upos"), ("XPOS", vocabs.xpos, "xpos"))
    columns += (("FEATS", vocabs.feats, "feats"),)
    return [(name, attribute) for name, vocab, attribute in columns if vocab is not None]


def missing_inputs(parser: LoadedParser, sentences: Sequence[Sentence]) -> list[str]:
    """The tag columns a gold-tag model reads that ``sentences`` leave empty (``_``
    everywhere): such words get the unknown tag's vector, which the model has rarely seen in
    training.  A tagging model reads no tags, so it misses none."""
    return [
        name
        for name, attribute in gold_tag_inputs(parser)
        if not column_present(v for s in sentences for v in getattr(s, attribute))
    ]


def warn_missing_inputs(missing: Sequence[str]) -> None:
    """The warning for a gold-tag model whose input lacks the ``missing`` tag columns (once
    per run: the callers say it for the first chunk that lacks them)."""
    log.warning(
        "THIS MODEL NEEDS GOLD TAGS: it reads %s but the input leaves %s empty, "
        "so its trees will be mostly wrong (English-EWT: LAS 89 with gold tags, "
        "17 without). Parse untagged text with a model trained with "
        "model=default, which tags it itself",
        "/".join(missing),
        "these columns" if len(missing) > 1 else "this column",
    )


def predict_stream(
    parser: LoadedParser,
    sentences: Iterable[Sentence],
    options: PredictOptions,
    *,
    device: torch.device,
    progress: bool = False,
    report: PredictionReport | None = None,
) -> Iterator[Sentence]:
    """Parse a stream of sentences chunk by chunk, yielding them in input order."""
    report = report if report is not None else PredictionReport()
    bar = tqdm(
        desc="parsing", unit="sent", disable=not progress, file=sys.stderr, dynamic_ncols=True
    )
    start = time.perf_counter()
    warned = False

    def advance(count: int, words: int) -> None:
        report.sentences += count
        report.words += words
        bar.update(count)
        bar.set_postfix(words_s=f"{report.words / max(time.perf_counter() - start, 1e-9):.0f}")

    try:
        for chunk in chunks(sentences, options.chunk_size):
            missing = missing_inputs(parser, chunk)
            if missing and not warned:
                warned = True
                warn_missing_inputs(missing)
            yield from parse_sentences(parser, chunk, options, device=device, on_batch=advance)
            del chunk  # before the next chunk is read (see chunks)
    finally:
        report.seconds += time.perf_counter() - start
        bar.close()


# -- files ---------------------------------------------------------------------------------


FORMAT_NAMES = {"conllu": "CoNLL-U", "text": "plain text", "raw": "raw text"}


def _peek(lines: Iterator[str]) -> tuple[list[str], Iterator[str]]:
    """The lines that format detection reads, and all of ``lines`` again."""
    head = probe(lines)
    return head, itertools.chain(head, lines)


def _detect_path_format(path: Path) -> tuple[str, str]:
    """The format of the file ``path`` and why (see :func:`explain_format`)."""
    try:
        with path.open("rb") as handle:
            head = probe(decoded_lines(handle))
    except OSError as error:
        raise InputError(f"cannot read input: {error.strerror}", source=str(path)) from None
    return explain_format(head)


def _path_format(path: Path, input_format: str) -> tuple[str, str | None]:
    """The format of the input file ``path``: ``input_format``, or the one detected for
    ``auto`` and why (see :func:`explain_format`); a missing file is an :class:`InputError`."""
    if not path.is_file():
        raise InputError("input file not found", source=str(path))
    if input_format == "auto":
        return _detect_path_format(path)
    return input_format, None


def _log_format(name: str, fmt: str, why: str | None) -> None:
    """Say how the input is read; for a detected format, why, and how to override it."""
    if why is None:
        log.info("%s: reading %s input (input_format=%s)", name, FORMAT_NAMES[fmt], fmt)
        return
    other = "text" if fmt == "conllu" else "conllu"
    log.info(
        "%s: detected %s input: %s (set input_format=%s to read it as %s)",
        name,
        FORMAT_NAMES[fmt],
        why,
        other,
        FORMAT_NAMES[other],
    )


@contextmanager
def open_sentences(
    source: str | os.PathLike[str] | TextIO,
    *,
    input_format: str = "auto",
    lenient: bool = False,
    report: ReadReport | None = None,
    lang: str = DEFAULT_LANGUAGE,
) -> Iterator[Iterator[Sentence]]:
    """The sentences of ``source`` (a path, ``-`` for standard input, or an open text file)
    as CoNLL-U or plain pre-tokenized text (``input_format``: ``auto`` detects it from the
    first lines, see :func:`~neuralparse.io.detect_format`, and logs what it found and why),
    or as raw text that spaCy's blank ``lang`` pipeline tokenizes (``raw``, never detected;
    :mod:`neuralparse.io.raw`).
    CoNLL-U needs no tree (HEAD may be ``_``); ``lenient`` skips malformed CoNLL-U sentences,
    those with bytes that are not UTF-8 included, and counts them in ``report``.

    Standard input is read like a file, in binary and line by line, so that its bytes, line
    endings and error messages (``<stdin>``, line, sentence) are those a file would give."""
    if input_format not in INPUT_FORMATS:
        raise InputError(f"unknown input_format {input_format!r}; available: {INPUT_FORMATS}")
    report = report if report is not None else ReadReport()
    why: str | None = None
    if isinstance(source, str | os.PathLike) and str(source) != STDIO:
        path = Path(source)
        name, lines = str(path), None
        fmt, why = _path_format(path, input_format)
    else:
        if isinstance(source, str | os.PathLike):  # "-"
            name = "<stdin>"
            raw = decoded_lines(sys.stdin.buffer)
        else:
            name = str(getattr(source, "name", "<file>"))
            raw = guarded_lines(source, name)
        head, lines = _peek(raw)
        fmt = input_format
        if input_format == "auto":
            fmt, why = explain_format(head)
    _log_format(name, fmt, why)
    origin: Any = lines if lines is not None else str(source)
    report.source = name
    if fmt == "conllu":
        yield iter_conllu(origin, lenient=lenient, check_tree=False, report=report, name=name)
    elif fmt == "raw":
        yield iter_raw(origin, lang=lang, name=name)
    else:
        yield iter_text(origin, name=name)


def _writable_partial(path: Path) -> tuple[IO[Any], Path]:
    """The temporary file of the output ``path`` (:func:`partial_file`), or an
    :class:`InputError` saying why ``path`` cannot be written."""
    if path.is_dir():
        raise InputError("output is a folder; give a file name", source=str(path))
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError("output file is not writable", source=str(path))
    try:
        return partial_file(path)
    except FileNotFoundError:
        raise InputError(f"output folder {path.parent} does not exist", source=str(path)) from None
    except OSError as error:
        raise InputError(
            f"cannot write in the output folder {path.parent}: {error.strerror}", source=str(path)
        ) from None


@contextmanager
def open_output(dest: str | os.PathLike[str] | TextIO) -> Iterator[TextIO]:
    """A text handle for ``dest``: ``-`` for standard output, an open text file, or a path.

    Standard output receives the whole output at the end, or nothing when the run fails.  A
    path is checked on entry, before anything is parsed: a missing folder, a folder, or a
    file or folder that cannot be written is an :class:`InputError`.  It is written to a
    temporary file of its own beside it (``.NAME.RANDOM.partial``, so runs writing the same
    output cannot mix their text) that replaces it only when everything succeeded and is
    removed on any other exit, so a failed or interrupted run leaves no partial output
    (:func:`~neuralparse.io.sources.replacing`).  An existing file that is not a regular file
    (``/dev/null``, a named pipe) is written directly: it cannot be replaced.  Line endings
    are written as they are."""
    if not isinstance(dest, str | os.PathLike):
        yield dest
        return
    if str(dest) == STDIO:
        # Spooled (in memory up to a few MB, then in a temporary file) and copied to standard
        # output only when everything succeeded: a failed run writes nothing there either, as
        # it leaves no file behind.
        with tempfile.SpooledTemporaryFile(max_size=_STDOUT_SPOOL_BYTES) as spool:
            text = io.TextIOWrapper(spool, encoding=ENCODING, newline="")
            yield text
            text.flush()
            text.detach()
            spool.seek(0)
            shutil.copyfileobj(spool, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        return
    path = Path(dest)
    if path.exists() and not path.is_file() and not path.is_dir():
        try:
            device = path.open("w", encoding=ENCODING, newline="")
        except OSError as error:
            raise InputError(f"cannot write output: {error.strerror}", source=str(path)) from None
        with device:
            yield device
        return
    handle, partial = _writable_partial(path)
    with replacing(path, handle, partial) as out:
        yield out


def predict_file(
    parser: LoadedParser,
    source: str | os.PathLike[str] | TextIO,
    dest: str | os.PathLike[str] | TextIO,
    options: PredictOptions | None = None,
    *,
    device: torch.device,
    input_format: str = "auto",
    lenient: bool = False,
    progress: bool = False,
    lang: str | None = None,
) -> PredictionReport:
    """Parse ``source`` into ``dest`` (paths, ``-`` or open text files) as CoNLL-U; see the
    module docstring.  Under ``torchrun`` the ranks share the work and rank 0 writes.
    ``input_format="raw"`` tokenizes with spaCy's ``lang`` pipeline, by default the language
    of the model's treebank (:func:`~neuralparse.io.raw.resolve_language`)."""
    options = options or PredictOptions()
    if input_format == "raw":  # checked before any output is opened
        lang = resolve_language(lang, parser.checkpoint["config"])
    context = distributed.Distributed()
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        if not isinstance(source, str | os.PathLike) or str(source) == STDIO:
            raise InputError("torchrun prediction needs an input file that every rank can read")
        context, device = distributed.setup(device)
        parser.model.to(device)
    report = PredictionReport()
    started = time.perf_counter()

    def written() -> None:
        if report.first_output is None:
            report.first_output = time.perf_counter() - started

    workers = 0 if context.active else worker_count(options, source, device, input_format)
    try:
        if workers:
            path = Path(source)  # type: ignore[arg-type]  # worker_count wants a path
            _predict_in_workers(
                parser,
                path,
                dest,
                options,
                workers,
                device=device,
                input_format=input_format,
                lenient=lenient,
                progress=progress,
                report=report,
                on_output=written,
            )
            return report
        with open_sentences(
            source,
            input_format=input_format,
            lenient=lenient,
            report=report.read,
            lang=lang or DEFAULT_LANGUAGE,
        ) as sentences:
            report.source = report.read.source or str(source)  # set by open_sentences
            if context.active:
                _predict_sharded(parser, sentences, dest, options, device, context, report)
            else:
                with open_output(dest) as out:
                    for sentence in predict_stream(
                        parser,
                        sentences,
                        options,
                        device=device,
                        progress=progress,
                        report=report,
                    ):
                        out.write(sentence.to_conllu())
                        written()
    finally:
        distributed.teardown(context)
    return report


AUTO_WORKERS_MAX = 12
"""At most this many worker processes for ``workers="auto"``."""
AUTO_BYTES_PER_WORKER = 256 * 1024
"""``workers="auto"`` starts one worker per this many bytes of input (English-EWT test, 1.8 MB
and 2,077 sentences, gets 7): a small file does not pay for starting many."""


def worker_count(
    options: PredictOptions,
    source: str | os.PathLike[str] | TextIO,
    device: torch.device,
    input_format: str = "auto",
) -> int:
    """The worker processes :func:`predict_file` uses (:mod:`neuralparse.pipeline`).

    Workers read an input *file* of CoNLL-U or plain text (not standard input, an open file or
    raw text) and are forked (not on Windows), so for others ``options.workers`` is ignored.
    ``auto`` uses them on CUDA only: one per :data:`AUTO_BYTES_PER_WORKER` bytes of the file,
    at most :data:`AUTO_WORKERS_MAX` and at most the CPU cores less two (the main process
    decodes and writes); on the CPU decoding needs the cores."""
    if (
        options.workers == 0
        or not isinstance(source, str | os.PathLike)
        or str(source) == STDIO
        or input_format not in ("auto", "conllu", "text")
        or not Path(source).is_file()
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        if options.workers not in (0, "auto"):
            log.info("workers=%s: they read input files only; parsing here", options.workers)
        return 0
    if options.workers != "auto":
        return int(options.workers)
    if device.type != "cuda":
        return 0
    by_size = Path(source).stat().st_size // AUTO_BYTES_PER_WORKER
    return max(0, min(AUTO_WORKERS_MAX, (os.cpu_count() or 1) - 2, by_size))


def conllu_text(sentences: Iterable[Sentence]) -> str:
    """The CoNLL-U blocks of ``sentences``, one after the other."""
    return "".join(sentence.to_conllu() for sentence in sentences)


def _predict_in_workers(
    parser: LoadedParser,
    path: Path,
    dest: str | os.PathLike[str] | TextIO,
    options: PredictOptions,
    workers: int,
    *,
    device: torch.device,
    input_format: str,
    lenient: bool,
    progress: bool,
    report: PredictionReport,
    on_output: Callable[[], None],
) -> None:
    """:func:`predict_file` with ``workers`` processes doing the host work
    (:mod:`neuralparse.pipeline`): the same output, messages and report."""
    fmt, why = _path_format(path, input_format)
    name = str(path)
    _log_format(name, fmt, why)
    report.source = report.read.source = name
    annotate = Annotator.for_parser(parser, options)
    vocabs, word_chars = parser.vocabs, max_word_chars(parser)
    gold = gold_tag_inputs(parser)
    warned = False

    def flags(sentences: Sequence[Sentence]) -> np.ndarray:
        present = [[column_present(getattr(s, attr)) for _, attr in gold] for s in sentences]
        return np.array(present, dtype=bool).reshape(len(sentences), len(gold))

    def on_chunk(present: np.ndarray) -> None:
        nonlocal warned
        missing = [column for (column, _), there in zip(gold, present, strict=True) if not there]
        if missing and not warned:
            warned = True
            warn_missing_inputs(missing)

    bar = tqdm(
        desc="parsing", unit="sent", disable=not progress, file=sys.stderr, dynamic_ncols=True
    )
    start = time.perf_counter()

    def advance(count: int, words: int) -> None:
        report.sentences += count
        report.words += words
        bar.update(count)
        bar.set_postfix(words_s=f"{report.words / max(time.perf_counter() - start, 1e-9):.0f}")

    def decode(corpus: EncodedCorpus, check: Callable[[], None]) -> Predictions:
        def on_batch(count: int, words: int) -> None:
            check()
            advance(count, words)

        columns = annotate.tag_classes
        return decode_chunk(
            parser, corpus, options, device=device, tag_columns=columns, on_batch=on_batch
        )

    stages = Stages(
        read=lambda piece: read_piece(piece, fmt, name, lenient=lenient),
        encode=lambda sentences: EncodedCorpus.build(sentences, vocabs, word_chars),
        flags=flags,
        annotate=lambda sentences, found: conllu_text(annotate(sentences, found)),
        on_chunk=on_chunk,
        decode=decode,
    )
    piece_size = min(256, max(1, options.chunk_size // (2 * workers)))
    try:
        with open_output(dest) as out:
            parsed, skipped = run_pipeline(
                cut_pieces(path, fmt, piece_size),
                out,
                stages,
                workers=workers,
                chunk_size=options.chunk_size,
                read_ahead=options.chunk_size + workers * piece_size,
                on_output=on_output,
            )
            if not parsed:  # the reader's own error (and warning), with its message
                with open_sentences(path, input_format=fmt, lenient=lenient) as sentences:
                    for _ in sentences:
                        pass
            report.read.sentences, report.read.skipped = parsed, skipped
    finally:
        report.seconds += time.perf_counter() - start
        bar.close()
        if report.read.skipped:
            warnings.warn(report.read.summary(), SkippedSentencesWarning, stacklevel=3)


def _predict_sharded(
    parser: LoadedParser,
    sentences: Iterator[Sentence],
    dest: str | os.PathLike[str] | TextIO,
    options: PredictOptions,
    device: torch.device,
    context: distributed.Distributed,
    report: PredictionReport,
) -> None:
    """Each rank parses every ``world_size``-th sentence of each chunk; rank 0 gathers the
    chunk's CoNLL-U blocks and writes them in input order."""
    import torch.distributed as dist

    start = time.perf_counter()
    ranks = context.world_size
    with open_output(dest) if context.is_main else _nowhere() as out:
        for chunk in chunks(sentences, options.chunk_size * ranks):
            mine = chunk[context.rank :: ranks]
            blocks = [s.to_conllu() for s in parse_sentences(parser, mine, options, device=device)]
            gathered: list[list[str]] | None = None
            if context.is_main:
                gathered = [[] for _ in range(ranks)]
            dist.gather_object(blocks, gathered, dst=0)
            if gathered is not None:
                for i in range(len(chunk)):
                    out.write(gathered[i % ranks][i // ranks])
            report.sentences += len(chunk)
            report.words += sum(len(s) for s in chunk)
            del chunk, mine, blocks, gathered  # before the next chunk is read (see chunks)
    report.seconds += time.perf_counter() - start


@contextmanager
def _nowhere() -> Iterator[None]:
    yield None
