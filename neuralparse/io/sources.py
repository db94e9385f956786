"""Turn what a caller hands us (a path, an open file, text, lines) into named raw lines.

Lines end with ``\\n``, ``\\r\\n`` or ``\\r`` (old Mac files), whatever the source: paths and
standard input (see :func:`decoded_lines`) are read with exactly the line splitting of
:func:`text_lines`, and every line keeps its ending (byte-identical round trips).  Reading
holds one line at a time (bounded memory), and a byte that is not UTF-8 reaches the reader
marked (:func:`undecodable`), so that the reader reports it with its exact line number and
sentence, or skips that sentence when it is lenient.  Lines a caller splits itself (a list, an
open file) may hold a line break before their end: :func:`inner_line_break` says so.  Messages
quote input through :func:`excerpt`, which bounds what they show of a line.

Files we write go through a uniquely named temporary file beside them that replaces them only
when everything was written (:func:`partial_file`, :func:`replacing`).
"""

from __future__ import annotations

import errno
import io
import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO

from neuralparse.errors import InputError

Source = str | os.PathLike[str] | TextIO | Iterable[str]
"""A path, an open text file, CoNLL-U/plain text containing a newline, or an iterable of lines."""

ENCODING = "utf-8"

EXCERPT_CHARACTERS = 80
"""How much of a line (a cell, a token id) a message quotes at most."""


def is_inline_text(source: object) -> bool:
    """A ``str`` holding a newline is text, not a path (no sensible path contains one)."""
    return isinstance(source, str) and ("\n" in source or "\r" in source)


def text_lines(text: str) -> Iterator[str]:
    """Lines of ``text`` with their endings, split only at ``\\n``, ``\\r\\n`` and ``\\r`` (as
    files are; ``str.splitlines`` would also split inside words at U+2028 and friends)."""
    return iter(io.StringIO(text, newline=""))


def decoded_lines(handle: BinaryIO) -> Iterator[str]:
    """The lines of a binary stream, split as :func:`text_lines` splits and decoded
    incrementally.  A byte that is not UTF-8 becomes a lone surrogate (``surrogateescape``)
    instead of stopping the stream here: a generator that raised could not go on, and the
    reader, which knows the sentence, reports it (:func:`undecodable`).  ``handle`` stays open
    (standard input is not ours to close)."""
    text = io.TextIOWrapper(handle, encoding=ENCODING, errors="surrogateescape", newline="")
    try:
        yield from text
    finally:
        if not handle.closed:  # detaching flushes, which a closed stream refuses
            text.detach()


def split_ending(line: str) -> tuple[str, str]:
    """``line`` without its ending, and the ending: ``\\r\\n``, ``\\n``, ``\\r`` or ``""``."""
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith(("\n", "\r")):
        return line[:-1], line[-1]
    return line, ""


def inner_line_break(content: str) -> str | None:
    """Why ``content`` (a line without its ending) is more than one line, or ``None``.

    Paths, standard input and text never give such a line; a caller's list of lines or an open
    file that splits only at ``\\n`` (``io.StringIO``'s default) can, and reading it as one line
    would write back lines that read differently."""
    for char, name in (("\r", "carriage return (\\r)"), ("\n", "line feed (\\n)")):
        position = content.find(char)
        if position >= 0:
            return (
                f"{name} inside the line at character {position + 1}: lines end at "
                "\\n, \\r\\n or \\r, so this is more than one line"
            )
    return None


def undecodable(line: str) -> str | None:
    """Why ``line`` (from :func:`decoded_lines`) is not valid UTF-8, or ``None`` when it is.

    The bytes ``surrogateescape`` kept are lone surrogates, which valid UTF-8 never decodes
    to and which cannot be encoded back: encoding finds them (three times faster than a
    regular expression on Greek text)."""
    if line.isascii():  # the common case, checked at C speed
        return None
    try:
        line.encode(ENCODING)
    except UnicodeEncodeError as error:
        byte = len(line[: error.start].encode(ENCODING)) + 1
        return f"not valid {ENCODING} (byte {byte} of the line)"
    return None


