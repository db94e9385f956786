"""Three-step parsing (Lacroix & Béchet 2014): targets, the valency passes, the composed oracle
on the reference configurations and on the tensor engine."""

from __future__ import annotations

import itertools
import random

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.io import iter_conllu
from neuralparse.systems import ArcEager, random_actions, replay, run_oracle
from neuralparse.systems.three_step import STEP1, ThreeStep, is_ancestor
from neuralparse.systems.three_step.reference import (
    DIST,
    PUT_VALENCY,
    SHIFT,
    ValencyPassConfig,
    is_fully_recoverable,
    run_valency_passes,
    three_step_target,
    valency_oracle,
)
from neuralparse.trees.core import arcs_cross, check_tree, is_projective
from neuralparse.trees.lifting import lift
from tests.conftest import shared_treebanks
from tests.trees_strategies import projective_trees, trees


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """The engine works on small tensors: on a shared 2-core machine intra-op threads only
    contend (10x slower measured).  Restored after the module."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# "Il y est allé , soutenu par sa famille ." (Figures 2-3).  Reconstruction: Figure 3 gives
# the two non-projective arcs (4, clit-l-obj, 2) and (1, modif, 6) of Table 5 and the labels
# pred, aux-l, det, prepos-A, Agent, fs, S, cm; the figure's drawing is lost in the text, so
# the projective arcs follow the English Figure 1 and CDG conventions: est heads the clause
# (S from w0; UD's `root` label here), pred -> Il, aux-l -> allé, fs -> '.', soutenu heads
# its agent phrase (Agent -> par, prepos-A -> famille, det -> sa) and its comma (cm).
# Lifting gives the Figure 2 anchors est -> y (clit-l-obj) and est -> soutenu (modif).
WORDS = ["Il", "y", "est", "allé", ",", "soutenu", "par", "sa", "famille", "."]
HEADS = [3, 4, 0, 3, 6, 1, 6, 9, 7, 3]
DEPRELS = ["pred", "clit-l-obj", "root", "aux-l", "cm", "modif", "Agent", "det", "prepos-A", "fs"]
LABELS = sorted(set(DEPRELS))


@st.composite
def labelled_trees(draw: st.DrawFn, max_words: int = 12) -> tuple[list[int], list[str]]:
    """Random trees with two word-to-word labels, so that same-label crossings are common."""
    heads = draw(trees(min_words=1, max_words=max_words))
    deprels = ["root" if h == 0 else draw(st.sampled_from(["a", "b"])) for h in heads]
    return heads, deprels


def fa_conflict(heads: list[int], deprels: list[str]) -> bool:
    """The criterion of design note 04 (item 3), computed independently of the module: two
    lifted arcs with the same direction and label cross strictly."""
    lifted = lift(heads, "projective", deprels).lifted_dependents
    arcs = [(original, d) for d, original in lifted.items()]
    for (h1, d1), (h2, d2) in itertools.combinations(arcs, 2):
        same_direction = (h1 > d1) == (h2 > d2)
        if same_direction and deprels[d1 - 1] == deprels[d2 - 1] and arcs_cross((h1, d1), (h2, d2)):
            return True
    return False


# -- targets ------------------------------------------------------------------------------
def test_figure2_anchors_from_lifting() -> None:
    target = three_step_target(HEADS, DEPRELS)
    assert is_projective(target.projective_heads)
    # Figure 2: y and soutenu hang from est (3) by their anchors, the rest is unchanged.
    assert target.projective_heads == [3, 3, 0, 3, 6, 3, 6, 9, 7, 3]
    assert [(a.dependent, a.head, a.label, a.anchor, a.direction) for a in target.recovered] == [
        (2, 4, "clit-l-obj", 3, "left"),
        (6, 1, "modif", 3, "right"),
    ]
    assert target.final_heads == HEADS and not target.unrecovered


def test_fa_conflict_leaves_one_arc_on_its_anchor() -> None:
    # 1 <- 3 and 2 <- 4 (both heads to the right, label a) cross strictly; 5 is the root.
    heads, deprels = [3, 4, 5, 5, 0], ["a", "a", "b", "b", "root"]
    target = three_step_target(heads, deprels)
    assert len(target.unrecovered) == 1 and len(target.recovered) == 1
    assert not is_fully_recoverable(heads, deprels)
    # With different labels FA pairs them correctly.
    assert is_fully_recoverable(heads, ["a", "c", "b", "b", "root"])


# -- Table 5, step by step ----------------------------------------------------------------
def test_table5_left_pass_step_by_step() -> None:
    target = three_step_target(HEADS, DEPRELS)
    config = ValencyPassConfig.initial("left", target.projective_heads, target.deprels)
    assert (config.stack, config.buffer[:1], config.theta) == ([0], [1], [])
    config.apply((SHIFT, None))
    assert (config.stack, config.buffer[0], config.theta) == ([0, 1], 2, [])
    config.apply((PUT_VALENCY, "clit-l-obj"))  # does not move y (Table 5, not Table 3)
    assert (config.stack, config.buffer[0], config.theta) == ([0, 1], 2, [(2, "clit-l-obj")])
    config.apply((SHIFT, None))
    config.apply((SHIFT, None))
    assert (config.stack[-1], config.buffer[0]) == (3, 4)
    config.apply((DIST, "clit-l-obj"))
    assert config.arcs == [(4, "clit-l-obj", 2)] and config.theta == []
    assert config.buffer[0] == 4
    # Table 5 says "Shift (x6)", but 7 words (allé .. .) are left in the buffer.
    for _ in range(7):
        config.apply((SHIFT, None))
    assert config.is_terminal() and config.buffer == [] and config.stack == list(range(11))


def test_table5_right_pass_step_by_step() -> None:
    target = three_step_target(HEADS, DEPRELS)
    left = valency_oracle(target)
    heads_after_step2 = [3, 4, 0, 3, 6, 3, 6, 9, 7, 3]
    config = ValencyPassConfig.initial(
        "right", heads_after_step2, DEPRELS, [i == 2 for i in range(1, 11)]
    )
    assert left.step2 == [
        (SHIFT, None), (PUT_VALENCY, "clit-l-obj"), (SHIFT, None), (SHIFT, None),
        (DIST, "clit-l-obj"), *[(SHIFT, None)] * 7,
    ]  # fmt: skip
    # Mirror image: ([w0..wn], [], ...) with the focus on the stack top.
    assert (config.stack, config.buffer) == (list(range(11)), [])
    for _ in range(4):  # Table 5: RShift, RShift (x3)
        config.apply((SHIFT, None))
    assert config.stack[-1] == 6 and config.buffer == [7, 8, 9, 10]
    config.apply((PUT_VALENCY, "modif"))
    assert config.theta == [(6, "modif")]
    for _ in range(5):  # RShift (x5)
        config.apply((SHIFT, None))
    assert config.stack == [0, 1]
    config.apply((DIST, "modif"))  # the paper's DistLeft(↙modif), i.e. Dist-Right(↗modif)
    assert config.arcs == [(1, "modif", 6)] and config.theta == []
    config.apply((SHIFT, None))
    assert config.is_terminal() and (config.stack, config.buffer) == ([0], list(range(1, 11)))
    assert config.tree() == (HEADS, DEPRELS)
    assert left.step3 == [
        *[(SHIFT, None)] * 4, (PUT_VALENCY, "modif"), *[(SHIFT, None)] * 5,
        (DIST, "modif"), (SHIFT, None),
    ]  # fmt: skip


def test_table5_on_the_engine() -> None:
    system = ThreeStep(LABELS)
    result = run_oracle(system, [(HEADS, DEPRELS)])
    assert result.reproduced == [True]
    names = [system.action_name(a) for a in result.actions[0]]
    first_pass = names.index("LSHIFT")
    assert names[first_pass:] == [
        "LSHIFT", "PUT-VALENCY-SW:clit-l-obj", "LSHIFT", "LSHIFT", "DIST-LEFT:clit-l-obj",
        *["LSHIFT"] * 7,
        *["RSHIFT"] * 4, "PUT-VALENCY-SE:modif", *["RSHIFT"] * 5, "DIST-RIGHT:modif", "RSHIFT",
    ]  # fmt: skip
    # Step 1 is arc-eager's own oracle on the projectivized tree.
    step1 = ArcEager(LABELS).oracle(three_step_target(HEADS, DEPRELS).projective_heads, DEPRELS)
    assert names[:first_pass] == [ArcEager(LABELS).action_name(a) for a in step1]


def test_action_steps() -> None:
    system = ThreeStep(LABELS)
    steps = system.action_steps()
    assert steps[system.encode("RIGHT-ARC", "pred")] == 1
    assert steps[system.encode("DIST-LEFT", "pred")] == 2
    assert steps[system.encode("RSHIFT")] == 3
    state = system.initial([10, 0])
    assert system.step_of(state).tolist() == [1, 4]  # the empty sentence is terminal at once


def test_features_in_the_passes() -> None:
    system = ThreeStep(LABELS)
    actions = run_oracle(system, [(HEADS, DEPRELS)]).actions[0]
    state = system.initial([10])
    seen = []
    for action in actions:
        system.apply(state, torch.tensor([action]))
        if int(state.scalars["step"][0]) != STEP1:
            features = dict(
                zip(system.feature_names, system.features(state)[0].tolist(), strict=True)
            )
            present = system.valency_features(state)[0]
            seen.append(
                (features["focus"], features["focus_head"], features["theta0"], int(present.sum()))
            )
    # After PUT-VALENCY on y (2): focus y, its projective head est (3), θ = (y).
    assert (2, 3, 2, 1) in seen
    # Step 3 at Il (1) before Dist: θ holds soutenu (6); Il's head is est (3).
    assert (1, 3, 6, 1) in seen


# -- the reference passes -----------------------------------------------------------------
@given(labelled_trees())
def test_composed_oracle_reproduces_exactly_the_fa_compatible_trees(tree) -> None:
    heads, deprels = tree
    target = three_step_target(heads, deprels)
    derived = valency_oracle(target)
    assert (derived.heads, derived.deprels) == (target.final_heads, deprels)
    exact = derived.heads == heads
    assert exact == (not fa_conflict(heads, deprels)) == is_fully_recoverable(heads, deprels)
    # Only the unrecovered lifted arcs differ from gold, and they sit on their anchors.
    wrong = {d for d in range(1, len(heads) + 1) if derived.heads[d - 1] != heads[d - 1]}
    assert wrong == {a.dependent for a in target.unrecovered}


@given(labelled_trees())
def test_recovered_set_is_largest(tree) -> None:
    """No larger subset of the lifted arcs is free of same-label, same-direction crossings."""
    heads, deprels = tree
    target = three_step_target(heads, deprels)
    lifted = target.recovered + target.unrecovered
    if len(lifted) > 8:
        return
    for subset in itertools.combinations(lifted, len(target.recovered) + 1):
        assert any(
            a.direction == b.direction
            and a.label == b.label
            and arcs_cross((a.head, a.dependent), (b.head, b.dependent))
            for a, b in itertools.combinations(subset, 2)
        )


@given(projective_trees(min_words=1, max_words=10), st.randoms(use_true_random=False))
def test_random_walks_of_the_passes_are_sound(heads, rnd) -> None:
    deprels = ["root" if h == 0 else "a" for h in heads]
    labels = ["a", "b"]
    reheaded = None
    current = list(heads), deprels
    n = len(heads)
    for direction in ("left", "right"):
        config = ValencyPassConfig.initial(direction, *current, reheaded)
        steps = 0
        while not config.is_terminal():
            legal = config.legal_actions(labels)
            assert legal, "dead end"
            config.apply(rnd.choice(legal))
            steps += 1
            check_tree(config.heads[1:], single_root=True)
        assert steps <= 3 * n
        twice = [w for w in range(1, n + 1) if reheaded and reheaded[w - 1] and config.valency[w]]
        assert not twice, "a word re-headed in step 2 took a valency in step 3"
        current = config.tree()
        reheaded = config.reheaded[1:]


def test_dist_refuses_a_cycle() -> None:
    # Word 2 is the root word and heads 1 and 3: 3 may not become the head of 2.
    config = ValencyPassConfig.initial("left", [2, 0, 2], ["a", "root", "a"])
    config.apply((SHIFT, None))  # focus 2
    config.apply((PUT_VALENCY, "a"))  # 2 (the root word) takes a valency
    config.apply((SHIFT, None))  # focus 3, a dependent of 2
    assert not config.is_legal((DIST, "a"))  # 3 -> 2 would close the cycle 2 -> 3 -> 2
    assert config.is_legal((SHIFT, None))


@given(
    st.lists(trees(min_words=1, max_words=40), min_size=1, max_size=4),
    st.integers(0, 2**31 - 1),
)
def test_pointer_jumping_finds_exactly_the_ancestors(batch, seed) -> None:
    """``is_ancestor`` against a walk up the heads, on trees of several sizes padded to one
    width, with some words detached (headless, as in step 1) and null candidates."""
    rnd = random.Random(seed)
    width = 1 + max(map(len, batch))
    heads = torch.full((len(batch), width), -1)
    for b, tree in enumerate(batch):
        heads[b, 1 : len(tree) + 1] = torch.tensor([-1 if rnd.random() < 0.1 else h for h in tree])
    words = torch.tensor([rnd.randint(0, len(tree)) for tree in batch])
    candidates = torch.tensor([[rnd.randint(-1, width - 1) for _ in range(5)] for _ in batch])
    got = is_ancestor(heads, candidates, words).tolist()
    for b in range(len(batch)):
        ancestors, v = set(), int(words[b])
        while v >= 0:
            ancestors.add(v)
            v = int(heads[b, v])
        for c, hit in zip(candidates[b].tolist(), got[b], strict=True):
            if c >= 0:
                assert hit == (c in ancestors)


def test_illegal_action_raises() -> None:
    config = ValencyPassConfig.initial("left", [0], ["root"])
    with pytest.raises(ValueError):
        config.apply((DIST, "a"))


# -- the engine against the reference ----------------------------------------------------
PASS_KINDS = {
    "LSHIFT": SHIFT,
    "PUT-VALENCY-SW": PUT_VALENCY,
    "DIST-LEFT": DIST,
    "RSHIFT": SHIFT,
    "PUT-VALENCY-SE": PUT_VALENCY,
    "DIST-RIGHT": DIST,
}
STEP2_NAMES = {"LSHIFT", "PUT-VALENCY-SW", "DIST-LEFT"}


def _pass_actions(names: list[str]) -> list[tuple[str, str | None]]:
    """Engine action names of steps 2-3 as reference actions."""
    return [
        (PASS_KINDS[transition], label or None)
        for transition, _, label in (name.partition(":") for name in names)
    ]


@given(st.lists(st.integers(1, 10), min_size=1, max_size=6), st.integers(0, 2**31 - 1))
def test_engine_random_walks_agree_with_the_reference(lengths, seed) -> None:
    labels = ["a", "b", "root"]
    system = ThreeStep(labels)
    generator = torch.Generator().manual_seed(seed)
    state = system.initial(lengths)
    taken: list[list[str]] = [[] for _ in lengths]
    legal_seen: list[list[set[str]]] = [[] for _ in lengths]
    for _ in range(system.max_transitions(max(lengths))):
        terminal = system.terminal(state)
        if bool(terminal.all()):
            break
        legal = system.legal(state)
        assert bool((legal.any(1) | terminal).all()), "dead end"
        actions = random_actions(legal, generator)
        for b in range(len(lengths)):
            if not terminal[b]:
                taken[b].append(system.action_name(int(actions[b])))
                legal_seen[b].append(
                    {system.action_name(a) for a in legal[b].nonzero()[:, 0].tolist()}
                )
        system.apply(state, actions)
    assert bool(system.terminal(state).all())
    heads, out_labels = system.heads_and_labels(state)
    eager = ArcEager(labels)
    for b, n in enumerate(lengths):
        split = next(i for i, name in enumerate(taken[b]) if name.partition(":")[0] in PASS_KINDS)
        step1 = [eager.encode(*name.split(":")) for name in taken[b][:split]]
        eager_state, ok = replay(eager, [step1], [n])
        assert ok == [True]
        p_heads, p_labels = eager_state.heads_and_labels()
        projective = p_heads[0, 1 : n + 1].tolist()
        projective_labels = [labels[x] for x in p_labels[0, 1 : n + 1].tolist()]
        names = taken[b][split:]
        in_step2 = [x.partition(":")[0] in STEP2_NAMES for x in names]
        step2 = _pass_actions([x for x, two in zip(names, in_step2, strict=True) if two])
        step3 = _pass_actions([x for x, two in zip(names, in_step2, strict=True) if not two])
        derived = run_valency_passes(projective, projective_labels, step2, step3)
        assert heads[b, 1 : n + 1].tolist() == derived.heads
        assert [labels[x] for x in out_labels[b, 1 : n + 1].tolist()] == derived.deprels
        check_tree(derived.heads, single_root=True)
        # Legal sets agree with the reference at every pass step.
        reheaded = None
        tree = (projective, projective_labels)
        position = split
        for direction, actions in (("left", step2), ("right", step3)):
            config = ValencyPassConfig.initial(direction, *tree, reheaded)
            for action in actions:
                # The root label is for root arcs only (UD rule): never a valency.
                reference = set(config.legal_actions(["a", "b"]))
                engine = set(_pass_actions(sorted(legal_seen[b][position])))
                assert engine == reference
                config.apply(action)
                position += 1
            tree, reheaded = config.tree(), config.reheaded[1:]


@given(
    st.lists(st.integers(0, 10), min_size=1, max_size=6),
    st.integers(0, 2**31 - 1),
    st.booleans(),
)
def test_skipping_idle_phases_changes_nothing(lengths, seed, equal) -> None:
    """On the CPU a step skips the operations of a phase no configuration is in, and walks
    the ancestors for Dist only where a valency is open; the variant that CUDA graphs record
    never reads the host.  Both see the same features, summary and
    legal actions at every step of a random walk, and build the same trees; equal lengths
    keep a batch in one phase for most steps, mixed ones in both."""
    lengths = [lengths[0]] * len(lengths) if equal else lengths
    skipping = ThreeStep(["a", "b", "root"])
    every_step = skipping.for_graphs()
    assert skipping.skips_idle_phases and not every_step.skips_idle_phases
    generator = torch.Generator().manual_seed(seed)
    state, twin = skipping.initial(lengths), every_step.initial(lengths)
    for _ in range(skipping.max_transitions(max(lengths))):
        legal = skipping.legal(state)
        assert torch.equal(legal, every_step.legal(twin))
        assert torch.equal(skipping.features(state), every_step.features(twin))
        assert torch.equal(skipping.summary_features(state), every_step.summary_features(twin))
        actions = random_actions(legal, generator)
        skipping.apply(state, actions)
        every_step.apply(twin, actions)
        assert torch.equal(state.scalars["step"], twin.scalars["step"])
    assert bool(skipping.terminal(state).all())
    heads, labels = skipping.heads_and_labels(state)
    twin_heads, twin_labels = every_step.heads_and_labels(twin)
    assert torch.equal(heads, twin_heads) and torch.equal(labels, twin_labels)


@given(st.lists(labelled_trees(max_words=10), min_size=1, max_size=8))
def test_engine_oracle_batched_matches_the_reference(batch) -> None:
    system = ThreeStep(["a", "b", "root"])
    result = run_oracle(system, batch)
    for b, (heads, deprels) in enumerate(batch):
        target = three_step_target(heads, deprels)
        n = len(heads)
        assert result.heads[b, 1 : n + 1].tolist() == target.final_heads
        assert result.reproduced[b] == is_fully_recoverable(heads, deprels)
        assert system.in_class(heads, deprels) == result.reproduced[b]
        assert len(result.actions[b]) <= system.max_transitions(n)


def test_beam_reorder_keeps_configurations_apart() -> None:
    system = ThreeStep(LABELS)
    actions = run_oracle(system, [(HEADS, DEPRELS)]).actions[0]
    put = actions.index(system.encode("PUT-VALENCY-SW", "clit-l-obj"))
    dist = actions.index(system.encode("DIST-LEFT", "clit-l-obj"))
    state = system.initial([10])
    for action in actions[:put]:
        system.apply(state, torch.tensor([action]))
    state = system.reorder(state, torch.tensor([0, 0]))
    # Item 0 follows the oracle; item 1 skips the clitic's valency (and so its Dist).
    sequences = [
        actions[put:],
        [a for i, a in enumerate(actions) if i >= put and i not in (put, dist)],
    ]
    for step in range(len(sequences[0])):
        chosen = [seq[step] if step < len(seq) else 0 for seq in sequences]
        system.apply(state, torch.tensor(chosen))
    assert bool(system.terminal(state).all())
    heads, _ = system.heads_and_labels(state)
    assert heads[0, 1:].tolist() == HEADS
    # Item 1 keeps y on its anchor est (3) and still finds (1, modif, 6).
    assert heads[1, 1:].tolist() == [3, 3, 0, 3, 6, 1, 6, 9, 7, 3]


def test_unlabeled_system() -> None:
    system = ThreeStep()
    result = run_oracle(system, [(HEADS, None), ([3, 4, 5, 5, 0], None)])
    # Unlabeled, the two lifted left arcs of the second tree cross: one stays on its anchor.
    assert result.reproduced == [True, False]
    assert system.in_class(HEADS) and not system.in_class([3, 4, 5, 5, 0])


@pytest.mark.treebank
@pytest.mark.parametrize("treebank", shared_treebanks(), ids=lambda p: p.name)
def test_treebank_slice_round_trips_batched(treebank, ud_root) -> None:
    sentences = list(itertools.islice(iter_conllu(treebank / "train.conllu"), 120))
    system = ThreeStep(sorted({d for s in sentences for d in s.deprels}))
    trees_ = [(s.heads, s.deprels) for s in sentences]
    result = run_oracle(system, trees_)
    for (heads, deprels), reproduced, b in zip(trees_, result.reproduced, itertools.count()):
        assert reproduced == is_fully_recoverable(heads, deprels)
        n = len(heads)
        assert result.heads[b, 1 : n + 1].tolist() == three_step_target(heads, deprels).final_heads
