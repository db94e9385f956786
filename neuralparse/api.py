"""The notebook API: load a trained parser and parse text, files or sentences.

>>> from neuralparse import Parser
>>> parser = Parser.load("outputs/run/checkpoint.pt", device="cpu")  # doctest: +SKIP
>>> [s.heads for s in parser.parse(["The cat sat .", ["Pre", "tokenized"]])]  # doctest: +SKIP

Nothing here needs Hydra: the checkpoint carries the configuration, the vocabularies and the
transition system.  Parsing goes through the same streaming code as ``predict.py``
(:mod:`neuralparse.prediction`), so both give the same trees.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import torch

from neuralparse.errors import InputError, OptionError
from neuralparse.evaluation import evaluate, predicted_tag_scores_only
from neuralparse.io import Sentence, read_conllu
from neuralparse.io.raw import raw_sentences, resolve_language
from neuralparse.model.parser import ParserModel
from neuralparse.model.vocab import Vocabularies
from neuralparse.prediction import (
    PredictionReport,
    PredictOptions,
    predict_file,
    predict_stream,
    warn_if_untokenized,
)
from neuralparse.runtime.checkpoint import LoadedParser, load_parser
from neuralparse.runtime.devices import resolve_device
from neuralparse.runtime.memory import bound_native_heap
from neuralparse.search.graphs import GraphCache
from neuralparse.systems import TransitionSystem

SentenceLike = str | Sequence[str] | Sentence
"""A sentence to parse: whitespace-separated tokens, a list of tokens, or a Sentence (its
columns are kept; only HEAD and DEPREL change)."""


def as_sentence(item: SentenceLike, position: int) -> Sentence:
    """The :class:`Sentence` of one item of :meth:`Parser.parse` (``position`` counts from 1
    and names the item in errors)."""
    if isinstance(item, Sentence):
        return item
    tokens = item.split() if isinstance(item, str) else list(item)
    where = {"source": "<parse>", "sent_id": f"#{position}"}
    if not tokens:
        raise InputError("sentence has no words", **where)
    for token in tokens:
        # CoNLL-U allows spaces inside a FORM (UD v2) but not tabs or line breaks.
        if not isinstance(token, str) or not token.strip() or any(c in token for c in "\t\n\r"):
            raise InputError(f"token {token!r} is not a non-empty string on one line", **where)
    return Sentence.from_words(tokens, sent_id=None, source="<parse>", line=position)


def predict_options(base: PredictOptions, overrides: dict[str, Any]) -> PredictOptions:
    """``base`` with ``overrides``; an unknown option or a value of the wrong type is an
    :class:`OptionError`."""
    known = PredictOptions.__dataclass_fields__
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise OptionError(f"unknown option(s) {unknown}; the options are {sorted(known)}")
    try:
        return PredictOptions(**{**vars(base), **overrides})
    except TypeError as error:  # e.g. a string where a number belongs
        raise OptionError(f"bad option value ({error})") from None


@dataclass
class Parser:
    """A trained parser ready to use (see the module docstring).

    ``system`` is the transition system, ``labels`` the label inventory the model predicts
    (for ``arc_eager_pp`` these are the lifted labels, decoded in the output), ``config`` the
    resolved training configuration stored in the checkpoint, ``options`` the default
    decoding options (each call may override them).
    """

    loaded: LoadedParser
    device: torch.device
    options: PredictOptions
    graphs: GraphCache = field(default_factory=GraphCache, repr=False, compare=False)
    """The CUDA graphs recorded for this parser, reused by every later call."""

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], device: str | torch.device = "auto", **options: Any
    ) -> Parser:
        """Load ``checkpoint.pt`` on ``device`` (``auto``, the default as in predict.py and
        train.py: CUDA when available; or ``cpu``, ``cuda``, ``cuda:1``);
        ``options`` are :class:`~neuralparse.prediction.PredictOptions` fields (``search``,
        ``beam_size``, ``batch_size``, ``batch_tokens``, ``beam_batch_tokens``, ``chunk_size``,
        ``first_chunk_size``, ``cuda_graphs``, ``tags``, ``arc_weight``, ...).  A bad
        checkpoint, device or option raises an :class:`~neuralparse.errors.InputError` (a
        checkpoint's is a ``CheckpointError``, an option's an
        :class:`~neuralparse.errors.OptionError`)."""
        device = resolve_device(device)
        return cls(load_parser(path, device), device, predict_options(PredictOptions(), options))

    def __repr__(self) -> str:
        """What the parser is, in one line (the model's weights are not shown)."""
        data = self.config.get("data") or {}
        trained_on = data.get("treebank") or data.get("train")
        tags = "/".join(self.model.tagged_columns) or "none (reads gold tags)"
        las = self.dev_metrics.get("las")
        parts = [
            f"system={self.system.name}",
            f"labels={len(self.labels)}",
            f"predicts tags: {tags}",
            *([f"trained on {trained_on}"] if trained_on else []),
            *([f"dev LAS {las:.2f}"] if isinstance(las, float | int) else []),
            f"device={self.device}",
            f"search={self.options.search}",
        ]
        return f"Parser({', '.join(parts)})"

    @property
    def system(self) -> TransitionSystem:
        return self.loaded.system

    @property
    def labels(self) -> tuple[str, ...]:
        return self.loaded.system.labels

    @property
    def config(self) -> dict[str, Any]:
        return self.loaded.checkpoint["config"]

    @property
    def model(self) -> ParserModel:
        return self.loaded.model

    @property
    def vocabs(self) -> Vocabularies:
        return self.loaded.vocabs

    @property
    def dev_metrics(self) -> dict[str, Any]:
        """The dev scores stored with the checkpoint."""
        return dict(self.loaded.checkpoint.get("dev_metrics") or {})

    def _options(self, overrides: dict[str, Any]) -> PredictOptions:
        return predict_options(self.options, overrides) if overrides else self.options

    def parse(
        self,
        sentences: Iterable[SentenceLike] | SentenceLike,
        *,
        raw: bool = False,
        lang: str | None = None,
        multiword_tokens: bool = True,
        sentence_splitter: str = "learned",
        **options: Any,
    ) -> list[Sentence]:
        """Parsed and tagged :class:`Sentence` objects (``words``, ``heads``, ``deprels``,
        ``upos``, ``xpos``, ``feats``, ``to_conllu()``), in input order.  ``sentences`` is an
        iterable of sentences (:data:`SentenceLike`), or one string of pre-tokenized text with
        a sentence per non-blank line (``parse("The cat sat .")`` gives one sentence), or one
        :class:`Sentence`.  ``options`` override the decoding options; ``tags="auto"`` (the
        default) fills the tags a sentence leaves empty (``_``; FEATS only where the sentence
        has none) with the model's predictions,
        ``"predict"`` overwrites them, ``"keep"`` keeps them.

        ``raw=True`` takes untokenized text instead: a string, or strings each of one or more
        paragraphs (blank lines between), that spaCy's blank pipeline for ``lang`` (default:
        the model's language) tokenizes and splits into sentences, so one string may give
        several sentences (:mod:`neuralparse.io.raw`; needs ``neuralparse[text]``).  What the
        model learned of its training treebank's segmentation refines spaCy's: sentences end
        where its splitter says (``sentence_splitter="sentencizer"``: spaCy's punctuation
        rules), and a token whose form the treebank writes as a multiword token becomes one
        over its words (French ``du`` as ``de le``; ``multiword_tokens=False`` keeps it
        whole)."""
        if raw:
            texts: Iterable[Any] = [sentences] if isinstance(sentences, str) else sentences
            language = resolve_language(lang, self.config)
            segmentation = self.loaded.segmentation(multiword_tokens, sentence_splitter)
            items: Iterable[Sentence] = raw_sentences(
                texts, lang=language, segmentation=segmentation
            )
        else:
            # A string is text, not an iterable of one-letter sentences.
            if isinstance(sentences, str):
                given: list[Any] = [line for line in sentences.splitlines() if line.strip()]
            elif isinstance(sentences, Sentence):
                given = [sentences]
            else:
                given = list(sentences)
            items = [as_sentence(item, i) for i, item in enumerate(given, start=1)]
            tokens = (s.words for item, s in zip(given, items, strict=True) if item is not s)
            warn_if_untokenized("<parse>", tokens, "parse untokenized text with raw=True")
        chosen = self._options(options)
        stream = predict_stream(self.loaded, items, chosen, device=self.device, graphs=self.graphs)
        return list(stream)

    def parse_file(
        self,
        source: str | os.PathLike[str] | TextIO,
        dest: str | os.PathLike[str] | TextIO,
        *,
        input_format: str = "auto",
        lenient: bool = False,
        progress: bool = False,
        lang: str | None = None,
        multiword_tokens: bool = True,
        sentence_splitter: str = "learned",
        **options: Any,
    ) -> PredictionReport:
        """Parse a CoNLL-U, plain-text or raw-text (``input_format="raw"``, tokenized by
        spaCy's ``lang`` pipeline, segmented as in :meth:`parse`) file (or ``-``)
        into CoNLL-U, exactly as ``predict.py`` does; returns counts and timing.  Memory stays
        bounded by ``chunk_size`` on inputs of any length (the C heap is set up for it:
        :mod:`neuralparse.runtime.memory`).  ``workers=N`` reads, encodes and writes an input
        file in ``N`` processes while the model decodes (default ``"auto"``: on CUDA only;
        :mod:`neuralparse.prediction.pipeline`)."""
        bound_native_heap()
        return predict_file(
            self.loaded,
            source,
            dest,
            self._options(options),
            device=self.device,
            input_format=input_format,
            lenient=lenient,
            progress=progress,
            lang=lang,
            multiword_tokens=multiword_tokens,
            sentence_splitter=sentence_splitter,
            graphs=self.graphs,
        )

    def evaluate(
        self, gold: str | os.PathLike[str], *, untagged: bool = False, **options: Any
    ) -> dict[str, Any]:
        """Parse the words of a gold CoNLL-U file and score the result against it: the
        evaluation module's metrics (CoNLL 2018 definitions, percentages; see
        :mod:`neuralparse.evaluation`).  A tagging model's tags are its own predictions
        (UPOS, XPOS, UFeats, AllTags, MLAS); scores of columns it does not predict are
        ``None`` (a gold-tag model predicts none).
        ``untagged=True`` parses the words with UPOS/XPOS/FEATS blanked, as text that nobody
        tagged comes."""
        try:
            gold_sentences = read_conllu(Path(gold))
        except OSError as error:
            raise InputError(f"cannot read: {error.strerror}", source=str(gold)) from None
        given = [s.without_tags() for s in gold_sentences] if untagged else gold_sentences
        columns = self.model.tagged_columns
        options.setdefault("tags", "predict" if columns else "keep")
        scores = evaluate(gold_sentences, self.parse(given, **options)).to_dict()
        return predicted_tag_scores_only(scores, columns if options["tags"] == "predict" else ())
