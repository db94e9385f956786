"""An exponential moving average of the model's weights, the model that training evaluates,
keeps and hands to users (``trainer.average_epochs``).

Adam at a learning rate high enough to learn fast leaves the weights wandering around the
optimum from step to step; their average over the last epoch or so lies nearer to it (Polyak
& Juditsky 1992).  The trainer updates the average after every optimizer step and swaps it
into the model for the dev evaluation, so that early stopping, the learning-rate decay and
``checkpoint.pt`` all see the averaged weights, while the optimizer goes on from the raw
ones.  ``last.pt`` keeps both: the raw weights as its model, to resume from, and the average
beside the optimizer state.

The average forgets at a rate set in epochs, not updates, so that a small treebank (twenty
updates an epoch) and a large one (two hundred) average over the same share of training:
after ``t`` updates the decay is ``min(1 - 1/H, (1 + t) / (10 + t))`` with ``H`` the
horizon in updates, the second term keeping the first updates, far from any optimum, from
weighing on the average for long.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

WARMUP = 10
"""The decay's warm-up constant: ``(1 + t) / (WARMUP + t)`` after ``t`` updates."""


class WeightAverage:
    """The moving average of ``model``'s parameters over about ``epochs`` epochs."""

    def __init__(self, model: torch.nn.Module, epochs: float) -> None:
        if epochs <= 0:
            raise ValueError(f"an average over {epochs} epochs")
        self.epochs = epochs
        self.updates = 0
        self.weights = [p.detach().clone() for p in model.parameters()]

    def decay(self, steps_per_epoch: int) -> float:
        """The weight of the old average in the next update."""
        horizon = max(self.epochs * steps_per_epoch, 1.0)
        return min(1.0 - 1.0 / horizon, (1 + self.updates) / (WARMUP + self.updates))

    @torch.no_grad()
    def update(self, model: torch.nn.Module, steps_per_epoch: int) -> None:
        """Fold the weights after an optimizer step into the average."""
        keep = self.decay(steps_per_epoch)
        self.updates += 1
        for average, weight in zip(self.weights, model.parameters(), strict=True):
            average.lerp_(weight, 1.0 - keep)

    @contextmanager
    @torch.no_grad()
    def applied(self, model: torch.nn.Module) -> Iterator[None]:
        """The averaged weights in ``model`` (copied into its parameters' own storage, which
        recorded CUDA graphs read), the raw ones back afterwards."""
        parameters = list(model.parameters())
        raw = [p.detach().clone() for p in parameters]
        for weight, average in zip(parameters, self.weights, strict=True):
            weight.copy_(average)
        try:
            yield
        finally:
            for weight, saved in zip(parameters, raw, strict=True):
                weight.copy_(saved)

    def state_dict(self) -> dict[str, Any]:
        return {"updates": self.updates, "weights": list(self.weights)}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Go on from a saved average (same model: the shapes are checked)."""
        weights = list(state["weights"])
        shapes = [tuple(w.shape) for w in weights]
        if shapes != [tuple(w.shape) for w in self.weights]:
            raise ValueError("the saved average does not fit the model's parameters")
        for average, saved in zip(self.weights, weights, strict=True):
            average.copy_(saved)
        self.updates = int(state["updates"])
