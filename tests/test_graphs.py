"""Greedy decoding and beam search for CUDA graphs (neuralparse.search.graphs), on the CPU.

What a graph needs from a system (no host synchronisation per step, a linear step bound) is
checked by running steps under an operator census; the fixed-length, padded, bucketed loop
that a graph records is run eagerly and must give greedy_decode's (beam_decode's) trees.
Recording and replaying itself needs a GPU: ``python -m benchmarks.throughput --device cuda``
compares both there.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from neuralparse.search import greedy_decode
from neuralparse.search.beam import beam_decode, fixed_length_beam
from neuralparse.search.graphs import (
    GraphCache,
    GraphedSearch,
    fixed_length_greedy,
    supports_graphs,
)
from neuralparse.systems import SYSTEMS, get_system, random_actions
from neuralparse.systems.planar import system as planar_system
from neuralparse.systems.three_step import system as three_step_system
from neuralparse.systems.two_registers import system as two_registers_system
from tests.test_greedy import _setup

aten = torch.ops.aten
SYNCHRONISING = {
    aten._local_scalar_dense.default,  # .item(), bool(), int() of a tensor
    aten.is_nonzero.default,
    aten.nonzero.default,
    aten.masked_select.default,
    aten.equal.default,
    aten.repeat_interleave.Tensor,
}
INDEXING = {aten.index.Tensor, aten.index_put.default, aten.index_put_.default}
GRAPH_SAFE = [name for name in SYSTEMS if get_system(name).graph_safe]
GREEDY_GRAPHS = [name for name in SYSTEMS if get_system(name).for_graphs() is not None]
"""Systems whose greedy decoding graphs record: the graph-safe ones and those with a
host-free variant that abandons rare configurations (two-registers) or configurations past a
linear step budget (swap; also three-step, two-planar and two-registers, whose worst cases
are far above their derivations)."""
BEAM_GRAPHS = [name for name in SYSTEMS if get_system(name).for_graphs(beam=True) is not None]
"""Systems whose beam search graphs record: the same (all nine)."""
BUDGETED = ["two_registers", "swap", "three_step", "two_planar"]
"""Systems whose variant abandons some configurations: where the mask would need the host
(two-registers) or past a linear budget of transitions."""
TIGHTER_BUDGET = {
    "three_step": (three_step_system, "graph_valency_budget"),
    "two_planar": (planar_system, "graph_switch_budget"),
}
"""The budgets that even an untrained scorer stays within: tests that need some sentences
abandoned set them to none (no valency, no SWITCH)."""


def tighten_budget(system_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if system_name in TIGHTER_BUDGET:
        monkeypatch.setattr(*TIGHTER_BUDGET[system_name], lambda n: 0)


class RefuseSynchronisation(TorchDispatchMode):
    """Raises on any operator that makes the host wait for a device's values."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in SYNCHRONISING:
            raise AssertionError(f"{func} synchronises with the device")
        if func is aten.copy_.default and args[1].dim() == 0:
            # ``t[i] = 0`` on a CUDA tensor copies a host scalar (refused during capture).
            raise AssertionError("element assignment copies from the host: use fill_")
        if func in INDEXING and any(
            isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in args[1] or ()
        ):
            raise AssertionError(f"{func} with a boolean mask synchronises with the device")
        return func(*args, **(kwargs or {}))


def test_the_census_catches_synchronisation() -> None:
    x = torch.arange(5)
    for sync in (lambda: bool(x.any()), lambda: x[x > 2], lambda: x.nonzero()):
        with pytest.raises(AssertionError, match="synchronises"), RefuseSynchronisation():
            sync()
    with pytest.raises(AssertionError, match="from the host"), RefuseSynchronisation():
        x[1] = 0
    with RefuseSynchronisation():
        x[1].fill_(0)


def test_graph_safe_systems_include_the_projective_planar_and_three_step_ones() -> None:
    expected = {"arc_standard", "arc_eager", "arc_hybrid", "arc_eager_pp", "planar", "three_step"}
    assert expected <= set(GRAPH_SAFE)
    assert not supports_graphs(get_system("arc_eager"), torch.device("cpu"))


