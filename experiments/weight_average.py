"""The last weights against their moving average: arc-eager trained with the default recipe
(dev evaluation, early stopping and ``checkpoint.pt`` on the weights of the last update) or
with ``trainer.average_epochs=1`` (on the weights averaged over about the last epoch,
:mod:`neuralparse.training.averaging`), trained to convergence (:mod:`experiments.recipe_study`
says how the two are paired).

    python -m experiments.weight_average --train [--data hu_szeged el_gdt] [--seeds 1 2 3]
        [--runs outputs/weight_average] [--threads 1]
    python -m experiments.weight_average [--data ...] [--seeds ...] [--runs ...] [--out DIR]

The second form prints the table and writes ``weight_average_arc_eager.{csv,json,md}`` to
``--out`` (default ``experiments/results``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from experiments import recipe_study
from experiments.recipe_study import Recipe

RECIPE = Recipe(
    name="weight_average",
    label="averaged",
    baseline="last",
    overrides=("trainer.average_epochs=1",),
)


def main(argv: Sequence[str] | None = None) -> int:
    return recipe_study.main(RECIPE, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
