"""Fuzzing the CoNLL-U and plain-text readers and format detection.

Inputs are random bytes and real sentences (multiword tokens, empty nodes, comments) mutated
the ways files break: byte order marks, CR and CRLF, NUL, bytes that are not UTF-8, tabs and
spaces swapped, multiword ranges broken, columns and lines deleted or duplicated, whitespace-only
lines, huge lines and numbers.  Every input goes through every entry point: a file on disk,
standard input (:func:`~neuralparse.io.sources.decoded_lines` over a binary stream, what
``predict.py input=-`` reads), a ``str``, a list of lines and an open text file.  The contract:

* a strict read either succeeds, and writing its sentences back gives the input exactly, up to
  the normalisation :mod:`neuralparse.io.conllu` documents (a last line without ending gets
  ``\\n``; a last sentence without its empty line gets one, ending like its last line), or
  raises :class:`ConlluError` whose message names the source and, unless the input holds no
  sentence, a line of the input; messages stay short whatever the input holds;
* a lenient read writes back exactly the input's sentences less those it skipped, reports
  each skipped sentence (count, line inside that sentence, warning), and skips a sentence
  exactly when a strict read fails there;
* all entry points agree; the plain-text reader turns each line holding a token into one
  sentence of its whitespace-separated tokens, or raises :class:`InputError` at the first
  line that is not valid UTF-8 or holds a line break;
* :func:`detect_format` answers ``"text"`` only when no line could be CoNLL-U: never for
  input the CoNLL-U reader accepts, nor while an intact word line or ``# key = value`` comment
  of the real sentences is among the first lines.

The expected sentence blocks come from :func:`reference_blocks`, a direct transcription of the
documented rules.  Profiles: ``ci`` (the default: 150 examples per test, 3-4 s on the 2-core
development machine, 10 s with pytest's start-up, under 30 s when the machine is busy) and
``nightly`` (3,000 per test, about 2 minutes), chosen with ``NEURALPARSE_FUZZ``::

    NEURALPARSE_FUZZ=nightly .venv/bin/python -m pytest -q tests/test_fuzz_readers.py

Each bug the fuzzer found has a named ``@example`` here and a plain regression test in
tests/test_io.py (through predict.py's entry points: tests/test_reliability.py).
"""

from __future__ import annotations

import io
import os
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neuralparse.errors import ConlluError, InputError
from neuralparse.io import (
    ReadReport,
    Sentence,
    SkippedSentencesWarning,
    detect_format,
    parse_conllu_text,
    read_conllu,
    read_text,
)
from neuralparse.io.sources import decoded_lines
from neuralparse.io.text import explain_format

