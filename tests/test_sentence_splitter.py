"""Sentence ends learned from a training treebank (:mod:`neuralparse.io.sentence_splitter`)
and used for raw text."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuralparse import Parser
from neuralparse.errors import InputError
from neuralparse.io import parse_conllu_text
from neuralparse.io.raw import Segmentation, raw_sentences
from neuralparse.io.sentence_splitter import (
    SentenceSplitter,
    Token,
    paragraphs_of,
    shape,
    surface_tokens,
)
from neuralparse.training.trainer import train
from tests.parser_fixtures import make_corpus
from tests.test_predict import predict
from tests.test_raw_text import paragraphs_of as texts_of_paragraphs
from tests.test_training import tiny_config


def conllu(forms: list[str], *, newpar: bool = False, glued: tuple[int, ...] = ()) -> str:
    """One sentence over ``forms`` (a chain), ``SpaceAfter=No`` after the words ``glued``."""
    lines = ["# newpar"] if newpar else []
    for i, form in enumerate(forms, start=1):
        misc = "SpaceAfter=No" if i in glued else "_"
        lines.append(f"{i}\t{form}\t_\t_\t_\t_\t{i - 1}\t{'root' if i == 1 else 'dep'}\t_\t{misc}")
    return "\n".join(lines) + "\n\n"


def tokens(text: str) -> list[Token]:
    return [Token(form) for form in text.split()]


def test_token_shapes() -> None:
    assert [shape(f) for f in ("Dr", "dr", "42", ".", "«", "$", "")] == list("Xxdppoo")
    assert shape("日本") == "x"  # a script without case


def test_the_treebank_is_read_as_running_text_of_surface_tokens() -> None:
    text = (
        "# newdoc\n1-2\tau\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n"
        "1\tà\t_\t_\t_\t_\t0\troot\t_\t_\n2\tle\t_\t_\t_\t_\t1\tdet\t_\t_\n"
        "3\t.\t_\t_\t_\t_\t1\tpunct\t_\t_\n\n"
        + conllu(["Il", "dort", "."], glued=(2,))
        + conllu(["Puis", "rien"], newpar=True)
    )
    sentences = parse_conllu_text(text)
    assert surface_tokens(sentences[0]) == [Token("au", False), Token(".")]
    assert paragraphs_of(sentences) == [
        ([Token("au", False), Token("."), Token("Il"), Token("dort", False), Token(".")], [1, 4]),
        ([Token("Puis"), Token("rien")], [1]),
    ]


def treebank() -> list:
    """Sentences that end at ``:`` and at ``.``, never after ``Dr.``, in one paragraph."""
    blocks = []
    for i in range(40):
        blocks.append(conllu(["Lists", "follow", f"w{i}", ":"]))
        blocks.append(conllu(["a", "visit", "to", "Dr.", "Smith", f"v{i}", "."]))
    return parse_conllu_text("".join(blocks))


def test_the_splitter_learns_where_the_treebank_ends_sentences() -> None:
    splitter = SentenceSplitter.train(treebank())
    paragraph = tokens("Lists follow x : a visit to Dr. Smith y . Lists follow z :")
    assert splitter.ends(paragraph) == [3, 10, 14]
    assert splitter.ends([]) == []
    assert splitter.ends(tokens("one")) == [0]
    assert SentenceSplitter.train(treebank()) == splitter  # the same weights every time
    assert not SentenceSplitter.train([])


def test_the_weights_travel_as_plain_data_and_bad_data_is_refused() -> None:
    splitter = SentenceSplitter.train(treebank())
    assert SentenceSplitter.from_dict(splitter.to_dict()) == splitter
    for bad, reason in (
        ([1.0], "not a dict"),
        ({"bias": "1"}, "not a number"),
        ({"bias": True}, "not a named number"),
        ({3: 1.0}, "not a named number"),
    ):
        with pytest.raises(ValueError, match=reason):
            SentenceSplitter.from_dict(bad)


def test_raw_text_ends_sentences_where_the_splitter_says(spacy_installed: None) -> None:
    text = "Lists follow x: a visit to Dr. Smith yes. Lists follow z:\n\nDr. Who:"
    learned = Segmentation(sentences=SentenceSplitter.train(treebank()))
    sentences = list(raw_sentences([text], lang="en", segmentation=learned))
    assert [s.forms for s in sentences] == [
        ["Lists", "follow", "x", ":"],
        ["a", "visit", "to", "Dr.", "Smith", "yes", "."],
        ["Lists", "follow", "z", ":"],
        ["Dr.", "Who", ":"],
    ]
    assert texts_of_paragraphs(sentences) == text.split("\n\n")
    # spaCy's sentencizer ends sentences at "." alone here.
    plain = list(raw_sentences([text], lang="en"))
    assert [len(s) for s in plain] == [11, 4, 3]


# -- trained, saved, loaded, parsed ----------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny parser whose training sentences all end with the word ``;``."""
    directory = tmp_path_factory.mktemp("splitter")
    cfg = tiny_config(directory, make_corpus(20, seed=4, min_words=4), max_epochs=2)
    train_file = Path(cfg.data.train)
    blocks = []
    for block in train_file.read_text(encoding="utf-8").split("\n\n"):
        lines = block.split("\n")
        last = max((i for i, line in enumerate(lines) if line[:1].isdigit()), default=None)
        if last is not None:
            cells = lines[last].split("\t")
            lines[last] = "\t".join([cells[0], ";", *cells[2:]])
        blocks.append("\n".join(lines))
    train_file.write_text("\n\n".join(blocks), encoding="utf-8")
    return train(cfg, directory / "run").checkpoint


def test_predict_ends_sentences_as_the_training_set_does(
    checkpoint: Path, spacy_installed: None, tmp_path: Path
) -> None:
    source = tmp_path / "in.txt"
    source.write_text("w1 w2 ; w3 w4 w5 ; w6 w7\n", encoding="utf-8")
    args = (f"checkpoint={checkpoint}", f"input={source}", "output=-", "input_format=raw")
    learned = parse_conllu_text(predict(*args).stdout.decode())
    assert [s.forms for s in learned] == [["w1", "w2", ";"], ["w3", "w4", "w5", ";"], ["w6", "w7"]]
    sentencizer = parse_conllu_text(predict(*args, "sentence_splitter=sentencizer").stdout.decode())
    assert len(sentencizer) == 1
    refused = predict(*args, "sentence_splitter=commas", check=False)
    assert refused.returncode == 2 and b"sentence_splitter must be one of" in refused.stderr
    parser = Parser.load(checkpoint, device="cpu")
    assert [s.forms for s in parser.parse("w1 w2 ; w3", raw=True)] == [["w1", "w2", ";"], ["w3"]]
    with pytest.raises(InputError, match="sentence_splitter"):
        parser.parse("w1", raw=True, sentence_splitter="commas")
