"""Static against dynamic oracle: a system (arc-eager, or ``--system arc_hybrid``) trained on
gold derivations only (the default) or on its own configurations with error exploration
(``trainer.oracle=dynamic``, Goldberg & Nivre 2012, 2013), everything else the default recipe,
trained to convergence (:mod:`experiments.recipe_study` says how the two are paired).

    python -m experiments.dynamic_oracle --train [--system arc_eager] [--data hu_szeged el_gdt]
        [--seeds 1 2 3] [--runs outputs/dynamic_oracle] [--threads 1]
    python -m experiments.dynamic_oracle [--data ...] [--seeds ...] [--runs ...] [--out DIR]

The second form prints the table and writes ``dynamic_oracle_<system>.{csv,json,md}`` to
``--out`` (default ``experiments/results``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from experiments import recipe_study
from experiments.recipe_study import Recipe

RECIPE = Recipe(
    name="dynamic_oracle",
    label="dynamic",
    baseline="static",
    overrides=("trainer.oracle=dynamic",),
    systems=("arc_eager", "arc_hybrid"),
)


def main(argv: Sequence[str] | None = None) -> int:
    return recipe_study.main(RECIPE, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
