"""The :class:`Sentence` of one CoNLL-U block, able to write itself back byte for byte.

A sentence exposes the columns of its *syntactic words* (integer ids) as parallel lists, with
``heads``/``deprels`` in the convention of docs/dev/CONVENTIONS.md.  When it was read from a
file it also keeps a private :class:`_Layout`: the raw lines of the block (comments,
multiword-token lines ``3-4``, empty nodes ``5.1``, DEPS/MISC, spacing and line endings) plus
HEAD/DEPREL as read.  :meth:`Sentence.to_conllu` copies those lines and rewrites columns 7-8
only of the words whose HEAD or DEPREL differ from what was read, so an unchanged sentence is
written back exactly as it came in.  Sentences built in code (:meth:`Sentence.from_words`) have
no layout and are written in the canonical form (``# sent_id``, ``# text``, ten columns).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from neuralparse.errors import TreeError

UNSPECIFIED = "_"
"""The CoNLL-U placeholder for an empty column."""

HEAD_COLUMN = 6
DEPREL_COLUMN = 7
COLUMNS = 10


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a read sentence needs to be written back unchanged.

    ``lines`` are the raw lines of the block with their own endings, including any blank lines
    before the sentence (extra separators) and its terminating blank line(s); ``word_lines[i]``
    indexes the line of word ``i + 1``; ``heads``/``deprels`` are HEAD/DEPREL as read (``None``
    for a ``_`` HEAD), used to detect which words changed.
    """

    lines: tuple[str, ...]
    word_lines: tuple[int, ...]
    heads: tuple[int | None, ...]
    deprels: tuple[str, ...]


def _line_ending(line: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\n", "\r")):
        return line[-1]
    return ""


def _with_head_and_deprel(line: str, head: int | None, deprel: str) -> str:
    """``line`` with columns 7 (HEAD) and 8 (DEPREL) replaced; everything else kept."""
    ending = _line_ending(line)
    fields = line[: len(line) - len(ending)].split("\t")
    fields[HEAD_COLUMN] = UNSPECIFIED if head is None else str(head)
    fields[DEPREL_COLUMN] = deprel
    return "\t".join(fields) + ending


def _check_field(value: str, column: str, word: int) -> str:
    """Refuse values that would break the ten tab-separated columns of a synthesized line."""
    if not value or "\t" in value or "\n" in value or "\r" in value:
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

    def with_tree(self, heads: Sequence[int], deprels: Sequence[str] | None = None) -> Sentence:
        """A copy with new HEAD (and DEPREL unless ``None``); writing it changes columns 7-8 only.

        Raises :class:`TreeError` when the lengths do not match the words or a head lies outside
        ``0..n``; it does not require a single root or acyclicity (use
        ``neuralparse.trees.core.check_tree`` for that).
        """
        n = len(self)
        where = {"source": self.source, "line": self.line or None, "sent_id": self.sent_id}
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

    def to_conllu(self) -> str:
        """The CoNLL-U block of this sentence, ending with its terminating blank line."""
        layout = self._layout
        if layout is None:
            return self._synthesize()
        heads: Sequence[int | None] = self.heads if self.heads is not None else [None] * len(self)
        if tuple(heads) == layout.heads and tuple(self.deprels) == layout.deprels:
            return "".join(layout.lines)
        lines = list(layout.lines)
        for i, index in enumerate(layout.word_lines):
            if heads[i] != layout.heads[i] or self.deprels[i] != layout.deprels[i]:
                lines[index] = _with_head_and_deprel(lines[index], heads[i], self.deprels[i])
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
