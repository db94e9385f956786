"""Raw (untokenized) text for prediction: spaCy's rule-based tokenizer and sentencizer,
refined by what a model learned of its training treebank's segmentation.

``input_format=raw`` reads running text, tokenizes it and splits it into sentences with the
*blank* spaCy pipeline of a language (``spacy.blank(lang)`` and the rule-based
``sentencizer``: tokenizer exceptions and punctuation rules, no statistical model, nothing to
download).  spaCy is an optional dependency (``pip install 'neuralparse[text]'``); without it,
reading raw text is an :class:`~neuralparse.errors.InputError` that says so.

Blank lines separate paragraphs, and each paragraph is tokenized on its own, so no sentence
spans two paragraphs.  The lines of a paragraph are one running text: a line break inside a
paragraph, like any run of whitespace, counts as one space.  The input is read one paragraph at
a time (a paragraph longer than ``MAX_PARAGRAPH_CHARS`` is cut at the next line break, and a
sentence across the cut is split there), so memory stays bounded on any file size.

Each sentence becomes a :class:`Sentence` without a tree whose CoNLL-U has ``# newpar`` on the
first sentence of a paragraph, ``# text =`` with the sentence's text, and ``SpaceAfter=No`` in
MISC where the text has no space after a word (also at the end of a sentence followed at once
by the next one, but never at the end of a paragraph).  The texts of a paragraph's sentences
joined by single spaces (where the last word has no ``SpaceAfter=No``) are therefore the
paragraph with its whitespace runs written as one space.

What a model learned of its training treebank's segmentation (:class:`Segmentation`) refines
spaCy's.  Its :class:`~neuralparse.io.sentence_splitter.SentenceSplitter` decides where
sentences end instead of the sentencizer.  The tokenizer's splits are taken as they are
(English ``don't`` is the two words ``do`` and ``n't``, which UD treebanks write under the
multiword token ``don't``), and each token is one syntactic word, unless its
:class:`~neuralparse.io.multiword.MultiwordLexicon` says that the token's form stands for
several: then it is written as a multiword token over those words (French ``du`` as ``de
le``), and ``SpaceAfter=No`` goes on the token's line.  Tokens written without a space between
them that are the words of one of its multiword tokens are written under it (English ``do``
``n't`` under ``don't``).
"""

from __future__ import annotations

import bisect
import functools
import logging
import pkgutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from neuralparse.datasets import DatasetError, resolve_treebank
from neuralparse.errors import InputError
from neuralparse.io.conllu import parse_conllu_text
from neuralparse.io.multiword import MultiwordLexicon
from neuralparse.io.sentence import UNSPECIFIED, Sentence
from neuralparse.io.sentence_splitter import SentenceSplitter, Token
from neuralparse.io.sources import Source, open_lines, text_lines, undecodable

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span
    from spacy.tokens import Token as SpacyToken

log = logging.getLogger(__name__)

DEFAULT_LANGUAGE = "xx"
"""spaCy's multi-language tokenizer: punctuation rules without any language's exceptions,
used when neither the caller nor the checkpoint names a language (a wrong language's
exceptions, English ``n't`` splitting say, would do harm elsewhere)."""

MAX_PARAGRAPH_CHARS = 100_000
"""A paragraph is cut at the first line break after this many characters (memory bound)."""

MAX_GLUED_TOKENS = 3
"""The most tokenizer tokens that are written under one multiword token of the model's."""

PARAGRAPHS_PER_BATCH = 64
"""Paragraphs that spaCy tokenizes together (``nlp.pipe``'s ``batch_size``)."""

INSTALL_HINT = "pip install 'neuralparse[text]'"
_BYTE_ORDER_MARK = "\ufeff"
_SPACE_AFTER_NO = "SpaceAfter=No"


@dataclass(frozen=True)
class Segmentation:
    """What a model learned of its training treebank's segmentation: the forms it writes as
    multiword tokens, and where it ends sentences (None: spaCy's sentencizer decides)."""

    multiwords: MultiwordLexicon = field(default_factory=MultiwordLexicon)
    sentences: SentenceSplitter | None = None


class LanguageError(InputError):
    """A language that spaCy has no blank pipeline for (or one that needs more packages)."""


def _require_spacy() -> None:
    """An :class:`InputError` that says how to install spaCy when it cannot be imported."""
    try:
        import spacy  # noqa: F401
    except ImportError:
        raise InputError(
            f"input_format=raw tokenizes with spaCy, which is not installed: {INSTALL_HINT}"
        ) from None


def spacy_languages() -> list[str]:
    """The language codes of spaCy's blank pipelines (``en``, ``el``, ..., ``xx``)."""
    import spacy.lang

    return sorted(m.name for m in pkgutil.iter_modules(spacy.lang.__path__) if m.ispkg)


