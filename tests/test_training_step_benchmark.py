"""Smoke test of ``python -m benchmarks.training_step`` (no timing assertions): both variants
train the same model on the same batches, and the JSON says how long each took."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from benchmarks import training_step
from neuralparse.model.dropout import Dropout
from tests.parser_fixtures import make_corpus, write_corpus


def test_training_step_times_the_library_against_torchs_dropout_and_adam(tmp_path: Path) -> None:
    treebank = tmp_path / "UD_Tiny-Test"
    treebank.mkdir()
    write_corpus(treebank / "train.conllu", make_corpus(12, seed=1, max_words=8))
    write_corpus(treebank / "dev.conllu", make_corpus(4, seed=2, max_words=8))
    out = tmp_path / "step.json"
    argv = ["--treebank", "UD_Tiny-Test", "--data-root", str(tmp_path), "--batches", "3"]
    assert training_step.main([*argv, "--repeats", "2", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["steps_per_round"] == 3 and result["system"] == "arc_eager"
    assert [len(result["cpu_seconds"][name]) for name in ("library", "torch")] == [2, 2]
    fastest = {name: min(seconds) for name, seconds in result["cpu_seconds"].items()}
    assert result["ratio_library_to_torch"] == fastest["library"] / fastest["torch"]


def test_the_torch_variant_changes_only_the_dropout_layers() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Dropout(0.5), torch.nn.Linear(4, 2))
    twin = training_step.with_torch_dropout(model)
    assert type(model[1]) is Dropout and type(twin[1]) is torch.nn.Dropout
    assert twin[1].p == 0.5
    inputs = torch.randn(3, 4)
    assert torch.equal(model.eval()(inputs), twin.eval()(inputs))
