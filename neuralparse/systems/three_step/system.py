"""Three-step non-projective parsing (Lacroix & Béchet 2014) on the tensor state batch.

One :class:`ThreeStep` system runs the three steps of §4 one after the other on each
configuration; the scalar ``step`` says which step a configuration is in:

1. **Step 1**, arc-eager (§4.1, Table 2) over the projectivized tree whose lifted arcs are
   the anchors: the engine's :class:`~neuralparse.systems.arc_eager.ArcEager` transitions,
   legality and oracle, reused unchanged on the same state.
2. **Step 2**, the left-to-right valency pass (Table 3): ``LSHIFT``, ``PUT-VALENCY-SW:l``
   (``↙l``), ``DIST-LEFT:l`` (``↖l``).
3. **Step 3**, its mirror image, right to left (Table 4): ``RSHIFT``, ``PUT-VALENCY-SE:l``
   (``↘l``), ``DIST-RIGHT:l`` (``↗l``).
4. Done (``DONE``, terminal).

The semantics, the decisions taken where the paper is inconsistent and the composed static
oracle are those of :mod:`neuralparse.systems.three_step.reference` (the readable reference
this module is tested against): PutValency does not move the word, one valency per word and
pass and no Dist after it, Dist(l) pairs the focus word with the nearest unconsumed ``l``
valency (First Available), only if the result stays a tree, and a word re-headed in step 2
takes no valency in step 3.  A recovered arc replaces its dependent's anchor.

Representation and cost.  θ is kept, per configuration, for the pass under way (each pass
starts with an empty θ): per label, the nearest unconsumed word ``tops[l]`` (cleared when
step 3 starts: O(L), not O(n)) and a ``prev`` link to the next one, and per word the step in
which it put its valency (``valency_step``, so that step 3 needs no reset of a word-indexed
array): FA pairing is LIFO per label, so PutValency pushes and Dist pops in O(1), and
"consumed" is implicit (popped).  The tree being corrected is a dense
``heads``/``labels`` array per configuration (written by step 1 from the arc log as arcs are
built).  These word-indexed arrays are per-word tables (``State.tables``).  Two documented
exceptions to the engine's O(1)-per-configuration rule:

* :meth:`State.reorder` gathers the tables: O(n) per configuration per beam reordering
  (step 1 is unaffected in its own work, but pays the copy too);
* the acyclicity check of Dist (the paper's Table 3 condition omits it; without it, random
  walks produce cycles: design note ``docs/dev/notes/04-three-step.md``): Dist(l) makes the
  focus word the head of the nearest ``l`` valency word, which closes a cycle exactly when
  that word is the focus word or one of its ancestors.  The
  ancestors are found by pointer jumping over the dense head array (:func:`is_ancestor`):
  ⌈log2(n + 1)⌉ rounds of gathers over ``[B, n + 1]``, O(n log n) work per configuration
  and legal mask but a fixed number of tensor operations, none of which reads a value on the
  host.  A check against the spans of step 1's projective tree would be O(1) and is sound
  inside step 2 (every Dist then jumps to a disjoint span on the right, so the right ends of
  spans never decrease along a head chain), but step 3's arcs combined with step 2's can
  still close cycles that such static checks miss.

Every step is a fixed sequence of tensor operations whose shapes depend on the batch and its
padded width only, so greedy decoding and beam search may be recorded as CUDA graphs
(``graph_safe``).  Only on the CPU, where reading a value costs nothing, does a step first
ask which phases (step 1, the passes) hold configurations and skip the operations of an
empty one (:meth:`ThreeStep._busy`), and walk the ancestors for Dist only in the
configurations that have a valency to pair (:meth:`ThreeStep._keeps_a_tree`); the
:meth:`ThreeStep.for_graphs` variant never reads the host.  A graph runs its system's
``max_transitions`` steps whatever the sentences need, and the worst case (8n: every word
putting a valency and taking a Dist in both passes) is twice what derivations take, so the
variant runs a linear budget instead (:func:`graph_valency_budget`) and abandons a
configuration still unfinished after it, which the graph's caller decodes again eagerly.

Features (Table 6): ``s0 s1 s2 b0`` in step 1; in steps 2-3 ``focus`` (the paper's first
buffer word ``w_i``), ``focus_head`` (its current head ``w_j``: the projective one, except in
step 3 for a word step 2 re-headed) and ``theta0``
(the most recent unconsumed valency); :meth:`ThreeStep.valency_features` gives the presence
of each label in θ, which the model reads as the system's summary features
(:meth:`ThreeStep.summary_features`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from types import MappingProxyType
from typing import NamedTuple

import torch
from torch import Tensor

from neuralparse.systems.arc_eager import ArcEager
from neuralparse.systems.arc_standard import single_rooted
from neuralparse.systems.base import Gold, TransitionSystem
from neuralparse.systems.state import State
from neuralparse.systems.three_step.reference import three_step_target

# Transition ids; the first four are arc-eager's, in its own order, so its ids carry over.
ARC_EAGER_TRANSITIONS = 4
LSHIFT, PUT_SW, DIST_LEFT, RSHIFT, PUT_SE, DIST_RIGHT = range(4, 10)
STEP1, STEP2, STEP3, DONE = range(1, 5)
"""Values of the scalar ``step``: the paper's step a configuration is in, or done."""