def blank_pipeline(lang: str) -> Language:
    """spaCy's blank pipeline of ``lang`` with the rule-based sentencizer (one per language,
    kept: building one costs a tenth of a second)."""
    _require_spacy()  # on each call (a dictionary look-up), outside the cache
    return _cached_pipeline(lang)


@functools.lru_cache(maxsize=8)
def _cached_pipeline(lang: str) -> Language:
    import spacy

    try:
        nlp = spacy.blank(lang)
    except ImportError as error:  # E048 for an unknown code; Japanese etc. need packages
        if lang not in spacy_languages():
            raise LanguageError(
                f"spaCy has no language {lang!r}; use one of {', '.join(spacy_languages())} "
                f"(ISO 639 codes; {DEFAULT_LANGUAGE!r} is language-neutral)"
            ) from None
        message = f"spaCy's tokenizer for {lang!r} needs more packages: {error}"
        raise LanguageError(message) from None
    nlp.add_pipe("sentencizer")
    # The length limit protects spaCy's statistical parser; the tokenizer and the sentencizer
    # are linear, and paragraphs are bounded by MAX_PARAGRAPH_CHARS but for a single long line.
    nlp.max_length = 1 << 62
    return nlp


def model_language(config: Mapping[str, Any]) -> str | None:
    """The language code of the treebank a checkpoint was trained on: the part of its file
    prefix before ``_`` (``data.code``, else the registry's code of ``data.treebank``:
    ``UD_English-EWT`` gives ``en``), or ``None`` when the configuration names none."""
    data = config.get("data") or {}
    code = data.get("code")
    if not code and data.get("treebank"):
        try:
            code = resolve_treebank(data["treebank"]).code
        except DatasetError:
            return None
    return code.partition("_")[0] if code else None


def resolve_language(lang: str | None, config: Mapping[str, Any]) -> str:
    """The tokenizer language for raw text: ``lang`` when given (checked: an unknown code is a
    :class:`LanguageError`), else the checkpoint's :func:`model_language` when spaCy has it,
    else :data:`DEFAULT_LANGUAGE`.  Logs the choice."""
    if lang is not None:
        blank_pipeline(lang)
        log.info("raw text: spaCy's blank %r tokenizer (lang=%s)", lang, lang)
        return lang
    found = model_language(config)
    if found is not None:
        try:
            blank_pipeline(found)
        except LanguageError:
            log.warning(
                "raw text: spaCy cannot tokenize the model's language %r; using its %r "
                "tokenizer (set lang= to choose)",
                found,
                DEFAULT_LANGUAGE,
            )
        else:
            log.info("raw text: spaCy's blank %r tokenizer (the model's)", found)
            return found
    else:
        log.info(
            "raw text: the model names no language; spaCy's %r tokenizer (set lang= to choose)",
            DEFAULT_LANGUAGE,
        )
    blank_pipeline(DEFAULT_LANGUAGE)
    return DEFAULT_LANGUAGE


@dataclass
class _Paragraph:
    """One paragraph (or a piece of a long one, ``continued`` after the first): its lines with
    whitespace runs as single spaces, where each starts in the text, and their line numbers."""

    continued: bool = False
    lines: list[str] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    length: int = 0

    def add(self, words: list[str], number: int) -> None:
        line = " ".join(words)
        self.starts.append(self.length + bool(self.lines))
        self.length += bool(self.lines) + len(line)
        self.lines.append(line)
        self.numbers.append(number)

    @property
    def text(self) -> str:
        return " ".join(self.lines)

    def line_of(self, offset: int) -> int:
        """The input line of the character ``offset`` of the text."""
        return self.numbers[bisect.bisect_right(self.starts, offset) - 1]


def _paragraphs(lines: Iterable[str], name: str) -> Iterator[_Paragraph]:
    """The paragraphs of ``lines``: runs of lines that are not blank (see the module)."""
    paragraph = _Paragraph()
    for number, line in enumerate(lines, start=1):
        problem = undecodable(line)
        if problem is not None:
            raise InputError(problem, source=name, line=number)
        words = (line.removeprefix(_BYTE_ORDER_MARK) if number == 1 else line).split()
        if words:
            paragraph.add(words, number)
        if paragraph.lines and not words:
            yield paragraph
            paragraph = _Paragraph()
        elif paragraph.length >= MAX_PARAGRAPH_CHARS:
            yield paragraph
            paragraph = _Paragraph(continued=True)
    if paragraph.lines:
        yield paragraph


