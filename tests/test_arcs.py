"""The auxiliary arc scorer (model.arc_loss_weight): its loss, its gold columns, and a model
trained with it that saves, loads and parses like any other."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
import torch

from neuralparse.config import ModelConfig
from neuralparse.errors import InputError
from neuralparse.model import ParserModel
from neuralparse.model.arcs import ArcScores
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.vocab import Vocabularies, vocabularies_for
from neuralparse.runtime.checkpoint import load_parser
from neuralparse.search import greedy_parse_corpus
from neuralparse.training.losses import arc_loss
from neuralparse.training.trainer import CHECKPOINT_NAME, loss_on_batch, prepare, train
from tests.parser_fixtures import make_corpus
from tests.test_training import tiny_config

CPU = torch.device("cpu")


def test_arc_loss_of_uniform_scores_counts_only_each_sentence_s_own_words() -> None:
    """All scores zero: each word's head is uniform over the root and its sentence's words
    (3 candidates in a 2-word sentence, 2 in a 1-word one, never the padding) and its relation
    uniform over the R relation scores."""
    relations = 5
    batch = ModelInput(
        lengths=torch.tensor([2, 1]),
        words=torch.tensor([[2, 3], [2, 0]]),
        form_ids=None,
        chars=None,
        upos=None,
        xpos=None,
        feats=None,
        heads=torch.tensor([[2, 0], [0, 0]]),
        relations=torch.tensor([[2, 3], [4, 0]]),  # 0 = padding
    )
    scores = ArcScores(torch.zeros(2, 2, 3), torch.zeros(2, 2, relations))
    expected = (2 * math.log(3) + math.log(2)) / 3 + math.log(relations)
    assert arc_loss(scores, batch).item() == pytest.approx(expected)
    # A large score on a padding position changes nothing: it is not a candidate head.
    padded = scores.arcs.clone()
    padded[1, 0, 2] = 50.0
    assert arc_loss(ArcScores(padded, scores.relations), batch).item() == pytest.approx(expected)


def test_gold_arcs_are_batched_with_the_sentences() -> None:
    sentences = make_corpus(6, seed=2)
    config = dataclasses.replace(ModelConfig(), arc_loss_weight=1.0, min_word_count=1)
    vocabs = vocabularies_for(sentences, config)
    assert vocabs.relations is not None
    encoded = EncodedCorpus.build(sentences, vocabs, gold_arcs=True)
    batch = encoded.batch(torch.tensor([3, 0]))
    for row, i in enumerate([3, 0]):
        n = len(sentences[i])
        assert batch.heads[row, :n].tolist() == sentences[i].heads
        relations = [r.split(":")[0] for r in sentences[i].deprels]
        assert batch.relations[row, :n].tolist() == vocabs.relations.encode(relations)
    # Only a training corpus keeps them; a model without the scorer has no relations.
    assert EncodedCorpus.build(sentences, vocabs).heads is None
    plain = vocabularies_for(sentences, ModelConfig())
    assert plain.relations is None and "relations" not in plain.to_dict()
    assert Vocabularies.from_dict(vocabs.to_dict()).relations == vocabs.relations


def test_a_negative_arc_loss_weight_is_refused() -> None:
    with pytest.raises(InputError, match="arc_loss_weight"):
        ModelConfig(arc_loss_weight=-1.0)


@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_the_arc_loss_trains_and_the_model_parses_after_loading(
    tmp_path: Path, oracle: str
) -> None:
    """The dynamic oracle explores from the second epoch on, with the arc loss beside it."""
    cfg = tiny_config(tmp_path, make_corpus(12, seed=4), max_epochs=2, patience=10, oracle=oracle)
    cfg.model.arc_loss_weight = 1.0
    data = prepare(cfg)
    torch.manual_seed(0)
    model = ParserModel.for_system(data.vocabs, cfg.model, data.system)
    assert model.arcs is not None
    ids = data.examples.usable()
    with_arcs, _ = loss_on_batch(model, data.train_corpus, data.examples, ids, CPU)
    model.arcs = None  # the same model without the auxiliary loss
    without, _ = loss_on_batch(model, data.train_corpus, data.examples, ids, CPU)
    assert with_arcs.item() > without.item() + 1.0  # two cross-entropies of untrained scores

    train(cfg, tmp_path / "run")
    loaded = load_parser(tmp_path / "run" / CHECKPOINT_NAME)
    assert loaded.model.arcs is not None and loaded.vocabs.relations is not None
    # Parsing reads the transition scorer alone: dropping the arc scorer changes no tree.
    before = greedy_parse_corpus(loaded.model, loaded.system, data.dev_corpus)
    loaded.model.arcs = None
    assert greedy_parse_corpus(loaded.model, loaded.system, data.dev_corpus) == before
