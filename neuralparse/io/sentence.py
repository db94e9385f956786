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
from collections.abc import Iterable, Sequence
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
    terminating blank line(s).  ``word_lines[i]`` indexes the line of word ``i + 1``.  The other
    fields are the values of the changeable columns as read (``heads`` holds ``None`` for a
    ``_`` HEAD), used to detect which cells changed, and whether the enhanced graph is left
    out on writing (``clear_deps``, :meth:`Sentence.without_deps`): recorded here and applied
    by :meth:`Sentence.to_conllu` in the same rewrite of each line as the other cells.
    ``enhanced_graph``: the block has one to leave out (a DEPS cell other than ``_``, or an
    empty node).
    """

    lines: tuple[str, ...]
    word_lines: tuple[int, ...]
    heads: tuple[int | None, ...]
    deprels: tuple[str, ...]
    upos: tuple[str, ...]
    xpos: tuple[str, ...]
    feats: tuple[str, ...]
    enhanced_graph: bool = False
    clear_deps: bool = False


def _with_cells(line: str, cells: Iterable[tuple[int, str | int | None]]) -> str:
    """``line`` with the cells ``cells`` names (0-based column, new value) replaced.

    The one place where a word line is rewritten.  A value is written with ``str``, ``None``
    (the HEAD of a sentence without tree) as ``_``.  Every other byte is kept: the other
    columns, a byte order mark before the id, the line ending (what follows the last column,
    as the reader delimits it).
    """
    content = line.rstrip("\r\n")
    fields = content.split("\t")
    for column, value in cells:
        fields[column] = UNSPECIFIED if value is None else str(value)
    return "\t".join(fields) + line[len(content) :]


def _is_empty_node_line(line: str) -> bool:
    """Whether a line of a block the reader validated is an empty node (id ``i.k``)."""
    content = line.lstrip(_BYTE_ORDER_MARK)
    if content.startswith("#") or content.isspace():
        return False
    return "." in content.partition("\t")[0]


def _without_empty_nodes(lines: list[str], word_lines: Sequence[int]) -> list[str]:
    """``lines`` of a block without its empty-node lines; a byte order mark at the start of a
    dropped line moves to the next line."""
    words = frozenset(word_lines)
    kept: list[str] = []
    carried_mark = ""
    for index, line in enumerate(lines):
        if index not in words and _is_empty_node_line(line):
            if line.startswith(_BYTE_ORDER_MARK):
                carried_mark = _BYTE_ORDER_MARK
            continue
        kept.append(carried_mark + line)
        carried_mark = ""
    return kept


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


def is_tag_value(column: str, value: object) -> bool:
    """Whether ``value`` can be the ``column`` (``UPOS``, ``XPOS`` or ``FEATS``) cell of a word,
    as :meth:`Sentence.with_tags` requires."""
    return _is_cell(value) and (column != "FEATS" or _is_feats(value))  # type: ignore[arg-type]


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

    def __str__(self) -> str:
        """The CoNLL-U block (:meth:`to_conllu`) without its terminating blank line, which
        ``print`` adds: printing sentences one after another shows a CoNLL-U file."""
        return self.to_conllu().rstrip("\r\n") + "\n"

    def _repr_html_(self) -> str:
        """The picture of the tree (:func:`neuralparse.pictures.figure`), shown by notebooks."""
        # Imported here: drawing is for notebooks and commands, reading and writing need none of it.
        from neuralparse.pictures import figure

        return figure(self)

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
        new_heads, new_deprels = self._checked_tree(heads, deprels)
        return dataclasses.replace(self, heads=new_heads, deprels=new_deprels)

    def with_prediction(
        self,
        heads: Sequence[int],
        deprels: Sequence[str],
        *,
        upos: Sequence[str] | None = None,
        xpos: Sequence[str] | None = None,
        feats: Sequence[str] | None = None,
        fill_tags: bool = False,
        clear_deps: bool = False,
        checked_tags: bool = False,
    ) -> Sentence:
        """A parser's output in one copy: what :meth:`with_tree`, then :meth:`with_tags` and,
        with ``clear_deps``, :meth:`without_deps` give, written with one rewrite of each line.

        With ``fill_tags`` a tag column given replaces only the words' ``_`` cells (the tags
        the sentence has are kept), except FEATS, which is filled only in a sentence whose
        FEATS are ``_`` throughout: in UD a FEATS ``_`` is a value (the word has no features)
        wherever the sentence's FEATS are annotated, while a UPOS or XPOS ``_`` is never one.
        ``checked_tags`` says that the values given are known to
        be valid cells (:func:`is_tag_value`: prediction checks each tagging head's classes
        once), so they are not checked word by word; a column that keeps some of the
        sentence's own tags is still checked whole, as :meth:`with_tags` checks it.
        """
        new_heads, new_deprels = self._checked_tree(heads, deprels)
        n = len(self)
        replaced: dict[str, object] = {}
        columns = (("upos", "UPOS", upos), ("xpos", "XPOS", xpos), ("feats", "FEATS", feats))
        for name, column, values in columns:
            if values is None:
                continue
            trusted = checked_tags and len(values) == n
            if fill_tags:
                own: list[str] = getattr(self, name)
                untagged = own.count(UNSPECIFIED) == n
                if name == "feats" and not untagged:
                    continue  # the sentence's FEATS stay as they are
                trusted = trusted and untagged
                values = [
                    given if given != UNSPECIFIED else guess
                    for given, guess in zip(own, values, strict=True)
                ]
            replaced[name] = list(values) if trusted else self._checked_tags(column, values)
        if clear_deps and self._layout is not None:
            replaced["_layout"] = dataclasses.replace(self._layout, clear_deps=True)
        return dataclasses.replace(self, heads=new_heads, deprels=new_deprels, **replaced)

    def _checked_tree(
        self, heads: Sequence[int], deprels: Sequence[str] | None
    ) -> tuple[list[int], list[str]]:
        """``heads`` and ``deprels`` (the sentence's own when ``None``) as new lists, after
        checking them as :meth:`with_tree` says."""
        n = len(self)
        if len(heads) != n:
            raise TreeError(f"{len(heads)} heads given for {n} words", **self._where())
        new_deprels = list(self.deprels) if deprels is None else list(deprels)
        if len(new_deprels) != n:
            raise TreeError(f"{len(new_deprels)} deprels given for {n} words", **self._where())
        new_heads = list(heads)
        # Checked at C speed first; the loop over the words only runs to name a bad head.
        if (
            not set(map(type, new_heads)) <= {int}
            or min(new_heads, default=0) < 0
            or max(new_heads, default=0) > n
        ):
            for word, head in enumerate(new_heads, start=1):
                if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head <= n:
                    raise TreeError(
                        f"head of word {word} is {head!r}, outside 0..{n}", **self._where()
                    )
        return new_heads, new_deprels

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

    def multiword_tokens(self) -> list[tuple[int, int, str]]:
        """The multiword tokens of a read sentence as ``(first word, last word, FORM)``, in
        order (``3-4  du`` gives ``(3, 4, "du")``); none for a sentence built in code."""
        if self._layout is None:
            return []
        tokens = []
        for line in self._layout.lines:
            token_id, _, rest = line.removeprefix(_BYTE_ORDER_MARK).partition("\t")
            first, dash, last = token_id.partition("-")
            if dash and first.isdigit() and last.isdigit():
                tokens.append((int(first), int(last), rest.partition("\t")[0]))
        return tokens

    @property
    def has_enhanced_graph(self) -> bool:
        """Whether the sentence was read with an enhanced graph (a DEPS cell other than ``_``,
        or an empty node), which :meth:`without_deps` leaves out of what is written."""
        return self._layout is not None and self._layout.enhanced_graph

    def without_deps(self) -> Sentence:
        """A copy written without enhanced graph: DEPS (column 9) is ``_`` for every word.

        Use it when the tree changed (:meth:`with_tree` on a prediction), since the enhanced
        graph of the input no longer matches it.  Empty-node lines (ids like ``5.1``) are
        dropped: empty nodes exist only in enhanced graphs, and the official UD validator
        counts an empty node as an enhanced graph that must then reach every word, which no
        word can do with DEPS ``_``, so keeping them would write an invalid sentence.  A byte
        order mark at the start of a dropped line moves to the next line.  Comments,
        multiword-token lines and every other cell are kept.  Sentences built in code already
        write ``_`` there and have no empty nodes.  The lines are rewritten by :meth:`to_conllu`,
        together with the other cells that changed.
        """
        layout = self._layout
        if layout is None:
            return dataclasses.replace(self)
        return dataclasses.replace(self, _layout=dataclasses.replace(layout, clear_deps=True))

    def to_conllu(self) -> str:
        """The CoNLL-U block of this sentence, ending with its terminating blank line.

        A read sentence writes its layout's lines, with the UPOS, XPOS, FEATS, HEAD and DEPREL
        cells rewritten only where they differ from what was read; when nothing differs the
        lines are joined as they are, without splitting any (writing back what was read, or a
        prediction equal to the tree of the input, costs five column comparisons).  After
        :meth:`without_deps` every word line also gets DEPS ``_`` in the same rewrite, and the
        empty-node lines are left out.
        """
        layout = self._layout
        if layout is None:
            return self._synthesize()
        heads: Sequence[int | None] = self.heads if self.heads is not None else [None] * len(self)
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
        clear_deps = layout.clear_deps
        if not changed and not clear_deps:  # the fast path: no line split
            return "".join(layout.lines)
        lines = list(layout.lines)
        for i, index in enumerate(layout.word_lines):
            cells = [(column, new[i]) for column, new, old in changed if new[i] != old[i]]
            if clear_deps:
                cells.append((DEPS_COLUMN, UNSPECIFIED))
            if cells:
                lines[index] = _with_cells(lines[index], cells)
        if clear_deps:
            lines = _without_empty_nodes(lines, layout.word_lines)
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
