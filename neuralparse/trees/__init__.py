"""Pure tree theory over heads arrays (word 1 first, 0 = the artificial root).

* :mod:`~neuralparse.trees.core`: arcs, well-formedness, projectivity, non-projective and
  crossed arcs, projective order, gap degree, well-nestedness.
* :mod:`~neuralparse.trees.planarity`: planarity and minimal k-planarity (Gómez-Rodríguez &
  Nivre 2013 §4.1).
* :mod:`~neuralparse.trees.crossing`: crossing intervals, k-Crossing-Interval and
  1-Endpoint-Crossing (Pitler & McDonald 2015 §2-3).
* :mod:`~neuralparse.trees.punctuation`: removing words with re-attachment.
* :mod:`~neuralparse.trees.lifting` and :mod:`~neuralparse.trees.pseudo_projective`: lifting
  into a class and Nivre & Nilsson's (2005) pseudo-projective encodings.
"""

from neuralparse.trees.core import (
    arcs,
    arcs_cross,
    check_tree,
    children,
    crossed_arcs,
    gap_degree,
    is_projective,
    is_well_nested,
    nonprojective_arcs,
    projective_order,
    projective_positions,
)
from neuralparse.trees.crossing import (
    crossing_intervals,
    is_k_crossing_interval,
    is_one_endpoint_crossing,
)
from neuralparse.trees.lifting import LiftResult, lift
from neuralparse.trees.planarity import is_planar, min_planarity, plane_assignment
from neuralparse.trees.pseudo_projective import decode, encode, strip_markers
from neuralparse.trees.punctuation import remove_words

__all__ = [
    "LiftResult",
    "arcs",
    "arcs_cross",
    "check_tree",
    "children",
    "crossed_arcs",
    "crossing_intervals",
    "decode",
    "encode",
    "gap_degree",
    "is_k_crossing_interval",
    "is_one_endpoint_crossing",
    "is_planar",
    "is_projective",
    "is_well_nested",
    "lift",
    "min_planarity",
    "nonprojective_arcs",
    "plane_assignment",
    "projective_order",
    "projective_positions",
    "remove_words",
    "strip_markers",
]
