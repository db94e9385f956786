"""The notebook API: ``from neuralparse import Parser``."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch

from neuralparse import Parser
from neuralparse.errors import InputError
from neuralparse.evaluation import CORE_KEYS
from neuralparse.io import Sentence, parse_conllu_text, read_conllu
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.prediction import decoding
from neuralparse.runtime.checkpoint import CheckpointError
from neuralparse.search import greedy_parse_corpus
from neuralparse.trees.core import check_tree
from tests.parser_fixtures import make_corpus
from tests.test_predict import RICH_CONLLU, predict, train_tiny_checkpoint


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_checkpoint(tmp_path_factory.mktemp("api"), "arc_eager")


@pytest.fixture(scope="module")
def parser(checkpoint: Path) -> Parser:
    return Parser.load(checkpoint, device="cpu")


def assert_trees(sentences: list[Sentence], parser: Parser) -> None:
    for sentence in sentences:
        assert sentence.heads is not None and len(sentence.heads) == len(sentence)
        check_tree(sentence.heads, single_root=True)
        assert set(sentence.deprels) <= set(parser.labels)
        assert sentence.labels == sentence.deprels and sentence.words == sentence.forms


def test_inspectable_without_hydra(parser: Parser) -> None:
    assert parser.system.name == "arc_eager"
    assert parser.config["system"]["name"] == "arc_eager"
    assert "root" in parser.labels and parser.labels == parser.system.labels
    assert parser.dev_metrics["las"] >= 0
    assert str(parser.device) == "cpu"


def test_the_arc_weight_option_of_a_model_without_an_arc_scorer(parser: Parser) -> None:
    """The tiny model has no arc scorer: ``arc_weight=0`` parses as the default does, a
    weight above 0 is refused, as is a negative one."""
    assert parser.model.arcs is None
    text = ["w1 w2 w3 .", "w4 w5"]
    assert [s.heads for s in parser.parse(text, arc_weight=0)] == [
        s.heads for s in parser.parse(text)
    ]
    with pytest.raises(InputError, match=r"arc_weight=0\.5: this model has no arc scorer"):
        parser.parse(text, arc_weight=0.5)
    with pytest.raises(InputError, match="arc_weight must be a number >= 0"):
        parser.parse(text, arc_weight=-1)


def test_parse_strings_token_lists_and_sentences(parser: Parser) -> None:
    tagged = Sentence.from_words(["w3", "w4"], upos=["NOUN", "VERB"], misc=["A=1", "_"])
    parsed = parser.parse(["w1  w2 unseen .", ["Pre", "tokenized", "w 5"], tagged])
    assert [s.words for s in parsed] == [
        ["w1", "w2", "unseen", "."],
        ["Pre", "tokenized", "w 5"],
        ["w3", "w4"],
    ]
    assert_trees(parsed, parser)
    assert parsed[2].upos == ["NOUN", "VERB"] and parsed[2].misc == ["A=1", "_"]
    # to_conllu() is CoNLL-U that reads back to the same trees (UD v2 allows the space).
    back = parse_conllu_text("".join(s.to_conllu() for s in parsed))
    assert [(s.forms, s.heads, s.deprels) for s in back] == [
        (s.forms, s.heads, s.deprels) for s in parsed
    ]


def test_one_string_is_text_with_a_sentence_per_line(parser: Parser) -> None:
    (one,) = parser.parse("w1  w2 unseen .")
    assert one.words == ["w1", "w2", "unseen", "."]
    assert_trees([one], parser)
    two = parser.parse("w1 w2\n\n  \nw3 .\n")
    assert [s.words for s in two] == [["w1", "w2"], ["w3", "."]]
    printed = io.StringIO()
    for sentence in two:
        print(sentence, file=printed)  # shows the CoNLL-U of the sentences, as a file has it
    assert printed.getvalue() == "".join(s.to_conllu() for s in two)
    assert [s.heads for s in two] == [s.heads for s in parser.parse(["w1 w2", "w3 ."])]
    (again,) = parser.parse(one)
    assert again.words == one.words and again.heads == one.heads


def test_the_parser_shows_what_it_is_in_one_short_line(parser: Parser) -> None:
    shown = repr(parser)
    assert shown.startswith("Parser(system=arc_eager, labels=") and "\n" not in shown
    assert "device=cpu" in shown and "search=greedy" in shown and len(shown) < 300


def test_parse_agrees_with_the_search_module_and_ignores_batching(parser: Parser) -> None:
    corpus = make_corpus(17, seed=21, max_words=14)
    encoded = EncodedCorpus.build(corpus, parser.vocabs, parser.model.config.max_word_chars)
    expected = greedy_parse_corpus(parser.model, parser.system, encoded, batch_tokens=50)
    for options in ({}, {"chunk_size": 5, "batch_size": 2, "batch_tokens": 9}):
        parsed = parser.parse(corpus, **options)
        assert [(s.heads, s.deprels) for s in parsed] == [
            (h, [lb or "_" for lb in labels]) for h, labels in expected
        ]


def test_the_parser_keeps_its_graphed_searches_across_calls(
    parser: Parser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graphed searches belong to the ``Parser``: recorded once, reused by later calls
    and by ``parse_file``.  On the CPU a graphed search runs its fixed-length loop eagerly,
    so pretending the device supports graphs exercises the whole path here."""
    corpus = make_corpus(9, seed=23, max_words=12)
    eager = parser.parse(corpus)
    assert parser.graphs.searches == {}  # nothing recorded where graphs are not supported
    monkeypatch.setattr(decoding, "supports_graphs", lambda *args, **kwargs: True)
    loaded = Parser(parser.loaded, parser.device, parser.options)
    graphed = loaded.parse(corpus)
    first = loaded.graphs.searches[None]
    assert [(s.heads, s.deprels) for s in graphed] == [(s.heads, s.deprels) for s in eager]
    loaded.parse(corpus)
    source = tmp_path / "in.conllu"
    source.write_text(RICH_CONLLU, newline="")
    loaded.parse_file(source, tmp_path / "out.conllu")
    assert loaded.graphs.searches == {None: first}  # the same search every time
    loaded.parse(corpus, search="beam", beam_size=2)
    assert set(loaded.graphs.searches) == {None, 2}


