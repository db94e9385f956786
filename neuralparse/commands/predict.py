"""Parse CoNLL-U or text with a trained parser: ``neuralparse predict`` or ``python predict.py``
(Hydra; the configuration is neuralparse/conf/predict.yaml, its schema :class:`PredictConfig`):

    python predict.py checkpoint=PATH input=IN output=OUT [search=beam search.beam_size=8]
        [device=auto|cpu|cuda] [batch_size=N] [batch_tokens=N] [beam_batch_tokens=N] [chunk_size=N]
        [first_chunk_size=N] [input_format=auto|conllu|text|raw] [lang=CODE]
        [multiword_tokens=false] [sentence_splitter=learned|sentencizer]
        [tags=auto|predict|keep] [deps=clear|keep] [lenient=true] [progress=false] [threads=N]
        [cuda_graphs=false] [workers=auto|N] [precision=float32|bfloat16] [arc_weight=W]

``-`` is standard input / output.  CoNLL-U input keeps every byte except HEAD and DEPREL and
the tags that ``tags`` lets the model write (``auto``: the empty UPOS/XPOS/FEATS cells) and
DEPS, which becomes ``_`` (with the empty nodes of the enhanced graph left out) unless
``deps=keep``;
plain text (one sentence per line, tokens separated by whitespace) becomes CoNLL-U with the
model's tags.  The input
is streamed in chunks (:mod:`neuralparse.prediction`), so memory stays bounded (with the
native allocators set up for it: :mod:`neuralparse.runtime.memory`).  On CUDA, worker
processes read, encode and write an input file while the model decodes (``workers``,
:mod:`neuralparse.prediction.pipeline`); the output is the same bytes.
``torchrun --nproc_per_node=N predict.py ...`` shards each chunk across the ranks and rank 0
writes one output in input order.  A bad configuration key, input, output, checkpoint,
device or thread count stops it with one line on stderr and exit status 2
(:mod:`neuralparse.runtime.cli`); an error, Ctrl-C or SIGTERM leaves no partial output.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import hydra
from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, DictConfig

from neuralparse.config import SearchConfig, check_known_keys
from neuralparse.runtime.cli import exit_on_sigterm, run_hydra, run_program, user_errors
from neuralparse.runtime.interrupts import interruptions_held
from neuralparse.runtime.memory import bound_native_heap, bound_primitive_cache
from neuralparse.runtime.openmp import SLEEPING, choose_waiting

# Before torch is imported (in main): resident memory bounded by the chunk size, not by the
# length of the input (neuralparse.runtime.memory).
bound_primitive_cache()
bound_native_heap()

if TYPE_CHECKING:
    from neuralparse.prediction import PredictOptions

log = logging.getLogger("neuralparse.predict")


def options_from_config(cfg: DictConfig) -> PredictOptions:
    """The decoding options of the configuration: each :class:`PredictOptions` field from the
    key of the same name, ``search`` and ``beam_size`` from ``search.name`` and
    ``search.beam_size``; a field without a key keeps its default."""
    from neuralparse.prediction import PredictOptions

    search = {"search": cfg.search.name, "beam_size": cfg.search.beam_size}
    given = {
        f.name: cfg[f.name]
        for f in fields(PredictOptions)
        if f.name in cfg and f.name not in search
    }
    return PredictOptions(**given, **search)


@dataclass
class PredictConfig:
    """Schema of neuralparse/conf/predict.yaml."""

    checkpoint: str = MISSING
    input: str = "-"
    output: str = "-"
    input_format: str = "auto"
    """auto (from the first lines), conllu, text, or raw (untokenized text that spaCy's
    rule-based tokenizer splits, refined by what the model learned of its training treebank:
    sentence_splitter, multiword_tokens; ``pip install 'neuralparse[text]'``)."""
    lang: str | None = None
    """spaCy language code for input_format=raw (default: the model's treebank's, else xx)."""
    multiword_tokens: bool = True
    """For input_format=raw: split a token whose form the model's training treebank writes as
    a multiword token into its words (French du as de le); false keeps every token one word."""
    sentence_splitter: str = "learned"
    """For input_format=raw: where sentences end. learned: where the model's training treebank
    ends them (a perceptron stored in the checkpoint; spaCy's sentencizer for checkpoints
    without one); sentencizer: spaCy's punctuation rules."""
    tags: str = "auto"
    """UPOS/XPOS/FEATS of the output: auto (fill the empty ones with the model's
    predictions), predict (overwrite all) or keep (as given)."""
    deps: str = "clear"
    """DEPS of the output: clear (``_``, empty nodes left out: the input's enhanced graph does
    not match the predicted tree) or keep."""
    lenient: bool = False
    """Skip malformed CoNLL-U sentences (counted in the final message) instead of failing."""
    device: str = "auto"
    batch_size: int = 1024
    """Sentences per batch at most."""
    batch_tokens: int = 8000
    """Words per greedy batch at most."""
    beam_batch_tokens: int = 32_000
    """Words per beam-search batch at most, counting every beam item."""
    chunk_size: int = 10_000
    """Sentences read ahead and sorted by length (memory grows with it)."""
    first_chunk_size: int | None = None
    """Sentences in the first chunk, doubling up to chunk_size (earlier first output, some
    speed lost); None: chunk_size / 16 (at least 256) on CUDA, chunk_size on the CPU."""
    arc_weight: float | None = None
    """Weight of the arc scorer's term in decoding: null (the model's, 0.75 in the default
    model) or a number >= 0; 0 decodes with the transition scores alone, faster."""
    cuda_graphs: bool = True
    """On CUDA, replay greedy decoding from CUDA graphs where the system allows it."""
    precision: str = "float32"
    """Number format of the sentence encoder: float32, or bfloat16 (the encoder about twice as
    fast on CPUs with AVX512-BF16 or AMX and on Ampere or later GPUs, so a greedy parse in
    0.75-0.9 of the time; slightly different scores)."""
    workers: Any = "auto"
    """Processes that read, encode and write an input file while the model decodes: auto (on
    CUDA, more for larger files; none on the CPU), 0 (this process alone) or a count."""
    threads: int | None = None
    """torch intra-op threads (None: torch's default)."""
    progress: bool = True
    """A progress bar with sentences/s on stderr."""
    search: SearchConfig = field(default_factory=SearchConfig)


