"""Shared helpers for the engine tests: reading whole stacks and buffers off the engine."""

from __future__ import annotations

from neuralparse.systems.state import State


def stack_of(state: State, b: int, name: str = "stack") -> tuple[int, ...]:
    """Stack ``name`` of configuration ``b``, bottom first (as the papers write it)."""
    size = int(state.sizes[name][b])
    if size == 0:
        return ()
    tokens = state.stack_tokens(name, size)[b].tolist()
    return tuple(reversed(tokens))


def buffer_of(state: State, b: int) -> tuple[int, ...]:
    """Buffer of configuration ``b``, front first."""
    size = int(state.buffer_size()[b])
    if size == 0:
        return ()
    return tuple(state.buffer_tokens(size)[b].tolist())
