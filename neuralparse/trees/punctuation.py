"""Removing words from a tree, e.g. punctuation for coverage figures.

Pitler & McDonald (2015), Table 1, compute tree-class coverage with punctuation tokens
excluded without saying how; we fix it: UPOS ``PUNCT`` words are removed and their dependents are
re-attached to the nearest ancestor that is kept.

When the word attached to the root is itself removed, its kept dependents climb to the root 0,
so the result can have several root children.  We keep that forest-like tree as it is rather
than inventing a new root: every analysis here is defined for any tree hanging from vertex 0
(Pitler & McDonald §2 allow several root children, as the CoNLL data of their Table 1 have),
and choosing one of them as a head would add arcs the annotators never drew.
"""

from __future__ import annotations

from collections.abc import Sequence

from neuralparse.errors import TreeError


def remove_words(heads: Sequence[int], drop: Sequence[bool]) -> tuple[list[int], list[int]]:
    """Remove the words ``d`` with ``drop[d - 1]`` true.

    Returns ``(new_heads, kept)``: ``kept`` lists the original ids of the kept words in order,
    and ``new_heads`` is the tree over them, renumbered 1..len(kept) (0 stays the root), in
    which each kept word hangs from its nearest kept ancestor (0 if none is kept).
    """
    if len(drop) != len(heads):
        raise TreeError(f"drop mask has {len(drop)} entries for {len(heads)} words")
    kept = [d for d in range(1, len(heads) + 1) if not drop[d - 1]]
    new_id = [0] * (len(heads) + 1)
    for i, d in enumerate(kept, start=1):
        new_id[d] = i
    new_heads: list[int] = []
    for d in kept:
        h = heads[d - 1]
        # Climb through removed ancestors; the tree is acyclic so this reaches a kept word or 0.
        while h != 0 and drop[h - 1]:
            h = heads[h - 1]
        new_heads.append(new_id[h])
    return new_heads, kept
