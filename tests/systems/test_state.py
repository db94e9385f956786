"""The node pool and the arc log of the state batch."""

from __future__ import annotations

import pytest
import torch

from neuralparse.systems.state import NULL_NODE, ROOT_NODE, NodePool, State


def test_pool_grows_and_keeps_nodes() -> None:
    pool = NodePool(torch.device("cpu"), capacity=4, attrs={"has_head": 0})
    first = pool.push(torch.tensor([5, 6]), torch.tensor([ROOT_NODE, NULL_NODE]))
    second = pool.push(torch.tensor([7, 8, 9]), first[[0, 1, 1]], has_head=torch.tensor([1, 0, 1]))
    assert pool.capacity >= 7 and pool.used == 7
    assert pool.token[first].tolist() == [5, 6]
    assert pool.next[second].tolist() == first[[0, 1, 1]].tolist()
    assert pool.attrs["has_head"][torch.cat([first, second])].tolist() == [0, 0, 1, 0, 1]
    assert pool.token[NULL_NODE] == -1 and pool.next[NULL_NODE] == NULL_NODE
    assert pool.token[ROOT_NODE] == 0
    with pytest.raises(KeyError):
        pool.push(torch.tensor([1]), torch.tensor([0]), colour=torch.tensor([1]))


def test_stacks_are_persistent_and_arcs_follow_reorder() -> None:
    state = State.create(torch.tensor([3, 3]), stacks={"stack": True})
    both = torch.tensor([True, True])
    state.push("stack", both, torch.tensor([1, 2]))
    state.log_arcs(
        torch.tensor([True, False]),
        torch.tensor([1, 2]),
        torch.tensor([0, 0]),
        torch.tensor([4, 4]),
    )
    # Configuration 1 continues configuration 0 (shared stack), configuration 0 the old 1.
    reordered = state.reorder(torch.tensor([1, 0]))
    reordered.pop("stack", torch.tensor([True, False]))
    assert reordered.stack_tokens("stack", 3).tolist() == [[0, -1, -1], [1, 0, -1]]
    assert state.stack_tokens("stack", 2).tolist() == [[1, 0], [2, 0]]  # untouched
    heads, labels = reordered.heads_and_labels()
    assert heads.tolist() == [[-1, -1, -1, -1], [-1, 0, -1, -1]]
    assert labels.tolist() == [[-1, -1, -1, -1], [-1, 4, -1, -1]]
    assert reordered.buffer_tokens(4).tolist() == [[1, 2, 3, -1], [1, 2, 3, -1]]
