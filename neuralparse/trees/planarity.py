"""Planarity and multiplanarity (Gómez-Rodríguez & Nivre 2013, §4.1).

A tree is k-planar when its arcs can be split into k planes with no two arcs of one plane
crossing.  §4.1: the minimal k is the chromatic number of the *crossings graph*, whose
vertices are the arcs and whose edges join crossing arcs.

Convention (CONVENTIONS.md, Gómez-Rodríguez & Nivre Table 1): only word-to-word arcs are
considered by default.  With the arcs from a leftmost root included, "planar" would coincide
with "projective"; ``include_root=True`` is available for callers that colour root arcs too.

Arcs are identified by their dependent, so colourings map dependents to plane indices.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from neuralparse.trees.core import crossing_pairs

CrossingsGraph = dict[int, list[int]]


def crossings_graph(heads: Sequence[int], *, include_root: bool = False) -> CrossingsGraph:
    """The crossings graph (§4.1): every arc (by dependent) mapped to the arcs crossing it.

    Every considered arc is a key, crossed or not, so the graph's vertices are all the arcs.
    Built from :func:`~neuralparse.trees.core.crossing_pairs`, which only compares arcs that
    start inside each other's span.
    """
    graph: CrossingsGraph = {d: [] for d, h in enumerate(heads, start=1) if include_root or h != 0}
    for a, b in crossing_pairs(heads, include_root=include_root):
        graph[a].append(b)
        graph[b].append(a)
    return graph


def is_planar(heads: Sequence[int], *, include_root: bool = False) -> bool:
    """1-planarity: no two (word-to-word, by default) arcs cross."""
    return not crossing_pairs(heads, include_root=include_root)


def _components(graph: CrossingsGraph) -> list[list[int]]:
    """Connected components with at least one edge (isolated arcs fit on any plane)."""
    seen: set[int] = set()
    components: list[list[int]] = []
    for start in sorted(graph):
        if start in seen or not graph[start]:
            continue
        seen.add(start)
        component = [start]
        queue = deque([start])
        while queue:
            v = queue.popleft()
            for w in graph[v]:
                if w not in seen:
                    seen.add(w)
                    component.append(w)
                    queue.append(w)
        components.append(component)
    return components


def _two_colour(graph: CrossingsGraph, component: list[int]) -> dict[int, int] | None:
    """BFS 2-colouring of one component (linear time); ``None`` if it has an odd cycle."""
    colour = {component[0]: 0}
    queue = deque([component[0]])
    while queue:
        v = queue.popleft()
        for w in graph[v]:
            if w not in colour:
                colour[w] = 1 - colour[v]
                queue.append(w)
            elif colour[w] == colour[v]:
                return None
    return colour


def _k_colour(graph: CrossingsGraph, component: list[int], k: int) -> dict[int, int] | None:
    """Exact backtracking k-colouring of one component, ``None`` if none exists.

    Vertices are coloured in BFS order (each one after at least one neighbour, so conflicts
    surface early), and a new colour is only ever opened as the next unused index, which
    removes the k! symmetric copies of every colouring from the search.
    """
    order = component  # _components lists vertices in BFS order
    colour: dict[int, int] = {}

    def extend(i: int, used: int) -> bool:
        if i == len(order):
            return True
        v = order[i]
        taken = {colour[w] for w in graph[v] if w in colour}
        for c in range(min(used + 1, k)):
            if c not in taken:
                colour[v] = c
                if extend(i + 1, max(used, c + 1)):
                    return True
                del colour[v]
        return False

    return dict(colour) if extend(0, 0) else None


def _colouring(graph: CrossingsGraph, k: int) -> dict[int, int] | None:
    """A k-colouring of the whole crossings graph, or ``None``; components independently."""
    if k < 1:
        return {} if not graph else None
    colouring = dict.fromkeys(graph, 0)
    for component in _components(graph):
        if k == 1:
            return None
        part = _two_colour(graph, component) if k == 2 else None
        if part is None and k > 2:
            part = _k_colour(graph, component, k)
        if part is None:
            return None
        colouring.update(part)
    return colouring


def plane_assignment(
    heads: Sequence[int], k: int = 2, *, include_root: bool = False
) -> dict[int, int] | None:
    """Split the arcs into ``k`` planes: a map dependent -> plane index (0..k-1), with no two
    arcs of one plane crossing; ``None`` when the tree is not k-planar.

    Deterministic: each component of the crossings graph gives its smallest dependent plane
    0, and uncrossed arcs are on plane 0.  Only word-to-word arcs are keys unless
    ``include_root=True`` (then root arcs are coloured with the others).
    """
    return _colouring(crossings_graph(heads, include_root=include_root), k)


def min_planarity(
    heads: Sequence[int], max_k: int = 3, *, include_root: bool = False
) -> int | None:
    """The least k for which the tree is k-planar (§4.1), or ``None`` if it exceeds ``max_k``.

    k = 1 when no arcs cross (a tree without word-to-word arcs is also 1-planar); k = 2 is
    tested by BFS bipartiteness per component (linear in the crossings graph); larger k by
    exact backtracking per component.
    """
    graph = crossings_graph(heads, include_root=include_root)
    components = _components(graph)
    if not components:
        return 1 if max_k >= 1 else None
    needed = 2
    for component in components:
        if needed == 2 and _two_colour(graph, component) is not None:
            continue
        needed = max(needed, 3)
        while needed <= max_k and _k_colour(graph, component, needed) is None:
            needed += 1
        if needed > max_k:
            return None
    return needed if needed <= max_k else None
