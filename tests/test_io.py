"""CoNLL-U / plain-text I/O: byte-identical round trips, validation messages, lenient mode."""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.errors import ConlluError, InputError, TreeError
from neuralparse.io import (
    ReadReport,
    Sentence,
    SkippedSentencesWarning,
    detect_format,
    from_pyconll,
    iter_conllu,
    parse_conllu_text,
    read_conllu,
    read_text,
    to_pyconll,
    write_conllu,
)
from neuralparse.io.conllu import _Block, _parse_block
from neuralparse.io.sources import decoded_lines
from neuralparse.io.text import (
    UNTOKENIZED_PROBE,
    _conllu_lines,
    _text_sentence,
    explain_format,
    untokenized_note,
)
from tests.trees_strategies import trees


def block(*rows: str, comments: tuple[str, ...] = ()) -> str:
    """A CoNLL-U block: comment lines, then tab-separated rows, then the blank line."""
    return "".join(f"{c}\n" for c in comments) + "".join(f"{r}\n" for r in rows) + "\n"


def word(i: str, form: str, head: str, deprel: str, *, deps: str = "_", misc: str = "_") -> str:
    return "\t".join([i, form, form.lower(), "X", "_", "_", head, deprel, deps, misc])


# A sentence with everything the format allows around the syntactic words: comments, a
# multiword token, empty nodes (also before word 1), enhanced DEPS, MISC with spaces.
RICH = (
    "# newdoc id = doc1\n"
    "# sent_id = rich-1\n"
    "# text = Vámonos al mar .\n"
    "0.1\tPRO\t_\tPRON\t_\t_\t_\t_\t2:nsubj\t_\n"
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tVamos\tir\tVERB\t_\tMood=Imp\t0\troot\t0:root\t_\n"
    "2\tnos\tnosotros\tPRON\t_\t_\t1\tobj\t1:obj\t_\n"
    "2.1\tir\t_\tVERB\t_\t_\t_\t_\t1:conj\tNote=an elided verb\n"
    "2.2\tir\t_\tVERB\t_\t_\t_\t_\t1:conj\t_\n"
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\ta\ta\tADP\t_\t_\t5\tcase\t5:case\t_\n"
    "4\tel\tel\tDET\t_\t_\t5\tdet\t5:det\t_\n"
    "5\tmar\tmar\tNOUN\t_\t_\t1\tobl\t1:obl:a\tSpaceAfter=No\n"
    "6\t.\t.\tPUNCT\t_\t_\t1\tpunct\t1:punct\t_\n"
    "\n"
)
SIMPLE = block(
    word("1", "Hello", "0", "root"),
    word("2", "world", "1", "obj"),
    comments=("# sent_id = s2",),
)


def test_reads_syntactic_words_and_metadata() -> None:
    (sentence,) = parse_conllu_text(RICH)
    assert sentence.forms == ["Vamos", "nos", "a", "el", "mar", "."]
    assert sentence.words is sentence.forms
    assert sentence.lemmas[0] == "ir"
    assert sentence.upos == ["VERB", "PRON", "ADP", "DET", "NOUN", "PUNCT"]
    assert sentence.feats[0] == "Mood=Imp"
    assert sentence.heads == [0, 1, 5, 5, 1, 1]
    assert sentence.deprels == ["root", "obj", "case", "det", "obl", "punct"]
    assert sentence.misc[4] == "SpaceAfter=No"
    assert sentence.is_punct == [False] * 5 + [True]
    assert sentence.sent_id == "rich-1"
    assert sentence.source == "<string>"
    assert sentence.line == 1
    assert len(sentence) == 6
    assert sentence.comments[1] == "# sent_id = rich-1"


