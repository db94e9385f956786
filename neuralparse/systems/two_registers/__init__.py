"""The two-registers transition system (Pitler & McDonald 2015, §4-6, Tables 2-4): an
arc-eager stack and buffer plus two registers, deriving the 2-Crossing-Interval trees.

Modules, imports flowing one way (``configuration`` <- ``registers_empty`` <-
``empty_buffer`` <- ``exit``; ``tensor_forms`` <- ``tensor_rule``; ``tensor_forms`` <-
``mask``;
``configuration`` <- ``mask``/``exit``/``oracle`` <- ``system``):

* :mod:`~neuralparse.systems.two_registers.configuration`: the plain-Python reference on one
  :class:`Configuration` (§4): the moves, Table 2 transitions (:func:`apply_move`), Table 4
  preconditions with their repairs (:func:`table4_legal`) and the completion plans of the
  dead-end rule (:func:`is_legal`); the engine's slow path decides on it too;
* :mod:`~neuralparse.systems.two_registers.mask`: the closed-form legal mask in tensors on
  the engine's fast rows (registers empty, fresh buffer front) and its book-keeping;
* :mod:`~neuralparse.systems.two_registers.tensor_rule`: the exit rule as tensor
  operations on per-word rows (Table 2, Table 4, the dispatch by phase), with the closed
  forms in :mod:`~neuralparse.systems.two_registers.tensor_forms`, in every phase (an empty
  buffer with both registers held only where both already hang from the root and R2 < n)
  (the CUDA-graph variant's, with ``graph_rule="tensor"``);
* :mod:`~neuralparse.systems.two_registers.exit`: the exit dead-end rule (one exit plan,
  decided by closed forms; :func:`exit_legal`, the engine's default), with the closed forms
  of two phases in their own modules: registers empty
  (:mod:`~neuralparse.systems.two_registers.registers_empty`, also the terms the others
  read) and an empty buffer with a register held
  (:mod:`~neuralparse.systems.two_registers.empty_buffer`);
* :mod:`~neuralparse.systems.two_registers.oracle`: the static oracle of the completeness
  proof (§5.2; :func:`oracle`, :func:`derivable`);
* :mod:`~neuralparse.systems.two_registers.system`: the system on the engine's state batch,
  :class:`TwoRegisters` (registry name ``two_registers``) and :class:`TwoRegistersState`.
"""

from __future__ import annotations

from neuralparse.systems.two_registers.configuration import (
    Configuration,
    Move,
    apply_move,
    is_legal,
    legal_moves,
    successor,
    table4_legal,
)
from neuralparse.systems.two_registers.exit import exit_legal
from neuralparse.systems.two_registers.oracle import derivable, oracle, oracle_guide
from neuralparse.systems.two_registers.system import (
    DEAD_END_RULES,
    GRAPH_RULES,
    TRANSITION_NAMES,
    TwoRegisters,
    TwoRegistersState,
)

__all__ = [
    "DEAD_END_RULES",
    "GRAPH_RULES",
    "TRANSITION_NAMES",
    "Configuration",
    "Move",
    "TwoRegisters",
    "TwoRegistersState",
    "apply_move",
    "derivable",
    "exit_legal",
    "is_legal",
    "legal_moves",
    "oracle",
    "oracle_guide",
    "successor",
    "table4_legal",
]
