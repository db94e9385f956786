"""CoNLL-U reading, validation and writing (https://universaldependencies.org/format.html).

Reading streams: :func:`iter_conllu` holds one sentence block at a time, so memory stays
bounded on files of millions of sentences; :func:`read_conllu` collects it into a list.  Each
block keeps its raw lines (see :mod:`neuralparse.io.sentence`), so writing a sentence back
changes nothing but HEAD and DEPREL of the syntactic words whose tree was changed.

Why a direct parser rather than pyconll.  Measured on English-EWT train (12,544 sentences,
14.2 MB) on the 2-core development machine with pyconll 3.3.1
(``.venv/bin/python -m neuralparse.io.bench FILE``)::

    pyconll.load_from_file   2.8-4.3 s   write back (Conll.conll())  1.1-1.9 s
    read_conllu (strict)     0.8 s       write_conllu                0.03 s

(tracemalloc peak: 0.4 MB when streaming the file with iter_conllu, 122 MB for the list)

and pyconll's round trip is *not* byte-identical on 6 of the 15 shared treebank files (all
of English-EWT and Gothic-PROIEL): it re-orders MISC attributes and their values
(``ref=MATT_5.16|LId=2`` comes back as ``LId=2|ref=MATT_5.16``), which the read -> write
guarantee forbids.  pyconll is therefore used at the edge, for interoperability
(:mod:`neuralparse.io.interop` converts sentences to and from pyconll objects), not on the hot
path.

Validation (strict by default; every message names the file, the 1-based line and the
sentence id): valid UTF-8 (a line that is not is reported, or its sentence skipped, like any
other malformed line); ten tab-separated non-empty columns; word ids 1..n in order; multiword
ranges ``a-b`` with ``a < b`` placed right before word ``a`` and not overlapping; empty nodes
``i.k`` right after word ``i`` with ``k = 1, 2, ...``; comments only before the first word line;
integer HEAD within ``0..n``, or ``_`` for every word (no tree; only with ``check_tree=False``);
with ``check_tree=True`` the heads must form a tree with exactly one word attached to the root
(:func:`neuralparse.trees.core.check_tree`).  Empty nodes and DEPS (enhanced graph) are kept
but not validated as trees.  A missing blank line after the last sentence is accepted (the
written block gets one).  ``lenient=True`` skips bad sentences instead of raising, counts them
in a :class:`ReadReport` and always emits a :class:`SkippedSentencesWarning`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TextIO

from neuralparse.errors import ConlluError, TreeError
from neuralparse.io.sentence import COLUMNS, DEPREL_COLUMN, HEAD_COLUMN, Sentence, _Layout
from neuralparse.io.sources import (
    ENCODING,
    Source,
    open_lines,
    printable,
    text_lines,
    undecodable,
)
from neuralparse.trees.core import check_tree as check_heads_form_tree

_SENT_ID_KEY = "sent_id"


class SkippedSentencesWarning(UserWarning):
    """Lenient reading skipped malformed sentences (the count is in the message)."""


@dataclass(frozen=True)
class SkippedSentence:
    """One sentence that lenient reading left out, and why."""

    line: int | None
    sent_id: str | None
    reason: str


@dataclass
class ReadReport:
    """What a read produced: pass one to the readers to count and inspect skipped sentences."""

    source: str | None = None
    sentences: int = 0
    skipped: list[SkippedSentence] = field(default_factory=list)

    @property
    def skipped_count(self) -> int:
        return len(self.skipped)

    def summary(self) -> str:
        text = f"{self.source}: read {self.sentences} sentences, skipped {self.skipped_count}"
        if self.skipped:
            first = self.skipped[0]
            text += f" (first: line {first.line}, sentence {first.sent_id}: {first.reason})"
        return text


@dataclass(frozen=True, slots=True)
class _Block:
    """Raw lines of one sentence with their line numbers (blank separator lines included)."""

    first_line: int  # line number of lines[0]
    lines: list[str]
    ordinal: int  # 1-based position among the file's sentences


def _blocks(lines: Iterable[str]) -> Iterator[_Block]:
    """Group raw lines into sentence blocks.

    A block is any blank lines before the sentence, its comment/word lines and the blank
    lines after it, so that every byte of the file belongs to exactly one block.  A block is
    released when the next sentence starts (one-sentence look-ahead) or at end of input.  A
    last line without an ending gets ``\\n``, and a last sentence without its terminating blank
    line gets one, written with the sentence's own line ending.
    """
    block: list[str] = []
    first_line = 1
    has_content = False
    after_content_blank = False
    ordinal = 0
    for number, raw in enumerate(lines, start=1):
        line = raw
        if not line.endswith(("\n", "\r")):
            line += "\n"
        if line.isspace():
            block.append(line)
            after_content_blank = has_content
            continue
        if after_content_blank:
            ordinal += 1
            yield _Block(first_line, block, ordinal)
            block, first_line, has_content, after_content_blank = [], number, False, False
        block.append(line)
        has_content = True
    if has_content:
        if not after_content_blank:
            last = block[-1]
            block.append("\r\n" if last.endswith("\r\n") else last[-1])
        yield _Block(first_line, block, ordinal + 1)


def _sent_id(block: _Block) -> str:
    for line in block.lines:
        stripped = line.strip().lstrip("\ufeff")
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        key, equals, value = stripped[1:].partition("=")
        if equals and key.strip() == _SENT_ID_KEY:
            return value.strip()
    return f"#{block.ordinal}"


def _is_ascii_int(text: str) -> bool:
    # str.isdigit alone accepts non-ASCII digits such as '٣', which CoNLL-U does not allow.
    return text.isdigit() and text.isascii()


def _parse_block(block: _Block, source: str, check_tree: bool) -> Sentence:
    """Validate one block and build its :class:`Sentence` (raises :class:`ConlluError`)."""
    sent_id = _sent_id(block)

    def error(message: str, line: int | None) -> ConlluError:
        return ConlluError(message, source=source, line=line, sent_id=sent_id)

    forms: list[str] = []
    lemmas: list[str] = []
    upos: list[str] = []
    xpos: list[str] = []
    feats: list[str] = []
    head_fields: list[str] = []
    deprels: list[str] = []
    misc: list[str] = []
    word_lines: list[int] = []
    start_line: int | None = None
    last_range_end = 0
    range_ends: list[tuple[int, int]] = []  # (range end, line) to check against n
    empty_minor = 0  # empty nodes seen since the last word
    seen_token = False
    range_pending = False  # a multiword line must be followed directly by its first word
    for index, raw in enumerate(block.lines):
        number = block.first_line + index
        content = raw.rstrip("\r\n")
        if number == 1 and content.startswith("\ufeff"):
            content = content[1:]  # a UTF-8 byte order mark is kept in the raw line
        if not content or content.isspace():
            continue
        problem = undecodable(raw)
        if problem is not None:  # the sentence id may hold the bad bytes: escape them
            raise ConlluError(problem, source=source, line=number, sent_id=printable(sent_id))
        if start_line is None:
            start_line = number
        if content.startswith("#"):
            if seen_token:
                raise error("comment line after the first word line of the sentence", number)
            continue
        fields = content.split("\t")
        if len(fields) != COLUMNS:
            raise error(f"expected {COLUMNS} tab-separated columns, found {len(fields)}", number)
        for column, value in enumerate(fields, start=1):
            if not value:
                raise error(f"column {column} is empty (use '_' for no value)", number)
        seen_token = True
        token_id = fields[0]
        n = len(forms)
        if _is_ascii_int(token_id):
            if int(token_id) != n + 1:
                raise error(f"word id {token_id} out of order: expected {n + 1}", number)
            word_lines.append(index)
            forms.append(fields[1])
            lemmas.append(fields[2])
            upos.append(fields[3])
            xpos.append(fields[4])
            feats.append(fields[5])
            head_fields.append(fields[HEAD_COLUMN])
            deprels.append(fields[DEPREL_COLUMN])
            misc.append(fields[9])
            empty_minor = 0
            range_pending = False
            continue
        first, dash, last = token_id.partition("-")
        if dash:
            if not (_is_ascii_int(first) and _is_ascii_int(last)):
                raise error(f"malformed multiword token id {token_id!r}", number)
            a, b = int(first), int(last)
            if a >= b:
                raise error(f"multiword token range {token_id} is empty or reversed", number)
            if a != n + 1 or a <= last_range_end:
                raise error(
                    f"multiword token range {token_id} must come right before word {a}", number
                )
            last_range_end = b
            range_pending = True
            range_ends.append((b, number))
            continue
        major, dot, minor = token_id.partition(".")
        if dot and _is_ascii_int(major) and _is_ascii_int(minor):
            if range_pending or int(major) != n or int(minor) != empty_minor + 1:
                raise error(
                    f"empty node {token_id} out of place: expected {n}.{empty_minor + 1}", number
                )
            empty_minor += 1
            continue
        raise error(f"malformed token id {token_id!r}", number)

    if not forms:
        raise error("sentence has no word lines", start_line)
    n = len(forms)
    for end, number in range_ends:
        if end > n:
            raise error(f"multiword token range ends at {end} beyond the last word {n}", number)
    heads = _parse_heads(head_fields, word_lines, block.first_line, n, check_tree, error)
    assert start_line is not None
    if heads is not None and check_tree:
        try:
            check_heads_form_tree(heads, single_root=True)
        except TreeError as tree_error:
            raise error(tree_error.reason, start_line) from None
    layout = _Layout(
        lines=tuple(block.lines),
        word_lines=tuple(word_lines),
        heads=tuple(heads) if heads is not None else (None,) * n,
        deprels=tuple(deprels),
        upos=tuple(upos),
        xpos=tuple(xpos),
        feats=tuple(feats),
    )
    return Sentence(
        forms=forms,
        lemmas=lemmas,
        upos=upos,
        xpos=xpos,
        feats=feats,
        heads=heads,
        deprels=deprels,
        misc=misc,
        sent_id=sent_id,
        source=source,
        line=start_line,
        _layout=layout,
    )


def _parse_heads(
    head_fields: list[str],
    word_lines: list[int],
    first_line: int,
    n: int,
    check_tree: bool,
    error: Callable[[str, int | None], ConlluError],
) -> list[int] | None:
    """HEAD column as integers in ``0..n``, or ``None`` when every HEAD is ``_``."""
    missing = [i for i, value in enumerate(head_fields) if value == "_"]
    if missing:
        line = first_line + word_lines[missing[0]]
        if len(missing) != n:
            raise error(f"HEAD of word {missing[0] + 1} is '_' but other words have heads", line)
        if check_tree:
            raise error("HEAD is '_' (no tree) but a dependency tree is required", line)
        return None
    heads: list[int] = []
    for i, value in enumerate(head_fields):
        if not _is_ascii_int(value):
            raise error(
                f"HEAD {value!r} of word {i + 1} is not an integer", first_line + word_lines[i]
            )
        head = int(value)
        if head > n:
            raise error(
                f"HEAD {head} of word {i + 1} is outside 0..{n}", first_line + word_lines[i]
            )
        heads.append(head)
    return heads


def iter_conllu(
    source: Source,
    *,
    lenient: bool = False,
    check_tree: bool = True,
    report: ReadReport | None = None,
    name: str | None = None,
) -> Iterator[Sentence]:
    """Stream the sentences of a CoNLL-U ``source`` (path, open file, text, iterable of lines).

    Strict mode raises :class:`ConlluError` at the first problem.  ``lenient=True`` skips each
    bad sentence, records it in ``report`` (when given) and, once the stream ends or is
    closed, warns with the number skipped.  An input without any sentence is an error in both
    modes, and so is a lenient read that skipped every sentence.  ``check_tree=False`` accepts
    HEAD ``_`` (sentence ``heads`` is ``None``) and forests (no root / several roots, cycles),
    but still refuses HEAD values outside ``0..n``.
    """
    with open_lines(source, name) as (source_name, lines):
        report = report if report is not None else ReadReport()
        report.source = source_name
        blocks = 0
        try:
            for block in _blocks(lines):
                blocks += 1
                try:
                    sentence = _parse_block(block, source_name, check_tree)
                except ConlluError as problem:
                    if not lenient:
                        raise
                    report.skipped.append(
                        SkippedSentence(problem.line, problem.sent_id, problem.reason)
                    )
                    continue
                report.sentences += 1
                yield sentence
            if blocks == 0:
                raise ConlluError("no sentences (empty file)", source=source_name)
            if report.sentences == 0:
                raise ConlluError(f"no valid sentences: {report.summary()}", source=source_name)
        finally:
            if report.skipped:
                warnings.warn(report.summary(), SkippedSentencesWarning, stacklevel=2)


def read_conllu(
    source: Source,
    *,
    lenient: bool = False,
    check_tree: bool = True,
    report: ReadReport | None = None,
    name: str | None = None,
) -> list[Sentence]:
    """All sentences of ``source`` as a list; see :func:`iter_conllu` for the options."""
    return list(
        iter_conllu(source, lenient=lenient, check_tree=check_tree, report=report, name=name)
    )


def parse_conllu_text(
    text: str,
    *,
    lenient: bool = False,
    check_tree: bool = True,
    report: ReadReport | None = None,
    name: str = "<string>",
) -> list[Sentence]:
    """The sentences of CoNLL-U ``text`` (a single line without newline is text too, here)."""
    return read_conllu(
        text_lines(text), lenient=lenient, check_tree=check_tree, report=report, name=name
    )


def write_conllu(sentences: Iterable[Sentence], dest: str | TextIO | object) -> int:
    """Write ``sentences`` to a path or an open text file; returns how many were written.

    Paths are written as UTF-8 with ``newline=""`` so line endings are exactly those of the
    sentences (byte-identical to the source when nothing changed).  Open files should be
    opened the same way; ``-`` for stdout is the command line's job.
    """
    if isinstance(dest, str | os.PathLike):
        with open(dest, "w", encoding=ENCODING, newline="") as handle:
            return _write_all(sentences, handle)
    return _write_all(sentences, dest)  # type: ignore[arg-type]


def _write_all(sentences: Iterable[Sentence], handle: TextIO) -> int:
    count = 0
    for sentence in sentences:
        handle.write(sentence.to_conllu())
        count += 1
    return count
