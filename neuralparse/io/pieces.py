"""Pieces of whole sentences of a CoNLL-U or plain-text file, read apart from each other.

:func:`cut_pieces` reads a file in large binary blocks and cuts it where sentences begin, every
``size`` sentences, without decoding it and, for CoNLL-U, without a Python loop over its lines
(regular expressions find where sentences begin), so that one process can hand a large file
out to several readers quickly.  :func:`read_piece` reads one piece, anywhere, into exactly the
sentences, line numbers, sentence ids, errors and lenient skips that reading the whole file
with :func:`~neuralparse.io.iter_conllu` (``check_tree=False``) or
:func:`~neuralparse.io.iter_text` gives for those lines: a piece knows the line number of its
first line and the number of sentences before it, and is read with the readers' own code.

Where a sentence begins follows the readers' rules (:mod:`neuralparse.io.conllu`,
:mod:`neuralparse.io.text`).  Lines end with ``\\n``, ``\\r\\n`` or ``\\r``.  A text sentence
is a line with a character that is not whitespace (``str.split``).  The first CoNLL-U sentence
begins at the first line with a character other than spaces and tabs; every later one at such
a line after an *empty* line (nothing before its ending) and any lines of only spaces and tabs:
an empty line ends the sentence it is in, if any, so the next such line begins one.  A byte
order mark opening the file counts as nothing.  Only ASCII bytes matter to these rules, so
CoNLL-U is cut as bytes; a text line is decoded only when it has no ASCII character that
settles it.  A piece never begins at a CoNLL-U line that opens with U+FEFF (the reader would
take it for a byte order mark on the piece's first line): the piece before takes one more
sentence.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from neuralparse.errors import ConlluError, InputError
from neuralparse.io.conllu import SkippedSentence, _blocks, _parse_block
from neuralparse.io.sentence import Sentence
from neuralparse.io.sources import ENCODING, text_lines
from neuralparse.io.text import iter_text

FORMATS = ("conllu", "text")

_BYTE_ORDER_MARK = "\ufeff".encode(ENCODING)
_BLOCK_BYTES = 1 << 22
"""Bytes read at a time (each is copied about twice on its way into a piece)."""

_FIRST_CONLLU_LINE = re.compile(rb"(?:\A|(?<=[\r\n]))(?=[ \t]*[^ \t\r\n])")
"""The start of the first line with something other than spaces and tabs."""


def _after_empty_line(ending: bytes) -> re.Pattern[bytes]:
    """The line endings, empty line and separator lines before a CoNLL-U sentence, lines
    ending with ``ending`` (a regular expression); the match ends where the sentence begins."""
    return re.compile(ending + ending + rb"(?:[ \t]*" + ending + rb")*(?=[ \t]*[^ \t\r\n])")


# Searches that begin with a literal run far faster: files with one kind of line ending get one.
_NEXT_CONLLU_SENTENCE = {
    "\n": _after_empty_line(rb"\n"),
    "\r\n": _after_empty_line(rb"\r\n"),
    "mixed": _after_empty_line(rb"(?:\r\n|\r(?!\n)|\n)"),
}
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n|\Z)")
_ASCII_WHITESPACE = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
"""The ASCII characters that ``str.isspace`` counts as whitespace."""


@dataclass(frozen=True)
class Piece:
    """Consecutive whole sentences of a file (with the lines between them), as bytes."""

    index: int
    """Position among the file's pieces, from 0."""
    data: bytes
    first_line: int
    """The line number of the piece's first line in the file."""
    sentences_before: int
    """Sentences of the file before the piece (CoNLL-U: malformed ones too)."""
    sentences: int
    """Sentences of the piece, as :func:`cut_pieces` counted them."""


@dataclass
class PieceSentences:
    """What :func:`read_piece` read: the sentences and the ones lenient reading skipped."""

    sentences: list[Sentence]
    skipped: list[SkippedSentence]


def cut_pieces(path: Path, fmt: str, size: int) -> Iterator[Piece]:
    """The file ``path`` (format ``conllu`` or ``text``) in pieces of ``size`` sentences
    (the last one fewer; a file without sentences is one piece without any)."""
    if fmt not in FORMATS:
        raise ValueError(f"cannot cut {fmt!r} input in pieces")
    starts_in = _conllu_starts if fmt == "conllu" else _text_starts
    with path.open("rb") as handle:
        buffer = b""
        base = 0  # where the piece being gathered begins in buffer
        starts: list[int] = []  # where its sentences, and those found after them, begin
        scan = 0  # where to look for the next sentence
        index, first_line, before = 0, 1, 0
        eof = False
        while not eof:
            block = handle.read(_BLOCK_BYTES)
            eof = not block
            buffer, scan, starts = buffer[base:] + block, scan - base, [s - base for s in starts]
            base = 0
            if index == 0 and len(buffer) < len(_BYTE_ORDER_MARK) and not eof:
                continue  # not enough to tell a byte order mark yet
            view = buffer
            if index == 0 and buffer.startswith(_BYTE_ORDER_MARK):  # nothing to the readers
                view = b"   " + buffer[len(_BYTE_ORDER_MARK) :]
            found, scan = starts_in(view, scan, bool(index or starts), eof)
            starts += found
            first = 0  # the piece's first sentence in starts
            while True:
                cut = first + size  # the first sentence of the next piece
                while (
                    fmt == "conllu"
                    and cut < len(starts)
                    and view.startswith(_BYTE_ORDER_MARK, starts[cut])
                ):
                    cut += 1
                if cut >= len(starts):
                    break
                yield Piece(index, buffer[base : starts[cut]], first_line, before, cut - first)
                index += 1
                first_line += _line_breaks(buffer, base, starts[cut])
                before += cut - first
                base, first = starts[cut], cut
            starts = starts[first:]
        if buffer[base:] or index == 0:
            yield Piece(index, buffer[base:], first_line, before, len(starts))


