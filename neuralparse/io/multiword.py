"""Multiword tokens learned from a training treebank, to split raw text as the treebank does.

UD writes a surface token that stands for several syntactic words as a multiword token: French
``du`` is the words ``de le``, Greek ``στο`` is ``σε το``, Turkish ``yakasındaki`` is
``yakasında ki``.  A tokenizer of running text (spaCy's blank pipelines,
:mod:`neuralparse.io.raw`) gives the surface token, while the parser was trained on the words.
A :class:`MultiwordLexicon` holds what the training treebank says about the forms it writes as
multiword tokens: a form maps to the words of its most frequent analysis when the treebank
splits it more often than it leaves it whole (ignoring case), so French ``des`` is split only
if the treebank's ``de les`` outnumbers its article ``des``.

It is a dictionary, not a model: a form the training data never split stays one word.  That
covers the closed class of contractions of most languages (German, Greek, French, Portuguese,
Spanish, Italian) and, where splitting is productive (Turkish suffixes, Arabic and Hebrew
clitics), only the forms seen in training.

A form found with other capitalization than the one seen (``Στο`` for ``στο``, ``ZUM`` for
``zum``) is split like the seen form, its words given its capitalization: every word upper-case
for an upper-case form, the first word's first letter upper-case for a capitalized one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from neuralparse.io.sentence import UNSPECIFIED, Sentence


def _cased(form: str, seen: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """``words``, the analysis of the form ``seen``, for ``form`` (the same letters in other
    capitalization)."""
    if form == seen:
        return words
    if len(form) > 1 and form.isupper():
        return tuple(word.upper() for word in words)
    lowered = tuple(word.lower() for word in words)
    if form[:1].isupper():
        return (lowered[0][:1].upper() + lowered[0][1:], *lowered[1:])
    return lowered


@dataclass(frozen=True)
class MultiwordLexicon:
    """Surface forms (as seen in training) and the syntactic words each one stands for."""

    entries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    _folded: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        entries = {form: tuple(words) for form, words in self.entries.items()}
        object.__setattr__(self, "entries", MappingProxyType(entries))
        # Lower-case forms first, so that a form in other capitalization follows the
        # lower-case spelling when the treebank has it.
        folded: dict[str, str] = {}
        for form in sorted(entries, key=lambda f: (f != f.lower(), f)):
            folded.setdefault(form.lower(), form)
        object.__setattr__(self, "_folded", MappingProxyType(folded))

    @classmethod
    def from_sentences(cls, sentences: Iterable[Sentence]) -> MultiwordLexicon:
        """What the multiword tokens of ``sentences`` say (see the module): for every form
        (ignoring case) split more often than not, each spelling's most frequent analysis.
        A multiword token with a word whose form is ``_`` teaches nothing."""
        analyses: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
        split: Counter[str] = Counter()
        whole: Counter[str] = Counter()
        for sentence in sentences:
            covered: set[int] = set()
            for first, last, form in sentence.multiword_tokens():
                words = tuple(sentence.forms[first - 1 : last])
                covered.update(range(first, last + 1))
                if UNSPECIFIED in words:  # a word without a form (seen in Turkish-IMST)
                    continue
                analyses[form][words] += 1
                split[form.lower()] += 1
            for index, form in enumerate(sentence.forms, start=1):
                if index not in covered:
                    whole[form.lower()] += 1
        entries = {
            form: counts.most_common(1)[0][0]
            for form, counts in sorted(analyses.items())
            if split[form.lower()] > whole[form.lower()]
        }
        return cls(entries)

    def __len__(self) -> int:
        return len(self.entries)

    def words(self, form: str) -> tuple[str, ...] | None:
        """The words that ``form`` stands for, or None when it is one word."""
        found = self.entries.get(form)
        if found is not None:
            return found
        seen = self._folded.get(form.lower())
        return None if seen is None else _cased(form, seen, self.entries[seen])

    def joins(self, forms: Sequence[str]) -> bool:
        """Whether ``forms`` written together are a multiword token over exactly these words
        (English ``do`` ``n't``, as ``don't``), ignoring case."""
        words = self.words("".join(forms)) if len(forms) > 1 else None
        return words is not None and [w.lower() for w in words] == [f.lower() for f in forms]

    def to_dict(self) -> dict[str, list[str]]:
        """Plain data for a checkpoint."""
        return {form: list(words) for form, words in self.entries.items()}

    @classmethod
    def from_dict(cls, data: object) -> MultiwordLexicon:
        """The lexicon of :meth:`to_dict`'s data; a :class:`ValueError` names what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"multiword tokens are a {type(data).__name__}, not a dict")
        for form, words in data.items():
            if not _is_field(form):
                raise ValueError(f"multiword token form {form!r} is not a CoNLL-U FORM")
            if not isinstance(words, list | tuple) or len(words) < 2:
                raise ValueError(f"multiword token {form!r} does not list two or more words")
            if not all(_is_field(word) for word in words):
                raise ValueError(f"multiword token {form!r} has a word that is not a FORM")
        return cls({form: tuple(words) for form, words in data.items()})


def _is_field(value: object) -> bool:
    """A non-empty string that fits in a CoNLL-U cell."""
    return isinstance(value, str) and bool(value) and not any(c in value for c in "\t\r\n")