@pytest.mark.parametrize(
    "text",
    [
        RICH + SIMPLE,
        # CRLF endings, also on the blank separator lines.
        (RICH + SIMPLE).replace("\n", "\r\n"),
        # Odd spacing: spaces inside FORM/MISC, trailing spaces, extra blank lines between
        # and after sentences, whitespace-only separator, a byte order mark.
        "\ufeff" + SIMPLE.replace("Hello", "Hel lo") + "\n \n" + RICH.replace("_\n", "_  \n"),
        SIMPLE + SIMPLE + "\n\n",
    ],
    ids=["rich", "crlf", "spacing", "trailing-blank-lines"],
)
def test_round_trip_is_byte_identical(text: str) -> None:
    sentences = parse_conllu_text(text)
    assert "".join(s.to_conllu() for s in sentences) == text
    buffer = io.StringIO(newline="")
    assert write_conllu(sentences, buffer) == len(sentences)
    assert buffer.getvalue() == text


def test_round_trip_through_files_keeps_crlf(tmp_path: Path) -> None:
    text = (RICH + SIMPLE).replace("\n", "\r\n")
    source = tmp_path / "in.conllu"
    source.write_bytes(text.encode("utf-8"))
    sentences = read_conllu(source)
    assert [s.source for s in sentences] == [str(source)] * 2
    assert [s.line for s in sentences] == [1, 16]
    target = tmp_path / "out.conllu"
    write_conllu(sentences, str(target))
    assert target.read_bytes() == source.read_bytes()


def test_sources_path_file_text_and_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.conllu"
    path.write_text(SIMPLE, encoding="utf-8")
    expected = parse_conllu_text(SIMPLE)[0].forms
    with path.open(encoding="utf-8", newline="") as handle:
        from_file = read_conllu(handle)
    lines_without_endings = SIMPLE.splitlines()
    for sentences in (
        read_conllu(path),
        read_conllu(str(path)),
        from_file,
        read_conllu(SIMPLE),  # a str with newlines is CoNLL-U text, not a path
        read_conllu(lines_without_endings),
    ):
        assert [s.forms for s in sentences] == [expected]
    assert from_file[0].source == str(path)
    assert read_conllu(lines_without_endings)[0].to_conllu() == SIMPLE


def test_missing_final_blank_line_or_newline_is_accepted() -> None:
    for text in (SIMPLE[:-1], SIMPLE[:-2]):
        (sentence,) = parse_conllu_text(text)
        assert sentence.heads == [0, 1]
        assert sentence.to_conllu() == SIMPLE  # written back as valid CoNLL-U
    crlf = SIMPLE.replace("\n", "\r\n")
    assert parse_conllu_text(crlf[:-2])[0].to_conllu() == crlf


def test_generated_sentence_ids_are_ordinals() -> None:
    text = block(word("1", "a", "0", "root")) * 3
    assert [s.sent_id for s in parse_conllu_text(text)] == ["#1", "#2", "#3"]
    assert parse_conllu_text("#sent_id=x-1\n" + SIMPLE)[0].sent_id == "x-1"
    assert parse_conllu_text("\ufeff" + SIMPLE)[0].sent_id == "s2"


# ---------------------------------------------------------------------------- with_tree


def _fields(line: str) -> list[str]:
    return line.rstrip("\r\n").split("\t")


@given(
    heads=trees(min_words=6, max_words=6),
    labels=st.lists(st.sampled_from(["nsubj", "obj", "dep"]), min_size=6),
)
def test_with_tree_changes_only_head_and_deprel(heads: list[int], labels: list[str]) -> None:
    (sentence,) = parse_conllu_text(RICH)
    deprels = labels[:6]
    changed = sentence.with_tree(heads, deprels)
    before, after = RICH.splitlines(), changed.to_conllu().splitlines()
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        old_fields, new_fields = _fields(old), _fields(new)
        if old.startswith("#") or len(old_fields) != 10 or not old_fields[0].isdigit():
            assert new == old  # comments, blank lines, multiword tokens, empty nodes
            continue
        assert new_fields[:6] == old_fields[:6] and new_fields[8:] == old_fields[8:]
        word_id = int(old_fields[0])
        assert new_fields[6:8] == [str(heads[word_id - 1]), deprels[word_id - 1]]
    (reread,) = parse_conllu_text(changed.to_conllu())
    assert reread.heads == heads and reread.deprels == deprels
    # The original is untouched and still writes the source.
    assert sentence.to_conllu() == RICH


