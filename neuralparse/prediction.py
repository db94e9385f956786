"""Batch prediction: stream sentences through a trained parser with bounded memory (issue 6).

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
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

import torch
from torch import Tensor
from tqdm import tqdm

from neuralparse.errors import InputError
from neuralparse.io import ReadReport, Sentence, iter_conllu, iter_text
from neuralparse.io.sentence import UNSPECIFIED
from neuralparse.io.sources import (
    ENCODING,
    decoded_lines,
    guarded_lines,
    partial_file,
    replacing,
)
from neuralparse.io.text import explain_format, probe
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.vocab import Vocabulary, column_present
from neuralparse.runtime import distributed
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import LoadedParser
from neuralparse.search import SEARCHES
from neuralparse.search.beam import beam_decode
from neuralparse.search.graphs import GraphedSearch, supports_graphs
from neuralparse.search.greedy import greedy_decode

log = logging.getLogger("neuralparse.predict")

STDIO = "-"
"""The path that means standard input or output."""

INPUT_FORMATS = ("auto", "conllu", "text")
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
    for sentence in sentences:
        if len(sentence) == 0:
            raise InputError(
                "sentence has no words",
                source=sentence.source,
                line=sentence.line or None,
                sent_id=sentence.sent_id,
            )
    if not sentences:
        return []
    system = parser.system
    corpus = EncodedCorpus.build(sentences, parser.vocabs, max_word_chars(parser))
    tag_names = tag_vocabularies(parser, options.tags)
    parsed: list[Sentence | None] = [None] * len(sentences)
    for ids in batches_by_length(corpus.lengths, options):
        heads, labels, tags = decode(parser, corpus.batch(ids).to(device), options)
        heads_rows, label_rows = heads.cpu().tolist(), labels.cpu().tolist()
        tag_rows = {column: tags[column].cpu().tolist() for column in tag_names}
        words = 0
        for row, index in enumerate(ids.tolist()):
            sentence = sentences[index]
            n = len(sentence)
            names = [system.labels[k] if k >= 0 else "_" for k in label_rows[row][1 : n + 1]]
            tree_heads, deprels = system.output_tree(heads_rows[row][1 : n + 1], names)
            result = sentence.with_tree(tree_heads, deprels)
            if tag_names:
                predicted = {
                    column: [vocab.symbols[k] for k in tag_rows[column][row][:n]]
                    for column, vocab in tag_names.items()
                }
                result = with_predicted_tags(result, predicted, options.tags)
            parsed[index] = result.without_deps() if options.deps == "clear" else result
            words += n
        if on_batch is not None:
            on_batch(len(ids), words)
    return parsed  # type: ignore[return-value]  # every index was filled by some batch


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


def with_predicted_tags(sentence: Sentence, predicted: dict[str, list[str]], mode: str) -> Sentence:
    """``sentence`` with the ``predicted`` columns (``upos``, ``xpos``, ``feats``): every word's
    for ``predict``, the empty (``_``) ones for ``auto``."""
    if mode == "auto":
        predicted = {
            column: [
                given if given != UNSPECIFIED else guess
                for given, guess in zip(getattr(sentence, column), values, strict=True)
            ]
            for column, values in predicted.items()
        }
    return sentence.with_tags(**predicted)


def max_word_chars(parser: LoadedParser) -> int:
    """The character cut-off the model was trained with."""
    return int(parser.model.config.max_word_chars)


def chunks(sentences: Iterable[Sentence], size: int) -> Iterator[list[Sentence]]:
    iterator = iter(sentences)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def missing_inputs(parser: LoadedParser, sentences: Sequence[Sentence]) -> list[str]:
    """The tag columns a gold-tag model reads that ``sentences`` leave empty (``_``
    everywhere): such words get the unknown tag's vector, which the model has rarely seen in
    training.  A tagging model reads no tags, so it misses none."""
    if not parser.model.reads_gold_tags:
        return []
    vocabs = parser.vocabs
    columns = {"UPOS": (vocabs.upos, "upos"), "XPOS": (vocabs.xpos, "xpos")}
    columns["FEATS"] = (vocabs.feats, "feats")
    return [
        name
        for name, (vocab, attribute) in columns.items()
        if vocab is not None
        and not column_present(v for s in sentences for v in getattr(s, attribute))
    ]


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
                log.warning(
                    "THIS MODEL NEEDS GOLD TAGS: it reads %s but the input leaves %s empty, "
                    "so its trees will be mostly wrong (English-EWT: LAS 89 with gold tags, "
                    "17 without). Parse untagged text with a model trained with "
                    "model=default, which tags it itself",
                    "/".join(missing),
                    "these columns" if len(missing) > 1 else "this column",
                )
            yield from parse_sentences(parser, chunk, options, device=device, on_batch=advance)
    finally:
        report.seconds += time.perf_counter() - start
        bar.close()


# -- files ---------------------------------------------------------------------------------


FORMAT_NAMES = {"conllu": "CoNLL-U", "text": "plain text"}


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
) -> Iterator[Iterator[Sentence]]:
    """The sentences of ``source`` (a path, ``-`` for standard input, or an open text file)
    as CoNLL-U or plain pre-tokenized text (``input_format``: ``auto`` detects it from the
    first lines, see :func:`~neuralparse.io.detect_format`, and logs what it found and why).
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
        if not path.is_file():
            raise InputError("input file not found", source=str(path))
        name, lines = str(path), None
        fmt = input_format
        if input_format == "auto":
            fmt, why = _detect_path_format(path)
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

    A path is checked on entry, before anything is parsed: a missing folder, a folder, or a
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
        stdout = io.TextIOWrapper(sys.stdout.buffer, encoding=ENCODING, newline="")
        try:
            yield stdout
            stdout.flush()
        finally:
            stdout.detach()
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
) -> PredictionReport:
    """Parse ``source`` into ``dest`` (paths, ``-`` or open text files) as CoNLL-U; see the
    module docstring.  Under ``torchrun`` the ranks share the work and rank 0 writes."""
    options = options or PredictOptions()
    context = distributed.Distributed()
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        if not isinstance(source, str | os.PathLike) or str(source) == STDIO:
            raise InputError("torchrun prediction needs an input file that every rank can read")
        context, device = distributed.setup(device)
        parser.model.to(device)
    report = PredictionReport()
    try:
        with open_sentences(
            source, input_format=input_format, lenient=lenient, report=report.read
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
    finally:
        distributed.teardown(context)
    return report


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
    report.seconds += time.perf_counter() - start


@contextmanager
def _nowhere() -> Iterator[None]:
    yield None
