"""Every in-class training tree of every shared treebank round-trips through each static
oracle on the engine, batched (B = 256) on CPU.  Skipped when the shared data is absent."""

from __future__ import annotations

import pytest

from neuralparse.io import read_conllu
from neuralparse.oracle import oracle_stats
from neuralparse.systems import get_system
from tests.conftest import shared_treebanks

CONFIGS = [
    ("arc_standard", {}),
    ("arc_eager", {}),
    ("arc_hybrid", {}),
    ("swap", {"oracle": "eager"}),
    ("swap", {"oracle": "lazy"}),
]
TREEBANKS = shared_treebanks()


@pytest.fixture(scope="module", params=[p.name for p in TREEBANKS] or ["absent"])
def training_set(request, ud_root):
    path = ud_root / request.param / "train.conllu"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return read_conllu(path)


@pytest.mark.treebank
@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}-{o}" for n, o in CONFIGS])
def test_training_trees_round_trip(training_set, name: str, options: dict) -> None:
    labels = sorted({d for s in training_set for d in s.deprels})
    system = get_system(name, labels, **options)
    stats = oracle_stats(system, training_set, batch_size=256)
    assert stats.in_class > 0
    assert stats.reproduced == stats.in_class
    if name == "swap":
        assert stats.in_class == stats.sentences  # UD trees are single-rooted
        assert 2.0 <= stats.transitions / stats.words < 2.3
    elif name == "arc_eager":
        assert stats.transitions <= 2 * stats.words
    else:
        assert stats.transitions == 2 * stats.words
