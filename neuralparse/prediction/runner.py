"""File-to-file prediction (:func:`predict_file`): in this process, with worker processes
doing the host work, or shared by the ranks of ``torchrun``.

In this process the sentences stream through
:func:`~neuralparse.prediction.decoding.predict_stream` into the output.  With ``workers`` (by
default on CUDA, :func:`worker_count`) an input file is read, encoded and written by worker
processes while this process decodes (:mod:`~neuralparse.prediction.pipeline`), with the
same chunks and batches, so the output is the same bytes; only the Python work of the host
moves (the GIL keeps threads from sharing it).  Under ``torchrun --nproc_per_node=N`` every
rank reads the same input; rank ``r`` parses the sentences ``r, r + N, ...`` of each chunk,
and rank 0 gathers the parsed chunk and writes it in input order.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import torch

from neuralparse.errors import InputError
from neuralparse.io import Sentence, SkippedSentencesWarning
from neuralparse.io.pieces import cut_pieces, read_piece
from neuralparse.io.raw import DEFAULT_LANGUAGE, resolve_language
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.prediction.decoding import (
    Annotator,
    InputNotices,
    Progress,
    chunks,
    decode_chunk,
    max_word_chars,
    parse_sentences,
    predict_stream,
)
from neuralparse.prediction.files import (
    STDIO,
    check_text_head,
    log_format,
    open_output,
    open_sentences,
    path_format,
)
from neuralparse.prediction.options import PredictionReport, PredictOptions
from neuralparse.prediction.pipeline import Predictions, Stages, run_pipeline
from neuralparse.runtime import distributed
from neuralparse.runtime.checkpoint import LoadedParser
from neuralparse.search.graphs import GraphCache

log = logging.getLogger("neuralparse.predict")


def check_not_the_input(
    source: str | os.PathLike[str] | TextIO, dest: str | os.PathLike[str] | TextIO
) -> None:
    """Refuse an output path that is the input file (also through a link): the finished
    output would replace what the user gave."""
    paths = [x for x in (source, dest) if isinstance(x, str | os.PathLike) and str(x) != STDIO]
    if len(paths) == 2 and all(os.path.exists(x) for x in paths) and os.path.samefile(*paths):
        raise InputError(
            "the output is the input file, which the parse would replace: choose another output",
            source=str(dest),
        )


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
    multiword_tokens: bool = True,
    sentence_splitter: str = "learned",
    graphs: GraphCache | None = None,
) -> PredictionReport:
    """Parse ``source`` into ``dest`` (paths, ``-`` or open text files) as CoNLL-U; see
    :mod:`neuralparse.prediction`.  Under ``torchrun`` the ranks share the work and rank 0
    writes.
    ``input_format="raw"`` tokenizes with spaCy's ``lang`` pipeline, by default the language
    of the model's treebank (:func:`~neuralparse.io.raw.resolve_language`), and refines it
    with what the model learned of its training treebank
    (:meth:`~neuralparse.runtime.checkpoint.LoadedParser.segmentation`: ``multiword_tokens``,
    ``sentence_splitter``).  ``graphs`` keeps
    the CUDA graphs recorded for the parser across calls (a cache of this call's when None)."""
    options = options or PredictOptions()
    graphs = graphs if graphs is not None else GraphCache()
    check_not_the_input(source, dest)
    segmentation = None
    if input_format == "raw":  # checked before any output is opened
        lang = resolve_language(lang, parser.checkpoint["config"])
        segmentation = parser.segmentation(multiword_tokens, sentence_splitter)
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
    if workers and parser.contextual is not None:
        # The workers would run the contextual encoder on the CPU, one copy each.
        log.info("workers=%s: a model with a contextual encoder encodes here", options.workers)
        workers = 0
    try:
        if workers:
            path = Path(source)  # type: ignore[arg-type]  # worker_count wants a path
            _predict_in_workers(
                parser,
                path,
                dest,
                options,
                workers,
                device,
                input_format=input_format,
                lenient=lenient,
                progress=progress,
                report=report,
                on_output=written,
                graphs=graphs,
            )
            return report
        with open_sentences(
            source,
            input_format=input_format,
            lenient=lenient,
            report=report.read,
            lang=lang or DEFAULT_LANGUAGE,
            segmentation=segmentation,
        ) as sentences:
            report.source = report.read.source or str(source)  # set by open_sentences
            if context.active:
                _predict_sharded(parser, sentences, dest, options, device, context, report, graphs)
            else:
                with open_output(dest) as out:
                    for sentence in predict_stream(
                        parser,
                        sentences,
                        options,
                        device=device,
                        progress=progress,
                        report=report,
                        graphs=graphs,
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
    """The worker processes :func:`predict_file` uses (:mod:`neuralparse.prediction.pipeline`).

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
    device: torch.device,
    *,
    input_format: str,
    lenient: bool,
    progress: bool,
    report: PredictionReport,
    on_output: Callable[[], None],
    graphs: GraphCache,
) -> None:
    """:func:`predict_file` with ``workers`` processes doing the host work
    (:mod:`neuralparse.prediction.pipeline`): the same output, messages and report."""
    fmt, why = path_format(path, input_format)
    name = str(path)
    log_format(name, fmt, why)
    check_text_head(path, fmt)
    report.source = report.read.source = name
    annotate = Annotator.for_parser(parser, options)
    vocabs, word_chars = parser.vocabs, max_word_chars(parser)
    notices = InputNotices(parser, options)
    advance = Progress(report, shown=progress)

    def decode(corpus: EncodedCorpus, check: Callable[[], None]) -> Predictions:
        def on_batch(count: int, words: int) -> None:
            check()
            advance(count, words)

        columns = annotate.tag_classes
        return decode_chunk(
            parser,
            corpus,
            options,
            device=device,
            tag_columns=columns,
            on_batch=on_batch,
            graphs=graphs,
        )

    stages = Stages(
        read=lambda piece: read_piece(piece, fmt, name, lenient=lenient),
        encode=lambda sentences: EncodedCorpus.build(sentences, vocabs, word_chars, None),
        flags=notices.flags,
        annotate=lambda sentences, found: conllu_text(annotate(sentences, found)),
        on_chunk=lambda present: notices.on_chunk(present, name),
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
                chunk_sizes=options.chunk_sizes(device),
                read_ahead=options.chunk_size + workers * piece_size,
                on_output=on_output,
            )
            if not parsed:  # the reader's own error (and warning), with its message
                with open_sentences(path, input_format=fmt, lenient=lenient) as sentences:
                    for _ in sentences:
                        pass
            report.read.sentences, report.read.skipped = parsed, skipped
    finally:
        advance.close()
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
    graphs: GraphCache,
) -> None:
    """Each rank parses every ``world_size``-th sentence of each chunk; rank 0 gathers the
    chunk's CoNLL-U blocks and writes them in input order."""
    import torch.distributed as dist

    start = time.perf_counter()
    ranks = context.world_size
    notices = InputNotices(parser, options)
    with open_output(dest) if context.is_main else _nowhere() as out:
        sizes = (size * ranks for size in options.chunk_sizes(device))
        for chunk in chunks(sentences, sizes):
            if context.is_main:
                notices.check(chunk)
            mine = chunk[context.rank :: ranks]
            parsed = parse_sentences(parser, mine, options, device=device, graphs=graphs)
            blocks = [s.to_conllu() for s in parsed]
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
