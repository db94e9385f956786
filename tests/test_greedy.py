"""Greedy decoding on the engine's state batch."""

from __future__ import annotations

import pytest
import torch

from neuralparse.config import ModelConfig
from neuralparse.model import EncodedCorpus, ParserModel, build_vocabularies
from neuralparse.search import greedy_decode, greedy_parse_corpus
from neuralparse.systems import get_system
from neuralparse.trees.core import check_tree
from tests.parser_fixtures import LABELS, available_systems, make_corpus

TINY = ModelConfig(
    word_dim=8, use_chars=False, upos_dim=4, use_xpos=False, feats_dim=4,
    lstm_layers=1, lstm_hidden=8, mlp_hidden=8, dropout=0.0, word_dropout=0.0,
)  # fmt: skip


def _setup(system_name: str, count: int = 12, seed: int = 5, config: ModelConfig = TINY):
    corpus = make_corpus(count, seed=seed, min_words=1, max_words=14, projective=False)
    relations = config.arc_loss_weight > 0  # the arc scorer's relation vocabulary
    vocabs = build_vocabularies(corpus, min_word_count=1, use_chars=False, relations=relations)
    system = get_system(system_name, ["root", *LABELS])
    torch.manual_seed(seed)
    model = ParserModel.for_system(vocabs, config, system).eval()
    # Random weights with a large scale make the untrained scorer opinionated and varied.
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(5)
    return corpus, EncodedCorpus.build(corpus, vocabs), system, model


@pytest.mark.parametrize("system_name", available_systems())
def test_untrained_greedy_parses_are_trees_of_the_system(system_name: str) -> None:
    corpus, encoded, system, model = _setup(system_name)
    parses = greedy_parse_corpus(model, system, encoded, batch_tokens=40)
    assert len(parses) == len(corpus)
    for sentence, (heads, labels) in zip(corpus, parses, strict=True):
        assert len(heads) == len(sentence)
        check_tree(heads)
        assert sum(h == 0 for h in heads) == 1
        assert system.in_class(heads)
        # The UD rule: the root arc and only it is labeled root.
        assert all((lab == "root") == (h == 0) for h, lab in zip(heads, labels, strict=True))


@pytest.mark.parametrize("system_name", available_systems())
def test_batching_does_not_change_parses(system_name: str) -> None:
    _, encoded, system, model = _setup(system_name, count=8, seed=11)
    together = greedy_parse_corpus(model, system, encoded, batch_tokens=10_000)
    one_by_one = greedy_parse_corpus(model, system, encoded, batch_tokens=1)
    assert together == one_by_one


def test_greedy_follows_the_highest_legal_score() -> None:
    """Replaying the decoder's choice step by step: each action is the argmax of the legal
    actions' scores."""
    _, encoded, system, model = _setup("arc_eager", count=3, seed=2)
    batch = encoded.batch(torch.arange(3))
    heads, labels = greedy_decode(model, system, batch)
    table = model.encode(batch)
    state = system.initial(batch.lengths)
    rows = torch.arange(3)
    with torch.no_grad():
        while not bool(system.terminal(state).all()):
            scores = model.score(table, rows, system.features(state))
            legal = system.legal(state)
            best = torch.where(legal, scores, -torch.inf).argmax(1)
            system.apply(state, best)
    replay_heads, replay_labels = system.heads_and_labels(state)
    assert torch.equal(replay_heads, heads) and torch.equal(replay_labels, labels)


def test_scoring_only_the_actions_of_the_steps_under_way_changes_nothing() -> None:
    """Three-step on the CPU scores only the actions of the steps some configuration is in;
    its graph variant scores them all: the same trees, and the restriction did happen."""
    _, encoded, system, model = _setup("three_step", count=40, seed=3)
    restricted: list[int] = []
    scored_actions = system.scored_actions

    def counted(state):
        scored = scored_actions(state)
        if scored is not None:
            legal = system.legal(state)
            outside = torch.ones(system.num_actions, dtype=torch.bool)
            outside[scored] = False
            assert not bool(legal[:, outside].any())  # every legal action is scored
            restricted.append(len(scored))
        return scored

    # Made before the count is patched in, which a copy of the system would carry.
    every_action = system.for_graphs()
    every_action.linear_budget = False  # decoded eagerly, to the end
    system.scored_actions = counted
    for ids in (torch.arange(40), torch.arange(5, 9)):
        batch = encoded.batch(ids)
        expected = greedy_decode(model, every_action, batch)
        got = greedy_decode(model, system, batch)
        assert all(torch.equal(g, e) for g, e in zip(got, expected, strict=True))
    assert restricted and min(restricted) < system.num_actions / 2