def test_with_tree_same_tree_writes_identical_and_validates_lengths() -> None:
    (sentence,) = parse_conllu_text(RICH)
    same = sentence.with_tree(list(sentence.heads or []))
    assert same.to_conllu() == RICH
    assert same.deprels == sentence.deprels
    with pytest.raises(TreeError, match="5 heads given for 6 words"):
        sentence.with_tree([0, 1, 1, 1, 1])
    with pytest.raises(TreeError, match="2 deprels given for 6 words"):
        sentence.with_tree([0, 1, 1, 1, 1, 1], ["root", "x"])
    with pytest.raises(TreeError, match=r"head of word 2 is 7, outside 0\.\.6") as info:
        sentence.with_tree([0, 7, 1, 1, 1, 1])
    assert info.value.sent_id == "rich-1"


@given(heads=trees(max_words=10), data=st.data())
def test_built_sentences_round_trip(heads: list[int], data: st.DataObject) -> None:
    n = len(heads)
    forms = data.draw(st.lists(st.text("ab .,#_-", min_size=1), min_size=n, max_size=n))
    forms = [f if f.strip() else "x" for f in forms]  # FORM may hold spaces but not only them
    deprels = data.draw(
        st.lists(st.sampled_from(["root", "nsubj", "acl:relcl"]), min_size=n, max_size=n)
    )
    built = Sentence.from_words(forms, heads=heads, deprels=deprels, sent_id="gen")
    (reread,) = parse_conllu_text(built.to_conllu())
    assert (reread.forms, reread.heads, reread.deprels) == (forms, heads, deprels)
    assert reread.to_conllu() == built.to_conllu()


def test_in_place_head_edit_is_written() -> None:
    (sentence,) = parse_conllu_text(SIMPLE)
    assert sentence.heads is not None
    sentence.heads[1] = 0
    sentence.heads[0] = 2
    assert "1\tHello\thello\tX\t_\t_\t2\troot" in sentence.to_conllu()


# ---------------------------------------------------------------------------- errors

