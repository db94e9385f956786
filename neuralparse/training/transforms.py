"""Training trees outside a system's class, made derivable, so that every training tree can
be learnt.

Each system says which tree it is trained to derive for a gold tree
(:meth:`~neuralparse.systems.base.TransitionSystem.training_tree`): by default the tree lifted
into the system's own class, shortest non-projective arc first (Nivre & Nilsson 2005 §3;
Pitler & McDonald 2015 §7), so projectivization for arc-eager, 2-Crossing-Interval for
two-registers, 2-planarity for 2-planar; arc_eager_pp's Head+Path pseudo-projective encoding,
undone after parsing by ``output_tree``. This module applies it to a training set and counts
what changed, for the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from neuralparse.systems import TransitionSystem


@dataclass
class TransformReport:
    """How many training trees were changed, and how many words got another head."""

    trees: int = 0
    transformed_trees: int = 0
    moved_arcs: int = 0

    def summary(self) -> str:
        return (
            f"{self.transformed_trees} of {self.trees} training trees transformed "
            f"({self.moved_arcs} arcs moved)"
        )


def prepare_trees(
    system: TransitionSystem, trees: Sequence[tuple[Sequence[int], Sequence[str]]]
) -> tuple[list[tuple[list[int], list[str]]], TransformReport]:
    """The training trees as the system requires them, and the counts to log."""
    report = TransformReport(trees=len(trees))
    prepared = []
    for heads, deprels in trees:
        new_heads, new_deprels = system.training_tree(heads, deprels)
        moved = sum(a != b for a, b in zip(heads, new_heads, strict=True))
        report.moved_arcs += moved
        report.transformed_trees += int(moved > 0 or list(deprels) != new_deprels)
        prepared.append((new_heads, new_deprels))
    return prepared, report
