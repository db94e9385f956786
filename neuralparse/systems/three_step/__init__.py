"""Three-step non-projective parsing (Lacroix & Béchet 2014): arc-eager over the
projectivized tree, then two valency passes that recover the crossing arcs.

Modules, imports flowing one way (``reference`` <- ``system``):

* :mod:`~neuralparse.systems.three_step.reference`: the readable pure-Python reference (the
  gold targets of each step, the valency passes, the composed static oracle); the engine
  computes its gold tables and its class test with it;
* :mod:`~neuralparse.systems.three_step.system`: the system on the engine's state batch,
  :class:`ThreeStep` (registry name ``three_step``) and its state :class:`ThreeStepState`.
"""

from __future__ import annotations

from neuralparse.systems.three_step.system import (
    DONE,
    STEP1,
    STEP2,
    STEP3,
    ThreeStep,
    ThreeStepState,
    is_ancestor,
)

__all__ = ["DONE", "STEP1", "STEP2", "STEP3", "ThreeStep", "ThreeStepState", "is_ancestor"]
