"""The auxiliary arc scorer (model.arc_loss_weight): its loss, its gold columns, a model
trained with it that saves, loads and parses like any other, and decoding's arc term
(model.arc_decoding_weight)."""

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
from neuralparse.model.scorer import TokenTable
from neuralparse.model.vocab import Vocabularies, vocabularies_for
from neuralparse.runtime.checkpoint import checkpoint_data, load_parser, save_checkpoint
from neuralparse.search import greedy_decode, greedy_parse_corpus
from neuralparse.search.arc_term import with_arc_term
from neuralparse.search.beam import beam_decode
from neuralparse.search.graphs import GraphedSearch
from neuralparse.systems import SYSTEMS, get_system
from neuralparse.training.losses import arc_loss
from neuralparse.training.trainer import CHECKPOINT_NAME, loss_on_batch, prepare, train
from neuralparse.trees.core import check_tree
from tests.parser_fixtures import LABELS, make_corpus
from tests.test_greedy import TINY, _setup
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


def test_a_decoding_weight_needs_the_arc_scorer() -> None:
    with pytest.raises(InputError, match="arc_loss_weight"):
        ModelConfig(arc_decoding_weight=0.5)
    with pytest.raises(InputError, match="arc_decoding_weight"):
        ModelConfig(arc_loss_weight=1.0, arc_decoding_weight=-0.5)


def test_the_arc_term_of_an_arc_eager_configuration_worked_by_hand() -> None:
    """Stack top word 1, buffer front word 2 (features s0 s1 s2 b0 = 1 0 - 2).  The arc
    scorer: P(head of 1 is 2) = 0.3, P(head of 2 is 1) = 0.6.  LEFT-ARC builds 2 -> 1, RIGHT-ARC
    1 -> 2, SHIFT neither: 1 - 0.3 - 0.6 = 0.1; REDUCE is illegal."""
    system = get_system("arc_eager")
    shift, reduce, left, right = (
        system.encode(t) for t in ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC")
    )
    heads_of = torch.tensor([[[0.5, 0.2, 0.3], [0.3, 0.6, 0.1]]]).log()  # [1, words, heads]
    table = TokenTable(torch.zeros(4, 4, 1), 3, heads_of)
    features = torch.tensor([[1, 0, -1, 2]])
    scores = torch.zeros(1, 4)
    scores[0, shift], scores[0, reduce], scores[0, left], scores[0, right] = 1.0, 5.0, 0.0, 0.5
    legal = torch.ones(1, 4, dtype=torch.bool)
    legal[0, reduce] = False
    weight = 0.5
    got = with_arc_term(system, table, torch.tensor([0]), features, scores, legal, weight)[0]
    assert got[shift].item() == pytest.approx(1.0 + weight * math.log(0.1))
    assert got[left].item() == pytest.approx(0.0 + weight * math.log(0.3))
    assert got[right].item() == pytest.approx(0.5 + weight * math.log(0.6))
    # Where RIGHT-ARC is not offered, its arc's probability does not count against SHIFT.
    legal[0, right] = False
    got = with_arc_term(system, table, torch.tensor([0]), features, scores, legal, weight)[0]
    assert got[shift].item() == pytest.approx(1.0 + weight * math.log(0.7))
    assert got[left].item() == pytest.approx(0.0 + weight * math.log(0.3))


def _untrained_with_arcs(system_name: str, count: int, seed: int):
    """The opinionated untrained parser of the greedy tests, with the arc scorer and a
    non-zero bilinear term (it starts at zero)."""
    config = dataclasses.replace(TINY, arc_loss_weight=1.0, arc_decoding_weight=1.0)
    _, encoded, system, model = _setup(system_name, count, seed, config)
    model.arc_term = True  # the term on every system, also where it is off by default
    with torch.no_grad():
        model.arcs.bilinear.normal_(0.0, 1.0)
    return encoded, system, model


