"""BiLSTM sentence encoder (Kiperwasser & Goldberg 2016 §3, with a character model).

Each word is the concatenation of a word embedding, a character-level vector (a convolution
over the characters with max pooling, so an unknown word still gets a useful vector) and
UPOS / XPOS / FEATS embeddings where the vocabularies have those columns.  A learned input
vector stands for the artificial root 0, prepended to every sentence, so the root too gets a
contextual BiLSTM vector.  Word dropout (K&G §6: a word of training count c becomes the
unknown word with probability alpha / (alpha + c)) trains the unknown-word embedding.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from neuralparse.config import ModelConfig
from neuralparse.model.inputs import ModelInput
from neuralparse.model.vocab import PAD_INDEX, UNK_INDEX, Vocabularies


class CharEncoder(nn.Module):
    """A word's characters -> one vector: embeddings, 1-D convolution, max over positions."""

    def __init__(self, n_chars: int, char_dim: int, out_dim: int, kernel: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=PAD_INDEX)
        self.conv = nn.Conv1d(char_dim, out_dim, kernel, padding=kernel // 2)

    def forward(self, chars: Tensor) -> Tensor:
        """``chars [U, C]`` -> ``[U, out_dim]``."""
        hidden = self.conv(self.embed(chars).transpose(1, 2))  # [U, out, C]
        pad = (chars == PAD_INDEX)[:, None, : hidden.shape[2]]
        # An empty row (cannot happen for real words) would be all -inf: floor it at zero.
        return hidden.masked_fill(pad, float("-inf")).amax(2).clamp(min=-1e4).tanh()


def reversal_index(lengths: Tensor, width: int) -> Tensor:
    """``[B, width]`` positions that reverse each sequence within its length and leave the
    padding in place (an involution: applying it twice restores the order)."""
    positions = torch.arange(width, device=lengths.device)[None, :]
    reversed_positions = lengths[:, None] - 1 - positions
    return torch.where(reversed_positions >= 0, reversed_positions, positions)


class BiLSTM(nn.Module):
    """A multi-layer bidirectional LSTM over right-padded batches.

    Each direction of each layer is a separate unidirectional ``nn.LSTM`` run on the padded
    tensor; the backward direction reads every sequence reversed *within its length*, so
    padding only ever follows the real words and never reaches their states.  This gives the
    same result as packed sequences while letting PyTorch use its fast padded kernels (2-3x
    faster than packed sequences on CPU, measured on 2 cores).
    """

    def __init__(self, input_dim: int, hidden: int, layers: int, dropout: float) -> None:
        super().__init__()
        self.forward_layers = nn.ModuleList()
        self.backward_layers = nn.ModuleList()
        for layer in range(layers):
            size = input_dim if layer == 0 else 2 * hidden
            self.forward_layers.append(nn.LSTM(size, hidden, batch_first=True))
            self.backward_layers.append(nn.LSTM(size, hidden, batch_first=True))
        self.dropout = nn.Dropout(dropout)

    def forward(self, inputs: Tensor, lengths: Tensor) -> Tensor:
        """``inputs [B, W, D]`` with ``lengths [B]`` -> ``[B, W, 2 * hidden]`` (padding rows
        hold unspecified values)."""
        index = reversal_index(lengths, inputs.shape[1])[:, :, None]
        hidden = inputs
        for layer, (forward, backward) in enumerate(
            zip(self.forward_layers, self.backward_layers, strict=True)
        ):
            if layer:
                hidden = self.dropout(hidden)
            ahead, _ = forward(hidden)
            flipped = hidden.gather(1, index.expand(-1, -1, hidden.shape[2]))
            behind, _ = backward(flipped)
            behind = behind.gather(1, index.expand(-1, -1, behind.shape[2]))
            hidden = torch.cat([ahead, behind], 2)
        return hidden


class Encoder(nn.Module):
    """Sentences -> ``[B, T + 1, 2 * lstm_hidden]`` BiLSTM vectors, position 0 the root."""

    def __init__(self, vocabs: Vocabularies, config: ModelConfig) -> None:
        super().__init__()
        self.word_dropout = config.word_dropout
        self.words = nn.Embedding(len(vocabs.words), config.word_dim, padding_idx=PAD_INDEX)
        self.register_buffer("word_counts", vocabs.words.count_tensor(), persistent=False)
        dim = config.word_dim
        self.chars = self.upos = self.xpos = self.feats = None
        if vocabs.chars is not None:
            self.chars = CharEncoder(
                len(vocabs.chars), config.char_dim, config.char_out, config.char_kernel
            )
            dim += config.char_out
        if vocabs.upos is not None:
            self.upos = nn.Embedding(len(vocabs.upos), config.upos_dim, padding_idx=PAD_INDEX)
            dim += config.upos_dim
        if vocabs.xpos is not None:
            self.xpos = nn.Embedding(len(vocabs.xpos), config.xpos_dim, padding_idx=PAD_INDEX)
            dim += config.xpos_dim
        if vocabs.feats is not None:
            self.feats = nn.Embedding(len(vocabs.feats), config.feats_dim, padding_idx=PAD_INDEX)
            dim += config.feats_dim
        self.input_dim = dim
        self.root = nn.Parameter(torch.randn(dim) * 0.1)
        self.dropout = nn.Dropout(config.dropout)
        self.lstm = BiLSTM(dim, config.lstm_hidden, config.lstm_layers, config.dropout)
        self.output_dim = 2 * config.lstm_hidden

    def _drop_words(self, words: Tensor) -> Tensor:
        if not self.training or self.word_dropout <= 0:
            return words
        counts = self.word_counts[words]
        keep_probability = counts / (counts + self.word_dropout)
        dropped = torch.rand_like(keep_probability) >= keep_probability
        return torch.where(dropped & (words != PAD_INDEX), UNK_INDEX, words)

    def word_vectors(self, batch: ModelInput) -> Tensor:
        """``[B, T, input_dim]`` input vectors of the words (before the BiLSTM)."""
        parts = [self.words(self._drop_words(batch.words))]
        if self.chars is not None:
            if batch.chars is None or batch.form_ids is None:
                raise ValueError("the model uses characters but the batch has none")
            parts.append(self.chars(batch.chars)[batch.form_ids])
        for embed, values, name in (
            (self.upos, batch.upos, "UPOS"),
            (self.xpos, batch.xpos, "XPOS"),
        ):
            if embed is not None:
                if values is None:
                    raise ValueError(f"the model uses {name} but the batch has none")
                parts.append(embed(values))
        if self.feats is not None:
            if batch.feats is None:
                raise ValueError("the model uses FEATS but the batch has none")
            parts.append(self.feats(batch.feats).sum(2))
        return torch.cat(parts, 2)

    def forward(self, batch: ModelInput) -> Tensor:
        vectors = self.word_vectors(batch)
        root = self.root.expand(vectors.shape[0], 1, -1)
        vectors = self.dropout(torch.cat([root, vectors], 1))
        return self.dropout(self.lstm(vectors, batch.lengths + 1))
