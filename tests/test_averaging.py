"""The moving average of the weights (neuralparse.training.averaging): its update rule worked
by hand, the swap in and out of the model, and saving and loading it."""

from __future__ import annotations

import pytest
import torch

from neuralparse.training.averaging import WeightAverage


def linear(value: float) -> torch.nn.Linear:
    layer = torch.nn.Linear(2, 1)
    set_to(layer, value)
    return layer


def set_to(layer: torch.nn.Module, value: float) -> None:
    with torch.no_grad():
        for p in layer.parameters():
            p.fill_(value)


def values(weights) -> list[float]:
    return sorted({float(x) for w in weights for x in w.detach().flatten()})


def test_the_average_follows_the_warm_up_then_the_horizon() -> None:
    layer = linear(0.0)
    average = WeightAverage(layer, epochs=1.0)
    set_to(layer, 10.0)
    # First update: keep (1 + 0) / (10 + 0) = 0.1 of the old average.
    average.update(layer, steps_per_epoch=1000)
    assert values(average.weights) == pytest.approx([9.0])
    # Second: keep 2 / 11.
    average.update(layer, steps_per_epoch=1000)
    assert values(average.weights) == pytest.approx([9.0 * 2 / 11 + 10.0 * 9 / 11])
    # Two updates an epoch: a horizon of two updates, keep 1 - 1/2 once the warm-up's
    # (1 + t) / (10 + t) is above it.
    set_to(layer, 0.0)
    for _ in range(20):
        average.update(layer, steps_per_epoch=2)
    assert average.decay(steps_per_epoch=2) == 0.5
    assert average.updates == 22


def test_the_horizon_scales_with_the_epochs_asked_for() -> None:
    average = WeightAverage(linear(0.0), epochs=4.0)
    average.updates = 10_000
    assert average.decay(steps_per_epoch=50) == pytest.approx(1 - 1 / 200)
    with pytest.raises(ValueError):
        WeightAverage(linear(0.0), epochs=0.0)


def test_applied_swaps_the_average_in_and_the_raw_weights_back() -> None:
    layer = linear(2.0)
    average = WeightAverage(layer, epochs=1.0)
    set_to(layer, 5.0)
    storage = [p.data_ptr() for p in layer.parameters()]
    with average.applied(layer):
        assert values(layer.parameters()) == [2.0]
        assert [p.data_ptr() for p in layer.parameters()] == storage
    assert values(layer.parameters()) == [5.0]
    with pytest.raises(RuntimeError, match="evaluation failed"), average.applied(layer):
        raise RuntimeError("evaluation failed")
    assert values(layer.parameters()) == [5.0]
    # Gradients still flow outside: the swap leaves autograd alone.
    layer(torch.ones(1, 2)).sum().backward()
    assert layer.weight.grad is not None


def test_a_saved_average_loads_into_the_same_model_only() -> None:
    layer = linear(1.0)
    average = WeightAverage(layer, epochs=1.0)
    set_to(layer, 3.0)
    average.update(layer, steps_per_epoch=10)
    saved = average.state_dict()
    again = WeightAverage(linear(7.0), epochs=1.0)
    again.load_state_dict(saved)
    assert values(again.weights) == values(average.weights) and again.updates == 1
    with pytest.raises(ValueError, match="does not fit"):
        WeightAverage(torch.nn.Linear(3, 1), epochs=1.0).load_state_dict(saved)
