"""Core dependency-tree functions over a heads array.

Conventions (docs/dev/CONVENTIONS.md): ``heads[i - 1]`` is the head of word ``i`` (words are
1-based), ``0`` is the artificial root at the left edge.  An arc is a ``(head, dependent)``
pair and is identified by its dependent.  Two arcs cross when exactly one endpoint of one
lies strictly inside the span of the other; arcs sharing an endpoint never cross.

Every function here is pure and assumes a well-formed tree (see :func:`check_tree`) unless
its docstring says otherwise.  Root arcs (``0 -> d``) are included wherever a function has an
``include_root`` choice and it is left at its default, following Pitler & McDonald (2015) §2.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from neuralparse.errors import TreeError

Arc = tuple[int, int]


def arcs(heads: Sequence[int], *, include_root: bool = True) -> list[Arc]:
    """The arcs ``(head, dependent)`` of the tree, in dependent order.

    ``include_root=False`` leaves out the arcs from the artificial root 0 (word-to-word arcs
    only, as planarity is computed in Gómez-Rodríguez & Nivre 2013, Table 1).
    """
    return [(h, d) for d, h in enumerate(heads, start=1) if include_root or h != 0]


def children(heads: Sequence[int]) -> list[list[int]]:
    """``children(heads)[v]`` lists the dependents of node ``v`` (0..n) in increasing order."""
    result: list[list[int]] = [[] for _ in range(len(heads) + 1)]
    for d, h in enumerate(heads, start=1):
        result[h].append(d)
    return result


def check_tree(
    heads: Sequence[int],
    *,
    single_root: bool = False,
    source: str | None = None,
    line: int | None = None,
    sent_id: str | None = None,
) -> None:
    """Raise :class:`TreeError` unless ``heads`` is a well-formed dependency tree.

    Checks, in this order: every head is an ``int`` (``bool`` is refused), every head lies in
    ``0..n`` and is not the word itself, the arcs contain no cycle (so every word reaches the
    root 0), and with ``single_root=True`` exactly one word is attached to the root (the UD
    requirement).  Messages name the offending words; ``source``, ``line`` and ``sent_id`` are
    passed to the error so that it can name the file position.  An empty ``heads`` (no words)
    is a well-formed, empty tree unless ``single_root`` is requested.
    """
    where = {"source": source, "line": line, "sent_id": sent_id}
    n = len(heads)
    for d, h in enumerate(heads, start=1):
        # bool is an int subclass; a True head is almost certainly a bug upstream.
        if not isinstance(h, int) or isinstance(h, bool):
            raise TreeError(f"head of word {d} is {h!r}, not an integer", **where)
        if not 0 <= h <= n:
            raise TreeError(f"head of word {d} is {h}, outside 0..{n}", **where)
        if h == d:
            raise TreeError(f"word {d} is its own head (cycle [{d}])", **where)
    # Follow head chains; state 1 = on the current path, 2 = known to reach the root.
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        path: list[int] = []
        v = start
        while state[v] == 0:
            state[v] = 1
            path.append(v)
            v = heads[v - 1]
        if state[v] == 1:
            cycle = path[path.index(v) :]
            raise TreeError(f"cycle through words {cycle}: they do not reach the root 0", **where)
        for u in path:
            state[u] = 2
    if single_root:
        roots = [d for d, h in enumerate(heads, start=1) if h == 0]
        if len(roots) != 1:
            detail = f"words {roots}" if roots else "no word"
            raise TreeError(
                f"expected exactly one word attached to the root 0, found {detail}", **where
            )


def arcs_cross(a: Arc, b: Arc) -> bool:
    """Whether arcs ``a`` and ``b`` cross: exactly one endpoint of one lies strictly inside
    the other's span.  Shared endpoints never cross; direction does not matter."""
    l1, r1 = (a[0], a[1]) if a[0] < a[1] else (a[1], a[0])
    l2, r2 = (b[0], b[1]) if b[0] < b[1] else (b[1], b[0])
    return l1 < l2 < r1 < r2 or l2 < l1 < r2 < r1


