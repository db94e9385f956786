"""The two-registers exit rule with an empty buffer and both registers held, as tensor
operations (Pitler & McDonald 2015, Tables 2 and 4;
:func:`~neuralparse.systems.two_registers.empty_buffer.both_registers_empty_buffer`;
docs/dev/two-registers-completability.md, "Empty buffer, both registers held").

There the rule is exact completability, which the reference decides by a search.  With
R2 < n, Clear either returns σ1 = n after n's own turn (:func:`clear_returns_sigma1`, G1) or
ends the parse after a *play* (:func:`clear_ends_the_parse`, T), in which a word of the stack
adopts each headless register and every headless word takes its head from a register.  With
R2 = n, some number of top words play and leave the stack, and Clear returns R2
(:func:`clear_returns_r2`, G2).  The searches are bounded, so here they are enumerations of
fixed size:

* G1: n's turn is at most three Register-Stack arcs, so every sequence of up to three of the
  four Register-Stack moves is applied (:func:`~neuralparse.systems.two_registers.tensor_moves.
  apply_moves`; 85 configurations per row) and Clear tried after each.
* T (:func:`plays`): a play is fixed by the two adopters (any word of the stack that may
  adopt, or none for a register that is headed or 0: ``W × W`` pairs per row) and by the
  register chosen by each of the at most four *special* headless words, those whose tree
  holds a register or an adopter (16 choices, the bits of one integer); every other headless
  word takes the register the reference gives it, and what those words contribute (a word
  left without a head, IsCovered(R1), an arc from the root) is a count over the words, from
  which the special words' share is subtracted.  So a row costs ``O(W²)`` elements,
  evaluated with a fixed number of operators.
* G2: the same plays, once per number of words that leave (a row each:
  :data:`SHALLOW_STACK_LIMIT` + 1 rows for a stack of at most that many words, one per
  column of the width for a deeper one), then the arc-eager completion's scan of the stack
  Clear leaves, as sets of tree roots.  A row then costs ``O(W³)`` elements for a deep
  stack, whatever the configuration: the host uses it where its own search would take
  longer (:func:`~neuralparse.systems.two_registers.empty_buffer.
  both_registers_empty_buffer`).

That is too much to spend on every row of a batch, and such rows are rare, so the exit rule
(:mod:`~neuralparse.systems.two_registers.tensor_rule`) runs these searches only on a fixed
number of rows picked among those in this phase (:func:`search_some`)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from neuralparse.systems.two_registers.configuration import REGISTER_STACK_MOVES, Move
from neuralparse.systems.two_registers.tensor_forms import (
    Words,
    extreme_dependents,
    far_side_if_attached,
    far_side_if_child,
    gamma_closed_form,
    lowest,
)
from neuralparse.systems.two_registers.tensor_moves import apply_moves, table4

SHALLOW_STACK_LIMIT = 10
"""G2 of a stack of at most this many words (with R2 = n) takes ``SHALLOW_STACK_LIMIT + 1``
rows, one per number of top words that leave; a deeper stack takes one per column of the
width.  Ten words cover the stacks of almost every such configuration of real sentences, so
the search of many rows a step stays ``O(W²)`` elements a row and deep stacks are searched
fewer at a time (:func:`~neuralparse.systems.two_registers.tensor_rule.exit_finishes`)."""

SIGMA1_TURN_ARCS = 3
"""n's turn before Clear returns it (G1): at most three Register-Stack arcs (it adopts each
register once and takes one head)."""

SPECIAL_WORDS = 4
"""The tree roots a play of T can hang the registers from: the registers' own and their
adopters'; the headless words among them choose their register freely."""


EVERY_CHOICE = (1 << (1 << SPECIAL_WORDS)) - 1
"""The set of all the special words' choices of register (bit ``c``: choice ``c``, in which
special word ``i`` takes R2 when bit ``i`` of ``c`` is set)."""
CHOICES_TAKING_R2 = tuple(
    sum(1 << c for c in range(1 << SPECIAL_WORDS) if c >> i & 1) for i in range(SPECIAL_WORDS)
)
"""For each special word, the set of choices in which it takes R2."""


