"""Conversion between :class:`Sentence` and pyconll objects, for code that wants pyconll's
token model (features as dicts, enhanced dependencies...).

The conversion goes through CoNLL-U text, so it is exact in the direction pyconll -> here and
keeps everything pyconll keeps in the other (pyconll normalises some MISC/FEATS orderings; see
:mod:`neuralparse.io.conllu` for why it is not used for reading).
"""

from __future__ import annotations

import pyconll
import pyconll.unit.sentence

from neuralparse.io.conllu import parse_conllu_text
from neuralparse.io.sentence import Sentence


def to_pyconll(sentence: Sentence) -> pyconll.unit.sentence.Sentence:
    """The pyconll sentence of ``sentence``'s CoNLL-U block (with the current HEAD/DEPREL)."""
    (converted,) = pyconll.load_from_string(sentence.to_conllu())
    return converted


def from_pyconll(sentence: pyconll.unit.sentence.Sentence, *, check_tree: bool = True) -> Sentence:
    """A :class:`Sentence` from a pyconll sentence (validated like any CoNLL-U input)."""
    (converted,) = parse_conllu_text(sentence.conll() + "\n\n", check_tree=check_tree)
    return converted
