"""Very long sentences: every system parses a sentence of hundreds of words, greedy and with
a beam, into one well-formed tree (the length of a whole paragraph or of a run-on sentence
in web text, which a user's file may hold)."""

from __future__ import annotations

import random

import pytest
import torch

from neuralparse.model import EncodedCorpus, ParserModel, build_vocabularies
from neuralparse.search import greedy_parse_corpus
from neuralparse.search.beam import beam_parse_corpus
from neuralparse.systems import get_system
from neuralparse.trees.core import check_tree
from tests.parser_fixtures import LABELS, available_systems, make_corpus, make_sentence
from tests.test_beam import TINY

LONG = 300


@pytest.mark.parametrize("system_name", available_systems())
def test_a_sentence_of_hundreds_of_words_parses_into_one_tree(system_name: str) -> None:
    rng = random.Random(3)
    long_sentence = make_sentence([0, *range(1, LONG)], rng, 0)  # a chain: any tree will do
    corpus = [long_sentence, *make_corpus(3, seed=3)]
    vocabs = build_vocabularies(corpus, min_word_count=1, use_chars=False)
    system = get_system(system_name, ("root", *LABELS))
    torch.manual_seed(3)
    model = ParserModel.for_system(vocabs, TINY, system).eval()
    encoded = EncodedCorpus.build(corpus, vocabs)
    with torch.inference_mode():
        parses = {
            "greedy": greedy_parse_corpus(model, system, encoded),
            "beam 2": beam_parse_corpus(model, system, encoded, beam_size=2),
        }
    for search, trees in parses.items():
        assert [len(heads) for heads, _ in trees] == [len(s) for s in corpus], search
        for heads, labels in trees:
            check_tree(heads, single_root=True)
            assert all(label in system.labels for label in labels), search