BAD_CASES = [
    # (description, text, line, message fragment)
    ("columns", "# sent_id = c\n1\ta\t_\t_\t_\t_\t0\troot\t_\n\n", 2, "10 tab-separated columns"),
    ("empty column", "1\ta\t\t_\t_\t_\t0\troot\t_\t_\n\n", 1, "column 3 is empty"),
    ("non-integer id", block(word("x", "a", "0", "root")), 1, "malformed token id 'x'"),
    ("id order", block(word("1", "a", "0", "root"), word("3", "b", "1", "dep")), 2, "expected 2"),
    ("id start", block(word("2", "a", "0", "root")), 1, "word id 2 out of order"),
    ("duplicate id", block(word("1", "a", "0", "root"), word("1", "b", "1", "x")), 2, "order"),
    (
        "reversed range",
        block("2-1\tab\t_\t_\t_\t_\t_\t_\t_\t_", word("1", "a", "0", "root")),
        1,
        "empty or reversed",
    ),
    (
        "range placement",
        block(word("1", "a", "0", "root"), "3-4\tab\t_\t_\t_\t_\t_\t_\t_\t_"),
        2,
        "right before word 3",
    ),
    (
        "range beyond",
        block(
            "1-3\tab\t_\t_\t_\t_\t_\t_\t_\t_", word("1", "a", "0", "root"), word("2", "b", "1", "x")
        ),
        1,
        "beyond the last word 2",
    ),
    (
        "malformed range",
        block("1-b\tab\t_\t_\t_\t_\t_\t_\t_\t_", word("1", "a", "0", "root")),
        1,
        "malformed multiword token id",
    ),
    (
        "overlapping ranges",
        block(
            "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_",
            word("1", "a", "0", "root"),
            "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_",
        ),
        3,
        "right before word 2",
    ),
    (
        "empty node inside range",
        block("1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_", "0.1\te\t_\t_\t_\t_\t_\t_\t_\t_"),
        2,
        "empty node 0.1 out of place",
    ),
    (
        "empty node place",
        block(word("1", "a", "0", "root"), "2.1\te\t_\t_\t_\t_\t_\t_\t_\t_"),
        2,
        "expected 1.1",
    ),
    (
        "empty node numbering",
        block(word("1", "a", "0", "root"), "1.2\te\t_\t_\t_\t_\t_\t_\t_\t_"),
        2,
        "empty node 1.2 out of place",
    ),
    (
        "comment inside",
        block(word("1", "a", "0", "root"), "# late", word("2", "b", "1", "x")),
        2,
        "comment line after",
    ),
    ("non-integer head", block(word("1", "a", "root", "root")), 1, "HEAD 'root' of word 1"),
    ("negative head", block(word("1", "a", "-1", "root")), 1, "HEAD '-1' of word 1"),
    (
        "head out of range",
        block(word("1", "a", "0", "root"), word("2", "b", "3", "x")),
        2,
        "HEAD 3 of word 2 is outside 0..2",
    ),
    (
        "partial heads",
        block(word("1", "a", "0", "root"), word("2", "b", "_", "x")),
        2,
        "HEAD of word 2 is '_'",
    ),
    ("no tree", block(word("1", "a", "_", "_")), 1, "no tree"),
    (
        "no root",
        block(word("1", "a", "2", "x"), word("2", "b", "1", "x")),
        1,
        "cycle through words",
    ),
    (
        "several roots",
        block(word("1", "a", "0", "root"), word("2", "b", "0", "root")),
        1,
        "exactly one word attached to the root 0, found words [1, 2]",
    ),
    (
        "cycle",
        block(word("1", "a", "0", "root"), word("2", "b", "3", "x"), word("3", "c", "2", "x")),
        1,
        "cycle through words [2, 3]",
    ),
    ("self loop", block(word("1", "a", "1", "root")), 1, "word 1 is its own head"),
    ("comments only", "# sent_id = lonely\n\n", 1, "no word lines"),
    ("empty", "", None, "no sentences"),
    ("blank only", "\n\n  \n", None, "no sentences"),
]


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [case[1:] for case in BAD_CASES],
    ids=[case[0] for case in BAD_CASES],
)
def test_bad_input_names_file_line_and_sentence(
    tmp_path: Path, text: str, line: int | None, fragment: str
) -> None:
    # Put a good sentence first so line numbers and ordinals are not trivially 1.
    prefix = "" if not text.strip() else SIMPLE
    offset = SIMPLE.count("\n") if prefix else 0
    path = tmp_path / "bad.conllu"
    path.write_text(prefix + text, encoding="utf-8")
    with pytest.raises(ConlluError) as info:
        read_conllu(path)
    error = info.value
    assert fragment in str(error)
    assert str(path) in str(error) and error.source == str(path)
    if line is not None:
        expected_id = "c" if "sent_id = c" in text else "lonely" if "lonely" in text else "#2"
        assert error.line == line + offset
        assert f"line {line + offset}" in str(error)
        assert error.sent_id == expected_id and f"sentence {expected_id}" in str(error)


def test_several_roots_with_a_no_root_variant() -> None:
    # All heads present but nobody attached to 0 and no cycle is impossible; with a forest
    # allowed (check_tree=False), several roots and cycles are accepted but not bad ranges.
    text = block(word("1", "a", "0", "root"), word("2", "b", "0", "root"))
    assert parse_conllu_text(text, check_tree=False)[0].heads == [0, 0]
    cyclic = block(word("1", "a", "2", "x"), word("2", "b", "1", "x"))
    assert parse_conllu_text(cyclic, check_tree=False)[0].heads == [2, 1]
    with pytest.raises(ConlluError, match=r"outside 0\.\.1"):
        parse_conllu_text(block(word("1", "a", "2", "x")), check_tree=False)


def test_missing_heads_without_tree_check() -> None:
    text = block(word("1", "a", "_", "_"), word("2", "b", "_", "_"))
    (sentence,) = parse_conllu_text(text, check_tree=False)
    assert sentence.heads is None
    assert sentence.to_conllu() == text
    parsed = sentence.with_tree([0, 1], ["root", "dep"])
    (reread,) = parse_conllu_text(parsed.to_conllu())
    assert reread.heads == [0, 1] and reread.deprels == ["root", "dep"]
    with pytest.raises(ConlluError, match="HEAD of word 2 is '_'"):
        parse_conllu_text(
            block(word("1", "a", "0", "root"), word("2", "b", "_", "_")), check_tree=False
        )


