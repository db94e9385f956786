"""The spaCy pipeline component ``neuralparse``: our parser and tagger inside any spaCy pipeline.

>>> import spacy  # doctest: +SKIP
>>> nlp = spacy.blank("en")  # doctest: +SKIP
>>> nlp.add_pipe("sentencizer")  # doctest: +SKIP
>>> nlp.add_pipe("neuralparse", config={"model": "outputs/run/checkpoint.pt"})  # doctest: +SKIP
>>> doc = nlp("The cat sat on the mat. It slept.")  # doctest: +SKIP
>>> [(t.text, t.dep_, t.head.i, t.pos_, t.tag_, str(t.morph)) for t in doc]  # doctest: +SKIP

The component sets ``token.head`` and ``token.dep_`` (the UD relations of the checkpoint, the
root's relation ``root`` and its head itself, as spaCy wants), and, for the columns the model
tags, ``token.pos_`` (UPOS), ``token.tag_`` (XPOS) and ``token.morph`` (FEATS).  It parses the
doc's sentences when something before it set them (a ``sentencizer``, ``senter`` or parser),
else the whole doc as one sentence; afterwards ``doc.sents`` are the subtrees of the roots, the
same sentences, and ``displacy.render(doc, style="dep")`` draws the parse.  Whitespace tokens
(``"\\n"``, double spaces) are not words: they are left out of the parse and attached to the
word before them (the first word after them at the start of a sentence) with ``dep``, tagged
``SPACE``.  ``nlp.pipe`` parses every batch of docs in one call of the batched parser
(:meth:`neuralparse.Parser.parse`), never one sentence at a time.

The factory's config: ``model`` (the path of ``checkpoint.pt``, required; a saved pipeline
stores the path, not the weights), ``device`` (``cpu``, ``cuda``, ``auto``) and ``options``
(:class:`~neuralparse.prediction.PredictOptions` fields, e.g. ``{"search": "beam"}``).
spaCy finds the factory through the ``spacy_factories`` entry point of the package, so no
``import neuralparse`` is needed first.  Since spaCy imports that entry point whenever it builds
any pipeline, this module imports nothing but spaCy until a component is made.
"""

import itertools
import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.tokens import Doc, Span, Token

if TYPE_CHECKING:
    from neuralparse.io import Sentence

log = logging.getLogger(__name__)

UNSPECIFIED = "_"
SPACE_DEP = "dep"
"""The relation of a whitespace token to the word it is attached to (UD's unspecified one)."""
SPACE_POS = "SPACE"


@Language.factory(
    "neuralparse",
    default_config={"device": "cpu", "options": {}},
    assigns=["token.head", "token.dep", "token.pos", "token.tag", "token.morph", "doc.sents"],
)
def make_component(
    nlp: Language, name: str, model: str, device: str, options: dict[str, Any]
) -> "NeuralParseComponent":
    """The ``neuralparse`` component of ``nlp`` (see the module docstring)."""
    return NeuralParseComponent(model, device=device, **options)


class NeuralParseComponent:
    """Parses and tags spaCy docs with a trained neuralparse checkpoint."""

    def __init__(self, model: str, *, device: str = "cpu", **options: Any) -> None:
        from neuralparse.api import Parser  # torch and the model: only when a component is made

        self.parser = Parser.load(model, device=device, **options)
        self.columns = frozenset(self.parser.model.tagged_columns)
        self._warned = False

    def __call__(self, doc: Doc) -> Doc:
        self.annotate([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """The docs of ``stream``, each batch of ``batch_size`` docs parsed together."""
        docs = iter(stream)
        while batch := list(itertools.islice(docs, batch_size)):
            self.annotate(batch)
            yield from batch

    def annotate(self, docs: list[Doc]) -> None:
        """Parse and tag ``docs`` in place with one call of the parser."""
        spans = [span for doc in docs if len(doc) for span in self._sentences(doc)]
        words = [[token for token in span if not token.is_space] for span in spans]
        parsed = iter(self.parser.parse([[t.text for t in ws] for ws in words if ws]))
        heads = {id(doc): numpy.zeros(len(doc), dtype="int64") for doc in docs}
        deps = {id(doc): numpy.zeros(len(doc), dtype="uint64") for doc in docs}
        for span, span_words in zip(spans, words, strict=True):
            doc = span.doc
            strings = doc.vocab.strings
            relative, labels = heads[id(doc)], deps[id(doc)]
            if span_words:
                sentence = next(parsed)
                assert sentence.heads is not None  # the parser always gives a tree
                for index, token in enumerate(span_words):
                    head = sentence.heads[index]
                    relative[token.i] = (span_words[head - 1].i - token.i) if head else 0
                    labels[token.i] = strings.add(sentence.deprels[index])
                    self._set_tags(token, sentence, index)
            self._attach_spaces(span, span_words, relative, labels)
        for doc in docs:
            if len(doc):
                array = numpy.stack([heads[id(doc)].astype("uint64"), deps[id(doc)]], axis=1)
                doc.from_array([HEAD, DEP], array)

    def _sentences(self, doc: Doc) -> list[Span]:
        """The doc's sentences, or the whole doc when nothing set sentence boundaries."""
        if doc.has_annotation("SENT_START"):
            return list(doc.sents)
        if not self._warned:
            self._warned = True
            log.warning(
                "neuralparse: a doc without sentence boundaries is parsed as one sentence; "
                'add nlp.add_pipe("sentencizer") before neuralparse to split it'
            )
        return [doc[:]]

    def _set_tags(self, token: Token, sentence: "Sentence", index: int) -> None:
        """Copy the predicted UPOS / XPOS / FEATS of word ``index`` of ``sentence`` to
        ``token`` (only the columns the model tags; ``_`` is no tag, or no features)."""
        if "upos" in self.columns and sentence.upos[index] != UNSPECIFIED:
            token.pos_ = sentence.upos[index]
        if "xpos" in self.columns and sentence.xpos[index] != UNSPECIFIED:
            token.tag_ = sentence.xpos[index]
        if "feats" in self.columns:
            feats = sentence.feats[index]
            token.set_morph(None if feats == UNSPECIFIED else feats)

    def _attach_spaces(
        self,
        span: Span,
        span_words: list[Token],
        relative: numpy.ndarray,
        labels: numpy.ndarray,
    ) -> None:
        """Attach the whitespace tokens of ``span`` (see the module docstring); a span of
        whitespace alone hangs from its first token."""
        dep = span.doc.vocab.strings.add(SPACE_DEP)
        previous = span_words[0] if span_words else span[0]
        for token in span:
            if not token.is_space:
                previous = token
                continue
            relative[token.i] = previous.i - token.i
            labels[token.i] = dep
            if "upos" in self.columns:
                token.pos_ = SPACE_POS
