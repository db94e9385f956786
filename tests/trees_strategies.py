"""Hypothesis strategies for random well-formed dependency trees (heads arrays).

Import as ``from tests.trees_strategies import trees``.  Heads follow docs/dev/CONVENTIONS.md:
``heads[i - 1]`` is the head of word ``i``, 0 is the artificial root.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from hypothesis import strategies as st


@st.composite
def trees(
    draw: st.DrawFn, min_words: int = 1, max_words: int = 12, single_root: bool = True
) -> list[int]:
    """A random tree over ``min_words..max_words`` words.

    Words are attached in a random order, each to a node already in the tree, which reaches
    every tree (not uniformly).  With ``single_root=True`` exactly one word hangs from the
    root 0 (the UD requirement); otherwise any number of words may.
    """
    n = draw(st.integers(min_value=min_words, max_value=max_words))
    if n == 0:
        return []
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    attached = [order[0]] if single_root else [0, order[0]]
    for word in order[1:]:
        heads[word - 1] = draw(st.sampled_from(attached))
        attached.append(word)
    return heads


def multi_root_trees(min_words: int = 1, max_words: int = 12) -> st.SearchStrategy[list[int]]:
    """Trees in which several words may be attached to the root 0."""
    return trees(min_words=min_words, max_words=max_words, single_root=False)


@st.composite
def projective_trees(
    draw: st.DrawFn, min_words: int = 1, max_words: int = 12, single_root: bool = True
) -> list[int]:
    """A random projective tree (root arcs included: no two arcs cross).

    Built top-down: a span's head word is drawn, then the words left and right of it are cut
    into contiguous segments, each the projection of one of its dependents.
    """
    n = draw(st.integers(min_value=min_words, max_value=max_words))
    heads = [0] * n

    def segments(lo: int, hi: int) -> list[tuple[int, int]]:
        """Cut words lo..hi (inclusive) into contiguous non-empty segments."""
        cuts = [c for c in range(lo + 1, hi + 1) if draw(st.booleans())]
        bounds = [lo, *cuts, hi + 1]
        return [(a, b - 1) for a, b in pairwise(bounds) if a <= b - 1]

    pending = [(1, n, 0)] if single_root or n == 0 else [(a, b, 0) for a, b in segments(1, n)]
    while pending:
        lo, hi, parent = pending.pop()
        if lo > hi:
            continue
        head = draw(st.integers(min_value=lo, max_value=hi))
        heads[head - 1] = parent
        for a, b in segments(lo, head - 1) + segments(head + 1, hi):
            pending.append((a, b, head))
    return heads


def all_trees(n: int, *, single_root: bool = False) -> Iterator[tuple[int, ...]]:
    """Every tree over n words as a heads tuple (head choices assigned word by word, pruning
    a partial assignment as soon as following heads from the new word returns to it)."""
    heads = [-1] * n

    def closes_cycle(word: int) -> bool:
        v = heads[word - 1]
        while v > 0 and heads[v - 1] != -1:
            if v == word:
                return True
            v = heads[v - 1]
        return v == word

    def extend(word: int, roots: int) -> Iterator[tuple[int, ...]]:
        if word > n:
            if roots >= 1:
                yield tuple(heads)
            return
        for h in range(n + 1):
            if h == word or (single_root and h == 0 and roots == 1):
                continue
            heads[word - 1] = h
            if h == 0 or not closes_cycle(word):
                yield from extend(word + 1, roots + (h == 0))
        heads[word - 1] = -1

    yield from extend(1, 0)
