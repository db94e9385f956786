"""Plain pre-tokenized text for prediction, and telling it apart from CoNLL-U.

Plain text has one sentence per line with tokens separated by whitespace (``str.split``);
lines of only whitespace are skipped.  Lines end with ``\\n``, ``\\r\\n`` or ``\\r``, as in
CoNLL-U (:mod:`neuralparse.io.sources`); a line break inside a line that a caller split is an
error rather than a token separator (it would be several sentences read as one).  Each sentence
becomes a :class:`Sentence` without a tree (``heads`` is ``None``, every other column ``_``)
whose :meth:`Sentence.to_conllu` is valid CoNLL-U with a ``# text =`` comment;
:meth:`Sentence.with_tree` fills HEAD and DEPREL.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal

from neuralparse.errors import InputError
from neuralparse.io.sentence import UNSPECIFIED, Sentence, _Layout
from neuralparse.io.sources import (
    Source,
    excerpt,
    inner_line_break,
    open_lines,
    split_ending,
    undecodable,
)

Format = Literal["conllu", "text"]

_BYTE_ORDER_MARK = "\ufeff"
_PROBE_LINES = 50
_PROBE_MAX_LINES = 10_000


def _conllu_lines(tokens: list[str]) -> list[str]:
    """The canonical CoNLL-U block of an untagged, unparsed token sequence."""
    lines = [f"# text = {' '.join(tokens)}\n"]
    empty_columns = "\t".join([UNSPECIFIED] * 8)
    lines.extend(f"{i}\t{token}\t{empty_columns}\n" for i, token in enumerate(tokens, start=1))
    lines.append("\n")
    return lines


def _text_sentence(tokens: list[str], source: str, line: int, ordinal: int) -> Sentence:
    """The sentence the CoNLL-U reader makes of :func:`_conllu_lines`, built directly: tokens
    of ``str.split`` hold no tab or line break and are never empty, so that block is valid
    CoNLL-U by construction, and reading it back (validation included) cost a tenth of parsing
    plain text (the test suite checks that both give the same sentence)."""
    n = len(tokens)
    blank = (UNSPECIFIED,) * n
    layout = _Layout(
        lines=tuple(_conllu_lines(tokens)),
        word_lines=tuple(range(1, n + 1)),
        heads=(None,) * n,
        deprels=blank,
        upos=blank,
        xpos=blank,
        feats=blank,
    )
    return Sentence(
        forms=list(tokens), lemmas=list(blank), upos=list(blank), xpos=list(blank),
        feats=list(blank), heads=None, deprels=list(blank), misc=list(blank),
        sent_id=f"#{ordinal}", source=source, line=line, _layout=layout,
    )  # fmt: skip


def iter_text(source: Source, *, name: str | None = None) -> Iterator[Sentence]:
    """Stream the sentences of plain pre-tokenized text (path, open file, text or lines).

    ``Sentence.line`` is the line in the text, ``sent_id`` the sentence's ordinal (``#3``).
    Raises :class:`InputError` when the input holds no sentence, and at a line that is not
    valid UTF-8 or holds a line break before its end.
    """
    with open_lines(source, name) as (source_name, lines):
        count = 0
        for number, line in enumerate(lines, start=1):
            content = split_ending(line)[0]
            tokens = (content.removeprefix(_BYTE_ORDER_MARK) if number == 1 else content).split()
            if not tokens:
                continue
            count += 1
            problem = undecodable(line) or inner_line_break(content)
            if problem is not None:
                raise InputError(problem, source=source_name, line=number, sent_id=f"#{count}")
            yield _text_sentence(tokens, source_name, number, count)
        if count == 0:
            raise InputError("no sentences (empty input)", source=source_name)


_ATTACHED_FINAL = re.compile(r"\w[.!?]+$")
"""A last token whose sentence-final punctuation is attached to it (``sat.``)."""
_ATTACHED_CLAUSE = re.compile(r"\w[,;:]$")
"""A token with a comma, semicolon or colon attached to it (``Well,``)."""
UNTOKENIZED_PROBE = 50
"""How many sentences :func:`untokenized_note` reads."""


def untokenized_note(token_lists: Iterable[Sequence[str]]) -> str | None:
    """What shows that pre-tokenized input was not tokenized, or None.

    Plain text and token lists are split at whitespace only, so ``The cat sat.`` gives the
    token ``sat.``, which no treebank has and a parser trained on one reads as an unknown word
    (and the sentence gets no ``punct``).  Tokenized text (UD's, and what plain-text input
    must be) separates the punctuation: ``sat .``.  Of the first :data:`UNTOKENIZED_PROBE`
    sentences, those whose last token ends in ``.``, ``!`` or ``?`` after a letter or digit,
    or with a token ending in ``,``, ``;`` or ``:`` after one, are counted; a fifth or more
    gives the note, with up to three such tokens (an abbreviation such as ``U.S.`` at the end
    of a sentence now and then stays below it)."""
    probed = flagged = 0
    examples: list[str] = []
    for tokens in itertools.islice(token_lists, UNTOKENIZED_PROBE):
        probed += 1
        attached = [t for t in tokens[:-1] if _ATTACHED_CLAUSE.search(t)]
        if tokens and (_ATTACHED_FINAL.search(tokens[-1]) or _ATTACHED_CLAUSE.search(tokens[-1])):
            attached.append(tokens[-1])
        if attached:
            flagged += 1
            examples.extend(t for t in attached if t not in examples)
    if not flagged or 5 * flagged < probed:
        return None
    shown = ", ".join(repr(t) for t in examples[:3])
    return f"{flagged} of the first {probed} sentences have punctuation attached to words: {shown}"


def read_text(source: Source, *, name: str | None = None) -> list[Sentence]:
    """All sentences of plain pre-tokenized text; see :func:`iter_text`."""
    return list(iter_text(source, name=name))


_TOKEN_ID = re.compile(r"[0-9]+(?:-[0-9]+|\.[0-9]+)?")
"""A CoNLL-U token id: a word ``3``, a multiword range ``3-4`` or an empty node ``3.1``."""


def _is_token_id(text: str) -> bool:
    return _TOKEN_ID.fullmatch(text) is not None


def _looks_like_word_line(content: str) -> str | None:
    """Why ``content`` (a line without its ending, not blank, not a comment) could be a CoNLL-U
    word line, even a malformed one, or ``None`` when it could not."""
    if "\t" in content:
        fields = content.split("\t")
        if len(fields) == 10:
            return "has 10 tab-separated columns"
        if _is_token_id(fields[0]):
            return f"starts with the token id '{excerpt(fields[0])}' and a tab"
        return None
    fields = content.split()
    if len(fields) == 10 and _is_token_id(fields[0]):
        head = fields[6]
        if head == "_" or (head.isascii() and head.isdigit()):
            return "has 10 space-separated columns: a token id first, a HEAD seventh"
    return None


def _probed(lines: Iterable[str]) -> Iterator[str]:
    """The lines that detection reads: up to ``_PROBE_LINES`` lines that are neither blank nor
    comments, so that a long header of comments cannot hide the first word lines, but never more
    than ``_PROBE_MAX_LINES`` in all (what is read ahead is held in memory)."""
    content = 0
    for total, line in enumerate(lines, start=1):
        yield line
        stripped = line.lstrip(_BYTE_ORDER_MARK).strip()
        content += bool(stripped) and not stripped.startswith("#")
        if content >= _PROBE_LINES or total >= _PROBE_MAX_LINES:
            return


def probe(lines: Iterator[str]) -> list[str]:
    """The first lines of ``lines`` that :func:`detect_format` reads (taken from ``lines``)."""
    return list(_probed(lines))


def explain_format(first_lines: Iterable[str], *, named_conllu: bool = False) -> tuple[Format, str]:
    """:func:`detect_format`'s answer and the reason for it (for the log).  ``named_conllu``
    (the input is a file named ``*.conllu``) decides only an input that has nothing but
    comments and blank lines: read as CoNLL-U, its comments are reported as a sentence without
    word lines instead of being parsed as words."""
    has_words = False
    for number, line in enumerate(_probed(first_lines), start=1):
        content = line.lstrip(_BYTE_ORDER_MARK).rstrip("\r\n")
        stripped = content.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if "=" in stripped:
                return "conllu", f"line {number} is a '# key = value' comment"
            continue
        has_words = True
        why = _looks_like_word_line(content)
        if why is not None:
            return "conllu", f"line {number} {why}"
    if named_conllu and not has_words:
        return "conllu", "its name ends in .conllu and it has only comments and blank lines"
    return "text", "no line looks like CoNLL-U"


def detect_format(first_lines: Iterable[str]) -> Format:
    """``"conllu"`` or ``"text"`` from the first lines of an input.

    An input is plain text only when none of its first lines could belong to CoNLL-U, so that
    CoNLL-U with a mistake is read as CoNLL-U and its first bad line reported (or its sentence
    skipped), rather than parsed as words.  A byte order mark (U+FEFF) is ignored.  A line
    means CoNLL-U when it is

    * a comment (``#`` first) holding ``=``: metadata such as ``# sent_id = 1``;
    * a line with a tab that has ten tab-separated columns, or a token id (``3``, ``3-4``,
      ``3.1``) before its first tab: a word line, malformed or not (nine or eleven columns, a
      tab inside FORM, a bad id);
    * a line without tabs of ten whitespace-separated fields, the first a token id and the
      seventh (HEAD) an integer or ``_``: a word line whose tabs became spaces.

    Everything else is text: lines of words without tabs, lines with a tab between words (as
    long as no line looks like a word line), and comments without ``=`` (hashtags).  Detection
    reads up to 50 lines other than blanks and comments (at most 10,000 lines in all), so a long
    header of comments does not decide.
    """
    return explain_format(first_lines)[0]
