"""BiLSTM sentence encoder with tagging heads (Kiperwasser & Goldberg 2016 §3, with a
character model; the tagger shares the encoder as in Zhang & Weiss 2016's stack-propagation).

Each word is the concatenation of a word embedding and a character-level vector, so that an
unknown word still gets a useful vector: the end states of a character BiLSTM
(``char_model=bilstm``, the default preset's) or a convolution with max pooling (``cnn``); a
model that reads gold tags (``tag_input=gold``) adds UPOS / XPOS / FEATS
embeddings of the input's columns.  A learned input vector stands for the artificial root 0,
prepended to every sentence, so the root too gets a contextual BiLSTM vector.  Word dropout
(K&G §6: a word of training count c becomes the unknown word with probability
alpha / (alpha + c)) trains the unknown-word embedding.

With a contextual encoder (``model.contextual``, :mod:`neuralparse.model.contextual`) each
word's frozen Transformer feature, projected to ``word_dim``, joins its parts as well.

With pretrained word vectors (``model.pretrained_vectors``) each word also looks up a second
table, initialised from the vectors and fixed unless ``pretrained_finetune``; a linear
projection to ``word_dim`` of its row joins the word's other parts (Stanza's parser does the
same; Kiperwasser & Goldberg's implementation also keeps its external embeddings in a table of
their own).  A separate table rather than the trained embedding initialised from the vectors:
the vectors cover words that training never sees, whose rows would stay behind while those of
the training words move, and the projection lets the vectors have any dimension.  As in
Kiperwasser & Goldberg's implementation, a word that word dropout makes unknown also loses its
pretrained vector half of the time, so that training sees both words unknown to training but
known to the vectors and words unknown to both.

A tagging model splits the BiLSTM at ``tagger_layer``: linear heads on the lower layers'
vectors predict UPOS, XPOS and the whole FEATS string of every word (its weights optionally
shared through the string's ``Attribute=Value`` pairs, :class:`FeatsPairsHead`), and the
upper layers (which the transition scorer reads) see either the lower vectors alone
(``none``), or also each head's tag distribution times a tag embedding matrix (``soft``), or
the embedding of each head's best tag (``predicted``; in training the gold tag with
probability ``gold_tag_rate``).
The parser's loss reaches the taggers' layers through the shared vectors in every variant,
and through the tag distributions with ``soft``.  No variant reads the input's tags at
prediction time.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from neuralparse.config import ModelConfig
from neuralparse.model.dropout import Dropout
from neuralparse.model.inputs import ModelInput
from neuralparse.model.vocab import PAD_INDEX, UNK_INDEX, Vocabularies, Vocabulary, split_feats

NOT_A_TAG = 2
"""Tag classes 0 and 1 are padding and the unknown tag: a head never predicts them."""
LENGTH_GROUPS = 4
"""How many groups of similar length the LSTMs split a batch into on the CPU
(:func:`in_length_groups`).  Character BiLSTM, English-EWT test, 1 thread: 4 groups 2.7 times
faster than one, 6 or 8 no faster than 4.  Sentence BiLSTMs, the same file in prediction's
batches, 2 threads: 4 groups cut the padded positions from 40,503 to 30,131 (27,171 words and
roots) and the encoder's time by about a sixth; 8 groups (28,528) were no faster."""


def in_length_groups(
    run: Callable[[Tensor, Tensor], Tensor], inputs: Tensor, lengths: Tensor
) -> Tensor:
    """``run(inputs, lengths)`` computed in :data:`LENGTH_GROUPS` groups of rows of similar
    length, each cut to its longest row, and put back in the rows' order; a result with a
    position axis is padded back to ``inputs``' width with zeros.  ``inputs`` has at least one
    row.

    ``run`` must give each row a result that does not depend on the padding after it (an LSTM
    reading left to right, or reading each row reversed within its length), so this only
    saves the work on padding: the results are the same.  For the CPU, where the work grows
    with the padded size; the groups' widths are read on the host."""
    sorted_lengths, by_length = lengths.sort(stable=True)
    groups = [group for group in by_length.tensor_split(LENGTH_GROUPS) if len(group)]
    ends = torch.tensor([len(group) for group in groups]).cumsum(0) - 1
    widths = sorted_lengths[ends].tolist()
    pieces = [
        run(inputs[group, :width], lengths[group])
        for group, width in zip(groups, widths, strict=True)
    ]
    if pieces[0].dim() > 2:
        pieces = [F.pad(piece, (0, 0, 0, inputs.shape[1] - piece.shape[1])) for piece in pieces]
    return torch.cat(pieces)[by_length.argsort()]


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


