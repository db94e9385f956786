"""Prediction with the encoder in bfloat16 (``precision=bfloat16``): it takes effect, keeps the
output's bytes but for the predicted columns, leaves the model as it was, and refuses or warns
where it cannot help."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from neuralparse import Parser
from neuralparse.errors import InputError
from neuralparse.io import read_conllu
from neuralparse.prediction import PredictOptions
from neuralparse.runtime.devices import check_precision, encoding_precision
from neuralparse.trees.core import check_tree
from tests.conftest import needs_native_bfloat16
from tests.parser_fixtures import make_corpus
from tests.test_predict import predict, train_tiny_checkpoint


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_checkpoint(tmp_path_factory.mktemp("precision"), "arc_eager")


@pytest.fixture(scope="module")
def parser(checkpoint: Path) -> Parser:
    return Parser.load(checkpoint, device="cpu")


@needs_native_bfloat16
def test_the_encoder_runs_in_bfloat16_and_the_search_in_float32(parser: Parser) -> None:
    seen: dict[str, torch.dtype] = {}

    def record(name: str):
        def hook(module, inputs, output) -> None:
            seen[name] = (output[0] if isinstance(output, tuple) else output).dtype

        return hook

    encoder = parser.model.encoder
    handles = [
        encoder.lstm.forward_layers[0].register_forward_hook(record("lstm")),
        next(iter(encoder.taggers.values())).register_forward_hook(record("tagger")),
        parser.model.scorer.out.register_forward_hook(record("scorer")),
    ]
    try:
        parser.parse(["w1 w2 w3"], precision="bfloat16")
        assert seen == {"lstm": torch.bfloat16, "tagger": torch.float32, "scorer": torch.float32}
        parser.parse(["w1 w2 w3"])
        assert set(seen.values()) == {torch.float32}
    finally:
        for handle in handles:
            handle.remove()


def test_bfloat16_parses_agree_with_float32_and_leave_the_model_as_it_was(
    parser: Parser,
) -> None:
    sentences = make_corpus(40, seed=21, projective=False)
    weights = {name: value.clone() for name, value in parser.model.state_dict().items()}
    before = [s.to_conllu() for s in parser.parse(sentences)]
    for search in ({"search": "greedy"}, {"search": "beam", "beam_size": 4}):
        low = parser.parse(sentences, precision="bfloat16", **search)
        full = parser.parse(sentences, **search)
        heads = [h for s in full for h in s.heads]
        same = sum(a == b for a, b in zip([h for s in low for h in s.heads], heads, strict=True))
        assert same >= 0.9 * len(heads), (search, same, len(heads))
        for sentence, given in zip(low, sentences, strict=True):
            check_tree(sentence.heads)
            assert sentence.forms == given.forms and sentence.misc == given.misc
    after = parser.model.state_dict()
    assert all(torch.equal(weights[name], after[name]) for name in weights)
    assert [s.to_conllu() for s in parser.parse(sentences)] == before


def test_an_unknown_precision_or_an_unsupported_device_is_refused() -> None:
    with pytest.raises(InputError, match="precision=float16: expected one of float32, bfloat16"):
        PredictOptions(precision="float16")
    with pytest.raises(InputError, match="bfloat16 is for the CPU and CUDA, not mps"):
        check_precision("bfloat16", torch.device("mps"))
    with pytest.raises(InputError, match="not mps"):
        encoding_precision(torch.device("mps"), "bfloat16")
    check_precision("float32", torch.device("mps"))


def test_a_device_without_bfloat16_arithmetic_encodes_in_float32_and_says_so(
    parser: Parser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where bfloat16 would be emulated (slower than float32; a CPU's oneDNN has no bfloat16
    LSTM there at all), the encoder runs in float32, with a warning."""
    monkeypatch.setattr("neuralparse.prediction.decoding.native_bfloat16", lambda device: False)
    monkeypatch.setattr("neuralparse.runtime.devices.native_bfloat16", lambda device: False)
    with encoding_precision(torch.device("cpu"), "bfloat16"):
        assert not torch.is_autocast_enabled("cpu")
    expected = [s.to_conllu() for s in parser.parse(["w1 w2", "w3 w4 w5"])]
    with pytest.warns(RuntimeWarning, match="no bfloat16 arithmetic.*runs in float32 instead"):
        got = parser.parse(["w1 w2", "w3 w4 w5"], precision="bfloat16")
    assert [s.to_conllu() for s in got] == expected


def test_predict_py_takes_the_precision(checkpoint: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("w1 w2 w3 .\nw4 w5\n", encoding="utf-8")
    output = tmp_path / "out.conllu"
    result = predict(
        f"checkpoint={checkpoint}", f"input={source}", f"output={output}", "precision=bfloat16"
    )
    assert "bfloat16" in result.stderr.decode()
    assert [s.forms for s in read_conllu(output)] == [["w1", "w2", "w3", "."], ["w4", "w5"]]
    refused = predict(f"checkpoint={checkpoint}", f"input={source}", "precision=half", check=False)
    assert refused.returncode == 2
    assert "precision=half: expected one of float32, bfloat16" in refused.stderr.decode()
