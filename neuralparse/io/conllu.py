"""CoNLL-U reading, validation and writing (https://universaldependencies.org/format.html).

Reading streams: :func:`iter_conllu` holds one sentence block at a time, so memory stays
bounded on files of millions of sentences; :func:`read_conllu` collects it into a list.  Each
block keeps its raw lines (see :mod:`neuralparse.io.sentence`), so writing a sentence back
changes nothing but HEAD and DEPREL of the syntactic words whose tree was changed.

Why a direct parser rather than pyconll.  Measured on English-EWT train (12,544 sentences,
14.2 MB) on the 2-core development machine with pyconll 3.3.1
(``.venv/bin/python -m benchmarks.io_steps FILE``)::

    pyconll.load_from_file   2.8-4.3 s   write back (Conll.conll())  1.1-1.9 s
    read_conllu (strict)     0.8 s       write_conllu                0.03 s

(tracemalloc peak: 0.4 MB when streaming the file with iter_conllu, 122 MB for the list)

and pyconll's round trip is *not* byte-identical on 6 of the 15 shared treebank files (all
of English-EWT and Gothic-PROIEL): it re-orders MISC attributes and their values
(``ref=MATT_5.16|LId=2`` comes back as ``LId=2|ref=MATT_5.16``), which the read -> write
guarantee forbids.  pyconll is therefore used at the edge, for interoperability
(:mod:`neuralparse.io.interop` converts sentences to and from pyconll objects), not on the hot
path.

Lines and sentences.  A line ends with ``\\n``, ``\\r\\n`` or ``\\r`` (old Mac files) and keeps its
ending; the last line may have none (it is read, and written back, with ``\\n``).  A sentence is
a run of comment and word lines ended by an *empty* line (nothing before its ending) or by the
end of the input; a last sentence without its empty line is written back with one, ending like
its last line.  Between sentences (before the first one, and after the empty line that ends
one) any number of empty lines and lines of only spaces and tabs may stand: they are kept byte
for byte with the sentence before them (before the first sentence: with it), and left out with
it when lenient reading skips it.  Inside a sentence a line of only whitespace is *not* a
separator (CoNLL-U ends a sentence with an empty line, and the official validator refuses such
lines): it is a malformed line of that sentence, reported at its line, and lenient reading skips
that whole sentence.  A line of other whitespace between sentences (a form feed) starts a
sentence and is reported as its malformed line.

Validation (strict by default; every message names the file, the 1-based line and the sentence
id, and quotes at most :data:`~neuralparse.io.sources.EXCERPT_CHARACTERS` characters of a cell
and 200 of a sentence id): valid UTF-8 (a line that is not is reported, or its sentence
skipped, like any other malformed line); no line break inside a line (possible only in lines a
caller split, :func:`~neuralparse.io.sources.inner_line_break`); ten tab-separated non-empty
columns; word ids 1..n in order; multiword ranges ``a-b`` with ``a < b`` placed right before
word ``a`` and not overlapping; empty nodes ``i.k`` right after word ``i`` with
``k = 1, 2, ...``; comments only before the first word line; integer HEAD within ``0..n``, or
``_`` for every word (no tree; only with ``check_tree=False``); with ``check_tree=True`` the
heads must form a tree with exactly one word attached to the root
(:func:`neuralparse.trees.core.check_tree`).  Empty nodes and DEPS (enhanced graph) are kept
but not validated as trees.  ``lenient=True`` skips bad sentences instead of raising, counts
them in a :class:`ReadReport` and always emits a :class:`SkippedSentencesWarning`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TextIO, TypedDict, Unpack

from neuralparse.errors import ConlluError, TreeError
from neuralparse.io.sentence import (
    COLUMNS,
    DEPREL_COLUMN,
    DEPS_COLUMN,
    HEAD_COLUMN,
    UNSPECIFIED,
    Sentence,
    _Layout,
)
from neuralparse.io.sources import (
    ENCODING,
    Source,
    excerpt,
    inner_line_break,
    open_lines,
    split_ending,
    text_lines,
    undecodable,
)
from neuralparse.trees.core import check_tree as check_heads_form_tree

_SENT_ID_KEY = "sent_id"
_SENT_ID_CHARACTERS = 200  # real ids reach 104 characters (English-EWT): quote them whole
_BYTE_ORDER_MARK = "\ufeff"
_SEPARATOR_WHITESPACE = " \t"
_EMPTY_LINES = frozenset({"\n", "\r\n", "\r"})
_HUGE = 10**18  # stands for any id or HEAD of more than 18 digits: beyond every sentence


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
    """Raw lines of one sentence with their line numbers (separator lines included)."""

    first_line: int  # line number of lines[0]
    lines: list[str]
    ordinal: int  # 1-based position among the file's sentences
    start: int  # lines[start:end] are the sentence's comment and word lines
    end: int


def _content(line: str, number: int) -> str:
    """``line`` without its ending, and without the byte order mark that may open line 1."""
    content = split_ending(line)[0]
    if number == 1 and content.startswith(_BYTE_ORDER_MARK):
        return content[1:]
    return content


def _blocks(lines: Iterable[str]) -> Iterator[_Block]:
    """Group raw lines into sentence blocks (the rules are in the module docstring).

    A block is the separator lines before the sentence (in the first block only), its lines,
    and the empty line ending it with the separators after it, so that every byte of the input
    belongs to exactly one block.  A block is released when the next sentence starts
    (one-sentence look-ahead) or at end of input.  A last line without an ending gets ``\\n``,
    and a last sentence without its empty line gets one, with the ending of its last line.
    """
    block: list[str] = []
    first_line = 1
    start: int | None = None  # index in block of the sentence's first line
    end: int | None = None  # index in block of the empty line that ended the sentence
    ordinal = 0
    for number, raw in enumerate(lines, start=1):
        line = raw if raw.endswith(("\n", "\r")) else raw + "\n"
        if start is not None and end is None:  # inside a sentence: only an empty line ends it
            if line in _EMPTY_LINES:
                end = len(block)
            block.append(line)
            continue
        if not _content(line, number).strip(_SEPARATOR_WHITESPACE):
            block.append(line)
            continue
        if end is not None:
            ordinal += 1
            yield _Block(first_line, block, ordinal, start, end)  # type: ignore[arg-type]
            block, first_line, end = [], number, None
        start = len(block)
        block.append(line)
    if start is None:
        return
    if end is None:
        end = len(block)
        block.append(split_ending(block[-1])[1])
    yield _Block(first_line, block, ordinal + 1, start, end)


def _sent_id(block: _Block) -> str:
    """The ``# sent_id =`` of the sentence, else its ordinal (``#3``)."""
    for index in range(block.start, block.end):
        content = _content(block.lines[index], block.first_line + index)
        if not content.startswith("#"):
            break
        key, equals, value = content[1:].partition("=")
        if equals and key.strip() == _SENT_ID_KEY:
            # A line break inside a caller's line (reported) ends the id, not the rest.
            return value.partition("\r")[0].partition("\n")[0].strip()
    return f"#{block.ordinal}"


