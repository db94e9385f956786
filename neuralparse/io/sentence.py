"""The :class:`Sentence` of one CoNLL-U block, able to write itself back byte for byte.

A sentence exposes the columns of its *syntactic words* (integer ids) as parallel lists, with
``heads``/``deprels`` in the convention of docs/dev/CONVENTIONS.md.  When it was read from a
file it also keeps a private :class:`_Layout`: the raw lines of the block (comments,
multiword-token lines ``3-4``, empty nodes ``5.1``, DEPS/MISC, spacing and line endings) plus
the columns a sentence can change (UPOS, XPOS, FEATS, HEAD, DEPREL) as read.
:meth:`Sentence.to_conllu` copies those lines and rewrites, in the line of each word, only the
cells whose value differs from what was read, so an unchanged sentence is written back exactly
as it came in; :meth:`Sentence.without_deps` alone changes more (it clears the enhanced graph:
DEPS and empty nodes).  Sentences built in code (:meth:`Sentence.from_words`) have no layout
and are written in the canonical form (``# sent_id``, ``# text``, ten columns).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from neuralparse.errors import InputError, TreeError

UNSPECIFIED = "_"
"""The CoNLL-U placeholder for an empty column."""

# 0-based column indices of a CoNLL-U word line.
UPOS_COLUMN = 3
XPOS_COLUMN = 4
FEATS_COLUMN = 5
HEAD_COLUMN = 6
DEPREL_COLUMN = 7
DEPS_COLUMN = 8
COLUMNS = 10

_BYTE_ORDER_MARK = "\ufeff"


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a read sentence needs to be written back unchanged.

    ``lines`` are the lines written when no column changed: the raw lines of the block with
    their own endings, including any blank lines before the sentence (extra separators) and its
    terminating blank line(s) (:meth:`Sentence.without_deps` replaces them by lines without
    enhanced graph).  ``word_lines[i]`` indexes the line of word ``i + 1``.  The other fields are
    the values of the changeable columns as read (``heads`` holds ``None`` for a ``_`` HEAD),
    used to detect which cells changed.
    """

    lines: tuple[str, ...]
    word_lines: tuple[int, ...]
    heads: tuple[int | None, ...]
    deprels: tuple[str, ...]
    upos: tuple[str, ...]
    xpos: tuple[str, ...]
    feats: tuple[str, ...]


def _with_cells(line: str, cells: Mapping[int, str | int | None]) -> str:
    """``line`` with the cells ``cells`` maps (0-based column -> new value) replaced.

    The one place where a word line is rewritten.  A value is written with ``str``, ``None``
    (the HEAD of a sentence without tree) as ``_``.  Every other byte is kept: the other
    columns, a byte order mark before the id, the line ending (what follows the last column,
    as the reader delimits it).
    """
    content = line.rstrip("\r\n")
    fields = content.split("\t")
    for column, value in cells.items():
        fields[column] = UNSPECIFIED if value is None else str(value)
    return "\t".join(fields) + line[len(content) :]


def _is_empty_node_line(line: str) -> bool:
    """Whether a line of a block the reader validated is an empty node (id ``i.k``)."""
    content = line.lstrip(_BYTE_ORDER_MARK)
    if content.startswith("#") or content.isspace():
        return False
    return "." in content.partition("\t")[0]


def _is_cell(value: object) -> bool:
    """Whether ``value`` can be one cell of a tab-separated line: non-empty, no tab/newline."""
    return (
        isinstance(value, str)
        and bool(value)
        and "\t" not in value
        and "\n" not in value
        and "\r" not in value
    )


def _is_feats(value: str) -> bool:
    """Whether ``value`` is a FEATS cell: ``_`` or ``Attr=Value`` pairs joined by ``|``."""
    if value == UNSPECIFIED:
        return True
    for pair in value.split("|"):
        attribute, equals, feature_value = pair.partition("=")
        if not (attribute and equals and feature_value):
            return False
    return True


def _check_field(value: str, column: str, word: int) -> str:
    """Refuse values that would break the ten tab-separated columns of a synthesized line."""
    if not _is_cell(value):
        raise ValueError(f"word {word}: {column} {value!r} is empty or contains a tab/newline")
    return value