class CharBiLSTM(nn.Module):
    """A word's characters -> one vector: the last states of a forward and a backward LSTM
    over the character embeddings (they see the word's ends, where prefixes and suffixes
    carry its morphology; Ballesteros et al. 2015)."""

    def __init__(self, n_chars: int, char_dim: int, out_dim: int) -> None:
        super().__init__()
        if out_dim % 2:
            raise ValueError(f"a character BiLSTM needs an even output size, got {out_dim}")
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=PAD_INDEX)
        self.forward_lstm = nn.LSTM(char_dim, out_dim // 2, batch_first=True)
        self.backward_lstm = nn.LSTM(char_dim, out_dim // 2, batch_first=True)

    def forward(self, chars: Tensor) -> Tensor:
        """``chars [U, C]`` -> ``[U, out_dim]``.

        On the CPU the forms run in groups of similar length (:func:`in_length_groups`): most
        words are far shorter than the table's width (``max_word_chars``).  On a GPU they run
        at once: its rows run in parallel, so the cost is the number of time steps, which
        groups would add up, and cutting them would make the host read the lengths and wait
        for the device."""
        lengths = (chars != PAD_INDEX).sum(1).clamp(min=1)
        if chars.device.type != "cpu":
            return self._end_states(chars, lengths)
        if not len(chars):
            return chars.new_zeros((0, 2 * self.forward_lstm.hidden_size), dtype=torch.float)
        return in_length_groups(self._end_states, chars, lengths)

    def _end_states(self, chars: Tensor, lengths: Tensor) -> Tensor:
        """The last states of both LSTMs for forms ``chars [U, C]`` of ``lengths [U]``."""
        embedded = self.embed(chars)
        index = reversal_index(lengths, chars.shape[1])[:, :, None]
        last = (lengths - 1)[:, None, None]
        ahead, _ = self.forward_lstm(embedded)
        behind, _ = self.backward_lstm(embedded.gather(1, index.expand_as(embedded)))
        ends = [h.gather(1, last.expand(-1, 1, h.shape[2]))[:, 0] for h in (ahead, behind)]
        return torch.cat(ends, 1)


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
        self.dropout = Dropout(dropout)

    def forward(self, inputs: Tensor, lengths: Tensor) -> Tensor:
        """``inputs [B, W, D]`` with ``lengths [B]`` -> ``[B, W, 2 * hidden]`` (padding rows
        hold unspecified values).

        Without gradients on the CPU (prediction, dev evaluation) the sentences run in groups
        of similar length (:func:`in_length_groups`): even a batch of sentences sorted by
        length pads a lot, its longest sentence often twice its shortest.  In training they
        run at once: its batches pad little (about 9% on English-EWT) and the groups' backward
        cost more than they saved (0.13-0.17 against 0.10-0.11 s per step, English-EWT, 2
        threads).  On a GPU at once, as in :class:`CharBiLSTM`."""
        if inputs.device.type != "cpu" or torch.is_grad_enabled():
            return self._layers(inputs, lengths)
        return in_length_groups(self._layers, inputs, lengths)

    def _layers(self, inputs: Tensor, lengths: Tensor) -> Tensor:
        """The layers over ``inputs [B, W, D]`` of ``lengths [B]``."""
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
    """Sentences -> ``[B, T + 1, 2 * lstm_hidden]`` BiLSTM vectors, position 0 the root, and
    the tagging heads' scores (see the module docstring)."""

    def __init__(self, vocabs: Vocabularies, config: ModelConfig) -> None:
        super().__init__()
        self.word_dropout = config.word_dropout
        self.tag_input = config.tag_input
        self.gold_tag_rate = config.gold_tag_rate
        self.words = nn.Embedding(len(vocabs.words), config.word_dim, padding_idx=PAD_INDEX)
        self.register_buffer("word_counts", vocabs.words.count_tensor(), persistent=False)
        dim = config.word_dim
        self.chars = self.upos = self.xpos = self.feats = None
        self.pretrained = self.pretrained_projection = None
        if vocabs.pretrained is not None:
            table = vocabs.pretrained
            # A checkpoint's vocabulary has no vectors: its state_dict fills the table.
            rows = (
                table.vectors if table.vectors is not None else torch.zeros(len(table), table.dim)
            )
            self.pretrained = nn.Embedding.from_pretrained(
                rows.clone(), freeze=not config.pretrained_finetune, padding_idx=PAD_INDEX
            )
            self.pretrained_projection = nn.Linear(table.dim, config.word_dim)
            dim += config.word_dim
        self.contextual_projection: nn.Linear | None = None
        if vocabs.contextual is not None:
            self.contextual_projection = nn.Linear(vocabs.contextual.dim, config.word_dim)
            dim += config.word_dim
        if vocabs.chars is not None:
            self.chars = (
                CharBiLSTM(len(vocabs.chars), config.char_dim, config.char_out)
                if config.char_model == "bilstm"
                else CharEncoder(
                    len(vocabs.chars), config.char_dim, config.char_out, config.char_kernel
                )
            )
            dim += config.char_out
        tag_dims = {"upos": config.upos_dim, "xpos": config.xpos_dim, "feats": config.feats_dim}
        if config.reads_gold_tags:
            if vocabs.upos is not None:
                self.upos = nn.Embedding(len(vocabs.upos), config.upos_dim, padding_idx=PAD_INDEX)
                dim += config.upos_dim
            if vocabs.xpos is not None:
                self.xpos = nn.Embedding(len(vocabs.xpos), config.xpos_dim, padding_idx=PAD_INDEX)
                dim += config.xpos_dim
            if vocabs.feats is not None:
                self.feats = nn.Embedding(
                    len(vocabs.feats), config.feats_dim, padding_idx=PAD_INDEX
                )
                dim += config.feats_dim
        self.input_dim = dim
        self.root = nn.Parameter(torch.randn(dim) * 0.1)
        self.dropout = Dropout(config.dropout)
        classes = vocabs.tag_classes(config.tagged_columns())
        hidden = 2 * config.lstm_hidden
        # Without tagging heads the BiLSTM is one stack (the layout of checkpoints written
        # before the heads existed); with them, ``lstm`` is the part below the heads.
        lower_layers = config.tagger_layer if classes else config.lstm_layers
        self.lstm = BiLSTM(dim, config.lstm_hidden, lower_layers, config.dropout)
        pairs = config.feats_head == "pairs"
        self.taggers = nn.ModuleDict(
            {
                name: FeatsPairsHead(hidden, vocab)
                if name == "feats" and pairs
                else nn.Linear(hidden, len(vocab))
                for name, vocab in classes.items()
            }
        )
        self.tag_embeddings = nn.ModuleDict()
        if self.tag_input in ("soft", "predicted"):
            self.tag_embeddings = nn.ModuleDict(
                {name: nn.Embedding(len(v), tag_dims[name]) for name, v in classes.items()}
            )
        upper_input = hidden + sum(e.embedding_dim for e in self.tag_embeddings.values())
        upper_layers = config.lstm_layers - lower_layers
        self.upper_lstm = (
            BiLSTM(upper_input, config.lstm_hidden, upper_layers, config.dropout)
            if upper_layers
            else None
        )
        self.output_dim = hidden

    @property
    def tagged_columns(self) -> tuple[str, ...]:
        """The columns the tagging heads predict (none for a gold-tag model)."""
        return tuple(self.taggers)

    def _dropped_words(self, words: Tensor) -> Tensor | None:
        """``[B, T]`` which words word dropout makes unknown (None outside training)."""
        if not self.training or self.word_dropout <= 0:
            return None
        counts = self.word_counts[words]
        keep_probability = counts / (counts + self.word_dropout)
        dropped = torch.rand_like(keep_probability) >= keep_probability
        return dropped & (words != PAD_INDEX)

    def _pretrained_vectors(self, batch: ModelInput, dropped: Tensor | None) -> Tensor:
        """``[B, T, word_dim]`` projected pretrained vectors of the words."""
        assert self.pretrained is not None and self.pretrained_projection is not None
        if batch.pretrained is None:
            raise ValueError("the model uses pretrained vectors but the batch has none")
        entries = batch.pretrained
        if dropped is not None:
            lost = dropped & (torch.rand(dropped.shape, device=dropped.device) < 0.5)
            entries = torch.where(lost, UNK_INDEX, entries)
        return self.pretrained_projection(self.pretrained(entries))

    def word_vectors(self, batch: ModelInput) -> Tensor:
        """``[B, T, input_dim]`` input vectors of the words (before the BiLSTM)."""
        dropped = self._dropped_words(batch.words)
        words = batch.words if dropped is None else torch.where(dropped, UNK_INDEX, batch.words)
        parts = [self.words(words)]
        if self.pretrained is not None:
            parts.append(self._pretrained_vectors(batch, dropped))
        if self.contextual_projection is not None:
            if batch.contextual is None:
                raise ValueError("the model reads contextual features but the batch has none")
            parts.append(self.contextual_projection(batch.contextual.float()))
        if self.chars is not None:
            if batch.form_ids is None or (batch.chars is None and batch.char_vectors is None):
                raise ValueError("the model uses characters but the batch has none")
            vectors = self.chars(batch.chars) if batch.char_vectors is None else batch.char_vectors
            # A lookup, not indexing: indexing's backward sums a form's gradients over its
            # words in an order that varies between runs on more than one CPU thread, which
            # made two-thread training irreproducible; the embedding's backward does not.
            parts.append(F.embedding(batch.form_ids, vectors))
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

    def _tag_vectors(self, name: str, scores: Tensor, batch: ModelInput) -> Tensor:
        """``[B, T + 1, tag_dim]``: what the upper layers read of head ``name``'s scores."""
        embedding = self.tag_embeddings[name]
        if self.tag_input == "soft":
            return scores.softmax(2) @ embedding.weight
        best = best_tags(scores)
        gold = gold_tags(batch, name)
        if self.training and self.gold_tag_rate > 0 and gold is not None:
            use_gold = torch.rand(gold.shape, device=gold.device) < self.gold_tag_rate
            best = torch.where(use_gold & (gold >= NOT_A_TAG), gold, best)
        return embedding(best)

    def _tag_scores(self, shared: Tensor) -> dict[str, Tensor]:
        """``{column: [B, T + 1, classes]}`` the heads' float32 scores of ``shared`` vectors.

        Float32 even where prediction encodes in bfloat16 (``torch.autocast``, which makes
        ``shared`` bfloat16): scores rounded to bfloat16's 8-bit mantissa would tie between
        close tags."""
        full = shared.dtype == torch.float32
        with nullcontext() if full else torch.autocast(shared.device.type, enabled=False):
            shared = shared.float()
            return {name: head(shared) for name, head in self.taggers.items()}

    def forward(self, batch: ModelInput) -> tuple[Tensor, dict[str, Tensor]]:
        """``(vectors [B, T + 1, output_dim], {column: tag scores [B, T + 1, classes]})``;
        row 0 of the tag scores belongs to the root and means nothing."""
        vectors = self.word_vectors(batch)
        root = self.root.expand(vectors.shape[0], 1, -1)
        vectors = self.dropout(torch.cat([root, vectors], 1))
        lengths = batch.lengths + 1
        hidden = self.lstm(vectors, lengths)
        tag_scores: dict[str, Tensor] = {}
        if self.taggers:
            shared = self.dropout(hidden)
            tag_scores = self._tag_scores(shared)
            if self.upper_lstm is not None:
                upper = [shared] + [
                    self._tag_vectors(name, tag_scores[name], batch) for name in self.tag_embeddings
                ]
                hidden = self.upper_lstm(torch.cat(upper, 2), lengths)
        return self.dropout(hidden), tag_scores


class FeatsPairsHead(nn.Module):
    """Scores of the FEATS strings seen in training (``model.feats_head=pairs``): a string's
    weight vector is its own plus the sum of the vectors of its ``Attribute=Value`` pairs.

    Morphologically rich treebanks have many FEATS strings, most of them rare
    (Hungarian-Szeged's 910 training sentences: 384 strings, 221 of them seen fewer than five
    times, built from 70 pairs); a pair such as ``Case=Ine`` occurs in many of them, so its
    vector learns from all their words.  The strings stay the classes (what the
    head predicts is a string seen in training, never an impossible combination), so the
    head plugs in wherever the one-vector-per-string head does."""

    def __init__(self, input_dim: int, classes: Vocabulary) -> None:
        super().__init__()
        strings = classes.symbols[NOT_A_TAG:]
        pairs = sorted({pair for string in strings for pair in split_feats(string)})
        column = {pair: j for j, pair in enumerate(pairs)}
        membership = torch.zeros(len(classes), len(pairs))
        for i, string in enumerate(strings, NOT_A_TAG):
            membership[i, [column[pair] for pair in split_feats(string)]] = 1.0
        # Derived from the vocabulary, which the checkpoint holds: not saved with the weights.
        self.register_buffer("membership", membership, persistent=False)
        self.strings = nn.Linear(input_dim, len(classes))
        self.pairs = nn.Linear(input_dim, len(pairs), bias=False)

    def forward(self, vectors: Tensor) -> Tensor:
        """``[..., input_dim]`` -> ``[..., classes]`` scores."""
        return self.strings(vectors) + self.pairs(vectors) @ self.membership.T


def best_tags(scores: Tensor) -> Tensor:
    """``[..., classes]`` tag scores -> the best real tag's index (never padding/unknown)."""
    return scores[..., NOT_A_TAG:].argmax(-1) + NOT_A_TAG


def gold_tags(batch: ModelInput, name: str) -> Tensor | None:
    """``[B, T + 1]`` gold class indices of column ``name`` with a padding root in front
    (aligned with the encoder's positions), or None when the batch lacks the column."""
    values = {"upos": batch.upos, "xpos": batch.xpos, "feats": batch.feats_classes}[name]
    if values is None:
        return None
    return torch.nn.functional.pad(values, (1, 0), value=PAD_INDEX)
