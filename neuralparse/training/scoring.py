"""Scoring a parser on a split while training: the dev evaluation of every epoch and the
best checkpoint's test score at the end.

Both parse greedily (and tag) and score with :mod:`neuralparse.evaluation`, as percentages;
``DEV_KEYS`` are the scores a metrics line keeps.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf

from neuralparse.config import TrainConfig, resolve_data_files
from neuralparse.errors import InputError
from neuralparse.evaluation import ScoreAccumulator, TagColumns, predicted_tag_scores_only
from neuralparse.io import Sentence
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.model.parser import ParserModel
from neuralparse.model.vocab import Vocabularies
from neuralparse.runtime.checkpoint import load_parser
from neuralparse.search.greedy import Decoder, parse_corpus_with_tags
from neuralparse.systems import TransitionSystem
from neuralparse.training.preparation import read_split

log = logging.getLogger("neuralparse.train")

DEV_KEYS = (
    "uas",
    "las",
    "las_full",
    "clas",
    "upos",
    "xpos",
    "ufeats",
    "alltags",
    "las_nopunct",
    "nonproj_precision",
    "nonproj_recall",
    "words",
    "sentences",
)


def evaluate_parser(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    gold: Sequence[Sentence],
    vocabs: Vocabularies,
    *,
    batch_tokens: int,
    device: torch.device,
    decode: Decoder | None = None,
) -> dict[str, Any]:
    """Greedy-parse (and tag) ``corpus`` and score it against ``gold`` (the evaluation
    module's metrics, as percentages; tag accuracies for the columns the model predicts).
    ``decode`` is the greedy decoder (default: the eager loop)."""
    parses = parse_corpus_with_tags(
        model, system, corpus, decode, batch_tokens=batch_tokens, device=device
    )
    classes = vocabs.tag_classes(model.tagged_columns)
    accumulator = ScoreAccumulator()
    for sentence, parse in zip(gold, parses, strict=True):
        heads, deprels = system.output_tree(parse.heads, [lb or "_" for lb in parse.labels])
        predicted = {
            column: [classes[column].symbols[k] for k in parse.tags[column]] for column in classes
        }
        accumulator.add(
            sentence.heads,
            sentence.deprels,
            heads,
            deprels,
            sentence.forms,
            gold_tags=TagColumns(sentence.upos, sentence.xpos, sentence.feats),
            pred_tags=TagColumns(
                predicted.get("upos", sentence.upos),
                predicted.get("xpos", sentence.xpos),
                predicted.get("feats", sentence.feats),
            ),
        )
    return predicted_tag_scores_only(accumulator.result().to_dict(), classes)


def configured_test_file(data: Any) -> Path | None:
    """The test split's file when the data config names one (None for a missing ``???``
    path or a treebank without a test file)."""
    if isinstance(data, DictConfig) and OmegaConf.is_missing(data, "test"):
        return None
    try:
        return resolve_data_files(data, ("test",))["test"]
    except InputError:
        return None


def score_test_split(
    cfg: TrainConfig | DictConfig, checkpoint: Path, metrics: Path, device: torch.device
) -> dict[str, Any] | None:
    """Score ``checkpoint`` on the configured test split (greedy) and append a ``"split":
    "test"`` line to the ``metrics`` file (None, and nothing written, without a test file)."""
    path = configured_test_file(cfg.data)
    if path is None:
        log.info("no test file configured: skipping the test evaluation")
        return None
    loaded = load_parser(checkpoint, device)
    sentences = read_split((path,), "test", None)
    corpus = EncodedCorpus.build(
        sentences, loaded.vocabs, cfg.model.max_word_chars, loaded.contextual
    )
    scores = evaluate_parser(
        loaded.model,
        loaded.system,
        corpus,
        sentences,
        loaded.vocabs,
        batch_tokens=cfg.trainer.eval_batch_tokens,
        device=device,
    )
    record = {"split": "test", "file": str(path), **{k: scores[k] for k in DEV_KEYS}}
    with metrics.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    log.info("test (%s): UAS %.2f LAS %.2f", path, scores["uas"], scores["las"])
    return record
