"""Plain pre-tokenized text for prediction, and telling it apart from CoNLL-U.

Plain text has one sentence per line with tokens separated by whitespace; blank lines are
skipped.  Each sentence becomes a :class:`Sentence` without a tree (``heads`` is ``None``,
every other column ``_``) whose :meth:`Sentence.to_conllu` is valid CoNLL-U with a
``# text =`` comment; :meth:`Sentence.with_tree` fills HEAD and DEPREL.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Literal

from neuralparse.errors import InputError
from neuralparse.io.conllu import _Block, _parse_block
from neuralparse.io.sentence import UNSPECIFIED, Sentence
from neuralparse.io.sources import Source, open_lines

Format = Literal["conllu", "text"]

_PROBE_LINES = 50


def _conllu_lines(tokens: list[str]) -> list[str]:
    """The canonical CoNLL-U block of an untagged, unparsed token sequence."""
    lines = [f"# text = {' '.join(tokens)}\n"]
    empty_columns = "\t".join([UNSPECIFIED] * 8)
    lines.extend(f"{i}\t{token}\t{empty_columns}\n" for i, token in enumerate(tokens, start=1))
    lines.append("\n")
    return lines


def iter_text(source: Source, *, name: str | None = None) -> Iterator[Sentence]:
    """Stream the sentences of plain pre-tokenized text (path, open file, text or lines).

    ``Sentence.line`` is the line in the text, ``sent_id`` the sentence's ordinal (``#3``).
    Raises :class:`InputError` when the input holds no sentence.
    """
    with open_lines(source, name) as (source_name, lines):
        count = 0
        for number, line in enumerate(lines, start=1):
            tokens = (line.removeprefix("\ufeff") if number == 1 else line).split()
            if not tokens:
                continue
            count += 1
            # The CoNLL-U parser builds the layout, so these sentences write like read ones.
            block = _Block(first_line=number, lines=_conllu_lines(tokens), ordinal=count)
            sentence = _parse_block(block, source_name, check_tree=False)
            sentence.line = number
            yield sentence
        if count == 0:
            raise InputError("no sentences (empty input)", source=source_name)


def read_text(source: Source, *, name: str | None = None) -> list[Sentence]:
    """All sentences of plain pre-tokenized text; see :func:`iter_text`."""
    return list(iter_text(source, name=name))


def _is_conllu_word_line(line: str) -> bool:
    fields = line.rstrip("\r\n").split("\t")
    if len(fields) != 10:
        return False
    token_id = fields[0]
    return token_id.replace("-", "", 1).replace(".", "", 1).isdigit()


def detect_format(first_lines: Iterable[str]) -> Format:
    """``"conllu"`` or ``"text"`` from the first lines of an input.

    The first line that is neither blank nor a comment decides: ten tab-separated columns with
    a token id (``3``, ``3-4``, ``3.1``) mean CoNLL-U, anything else plain text.  Lines starting
    with ``#`` are skipped because plain text may also begin with one (a hashtag); when only
    such lines are seen, ``# key = value`` comments mean CoNLL-U.  At most 50 lines are read.
    """
    comments: list[str] = []
    for line in itertools.islice(first_lines, _PROBE_LINES):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            comments.append(stripped)
            continue
        return "conllu" if _is_conllu_word_line(line) else "text"
    looks_like_metadata = bool(comments) and all("=" in c for c in comments)
    return "conllu" if looks_like_metadata else "text"