def printable(text: str) -> str:
    """``text`` with the bytes of an undecodable line escaped (``caf\\xe9``), so that messages
    naming it can be written anywhere."""
    try:
        return text.encode(ENCODING, "surrogateescape").decode(ENCODING, "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate no byte stands for (in a caller's str)
        return text.encode(ENCODING, "backslashreplace").decode(ENCODING)


def excerpt(text: str, limit: int = EXCERPT_CHARACTERS) -> str:
    """``text`` as a message quotes it: at most ``limit`` characters, then ``...`` when some
    of ``text`` is left out, with undecodable bytes (:func:`printable`) and characters that are
    not printable (``\\r``, ``\\t``, NUL, U+2028) escaped, so that a message stays one short
    line whatever a line of the input holds (a whole file read as one line, a megabyte cell)."""
    if len(text) <= limit and text.isprintable():
        return text
    shown = ""
    for char in printable(text[:limit]):
        piece = char if char.isprintable() else repr(char)[1:-1]
        if len(shown) + len(piece) > limit:
            return shown + "..."
        shown += piece
    return shown + "..." if len(text) > limit else shown


def guarded_lines(lines: Iterable[str], name: str) -> Iterator[str]:
    """Lines of a caller's text stream, turning a decoding failure into an :class:`InputError`
    (the line number is approximate: the stream decodes ahead in blocks, and the stream cannot
    go on after the failure, so not even a lenient reader can skip the sentence)."""
    number = 0
    iterator = iter(lines)
    while True:
        try:
            line = next(iterator)
        except StopIteration:
            return
        except UnicodeDecodeError as error:
            raise InputError(
                f"not valid {ENCODING}: {error.reason}", source=name, line=number + 1
            ) from None
        number += 1
        yield line


@contextmanager
def open_lines(source: Source, name: str | None = None) -> Iterator[tuple[str, Iterator[str]]]:
    """Yield ``(name, lines)`` for ``source``; a file we open is closed on exit.

    ``name`` overrides the name used in messages (default: the path, the file object's
    ``name``, ``<string>`` for text and ``<lines>`` for other iterables).
    """
    if is_inline_text(source):
        yield (name or "<string>", text_lines(source))  # type: ignore[arg-type]
    elif isinstance(source, str | os.PathLike):
        name = name or str(source)
        with Path(source).open(
            encoding=ENCODING, errors="surrogateescape", newline=""
        ) as handle:  # decoded_lines' splitting and decoding, with the file ours to close
            yield (name, iter(handle))
    elif isinstance(source, io.TextIOBase) or hasattr(source, "readline"):
        name = name or str(getattr(source, "name", "<file>"))
        yield (name, guarded_lines(source, name))  # type: ignore[arg-type]
    else:
        name = name or "<lines>"
        yield (name, guarded_lines(source, name))


_NAME_TRIES = 100


def partial_file(path: Path, *, binary: bool = False) -> tuple[IO[Any], Path]:
    """A new file ``.NAME.RANDOM.partial`` beside ``path``, open for writing, and its path.

    The name is unique (created with ``O_EXCL``, as :func:`tempfile.mkstemp` does), so runs
    writing the same output never share a temporary file; it is hidden (leading dot), and it is
    in ``path``'s folder so that renaming it over ``path`` is atomic.  Unlike ``mkstemp``'s
    0600 the file gets the mode of any new file (0666 less the umask), which the output keeps.
    Raises :class:`OSError` when the folder is missing or not writable.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(_NAME_TRIES):
        partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
        try:
            descriptor = os.open(partial, flags, 0o666)
        except FileExistsError:
            continue
        if binary:
            return open(descriptor, "wb"), partial
        return open(descriptor, "w", encoding=ENCODING, newline=""), partial
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", str(path))


@contextmanager
def replacing(path: Path, handle: IO[Any], partial: Path) -> Iterator[IO[Any]]:
    """``handle`` (open on ``partial``, from :func:`partial_file`), closed and renamed over
    ``path`` when the block ends normally, and removed on any other exit: an exception,
    ``KeyboardInterrupt`` or the ``SystemExit`` of a SIGTERM handler.  A flag set after the
    rename, not an ``except`` clause, decides, so no kind of exit is missed, and an exit
    between the rename and the flag finds nothing left to remove."""
    renamed = False
    try:
        with handle:
            yield handle
        os.replace(partial, path)
        renamed = True
    finally:
        if not renamed:
            partial.unlink(missing_ok=True)


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed over it when complete."""
    if path.is_dir():
        raise InputError("output is a folder; give a file name", source=str(path))
    try:
        handle, partial = partial_file(path, binary=isinstance(data, bytes))
    except FileNotFoundError:
        raise InputError(f"output folder {path.parent} does not exist", source=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot write the output: {error.strerror}", source=str(path)) from None
    with replacing(path, handle, partial) as out:
        out.write(data)
