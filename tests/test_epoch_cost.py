"""Smoke test of ``python -m benchmarks.epoch_cost`` with tiny settings (no timing
assertions): it trains, reads the trainer's per-epoch timings, adds the arc-eager baseline and
writes valid JSON."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import epoch_cost
from tests.parser_fixtures import make_corpus, write_corpus


def test_epoch_cost_reports_train_and_dev_seconds_per_system(tmp_path: Path, capsys) -> None:
    treebank = tmp_path / "UD_Tiny-Test"
    treebank.mkdir()
    write_corpus(treebank / "train.conllu", make_corpus(12, seed=1, max_words=8, projective=False))
    write_corpus(treebank / "dev.conllu", make_corpus(6, seed=2, max_words=8, projective=False))
    out = tmp_path / "cost.json"
    argv = ["--treebank", "UD_Tiny-Test", "--data-root", str(tmp_path), "--systems", "three_step"]
    argv += ["--epochs", "2", "--model", "small", "--out", str(out)]
    assert epoch_cost.main(argv) == 0
    result = json.loads(out.read_text())
    assert list(result["systems"]) == ["arc_eager", "three_step"]  # the baseline comes first
    for name, cost in result["systems"].items():
        assert len(cost["train_seconds"]) == len(cost["eval_seconds"]) == 2
        assert cost["dev_sentences"] == 6
        # Means over the epochs after the first.
        assert cost["eval_mean"] == cost["eval_seconds"][1]
        assert cost["epoch_mean"] == cost["train_seconds"][1] + cost["eval_seconds"][1]
        if name == "arc_eager":
            assert cost["epoch_ratio_to_arc_eager"] == 1.0
    table = capsys.readouterr().out
    assert "dev/AE" in table and "three_step" in table
