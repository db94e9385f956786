"""The fused tensor transitions equal their elementary compositions (Gómez-Rodríguez & Nivre
2013 §3, Examples 3, 4, 6) on random reachable configurations: same applicability, and the
same stack, buffer and arcs after each transition."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.systems import get_system
from tests.reference.elementary import (
    ARC_EAGER,
    ARC_STANDARD,
    DIVISIBLE,
    Configuration,
    compose,
    left_arc,
    right_arc,
    shift,
    unshift,
)
from tests.systems.helpers import buffer_of, stack_of

LABELS = ("a", "b")


def test_elementary_transitions_follow_section_3() -> None:
    c = Configuration((0, 1), (2, 3), frozenset())
    assert shift(c) == Configuration((0, 1, 2), (3,), frozenset())
    assert unshift(c) == Configuration((0,), (1, 2, 3), frozenset())
    with_left = left_arc(c, "a")
    assert with_left is not None and with_left.arcs == {(2, 1, "a")}
    # An arc already in A cannot be added again (footnote 4); another label can.
    assert left_arc(with_left, "a") is None
    assert left_arc(with_left, "b") is not None
    assert right_arc(c, "a").arcs == {(1, 2, "a")}
    assert shift(Configuration((0,), (), frozenset())) is None


def test_composition_is_partial() -> None:
    """A composition is undefined where any of its steps is (Definition 6)."""
    c = Configuration((0,), (1,), frozenset())
    assert compose("SHIFT", "SHIFT")(c) is None
    assert compose("SHIFT", "UNSHIFT")(c) == c
    # Arc-standard: the root arc is only legal as the very last transition.
    assert ARC_STANDARD.applicable(Configuration((0, 1), (2,), frozenset())) == {"SHIFT"}
    assert ARC_STANDARD.applicable(Configuration((0, 1), (), frozenset())) == {"RIGHT-ARC"}
    # Arc-eager never shifts the last word and never reduces the root's dependent early.
    c = Configuration((0, 1), (2,), frozenset({(0, 1, None)}))
    assert ARC_EAGER.applicable(c) == {"RIGHT-ARC"}


@pytest.mark.parametrize("name", sorted(DIVISIBLE))
@given(
    n=st.integers(min_value=1, max_value=10),
    choices=st.lists(st.integers(min_value=0, max_value=1000), min_size=40, max_size=40),
)
def test_fused_transitions_equal_compositions(name: str, n: int, choices: list[int]) -> None:
    system = get_system(name, LABELS, root_label=None)
    divisible = DIVISIBLE[name]
    state = system.initial([n])
    config = Configuration.initial(n)
    for step in range(system.max_transitions(n) + 1):
        legal_t, _ = system.transition_legal(state)
        engine = {t for t, ok in zip(system.transitions, legal_t[0].tolist(), strict=True) if ok}
        assert engine == divisible.applicable(config), (step, config)
        assert bool(system.terminal(state)[0]) == divisible.terminal(config)
        if not engine:
            break
        choice = choices[step % len(choices)] + step
        transition = sorted(engine)[choice % len(engine)]
        label = LABELS[choice % 2] if transition in system.arc_transitions else None
        system.apply(state, torch.tensor([system.encode(transition, label)]))
        config = divisible.apply(config, transition, label)
        assert config is not None
        assert stack_of(state, 0) == config.stack
        assert buffer_of(state, 0) == config.buffer
        heads, labels = system.heads_and_labels(state)
        arcs = {
            (h, d, LABELS[lab])
            for d, (h, lab) in enumerate(zip(heads[0].tolist(), labels[0].tolist(), strict=True))
            if h >= 0
        }
        assert arcs == config.arcs
    assert divisible.terminal(config)
