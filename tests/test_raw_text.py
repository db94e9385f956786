"""Raw (untokenized) text: spaCy's blank tokenizer and sentencizer (``input_format=raw``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuralparse import Parser
from neuralparse.errors import InputError
from neuralparse.io import Sentence, parse_conllu_text, read_conllu
from neuralparse.io import raw as raw_module
from neuralparse.io.raw import (
    INSTALL_HINT,
    LanguageError,
    iter_raw,
    model_language,
    raw_sentences,
    resolve_language,
)
from neuralparse.trees.core import check_tree
from tests.test_predict import predict, train_tiny_checkpoint

# Hard-wrapped lines, a paragraph break, runs of spaces and a tab, sentences that follow each
# other without a space, brackets and a byte order mark.
TEXT = (
    "\ufeffThe w1 sat (w2). It w3\r\n"
    "went   on,\tfar.Then w5.\n"
    "\n"
    "\n"
    "Second paragraph w6 w7\n"
    "   \n"
    "Third: w8... w9?\n"
)
PARAGRAPHS = [
    "The w1 sat (w2). It w3 went on, far.Then w5.",
    "Second paragraph w6 w7",
    "Third: w8... w9?",
]


def space_after(sentence: Sentence, index: int) -> bool:
    return "SpaceAfter=No" not in sentence.misc[index].split("|")


def text_of(sentence: Sentence) -> str:
    """The sentence's words joined as MISC says (UD's rule)."""
    last = len(sentence) - 1
    return "".join(
        form + (" " if space_after(sentence, i) and i < last else "")
        for i, form in enumerate(sentence.forms)
    )


def paragraphs_of(sentences: list[Sentence]) -> list[str]:
    """The paragraphs that ``# newpar``, ``# text`` and ``SpaceAfter=No`` give back."""
    paragraphs: list[str] = []
    glued = False  # the last word before had SpaceAfter=No
    for sentence in sentences:
        comments = sentence.comments
        (text,) = [c.removeprefix("# text = ") for c in comments if c.startswith("# text = ")]
        assert text == text_of(sentence)
        if "# newpar" in comments:
            paragraphs.append(text)
        else:
            paragraphs[-1] += ("" if glued else " ") + text
        glued = not space_after(sentence, len(sentence) - 1)
    return paragraphs


def test_the_text_of_every_paragraph_comes_back(spacy_installed: None) -> None:
    sentences = list(iter_raw(TEXT, lang="en"))
    assert paragraphs_of(sentences) == PARAGRAPHS
    assert [s.forms for s in sentences[:3]] == [
        ["The", "w1", "sat", "(", "w2", ")", "."],
        ["It", "w3", "went", "on", ",", "far", "."],
        ["Then", "w5", "."],
    ]
    assert [s.sent_id for s in sentences] == [f"#{i}" for i in range(1, len(sentences) + 1)]
    assert [s.line for s in sentences] == [1, 1, 2, 5, 7]
    # Valid CoNLL-U: it reads back as the same sentences, and a last word of a paragraph never
    # has SpaceAfter=No (nothing follows it).
    written = "".join(s.to_conllu() for s in sentences)
    assert [s.forms for s in parse_conllu_text(written, check_tree=False)] == [
        s.forms for s in sentences
    ]
    assert not space_after(sentences[1], 6) and space_after(sentences[2], 2)


def test_blank_lines_are_paragraph_breaks(spacy_installed: None) -> None:
    wrapped = [s.forms for s in iter_raw("w1 w2\nw3 w4.\n", lang="xx")]
    broken = [s.forms for s in iter_raw("w1 w2\n\nw3 w4.\n", lang="xx")]
    assert wrapped == [["w1", "w2", "w3", "w4", "."]]
    assert broken == [["w1", "w2"], ["w3", "w4", "."]]