settings.register_profile(
    "fuzz-ci",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz-nightly",
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# A settings object per test rather than a loaded profile, so that this module's choice does
# not change the other modules' hypothesis tests.
FUZZ = settings.get_profile(f"fuzz-{os.environ.get('NEURALPARSE_FUZZ', 'ci')}")

BOM = "\ufeff"
MESSAGE_LIMIT = 2500  # characters of a message besides the source name: bounded, not tiny


# ------------------------------------------------------------------------- real sentences

SENTENCES = [
    # Comments, a multiword token, empty nodes (one before word 1), enhanced DEPS, MISC.
    "# newdoc id = doc1\n"
    "# sent_id = rich-1\n"
    "# text = Vámonos al mar.\n"
    "0.1\tPRO\t_\tPRON\t_\t_\t_\t_\t2:nsubj\t_\n"
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tVamos\tir\tVERB\t_\tMood=Imp\t0\troot\t0:root\t_\n"
    "2\tnos\tnosotros\tPRON\t_\t_\t1\tobj\t1:obj\t_\n"
    "2.1\tir\t_\tVERB\t_\t_\t_\t_\t1:conj\tNote=an elided verb\n"
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\ta\ta\tADP\t_\t_\t5\tcase\t5:case\t_\n"
    "4\tel\tel\tDET\t_\t_\t5\tdet\t5:det\t_\n"
    "5\tmar\tmar\tNOUN\t_\t_\t1\tobl\t1:obl:a\tSpaceAfter=No\n"
    "6\t.\t.\tPUNCT\t_\t_\t1\tpunct\t1:punct\t_\n"
    "\n",
    # Greek (multi-byte UTF-8), features.
    "# sent_id = gdt-7\n"
    "# text = Αυτό είναι ένα τεστ\n"
    "1\tΑυτό\tαυτός\tPRON\tPnDmNe\tCase=Nom|Gender=Neut\t4\tnsubj\t_\t_\n"
    "2\tείναι\tείμαι\tAUX\tVbMn\tMood=Ind\t4\tcop\t_\t_\n"
    "3\tένα\tένας\tDET\tAtIdNe\tDefinite=Ind\t4\tdet\t_\t_\n"
    "4\tτεστ\tτεστ\tNOUN\tNoNe\t_\t0\troot\t_\tSpaceAfter=No\n"
    "\n",
    # No sent_id, a comment without '=', HEAD '_' (no tree: valid only without check_tree).
    "# a licence line\n"
    "1\tHello\thello\tINTJ\t_\t_\t_\t_\t_\t_\n"
    "2\tworld\tworld\tNOUN\t_\t_\t_\t_\t_\t_\n"
    "\n",
    # The smallest sentence.
    "1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t_\t_\n\n",
]
"""Real sentences, each with its terminating empty line."""

_POOL_LINES = [line for sentence in SENTENCES for line in sentence.split("\n") if line]
WORD_LINES = frozenset(line for line in _POOL_LINES if not line.startswith("#"))
METADATA_LINES = frozenset(line for line in _POOL_LINES if line.startswith("#") and "=" in line)


# ------------------------------------------------------------------------- mutations

Draw = Callable[[st.SearchStrategy[Any]], Any]


def _position(data: bytes, draw: Draw) -> int:
    return draw(st.integers(0, len(data)))


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]  # bytes split at \n, \r\n and \r only


def _insert(pieces: list[bytes]) -> Callable[[bytes, Draw], bytes]:
    def mutate(data: bytes, draw: Draw) -> bytes:
        at = _position(data, draw)
        return data[:at] + draw(st.sampled_from(pieces)) + data[at:]

    return mutate


def _line_start(data: bytes, draw: Draw) -> int:
    """The offset of the start of a random line (or the end of the data)."""
    starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", data)]
    return draw(st.sampled_from(starts))


def insert_line(data: bytes, draw: Draw) -> bytes:
    """A whitespace-only, empty, comment or garbage line between two lines."""
    at = _line_start(data, draw)
    line = draw(
        st.sampled_from(
            [b" ", b"\t", b" \t ", b"\x0c", b"\xe2\x80\xa8", b"", b"#", b"# sent_id = new", b"\x00"]
        )
    )
    return data[:at] + line + draw(st.sampled_from([b"\n", b"\r\n", b"\r"])) + data[at:]