def test_invalid_utf8_is_a_conllu_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.conllu"
    path.write_bytes(SIMPLE.encode() + block(word("1", "caf\xe9", "0", "root")).encode("latin-1"))
    with pytest.raises(InputError, match="not valid utf-8") as info:
        read_conllu(path)
    assert info.value.line == 5 and info.value.source == str(path)
    with pytest.raises(InputError, match="not valid utf-8"):
        read_text(path)


# ---------------------------------------------------------------------------- lenient


def test_lenient_skips_bad_sentences_and_reports_them() -> None:
    bad_head = block(
        word("1", "a", "0", "root"), word("2", "b", "9", "x"), comments=("# sent_id = bad",)
    )
    bad_columns = "1\ta\t_\n\n"
    text = SIMPLE + bad_head + SIMPLE + bad_columns + SIMPLE
    report = ReadReport()
    with pytest.warns(SkippedSentencesWarning, match="skipped 2"):
        sentences = read_conllu(text, lenient=True, report=report)
    assert len(sentences) == 3 and all(s.sent_id == "s2" for s in sentences)
    assert [s.line for s in sentences] == [1, 9, 15]
    assert report.sentences == 3 and report.skipped_count == 2
    assert [(s.line, s.sent_id) for s in report.skipped] == [(7, "bad"), (13, "#4")]
    assert "HEAD 9" in report.skipped[0].reason and "columns" in report.skipped[1].reason
    with pytest.raises(ConlluError, match="line 7, sentence bad"):
        read_conllu(text)


def test_lenient_warns_without_a_report_and_fails_when_nothing_is_left() -> None:
    with pytest.warns(SkippedSentencesWarning, match="skipped 1"):
        assert len(read_conllu(SIMPLE + "1\tx\n\n", lenient=True)) == 1
    with pytest.warns(SkippedSentencesWarning), pytest.raises(ConlluError, match="no valid"):
        read_conllu("1\tx\n\n", lenient=True)


def test_good_input_reads_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(read_conllu(RICH + SIMPLE, lenient=True)) == 2


# ---------------------------------------------------------------------------- lines


@pytest.mark.parametrize("blank", [" ", "\t", " \t ", "\u3000"])
@pytest.mark.parametrize("where", ["between words", "after comments", "after the words"])
def test_whitespace_only_line_inside_a_sentence_is_a_malformed_line_of_it(
    blank: str, where: str
) -> None:
    """It used to end the sentence: lenient reading wrote the part before it as a complete
    tree and lost the rest, strict reading blamed the next part ("sentence #3")."""
    comment = "# sent_id = broken\n"
    first, second = word("1", "a", "0", "root") + "\n", word("2", "b", "1", "dep") + "\n"
    lines = {
        "between words": [comment, first, blank + "\n", second],
        "after comments": [comment, blank + "\n", first, second],
        "after the words": [comment, first, second, blank + "\n"],
    }[where]
    bad = "".join(lines) + "\n"
    text = SIMPLE + bad + SIMPLE
    blank_line = 5 + bad.splitlines().index(blank)
    with pytest.raises(ConlluError, match="only whitespace") as info:
        parse_conllu_text(text)
    assert (info.value.line, info.value.sent_id) == (blank_line, "broken")
    report = ReadReport()
    with pytest.warns(SkippedSentencesWarning, match="skipped 1"):
        sentences = parse_conllu_text(text, lenient=True, report=report)
    assert "".join(s.to_conllu() for s in sentences) == SIMPLE + SIMPLE  # nothing of it
    assert [(s.line, s.sent_id) for s in report.skipped] == [(blank_line, "broken")]


