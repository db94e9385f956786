"""The parser network: vocabularies, BiLSTM encoder and MLP action scorer."""

from neuralparse.model.encoder import CharEncoder, Encoder
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.parser import ParserModel
from neuralparse.model.scorer import Scorer, TokenTable, mask_illegal
from neuralparse.model.vocab import (
    PAD_INDEX,
    UNK_INDEX,
    Vocabularies,
    Vocabulary,
    build_vocabularies,
    normalize_form,
)

__all__ = [
    "PAD_INDEX",
    "UNK_INDEX",
    "CharEncoder",
    "EncodedCorpus",
    "Encoder",
    "ModelInput",
    "ParserModel",
    "Scorer",
    "TokenTable",
    "Vocabularies",
    "Vocabulary",
    "build_vocabularies",
    "mask_illegal",
    "normalize_form",
]
