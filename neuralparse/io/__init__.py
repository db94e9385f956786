"""CoNLL-U and plain-text input/output (see :mod:`neuralparse.io.conllu` for the format rules)."""

from neuralparse.io.conllu import (
    ReadReport,
    SkippedSentence,
    SkippedSentencesWarning,
    iter_conllu,
    parse_conllu_text,
    read_conllu,
    write_conllu,
)
from neuralparse.io.interop import from_pyconll, to_pyconll
from neuralparse.io.sentence import Sentence
from neuralparse.io.text import detect_format, iter_text, read_text

__all__ = [
    "ReadReport",
    "Sentence",
    "SkippedSentence",
    "SkippedSentencesWarning",
    "detect_format",
    "from_pyconll",
    "iter_conllu",
    "iter_text",
    "parse_conllu_text",
    "read_conllu",
    "read_text",
    "to_pyconll",
    "write_conllu",
]