def crossing_pairs(heads: Sequence[int], *, include_root: bool = True) -> list[tuple[int, int]]:
    """All pairs ``(d1, d2)`` (``d1 < d2``) of dependents whose arcs cross.

    Sweep over arcs sorted by left endpoint: arc ``j`` crosses an earlier-starting arc ``i``
    exactly when ``l_i < l_j < r_i < r_j``, so for each ``i`` only arcs starting inside its span
    are examined.  The cost is the number of (arc, arc starting inside it) pairs, far below
    the quadratic all-pairs test on real sentences.
    """
    spans = sorted(
        (min(h, d), max(h, d), d) for d, h in enumerate(heads, start=1) if include_root or h != 0
    )
    pairs: list[tuple[int, int]] = []
    for i, (li, ri, di) in enumerate(spans):
        for j in range(i + 1, len(spans)):
            lj, rj, dj = spans[j]
            if lj >= ri:
                break
            if li < lj and rj > ri:
                pairs.append((di, dj) if di < dj else (dj, di))
    return pairs


def crossed_arcs(heads: Sequence[int], *, include_root: bool = True) -> set[int]:
    """Dependents whose arc crosses at least one other arc (Pitler & McDonald 2015, Table 7
    crossed vs uncrossed), root arcs included by default."""
    crossed: set[int] = set()
    for d1, d2 in crossing_pairs(heads, include_root=include_root):
        crossed.add(d1)
        crossed.add(d2)
    return crossed


@dataclass(frozen=True)
class Dominance:
    """Constant-time dominance queries from a depth-first numbering of the tree.

    ``first[v]`` is ``v``'s preorder number and ``last[v]`` the largest preorder number in its
    subtree, so ``a`` dominates ``b`` (reflexively) iff ``first[a] <= first[b] <= last[a]``.
    """

    first: tuple[int, ...]
    last: tuple[int, ...]

    def dominates(self, a: int, b: int) -> bool:
        """Whether ``a`` is ``b`` or an ancestor of ``b`` (node 0 dominates every node)."""
        return self.first[a] <= self.first[b] <= self.last[a]


def dominance(heads: Sequence[int]) -> Dominance:
    """Preorder intervals of the tree rooted at 0 (iterative: no recursion limit)."""
    kids = children(heads)
    first = [0] * (len(heads) + 1)
    last = [0] * (len(heads) + 1)
    counter = 0
    stack: list[tuple[int, bool]] = [(0, False)]
    while stack:
        v, done = stack.pop()
        if done:
            last[v] = counter - 1
            continue
        first[v] = counter
        counter += 1
        stack.append((v, True))
        stack.extend((c, False) for c in reversed(kids[v]))
    return Dominance(tuple(first), tuple(last))


def nonprojective_arcs(heads: Sequence[int]) -> set[int]:
    """Dependents of the non-projective arcs (Gómez-Rodríguez & Nivre 2013 §5.2): ``h -> d``
    is non-projective iff some word strictly between ``h`` and ``d`` is not dominated by ``h``.

    Root arcs are never non-projective under this definition (0 dominates every word), but a
    word-to-word arc spanning a word that hangs from the root elsewhere is.  The set is empty
    exactly when :func:`is_projective` holds.
    """
    dom = dominance(heads)
    first, last = dom.first, dom.last
    result: set[int] = set()
    for d, h in enumerate(heads, start=1):
        if h == 0:
            continue
        lo, hi = (h, d) if h < d else (d, h)
        fh, lh = first[h], last[h]
        for k in range(lo + 1, hi):
            if not fh <= first[k] <= lh:
                result.add(d)
                break
    return result


def is_projective(heads: Sequence[int]) -> bool:
    """Projectivity with the root 0 and its arcs included (Pitler & McDonald 2015 §2): no two
    arcs cross.  For a tree whose root is the leftmost vertex this is equivalent to every arc
    dominating the words it spans (Nivre 2009 §2).

    Linear time: with arcs as intervals sorted by (left ascending, right descending), the tree
    is projective iff the intervals nest or touch, which a stack of open right ends checks.
    """
    spans = sorted((h, -d) if h < d else (d, -h) for d, h in enumerate(heads, start=1))
    open_right_ends: list[int] = []
    for left, neg_right in spans:
        right = -neg_right
        # Close the intervals ending at or before this one starts: they cannot cross it.
        while open_right_ends and open_right_ends[-1] <= left:
            open_right_ends.pop()
        # The innermost open interval contains `left` strictly; it must also contain `right`.
        if open_right_ends and right > open_right_ends[-1]:
            return False
        open_right_ends.append(right)
    return True


