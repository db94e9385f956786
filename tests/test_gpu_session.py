"""``python -m benchmarks.gpu_session``: the step runner's budget and dependencies on fake
steps, and a rehearsal (tiny sizes, CPU) of the steps that train and parse with a model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks import gpu_session
from tests.parser_fixtures import make_corpus, write_corpus


def python_step(name: str, code: str, minutes: float = 0.0, needs: tuple[str, ...] = ()):
    return gpu_session.Step(name, minutes, lambda ctx: [sys.executable, "-c", code], needs)


def test_steps_run_in_order_within_the_budget_and_after_what_they_need(tmp_path: Path) -> None:
    ctx = gpu_session.Context("cpu", tmp_path, rehearse=True, train_minutes=0.1)
    writes = f"import json; open({str(ctx.json('writes'))!r}, 'w').write(json.dumps({{'x': 1}}))"
    steps = [
        python_step("fails", "raise SystemExit(3)"),
        python_step("needs_failed", "pass", needs=("fails",)),
        python_step("writes", writes),
        python_step("too_long", "pass", minutes=10.0),
        python_step("needs_skipped", "pass", needs=("too_long",)),
        python_step("prints", "print('hello')"),
    ]
    log = tmp_path / "session.log"
    records = {r["step"]: r for r in gpu_session.run_session(steps, ctx, 60.0, log)}
    assert list(records) == [step.name for step in steps]
    assert records["fails"]["status"] == 3
    assert records["needs_failed"]["skipped"] == "needs fails"
    assert records["writes"]["status"] == 0 and records["writes"]["result"] == {"x": 1}
    assert records["too_long"]["skipped"].endswith("s left")
    assert records["needs_skipped"]["skipped"] == "needs too_long"
    assert "===== prints" in log.read_text() and "hello" in log.read_text()


def test_a_rehearsal_trains_and_parses_and_reports_in_two_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    treebank = tmp_path / "ud" / "UD_English-EWT"
    treebank.mkdir(parents=True)
    for split, count in (("train", 30), ("dev", 8), ("test", 12)):
        write_corpus(treebank / f"{split}.conllu", make_corpus(count, seed=len(split)))
    monkeypatch.setenv("NEURALPARSE_DATA", str(tmp_path / "ud"))
    out = tmp_path / "out"
    steps = ["train_ewt", "ewt_greedy", "ewt_recipe_4000"]
    assert gpu_session.main(["--rehearse", "--out", str(out), "--steps", *steps]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["session.json", "session.log"]
    session = json.loads((out / "session.json").read_text())
    assert session["device"] == "cpu" and session["failed"] == []
    train, parse, recipe = session["steps"]
    assert (train["step"], train["status"], parse["status"]) == ("train_ewt", 0, 0)
    assert "big_file" in parse["command"] and parse["result"]["search"] == "greedy"
    # A training recipe's result is its metrics.jsonl: epochs, why it stopped, test scores.
    assert "trainer.batch_tokens=4000" in recipe["command"]
    assert [line["epoch"] for line in recipe["result"] if "epoch" in line] == [1, 2]
    assert any("stopped" in line for line in recipe["result"])
    assert any(line.get("split") == "test" for line in recipe["result"])


def test_a_provided_model_is_not_trained_again(tmp_path: Path) -> None:
    provided = tmp_path / "given"
    (provided / "ewt").mkdir(parents=True)
    (provided / "ewt" / "checkpoint.pt").write_bytes(b"a trained model")
    ctx = gpu_session.Context("cpu", tmp_path, True, 0.1, provided)
    trains = gpu_session.Step("train_ewt", 0.0, lambda ctx: ["false"], trains="ewt")
    reads = python_step("reads", "pass", needs=("train_ewt",))
    other = gpu_session.Step("train_hu", 0.0, lambda ctx: ["true"], trains="hu")
    records = gpu_session.run_session([trains, reads, other], ctx, 60.0, tmp_path / "log")
    first, second, third = records
    assert first["skipped"] == f"provided: {provided / 'ewt' / 'checkpoint.pt'}"
    assert second["status"] == 0 and third["status"] == 0  # not provided: trained
    assert ctx.model("ewt") == provided / "ewt" / "checkpoint.pt"
    assert ctx.model("hu") == tmp_path / "models" / "hu" / "checkpoint.pt"
