"""Everything a training run needs before its first step, with every input checked first.

:func:`prepare` does everything that can fail on bad input first (system name, model and
search configuration, data files, reading, label inventory), then transforms the training
trees into the system's class (:mod:`~neuralparse.training.transforms`), builds the
vocabularies, extracts the oracle configurations once
(:mod:`~neuralparse.training.examples`) and encodes both splits.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig

from neuralparse.config import (
    DEFAULT_DEV_HOLDOUT,
    DataConfig,
    ModelConfig,
    SearchConfig,
    TrainConfig,
    TrainerConfig,
    resolve_data_files,
    resolve_split_files,
)
from neuralparse.datasets import DatasetError
from neuralparse.errors import InputError
from neuralparse.io import Sentence, read_conllu
from neuralparse.io.multiword import MultiwordLexicon
from neuralparse.io.raw import Segmentation
from neuralparse.io.sentence_splitter import SentenceSplitter
from neuralparse.model.contextual import ContextualEncoder
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.model.vectors import check_vectors_source
from neuralparse.model.vocab import Vocabularies, vocabularies_for
from neuralparse.search import SEARCHES
from neuralparse.systems import SYSTEMS, TransitionSystem, get_system
from neuralparse.training.examples import OracleExamples, extract_oracle_examples
from neuralparse.training.transforms import TransformReport, prepare_trees

log = logging.getLogger("neuralparse.train")


@dataclass
class Prepared:
    """Data, system, vocabularies and oracle examples of a run."""

    system: TransitionSystem
    system_options: dict[str, Any]
    vocabs: Vocabularies
    train_sentences: list[Sentence]
    dev_sentences: list[Sentence]
    train_corpus: EncodedCorpus
    dev_corpus: EncodedCorpus
    examples: OracleExamples
    train_trees: list[tuple[list[int], list[str]]]
    """The training trees as the system learns them (in its class: lifted or encoded)."""
    transform_report: TransformReport
    not_reproduced: int
    unseen_dev_labels: Counter[str] = field(default_factory=Counter)
    segmentation: Segmentation = field(default_factory=Segmentation)
    """What the training treebank says of segmenting raw text (its multiword tokens, where it
    ends sentences), used at prediction."""


def check_system_name(name: str) -> None:
    if name not in SYSTEMS:
        raise InputError(f"unknown transition system {name!r}; available: {sorted(SYSTEMS)}")


def build_system(name: str, labels: Sequence[str], options: dict[str, Any]) -> TransitionSystem:
    """``get_system`` with bad options reported as an input error naming them."""
    check_system_name(name)
    try:
        return get_system(name, labels, **options)
    except (TypeError, ValueError) as error:
        raise InputError(f"system={name} with options {options}: {error}") from None


def read_split(files: Sequence[Path], split: str, limit: int | None) -> list[Sentence]:
    """Read a split, its files one after the other (a split released in parts), keeping the
    first ``limit`` sentences; an empty result is an error."""
    sentences: list[Sentence] = []
    for path in files:
        if limit is not None and len(sentences) >= limit:
            break
        sentences.extend(read_conllu(path))
    if limit is not None:
        sentences = sentences[:limit]
    if not sentences:
        raise InputError(f"{split} treebank {_names(files)} has no sentences")
    missing = next((s for s in sentences if s.heads is None), None)
    if missing is not None:
        raise InputError(
            f"{split} sentences need gold trees (HEAD is '_')",
            source=missing.source,
            line=missing.line,
            sent_id=missing.sent_id,
        )
    return sentences


def hold_out_dev(sentences: list[Sentence], every: int) -> tuple[list[Sentence], list[Sentence]]:
    """``(train, dev)``: every ``every``-th sentence held out as dev, so that dev spreads over
    the whole treebank as the training text does; deterministic, so that a resumed run holds
    out the same sentences."""
    return [s for i, s in enumerate(sentences, 1) if i % every], sentences[every - 1 :: every]


def read_train_and_dev(data: DataConfig | DictConfig) -> tuple[list[Sentence], list[Sentence]]:
    """The training and dev sentences: the dev file, or ``data.dev_holdout`` of the training
    sentences where that is given or where there is no dev file (:data:`DEFAULT_DEV_HOLDOUT`);
    ``data`` passed :meth:`DataConfig.check`."""
    fraction = data.dev_holdout
    train_files = resolve_split_files(data, ("train",))["train"]
    dev_file = None
    if fraction is None:
        try:
            dev_file = resolve_data_files(data, ("dev",), optional=("dev",)).get("dev")
        except DatasetError as error:
            raise DatasetError(
                f"{error} Or, for a treebank released without a dev split, "
                f"data.dev_holdout={DEFAULT_DEV_HOLDOUT} holds out training sentences as dev."
            ) from None
    train = read_split(train_files, "train", data.max_train_sentences)
    if dev_file is not None:
        dev = read_split((dev_file,), "dev", data.max_dev_sentences)
        dev_source = str(dev_file)
    else:
        if len(train) < 2:
            raise InputError(
                "no dev file, and a dev split cannot be held out of a single training "
                "sentence: give one (data.dev=PATH)",
                source=_names(train_files),
            )
        every = max(2, min(round(1 / (fraction or DEFAULT_DEV_HOLDOUT)), len(train)))
        train, dev = hold_out_dev(train, every)
        dev = dev[: data.max_dev_sentences]
        dev_source = f"1 training sentence in {every}, held out"
        if fraction is None:
            log.warning(
                "no dev file for %s: %d training sentences (1 in %d) are held out as dev for "
                "early stopping and not trained on (data.dev=PATH gives a dev file, "
                "data.dev_holdout=FRACTION another share)",
                data.treebank or _names(train_files),
                len(dev),
                every,
            )
    log.info(
        "train: %d sentences, %d words (%s); dev: %d sentences (%s)",
        len(train),
        sum(map(len, train)),
        _names(train_files),
        len(dev),
        dev_source,
    )
    return train, dev


RICH_MORPHOLOGY_STRINGS_PER_1000_WORDS = 10.0
"""Distinct FEATS strings per 1,000 training words from which a run of the default FEATS head
suggests ``model=rich_morphology``: on Gothic-PROIEL, Hungarian-Szeged and Turkish-IMST (14-23)
it raised test LAS by 0.9-1.1 over three seeds each, on Greek-GDT (6.8) not at all; English-EWT
has 1.1 (docs/results.md, "A larger FEATS and character model on the small treebanks")."""


def feats_strings_per_1000_words(sentences: Sequence[Sentence]) -> float:
    """How many distinct non-empty FEATS strings the sentences hold per 1,000 words: how thinly
    a FEATS head that gives each string its own class spreads its training words."""
    words = sum(len(sentence.feats) for sentence in sentences)
    strings = {feats for sentence in sentences for feats in sentence.feats if feats != "_"}
    return 1000 * len(strings) / words if words else 0.0


def rich_morphology_hint(sentences: Sequence[Sentence], model: ModelConfig) -> str | None:
    """A line for the log where the training set has many FEATS strings per word and the model
    predicts them with the default head; None otherwise."""
    if model.tag_input == "gold" or model.feats_loss_weight == 0 or model.feats_head == "pairs":
        return None
    rate = feats_strings_per_1000_words(sentences)
    if rate < RICH_MORPHOLOGY_STRINGS_PER_1000_WORDS:
        return None
    return (
        f"the training set has {rate:.1f} distinct FEATS strings per 1,000 words: on treebanks "
        "with 14-23, model=rich_morphology (weights shared through the strings' Attribute=Value "
        "pairs, a character BiLSTM twice as wide) parsed about 1 LAS better than this model "
        "(README, Training)"
    )


def _names(files: Sequence[Path]) -> str:
    return " + ".join(map(str, files))


def prepare(cfg: TrainConfig | DictConfig, device: torch.device | None = None) -> Prepared:
    """Validate the configuration and data, then build everything training needs (the oracle
    runs on ``device``, default the CPU)."""
    options = dict(cfg.system.options)
    # A bad system name, option or oracle fails here, before any data is read.
    unlabeled = build_system(cfg.system.name, (), options)
    if cfg.trainer.oracle == "dynamic" and not unlabeled.has_dynamic_oracle:
        with_oracle = sorted(name for name, cls in SYSTEMS.items() if cls.has_dynamic_oracle)
        raise InputError(
            f"trainer.oracle=dynamic: {cfg.system.name} has no dynamic oracle; systems with "
            f"one: {', '.join(with_oracle)}"
        )
    model_settings = ModelConfig.coerce(cfg.model)  # so does a bad model configuration
    if cfg.search.name not in SEARCHES:
        raise InputError(f"unknown search {cfg.search.name!r}; available: {list(SEARCHES)}")
    SearchConfig.check(cfg.search)
    TrainerConfig.check(cfg.trainer)
    DataConfig.check(cfg.data)
    model_cfg = cfg.model
    # A missing contextual encoder or vectors file also fails before the data is read.
    contextual = (
        ContextualEncoder(model_cfg.contextual, layers=model_cfg.contextual_layers)
        if model_cfg.contextual
        else None
    )
    if contextual is not None and device is not None:
        contextual.to(device)
    if model_cfg.pretrained_vectors:
        check_vectors_source(model_cfg.pretrained_vectors)
    train_sentences, dev_sentences = read_train_and_dev(cfg.data)
    trees, report = prepare_trees(unlabeled, [(s.heads, s.deprels) for s in train_sentences])
    log.info("%s: %s", cfg.system.name, report.summary())
    labels = sorted({label for _, deprels in trees for label in deprels})
    system = build_system(cfg.system.name, labels, options)
    known = set(labels)
    unseen = Counter(d for s in dev_sentences for d in s.deprels if d not in known)
    if unseen:
        log.warning(
            "%d dev words have %d labels unseen in training (%s); the parser cannot predict "
            "them, so they count as labeled errors",
            sum(unseen.values()),
            len(unseen),
            ", ".join(f"{k}={v}" for k, v in unseen.most_common(10)),
        )
    vocabs = vocabularies_for(train_sentences, model_cfg, contextual and contextual.spec)
    if hint := rich_morphology_hint(train_sentences, model_settings):
        log.info(hint)
    segmentation = learn_segmentation(train_sentences)
    start = time.perf_counter()
    examples, reproduced = extract_oracle_examples(
        system, trees, chunk_size=cfg.trainer.oracle_batch_size, device=device or "cpu"
    )
    failed = reproduced.count(False)
    log.info(
        "oracle: %d configurations from %d trees in %.1fs%s",
        examples.n_configurations,
        len(trees) - failed,
        time.perf_counter() - start,
        f"; {failed} trees not reproduced by the oracle were left out" if failed else "",
    )
    if failed == len(trees):
        raise InputError(f"the {system.name} oracle reproduces none of the training trees")
    max_chars = model_cfg.max_word_chars
    return Prepared(
        system=system,
        system_options=options,
        vocabs=vocabs,
        train_sentences=train_sentences,
        dev_sentences=dev_sentences,
        train_corpus=EncodedCorpus.build(
            train_sentences, vocabs, max_chars, contextual, gold_arcs=True
        ),
        dev_corpus=EncodedCorpus.build(dev_sentences, vocabs, max_chars, contextual),
        examples=examples,
        train_trees=trees,
        transform_report=report,
        not_reproduced=failed,
        unseen_dev_labels=unseen,
        segmentation=segmentation,
    )


def learn_segmentation(sentences: Sequence[Sentence]) -> Segmentation:
    """Where the training set ends sentences and which forms it writes as multiword tokens,
    for segmenting raw text at prediction (logged)."""
    start = time.perf_counter()
    splitter = SentenceSplitter.train(sentences)
    multiwords = MultiwordLexicon.from_sentences(sentences)
    log.info(
        "raw text: sentence splitter learned (%d weights) and %d forms that the training set "
        "writes as multiword tokens, in %.1fs",
        len(splitter.weights),
        len(multiwords),
        time.perf_counter() - start,
    )
    return Segmentation(multiwords, splitter)