def clear_returns_sigma1(w: Words) -> Tensor:
    """G1 (:func:`~neuralparse.systems.two_registers.empty_buffer._clear_returns_sigma1`):
    n is σ1, alone right of R1 on the stack; after up to three Register-Stack moves of n's
    turn, Clear is legal and the arc-eager completion finishes the configuration it leaves
    (``gamma_closed_form``)."""
    rows = w.n.shape[0]
    top, second = w.stack_top()
    alive = (top == w.n) & (second <= w.r1)
    moves = torch.tensor([int(m) for m in REGISTER_STACK_MOVES], device=w.n.device)
    found = torch.zeros_like(alive)
    frontier = w
    for depth in range(SIGMA1_TURN_ARCS + 1):
        allowed = table4(frontier)
        cleared, _ = apply_moves(frontier, torch.full_like(frontier.n, int(Move.CLEAR)))
        finishes = alive & allowed[:, int(Move.CLEAR)] & gamma_closed_form(cleared)
        found |= finishes.view(rows, len(moves) ** depth).any(1)
        if depth < SIGMA1_TURN_ARCS:
            # Row r * 4 + m of the next level is move m after row r of this one.
            alive = (alive[:, None] & allowed[:, moves]).flatten()
            after = moves.repeat(alive.numel() // len(moves))
            frontier, _ = apply_moves(frontier.repeat(len(moves)), after)
    return found


@dataclass(frozen=True)
class Plays:
    """The plays of one set of acting words, per row and pair of adopters ``[R, W, W]`` (the
    adopter of R1, of R2; the spare column: none), each a set of register choices of the
    special words (:data:`EVERY_CHOICE`), with what they decide (``_Plays.plays`` and
    ``_Play.settles``)."""

    legal: Tensor
    """The legal plays: every headless acting word gets a head, every adopter may adopt,
    IsCovered(R1) blocks no acting word at or left of ``last``, at most one arc from the root."""
    slots: list[Tensor]
    """The tree roots a play hangs things from: R1's, R2's and the two adopters' (-1: none)."""
    special: list[Tensor]
    """Slot ``i`` is a headless acting word (its register chosen by the play), not an
    earlier slot's value."""
    settled: list[Tensor]
    """Slot ``i``'s tree ends under the root."""
    covered1: Tensor
    """IsCovered(R1) after the play."""
    no_root_arc: Tensor
    """The play gives the root no arc."""
    headless: Tensor
    """``[R, W]``: the headless acting words."""
    gives: tuple[Tensor, Tensor]
    """``[R, W]``: the register a headless word that is not special takes (R1, R2)."""

    def tree_settles(self, k: int) -> Tensor:
        """Rk's tree ends under the root."""
        return self.settled[0] if k == 1 else _first_slot(self.slots, 1, self.settled)

    def roots_settle(self, roots: Tensor) -> Tensor:
        """Some tree root of the set ``roots [R, W]`` ends under the root: 0, a slot, or a
        headless acting word that is not special (under its register's tree)."""
        found = _always(_play(roots[:, 0]))
        for v, settled in zip(self.slots, self.settled, strict=True):
            found = found | (_always(_of(roots, v)) & settled)
        for k, gives in zip((1, 2), self.gives, strict=True):
            table = roots & self.headless & gives
            count = _play(table.sum(1))
            for v, is_special in zip(self.slots, self.special, strict=True):
                count = count - (is_special & _of(table, v)).long()
            found = found | (_always(count > 0) & self.tree_settles(k))
        return found


def _play(t: Tensor) -> Tensor:
    """A per-row value, broadcast over the pairs of adopters."""
    return t[:, None, None]


def _of(table: Tensor, v: Tensor) -> Tensor:
    """``table[r, v]`` for the slot values ``v`` (false at -1, no adopter)."""
    rows, width = table.shape
    v = v.expand(rows, width, width)
    return (v >= 0) & table.gather(1, v.clamp(min=0).flatten(1)).view(v.shape)


def _always(condition: Tensor) -> Tensor:
    """A choice-free condition as a set of choices (all or none), as int32: the 16 choices
    fit, in half the memory of int64."""
    return condition.int() * EVERY_CHOICE


def _first_slot(slots: list[Tensor], j: int, values: list[Tensor]) -> Tensor:
    """``values[i]`` for the first slot ``i`` holding slot ``j``'s tree root."""
    chosen = values[j]
    for i in reversed(range(j)):
        chosen = torch.where(slots[j] == slots[i], values[i], chosen)
    return chosen


def plays(w: Words, turns: Tensor, pool: Tensor, *, must_adopt: bool) -> Plays:
    """The plays in which the words of ``turns [R, W]`` act, each headless register adopted by
    a word of ``pool`` (or, unless ``must_adopt``, by none), within type (1), type (3),
    repair 2, IsCovered(R1) and a single arc from the root."""
    index, head, root = w.index, w.head, w.root
    spare = head.shape[1] - 1  # "no adopter"
    r1, r2, last = w.r1[:, None], w.r2[:, None], w.last[:, None]
    root_free = w.root_free[:, None]
    headless = turns & (index >= 1) & (head < 0)
    low = index <= last
    leftmost, rightmost = extreme_dependents(head)

    # Rk -> word (``_Plays.may_receive``) and word -> Rk (``_Plays.may_adopt``), per word.
    head1, head2 = w.at(head, w.r1)[:, None], w.at(head, w.r2)[:, None]
    far_head = torch.where(index < r1, head2, torch.where(index > r2, head1, -2))
    receives = [
        (far_head != index)
        & ((rk != 0) | root_free)
        & ~far_side_if_attached(leftmost, rightmost, index, rk)
        & (~low | (k == 1))
        for k, rk in ((1, r1), (2, r2))
    ]
    headed_close = ((index < r1) & (head == r1)) | ((index > r2) & (head == r2))
    adopts = []
    for k, rk in ((1, r1), (2, r2)):
        may = pool & (~low | (k == 1)) & ~headed_close & ((index != 0) | root_free)
        may &= ~far_side_if_child(head, index, rk)
        needs = w.headless(rk[:, 0])[:, None]
        adopts.append((may & needs) | ((index == spare) & ~(needs & must_adopt)))

    # Every other headless word takes R1 where it may (only R1 at or left of ``last``), R2
    # first when R1 = 0; these are its contributions to the play's conditions.
    prefer2 = (r1 == 0) & ~low
    gives1 = receives[0] & ~(prefer2 & receives[1])
    gives2 = ~gives1 & receives[1]
    fails = headless & ~gives1 & ~gives2
    covers = headless & gives2 & (index < r1)
    root_arc = headless & gives1 & (r1 == 0)
    low_acting = (headless & low).any(1)

    # A play is a pair of adopters, [rows, adopter of R1, adopter of R2], and a choice of
    # register for each special word.  The 16 choices are the bits of one integer: a
    # condition is the set of choices that meet it, so the choices cost no memory.
    x, y = index[None, :, None], index[None, None, :]
    r1, r2, last = _play(w.r1), _play(w.r2), _play(w.last)
    adopter_root = torch.where(index == spare, -1, root)
    tree1, tree2 = _play(w.at(root, w.r1)), _play(w.at(root, w.r2))
    slots = [tree1, tree2, adopter_root[:, :, None], adopter_root[:, None, :]]

    special = []
    for i, v in enumerate(slots):
        is_special = _of(headless, v)
        for earlier in slots[:i]:
            is_special = is_special & (v != earlier)
        special.append(is_special)
    # What the other headless words contribute, the special ones' fixed givers taken out.
    left = []
    for table in (fails, covers, root_arc):
        count = _play(table.sum(1))
        for v, is_special in zip(slots, special, strict=True):
            count = count - (is_special & _of(table, v)).long()
        left.append(count)
    fails_left, covers_left, root_arcs_left = left

    takes2 = [CHOICES_TAKING_R2[i] for i in range(SPECIAL_WORDS)]
    legal = _always(adopts[0][:, :, None] & adopts[1][:, None, :] & (fails_left == 0))
    covered1 = _always(_play(w.covered1) | (covers_left > 0) | ((y != spare) & (y < r1)))
    arcs_from_root = (x == 0).long() + (y == 0).long() + root_arcs_left
    root_arc_choices = []
    for v, is_special, second in zip(slots, special, takes2, strict=True):
        # Type (3): a word that adopts R_far may no longer take a head.
        free = ~((v < r1) & (y == v)) & ~((v > r2) & (x == v))
        fine1 = _always(~is_special | (free & _of(receives[0], v)))
        fine2 = _always(~is_special | (free & _of(receives[1], v)))
        legal = legal & ((fine2 & second) | (fine1 & ~second))
        covered1 = covered1 | (_always(is_special & (v < r1)) & second)
        root_arc_choices.append(_always(is_special & (r1 == 0)) & ~second)
    acting_low = _play(low_acting) | ((x != spare) & (x <= last)) | ((y != spare) & (y <= last))
    legal = legal & ~(covered1 & _always(acting_low))
    # At most one arc from the root: none from the special words beside one already, at most
    # one of them otherwise.
    some = torch.zeros_like(legal)
    two = torch.zeros_like(legal)
    for arc in root_arc_choices:
        two = two | (some & arc)
        some = some | arc
    legal = legal & torch.where(
        arcs_from_root >= 2, 0, torch.where(arcs_from_root == 1, ~some, ~two)
    )
    no_root_arc = _always(arcs_from_root == 0) & ~some

    # Which trees end under the root.  Each slot hangs from another: a special word from its
    # register's tree, a headless register from its adopter's; ``settled[i]`` is the set of
    # choices under which slot i's chain reaches the root within the hops so far.
    adopted = [
        _always((v == _play(rk)) & _play(w.headless(rk))) for v in slots for rk in (w.r1, w.r2)
    ]
    chosen = [_always(is_special) for is_special in special]
    at_root = [_always(v == 0) for v in slots]
    settled = list(at_root)
    for _ in range(SPECIAL_WORDS):
        under_tree2 = _first_slot(slots, 1, settled)
        under_x, under_y = _first_slot(slots, 2, settled), _first_slot(slots, 3, settled)
        settled = [
            at_root[i]
            | (chosen[i] & ((under_tree2 & takes2[i]) | (settled[0] & ~takes2[i])))
            | (adopted[2 * i] & under_x)
            | (adopted[2 * i + 1] & under_y)
            for i in range(SPECIAL_WORDS)
        ]
    return Plays(legal, slots, special, settled, covered1, no_root_arc, headless, (gives1, gives2))


def clear_ends_the_parse(w: Words) -> Tensor:
    """T (:func:`~neuralparse.systems.two_registers.empty_buffer._clear_ends_the_parse`):
    the stack words left of R2 and the lowest one right of it act (those above it must be
    headed already), and some play hangs both registers' trees from the root."""
    index, head = w.index, w.head
    upper = w.on_stack & (index > w.r2[:, None])
    u0 = lowest(upper)
    stuck = (upper & (index > u0[:, None]) & (head < 0)).any(1)
    turns = (w.on_stack & (index < w.r2[:, None])) | (index == u0[:, None])
    p = plays(w, turns, turns, must_adopt=True)
    ends = p.legal & p.tree_settles(1) & p.tree_settles(2) & EVERY_CHOICE
    return ~stuck & ends.flatten(1).ne(0).any(1)


def clear_returns_r2(w: Words, depths: int) -> Tensor:
    """G2 (:func:`~neuralparse.systems.two_registers.empty_buffer._clear_returns_r2`) for
    stacks of fewer than ``depths`` words (the width is always enough): for each number of
    top words that act and leave (every word right of R1 among them, 0 not), the word then
    on top may still adopt, and after Clear returns R2 = n the arc-eager completion finishes
    (``_cleared_r2_completes``).  Each depth is a row of its own."""
    rows, width = w.head.shape
    from_top = w.on_stack.flip(1).long().cumsum(1).flip(1) * w.on_stack  # 1: σ1
    right_of_r1 = (w.on_stack & (w.index > w.r1[:, None])).sum(1)
    size = w.on_stack.sum(1)
    w = w.repeat(depths)
    depth = torch.arange(depths, device=w.head.device).repeat(rows)
    from_top = from_top.repeat_interleave(depths, 0)
    index, head, root = w.index, w.head, w.root
    turns = w.on_stack & (from_top <= depth[:, None])
    top = w.on_stack & (from_top == depth[:, None] + 1)
    below = w.on_stack & (from_top > depth[:, None] + 1)
    tried = (depth >= right_of_r1.repeat_interleave(depths)) & (
        depth <= size.repeat_interleave(depths)
    )
    tried &= ~turns[:, 0]
    p = plays(w, turns, turns | top, must_adopt=False)

    spare = width - 1
    x, y = index[None, :, None], index[None, None, :]
    r1 = w.r1
    headed1 = _always(_play((r1 != 0) & (w.at(head, r1) >= 0)) | (x != spare))
    headed2 = _play(w.at(head, w.n) >= 0) | (y != spare)
    legal = p.legal & ~(p.covered1 & ~headed1) & _always(~(_play(w.covered2 == 1) & ~headed2))
    # The completion scans the stack Clear leaves, bottom up: the words below σ1, then σ1 and
    # R1 pushed back unless covered; a headless word (but 0, or R1 adopted) fails it, one in
    # the root's tree finishes it.
    headless_below = below & (index != 0) & (head < 0)
    before = below & (index != 0) & (index < lowest(headless_below)[:, None])
    completes = p.roots_settle(_roots(root, before))
    sigma1 = lowest(top)
    r1_back = ~p.covered1 & _always(_play(r1 != 0)) & headed1 & p.tree_settles(1)
    then = torch.where(
        _play(top.any(1) & (sigma1 != 0)),
        torch.where(_play(w.at(head, sigma1) < 0), 0, p.roots_settle(_roots(root, top)) | r1_back),
        r1_back,
    )
    completes = completes | torch.where(_play(headless_below.any(1)), 0, then)
    completes = (_always(_play(w.root_free)) & p.no_root_arc) | completes
    finishes = legal & torch.where(headed2, p.tree_settles(2), completes) & EVERY_CHOICE
    found = finishes.flatten(1).ne(0).any(1) & tried
    return found.view(rows, depths).any(1)


def _roots(root: Tensor, words: Tensor) -> Tensor:
    """The set of tree roots of ``words [R, W]``, as a mask over the words."""
    return torch.zeros_like(root).scatter_add(1, root, words.long()).ne(0)


def both_registers_completable(w: Words, depths: int) -> Tensor:
    """Empty buffer, both registers held: exact completability, with R2 = n by G2 (for
    stacks of fewer than ``depths`` words), with R2 < n by G1 or T."""
    below_n = clear_returns_sigma1(w) | clear_ends_the_parse(w)
    return torch.where(w.r2 == w.n, clear_returns_r2(w, depths), below_n)


SLICE_ELEMENTS = 1 << 22
"""The size :func:`search_some` aims its slices' largest tensors at when it searches every
wanted row (``[rows × depths, W, W]``, 16 MB as int32)."""


def search_some(
    w: Words, wanted: Tensor, limit: int | None, group: int = 1, depths: int | None = None
) -> tuple[Tensor, Tensor]:
    """``(searched, completable)``: :func:`both_registers_completable` on the rows of
    ``wanted`` (R2 = n with stacks of fewer than ``depths`` words; None: the width, which
    holds every stack), at most ``limit`` of them (a fixed-size pick, without a host read;
    the others stay unsearched), or all of them when ``limit`` is None (found on the host:
    for eager callers only).

    The rows come in consecutive groups of ``group`` (the successors of one configuration,
    which is decided only when all of its wanted ones are): a limited pick takes whole groups,
    the first ones in order whose wanted rows fit in ``limit`` together, skipping a group
    with more than ``limit``.  Taking the first groups rather than any rows lets a caller
    that waits for the search (greedy decoding) always move some configuration on."""
    width = w.head.shape[1]
    depths = width if depths is None else depths
    if limit is None:
        picked = torch.nonzero(wanted).flatten()
        # In slices, since a row holds W² elements per depth of G2: as many rows a slice as
        # keep the largest tensors near SLICE_ELEMENTS (thousands of short rows, dozens of
        # long ones), so that short rows do not pay the search's thousands of operators in
        # many small calls.
        slices = picked.split(max(1, SLICE_ELEMENTS // (depths * width * width)))
        found = torch.cat(
            [wanted[:0], *(both_registers_completable(w.take(s), depths) for s in slices)]
        )
        take = wanted
    else:
        counts = wanted.view(-1, group).sum(1)
        fits = counts <= limit
        taken = fits & (torch.cumsum(counts * fits, 0) <= limit)
        take = wanted & taken[:, None].expand(-1, group).reshape(-1)
        picked = torch.topk(take.long(), min(limit, take.numel()), sorted=False).indices
        found = both_registers_completable(w.take(picked), depths)
    searched = torch.zeros_like(wanted).index_put((picked,), take[picked])
    completable = torch.zeros_like(wanted).index_put((picked,), found & take[picked])
    return searched, completable
