"""The checklist of ``docs/dev/adding-a-system.md`` followed once: the toy system of
``tests/toy_system.py`` registered in a fixture (``SYSTEMS`` monkeypatched, as the registry
line in ``neuralparse/systems/__init__.py`` would) gets every contract check of
``tests/systems/test_contract.py`` for free, and the registry builds it by name."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from neuralparse.systems import SYSTEMS, get_system, run_oracle
from tests.systems.test_contract import CHECKS
from tests.toy_system import Rightward


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(SYSTEMS, Rightward.name, Rightward)
    return Rightward.name


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_toy_system_meets_the_contract(registered: str, check: Callable[..., None]) -> None:
    check(name=registered, options={})


def test_toy_system_is_built_by_name_and_derives_its_class(registered: str) -> None:
    system = get_system(registered, ["root", "dep"])
    assert isinstance(system, Rightward)
    assert system.oracle([0, 1, 1, 3], ["root", "dep", "dep", "dep"])
    assert not system.in_class([2, 0])  # a leftward arc
    result = run_oracle(system, [([0, 1, 2], ["root", "dep", "dep"])])
    assert result.reproduced == [True]
    assert [system.decode(a)[0] for a in result.actions[0]] == ["RIGHT-ARC"] * 3


def test_unregistered_outside_the_fixture() -> None:
    assert Rightward.name not in SYSTEMS
