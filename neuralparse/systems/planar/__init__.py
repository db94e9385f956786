"""The multiplanar systems of Gómez-Rodríguez & Nivre (2013): planar (§3.3) and 2-planar
(§5.1), one k-stack family.

Modules, imports flowing one way (``reference`` <- ``system``):

* :mod:`~neuralparse.systems.planar.reference`: the readable pure-Python specification (the
  transitions, the restrictions, the UD root convention and the static oracle, with their
  arguments); the engine uses its class test (:func:`in_class`);
* :mod:`~neuralparse.systems.planar.system`: the systems on the engine's state batch,
  :class:`Planar` (registry name ``planar``), :class:`TwoPlanar` (``two_planar``) and their
  k-stack base :class:`Multiplanar`.
"""

from __future__ import annotations

from neuralparse.systems.planar.reference import in_class
from neuralparse.systems.planar.system import Multiplanar, Planar, TwoPlanar

__all__ = ["Multiplanar", "Planar", "TwoPlanar", "in_class"]