def is_ancestor(heads: Tensor, candidates: Tensor, word: Tensor) -> Tensor:
    """``[B, L]`` whether ``candidates[b, l]`` is ``word[b]`` or one of its ancestors in the
    forest ``heads [B, W]`` (-1: no head), by pointer jumping (Wyllie 1979).

    In round ``k`` (from 0), ``jump[b, v]`` is the ``2^k``-th ancestor of ``v`` (a word
    without a head is its own, like the root), and appending the chain lifted by ``2^k``
    makes ``chain`` hold ``word`` and its next ``2^(k+1) - 1`` ancestors (the last one
    repeated once a word without a head is reached).  ⌈log2 W⌉ rounds reach every ancestor;
    one scatter marks them.  A fixed number of tensor operations, no host read, whatever the
    trees' depths."""
    width = heads.shape[1]
    columns = torch.arange(width, device=heads.device).expand_as(heads)
    jump = torch.where(heads >= 0, heads, columns)
    chain = word.clamp(0, width - 1)[:, None]
    for level in range((width - 1).bit_length()):  # 2^rounds >= width > any depth
        if level:
            jump = jump.gather(1, jump)
        chain = torch.cat([chain, jump.gather(1, chain)], 1)
    marked = torch.zeros_like(heads, dtype=torch.bool).scatter_(1, chain, True)
    return marked.gather(1, candidates.clamp(0, width - 1))


class PassView(NamedTuple):
    """What the valency passes read of each configuration (:meth:`ThreeStep._pass_view`)."""

    focus: Tensor
    """``[B, 1]`` the focus word, clamped to a column of the per-word tables (a gather index)."""
    tops: Tensor
    """``[B, L]`` θ's nearest unconsumed word of each valency name (-1: none); the table
    itself, so that writing it updates the state."""
    passing: Tensor
    """``[B]`` whether the configuration is in step 2 or 3."""


def write_where(table: Tensor, column: Tensor, where: Tensor, value: Tensor) -> None:
    """``table[b, column[b]] = value[b]`` in the rows where ``where[b]``, in place (``column``,
    ``where`` and ``value`` are ``[B, 1]``); no value is read on the host."""
    table.scatter_(1, column, torch.where(where, value, table.gather(1, column)))


def graph_valency_budget(n: int) -> int:
    """The Dist moves an ``n``-word sentence may take on a CUDA graph
    (:meth:`ThreeStep.for_graphs`), each with its PutValency: a quarter of its words, plus
    four, on top of step 1's 2n transitions and the passes' 2n shifts.  The static oracle's
    derivations of the five shared treebanks' training sentences take 3.79n-3.94n
    transitions on average, and all but one (of 3,386 on Gothic-PROIEL: 49 words, 18
    recovered arcs) fit in this budget, against a worst case of 8n."""
    return n // 4 + 4


