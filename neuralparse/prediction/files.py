"""Prediction's input and output: a path, ``-`` for standard input or output, or an open text
file.

:func:`open_sentences` reads CoNLL-U, plain pre-tokenized text or raw text, detecting the first
two from the first lines (and saying what it found and why); :func:`open_output` writes all or
nothing: a path through a temporary file that replaces it only when the run succeeded,
standard output from a spool copied out at the end.
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, TextIO

from neuralparse.errors import InputError
from neuralparse.io import ReadReport, Sentence, iter_conllu, iter_text
from neuralparse.io.raw import DEFAULT_LANGUAGE, Segmentation, iter_raw
from neuralparse.io.sources import (
    ENCODING,
    decoded_lines,
    guarded_lines,
    partial_file,
    replacing,
)
from neuralparse.io.text import explain_format, probe, untokenized_note

log = logging.getLogger("neuralparse.predict")

STDIO = "-"
"""The path that means standard input or output."""
_STDOUT_SPOOL_BYTES = 8 * 1024 * 1024
"""Output for standard output held in memory before the spool moves to a temporary file."""

INPUT_FORMATS = ("auto", "conllu", "text", "raw")
"""``raw`` (untokenized text, :mod:`neuralparse.io.raw`) is never detected: it must be asked."""

FORMAT_NAMES = {"conllu": "CoNLL-U", "text": "plain text", "raw": "raw text"}


def _peek(lines: Iterator[str]) -> tuple[list[str], Iterator[str]]:
    """The lines that format detection reads, and all of ``lines`` again."""
    head = probe(lines)
    return head, itertools.chain(head, lines)


def _path_head(path: Path) -> list[str]:
    """The first lines of the file ``path`` that format detection reads."""
    try:
        with path.open("rb") as handle:
            return probe(decoded_lines(handle))
    except OSError as error:
        raise InputError(f"cannot read input: {error.strerror}", source=str(path)) from None


def _detect_path_format(path: Path) -> tuple[str, str]:
    """The format of the file ``path`` and why (see :func:`explain_format`)."""
    return explain_format(_path_head(path), named_conllu=path.suffix.lower() == ".conllu")


def path_format(path: Path, input_format: str) -> tuple[str, str | None]:
    """The format of the input file ``path``: ``input_format``, or the one detected for
    ``auto`` and why (see :func:`explain_format`); a missing file is an :class:`InputError`."""
    if not path.is_file():
        raise InputError("input file not found", source=str(path))
    if input_format == "auto":
        return _detect_path_format(path)
    return input_format, None


def log_format(name: str, fmt: str, why: str | None) -> None:
    """Say how the input is read; for a detected format, why, and how to override it."""
    if why is None:
        log.info("%s: reading %s input (input_format=%s)", name, FORMAT_NAMES[fmt], fmt)
        return
    other = "text" if fmt == "conllu" else "conllu"
    log.info(
        "%s: detected %s input: %s (set input_format=%s to read it as %s)",
        name,
        FORMAT_NAMES[fmt],
        why,
        other,
        FORMAT_NAMES[other],
    )


def warn_if_untokenized(
    name: str,
    sentences: Iterable[Sequence[str]],
    remedy: str = "read untokenized text with input_format=raw",
) -> None:
    """Warn when the token lists ``sentences`` of the input ``name`` (split at whitespace)
    look untokenized (:func:`~neuralparse.io.text.untokenized_note`); ``remedy`` says how
    the caller reads untokenized text."""
    note = untokenized_note(sentences)
    if note is not None:
        log.warning(
            "%s: %s: tokens are split at whitespace only, so the text must be tokenized "
            "already (sat . rather than sat.); %s (spaCy's tokenizer)",
            name,
            note,
            remedy,
        )


def _split_lines(lines: Iterable[str]) -> Iterator[list[str]]:
    """The tokens of each line with any (plain text's sentences)."""
    return (line.split() for line in lines if line.strip())


def check_text_head(path: Path, fmt: str) -> None:
    """:func:`warn_if_untokenized` for an input file read as plain text."""
    if fmt == "text":
        warn_if_untokenized(str(path), _split_lines(_path_head(path)))


@contextmanager
def open_sentences(
    source: str | os.PathLike[str] | TextIO,
    *,
    input_format: str = "auto",
    lenient: bool = False,
    report: ReadReport | None = None,
    lang: str = DEFAULT_LANGUAGE,
    segmentation: Segmentation | None = None,
) -> Iterator[Iterator[Sentence]]:
    """The sentences of ``source`` (a path, ``-`` for standard input, or an open text file)
    as CoNLL-U or plain pre-tokenized text (``input_format``: ``auto`` detects it from the
    first lines, see :func:`~neuralparse.io.detect_format`, and logs what it found and why),
    or as raw text that spaCy's blank ``lang`` pipeline tokenizes (``raw``, never detected;
    :mod:`neuralparse.io.raw`), refined by what the model learned of its treebank's
    ``segmentation``.
    CoNLL-U needs no tree (HEAD may be ``_``); ``lenient`` skips malformed CoNLL-U sentences,
    those with bytes that are not UTF-8 included, and counts them in ``report``.

    Standard input is read like a file, in binary and line by line, so that its bytes, line
    endings and error messages (``<stdin>``, line, sentence) are those a file would give."""
    if input_format not in INPUT_FORMATS:
        raise InputError(f"unknown input_format {input_format!r}; available: {INPUT_FORMATS}")
    report = report if report is not None else ReadReport()
    why: str | None = None
    if isinstance(source, str | os.PathLike) and str(source) != STDIO:
        path = Path(source)
        name, lines = str(path), None
        fmt, why = path_format(path, input_format)
        head = _path_head(path) if fmt == "text" else []  # for warn_if_untokenized
    else:
        if isinstance(source, str | os.PathLike):  # "-"
            name = "<stdin>"
            raw = decoded_lines(sys.stdin.buffer)
        else:
            name = str(getattr(source, "name", "<file>"))
            raw = guarded_lines(source, name)
        head, lines = _peek(raw)
        fmt = input_format
        if input_format == "auto":
            fmt, why = explain_format(head)
    log_format(name, fmt, why)
    if fmt == "text":
        warn_if_untokenized(name, _split_lines(head))
    origin: Any = lines if lines is not None else str(source)
    report.source = name
    if fmt == "conllu":
        yield iter_conllu(origin, lenient=lenient, check_tree=False, report=report, name=name)
    elif fmt == "raw":
        yield iter_raw(origin, lang=lang, name=name, segmentation=segmentation)
    else:
        yield iter_text(origin, name=name)


def _writable_partial(path: Path) -> tuple[IO[Any], Path]:
    """The temporary file of the output ``path`` (:func:`partial_file`), or an
    :class:`InputError` saying why ``path`` cannot be written."""
    if path.is_dir():
        raise InputError("output is a folder; give a file name", source=str(path))
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError("output file is not writable", source=str(path))
    try:
        return partial_file(path)
    except FileNotFoundError:
        raise InputError(f"output folder {path.parent} does not exist", source=str(path)) from None
    except OSError as error:
        raise InputError(
            f"cannot write in the output folder {path.parent}: {error.strerror}", source=str(path)
        ) from None


@contextmanager
def open_output(dest: str | os.PathLike[str] | TextIO) -> Iterator[TextIO]:
    """A text handle for ``dest``: ``-`` for standard output, an open text file, or a path.

    Standard output receives the whole output at the end, or nothing when the run fails.  A
    path is checked on entry, before anything is parsed: a missing folder, a folder, or a
    file or folder that cannot be written is an :class:`InputError`.  It is written to a
    temporary file of its own beside it (``.NAME.RANDOM.partial``, so runs writing the same
    output cannot mix their text) that replaces it only when everything succeeded and is
    removed on any other exit, so a failed or interrupted run leaves no partial output
    (:func:`~neuralparse.io.sources.replacing`).  An existing file that is not a regular file
    (``/dev/null``, a named pipe) is written directly: it cannot be replaced.  Line endings
    are written as they are."""
    if not isinstance(dest, str | os.PathLike):
        yield dest
        return
    if str(dest) == STDIO:
        # Spooled (in memory up to a few MB, then in a temporary file) and copied to standard
        # output only when everything succeeded: a failed run writes nothing there either, as
        # it leaves no file behind.
        with tempfile.SpooledTemporaryFile(max_size=_STDOUT_SPOOL_BYTES) as spool:
            text = io.TextIOWrapper(spool, encoding=ENCODING, newline="")
            yield text
            text.flush()
            text.detach()
            spool.seek(0)
            shutil.copyfileobj(spool, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        return
    path = Path(dest)
    if path.exists() and not path.is_file() and not path.is_dir():
        try:
            device = path.open("w", encoding=ENCODING, newline="")
        except OSError as error:
            raise InputError(f"cannot write output: {error.strerror}", source=str(path)) from None
        with device:
            yield device
        return
    handle, partial = _writable_partial(path)
    with replacing(path, handle, partial) as out:
        yield out
