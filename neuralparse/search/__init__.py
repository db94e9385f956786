"""Decoding with a trained scorer on the engine's state batch."""

from neuralparse.search.greedy import greedy_decode, greedy_parse_corpus

SEARCHES = ("greedy", "beam")
"""Names accepted by ``search.name`` (beam search arrives with issue 6; training always
evaluates on dev with greedy decoding)."""

__all__ = ["SEARCHES", "greedy_decode", "greedy_parse_corpus"]