def test_whitespace_only_lines_between_sentences_separate_them() -> None:
    # Before the first sentence, and after the empty line that ends one: kept byte for byte.
    text = " \n\t\n" + SIMPLE + " \t\n\n  \n" + SIMPLE
    sentences = parse_conllu_text(text)
    assert [s.line for s in sentences] == [3, 10]
    assert "".join(s.to_conllu() for s in sentences) == text
    # Other whitespace there (a form feed) is no separator: it begins a sentence, and is
    # its malformed line (a missing empty line after it makes the next sentence that one).
    with pytest.raises(ConlluError, match="only whitespace") as info:
        parse_conllu_text(SIMPLE + "\x0c\n\n" + SIMPLE)
    assert (info.value.line, info.value.sent_id) == (5, "#2")


def test_a_byte_order_mark_alone_on_the_first_line_is_an_empty_line(tmp_path: Path) -> None:
    """It used to make a sentence without words, reported without a line number."""
    path = tmp_path / "bom.conllu"
    path.write_bytes(("\ufeff\n\n" + SIMPLE).encode())
    (sentence,) = read_conllu(path)
    assert sentence.line == 3 and sentence.to_conllu() == "\ufeff\n\n" + SIMPLE
    with pytest.raises(ConlluError, match="no sentences"):
        read_conllu(["\ufeff", ""])


def test_bare_cr_files_are_read_like_bare_cr_text(tmp_path: Path) -> None:
    """Old Mac files: a path (and standard input) used to split lines at LF only, so a
    bare-CR file was one line, and its first error quoted the whole file."""
    text = (RICH + SIMPLE).replace("\n", "\r")
    path = tmp_path / "mac.conllu"
    path.write_bytes(text.encode())
    from_text = parse_conllu_text(text)
    for sentences in (
        read_conllu(path),
        read_conllu(decoded_lines(io.BytesIO(text.encode()))),
        read_conllu(io.StringIO(text, newline="")),
    ):
        assert [s.line for s in sentences] == [s.line for s in from_text] == [1, 16]
        assert "".join(s.to_conllu() for s in sentences) == text
    write_conllu(read_conllu(path), str(tmp_path / "out.conllu"))
    assert (tmp_path / "out.conllu").read_bytes() == path.read_bytes()
    bad = (SIMPLE + "# sent_id = bad\n" + "1\tw\t_\n" * 500 + "\n").replace("\n", "\r")
    path.write_bytes(bad.encode())
    with pytest.raises(ConlluError, match="found 3") as info:
        read_conllu(path)
    assert (info.value.line, info.value.sent_id) == (6, "bad")
    assert len(str(info.value)) < len(str(path)) + 100


def test_bare_cr_plain_text_has_one_sentence_per_line(tmp_path: Path) -> None:
    path = tmp_path / "mac.txt"
    path.write_bytes(b"w1 w2\rw3\r\rw4\r\n")
    assert [(s.line, s.forms) for s in read_text(path)] == [
        (1, ["w1", "w2"]),
        (2, ["w3"]),
        (4, ["w4"]),
    ]


@pytest.mark.parametrize(
    ("lines", "fragment"),
    [
        (
            ["1\tw\t_\t_\t_\t_\t0\troot\t_\t_\r2\tv\t_\t_\t_\t_\t1\tdep\t_\t_\n"],
            r"carriage return \(\\r\) inside the line at character 23",
        ),
        (
            ["# sent_id = x\n1\tw\t_\t_\t_\t_\t0\troot\t_\t_"],
            r"line feed \(\\n\) inside the line at character 14",
        ),
        (
            io.StringIO(SIMPLE.replace("\n", "\r")),
            r"line 1, sentence s2: carriage return \(\\r\) inside the line at character 15",
        ),
    ],
    ids=["cr-in-list", "lf-in-list", "cr-through-stringio"],
)
def test_a_line_break_inside_a_callers_line_is_an_error(lines: Any, fragment: str) -> None:
    """Lines a caller split (a list, io.StringIO, which splits at LF only) may hold a CR or
    LF before their end: written back, they would read as other lines."""
    with pytest.raises(ConlluError, match=fragment) as info:
        read_conllu(lines)
    assert info.value.line == 1