def change_endings(data: bytes, draw: Draw) -> bytes:
    new = draw(st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\r"]))
    lines = _lines(data)
    index = draw(st.integers(0, len(lines) - 1))
    if draw(st.booleans()):  # every line
        return b"".join(line.rstrip(b"\r\n") + new for line in lines)
    lines[index] = lines[index].rstrip(b"\r\n") + new
    return b"".join(lines)


def swap_tabs_and_spaces(data: bytes, draw: Draw) -> bytes:
    lines = _lines(data)
    index = draw(st.integers(0, len(lines) - 1))
    line = lines[index]
    if draw(st.booleans()):
        line = line.replace(b"\t", b" ")
    else:
        tabs = [i for i, byte in enumerate(line) if byte in b"\t "]
        if tabs:
            i = draw(st.sampled_from(tabs))
            line = line[:i] + (b" " if line[i : i + 1] == b"\t" else b"\t") + line[i + 1 :]
    lines[index] = line
    return b"".join(lines)


# Ids and HEADs, broken multiword ranges and empty nodes, an Arabic-Indic digit, numbers that
# int() refuses to convert (over 4,300 digits).
CELLS = b"0 1 2 7 -1 01 1-2 2-1 1- -2 1-1 3-9 1.1 0.2 1. .1 1.1.1 _ x \xd9\xa3".split()
CELLS += [b"9" * 5000, b"1-" + b"9" * 5000, b"1." + b"9" * 5000]


def edit_columns(data: bytes, draw: Draw) -> bytes:
    """Delete, duplicate or empty a column, or put a new value in it (ids and HEADs too)."""
    lines = _lines(data)
    index = draw(st.integers(0, len(lines) - 1))
    content = lines[index].rstrip(b"\r\n")
    ending = lines[index][len(content) :]
    fields = content.split(b"\t")
    column = draw(st.integers(0, len(fields) - 1))
    action = draw(st.sampled_from(["delete", "duplicate", "empty", "value"]))
    if action == "delete":
        del fields[column]
    elif action == "duplicate":
        fields.insert(column, fields[column])
    elif action == "empty":
        fields[column] = b""
    else:
        fields[column] = draw(st.sampled_from(CELLS))
    lines[index] = b"\t".join(fields) + ending
    return b"".join(lines)


def edit_lines(data: bytes, draw: Draw) -> bytes:
    lines = _lines(data)
    index = draw(st.integers(0, len(lines) - 1))
    if draw(st.booleans()):
        del lines[index]
    else:
        lines.insert(index, lines[index])
    return b"".join(lines)


def huge(data: bytes, draw: Draw) -> bytes:
    """A huge cell or line: a whole file's worth of text where a line is expected."""
    at = _position(data, draw)
    piece = draw(st.sampled_from([b"x", b"\xce\xb1", b"\t", b"# ", b"_\t"])) * draw(
        st.sampled_from([1000, 20_000])
    )
    return data[:at] + piece + data[at:]


def truncate(data: bytes, draw: Draw) -> bytes:
    return data[: _position(data, draw)]


MUTATIONS = [
    _insert([b"\xef\xbb\xbf"]),  # a byte order mark, anywhere
    _insert([b"\r", b"\r\n", b"\n", b"\n\n"]),
    _insert([b"\x00"]),
    _insert([b"\xff", b"\xc3", b"\xe9", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xc0\xaf"]),
    insert_line,
    change_endings,
    swap_tabs_and_spaces,
    edit_columns,
    edit_lines,
    huge,
    truncate,
]


@st.composite
def mutated_documents(draw: Draw) -> bytes:
    sentences = draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    data = "".join(sentences).replace("\n", ending).encode()
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    for _ in range(draw(st.integers(0, 3))):
        data = draw(st.sampled_from(MUTATIONS))(data, draw)
    return data


PIECES = [b"\t", b"\n", b"\r", b"\r\n", b" ", b"_", b"0", b"1", b"2", b"3", b"-", b".", b"#"]
PIECES += [b"# sent_id = ", b"=", b"\xef\xbb\xbf", b"\x00", b"\xff", b"\xc3", b"\xce\xb1"]
PIECES += [b"\x0c", b"a", b"root", b"1\tw\t_\t_\t_\t_\t0\troot\t_\t_", b"\t_" * 8]

random_bytes = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join),
)
documents = st.one_of(random_bytes, mutated_documents())


# ------------------------------------------------------------------------- the reference


def reference_lines(text: str) -> list[str]:
    """``text`` split as the readers split it: at ``\\n``, ``\\r\\n`` and ``\\r``."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def content_of(line: str, number: int) -> str:
    """``line`` without its ending, and without a byte order mark opening line 1."""
    ending = 2 if line.endswith("\r\n") else 1 if line.endswith(("\r", "\n")) else 0
    content = line[: len(line) - ending]
    return content.removeprefix(BOM) if number == 1 else content


@dataclass
class Block:
    first: int  # line numbers of the block's first and last line
    last: int
    text: str  # what writing its sentence back gives


def reference_blocks(lines: list[str]) -> list[Block]:
    """The sentence blocks of ``lines``, transcribed from the rules of the conllu module's
    docstring: a sentence starts at a line that is neither empty nor only spaces and tabs, and
    ends at the next empty line; lines outside sentences go with the sentence before them (the
    first sentence, before it)."""
    blocks: list[Block] = []
    current: list[str] = []
    first = 1
    state = "before"  # "inside" a sentence, or "after" the empty line that ended one
    for number, raw in enumerate(lines, start=1):
        line = raw if raw.endswith(("\n", "\r")) else raw + "\n"
        content = content_of(line, number)
        if state == "inside":
            state = "after" if content == "" else "inside"
        elif content.strip(" \t") != "":
            if state == "after":
                blocks.append(Block(first, number - 1, "".join(current)))
                current, first = [], number
            state = "inside"
        current.append(line)
    if state == "inside":
        last = current[-1]
        current.append("\r\n" if last.endswith("\r\n") else last[-1])
    if state != "before":
        blocks.append(Block(first, len(lines), "".join(current)))
    return blocks


def block_at(blocks: list[Block], line: int) -> int:
    (index,) = [i for i, block in enumerate(blocks) if block.first <= line <= block.last]
    return index


def check_message(error: InputError, name: str, lines: int, *, located: bool) -> None:
    """``error`` names ``name`` and, when ``located``, one of the ``lines`` lines; short."""
    message = str(error)
    assert error.source == name and message.startswith(name)
    assert len(message) <= len(name) + MESSAGE_LIMIT, message[:300]
    if located:
        assert error.line is not None and 1 <= error.line <= lines, message[:300]
        assert f"line {error.line}" in message


# ------------------------------------------------------------------------- entry points


@dataclass
class Entry:
    """One way of handing an input to the readers, and the lines they will see."""

    name: str  # what messages call the source
    conllu: Callable[..., list[Sentence]] | None  # read_conllu's way in, taking its options
    text: Callable[[], list[Sentence]] | None  # read_text's
    lines: list[str]
    split_alike: bool = True  # splits lines as paths do, so it must give what they give
    stops: bool = False  # stops at a byte that is not UTF-8 (see check_stop)


def entries(data: bytes, path: Path) -> list[Entry]:
    """Every entry point for ``data``.  All split lines alike except an open file that splits
    at ``\\n`` only (``io.StringIO``'s default: its lines may hold a carriage return) and one
    that decodes strictly, as ``open(path)`` does (bad bytes stop it, see :func:`check_stop`)."""
    path.write_bytes(data)
    text = data.decode("utf-8", "surrogateescape")
    lines = reference_lines(text)
    stops = not _is_utf8(text)

    def entry(
        source: Callable[[], Any], name: str, given: str | None = None, strict: bool = False
    ) -> Entry:
        """``source()`` read under the ``name`` messages use, ``given`` to the readers (only
        standard input is named by its caller, predict.py; the others name themselves)."""
        return Entry(
            name,
            lambda **options: read_conllu(source(), name=given, **options),
            lambda: read_text(source(), name=given),
            lines,
            split_alike=not (strict and stops),
            stops=strict and stops,
        )

    found = [
        entry(lambda: path, str(path)),
        entry(lambda: decoded_lines(io.BytesIO(data)), "<stdin>", given="<stdin>"),
        entry(lambda: list(lines), "<lines>"),
        entry(lambda: io.StringIO(text, newline=""), "<file>"),
        entry(
            lambda: io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=""),
            "<file>",
            strict=True,
        ),
        Entry(
            "<file>",
            lambda **options: read_conllu(io.StringIO(text), **options),
            lambda: read_text(io.StringIO(text)),
            io.StringIO(text).readlines(),
            split_alike=False,
        ),
    ]
    inline = "\n" in text or "\r" in text  # a str without a line break is a path
    found.append(
        Entry(
            "<string>",
            lambda **options: parse_conllu_text(text, **options),
            (lambda: read_text(text)) if inline else None,
            lines,
        )
    )
    if inline:
        found.append(Entry("<string>", lambda **options: read_conllu(text, **options), None, lines))
    return found


# ------------------------------------------------------------------------- CoNLL-U


def check_conllu(entry: Entry, check_tree: bool) -> tuple[Any, ...]:
    """Read ``entry`` strictly and leniently, check both against the reference and each
    other, and return what the strict read gave (for comparing entry points)."""
    blocks = reference_blocks(entry.lines)
    count = len(entry.lines)
    try:
        sentences = entry.conllu(check_tree=check_tree)
    except ConlluError as error:
        check_message(error, entry.name, count, located=bool(blocks))
        strict: tuple[Any, ...] = ("error", error.line, error.sent_id, error.reason)
    else:
        assert "".join(s.to_conllu() for s in sentences) == "".join(b.text for b in blocks)
        strict = ("read", tuple(s.to_conllu() for s in sentences))

    report = ReadReport()
    kept: list[Sentence] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            kept = entry.conllu(check_tree=check_tree, lenient=True, report=report)
        except ConlluError as error:  # nothing to read: no sentence, or every one skipped
            check_message(error, entry.name, count, located=False)
            assert report.sentences == 0 and report.skipped_count == len(blocks)
    assert len(kept) == report.sentences
    matched = [block_at(blocks, s.line) for s in kept]
    assert matched == sorted(set(matched))
    assert [s.to_conllu() for s in kept] == [blocks[i].text for i in matched]
    skipped = [i for i in range(len(blocks)) if i not in matched]
    assert [block_at(blocks, s.line) for s in report.skipped] == skipped  # type: ignore[arg-type]
    assert len(report.summary()) <= len(entry.name) + MESSAGE_LIMIT
    warned = [w for w in caught if issubclass(w.category, SkippedSentencesWarning)]
    assert len(warned) == (1 if skipped else 0)
    if strict[0] == "read":
        assert not skipped
    elif blocks:
        first = report.skipped[0]
        assert strict[1:] == (first.line, first.sent_id, first.reason)
    return strict


def check_stop(entry: Entry, read: Callable[[], list[Sentence]]) -> None:
    """A text stream that decodes strictly raises when it meets a byte that is not UTF-8, and
    cannot go on: reading it (even leniently) ends in an :class:`InputError` naming the source
    and a line (documented as approximate: the stream decodes ahead in blocks)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkippedSentencesWarning)
        with pytest.raises(InputError) as caught:
            read()
    check_message(caught.value, entry.name, len(entry.lines), located=True)


@FUZZ
@given(data=documents, check_tree=st.booleans())
@example(  # a whitespace-only line inside a sentence used to split it in two
    data=SENTENCES[1].replace("2\tείναι", " \t\n2\tείναι").encode(), check_tree=True
)
@example(  # a bare-CR file was one line, quoted whole in its message
    data=(SENTENCES[0] + SENTENCES[1] * 3).replace("\n", "\r").encode(), check_tree=True
)
@example(  # numbers int() refuses to convert raised ValueError
    data=b"1\tw\t_\t_\t_\t_\t" + b"9" * 5000 + b"\troot\t_\t_\n", check_tree=True
)
@example(data=b"9" * 5000 + b"\tw\t_\t_\t_\t_\t0\troot\t_\t_\n", check_tree=True)
@example(  # a BOM-only line 1 before an empty line: a sentence without words, and no line
    data=b"\xef\xbb\xbf\n\n1\tw\t_\t_\t_\t_\t0\troot\t_\t_\n", check_tree=True
)
def test_conllu_reader_reads_or_reports(data: bytes, check_tree: bool, fuzz_dir: Path) -> None:
    alike = []
    for entry in entries(data, fuzz_dir / "in"):
        if entry.stops:
            check_stop(entry, partial(entry.conllu, check_tree=check_tree))
            check_stop(entry, partial(entry.conllu, check_tree=check_tree, lenient=True))
            continue
        outcome = check_conllu(entry, check_tree)
        if entry.split_alike:
            alike.append(outcome)
    assert all(outcome == alike[0] for outcome in alike)  # reasons and ids name no source


@FUZZ
@given(
    lines=st.lists(
        st.text(alphabet=st.sampled_from(["\t", " ", "\r", "\n", "1", "_", "#", "w", BOM])),
        max_size=12,
    )
)
@example(lines=["1\tw\t_\t_\t_\t_\t0\troot\t_\t_\r\r\n"])  # a CR a caller's line holds
@example(lines=["w1 w2\rw3"])  # a CR that used to separate two tokens of one sentence
@example(lines=["\ufeff", ""])  # a BOM-only line 1 used to be a sentence without a line
def test_readers_of_a_callers_lines(lines: list[str]) -> None:
    """Lines a caller split may hold line breaks anywhere, or lack their endings."""

    def read(**options: Any) -> list[Sentence]:
        return read_conllu(list(lines), **options)

    check_conllu(Entry("<lines>", read, None, lines), check_tree=False)
    check_text(Entry("<lines>", None, lambda: read_text(list(lines)), lines))


# ------------------------------------------------------------------------- plain text


def check_text(entry: Entry) -> tuple[Any, ...]:
    """Read ``entry`` as plain text, check it against the rules, return what it gave."""
    assert entry.text is not None
    expected: list[tuple[int, list[str]]] = []
    bad: int | None = None
    for number, line in enumerate(entry.lines, start=1):
        content = content_of(line, number)
        tokens = content.split()
        if not tokens:
            continue
        if "\r" in content or "\n" in content or not _is_utf8(line):
            bad = number
            break
        expected.append((number, tokens))
    try:
        sentences = entry.text()
    except InputError as error:
        check_message(error, entry.name, len(entry.lines), located=bad is not None)
        assert error.line == bad and (bad is not None or not expected)
        return ("error", error.line, error.sent_id, error.reason)
    assert bad is None
    assert [(s.line, s.forms) for s in sentences] == expected
    for sentence in sentences:  # written as valid CoNLL-U that reads back the same words
        (reread,) = parse_conllu_text(sentence.to_conllu(), check_tree=False)
        assert reread.forms == sentence.forms and reread.heads is None
    return ("read", tuple(s.to_conllu() for s in sentences))


def _is_utf8(line: str) -> bool:
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@FUZZ
@given(data=documents)
@example(data=b"w1 w2\rw3\r")  # bare CR: two sentences, not one
def test_text_reader_reads_or_reports(data: bytes, fuzz_dir: Path) -> None:
    alike = []
    for entry in entries(data, fuzz_dir / "in.txt"):
        if entry.text is None:
            continue
        if entry.stops:
            check_stop(entry, entry.text)
            continue
        outcome = check_text(entry)
        if entry.split_alike:
            alike.append(outcome)
    assert all(outcome == alike[0] for outcome in alike)


# ------------------------------------------------------------------------- detection


def could_be_conllu(lines: Iterable[str]) -> bool:
    """Whether an intact word line or metadata comment of :data:`SENTENCES` is among ``lines``
    (a byte order mark before it does not count: detection ignores it)."""
    for line in lines:
        content = line.rstrip("\r\n").lstrip(BOM)
        if content in WORD_LINES or content in METADATA_LINES:
            return True
    return False


@FUZZ
@given(data=documents)
@example(data=b"9" * 20_000 + b"\tw\n")  # the reason for the log used to quote the whole id
def test_detect_format_says_text_only_when_no_line_could_be_conllu(data: bytes) -> None:
    lines = reference_lines(data.decode("utf-8", "surrogateescape"))
    detected, why = explain_format(lines)
    assert detected == detect_format(lines) and detected in ("conllu", "text")
    assert len(why) <= MESSAGE_LIMIT
    if could_be_conllu(lines[:50]):  # detection reads at least the first 50 lines
        assert detected == "conllu"
    try:
        read_conllu(list(lines), check_tree=False)
    except InputError:
        return
    assert detected == "conllu"


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module: a function-scoped ``tmp_path`` is not reset between the
    examples of one test anyway, and each example overwrites its file."""
    return tmp_path_factory.mktemp("fuzz")
