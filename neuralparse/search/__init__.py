"""Decoding with a trained scorer on the engine's state batch: greedy and beam search."""

from neuralparse.search.beam import beam_decode, beam_parse_corpus
from neuralparse.search.greedy import greedy_decode, greedy_parse_corpus, parse_corpus

SEARCHES = ("greedy", "beam")
"""Names accepted by ``search.name``."""

__all__ = [
    "SEARCHES",
    "beam_decode",
    "beam_parse_corpus",
    "greedy_decode",
    "greedy_parse_corpus",
    "parse_corpus",
]