def test_a_line_break_inside_a_callers_line_of_text_is_an_error() -> None:
    """It used to separate two tokens, silently joining two sentences."""
    with pytest.raises(InputError, match="carriage return") as info:
        read_text(["w1 w2\n", "w3\rw4\n"])
    assert (info.value.line, info.value.sent_id) == (2, "#2")


HUGE = 10_000
RANGE_CELLS = "\tab" + "\t_" * 8
NODE_CELLS = "\te" + "\t_" * 8
LONG_ID = "# sent_id = " + "s" * HUGE


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (block(word("x" * HUGE, "a", "0", "root")), "malformed token id 'xxx"),
        (block(word("1", "a", "\u2028" * HUGE, "root")), "HEAD '\\u2028\\u2028"),
        (block(word("1", "a", "9" * HUGE, "root")), "HEAD 999"),  # int() refuses 4,301 digits
        (block(word("9" * HUGE, "a", "0", "root")), "word id 999"),
        (block("1-" + "9" * HUGE + RANGE_CELLS, word("1", "a", "0", "root")), "ends at 999"),
        (block("1." + "9" * HUGE + NODE_CELLS, word("1", "a", "0", "root")), "empty node 1.99"),
        (block(word("1", "a", "x", "root"), comments=(LONG_ID,)), "sentence " + "s" * 197),
    ],
    ids=["token-id", "head", "head-digits", "word-id", "range-end", "empty-node", "sent-id"],
)
def test_messages_quote_a_bounded_excerpt_of_a_line(text: str, fragment: str) -> None:
    """Messages used to quote cells and sentence ids whole (a bare-CR file's first comment
    was the whole file), and numbers of over 4,300 digits raised ValueError."""
    with pytest.raises(ConlluError) as info:
        parse_conllu_text(text)
    message = str(info.value)
    assert fragment in message and "..." in message
    assert len(message) < 300, message[:300]


def test_the_detected_format_quotes_a_bounded_excerpt() -> None:
    """The reason logged for the format quoted a token id whole."""
    fmt, why = explain_format(["9" * HUGE + "\tw\n"])
    assert fmt == "conllu" and why.endswith("99...' and a tab") and len(why) < 150


# ---------------------------------------------------------------------------- streaming


def test_iter_conllu_is_lazy() -> None:
    consumed: list[str] = []

    def lines():
        for line in (SIMPLE * 1000).splitlines(keepends=True):
            consumed.append(line)
            yield line

    stream = iter_conllu(lines())
    first = next(stream)
    assert first.forms == ["Hello", "world"]
    # One-sentence look-ahead: only the first block and the next sentence's first line.
    assert len(consumed) == SIMPLE.count("\n") + 1
    assert sum(1 for _ in stream) == 999


# ---------------------------------------------------------------------------- plain text


def test_read_text_makes_unparsed_sentences_that_write_valid_conllu(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("The cat  sat .\n\n   \nIt  # ran\n", encoding="utf-8")
    sentences = read_text(path)
    assert [s.forms for s in sentences] == [["The", "cat", "sat", "."], ["It", "#", "ran"]]
    assert [s.line for s in sentences] == [1, 4]
    assert [s.sent_id for s in sentences] == ["#1", "#2"]
    assert sentences[0].heads is None and sentences[0].upos == ["_"] * 4
    assert sentences[0].source == str(path)
    text = sentences[1].to_conllu()
    assert text == (
        "# text = It # ran\n"
        "1\tIt\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\t#\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "3\tran\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "\n"
    )
    parsed = sentences[1].with_tree([3, 3, 0], ["nsubj", "punct", "root"])
    (reread,) = parse_conllu_text(parsed.to_conllu())
    assert reread.heads == [3, 3, 0] and reread.forms == ["It", "#", "ran"]
    assert read_text(["\ufeffa b", "c"])[0].forms == ["a", "b"]


@given(
    st.lists(
        st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6).filter(
            lambda token: token.split() == [token]
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(1, 1000),
    st.integers(1, 50),
)
def test_text_sentences_are_the_ones_the_conllu_reader_makes_of_their_block(
    tokens: list[str], line: int, ordinal: int
) -> None:
    """Plain text builds its sentences directly; reading their CoNLL-U block gives the same."""
    lines = _conllu_lines(tokens)
    block = _Block(line, lines, ordinal, start=0, end=len(lines) - 1)
    read = _parse_block(block, "in.txt", check_tree=False)
    assert _text_sentence(tokens, "in.txt", line, ordinal) == read


def test_read_text_refuses_empty_input() -> None:
    with pytest.raises(InputError, match="no sentences"):
        read_text(["", "  "])


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (SIMPLE.splitlines(keepends=True), "conllu"),
        (RICH.splitlines(keepends=True), "conllu"),
        (["\n", "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n"], "conllu"),
        (["The cat sat .\n"], "text"),
        (["# just a hashtag line\n", "and more text\n"], "text"),
        (["#hashtag\n"], "text"),
        (["# sent_id = 1\n", "# text = a\n"], "conllu"),
        (["a\tb\tc\n"], "text"),
        ([], "text"),
    ],
)
def test_detect_format(lines: list[str], expected: str) -> None:
    assert detect_format(lines) == expected


