"""Training with the dynamic oracle and error exploration (neuralparse.training.exploration)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from neuralparse.errors import InputError
from neuralparse.model import ParserModel
from neuralparse.systems import SYSTEMS
from neuralparse.training.exploration import Explorer, explore
from neuralparse.training.trainer import loss_on_batch, prepare, train
from tests.parser_fixtures import make_corpus
from tests.test_training import tiny_config

CPU = torch.device("cpu")


def prepared_model(tmp_path: Path, count: int = 12, seed: int = 3):
    cfg = tiny_config(tmp_path, make_corpus(count, seed=seed), oracle="dynamic")
    data = prepare(cfg)
    torch.manual_seed(0)
    return cfg, data, ParserModel.for_system(data.vocabs, cfg.model, data.system)


@pytest.mark.parametrize("exploration", [0.0, 1.0])
def test_exploring_parse_records_its_configurations(tmp_path: Path, exploration: float) -> None:
    """With exploration 0 the parse takes only cheapest actions and so rebuilds every gold
    tree; with 1 it follows the untrained model away from them.  Either way every recorded
    configuration has a legal target and belongs to a sentence of the batch."""
    _, data, model = prepared_model(tmp_path)
    ids = data.examples.usable()
    batch = data.train_corpus.batch(ids)
    trees = [data.train_trees[i] for i in ids.tolist()]
    draws = torch.Generator().manual_seed(1)
    seen = explore(
        model, data.system, model.encode(batch), batch.lengths, trees, exploration, draws
    )
    assert bool((seen.targets & ~seen.legal).any()) is False
    assert bool(seen.targets.any(1).all())
    assert set(seen.position.tolist()) == set(range(len(ids)))
    rebuilt = [seen.heads[b, 1 : len(h) + 1].tolist() == list(h) for b, (h, _) in enumerate(trees)]
    if exploration == 0.0:
        assert all(rebuilt)
    else:
        assert not all(rebuilt)
    assert model.scorer.training  # the parse's scorer runs without dropout, then gets it back


def test_the_exploring_parse_reads_the_encoding_it_trains(tmp_path: Path) -> None:
    """One encoder pass per training batch, in training mode, inside the model's forward
    pass (the one data-parallel training synchronises)."""
    _, data, model = prepared_model(tmp_path)
    passes: list[bool] = []
    model.encoder.register_forward_hook(lambda module, *_: passes.append(module.training))
    explorer = Explorer(data.system, data.train_trees, 0.9, torch.Generator().manual_seed(0))
    ids = data.examples.usable()
    loss, _ = loss_on_batch(model, data.train_corpus, data.examples, ids, CPU, explorer)
    assert passes == [True]
    assert loss.requires_grad


def test_dynamic_oracle_loss_decreases(tmp_path: Path) -> None:
    _, data, model = prepared_model(tmp_path, count=20, seed=1)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    explorer = Explorer(data.system, data.train_trees, 0.9, torch.Generator().manual_seed(0))
    ids = data.examples.usable()
    losses = []
    for _ in range(40):
        loss, _ = loss_on_batch(model, data.train_corpus, data.examples, ids, CPU, explorer)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_oracle_settings_fail_before_the_data_is_read(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(3), oracle="dynamic")
    cfg.data.train = str(tmp_path / "missing.conllu")
    cfg.system.name = "swap"
    with pytest.raises(InputError, match="swap has no dynamic oracle; systems with one: arc_eager"):
        prepare(cfg)
    cfg.system.name = "arc_eager"
    cfg.trainer.oracle = "psychic"
    with pytest.raises(InputError, match=r"trainer\.oracle='psychic'"):
        prepare(cfg)
    cfg.trainer.oracle, cfg.trainer.exploration = "dynamic", 1.5
    with pytest.raises(InputError, match=r"trainer\.exploration=1\.5"):
        prepare(cfg)


@pytest.mark.parametrize(
    "system", sorted(name for name, cls in SYSTEMS.items() if cls.has_dynamic_oracle)
)
def test_every_system_with_a_dynamic_oracle_trains_with_it(tmp_path: Path, system: str) -> None:
    """Arc-eager with pseudo-projective lifting learns lifted trees with encoded labels; the
    dynamic oracle works on those as on any other."""
    sentences = make_corpus(12, seed=8, projective=False)
    cfg = tiny_config(
        tmp_path, sentences, system=system, max_epochs=2, patience=10, oracle="dynamic"
    )
    result = train(cfg, tmp_path / "run")
    assert [r["epoch"] for r in result.history] == [1, 2]
    assert all(r["loss"] > 0 for r in result.history)
