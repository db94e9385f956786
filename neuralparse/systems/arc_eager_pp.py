"""Arc-eager with pseudo-projective parsing (Nivre & Nilsson 2005), the baseline the seeds
compare against (Pitler & McDonald 2015 §7; Gómez-Rodríguez & Nivre 2013 §5.2).

Training trees are projectivized by lifting and their labels encoded with the Head+Path scheme
(:func:`neuralparse.trees.pseudo_projective.encode`); the parser is plain arc-eager over the
encoded label set, and the derived tree is deprojectivized by the breadth-first search of
:func:`~neuralparse.trees.pseudo_projective.decode`. Every single-rooted tree therefore has a
derivation, but decoding recovers only part of the non-projective arcs exactly (see the README's
recovery table), so ``reproduced`` can stay below ``in class`` in ``python -m
neuralparse.oracle``.
"""

from __future__ import annotations

from collections.abc import Sequence

from neuralparse.systems.arc_eager import ArcEager
from neuralparse.systems.arc_standard import single_rooted
from neuralparse.trees.pseudo_projective import Scheme, decode, encode


class ArcEagerPP(ArcEager):
    name = "arc_eager_pp"
    scheme: Scheme = "head+path"

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        return single_rooted(heads)

    def training_tree(
        self, heads: Sequence[int], deprels: Sequence[str]
    ) -> tuple[list[int], list[str]]:
        encoded_heads, encoded_labels = encode(heads, deprels, self.scheme)
        return list(encoded_heads), list(encoded_labels)

    def output_tree(
        self, heads: Sequence[int], deprels: Sequence[str]
    ) -> tuple[list[int], list[str]]:
        decoded_heads, decoded_labels = decode(heads, deprels, self.scheme)
        return list(decoded_heads), list(decoded_labels)
