"""Decoding sentences with a trained parser, one chunk at a time: batches by length, greedy or
beam search on the model's device, and the trees and tags put back into the sentences.

A chunk is encoded once (:class:`~neuralparse.model.inputs.EncodedCorpus`), its sentences are
sorted by length into batches within the word and sentence budgets of
:class:`~neuralparse.prediction.options.PredictOptions` (:func:`batches_by_length`), every
batch is decoded on the state batch (:func:`decode`), and :class:`Annotator` puts each tree
(through :meth:`TransitionSystem.output_tree`), the predicted tags and the DEPS column into its
sentence.  :func:`predict_stream` does this for a stream of sentences, chunk after chunk, so
memory depends on the chunk and batch sizes, never on the length of the input.  Both the
single-process path and the worker processes (:mod:`neuralparse.prediction.pipeline`) decode here.
"""

from __future__ import annotations

import itertools
import logging
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor
from tqdm import tqdm

from neuralparse.errors import InputError, OptionError
from neuralparse.io import Sentence
from neuralparse.io.sentence import is_tag_value
from neuralparse.model.encoder import NOT_A_TAG
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.vocab import Vocabulary, column_present
from neuralparse.prediction.options import PredictionReport, PredictOptions
from neuralparse.prediction.pipeline import Predictions
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import LoadedParser
from neuralparse.runtime.devices import (
    batch_to_device,
    encoding_precision,
    native_bfloat16,
    to_device,
)
from neuralparse.search.beam import beam_decode
from neuralparse.search.graphs import GraphCache, supports_graphs
from neuralparse.search.greedy import greedy_decode
from neuralparse.systems import TransitionSystem

log = logging.getLogger("neuralparse.predict")


