"""Turn what a caller hands us (a path, an open file, text, lines) into named raw lines.

Paths are read in binary, line by line (bounded memory), and each line is decoded on its own:
``\\r\\n`` endings reach the parser untouched (byte-identical round trips) and a byte that is
not UTF-8 is reported with its exact line number.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from neuralparse.errors import InputError

Source = str | os.PathLike[str] | TextIO | Iterable[str]
"""A path, an open text file, CoNLL-U/plain text containing a newline, or an iterable of lines."""

ENCODING = "utf-8"


def is_inline_text(source: object) -> bool:
    """A ``str`` holding a newline is text, not a path (no sensible path contains one)."""
    return isinstance(source, str) and ("\n" in source or "\r" in source)


def text_lines(text: str) -> Iterator[str]:
    """Lines of ``text`` with their endings, split only at ``\\n``, ``\\r\\n`` and ``\\r`` (as
    files are; ``str.splitlines`` would also split inside words at U+2028 and friends)."""
    return iter(io.StringIO(text, newline=""))


def _decoded(handle: Iterable[bytes], name: str) -> Iterator[str]:
    for number, raw in enumerate(handle, start=1):
        try:
            yield raw.decode(ENCODING)
        except UnicodeDecodeError as error:
            raise InputError(
                f"not valid {ENCODING} (byte {error.start + 1} of the line): {error.reason}",
                source=name,
                line=number,
            ) from None


def _guarded(lines: Iterable[str], name: str) -> Iterator[str]:
    """Lines of a caller's text stream, turning a decoding failure into an :class:`InputError`
    (the line number is approximate: the stream decodes ahead in blocks)."""
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
        with Path(source).open("rb") as handle:
            yield (name, _decoded(handle, name))
    elif isinstance(source, io.TextIOBase) or hasattr(source, "readline"):
        name = name or str(getattr(source, "name", "<file>"))
        yield (name, _guarded(source, name))  # type: ignore[arg-type]
    else:
        name = name or "<lines>"
        yield (name, _guarded(source, name))