def test_two_registers_and_swap_record_graphs_through_a_variant() -> None:
    assert set(GREEDY_GRAPHS) - set(GRAPH_SAFE) == {"two_registers", "swap"}
    assert set(BEAM_GRAPHS) == set(GREEDY_GRAPHS) == set(SYSTEMS)
    registers = get_system("two_registers")
    assert registers.for_graphs() is not registers and not registers.abandons_slow_rows
    swap = get_system("swap")
    assert swap.for_graphs() is not swap and not swap.linear_budget
    assert swap.max_transitions(100) == 100 * 101 and swap.for_graphs().max_transitions(100) == 258
    for system in (registers, swap):
        assert supports_graphs(system, torch.device("cuda"))
        assert supports_graphs(system, torch.device("cuda"), beam=True)


def test_graphs_run_a_linear_budget_not_the_worst_case() -> None:
    """A graph runs ``max_transitions`` steps whatever the sentences need: the variants of
    three-step and 2-planar run 4n plus a quarter of n and a few more (valencies, SWITCHes)
    instead of 8n, two-registers' 2n and as much more instead of 5n + 5, and they abandon
    what is still unfinished then; planar's bound is its own."""
    three_step, two_planar = get_system("three_step"), get_system("two_planar")
    registers = get_system("two_registers")
    assert three_step.max_transitions(100) == 800
    assert three_step.for_graphs().max_transitions(100) == 400 + 2 * 29
    assert two_planar.max_transitions(100) == 799
    assert two_planar.for_graphs().max_transitions(100) == 399 + 29
    assert registers.max_transitions(100) == 505
    assert registers.for_graphs().max_transitions(100) == 200 + 2 * 29
    for system in (three_step, two_planar, registers):
        variant = system.for_graphs(beam=True)
        assert variant is not system and variant.linear_budget and not system.linear_budget
        assert variant.max_transitions(1) <= system.max_transitions(1)
    planar = get_system("planar")
    assert planar.for_graphs() is planar and planar.max_transitions(100) == 299


def check_graph_safe_steps_never_synchronise(system_name: str, options: dict) -> None:
    """The steps that a greedy graph records (those of ``for_graphs()``), on random walks.
    Run for every system and option that has such steps by
    ``tests/systems/test_contract.py::test_graph_safety_where_declared``."""
    system = get_system(system_name, ["root", "nsubj", "obj"], **options).for_graphs()
    assert system is not None
    lengths = torch.tensor([1, 4, 9, 17])
    with RefuseSynchronisation():
        state = system.initial(lengths, n_max=17)
    generator = torch.Generator().manual_seed(3)
    for _ in range(system.max_transitions(17)):
        legal = system.legal(state)  # outside the census: random_actions may synchronise
        actions = random_actions(legal, generator)
        with RefuseSynchronisation():
            system.features(state)
            system.legal(state)
            system.apply(state, actions)
    with RefuseSynchronisation():
        over = system.abandoned(state)  # swap: past the budget (random walks swap a lot)
    assert bool((system.terminal(state) | over).all())
    with RefuseSynchronisation():
        system.heads_and_labels(state)


def check_graph_safe_step_bounds_are_linear(system_name: str) -> None:
    """A greedy graph's step budget grows linearly with the sentence (run by the contract
    test too)."""
    system = get_system(system_name).for_graphs()
    assert system.max_transitions(400) <= 16 * system.max_transitions(25) + 16


@pytest.mark.parametrize("system_name", GREEDY_GRAPHS)
def test_fixed_length_padded_loop_gives_the_greedy_trees(system_name: str) -> None:
    _, encoded, system, model = _setup(system_name, count=40, seed=7)
    decode = GraphedSearch(model, system)
    # Batches of different sizes and widths, some sharing a bucket.
    for ids in (torch.arange(40), torch.arange(3), torch.arange(5, 30), torch.tensor([7])):
        batch = encoded.batch(ids)
        expected = greedy_decode(model, system, batch)
        got = decode(batch)
        assert all(torch.equal(g, e) for g, e in zip(got, expected, strict=True))
    assert len(decode.graphs) <= 2  # one row bucket, at most two width buckets


