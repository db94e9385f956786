"""Batch prediction: stream sentences through a trained parser with bounded memory.

The input is read ``chunk_size`` sentences at a time (on CUDA the first chunks are smaller,
so that the first output comes early: ``first_chunk_size``).  Each chunk is encoded once
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
the words whose column is ``_`` (all of them for plain text; FEATS only in a sentence whose
FEATS are all ``_``, since elsewhere a FEATS ``_`` says the word has none) and keeps given
tags, ``predict`` overwrites every word's tags, ``keep`` changes no tag.  The parser itself
never reads the input's tags (unless it is a gold-tag model), so ``tags`` changes no tree.
DEPS (the enhanced graph) is written as ``_``, and empty nodes are left out, unless
``deps="keep"``:
the input's enhanced graph belongs to the input's tree, not to the predicted one.

Under ``torchrun --nproc_per_node=N`` every rank reads the same input; rank ``r`` parses the
sentences ``r, r + N, ...`` of each chunk, rank 0 gathers the parsed chunk and writes it in
input order (:func:`predict_file`).

With ``workers`` (by default on CUDA, :func:`worker_count`) an input file is read, encoded and
written by worker processes while this process decodes
(:mod:`~neuralparse.prediction.pipeline`), with the same chunks and batches, so the output is
the same bytes; only the Python work of the host moves (the GIL keeps threads from sharing
it).

The modules: :mod:`~neuralparse.prediction.options` (what a run is asked and what it reports),
:mod:`~neuralparse.prediction.decoding` (chunks, batches, decoding, trees and tags into the
sentences), :mod:`~neuralparse.prediction.files` (opening the input and the output) and
:mod:`~neuralparse.prediction.runner` (:func:`predict_file`: one process, workers or ranks).
"""

from neuralparse.prediction.decoding import (
    Annotator,
    batches_by_length,
    check_words,
    chunks,
    decode,
    decode_chunk,
    gold_tag_inputs,
    max_word_chars,
    parse_sentences,
    predict_stream,
    tag_vocabularies,
)
from neuralparse.prediction.files import (
    FORMAT_NAMES,
    INPUT_FORMATS,
    STDIO,
    open_output,
    open_sentences,
    warn_if_untokenized,
)
from neuralparse.prediction.options import (
    DEPS_MODES,
    TAG_MODES,
    PredictionReport,
    PredictOptions,
)
from neuralparse.prediction.runner import (
    AUTO_BYTES_PER_WORKER,
    AUTO_WORKERS_MAX,
    conllu_text,
    predict_file,
    worker_count,
)

__all__ = [
    "AUTO_BYTES_PER_WORKER",
    "AUTO_WORKERS_MAX",
    "DEPS_MODES",
    "FORMAT_NAMES",
    "INPUT_FORMATS",
    "STDIO",
    "TAG_MODES",
    "Annotator",
    "PredictOptions",
    "PredictionReport",
    "batches_by_length",
    "check_words",
    "chunks",
    "conllu_text",
    "decode",
    "decode_chunk",
    "gold_tag_inputs",
    "max_word_chars",
    "open_output",
    "open_sentences",
    "parse_sentences",
    "predict_file",
    "predict_stream",
    "tag_vocabularies",
    "warn_if_untokenized",
    "worker_count",
]