# ---------------------------------------------------------------------------- building


def test_from_words_synthesizes_canonical_conllu() -> None:
    sentence = Sentence.from_words(
        ["I", "run"], heads=[2, 0], deprels=["nsubj", "root"], upos=["PRON", "VERB"], sent_id="x"
    )
    text = sentence.to_conllu()
    assert text.startswith("# sent_id = x\n# text = I run\n1\tI\t_\tPRON\t_\t_\t2\tnsubj\t_\t_\n")
    (reread,) = parse_conllu_text(text)
    assert (reread.forms, reread.heads, reread.upos) == (["I", "run"], [2, 0], ["PRON", "VERB"])
    with pytest.raises(ValueError, match="contains a tab"):
        Sentence.from_words(["a\tb"]).to_conllu()
    with pytest.raises(ValueError, match="heads has 1 entries for 2 words"):
        Sentence.from_words(["a", "b"], heads=[0])


def test_pyconll_interop() -> None:
    (sentence,) = parse_conllu_text(RICH)
    converted = to_pyconll(sentence.with_tree([0, 1, 5, 5, 1, 5]))
    assert converted.id == "rich-1"
    assert converted["6"].head == "5" and converted["1-2"].form == "Vámonos"
    back = from_pyconll(converted)
    assert back.forms == sentence.forms and back.heads == [0, 1, 5, 5, 1, 5]


@pytest.mark.parametrize(
    ("sentences", "expected"),
    [
        ([["The", "cat", "sat", "."]], None),  # tokenized
        ([["The", "cat", "sat."]], (1, 1, "'sat.'")),
        ([["Well,", "yes", "!"], ["Why?"]], (2, 2, "'Well,', 'Why?'")),
        ([["in", "the", "U.S."]] + [["a", "b", "."]] * 5, None),  # an abbreviation, 1 in 6
        ([["in", "the", "U.S."]] + [["a", "b", "."]] * 4, (1, 5, "'U.S.'")),
        ([["1,000", "dollars", "(", "$", ")", "."]], None),  # marks inside words or alone
        ([["a,", "b,", "c,", "d,"]], (1, 1, "'a,', 'b,', 'c,'")),
        ([], None),
    ],
)
def test_untokenized_note_counts_punctuation_attached_to_words(
    sentences: list[list[str]], expected: tuple[int, int, str] | None
) -> None:
    note = untokenized_note(sentences)
    if expected is None:
        assert note is None
    else:
        flagged, probed, examples = expected
        attached = f"have punctuation attached to words: {examples}"
        assert note == f"{flagged} of the first {probed} sentences {attached}"


def test_untokenized_note_reads_only_the_first_sentences() -> None:
    tokenized = [["a", "."]] * UNTOKENIZED_PROBE
    assert untokenized_note(tokenized + [["b."]] * 100) is None
    assert untokenized_note(iter([["b."]] * 10 + tokenized)) == (
        f"10 of the first {UNTOKENIZED_PROBE} sentences have punctuation attached to words: 'b.'"
    )