def test_beam_of_one_is_greedy_and_wider_beams_give_trees(parser: Parser) -> None:
    corpus = make_corpus(8, seed=22, max_words=12)
    greedy = parser.parse(corpus)
    one = parser.parse(corpus, search="beam", beam_size=1)
    assert [s.heads for s in one] == [s.heads for s in greedy]
    assert [s.deprels for s in one] == [s.deprels for s in greedy]
    assert_trees(parser.parse(corpus, search="beam", beam_size=4), parser)


def test_a_500_word_sentence_parses(parser: Parser) -> None:
    words = [f"w{i % 70}" for i in range(520)]
    (parsed,) = parser.parse([words])
    assert parsed.words == words
    assert_trees([parsed], parser)


def test_parse_file_equals_predict_py(parser: Parser, checkpoint: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.conllu"
    source.write_text(RICH_CONLLU, newline="")
    api_out, cli_out = tmp_path / "api.conllu", tmp_path / "cli.conllu"
    report = parser.parse_file(source, api_out)
    assert (report.sentences, report.words, report.skipped) == (3, 9, 0)
    predict(f"checkpoint={checkpoint}", f"input={source}", f"output={cli_out}")
    assert api_out.read_bytes() == cli_out.read_bytes()


def test_evaluate_scores_the_parse_of_the_gold_words(parser: Parser, checkpoint: Path) -> None:
    gold = checkpoint.parents[1] / "train.conllu"
    scores = parser.evaluate(gold)
    assert list(scores) == list(CORE_KEYS)
    sentences = read_conllu(gold)
    assert scores["words"] == sum(map(len, sentences))
    predicted = parser.parse(sentences)
    pairs = [(g, p) for s, ps in zip(sentences, predicted, strict=True) for g, p in
             zip(s.heads, ps.heads, strict=True)]  # fmt: skip
    assert scores["uas"] == pytest.approx(100 * sum(g == p for g, p in pairs) / len(pairs))
    assert 0 <= scores["las"] <= scores["uas"] <= 100


def test_bad_inputs_and_checkpoints_are_refused(parser: Parser, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"sentence #2.*no words"):
        parser.parse(["w1", "   "])
    with pytest.raises(InputError, match="not a non-empty string"):
        parser.parse([["w1", ""]])
    with pytest.raises(InputError, match="sentence #1"):
        parser.parse([["w1", "a\tb"]])
    with pytest.raises(TypeError, match="beam_width"):
        parser.parse(["w1"], beam_width=3)
    with pytest.raises(InputError, match="unknown search"):
        parser.parse(["w1"], search="astar")
    bogus = tmp_path / "bogus.pt"
    torch.save({"weights": torch.zeros(2)}, bogus)
    with pytest.raises(CheckpointError, match=f"{bogus}: not a neuralparse checkpoint"):
        Parser.load(bogus)
    with pytest.raises(CheckpointError, match="not found"):
        Parser.load(tmp_path / "missing.pt")