def _conllu_block(span: Span, first: bool, last: bool, multiwords: MultiwordLexicon) -> str:
    """The CoNLL-U block of one tokenized sentence (``first`` of its paragraph, ``last`` of
    the text tokenized with it)."""
    lines = ["# newpar\n"] if first else []
    lines.append(f"# text = {span.text}\n")
    empty_columns = "\t".join([UNSPECIFIED] * 7)
    tokens = list(span)
    word = index = 0
    while index < len(tokens):
        size = _glued_token(tokens, index, multiwords)
        run = tokens[index : index + size]
        index += size
        joined = not run[-1].whitespace_ and not (last and index == len(tokens))
        misc = _SPACE_AFTER_NO if joined else UNSPECIFIED
        form = "".join(token.text for token in run)
        words = [token.text for token in run] if size > 1 else multiwords.words(form)
        if words is None:
            word += 1
            lines.append(f"{word}\t{form}\t{empty_columns}\t{misc}\n")
            continue
        lines.append(f"{word + 1}-{word + len(words)}\t{form}\t{empty_columns}\t{misc}\n")
        for written in words:
            word += 1
            lines.append(f"{word}\t{written}\t{empty_columns}\t{UNSPECIFIED}\n")
    lines.append("\n")
    return "".join(lines)


def _glued_token(tokens: Sequence[SpacyToken], start: int, multiwords: MultiwordLexicon) -> int:
    """How many tokens from ``start`` on make one multiword token of ``multiwords``, being
    its words and written without a space between them (English ``do`` ``n't`` under
    ``don't``); 1 when none do."""
    for size in range(MAX_GLUED_TOKENS, 1, -1):
        run = tokens[start : start + size]
        glued = len(run) == size and not any(token.whitespace_ for token in run[:-1])
        if glued and multiwords.joins([token.text for token in run]):
            return size
    return 1


def _sentences(doc: Doc, splitter: SentenceSplitter | None) -> list[Span]:
    """The sentences of one paragraph: where ``splitter`` ends them, else the sentencizer."""
    if splitter is None:
        return list(doc.sents)
    ends = splitter.ends([Token(token.text, bool(token.whitespace_)) for token in doc])
    starts = [0, *(end + 1 for end in ends[:-1])]
    return [doc[start : end + 1] for start, end in zip(starts, ends, strict=True)]


def _tokenized(
    paragraphs: Iterable[_Paragraph], lang: str, name: str, segmentation: Segmentation
) -> Iterator[Sentence]:
    nlp = blank_pipeline(lang)
    count = 0
    stream = ((p.text, p) for p in paragraphs)
    multiwords = segmentation.multiwords
    for doc, paragraph in nlp.pipe(stream, as_tuples=True, batch_size=PARAGRAPHS_PER_BATCH):
        spans = _sentences(doc, segmentation.sentences)
        for index, span in enumerate(spans):
            count += 1
            line = paragraph.line_of(span.start_char)
            first = index == 0 and not paragraph.continued
            block = _conllu_block(span, first, index == len(spans) - 1, multiwords)
            # The CoNLL-U parser builds the layout, so these sentences write like read ones.
            (sentence,) = parse_conllu_text(block, check_tree=False, name=name)
            sentence.line, sentence.sent_id = line, f"#{count}"
            yield sentence
    if count == 0:
        raise InputError("no sentences (empty input)", source=name)


def iter_raw(
    source: Source,
    *,
    lang: str = DEFAULT_LANGUAGE,
    name: str | None = None,
    segmentation: Segmentation | None = None,
) -> Iterator[Sentence]:
    """Stream the sentences of raw text (path, open file, text or lines; see the module),
    tokenized by spaCy's blank ``lang`` pipeline and refined by ``segmentation``.

    ``Sentence.line`` is the input line where the sentence starts, ``sent_id`` its ordinal
    (``#3``).  Raises :class:`InputError` without spaCy, for an unknown language
    (:class:`LanguageError`), when the input holds no sentence, and at a line that is not
    valid UTF-8."""
    blank_pipeline(lang)  # fail here, not at the first sentence
    return _read_raw(source, lang, name, segmentation or Segmentation())


def _read_raw(
    source: Source, lang: str, name: str | None, segmentation: Segmentation
) -> Iterator[Sentence]:
    with open_lines(source, name) as (source_name, lines):
        yield from _tokenized(_paragraphs(lines, source_name), lang, source_name, segmentation)


def raw_sentences(
    texts: Iterable[str],
    *,
    lang: str = DEFAULT_LANGUAGE,
    segmentation: Segmentation | None = None,
) -> Iterator[Sentence]:
    """The sentences of each text of ``texts`` in turn (see :func:`iter_raw`): a text is one
    or more paragraphs, and no sentence spans two texts.  Messages name a text
    ``<text N>``."""
    for position, text in enumerate(texts, start=1):
        if not isinstance(text, str):
            raise InputError(f"raw text must be a str, got {type(text).__name__}")
        name = f"<text {position}>"
        yield from iter_raw(text_lines(text), lang=lang, name=name, segmentation=segmentation)