@pytest.mark.parametrize("system_name", sorted(SYSTEMS))
def test_the_arc_term_decodes_trees_of_the_system_eagerly_and_from_padded_batches(
    system_name: str,
) -> None:
    """Greedy decoding and beam search with the arc term give trees of the system, the
    padded loops that CUDA graphs record (run eagerly on the CPU) the same trees, and on
    arc-eager the term changes some of the untrained parser's trees."""
    encoded, system, model = _untrained_with_arcs(system_name, count=20, seed=7)
    batch = encoded.batch(torch.arange(20))
    with torch.inference_mode():
        assert model.encode(batch).arc_log_probs is not None
    heads, labels = greedy_decode(model, system, batch)
    for row, n in enumerate(batch.lengths.tolist()):
        tree = heads[row, 1 : n + 1].tolist()
        check_tree(tree, single_root=True)
        if system.derivations_in_class:
            assert system.in_class(tree)
    got = GraphedSearch(model, system)(batch)
    assert torch.equal(got[0], heads) and torch.equal(got[1], labels)
    beam = beam_decode(model, system, batch, 3, compact=False)
    padded = GraphedSearch(model, system, 3)(batch)
    assert all(torch.equal(g, e) for g, e in zip(padded[:2], beam[:2], strict=True))
    if system_name == "arc_eager":
        model.config = dataclasses.replace(model.config, arc_decoding_weight=0.0)
        with torch.inference_mode():
            assert model.encode(batch).arc_log_probs is None
        assert not torch.equal(greedy_decode(model, system, batch)[0], heads)


def test_the_arc_weight_is_chosen_when_decoding() -> None:
    """``encode(batch, arc_weight)`` overrides the model's weight (0 leaves the arc scorer
    out, as a model whose weight is 0); one graphed search keeps its graphs per weight, each
    giving the eager trees of its weight."""
    encoded, system, model = _untrained_with_arcs("arc_eager", count=20, seed=7)
    batch = encoded.batch(torch.arange(20))
    search = GraphedSearch(model, system)
    trees: dict[float, torch.Tensor] = {}
    with torch.inference_mode():
        for weight in (None, 0.0, 0.4, None, 0.0):
            table = model.encode(batch, weight)
            effective = 1.0 if weight is None else weight
            assert (table.arc_log_probs is None) == (effective == 0)
            assert table.arc_weight == effective
            expected = greedy_decode(model, system, batch, table)
            got = search(batch, table)
            assert all(torch.equal(g, e) for g, e in zip(got, expected, strict=True))
            assert torch.equal(trees.setdefault(effective, expected[0]), expected[0])
    assert len(search.graphs) == 3
    assert not torch.equal(trees[0.0], trees[1.0])
    model.config = dataclasses.replace(model.config, arc_decoding_weight=0.0)
    assert torch.equal(greedy_decode(model, system, batch)[0], trees[0.0])


@pytest.mark.parametrize("system_name", sorted(SYSTEMS))
def test_the_arc_term_is_off_by_default_where_shift_defers_the_offered_arcs(
    tmp_path: Path, system_name: str
) -> None:
    """A model decodes with its ``arc_decoding_weight`` unless its system's arcs join two
    stack words (arc-standard, arc-hybrid, swap): there the default weight is 0, built and
    loaded alike, and an explicit weight still wins."""
    system = get_system(system_name, ["root", *LABELS])
    corpus = make_corpus(4, seed=1)
    vocabs = vocabularies_for(corpus, ModelConfig(arc_loss_weight=1.0))
    config = dataclasses.replace(TINY, arc_loss_weight=1.0, arc_decoding_weight=0.5)
    model = ParserModel.for_system(vocabs, config, system).eval()
    expected = 0.0 if system_name in ("arc_standard", "arc_hybrid", "swap") else 0.5
    assert model.default_arc_weight == expected
    batch = EncodedCorpus.build(corpus, vocabs).batch(torch.arange(4))
    with torch.inference_mode():
        assert model.encode(batch).arc_weight == expected
        assert model.encode(batch, 0.25).arc_weight == 0.25
    path = tmp_path / "model.pt"
    data = checkpoint_data(model=model, system=system, system_options={}, vocabs=vocabs, config={})
    save_checkpoint(path, data)
    assert load_parser(path).model.default_arc_weight == expected


def test_growing_the_graph_inputs_keeps_the_graphs_recorded_before() -> None:
    """A wider batch grows the shared inputs (the arc term's square in the width); the
    narrower batch's graph stays, and replays its trees, rather than being recorded again."""
    encoded, system, model = _untrained_with_arcs("arc_eager", count=20, seed=7)
    by_length = encoded.lengths.argsort()
    narrow, wide = encoded.batch(by_length[:6]), encoded.batch(by_length[-6:])
    search = GraphedSearch(model, system)
    first = search(narrow)
    recorded = dict(search.graphs)
    search(wide)
    assert len(search.graphs) == 2
    assert all(search.graphs[key] is entry for key, entry in recorded.items())
    again = search(narrow)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert torch.equal(again[0], greedy_decode(model, system, narrow)[0])