@torch.inference_mode()
def decode(
    parser: LoadedParser,
    batch: ModelInput,
    options: PredictOptions,
    graphs: GraphCache | None = None,
) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
    """Heads and label ids ``[B, n_max + 1]`` of a batch on the model's device, and the
    predicted tag classes ``{column: [B, n_max]}`` (empty for a gold-tag model).  On CUDA,
    with ``options.cuda_graphs``, the search replays the graphs kept in ``graphs`` (recorded
    there on first use); without a cache it decodes eagerly.  The encoder runs at
    ``options.precision``, the search in float32."""
    model = parser.model
    if options.arc_weight and model.arcs is None:
        raise OptionError(
            f"arc_weight={options.arc_weight}: this model has no arc scorer (its decoding "
            "uses the transition scores alone); leave arc_weight unset or 0"
        )
    device = batch.lengths.device
    with encoding_precision(device, options.precision):
        table, tag_scores = model.encode_and_tag(batch, options.arc_weight)
    table = table.in_float32()
    tags = model.best_tags(tag_scores)
    beam_size = options.beam_size if options.search == "beam" else None
    beam = beam_size is not None
    if (
        graphs is not None
        and options.cuda_graphs
        and supports_graphs(parser.system, device, beam=beam)
    ):
        heads, labels = graphs.search(model, parser.system, beam_size)(batch, table)[:2]
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
    graphs: GraphCache | None = None,
) -> Predictions:
    """Decode every sentence of ``corpus`` in batches by length (:func:`batches_by_length`),
    with the CUDA graphs of ``graphs`` (:func:`decode`; a cache of this chunk's when None);
    ``on_batch(sentences, words)`` is called after each batch.  The predictions are gathered
    on ``device`` and moved to the CPU once, at the end: on CUDA nothing in between waits for
    the device, so the host prepares the next batches while it decodes."""
    total = int(corpus.lengths.sum())
    heads = torch.empty(total, dtype=torch.long, device=device)
    labels = torch.empty_like(heads)
    tags = {column: torch.empty_like(heads) for column in tag_columns}
    graphs = graphs if graphs is not None else GraphCache()
    if options.precision == "bfloat16" and not native_bfloat16(device):
        warnings.warn(
            f"precision=bfloat16 on {device}, which has no bfloat16 arithmetic (AVX512-BF16 "
            "or AMX on a CPU, an Ampere or later GPU): the encoder runs in float32 instead",
            RuntimeWarning,
            stacklevel=2,
        )
    with torch.inference_mode(), encoding_precision(device, options.precision):
        char_vectors = parser.model.char_vectors(corpus, device)
    for ids in batches_by_length(corpus.lengths, options):
        lengths = corpus.lengths[ids]
        # Where each word of the batch goes: index tensors, not boolean masks, because masked
        # indexing would wait for the device to learn the result's size.
        inside = torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
        rows, offsets = inside.nonzero(as_tuple=True)
        positions = to_device(corpus.starts[ids][rows] + offsets, device)
        rows, offsets = to_device(rows, device), to_device(offsets, device)
        batch = batch_to_device(corpus.batch(ids, char_vectors), device)
        found_heads, found_labels, found_tags = decode(parser, batch, options, graphs)
        heads[positions] = found_heads[rows, offsets + 1]  # column 0 is the root
        labels[positions] = found_labels[rows, offsets + 1]
        for column, values in tags.items():
            values[positions] = found_tags[column][rows, offsets]
        if on_batch is not None:
            on_batch(len(ids), int(lengths.sum()))
    return Predictions(heads.cpu(), labels.cpu(), {c: t.cpu() for c, t in tags.items()})


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
    graphs: GraphCache | None = None,
) -> list[Sentence]:
    """``sentences`` with predicted trees, in their order (one chunk's worth: everything is
    encoded at once; ``graphs`` as for :func:`decode_chunk`).  ``on_batch(sentences, words)``
    is called after each batch."""
    check_words(sentences)
    if not sentences:
        return []
    # A contextual encoder computes its features here, at the encoder's precision too.
    with encoding_precision(device, options.precision):
        corpus = EncodedCorpus.build(
            sentences, parser.vocabs, max_word_chars(parser), parser.contextual
        )
    annotate = Annotator.for_parser(parser, options)
    columns = annotate.tag_classes
    predictions = decode_chunk(
        parser,
        corpus,
        options,
        device=device,
        tag_columns=columns,
        on_batch=on_batch,
        graphs=graphs,
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


def chunks(sentences: Iterable[Sentence], sizes: Iterable[int]) -> Iterator[list[Sentence]]:
    """``sentences`` in lists of the successive ``sizes``
    (:meth:`~neuralparse.prediction.options.PredictOptions.chunk_sizes`).  A chunk is let go
    before the next one is read, and callers drop theirs too, so that one chunk, not two, is
    held at a time (the peak memory on 1,000,000 sentences fell from 1.31 to 1.17 times that
    on 10,000)."""
    iterator = iter(sentences)
    for size in sizes:
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


class InputNotices:
    """The warnings a prediction run gives once about its input, for the first chunk that
    calls for each: a gold-tag model whose input leaves the tag columns it reads empty, and
    enhanced graphs (DEPS, empty nodes) that ``deps=clear`` leaves out of the output.

    :meth:`flags` looks at sentences (in a worker process,
    :mod:`~neuralparse.prediction.pipeline`) and :meth:`on_chunk` warns from a chunk's flags
    combined; :meth:`check` does both at once."""

    def __init__(self, parser: LoadedParser, options: PredictOptions) -> None:
        self.gold = gold_tag_inputs(parser)
        self.clears_graphs = options.deps == "clear"
        self.said_missing = False
        self.said_graphs = False

    def flags(self, sentences: Sequence[Sentence]) -> np.ndarray:
        """``[sentences, K + 1]`` booleans: whether each sentence has a value in each of the
        K tag columns a gold-tag model reads, and whether it has an enhanced graph."""
        rows = [
            [column_present(getattr(s, attribute)) for _, attribute in self.gold]
            + [s.has_enhanced_graph]
            for s in sentences
        ]
        return np.array(rows, dtype=bool).reshape(len(sentences), len(self.gold) + 1)

    def on_chunk(self, present: np.ndarray, source: str | None) -> None:
        """Warn for a chunk of ``source`` whose :meth:`flags`, combined over its sentences
        (``any``), are ``present``."""
        columns = zip(self.gold, present[: len(self.gold)], strict=True)
        missing = [name for (name, _), there in columns if not there]
        if missing and not self.said_missing:
            self.said_missing = True
            log.warning(
                "THIS MODEL NEEDS GOLD TAGS: it reads %s but the input leaves %s empty, "
                "so its trees will be mostly wrong (English-EWT: LAS 91 with gold tags, "
                "10 without). Parse untagged text with a model trained with "
                "model=default, which tags it itself",
                "/".join(missing),
                "these columns" if len(missing) > 1 else "this column",
            )
        if present[-1] and self.clears_graphs and not self.said_graphs:
            self.said_graphs = True
            log.warning(
                "%s: the input has enhanced graphs (DEPS other than '_', or empty nodes), "
                "which describe its own trees, not the predicted ones: the output writes DEPS "
                "'_' and leaves the empty nodes out (deps=keep keeps them as they are)",
                source or "input",
            )

    def check(self, sentences: Sequence[Sentence]) -> None:
        """:meth:`on_chunk` for the chunk ``sentences`` of this process."""
        if sentences:
            self.on_chunk(self.flags(sentences).any(0), sentences[0].source)


class Progress:
    """Counts the sentences and words parsed into a :class:`PredictionReport`, with a progress
    bar on standard error (shown when ``shown``); :meth:`close` adds the time taken."""

    def __init__(self, report: PredictionReport, *, shown: bool) -> None:
        self.report = report
        self.bar = tqdm(
            desc="parsing", unit="sent", disable=not shown, file=sys.stderr, dynamic_ncols=True
        )
        self.start = time.perf_counter()

    def __call__(self, count: int, words: int) -> None:
        """``count`` more sentences of ``words`` words parsed."""
        report = self.report
        report.sentences += count
        report.words += words
        self.bar.update(count)
        speed = report.words / max(time.perf_counter() - self.start, 1e-9)
        self.bar.set_postfix(words_s=f"{speed:.0f}")

    def close(self) -> None:
        self.report.seconds += time.perf_counter() - self.start
        self.bar.close()


def predict_stream(
    parser: LoadedParser,
    sentences: Iterable[Sentence],
    options: PredictOptions,
    *,
    device: torch.device,
    progress: bool = False,
    report: PredictionReport | None = None,
    graphs: GraphCache | None = None,
) -> Iterator[Sentence]:
    """Parse a stream of sentences chunk by chunk, yielding them in input order; every chunk
    replays the CUDA graphs of ``graphs`` (one of the stream's own when None)."""
    report = report if report is not None else PredictionReport()
    graphs = graphs if graphs is not None else GraphCache()
    advance = Progress(report, shown=progress)
    notices = InputNotices(parser, options)
    try:
        for chunk in chunks(sentences, options.chunk_sizes(device)):
            notices.check(chunk)
            yield from parse_sentences(
                parser, chunk, options, device=device, on_batch=advance, graphs=graphs
            )
            del chunk  # before the next chunk is read (see chunks)
    finally:
        advance.close()