@dataclass(slots=True, kw_only=True)
class Sentence:
    """One CoNLL-U sentence: the columns of its syntactic words, word 1 first.

    ``heads[i - 1]`` is the head of word ``i`` (0 = root) or ``heads`` is ``None`` when the
    source had no tree (HEAD ``_`` everywhere, e.g. input for prediction).  ``sent_id`` comes
    from the ``# sent_id =`` comment, otherwise it is the block's ordinal in its file (``#17``)
    so that messages can still name it.  ``line`` is the 1-based line of the sentence's first
    comment or word line in ``source``.
    """

    forms: list[str]
    lemmas: list[str]
    upos: list[str]
    xpos: list[str]
    feats: list[str]
    heads: list[int] | None
    deprels: list[str]
    misc: list[str]
    sent_id: str | None = None
    source: str | None = None
    line: int = 0
    _layout: _Layout | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n = len(self.forms)
        columns = {
            "lemmas": self.lemmas,
            "upos": self.upos,
            "xpos": self.xpos,
            "feats": self.feats,
            "deprels": self.deprels,
            "misc": self.misc,
        }
        if self.heads is not None:
            columns["heads"] = self.heads
        for name, values in columns.items():
            if len(values) != n:
                raise ValueError(f"{name} has {len(values)} entries for {n} words")
        if self._layout is not None and len(self._layout.word_lines) != n:
            raise ValueError("layout does not match the number of words")

    @classmethod
    def from_words(
        cls,
        forms: Sequence[str],
        *,
        heads: Sequence[int] | None = None,
        deprels: Sequence[str] | None = None,
        lemmas: Sequence[str] | None = None,
        upos: Sequence[str] | None = None,
        xpos: Sequence[str] | None = None,
        feats: Sequence[str] | None = None,
        misc: Sequence[str] | None = None,
        sent_id: str | None = None,
        source: str | None = None,
        line: int = 0,
    ) -> Sentence:
        """A sentence built in code; every column not given is ``_``."""
        blank = [UNSPECIFIED] * len(forms)
        return cls(
            forms=list(forms),
            lemmas=list(lemmas) if lemmas is not None else list(blank),
            upos=list(upos) if upos is not None else list(blank),
            xpos=list(xpos) if xpos is not None else list(blank),
            feats=list(feats) if feats is not None else list(blank),
            heads=list(heads) if heads is not None else None,
            deprels=list(deprels) if deprels is not None else list(blank),
            misc=list(misc) if misc is not None else list(blank),
            sent_id=sent_id,
            source=source,
            line=line,
        )

    def __len__(self) -> int:
        return len(self.forms)

    @property
    def words(self) -> list[str]:
        """The word forms (same list as ``forms``)."""
        return self.forms

    @property
    def labels(self) -> list[str]:
        """The dependency labels (same list as ``deprels``)."""
        return self.deprels

    @property
    def is_punct(self) -> list[bool]:
        """For each word, whether its UPOS is ``PUNCT`` (the UD punctuation tag)."""
        return [tag == "PUNCT" for tag in self.upos]

    @property
    def comments(self) -> list[str]:
        """The comment lines of the sentence, without line endings."""
        if self._layout is None:
            return []
        return [ln.rstrip("\r\n") for ln in self._layout.lines if ln.lstrip().startswith("#")]

    def _where(self) -> dict[str, str | int | None]:
        """Where this sentence came from, as the keyword arguments of an :class:`InputError`."""
        return {"source": self.source, "line": self.line or None, "sent_id": self.sent_id}

    def with_tree(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> Sentence:
        """A copy with new HEAD (and DEPREL unless ``None``); writing it changes columns 7-8 only.

        Raises :class:`TreeError` when the lengths do not match the words or a head lies outside
        ``0..n``; it does not require a single root or acyclicity (use
        ``neuralparse.trees.core.check_tree`` for that).
        """
        n = len(self)
        where = self._where()
        if len(heads) != n:
            raise TreeError(f"{len(heads)} heads given for {n} words", **where)
        new_deprels = list(self.deprels) if deprels is None else list(deprels)
        if len(new_deprels) != n:
            raise TreeError(f"{len(new_deprels)} deprels given for {n} words", **where)
        new_heads = list(heads)
        for word, head in enumerate(new_heads, start=1):
            if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head <= n:
                raise TreeError(f"head of word {word} is {head!r}, outside 0..{n}", **where)
        return dataclasses.replace(self, heads=new_heads, deprels=new_deprels)

    def with_tags(
        self,
        *,
        upos: Sequence[str] | None = None,
        xpos: Sequence[str] | None = None,
        feats: Sequence[str] | None = None,
    ) -> Sentence:
        """A copy with new UPOS / XPOS / FEATS (``None`` keeps that column as it is).

        Writing the copy changes columns 4-6 only, and only in the lines of the words whose
        value differs from what was read.  Each column is one string per word, non-empty and
        without tab or newline; a FEATS value is ``_`` or ``Attr=Value`` pairs joined by ``|``.
        Raises :class:`InputError` (a ``ValueError`` naming the source, line and sentence) for a
        wrong number of values or a malformed value.
        """
        replaced = {
            name: self._checked_tags(column, values)
            for name, column, values in (
                ("upos", "UPOS", upos),
                ("xpos", "XPOS", xpos),
                ("feats", "FEATS", feats),
            )
            if values is not None
        }
        return dataclasses.replace(self, **replaced)

    def without_tags(self) -> Sentence:
        """A copy with UPOS, XPOS and FEATS blanked (``_``), as text that nobody tagged."""
        blank = [UNSPECIFIED] * len(self)
        return self.with_tags(upos=blank, xpos=blank, feats=blank)

    def _checked_tags(self, column: str, values: Sequence[str]) -> list[str]:
        """``values`` as a new list after checking them as the ``column`` of every word."""
        n = len(self)
        if len(values) != n:
            raise InputError(f"{len(values)} {column} values given for {n} words", **self._where())
        checked = list(values)
        for word, value in enumerate(checked, start=1):
            if not _is_cell(value):
                raise InputError(
                    f"{column} of word {word} is {value!r}: empty, not a string or "
                    "contains a tab/newline",
                    **self._where(),
                )
            if column == "FEATS" and not _is_feats(value):
                raise InputError(
                    f"FEATS of word {word} is {value!r}: neither '_' nor Attr=Value pairs "
                    "joined by '|'",
                    **self._where(),
                )
        return checked

    def without_deps(self) -> Sentence:
        """A copy written without enhanced graph: DEPS (column 9) is ``_`` for every word.

        Use it when the tree changed (:meth:`with_tree` on a prediction), since the enhanced
        graph of the input no longer matches it.  Empty-node lines (ids like ``5.1``) are
        dropped: empty nodes exist only in enhanced graphs, and the official UD validator
        counts an empty node as an enhanced graph that must then reach every word, which no
        word can do with DEPS ``_``, so keeping them would write an invalid sentence.  A byte
        order mark at the start of a dropped line moves to the next line.  Comments,
        multiword-token lines and every other cell are kept.  Sentences built in code already
        write ``_`` there and have no empty nodes.
        """
        layout = self._layout
        if layout is None:
            return dataclasses.replace(self)
        word_line_set = frozenset(layout.word_lines)
        lines: list[str] = []
        word_lines: list[int] = []
        carried_mark = ""
        for index, line in enumerate(layout.lines):
            if index in word_line_set:
                word_lines.append(len(lines))
                line = _with_cells(line, {DEPS_COLUMN: UNSPECIFIED})
            elif _is_empty_node_line(line):
                if line.startswith(_BYTE_ORDER_MARK):
                    carried_mark = _BYTE_ORDER_MARK
                continue
            lines.append(carried_mark + line)
            carried_mark = ""
        new_layout = dataclasses.replace(layout, lines=tuple(lines), word_lines=tuple(word_lines))
        return dataclasses.replace(self, _layout=new_layout)

    def to_conllu(self) -> str:
        """The CoNLL-U block of this sentence, ending with its terminating blank line.

        A read sentence writes its layout's lines, with the UPOS, XPOS, FEATS, HEAD and DEPREL
        cells rewritten only where they differ from what was read; when nothing differs the
        lines are joined as they are, without splitting any (writing back what was read, or a
        prediction equal to the tree of the input, costs five column comparisons).
        """
        layout = self._layout
        if layout is None:
            return self._synthesize()
        heads: Sequence[int | None] = self.heads if self.heads is not None else [None] * len(self)
        # The fast path: one comparison per column, no line split.
        if (
            tuple(heads) == layout.heads
            and tuple(self.deprels) == layout.deprels
            and tuple(self.upos) == layout.upos
            and tuple(self.xpos) == layout.xpos
            and tuple(self.feats) == layout.feats
        ):
            return "".join(layout.lines)
        changed = [
            (column, values, as_read)
            for column, values, as_read in (
                (UPOS_COLUMN, self.upos, layout.upos),
                (XPOS_COLUMN, self.xpos, layout.xpos),
                (FEATS_COLUMN, self.feats, layout.feats),
                (HEAD_COLUMN, heads, layout.heads),
                (DEPREL_COLUMN, self.deprels, layout.deprels),
            )
            if tuple(values) != as_read
        ]
        lines = list(layout.lines)
        for i, index in enumerate(layout.word_lines):
            cells: dict[int, str | int | None] = {}
            for column, values, as_read in changed:
                if values[i] != as_read[i]:
                    cells[column] = values[i]
            if cells:
                lines[index] = _with_cells(lines[index], cells)
        return "".join(lines)

    def _synthesize(self) -> str:
        """Canonical CoNLL-U for a sentence that was not read from a file."""
        out: list[str] = []
        if self.sent_id is not None:
            out.append(f"# sent_id = {self.sent_id}\n")
        out.append(f"# text = {' '.join(self.forms)}\n")
        for i in range(len(self)):
            word = i + 1
            head = UNSPECIFIED if self.heads is None else str(self.heads[i])
            columns = (
                str(word),
                _check_field(self.forms[i], "FORM", word),
                _check_field(self.lemmas[i], "LEMMA", word),
                _check_field(self.upos[i], "UPOS", word),
                _check_field(self.xpos[i], "XPOS", word),
                _check_field(self.feats[i], "FEATS", word),
                head,
                _check_field(self.deprels[i], "DEPREL", word),
                UNSPECIFIED,
                _check_field(self.misc[i], "MISC", word),
            )
            out.append("\t".join(columns) + "\n")
        out.append("\n")
        return "".join(out)