def _line_breaks(data: bytes, start: int, end: int) -> int:
    breaks = data.count(b"\n", start, end)
    if data.find(b"\r", start, end) >= 0:  # (find is much faster than count)
        breaks += data.count(b"\r", start, end) - data.count(b"\r\n", start, end)
    return breaks


def _conllu_starts(
    data: bytes, position: int, after_first: bool, eof: bool
) -> tuple[list[int], int]:
    """Where the CoNLL-U sentences that begin in ``data`` from ``position`` on begin
    (``after_first``: a sentence began before ``position``), and where to search next.  A
    start found is one whatever the next block holds (it needs one of the sentence's
    characters), but one close to the end of ``data`` waits for the next block, which shows
    whether the sentence opens with a byte order mark."""
    found: list[int] = []
    if not after_first:
        first = _FIRST_CONLLU_LINE.search(data, position)
        if first is None:
            return found, position
        found.append(first.end())
        position = first.end()
    if data.find(b"\r", position) < 0:
        pattern = _NEXT_CONLLU_SENTENCE["\n"]
    elif (
        data.count(b"\r\n", position) == data.count(b"\r", position) == data.count(b"\n", position)
    ):
        pattern = _NEXT_CONLLU_SENTENCE["\r\n"]
    else:
        pattern = _NEXT_CONLLU_SENTENCE["mixed"]
    last = len(data) if eof else len(data) - len(_BYTE_ORDER_MARK)
    found += [end for match in pattern.finditer(data, position) if (end := match.end()) <= last]
    return found, found[-1] if found else position


def _text_starts(data: bytes, position: int, after_first: bool, eof: bool) -> tuple[list[int], int]:
    """Where the text sentences (lines with words) that begin in ``data`` from ``position``
    on begin, and where to search next.  Before ``eof`` the last line of ``data`` waits for the
    next block, which may go on with it (even a ``\\r`` may be the start of ``\\r\\n``)."""
    found: list[int] = []
    for match in _LINE.finditer(data, position):
        start, end = match.span()
        if end == start or (not eof and end == len(data)):
            break
        line = data[start:end].strip(_ASCII_WHITESPACE)
        if line and (line.isascii() or not line.decode(ENCODING, "surrogateescape").isspace()):
            found.append(start)
        position = end
    return found, position


def read_piece(piece: Piece, fmt: str, name: str, *, lenient: bool = False) -> PieceSentences:
    """The sentences of ``piece`` of the file ``name``, as its reader gives them when it reads
    the whole file (CoNLL-U with ``check_tree=False``; ``lenient`` skips malformed CoNLL-U
    sentences).  Raises the reader's :class:`InputError`, at the file's line and sentence."""
    if fmt == "conllu":
        return _read_conllu(piece, name, lenient)
    return PieceSentences(_read_text(piece, name), [])


def _read_conllu(piece: Piece, name: str, lenient: bool) -> PieceSentences:
    read = PieceSentences([], [])
    blocks = 0
    for block in _blocks(text_lines(piece.data.decode(ENCODING, "surrogateescape"))):
        blocks += 1
        block = dataclasses.replace(
            block,
            first_line=block.first_line + piece.first_line - 1,
            ordinal=block.ordinal + piece.sentences_before,
        )
        try:
            read.sentences.append(_parse_block(block, name, check_tree=False))
        except ConlluError as problem:
            if not lenient:
                raise
            read.skipped.append(SkippedSentence(problem.line, problem.sent_id, problem.reason))
    if blocks != piece.sentences:  # the cutting rules no longer match the reader's
        raise RuntimeError(
            f"{name}: piece {piece.index} from line {piece.first_line} holds {blocks} "
            f"sentences, not the {piece.sentences} counted when cutting it"
        )
    return read


def _read_text(piece: Piece, name: str) -> list[Sentence]:
    lines: Iterator[str] = text_lines(piece.data.decode(ENCODING, "surrogateescape"))
    shift = piece.first_line - 1
    if piece.first_line > 1:
        # A blank first line, which the reader skips, so that no line of the piece is line 1:
        # the reader would take a U+FEFF opening it for the file's byte order mark.
        lines = itertools.chain(["\n"], lines)
        shift -= 1

    def ordinal(sent_id: str | None) -> str | None:  # iter_text names sentences "#N"
        if sent_id is None:
            return None
        return f"#{int(sent_id[1:]) + piece.sentences_before}"

    sentences = []
    try:
        for sentence in iter_text(lines, name=name):
            sentence.line += shift
            sentence.sent_id = ordinal(sentence.sent_id)
            sentences.append(sentence)
    except InputError as error:
        raise type(error)(
            error.reason,
            source=error.source,
            line=error.line + shift if error.line is not None else None,
            sent_id=ordinal(error.sent_id),
        ) from None
    if len(sentences) != piece.sentences:
        raise RuntimeError(
            f"{name}: piece {piece.index} from line {piece.first_line} holds "
            f"{len(sentences)} sentences, not the {piece.sentences} counted when cutting it"
        )
    return sentences