@pytest.mark.parametrize("beam_size", [None, 3])
def test_prediction_records_a_bucket_when_it_comes_back(
    beam_size: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prediction's searches (GraphCache) decode a bucket's first batch eagerly and record
    on its second: a batch of a new bucket records nothing, the same bucket's next batch
    records once, and every batch gets the eager trees."""
    _, encoded, system, model = _setup("arc_eager", count=40, seed=7)
    search = GraphCache().search(model, system, beam_size)
    recorded = []
    record = search._record
    monkeypatch.setattr(search, "_record", lambda *a: recorded.append(a[:2]) or record(*a))
    # The first two share a bucket (up to 128 rows, widths within one multiple of 8).
    by_length = encoded.lengths.argsort()
    for ids, records in ((by_length[:12], 0), (by_length[:9], 1), (by_length[:12], 1)):
        batch = encoded.batch(ids)
        if beam_size is None:
            expected = greedy_decode(model, system, batch)
        else:
            expected = beam_decode(model, system, batch, beam_size)
        got = search(batch)
        assert all(torch.equal(g, e) for g, e in zip(got[:2], expected[:2], strict=True))
        assert all(torch.allclose(g, e) for g, e in zip(got[2:], expected[2:], strict=True))
        assert len(recorded) == records
    assert len(search.graphs) == 1


@pytest.mark.parametrize("system_name", sorted(SYSTEMS))
def test_fixed_length_loop_gives_the_greedy_trees_for_every_system(system_name: str) -> None:
    """The loop a graph records, run eagerly for every system (also those whose steps still
    read the host): the steps past the end of each derivation leave it as it is."""
    _, encoded, system, model = _setup(system_name, count=16, seed=13)
    batch = encoded.batch(torch.arange(16))
    expected = greedy_decode(model, system, batch)
    with torch.inference_mode():
        *got, abandoned = fixed_length_greedy(model, system, model.encode(batch), batch.lengths)
    assert all(torch.equal(g, e) for g, e in zip(got, expected, strict=True))
    assert not bool(abandoned.any())  # only a for_graphs variant abandons


@pytest.mark.parametrize("system_name", BUDGETED)
def test_graphs_redecode_what_their_variant_abandons(
    system_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The untrained scorer stores registers (swaps, puts valencies, switches) often, so the
    variant abandons some sentences (and finishes others); the search decodes those again:
    greedy_decode's trees."""
    tighten_budget(system_name, monkeypatch)
    _, encoded, system, model = _setup(system_name, count=40, seed=7)
    decode = GraphedSearch(model, system)
    batch = encoded.batch(torch.arange(40))
    with torch.inference_mode():
        table = model.encode(batch)
        *_, abandoned = fixed_length_greedy(model, system.for_graphs(), table, batch.lengths)
    assert 0 < int(abandoned.sum()) < 40
    for ids in (torch.arange(40), torch.arange(3, 17), torch.tensor([5])):
        batch = encoded.batch(ids)
        expected = greedy_decode(model, system, batch)
        got = decode(batch)
        assert all(torch.equal(g, e) for g, e in zip(got, expected, strict=True))


def test_two_registers_tensor_rule_abandons_fewer_sentences_with_the_same_trees() -> None:
    """With ``graph_rule="tensor"`` the greedy graph decides the register phases in tensors:
    of the sentences the default variant abandons, it abandons fewer (none here; it gives up
    only past ``SEARCH_ROWS`` searches a step or on a deep stack with R2 = n), and the search
    still gives greedy_decode's trees."""
    _, encoded, system, model = _setup("two_registers", count=40, seed=1)
    tensor = get_system("two_registers", system.labels, graph_rule="tensor")
    batch = encoded.batch(torch.arange(40))
    with torch.inference_mode():
        table = model.encode(batch)
        *_, abandoned = fixed_length_greedy(model, system.for_graphs(), table, batch.lengths)
        *_, fewer = fixed_length_greedy(model, tensor.for_graphs(), table, batch.lengths)
    assert int(fewer.sum()) < int(abandoned.sum())
    assert not bool((fewer & ~abandoned).any())
    expected = greedy_decode(model, system, batch)
    got = GraphedSearch(model, tensor)(batch)
    assert all(torch.equal(g, e) for g, e in zip(got, expected, strict=True))


def test_two_registers_greedy_rows_beyond_the_search_limit_wait_rather_than_give_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Searching two rows a step, the greedy variant of the tensor rule makes the rows beyond
    them wait a step: it abandons fewer sentences than giving those rows up would, and every
    sentence it finishes has greedy_decode's tree (waiting changes no scores).  A limit that
    grows with the batch (one search per 8 rows here) gives up fewer too."""
    monkeypatch.setattr(two_registers_system, "SEARCH_ROWS", 2)
    assert two_registers_system.search_limit(40) == 2
    _, encoded, system, model = _setup("two_registers", count=40, seed=1)
    tensor = get_system("two_registers", system.labels, graph_rule="tensor")
    waits = tensor.for_graphs()
    gives_up = copy.copy(waits)
    gives_up.waits_undecided_rows = False
    assert waits.waits_undecided_rows and not tensor.for_graphs(beam=True).waits_undecided_rows
    batch = encoded.batch(torch.arange(40))
    expected = greedy_decode(model, system, batch)
    with torch.inference_mode():
        table = model.encode(batch)
        *_, given_up = fixed_length_greedy(model, gives_up, table, batch.lengths)
        *got, abandoned = fixed_length_greedy(model, waits, table, batch.lengths)
    assert int(abandoned.sum()) < int(given_up.sum())
    monkeypatch.setattr(two_registers_system, "ROWS_PER_SEARCH", 8)
    assert two_registers_system.search_limit(40) == 5
    with torch.inference_mode():
        *_, fewer = fixed_length_greedy(model, gives_up, table, batch.lengths)
    assert int(fewer.sum()) < int(given_up.sum())
    for g, e in zip(got, expected, strict=True):
        assert torch.equal(g[~abandoned], e[~abandoned])
    graphed = GraphedSearch(model, tensor)(batch)
    assert all(torch.equal(g, e) for g, e in zip(graphed, expected, strict=True))


# -- beam search ---------------------------------------------------------------------------


@pytest.mark.parametrize("system_name", BEAM_GRAPHS)
def test_fixed_length_beam_never_synchronises(system_name: str) -> None:
    _, encoded, system, model = _setup(system_name, count=6, seed=5)
    batch = encoded.batch(torch.arange(6))
    table = model.encode(batch)
    with RefuseSynchronisation():
        fixed_length_beam(model, system.for_graphs(beam=True), table, batch.lengths, 3)


@pytest.mark.parametrize("beam_size", [1, 3, 8])
@pytest.mark.parametrize("system_name", BEAM_GRAPHS)
def test_fixed_length_padded_beam_gives_the_beam_trees(system_name: str, beam_size: int) -> None:
    _, encoded, system, model = _setup(system_name, count=24, seed=11)
    decode = GraphedSearch(model, system, beam_size)
    for ids in (torch.arange(24), torch.arange(3, 10)):
        batch = encoded.batch(ids)
        got = decode(batch)
        for compact in (False, True):
            expected = beam_decode(model, system, batch, beam_size, compact=compact)
            assert all(torch.equal(g, e) for g, e in zip(got[:2], expected[:2], strict=True))
        assert torch.allclose(got[2], expected[2])


@pytest.mark.parametrize("beam_size", [1, 3])
@pytest.mark.parametrize("system_name", BUDGETED)
def test_beam_graphs_search_again_what_their_variant_leaves_undecided(
    system_name: str, beam_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An untrained scorer stores registers (swaps, ...) often, so the variant gives up items
    of some sentences (a budget leaves some undecided); the search looks for those again
    eagerly: beam_decode's trees and scores for every sentence."""
    tighten_budget(system_name, monkeypatch)
    _, encoded, system, model = _setup(system_name, count=40, seed=7)
    batch = encoded.batch(torch.arange(40))
    with torch.inference_mode():
        table = model.encode(batch)
        recorded = system.for_graphs(beam=True)
        *_, undecided = fixed_length_beam(model, recorded, table, batch.lengths, beam_size)
    assert 0 < int(undecided.sum()) < 40
    decode = GraphedSearch(model, system, beam_size)
    for ids in (torch.arange(40), torch.arange(3, 17)):
        batch = encoded.batch(ids)
        got = decode(batch)
        expected = beam_decode(model, system, batch, beam_size, compact=False)
        assert all(torch.equal(g, e) for g, e in zip(got[:2], expected[:2], strict=True))
        assert torch.allclose(got[2], expected[2])  # a smaller batch may round differently


def test_beam_decode_of_some_sentences_gives_their_rows_of_the_whole_batch() -> None:
    _, encoded, system, model = _setup("arc_eager", count=12, seed=3)
    batch = encoded.batch(torch.arange(12))
    whole = beam_decode(model, system, batch, 3, compact=False)
    some = torch.tensor([9, 2, 5])
    part = beam_decode(model, system, batch, 3, compact=False, sentences=some)
    width = part[0].shape[1]
    assert torch.equal(part[0], whole[0][some, :width]) and torch.equal(
        part[1], whole[1][some, :width]
    )
    assert bool((whole[0][some, width:] == -1).all())
    assert torch.allclose(part[2], whole[2][some])
