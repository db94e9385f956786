"""Sentences as index tensors, encoded once per corpus and batched without Python loops.

:class:`EncodedCorpus` stores every token of a corpus in flat tensors (one row per word,
sentences contiguous) plus a character table with one row per distinct word form.  A batch of
sentence ids becomes padded ``[B, T]`` tensors by pure indexing (:meth:`EncodedCorpus.batch`),
so the training step never iterates over sentences in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np
import torch
from torch import Tensor

from neuralparse.evaluation.conll18 import universal_label
from neuralparse.model.contextual import ContextualEncoder
from neuralparse.model.vocab import PAD_INDEX, Vocabularies, normalize_form, split_feats


@dataclass(kw_only=True)
class WordColumns:
    """The columns of the words besides their forms that both a corpus and a batch hold, flat
    in :class:`EncodedCorpus` and padded in :class:`ModelInput` (keywords only); a column is
    ``None`` when the vocabularies do not encode it.

    ``feats`` are the ``Attribute=Value`` indices of each word (0-padded) and
    ``feats_classes`` the index of its whole FEATS string.  The tag columns hold what the
    input says (unknown where it says ``_``): the gold-tag encoder reads them, a tagging model
    only uses them as training targets.  ``pretrained`` are the words' entries in the
    pretrained vectors' vocabulary (a model with ``model.pretrained_vectors``), ``contextual``
    their float16 features from the contextual encoder (``model.contextual``; ``[N, D]`` in a
    corpus, ``[B, T, D]`` in a batch).  ``heads`` and ``relations`` are the gold tree (each
    word's head, 0 = the root, and its relation's index) for the auxiliary arc scorer's loss:
    training corpora of a model with ``model.arc_loss_weight`` have them, nothing else does.
    """

    upos: Tensor | None
    xpos: Tensor | None
    feats: Tensor | None
    feats_classes: Tensor | None = None
    pretrained: Tensor | None = None
    contextual: Tensor | None = None
    heads: Tensor | None = None
    relations: Tensor | None = None


@dataclass
class ModelInput(WordColumns):
    """A padded batch: ``[B, T]`` indices (0 = padding) and ``lengths [B]``; ``feats`` is
    ``[B, T, K]`` (see :class:`WordColumns`).

    ``chars [U, C]`` holds the characters of the ``U`` distinct forms of the batch and
    ``form_ids [B, T]`` points each word at its row (padding points anywhere; it is masked).
    A batch may instead carry its forms' character vectors, computed beforehand for a whole
    corpus (``char_vectors [U', char_out]``, :meth:`EncodedCorpus.batch`): ``form_ids`` then
    point at its rows and ``chars`` is None.
    """

    lengths: Tensor
    words: Tensor
    form_ids: Tensor | None
    chars: Tensor | None
    char_vectors: Tensor | None = None

    def to(self, device: torch.device) -> ModelInput:
        return ModelInput(
            **{k: (v.to(device) if v is not None else None) for k, v in vars(self).items()}
        )


def _distinct(values: Sequence[str]) -> tuple[Tensor, list[str]]:
    """``(index of each value among the distinct ones [N], the distinct values)``."""
    first: dict[str, int] = {}
    index = torch.tensor([first.setdefault(v, len(first)) for v in values], dtype=torch.long)
    return index, list(first)


def _pad_rows(rows: Sequence[Sequence[int]], width: int | None = None) -> Tensor:
    """``rows`` as a ``[len(rows), width]`` table padded with PAD_INDEX (longer rows cut),
    filled in one vectorised assignment (a tensor per row took 8% of greedy parsing time on
    English-EWT test)."""
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    width = int(max(lengths.max(initial=0), 1)) if width is None else width
    kept = np.minimum(lengths, width)
    table = np.full((len(rows), width), PAD_INDEX, dtype=np.int64)
    values = np.fromiter(chain.from_iterable(r[:width] for r in rows), np.int64, int(kept.sum()))
    table[np.arange(width)[None, :] < kept[:, None]] = values
    return torch.from_numpy(table)


@dataclass
class EncodedCorpus(WordColumns):
    """Flat token tensors of a whole corpus (see the module docstring): ``S`` sentences of
    ``N`` words in all, ``U`` distinct forms; the :class:`WordColumns` are ``[N]``, ``feats``
    ``[N, K]``."""

    starts: Tensor
    """``[S]``: the row of each sentence's first word."""
    lengths: Tensor
    """``[S]``: the words of each sentence."""
    words: Tensor
    """``[N]``: each word's index in the word vocabulary."""
    form_ids: Tensor | None
    """``[N]``: each word's row of ``char_table``."""
    char_table: Tensor | None
    """``[U, C]``: the characters of each distinct form, padded (or cut) to ``C``."""

    @classmethod
    def build(
        cls,
        sentences: Sequence[Any],
        vocabs: Vocabularies,
        max_word_chars: int = 24,
        contextual: ContextualEncoder | None = None,
        *,
        gold_arcs: bool = False,
    ) -> EncodedCorpus:
        """Encode ``sentences``; a model that reads contextual features
        (``vocabs.contextual``) needs their ``contextual`` encoder.  With ``gold_arcs`` (a
        training corpus) and relation vocabularies, the gold trees are kept too."""
        if (contextual is None) != (vocabs.contextual is None):
            raise ValueError(
                "the vocabularies and the contextual encoder disagree: "
                f"{vocabs.contextual} vs {contextual and contextual.spec}"
            )
        lengths = torch.tensor([len(s) for s in sentences], dtype=torch.long)
        starts = torch.cumsum(lengths, 0) - lengths
        # Forms and FEATS strings repeat: each distinct one is encoded once, then gathered.
        form_ids, forms = _distinct([f for s in sentences for f in s.forms])
        words = torch.tensor(vocabs.words.encode([normalize_form(f) for f in forms]))[form_ids]
        char_table = upos = xpos = feats = feats_classes = pretrained = None
        if vocabs.pretrained is not None:
            pretrained = torch.tensor(vocabs.pretrained.encode(forms), dtype=torch.long)[form_ids]
        if vocabs.chars is not None:
            char_table = _pad_rows([vocabs.chars.encode(list(f)) for f in forms], max_word_chars)
        if vocabs.upos is not None:
            upos = torch.tensor(vocabs.upos.encode([t for s in sentences for t in s.upos]))
        if vocabs.xpos is not None:
            xpos = torch.tensor(vocabs.xpos.encode([t for s in sentences for t in s.xpos]))
        if vocabs.feats is not None:
            feat_ids, feat_strings = _distinct([c for s in sentences for c in s.feats])
            feats = _pad_rows([vocabs.feats.encode(split_feats(c)) for c in feat_strings])[feat_ids]
        if vocabs.feats_classes is not None:
            feat_ids, feat_strings = _distinct([c for s in sentences for c in s.feats])
            feats_classes = torch.tensor(vocabs.feats_classes.encode(feat_strings))[feat_ids]
        if vocabs.chars is None:
            form_ids = None
        features = contextual.features([s.forms for s in sentences]) if contextual else None
        heads = relations = None
        if gold_arcs and vocabs.relations is not None:
            heads = torch.tensor([h for s in sentences for h in s.heads], dtype=torch.long)
            relations = torch.tensor(
                vocabs.relations.encode([universal_label(r) for s in sentences for r in s.deprels])
            )
        return cls(
            starts,
            lengths,
            words.long(),
            form_ids,
            char_table,
            upos=upos,
            xpos=xpos,
            feats=feats,
            feats_classes=feats_classes,
            pretrained=pretrained,
            contextual=features,
            heads=heads,
            relations=relations,
        )

    def __len__(self) -> int:
        return self.lengths.shape[0]

    def batch(self, ids: Tensor, char_vectors: Tensor | None = None) -> ModelInput:
        """The padded batch of sentences ``ids`` (a long tensor), by indexing only.  With
        ``char_vectors``, the character vectors of every row of ``char_table`` (prediction
        computes them once per corpus, so that a form recurring in many batches is encoded
        once), the batch carries them instead of its forms' characters."""
        lengths = self.lengths[ids]
        width = int(lengths.max().item()) if len(ids) else 0
        offsets = torch.arange(width)
        inside = offsets[None, :] < lengths[:, None]
        flat = torch.where(inside, self.starts[ids][:, None] + offsets[None, :], 0)

        def take(values: Tensor | None) -> Tensor | None:
            if values is None:
                return None
            gathered = values[flat]
            mask = inside if gathered.dim() == 2 else inside[..., None]
            return torch.where(mask, gathered, PAD_INDEX)

        form_ids = chars = None
        if self.form_ids is not None and char_vectors is not None:
            form_ids = self.form_ids[flat]
        elif self.form_ids is not None and self.char_table is not None:
            distinct, inverse = torch.unique(self.form_ids[flat], return_inverse=True)
            form_ids, chars = inverse, self.char_table[distinct]
        return ModelInput(
            lengths=lengths,
            words=take(self.words),
            form_ids=form_ids,
            chars=chars,
            char_vectors=char_vectors,
            upos=take(self.upos),
            xpos=take(self.xpos),
            feats=take(self.feats),
            feats_classes=take(self.feats_classes),
            pretrained=take(self.pretrained),
            contextual=take(self.contextual),
            heads=take(self.heads),
            relations=take(self.relations),
        )
