"""Small generated corpora for the model, training and greedy-search tests (no downloads)."""

from __future__ import annotations

import random
from pathlib import Path

from neuralparse.io import Sentence, write_conllu
from neuralparse.systems import SYSTEMS

UPOS = ("NOUN", "VERB", "ADJ", "DET", "ADP", "PRON", "ADV", "PUNCT")
LABELS = ("nsubj", "obj", "amod", "det", "case", "obl", "advmod", "punct", "nmod:poss")


def random_projective_heads(n: int, rng: random.Random) -> list[int]:
    """A random single-rooted projective tree: pick a head in a span, recurse on both sides."""
    heads = [0] * n

    def build(lo: int, hi: int, parent: int) -> None:
        if lo > hi:
            return
        head = rng.randint(lo, hi)
        heads[head - 1] = parent
        build(lo, head - 1, head)
        build(head + 1, hi, head)

    build(1, n, 0)
    return heads


def random_heads(n: int, rng: random.Random) -> list[int]:
    """A random single-rooted tree (often non-projective): attach words in random order to
    an already attached node."""
    order = list(range(1, n + 1))
    rng.shuffle(order)
    heads = [0] * n
    attached = [order[0]]
    for word in order[1:]:
        heads[word - 1] = rng.choice(attached)
        attached.append(word)
    return heads


def make_sentence(heads: list[int], rng: random.Random, index: int) -> Sentence:
    n = len(heads)
    forms = [f"w{rng.randrange(60)}" for _ in range(n)]
    upos = [UPOS[rng.randrange(len(UPOS))] for _ in range(n)]
    deprels = ["root" if h == 0 else LABELS[(i + h) % len(LABELS)] for i, h in enumerate(heads)]
    feats = ["Number=Sing" if t == "NOUN" else "_" for t in upos]
    return Sentence.from_words(
        forms, heads=heads, deprels=deprels, upos=upos, feats=feats, sent_id=f"s{index}"
    )


def make_corpus(
    count: int, *, seed: int = 0, min_words: int = 3, max_words: int = 10, projective: bool = True
) -> list[Sentence]:
    """``count`` sentences with random trees (projective unless ``projective=False``)."""
    rng = random.Random(seed)
    sentences = []
    for index in range(count):
        n = rng.randint(min_words, max_words)
        heads = random_projective_heads(n, rng) if projective else random_heads(n, rng)
        sentences.append(make_sentence(heads, rng, index))
    return sentences


def available_systems() -> list[str]:
    return sorted(SYSTEMS)


def write_corpus(path: Path, sentences: list[Sentence]) -> Path:
    write_conllu(sentences, path)
    return path