def test_input_is_read_a_paragraph_batch_at_a_time(
    spacy_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = 0

    def lines() -> Iterator[str]:
        nonlocal read
        for i in range(5000):
            read += 1
            yield f"w{i % 60} w1.\n" if i % 2 == 0 else "\n"

    first = next(iter_raw(lines(), lang="xx"))
    assert first.forms == ["w0", "w1", "."] and read < 1000
    # A paragraph without blank lines is cut at a line break once it is long enough, and
    # stays one paragraph.
    monkeypatch.setattr(raw_module, "MAX_PARAGRAPH_CHARS", 20)
    pieces = list(iter_raw("".join(f"w{i} w{i}\n" for i in range(10)), lang="xx"))
    assert [s.line for s in pieces] == [1, 5, 9]  # cut when 4 lines reach 20 characters
    assert paragraphs_of(pieces) == [" ".join(f"w{i} w{i}" for i in range(10))]


def test_bad_input_is_located(spacy_installed: None, tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"Fine text.\n\ncaf\xe9 here.\n")
    with pytest.raises(InputError, match=r"bad\.txt, line 3: not valid utf-8"):
        list(iter_raw(path))
    with pytest.raises(InputError, match="no sentences"):
        list(iter_raw(" \n\n\t\n", lang="xx"))
    with pytest.raises(InputError, match=r"<text 2>: no sentences"):
        list(raw_sentences(["w1 w2.", ""]))


def test_language_comes_from_the_caller_the_model_or_the_default(spacy_installed: None) -> None:
    ewt = {"data": {"treebank": "UD_English-EWT", "code": None}}
    assert model_language(ewt) == "en"
    assert model_language({"data": {"treebank": "UD_Foo-Bar", "code": "fo_bar"}}) == "fo"
    assert model_language({"data": {"treebank": None, "train": "a.conllu"}}) is None
    assert resolve_language(None, ewt) == "en"
    assert resolve_language("de", ewt) == "de"
    assert resolve_language(None, {"data": {"treebank": None}}) == "xx"
    # Gothic: spaCy has no tokenizer for it, so the language-neutral one is used.
    assert resolve_language(None, {"data": {"treebank": "UD_Gothic-PROIEL"}}) == "xx"
    with pytest.raises(LanguageError, match=r"no language 'english'.*\ben\b.*\bxx\b"):
        resolve_language("english", ewt)


def test_without_spacy_raw_text_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)  # `import spacy` raises ImportError
    for attempt in (
        lambda: iter_raw("Some text.", lang="en"),
        lambda: resolve_language(None, {"data": {"treebank": "UD_English-EWT"}}),
    ):
        with pytest.raises(InputError, match="not installed") as error:
            attempt()
        assert INSTALL_HINT in str(error.value)


# -- with a parser ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_checkpoint(tmp_path_factory.mktemp("raw"), "arc_eager")


@pytest.fixture(scope="module")
def parser(checkpoint: Path, spacy_installed: None) -> Parser:
    return Parser.load(checkpoint, device="cpu")


RAW = "w1 w2 w3. w4 (w5) w6! w7 w8\nw9 ok.Then w10.\n\nw11 w12 w13\n"


def test_parse_file_and_parse_give_trees_over_the_text(
    parser: Parser, checkpoint: Path, tmp_path: Path
) -> None:
    source, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    source.write_text(RAW, encoding="utf-8")
    # spaCy's sentencizer (the tiny model's training text has no punctuation for its learned
    # splitter to go by: tests/test_sentence_splitter.py tests that one).
    sentencizer = {"sentence_splitter": "sentencizer"}
    report = parser.parse_file(source, out, input_format="raw", **sentencizer)
    parsed = read_conllu(out)
    assert report.sentences == len(parsed) == 5
    for sentence in parsed:
        check_tree(sentence.heads, single_root=True)
        assert "_" not in sentence.upos
    assert paragraphs_of(parsed) == ["w1 w2 w3. w4 (w5) w6! w7 w8 w9 ok.Then w10.", "w11 w12 w13"]
    # The notebook API gives the same sentences, one text per string (never spanning two).
    api = parser.parse(RAW.split("\n\n"), raw=True, **sentencizer)
    assert [s.to_conllu() for s in api] == [s.to_conllu() for s in parsed]
    assert [s.forms for s in parser.parse("w1 w2. w3", raw=True, lang="en", **sentencizer)] == [
        ["w1", "w2", "."],
        ["w3"],
    ]
    with pytest.raises(LanguageError):
        parser.parse_file(source, tmp_path / "never.conllu", input_format="raw", lang="zz")
    assert not (tmp_path / "never.conllu").exists()
    # predict.py: the same output, with the language named on the command line.
    result = predict(
        f"checkpoint={checkpoint}",
        f"input={source}",
        "output=-",
        "input_format=raw",
        "lang=xx",
        "sentence_splitter=sentencizer",
    )
    assert result.stdout.decode() == out.read_text(encoding="utf-8")
