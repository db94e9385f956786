"""Smoke test of ``python -m benchmarks.epoch_cost`` with tiny settings (no timing
assertions): it trains, reads the trainer's per-epoch timings, adds the arc-eager baseline and
writes valid JSON."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import epoch_cost
from tests.parser_fixtures import make_corpus, write_corpus


def tiny_treebank(root: Path, projective: bool = True) -> None:
    """``root/UD_Tiny-Test``: 12 training and 6 dev sentences of at most 8 words."""
    treebank = root / "UD_Tiny-Test"
    treebank.mkdir()
    for split, count, seed in (("train", 12, 1), ("dev", 6, 2)):
        sentences = make_corpus(count, seed=seed, max_words=8, projective=projective)
        write_corpus(treebank / f"{split}.conllu", sentences)


def test_epoch_cost_reports_train_and_dev_seconds_per_system(tmp_path: Path, capsys) -> None:
    tiny_treebank(tmp_path, projective=False)
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


def test_epoch_cost_trains_with_the_batch_size_asked_for(tmp_path: Path) -> None:
    tiny_treebank(tmp_path)
    argv = ["--treebank", "UD_Tiny-Test", "--data-root", str(tmp_path), "--systems", "arc_eager"]
    argv += ["--epochs", "1", "--model", "small"]
    updates = {}
    for batch in (8, 1000):
        out = tmp_path / f"cost{batch}.json"
        assert epoch_cost.main([*argv, "--batch-tokens", str(batch), "--out", str(out)]) == 0
        result = json.loads(out.read_text())
        assert result["batch_tokens"] == batch
        (updates[batch],) = result["systems"]["arc_eager"]["updates"]
    assert updates[1000] == 1 < updates[8]  # 12 sentences of at most 8 words


def test_epoch_cost_adds_dynamic_oracle_rows(tmp_path: Path) -> None:
    tiny_treebank(tmp_path)
    out = tmp_path / "cost.json"
    argv = ["--treebank", "UD_Tiny-Test", "--data-root", str(tmp_path), "--systems", "swap"]
    argv += ["--epochs", "2", "--model", "small", "--dynamic-oracle", "--out", str(out)]
    assert epoch_cost.main(argv) == 0
    systems = json.loads(out.read_text())["systems"]
    # Swap has no dynamic oracle: only arc-eager gets a second row.
    assert list(systems) == ["arc_eager", "swap", "arc_eager+dynamic"]
    assert len(systems["arc_eager+dynamic"]["train_seconds"]) == 2


def test_rounds_report_the_median_of_each_rounds_own_ratio() -> None:
    def cost(system: str, train: float, dev: float) -> epoch_cost.SystemCost:
        return epoch_cost.SystemCost(system, 0.0, [train], [dev], 5, [0.0], [1])

    # The machine slows down between rounds: each ratio is taken within its round.
    rounds = [
        [cost("arc_eager", 1.0, 1.0), cost("three_step", 1.0, 2.0)],  # epoch ratio 1.5
        [cost("arc_eager", 3.0, 3.0), cost("three_step", 3.0, 9.0)],  # 2.0
        [cost("arc_eager", 2.0, 2.0), cost("three_step", 2.0, 2.0)],  # 1.0
    ]
    summary = epoch_cost.summarise(rounds)
    three_step = summary["three_step"]
    assert three_step["epoch_ratio_to_arc_eager"] == 1.5
    assert three_step["eval_ratio_to_arc_eager"] == 2.0
    assert three_step["epoch_mean"] == 4.0  # median of 3, 12, 4
    assert [r["epoch_ratio_to_arc_eager"] for r in three_step["rounds"]] == [1.5, 2.0, 1.0]
    assert three_step["train_seconds"] == [1.0]  # the first round's epochs
    assert summary["arc_eager"]["epoch_ratio_to_arc_eager"] == 1.0
    assert "1.50 2.00 1.00" in epoch_cost.format_medians(rounds)