def projective_order(heads: Sequence[int]) -> list[int]:
    """The words 1..n in projective order (Nivre 2009 §3.2).

    The order is an inorder traversal that respects the original word order between a node
    and its children: a node's left dependents (in string order, each with its subtree) come
    before it, its right dependents after it.  The root 0 comes first and is not listed.  For
    Nivre 2009 Figure 1 this gives A1 hearing2 on5 the6 issue7 is3 scheduled4 today8 .9.
    """
    kids = children(heads)
    order: list[int] = []
    # Stack items: (node, expanded?).  Expanding v pushes right children, v itself, then left
    # children, in reverse so that they pop in string order.
    stack: list[tuple[int, bool]] = [(c, False) for c in reversed(kids[0])]
    while stack:
        v, expanded = stack.pop()
        if expanded:
            order.append(v)
            continue
        items: list[tuple[int, bool]] = [(c, False) for c in kids[v] if c < v]
        items.append((v, True))
        items.extend((c, False) for c in kids[v] if c > v)
        stack.extend(reversed(items))
    return order


def projective_positions(heads: Sequence[int]) -> list[int]:
    """``projective_positions(heads)[v]`` is the rank of node ``v`` in the projective order
    (Nivre 2009 §3.2): 0 for the root, 1..n for the words.  The swap oracle compares two
    nodes with ``pos[a] < pos[b]``."""
    positions = [0] * (len(heads) + 1)
    for rank, word in enumerate(projective_order(heads), start=1):
        positions[word] = rank
    return positions


def yields(heads: Sequence[int]) -> list[list[int]]:
    """``yields(heads)[v]`` is the sorted projection of node ``v`` (itself and every node it
    dominates; Kuhlmann & Nivre 2006).  The root's yield includes 0."""
    kids = children(heads)
    n = len(heads)
    # Post-order by reversing a preorder, so that children are complete before parents.
    preorder: list[int] = []
    stack = [0]
    while stack:
        v = stack.pop()
        preorder.append(v)
        stack.extend(kids[v])
    result: list[list[int]] = [[] for _ in range(n + 1)]
    for v in reversed(preorder):
        nodes = [v]
        for c in kids[v]:
            nodes.extend(result[c])
        nodes.sort()
        result[v] = nodes
    return result


def gaps(projection: Iterable[int]) -> int:
    """Number of gaps (maximal runs of missing positions) in a sorted projection."""
    count = 0
    previous: int | None = None
    for p in projection:
        if previous is not None and p > previous + 1:
            count += 1
        previous = p
    return count


def gap_degree(heads: Sequence[int]) -> int:
    """The gap degree of the tree: the largest number of gaps in any node's projection
    (Kuhlmann & Nivre 2006).  Projective trees have gap degree 0; the root's projection is
    always contiguous, so root arcs change nothing."""
    return max((gaps(y) for y in yields(heads)[1:]), default=0)


def is_well_nested(heads: Sequence[int]) -> bool:
    """Well-nestedness (Kuhlmann & Nivre 2006): no two disjoint subtrees interleave.

    Uses the arc characterisation: two disjoint subtrees interleave iff some arc inside one
    crosses some arc inside the other (the two connecting paths must cross when drawn above
    the sentence), so the tree is well-nested iff for every pair of crossing arcs one head
    dominates the other.  Root arcs never matter (0 dominates everything).
    """
    dom = dominance(heads)
    for d1, d2 in crossing_pairs(heads, include_root=False):
        h1, h2 = heads[d1 - 1], heads[d2 - 1]
        if not (dom.dominates(h1, h2) or dom.dominates(h2, h1)):
            return False
    return True