class ThreeStepState(State):
    """A :class:`State` whose tree is the dense per-configuration ``heads``/``labels``
    arrays, not the arc log: steps 2-3 re-head words, which the log cannot express (it keeps
    the first arc of each dependent only by the order of an indexed write)."""

    def heads_and_labels(self) -> tuple[Tensor, Tensor]:
        return self.tables["heads"].clone(), self.tables["labels"].clone()


class ThreeStep(TransitionSystem):
    """The three steps of Lacroix & Béchet (2014) as one transition system (see module)."""

    name = "three_step"
    transitions = (
        "SHIFT",
        "REDUCE",
        "LEFT-ARC",
        "RIGHT-ARC",
        "LSHIFT",
        "PUT-VALENCY-SW",
        "DIST-LEFT",
        "RSHIFT",
        "PUT-VALENCY-SE",
        "DIST-RIGHT",
    )
    arc_transitions = frozenset(
        {"LEFT-ARC", "RIGHT-ARC", "PUT-VALENCY-SW", "DIST-LEFT", "PUT-VALENCY-SE", "DIST-RIGHT"}
    )
    """Transitions taking a label (PutValency builds no arc but names its valency)."""
    feature_names = ("s0", "s1", "s2", "b0", "focus", "focus_head", "theta0")
    arc_operands = ArcEager.arc_operands
    """Step 1's arcs; Dist's dependent is the nearest valency of its label, not a feature."""
    graph_safe = True
    derivations_in_class = False  # Dist can build arcs no lifting anchors (see in_class)

    def __init__(self, labels: Sequence[str] = (), *, root_label: str | None = "root") -> None:
        super().__init__(labels, root_label=root_label)
        self.step1 = ArcEager(labels, root_label=root_label)
        self.width = max(1, len(self.labels))  # valency names (one when unlabeled)
        self.summary_size = self.width
        self.skips_idle_phases = True
        """Whether a step on the CPU skips the operations of a phase no configuration is in
        (:meth:`_busy`); False in the :meth:`for_graphs` variant."""
        self._columns: dict[torch.device, Tensor] = {}  # of legal(), per device
        self._actions_of_steps: dict[tuple[torch.device, tuple[int, ...]], Tensor] = {}

    def action_steps(self) -> list[int]:
        """The step (1, 2 or 3) each action belongs to, e.g. for one classifier per step as
        in the paper (MaltParser for step 1, an SVM for steps 2-3, §4.3)."""
        step_of = [1] * ARC_EAGER_TRANSITIONS + [2, 2, 2, 3, 3, 3]
        return [step_of[self.transition_id(self.decode(a)[0])] for a in range(self.num_actions)]

    def step_of(self, state: State) -> Tensor:
        """``[B]`` the step each configuration is in (1-3; 4 = ``DONE`` once terminal)."""
        return state.scalars["step"].clone()

    # -- state ------------------------------------------------------------------------------
    state_class = ThreeStepState
    state_stacks = ArcEager.state_stacks
    state_scalars = MappingProxyType({**ArcEager.state_scalars, "step": STEP1, "focus": 0})
    state_node_attrs = ArcEager.state_node_attrs

    def prepare(self, state: State) -> None:
        """Arc-eager's initial configuration plus the per-word tables of steps 2-3 (the
        documented O(n) per beam reordering), then straight to the step each sentence
        starts in."""
        batch, words = state.batch_size, state.n_max + 1
        dev = state.device

        def full(*shape: int, fill: int = -1) -> Tensor:
            return torch.full(shape, fill, dtype=torch.long, device=dev)

        state.tables.update(
            heads=full(batch, words),
            labels=full(batch, words),
            reheaded=full(batch, words, fill=0),
            valency_step=full(batch, words, fill=0),
            prev=full(batch, words),
            tops=full(batch, self.width),
        )
        self._advance(state)

    def _advance(self, state: State) -> None:
        """Move configurations whose step is over to the next step (chained, so that an
        empty sentence goes straight to DONE)."""
        s = state.scalars
        n = state.lengths
        to2 = (s["step"] == STEP1) & (s["front"] > n)
        s["step"] = torch.where(to2, STEP2, s["step"])
        s["focus"] = torch.where(to2, 1, s["focus"])
        to3 = (s["step"] == STEP2) & (s["focus"] > n)
        s["step"] = torch.where(to3, STEP3, s["step"])
        s["focus"] = torch.where(to3, n, s["focus"])
        # Step 3 starts with an empty θ.  Only the per-label tops need clearing: a word's
        # ``prev`` link is written by its own PutValency before any Dist of this pass reads
        # it, and ``valency_step`` names the pass.
        state.tables["tops"].masked_fill_(to3[:, None], -1)
        done = (s["step"] == STEP3) & (s["focus"] < 1)
        s["step"] = torch.where(done, DONE, s["step"])

    def terminal(self, state: State) -> Tensor:
        return state.scalars["step"] == DONE

    def _busy(self, state: State) -> tuple[bool, bool]:
        """Whether some configuration is in step 1, and whether some is in a valency pass.

        Every operation of a phase is masked to the configurations in it, so skipping those of
        a phase that no configuration is in changes nothing.  On the CPU the read costs next to
        nothing and saves a fifth of the operations of parsing a treebank (most steps of a
        batch of similar lengths find it all in step 1 or all in the passes).  Elsewhere, and
        in the :meth:`for_graphs` variant, both phases count as busy: the read would make the
        host wait for the device, and a CUDA graph records one program for every step."""
        if not self._reads_host(state):
            return True, True
        steps = self._steps_under_way(state)
        return STEP1 in steps, STEP2 in steps or STEP3 in steps

    @staticmethod
    def _steps_under_way(state: State) -> tuple[int, ...]:
        """The steps (1-3) some configuration is in, read on the host."""
        count = torch.bincount(state.scalars["step"], minlength=DONE + 1).tolist()
        return tuple(step for step in (STEP1, STEP2, STEP3) if count[step])

    def _reads_host(self, state: State) -> bool:
        """Whether a step may read values on the host to skip work: on the CPU, outside the
        :meth:`for_graphs` variant."""
        return self.skips_idle_phases and state.device.type == "cpu"

    def for_graphs(self, *, beam: bool = False) -> ThreeStep:
        """The variant that CUDA graphs record (greedy and beam): it never reads the phases
        on the host (:meth:`_busy`), so its steps are the same operations whatever the
        device; its transitions and masks are this system's, for a linear budget of
        transitions (:func:`graph_valency_budget`), past which it abandons a configuration
        (:meth:`abandoned`)."""
        variant = copy.copy(self)
        variant.skips_idle_phases = False
        variant.linear_budget = True
        return variant

    def scored_actions(self, state: State) -> Tensor | None:
        """On the CPU, outside the :meth:`for_graphs` variant: the actions of the steps that
        some configuration is in (each step has its own actions, as the paper has one
        classifier per step, §4.3), so that a batch in one step scores a third of the
        actions; None (all) when every step is under way or none is, and in the variant."""
        if not self._reads_host(state):
            return None
        steps = self._steps_under_way(state)
        if len(steps) in (0, 3):  # all done (a fixed-length loop's extra steps), or all busy
            return None
        key = (state.device, steps)
        if key not in self._actions_of_steps:
            ids = [a for a, step in enumerate(self.action_steps()) if step in steps]
            self._actions_of_steps[key] = torch.tensor(ids, dtype=torch.long, device=state.device)
        return self._actions_of_steps[key]

    # -- reading the valency passes ---------------------------------------------------------
    def _pass_view(self, state: State) -> PassView:
        """The focus word, θ and whether each configuration is in a valency pass."""
        step = state.scalars["step"]
        last_column = state.tables["heads"].shape[1] - 1
        return PassView(
            focus=state.scalars["focus"].clamp(0, last_column)[:, None],
            tops=state.tables["tops"],
            passing=(step == STEP2) | (step == STEP3),
        )

    def valency_features(self, state: State) -> Tensor:
        """``[B, L]`` whether θ holds an unconsumed valency of each label (Table 6)."""
        if not self._busy(state)[1]:
            return torch.zeros(
                (state.batch_size, self.width), dtype=torch.bool, device=state.device
            )
        view = self._pass_view(state)
        return (view.tops >= 0) & view.passing[:, None]

    def summary_features(self, state: State) -> Tensor:
        """:meth:`valency_features` as floats (``summary_size`` = the valency names)."""
        return self.valency_features(state).float()

    # -- legality ---------------------------------------------------------------------------
    def transition_legal(self, state: State) -> tuple[Tensor, Tensor]:
        legal, root_arc, _ = self._legality(state, per_label=False)
        return legal, root_arc

    def legal(self, state: State) -> Tensor:
        """:meth:`transition_legal` spread over the actions, with Dist decided per label:
        one gather from the table ``[legal, legal root arc, Dist-Left(l), Dist-Right(l)]``
        (root-labelled Dist and PutValency never are: they build no root arc)."""
        legal, root_arc, dist = self._legality(state, per_label=True)
        step = state.scalars["step"]
        # Without a root label any legal transition may build the root arc.
        table = torch.cat(
            [
                legal if self.root_label_id < 0 else legal & ~root_arc,
                legal & root_arc,
                dist & (step == STEP2)[:, None],
                dist & (step == STEP3)[:, None],
            ],
            1,
        )
        return table.gather(1, self._legal_columns(state.device).expand(state.batch_size, -1))

    def _legal_columns(self, device: torch.device) -> Tensor:
        """``[A]`` the column of :meth:`legal`'s table that each action reads."""
        if device not in self._columns:
            at, al, _, is_root = self.action_tensors(device)
            count = len(self.transitions)
            columns = at + count * is_root.long()
            for block, transition in enumerate((DIST_LEFT, DIST_RIGHT)):
                per_label = 2 * count + block * self.width + al.clamp(min=0)
                columns = torch.where((at == transition) & ~is_root, per_label, columns)
            self._columns[device] = columns
        return self._columns[device]

    def _legality(self, state: State, *, per_label: bool) -> tuple[Tensor, Tensor, Tensor]:
        """``(legal [B, T], builds a root arc [B, T], Dist legal per label [B, L])``; the
        last is all False unless ``per_label`` (it walks the ancestors)."""
        s = state.scalars
        batch, device = state.batch_size, state.device
        in_step1, in_passes = self._busy(state)
        if in_step1:
            ae_legal, ae_root = self.step1.transition_legal(state)
            ae_legal = ae_legal & (s["step"] == STEP1)[:, None]
        else:
            ae_legal = ae_root = torch.zeros(
                (batch, ARC_EAGER_TRANSITIONS), dtype=torch.bool, device=device
            )
        no = torch.zeros(
            (batch, len(self.transitions) - ARC_EAGER_TRANSITIONS), dtype=torch.bool, device=device
        )
        no_dist = torch.zeros((batch, self.width), dtype=torch.bool, device=device)
        if not in_passes:
            return torch.cat([ae_legal, no], 1), torch.cat([ae_root, no], 1), no_dist
        view = self._pass_view(state)
        # One valency per word and pass, and no Dist after it.
        put_in = state.tables["valency_step"].gather(1, view.focus)[:, 0]
        free = view.passing & (put_in != state.scalars["step"])
        put = free & (state.tables["reheaded"].gather(1, view.focus)[:, 0] == 0)
        pairable = (view.tops >= 0) & free[:, None]
        dist = pairable.any(1)
        step2 = s["step"] == STEP2
        step3 = s["step"] == STEP3
        legal = torch.cat(
            [
                ae_legal,
                torch.stack([step2, put & step2, dist & step2], 1),
                torch.stack([step3, put & step3, dist & step3], 1),
            ],
            1,
        )
        per_label_dist = self._keeps_a_tree(state, view, pairable) if per_label else no_dist
        return legal, torch.cat([ae_root, no], 1), per_label_dist

    def _keeps_a_tree(self, state: State, view: PassView, pairable: Tensor) -> Tensor:
        """``[B, L]`` the labels of ``pairable`` whose Dist keeps the structure a tree: the
        nearest valency word is neither the focus word nor one of its ancestors.  On the CPU
        the ancestors are walked only in the configurations with a valency to pair: a pass
        mostly shifts, and the walk costs O(n log n) per configuration."""
        heads, focus = state.tables["heads"], view.focus[:, 0]
        if not self._reads_host(state):
            return pairable & ~is_ancestor(heads, view.tops, focus)
        pairing = pairable.any(1).nonzero().flatten()
        if pairing.numel():
            pairable = pairable.clone()
            pairable[pairing] &= ~is_ancestor(heads[pairing], view.tops[pairing], focus[pairing])
        return pairable

    # -- transitions ------------------------------------------------------------------------
    def apply_transitions(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        s = state.scalars
        in_step1, in_passes = self._busy(state)
        if in_step1:
            self._apply_step1(
                state,
                active & (s["step"] == STEP1),
                transitions.clamp(max=ARC_EAGER_TRANSITIONS - 1),
                labels,
            )
        if in_passes:
            self._apply_passes(state, active, transitions, labels)
        self._advance(state)

    def _apply_passes(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        """The transitions of steps 2-3 (Tables 3-4) where ``active``; in place (``reorder``
        gives every derived state its own copies of the tables)."""
        s, tables = state.scalars, state.tables
        view = self._pass_view(state)
        label = labels.clamp(min=0)[:, None]  # the single valency name when unlabeled
        shift = active & ((transitions == LSHIFT) | (transitions == RSHIFT))
        put = (active & ((transitions == PUT_SW) | (transitions == PUT_SE)))[:, None]
        dist = (active & ((transitions == DIST_LEFT) | (transitions == DIST_RIGHT)))[:, None]
        # PutValency(l): push the focus word on label l's FA stack.
        top_l = view.tops.gather(1, label)
        write_where(tables["valency_step"], view.focus, put, s["step"][:, None])
        write_where(tables["prev"], view.focus, put, top_l)
        # Dist(l): pop the nearest unconsumed l valency and make the focus word its head.
        dependent = top_l.clamp(min=0)
        below = tables["prev"].gather(1, dependent)
        view.tops.scatter_(1, label, torch.where(put, view.focus, torch.where(dist, below, top_l)))
        write_where(tables["heads"], dependent, dist, view.focus)
        write_where(tables["labels"], dependent, dist, labels[:, None])
        write_where(tables["reheaded"], dependent, dist, torch.ones_like(dependent))
        direction = torch.where(s["step"] == STEP2, 1, -1)
        s["focus"] = torch.where(shift, s["focus"] + direction, s["focus"])

    def _apply_step1(
        self, state: State, active: Tensor, transitions: Tensor, labels: Tensor
    ) -> None:
        """Arc-eager's own transition, then its newest logged arc copied into the dense tree."""
        before = state.log
        self.step1.apply_transitions(state, active, transitions, labels)
        if state.log is before or state.log is None:
            return
        dep, head, label = state.log.tensors
        built, column = (dep >= 0)[:, None], dep.clamp(min=0)[:, None]
        write_where(state.tables["heads"], column, built, head[:, None])
        write_where(state.tables["labels"], column, built, label[:, None])

    # -- features ---------------------------------------------------------------------------
    def features(self, state: State) -> Tensor:
        in_step1, in_passes = self._busy(state)
        none = torch.full((state.batch_size, 4), -1, device=state.device)
        if in_step1:
            step1 = torch.cat([state.stack_tokens("stack", 3), state.buffer_tokens(1)], 1)
            step1 = torch.where((state.scalars["step"] == STEP1)[:, None], step1, none)
        else:
            step1 = none
        passes = self._pass_features(state) if in_passes else none[:, :3]
        return torch.cat([step1, passes], 1)

    def _pass_features(self, state: State) -> Tensor:
        """``[B, 3]`` the features of steps 2-3: ``focus``, ``focus_head``, ``theta0``."""
        view = self._pass_view(state)
        focus_head = state.tables["heads"].gather(1, view.focus)
        # The most recent valency: the nearest to the focus in visiting order.
        left_to_right = state.scalars["step"] == STEP2
        tops = view.tops
        latest = torch.where(
            left_to_right,
            tops.max(1).values,
            torch.where(tops >= 0, tops, state.tables["heads"].shape[1]).min(1).values,
        )
        latest = torch.where((tops >= 0).any(1), latest, -1)
        passes = torch.cat([view.focus, focus_head, latest[:, None]], 1)
        return torch.where(view.passing[:, None], passes, -1)

    # -- oracle -----------------------------------------------------------------------------
    def gold(self, trees: Sequence[tuple[Sequence[int], Sequence[str] | None]], device) -> Gold:
        """The gold tensors plus step 1's projectivized tree (``projective_heads``,
        ``projective_children``) and, per recovered non-projective arc, its dependent's pass
        (``np_step``: ``STEP2``, ``STEP3``, or 0 for none) and head (``np_head``)."""
        gold = super().gold(trees, device)
        width = gold.heads.shape[1]
        tables = {
            key: torch.full((len(trees), width), fill, dtype=torch.long)
            for key, fill in (
                ("projective_heads", -1),
                ("projective_children", 0),
                ("np_step", 0),
                ("np_head", -1),
            )
        }
        for b, (heads, deprels) in enumerate(trees):
            target = three_step_target(heads, deprels if self.labels else None)
            n = len(heads)
            projective = torch.tensor(target.projective_heads, dtype=torch.long)
            tables["projective_heads"][b, 1 : n + 1] = projective
            tables["projective_children"][b].scatter_add_(
                0, projective, torch.ones(n, dtype=torch.long)
            )
            for arc in target.recovered:
                tables["np_step"][b, arc.dependent] = STEP2 if arc.direction == "left" else STEP3
                tables["np_head"][b, arc.dependent] = arc.head
        gold.extra.update({k: v.to(gold.heads.device) for k, v in tables.items()})
        return gold

    def oracle_actions(self, state: State, gold: Gold) -> Tensor:
        s = state.scalars
        # Step 1: arc-eager's oracle on the projectivized tree (anchors carry the gold label).
        projective = Gold(
            gold.extra["projective_heads"],
            gold.labels,
            gold.extra["projective_children"],
            gold.attached,
        )
        ae_at, ae_al, _, _ = self.step1.action_tensors(state.device)
        ae_action = self.step1.oracle_actions(state, projective)
        step1 = self.actions_for(ae_at[ae_action], ae_al[ae_action])
        # Steps 2-3: Dist for a label whose nearest valency belongs to an arc headed here,
        # else PutValency if the focus is a recovered dependent of this pass, else Shift.
        view = self._pass_view(state)
        step = s["step"]
        candidate = view.tops.clamp(min=0)
        pairs = (
            (view.tops >= 0)
            & (gold.extra["np_head"].gather(1, candidate) == view.focus)
            & (gold.extra["np_step"].gather(1, candidate) == step[:, None])
        )
        dist_label = pairs.long().argmax(1)
        has_valency = state.tables["valency_step"].gather(1, view.focus)[:, 0] == step
        put = (gold.extra["np_step"].gather(1, view.focus)[:, 0] == step) & ~has_valency
        put_label = gold.labels.gather(1, view.focus)[:, 0]
        step2 = step == STEP2
        transition = torch.where(
            pairs.any(1),
            torch.where(step2, DIST_LEFT, DIST_RIGHT),
            torch.where(
                put, torch.where(step2, PUT_SW, PUT_SE), torch.where(step2, LSHIFT, RSHIFT)
            ),
        )
        label = torch.where(pairs.any(1), dist_label, put_label)
        passes = self.actions_for(transition, label)
        return torch.where(step == STEP1, step1, passes)

    def in_class(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> bool:
        """Whether the composed oracle reproduces the tree exactly: single-rooted and no two
        lifted arcs with the same direction and label cross strictly (labels ignored when
        the system is unlabeled or none are given)."""
        if not single_rooted(heads):
            return False
        target = three_step_target(heads, deprels if self.labels else None)
        return not target.unrecovered

    def max_transitions(self, n: int) -> int:
        # Step 1 at most 2n; each pass n shifts, at most n valencies and n Dist moves.
        if self.linear_budget:
            return min(4 * n + 2 * graph_valency_budget(n), 8 * n)
        return 8 * n
