"""The spaCy component ``neuralparse`` (:mod:`neuralparse.spacy_component`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

spacy = pytest.importorskip("spacy")

from spacy import displacy  # noqa: E402
from spacy.language import Language  # noqa: E402
from spacy.tokens import Doc  # noqa: E402

from neuralparse import Parser  # noqa: E402
from neuralparse.io import Sentence  # noqa: E402
from neuralparse.spacy_component import NeuralParseComponent  # noqa: E402
from tests.test_predict import train_tiny_checkpoint  # noqa: E402

TEXTS = [
    "w1 w2 w3. w4 (w5) w6!",
    "w7 w8 w9 w10 w11 w12.",
    "w13.",
    "w14 w15. w16 w17 w18 w19. w20 w21.",
    "w22 w23 w24",
]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_checkpoint(tmp_path_factory.mktemp("spacy"), "arc_eager")


@pytest.fixture(scope="module")
def nlp(checkpoint: Path) -> Language:
    nlp = spacy.blank("xx")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("neuralparse", config={"model": str(checkpoint)})
    return nlp


def component(nlp: Language) -> NeuralParseComponent:
    return nlp.get_pipe("neuralparse")


def expected(parser: Parser, doc: Doc) -> list[Sentence]:
    """What ``Parser.parse`` gives for the words of each sentence of ``doc``."""
    return parser.parse([[t.text for t in s if not t.is_space] for s in doc.sents])


def test_heads_labels_and_tags_are_those_of_parser_parse(nlp: Language) -> None:
    parser = component(nlp).parser
    for doc in nlp.pipe(TEXTS):
        assert doc.has_annotation("DEP")
        for span, sentence in zip(doc.sents, expected(parser, doc), strict=True):
            assert sentence.heads is not None
            heads = [0 if t.head.i == t.i else t.head.i - span.start + 1 for t in span]
            assert heads == sentence.heads
            assert [t.dep_ for t in span] == sentence.deprels
            assert [t.pos_ for t in span] == sentence.upos
            assert [t.tag_ or "_" for t in span] == sentence.xpos
            assert [str(t.morph) or "_" for t in span] == sentence.feats
            assert [t for t in span if t.head.i == t.i] == [span.root]


def test_sentences_survive_and_batches_are_parsed_together(
    nlp: Language, monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = component(nlp).parser
    sentencizer = nlp.get_pipe("sentencizer")
    calls: list[int] = []
    parse = parser.parse

    def counting(sentences: list[list[str]], **options: Any) -> list[Sentence]:
        calls.append(len(sentences))
        return parse(sentences, **options)

    monkeypatch.setattr(parser, "parse", counting)
    one_by_one = [nlp(text) for text in TEXTS]
    calls.clear()
    batched = list(nlp.pipe(TEXTS, batch_size=2))
    assert calls == [3, 4, 1]  # the sentences of docs 1-2, 3-4 and 5
    for single, doc in zip(one_by_one, batched, strict=True):
        assert [(t.head.i, t.dep_, t.pos_) for t in single] == [
            (t.head.i, t.dep_, t.pos_) for t in doc
        ]
        # The sentences that spaCy derives from the parse are the sentencizer's.
        split = sentencizer(nlp.make_doc(doc.text))
        assert [s.text for s in doc.sents] == [s.text for s in split.sents]


def test_displacy_draws_the_parse(nlp: Language) -> None:
    doc = nlp(TEXTS[0])
    options = {"collapse_punct": False}
    svg = displacy.render(doc, style="dep", jupyter=False, options=options)
    assert svg.startswith("<svg") and svg.count('class="displacy-arc"') == len(doc) - 2
    # One arc per word but the two roots, labelled with our relations.
    arcs = displacy.parse_deps(doc, options)["arcs"]
    drawn = sorted((min(t.i, t.head.i), max(t.i, t.head.i), t.dep_) for t in doc if t.head != t)
    assert sorted((a["start"], a["end"], a["label"]) for a in arcs) == drawn


def test_whitespace_and_docs_without_sentence_boundaries(checkpoint: Path) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("neuralparse", config={"model": str(checkpoint)})
    doc = nlp("  w1 w2\n\nw3.  w4 w5")
    spaces = [t for t in doc if t.is_space]
    assert [t.text for t in spaces] == ["  ", "\n\n", " "]
    # No sentencizer: the whole doc is one sentence, parsed without its whitespace tokens.
    assert len(list(doc.sents)) == 1
    (parsed,) = component(nlp).parser.parse([[t.text for t in doc if not t.is_space]])
    words = [t for t in doc if not t.is_space]
    assert parsed.heads == [0 if t.head == t else words.index(t.head) + 1 for t in words]
    # A space hangs from the word before it, or from the first word at the start.
    assert [(t.head.text, t.dep_, t.pos_) for t in spaces] == [
        ("w1", "dep", "SPACE"),
        ("w2", "dep", "SPACE"),
        (".", "dep", "SPACE"),
    ]
    assert nlp("").text == "" and [t.dep_ for t in nlp(" \n")] == ["dep"]


def test_factory_comes_from_the_entry_point_without_importing_neuralparse(
    checkpoint: Path, tmp_path: Path
) -> None:
    # Outside the checkout, so that the installed metadata (not a stale egg-info) is read.
    script = f"""
import json, sys
from importlib.metadata import entry_points
if not entry_points(group="spacy_factories", name="neuralparse"):
    print(json.dumps(None)); sys.exit()
import spacy
nlp = spacy.blank("en")
nlp.add_pipe("sentencizer")
nlp.add_pipe("neuralparse", config={{"model": {str(checkpoint)!r}}})
print(json.dumps([t.dep_ for t in nlp("w1 w2 w3.")]))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    deps = json.loads(result.stdout.strip().splitlines()[-1])
    if deps is None:
        pytest.skip("neuralparse is installed without its entry points: pip install -e .")
    assert len(deps) == 4 and "root" in deps
