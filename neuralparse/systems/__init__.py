"""Transition systems on a batched tensor state (see :mod:`neuralparse.systems.state`).

``get_system(name, labels, **options)`` builds a system by name; ``SYSTEMS`` maps the names to
their classes and is the one place a new system registers itself.  One module per small system
(``arc_standard``, ``arc_eager``, ``arc_hybrid``, ``arc_eager_pp``, ``swap``), one package per
larger one (``planar``, ``three_step``, ``two_registers``: the system, its oracle, its state
and its plain-Python ``reference``); ``base`` is the interface every system implements,
``state`` the engine state they share and ``sequences`` runs a system along whole transition
sequences (the static oracle, replay, random walks).  Adding a system:
``docs/dev/adding-a-system.md``.
"""

from __future__ import annotations

from collections.abc import Sequence

from neuralparse.systems.arc_eager import ArcEager
from neuralparse.systems.arc_eager_pp import ArcEagerPP
from neuralparse.systems.arc_hybrid import ArcHybrid
from neuralparse.systems.arc_standard import ArcStandard
from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.planar import Planar, TwoPlanar
from neuralparse.systems.sequences import (
    OracleResult,
    random_actions,
    random_walks,
    replay,
    run_oracle,
)
from neuralparse.systems.state import State
from neuralparse.systems.swap import Swap
from neuralparse.systems.three_step import ThreeStep
from neuralparse.systems.two_registers import TwoRegisters

SYSTEMS: dict[str, type[TransitionSystem]] = {
    cls.name: cls
    for cls in (
        ArcStandard,
        ArcEager,
        ArcEagerPP,
        ArcHybrid,
        Swap,
        Planar,
        TwoPlanar,
        TwoRegisters,
        ThreeStep,
    )
}


def get_system(name: str, labels: Sequence[str] = (), **options: object) -> TransitionSystem:
    """The transition system ``name`` over the label inventory ``labels``.

    Options go to the system's constructor, e.g. ``get_system("swap", labels, oracle="lazy")``
    or ``root_label=None`` to lift the UD root-label rule.
    """
    try:
        cls = SYSTEMS[name]
    except KeyError:
        raise ValueError(f"unknown transition system {name!r}; known: {sorted(SYSTEMS)}") from None
    return cls(labels, **options)  # type: ignore[arg-type]


__all__ = [
    "SYSTEMS",
    "ArcEager",
    "ArcEagerPP",
    "ArcHybrid",
    "ArcStandard",
    "Gold",
    "OracleResult",
    "Planar",
    "State",
    "Swap",
    "ThreeStep",
    "TransitionSystem",
    "TwoPlanar",
    "TwoRegisters",
    "get_system",
    "random_actions",
    "random_walks",
    "replay",
    "run_oracle",
]