@hydra.main(version_base="1.3", config_path="pkg://neuralparse.conf", config_name="predict")
def main(cfg: DictConfig) -> None:
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="[%(asctime)s][%(name)s] %(message)s"
    )
    exit_on_sigterm()
    if choose_waiting(str(cfg.device), threads=cfg.threads):  # before torch loads OpenMP
        log.info(SLEEPING)
    with interruptions_held():  # an import cut short half-way would fail with its own error
        import torch

        from neuralparse.prediction import predict_file
        from neuralparse.runtime.checkpoint import load_parser
        from neuralparse.runtime.devices import resolve_device, set_threads

    main_process = int(os.environ.get("RANK", "0")) == 0
    if not main_process:
        log.setLevel(logging.WARNING)
    with user_errors():
        check_known_keys(cfg, PredictConfig)
        SearchConfig.check(cfg.search)
        set_threads(cfg.threads)
        options = options_from_config(cfg)
        device = resolve_device(cfg.device)
        parser = load_parser(cfg.checkpoint, device)
        log.info(
            "%s: system %s, %d labels, %s search%s, device %s, %d threads, %s",
            cfg.checkpoint,
            parser.system.name,
            len(parser.system.labels),
            options.search,
            f" (beam {options.beam_size})" if options.search == "beam" else "",
            device,
            torch.get_num_threads(),
            options.precision,
        )
        report = predict_file(
            parser,
            cfg.input,
            cfg.output,
            options,
            device=device,
            input_format=cfg.input_format,
            lenient=cfg.lenient,
            lang=cfg.lang,
            multiword_tokens=cfg.multiword_tokens,
            sentence_splitter=cfg.sentence_splitter,
            progress=cfg.progress and main_process,
        )
    if main_process:
        log.info("%s", report.summary())


def run() -> None:
    """``neuralparse predict`` and ``python predict.py``: the Hydra application with its
    schema."""
    ConfigStore.instance().store(name="predict_schema", node=PredictConfig)
    run_hydra(main)


if __name__ == "__main__":
    run_program(run)
