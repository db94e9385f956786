"""The 2-planar system (Gómez-Rodríguez & Nivre 2013, §5.1) on the batched tensor state.

Two stacks, the active one (``"stack"``) and the inactive one (``"stack1"``): SHIFT pushes the
buffer front onto both (SHIFT2P), REDUCE / LEFT-ARC / RIGHT-ARC work on the active stack
(LEFT-ARC and RIGHT-ARC do not pop), SWITCH swaps the two stacks.  Restrictions: SINGLE-HEAD
and ACYCLICITY (ShAc, §5.1.2), no two consecutive SWITCHes (§5.1.3) and no SWITCH onto an
empty stack, and the UD single-root restrictions of :mod:`neuralparse.systems.planar_oracle`
(where the reasons, the soundness / dead-end argument and the static oracle are written
down).  The implementation is the k-stack :class:`~neuralparse.systems.planar.Multiplanar`
with ``k = 2``; its cost notes (a per-word union-find table) apply here.

Class: single-rooted trees whose word-to-word arcs are 2-planar (§4.1).  The static oracle
splits the arcs into two planes by 2-colouring the crossings graph and follows the Lemma 7
construction, which reproduces every tree of the class.
"""

from __future__ import annotations

from neuralparse.systems.planar import Multiplanar


class TwoPlanar(Multiplanar):
    """§5.1 ``S2P`` with ShAc (§5.1.2), the SWITCH restrictions and the UD root restrictions."""

    name = "two_planar"
    k = 2
    transitions = ("SHIFT", "REDUCE", "LEFT-ARC", "RIGHT-ARC", "SWITCH")
    arc_transitions = frozenset({"LEFT-ARC", "RIGHT-ARC"})
    feature_names = ("s0", "s1", "s2", "b0", "t0")