def _ascii_int(text: str) -> int | None:
    """``text`` as an integer when it is ASCII digits, else ``None``.

    ``str.isdigit`` alone accepts non-ASCII digits such as '٣', which CoNLL-U does not allow;
    ``int`` refuses strings of over 4,300 digits, so a longer number counts as :data:`_HUGE`.
    """
    if not (text.isascii() and text.isdigit()):
        return None
    if len(text) <= 18 or len(text.lstrip("0")) <= 18:
        return int(text)
    return _HUGE


def _parse_block(block: _Block, source: str, check_tree: bool) -> Sentence:
    """Validate one block and build its :class:`Sentence` (raises :class:`ConlluError`)."""
    sent_id = excerpt(_sent_id(block), _SENT_ID_CHARACTERS)  # escaped: it may hold bad bytes

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
    start_line = block.first_line + block.start
    last_range_end = 0
    range_ends: list[tuple[int, str, int]] = []  # (range end, as written, line) to check vs n
    empty_minor = 0  # empty nodes seen since the last word
    enhanced = False  # a DEPS cell other than '_' or an empty node
    seen_token = False
    range_pending = False  # a multiword line must be followed directly by its first word
    for index in range(block.start, block.end):
        raw = block.lines[index]
        number = block.first_line + index
        # Every line of a block has an ending (_blocks).  The inlined _content and the test
        # before inner_line_break keep reading fast: this loop runs once per line of a file.
        content = raw[:-2] if raw.endswith("\r\n") else raw[:-1]
        if number == 1 and content.startswith(_BYTE_ORDER_MARK):
            content = content[1:]  # a UTF-8 byte order mark is kept in the raw line
        problem = undecodable(raw)
        if problem is None and ("\r" in content or "\n" in content):
            problem = inner_line_break(content)
        if problem is not None:
            raise error(problem, number)
        if content.isspace():
            raise error(
                "line of only whitespace, not empty: only an empty line ends a sentence", number
            )
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
        word_id = _ascii_int(token_id)
        if word_id is not None:
            if word_id != n + 1:
                raise error(f"word id {excerpt(token_id)} out of order: expected {n + 1}", number)
            word_lines.append(index)
            forms.append(fields[1])
            lemmas.append(fields[2])
            upos.append(fields[3])
            xpos.append(fields[4])
            feats.append(fields[5])
            head_fields.append(fields[HEAD_COLUMN])
            deprels.append(fields[DEPREL_COLUMN])
            misc.append(fields[9])
            enhanced = enhanced or fields[DEPS_COLUMN] != UNSPECIFIED
            empty_minor = 0
            range_pending = False
            continue
        first, dash, last = token_id.partition("-")
        if dash:
            a, b = _ascii_int(first), _ascii_int(last)
            if a is None or b is None:
                raise error(f"malformed multiword token id '{excerpt(token_id)}'", number)
            if a >= b:
                raise error(
                    f"multiword token range {excerpt(token_id)} is empty or reversed", number
                )
            if a != n + 1 or a <= last_range_end:
                raise error(
                    f"multiword token range {excerpt(token_id)} must come right before word "
                    f"{excerpt(first)}",
                    number,
                )
            last_range_end = b
            range_pending = True
            range_ends.append((b, last, number))
            continue
        major, dot, minor = token_id.partition(".")
        node_major, node_minor = _ascii_int(major), _ascii_int(minor)
        if dot and node_major is not None and node_minor is not None:
            if range_pending or node_major != n or node_minor != empty_minor + 1:
                raise error(
                    f"empty node {excerpt(token_id)} out of place: expected {n}.{empty_minor + 1}",
                    number,
                )
            empty_minor += 1
            enhanced = True
            continue
        raise error(f"malformed token id '{excerpt(token_id)}'", number)

    if not forms:
        raise error("sentence has no word lines", start_line)
    n = len(forms)
    for range_end, written, number in range_ends:
        if range_end > n:
            raise error(
                f"multiword token range ends at {excerpt(written)} beyond the last word {n}",
                number,
            )
    heads = _parse_heads(head_fields, word_lines, block.first_line, n, check_tree, error)
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
        enhanced_graph=enhanced,
    )
    return Sentence(
        forms=forms, lemmas=lemmas, upos=upos, xpos=xpos, feats=feats,
        heads=heads, deprels=deprels, misc=misc,
        sent_id=sent_id, source=source, line=start_line, _layout=layout,
    )  # fmt: skip


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
        head = _ascii_int(value)
        if head is None:
            raise error(
                f"HEAD '{excerpt(value)}' of word {i + 1} is not an integer",
                first_line + word_lines[i],
            )
        if head > n:
            raise error(
                f"HEAD {excerpt(value)} of word {i + 1} is outside 0..{n}",
                first_line + word_lines[i],
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


class ReadOptions(TypedDict, total=False):
    """The options of :func:`iter_conllu`, which :func:`read_conllu` takes too."""

    lenient: bool
    check_tree: bool
    report: ReadReport | None
    name: str | None


def read_conllu(source: Source, **options: Unpack[ReadOptions]) -> list[Sentence]:
    """All sentences of ``source`` as a list; see :func:`iter_conllu` for the options."""
    return list(iter_conllu(source, **options))


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
