"""Scratch (session 36): an auxiliary biaffine head-selection + label loss on the top BiLSTM
layer during training only (Dozat & Manning 2017 style), to test whether it improves the
transition parser's encoder.  Applied by monkeypatching; not part of the library."""

import os

import torch
import torch.nn.functional as F
from torch import nn

import neuralparse.model.inputs as inputs_mod
import neuralparse.model.parser as parser_mod
import neuralparse.training.trainer as trainer_mod
from neuralparse.training import losses as losses_mod

WEIGHT = float(os.environ.get("AUX_WEIGHT", "1.0"))
ARC_DIM = int(os.environ.get("AUX_ARC_DIM", "256"))
LABEL_DIM = 128
N_LABELS = 64  # generous upper bound; UD universal relations < 40
LABELS: dict[str, int] = {}


class ArcHead(nn.Module):
    def __init__(self, dim: int, dropout: float) -> None:
        super().__init__()
        self.dep = nn.Sequential(nn.Linear(dim, ARC_DIM), nn.ReLU(), nn.Dropout(dropout))
        self.head = nn.Sequential(nn.Linear(dim, ARC_DIM), nn.ReLU(), nn.Dropout(dropout))
        self.U = nn.Parameter(torch.zeros(ARC_DIM, ARC_DIM))
        self.u = nn.Parameter(torch.zeros(ARC_DIM))
        self.ldep = nn.Sequential(nn.Linear(dim, LABEL_DIM), nn.ReLU(), nn.Dropout(dropout))
        self.lhead = nn.Sequential(nn.Linear(dim, LABEL_DIM), nn.ReLU(), nn.Dropout(dropout))
        self.lout = nn.Linear(2 * LABEL_DIM, N_LABELS)

    def loss(self, vectors, lengths, heads, rels):
        # vectors [B, T+1, D]; heads/rels [B, T] (-1 padding)
        d = self.dep(vectors[:, 1:])  # dependents: real words
        h = self.head(vectors)  # candidate heads incl. root
        scores = d @ self.U @ h.transpose(1, 2) + (h @ self.u)[:, None, :]  # [B, T, T+1]
        T1 = vectors.shape[1]
        valid_head = torch.arange(T1, device=vectors.device)[None, :] <= lengths[:, None]
        scores = scores.masked_fill(~valid_head[:, None, :], -1e9)
        arc = F.cross_entropy(scores.flatten(0, 1), heads.flatten(), ignore_index=-1)
        safe = heads.clamp(min=0)
        lh = self.lhead(vectors)
        gathered = lh.gather(1, safe[..., None].expand(-1, -1, lh.shape[-1]))
        lscores = self.lout(torch.cat([self.ldep(vectors[:, 1:]), gathered], -1))
        lab = F.cross_entropy(lscores.flatten(0, 1), rels.flatten(), ignore_index=-1)
        return arc + lab


_init = parser_mod.ParserModel.__init__


def __init__(self, vocabs, config, *args, **kwargs):
    _init(self, vocabs, config, *args, **kwargs)
    self.aux_arcs = ArcHead(self.encoder.output_dim, self.config.dropout)


_encode_and_tag = parser_mod.ParserModel.encode_and_tag


def encode_and_tag(self, batch):
    vectors, tag_scores = self.encoder(batch)
    if self.training:
        self._aux_vectors = vectors
    return self.scorer.project(vectors), tag_scores


parser_mod.ParserModel.__init__ = __init__
parser_mod.ParserModel.encode_and_tag = encode_and_tag

_build = inputs_mod.EncodedCorpus.build.__func__


def build(cls, sentences, *args, **kwargs):
    corpus = _build(cls, sentences, *args, **kwargs)
    if sentences and all(s.heads is not None for s in sentences):
        corpus._aux_heads = torch.tensor([h for s in sentences for h in s.heads])
        corpus._aux_rels = torch.tensor(
            [LABELS.setdefault(r.split(":")[0], len(LABELS)) for s in sentences for r in s.deprels]
        )
        assert len(LABELS) <= N_LABELS
    return corpus


inputs_mod.EncodedCorpus.build = classmethod(build)

_loss = losses_mod.loss_on_batch


def loss_on_batch(model, corpus, examples, ids, device, explorer=None):
    loss, words = _loss(model, corpus, examples, ids, device, explorer)
    module = getattr(model, "module", model)
    vectors = module._aux_vectors
    lengths = corpus.lengths[ids]
    width = vectors.shape[1] - 1
    offsets = torch.arange(width)
    inside = offsets[None, :] < lengths[:, None]
    flat = torch.where(inside, corpus.starts[ids][:, None] + offsets[None, :], 0)
    heads = torch.where(inside, corpus._aux_heads[flat], -1).to(device)
    rels = torch.where(inside, corpus._aux_rels[flat], -1).to(device)
    aux = module.aux_arcs.loss(vectors, lengths.to(device), heads, rels)
    return loss + WEIGHT * aux, words


losses_mod.loss_on_batch = loss_on_batch
trainer_mod.loss_on_batch = loss_on_batch
