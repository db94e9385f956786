"""Smoke tests of the benchmark scripts with tiny settings (no timing assertions): they run,
write valid JSON and PNG files, and what they count is right where it is known exactly."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from benchmarks import (
    common,
    exit_rule_cost,
    graph_fallback,
    identical_outputs,
    io_steps,
    length_scaling,
    precision,
    predict_settings,
    step_operators,
    throughput,
    transition_cost,
)
from benchmarks.common import ROOT, untrained_checkpoint
from neuralparse.io import read_conllu
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.runtime.checkpoint import LoadedParser, checkpoint_data, save_checkpoint
from neuralparse.search.beam import fixed_length_beam
from neuralparse.search.graphs import fixed_length_greedy
from neuralparse.search.greedy import greedy_decode, greedy_decode_counted
from neuralparse.systems import get_system
from neuralparse.systems.swap import Swap
from tests.parser_fixtures import make_corpus, write_corpus

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def treebank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny treebank directory: non-projective train and test sets."""
    root = tmp_path_factory.mktemp("UD_Tiny")
    write_corpus(root / "train.conllu", make_corpus(40, seed=1, max_words=9, projective=False))
    write_corpus(root / "test.conllu", make_corpus(12, seed=2, max_words=9, projective=False))
    return root


@pytest.mark.parametrize("name", ["arc_eager", "swap", "two_registers", "three_step"])
def test_timed_greedy_gives_the_greedy_parses(treebank: Path, name: str) -> None:
    train = read_conllu(treebank / "train.conllu")
    parser = common.untrained_parser(name, train, torch.device("cpu"))
    sentences = read_conllu(treebank / "test.conllu")
    batch = EncodedCorpus.build(sentences, parser.vocabs).batch(torch.arange(len(sentences)))
    timers = common.Timers(torch.device("cpu"))
    heads, labels, steps = greedy_decode_counted(parser.model, parser.system, batch, timer=timers)
    expected_heads, expected_labels = greedy_decode(parser.model, parser.system, batch)
    assert torch.equal(heads, expected_heads)
    assert torch.equal(labels, expected_labels)
    assert set(timers.seconds) == {"encoder", "scorer", "state"}
    # Stopped early: incomplete parses, no error, the steps taken so far.
    _, _, capped = greedy_decode_counted(parser.model, parser.system, batch, max_steps=3)
    assert torch.equal(capped, steps.clamp(max=3))


def test_throughput_writes_json_and_profile(treebank: Path, tmp_path: Path) -> None:
    out = tmp_path / "throughput.json"
    argv = ["--input", str(treebank / "test.conllu"), "--systems", "arc_eager", "arc_standard"]
    argv += ["--beam", "2", "--threads", "1", "--profile", "arc_eager", "--json-out", str(out)]
    assert throughput.main(argv) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    runs = result["runs"]
    assert [(r["system"], r["search"]) for r in runs] == [
        ("arc_eager", "greedy"),
        ("arc_eager", "beam"),
        ("arc_standard", "greedy"),
        ("arc_standard", "beam"),
    ]
    words = sum(len(s) for s in make_corpus(12, seed=2, max_words=9, projective=False))
    assert all(r["sentences"] == 12 and r["words"] == words for r in runs)
    assert all(r["words_per_s"] > 0 and r["peak_memory_mb"] > 0 for r in runs)
    assert set(result["beam_over_greedy_time"]) == {"arc_eager", "arc_standard"}
    parts = result["profile"]["seconds"]
    assert {"read", "input encoding", "encoder", "scorer", "state", "output", "write"} == set(parts)
    assert result["model"].startswith("untrained")
    # Arc-eager takes between n and 2n transitions for n words.
    assert 1.0 <= result["profile"]["transitions_per_word"] <= 2.0


def test_throughput_limit_parses_a_prefix(treebank: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    argv = ["--input", str(treebank / "test.conllu"), "--systems", "swap", "--beam", "0"]
    assert throughput.main([*argv, "--limit", "5", "--repeats", "2", "--json-out", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    (run,) = result["runs"]
    assert run["sentences"] == 5 and result["repeats"] == 2
    with pytest.raises(SystemExit):
        throughput.main([*argv, "--repeats", "0"])


def test_throughput_compares_graphs_with_eager_decoding(treebank: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.json"
    argv = ["--input", str(treebank / "test.conllu"), "--systems", "arc_eager", "--beam", "2"]
    assert throughput.main([*argv, "--compare-graphs", "--json-out", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert [r["search"] for r in result["runs"]] == ["greedy", "greedy-eager", "beam", "beam-eager"]
    assert all(r["parse_seconds"] > 0 and r["cold_seconds"] > 0 for r in result["runs"])
    same = {"arc_eager greedy": True, "arc_eager beam": True}
    assert result["graphs_same_output_as_eager"] == same


def _saved_untrained(name: str, treebank: Path, path: Path) -> LoadedParser:
    parser = common.untrained_parser(
        name, read_conllu(treebank / "train.conllu"), torch.device("cpu")
    )
    data = checkpoint_data(
        model=parser.model,
        system=parser.system,
        system_options={},
        vocabs=parser.vocabs,
        config={},
    )
    save_checkpoint(path, data)
    return parser


def test_exit_rule_cost_checks_the_three_ways_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Traced, not compiled to kernels (minutes): the comparisons are what is tested here.
    monkeypatch.setitem(exit_rule_cost.COMPILE_OPTIONS, "backend", "eager")
    out = tmp_path / "exit_rule_cost.json"
    argv = ["--sentences", "8", "--rows", "1", "16", "--repeats", "1", "--calls", "1"]
    assert exit_rule_cost.main([*argv, "--out", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert [row["rows"] for row in result["rows"]] == [1, 16]
    for row in result["rows"]:
        assert row["compiled_equals_tensor"] and row["tensor_equals_host_where_decided"]
        assert 0 <= row["decided"] <= row["rows"]
        assert min(row["host_ms"], row["tensor_ms"], row["compiled_ms"]) > 0


def test_graph_fallback_counts_the_abandoned_sentences(
    treebank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registers = _saved_untrained("two_registers", treebank, tmp_path / "tr.pt")
    _saved_untrained("arc_eager", treebank, tmp_path / "ae.pt")
    _saved_untrained("swap", treebank, tmp_path / "swap.pt")
    out = tmp_path / "fallback.json"
    argv = ["--input", str(treebank / "test.conllu"), "--json-out", str(out), "--checkpoint"]
    assert graph_fallback.main([*argv, str(tmp_path / "tr.pt"), str(tmp_path / "ae.pt")]) == 0
    two_registers, arc_eager = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert arc_eager["abandoned_sentences"] == 0  # graph-safe: nothing to abandon
    # The same count from one batch of the whole file (abandoning is per sentence).
    sentences = read_conllu(treebank / "test.conllu")
    encoded = EncodedCorpus.build(sentences, registers.vocabs)
    batch = encoded.batch(torch.arange(len(sentences)))
    with torch.inference_mode():
        table = registers.model.encode(batch)
        recorded = registers.system.for_graphs()
        *_, abandoned = fixed_length_greedy(registers.model, recorded, table, batch.lengths)
    assert two_registers["abandoned_sentences"] == int(abandoned.sum())
    assert two_registers["abandoned_words"] == int(batch.lengths[abandoned].sum())
    assert two_registers["sentences"] == 12 and two_registers["search"] == "greedy"
    # Beam search: the sentences whose search the variant leaves undecided.
    assert graph_fallback.main([*argv, str(tmp_path / "tr.pt"), "--beam", "3"]) == 0
    (beam,) = json.loads(out.read_text(encoding="utf-8"))["runs"]
    with torch.inference_mode():
        recorded = registers.system.for_graphs(beam=True)
        *_, undecided = fixed_length_beam(registers.model, recorded, table, batch.lengths, 3)
    assert beam["search"] == "beam 3" and beam["abandoned_sentences"] == int(undecided.sum())
    # Swap's variant abandons what its budget of swaps does not finish (an untrained scorer
    # swaps often); a system without a graph variant is refused.
    assert graph_fallback.main([*argv, str(tmp_path / "swap.pt")]) == 0
    (swap,) = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert swap["system"] == "swap" and 0 <= swap["abandoned_sentences"] <= 12
    monkeypatch.setattr(Swap, "for_graphs", lambda self, beam=False: None)
    with pytest.raises(SystemExit, match="no greedy graphs"):
        graph_fallback.main([*argv, str(tmp_path / "swap.pt")])


def test_transitions_study_counts_oracle_and_parser(treebank: Path, tmp_path: Path) -> None:
    # A checkpoint of an untrained arc-standard parser: its derivations take exactly 2n steps.
    checkpoint = tmp_path / "checkpoint.pt"
    _saved_untrained("arc_standard", treebank, checkpoint)
    argv = ["transitions", "--treebank", str(treebank), "--systems", "arc_standard", "swap"]
    argv += ["--limit", "30", "--checkpoint", str(checkpoint), "--out-dir", str(tmp_path)]
    assert length_scaling.main(argv) == 0
    assert (tmp_path / "transitions_vs_length.png").read_bytes().startswith(PNG_SIGNATURE)
    result = json.loads((tmp_path / "transitions_vs_length.json").read_text(encoding="utf-8"))
    systems = result["systems"]
    standard = systems["arc_standard"]
    assert len(standard["oracle"]["points"]) == 30
    assert all(m == 2 * n for n, m in standard["oracle"]["points"])
    assert standard["oracle"]["slope"] == pytest.approx(2.0)
    assert len(standard["parser"]["points"]) == 12
    assert all(m == 2 * n for n, m in standard["parser"]["points"])
    # Swap: 2n transitions plus one per SWAP; non-projective trees need some.
    swap = systems["swap"]["oracle"]["points"]
    assert all(m >= 2 * n for n, m in swap)
    assert any(m > 2 * n for n, m in swap)


def test_time_study_writes_json_and_png(tmp_path: Path) -> None:
    argv = ["time", "--systems", "arc_eager", "--lengths", "5", "10", "--batch", "2"]
    argv += ["--repeats", "1", "--max-steps", "20", "--out-dir", str(tmp_path)]
    assert length_scaling.main(argv) == 0
    assert (tmp_path / "time_per_transition.png").read_bytes().startswith(PNG_SIGNATURE)
    result = json.loads((tmp_path / "time_per_transition.json").read_text(encoding="utf-8"))
    series = result["seconds_per_step"]["arc_eager"]
    for kind in ("end_to_end", "state_ops"):
        assert set(series[kind]) == {"5", "10"}
        assert all(seconds > 0 for seconds in series[kind].values())
    parts = result["end_to_end_parts_per_step"]["arc_eager"]["10"]
    assert set(parts) == {"encoder", "scorer", "state"}


def test_transition_cost_counts_the_steps_of_both_searches() -> None:
    # Arc-standard takes exactly 2n transitions, whatever the scores.
    system = get_system("arc_standard", transition_cost.LABELS)
    cpu = torch.device("cpu")
    assert transition_cost.time_greedy(system, 4, 3, cpu, 1000, seed=0)[1] == 8
    assert transition_cost.time_beam(system, 4, 2, 3, cpu, 1000, seed=0)[1] == 8
    assert transition_cost.time_beam(system, 4, 2, 3, cpu, 5, seed=0)[1] == 5  # capped


def test_identical_outputs_records_then_checks(tmp_path: Path, capsys) -> None:
    root = tmp_path / "ud"
    (root / "UD_English-EWT").mkdir(parents=True)
    write_corpus(root / "UD_English-EWT" / "train.conllu", make_corpus(30, seed=1, max_words=8))
    write_corpus(root / "UD_English-EWT" / "dev.conllu", make_corpus(8, seed=2, max_words=8))
    record = tmp_path / "record.json"
    argv = ["--data-root", str(root), "--systems", "arc_eager", "swap", "--epochs", "1"]
    argv += ["--dev-sentences", "5", "--beam", "2", "--threads", "1"]
    assert identical_outputs.main([*argv, "--record", str(record)]) == 0
    recorded = json.loads(record.read_text(encoding="utf-8"))
    assert sorted(recorded["outputs"]) == [
        f"{system}/UD_English-EWT/{search}"
        for system in ("arc_eager", "swap")
        for search in ("beam", "greedy")
    ]
    assert "skipped UD_Greek-GDT" in capsys.readouterr().err  # absent treebanks are skipped
    assert identical_outputs.main([*argv, "--check", str(record)]) == 0
    assert "all 4 outputs identical" in capsys.readouterr().out
    # One output that differs from the record fails the check and is named.
    changed = recorded["outputs"]["swap/UD_English-EWT/beam"]
    changed["sha256"] = "0" * 64
    record.write_text(json.dumps(recorded), encoding="utf-8")
    assert identical_outputs.main([*argv, "--check", str(record)]) == 1
    out = capsys.readouterr().out
    assert "1 of 4 outputs differ" in out and "swap/UD_English-EWT/beam" in out
    # A subset of the systems is checked against the record's outputs of that subset only.
    subset = [*argv[:2], "--systems", "arc_eager", *argv[5:]]
    assert identical_outputs.main([*subset, "--check", str(record)]) == 0
    out = capsys.readouterr().out
    assert "all 2 outputs identical" in out and "settings differ" not in out
    assert "was made on" not in out  # the record names this machine's CPU
    # A record from another CPU (or one that does not name its CPU) is flagged as such.
    del recorded["cpu"]
    record.write_text(json.dumps(recorded), encoding="utf-8")
    assert identical_outputs.main([*subset, "--check", str(record)]) == 0
    assert "made on a CPU it does not name" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("git") is None or shutil.which("tar") is None, reason="no git")
def test_identical_outputs_against_a_commit_runs_its_library_here(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True)
    if found.returncode:
        pytest.skip(f"{ROOT} is not a git checkout")
    root = tmp_path / "ud"
    (root / "UD_English-EWT").mkdir(parents=True)
    write_corpus(root / "UD_English-EWT" / "train.conllu", make_corpus(20, seed=1, max_words=6))
    write_corpus(root / "UD_English-EWT" / "dev.conllu", make_corpus(4, seed=2, max_words=6))
    monkeypatch.chdir(tmp_path)  # a data root relative to here, not to the archive's run
    argv = ["--data-root", "ud", "--systems", "arc_standard", "--epochs", "1"]
    argv += ["--dev-sentences", "3", "--beam", "2", "--treebanks", "UD_English-EWT"]
    head = found.stdout.decode().strip()
    args = identical_outputs.parse_args([*argv, "--against", "HEAD"])
    record = identical_outputs.record_of_commit("HEAD", args, tmp_path)
    # Made from an archive of the commit (not the working tree), with the settings asked for.
    assert record["commit"] == head and "base-" in record["library"]
    assert sorted(record["outputs"]) == [
        "arc_standard/UD_English-EWT/beam", "arc_standard/UD_English-EWT/greedy"
    ]  # fmt: skip
    assert record["settings"]["dev_sentences"] == 3 and record["settings"]["beam"] == 2
    assert "from a git archive" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="not a commit"):
        identical_outputs.main([*argv, "--against", "no-such-revision"])


def test_io_steps_round_trips_a_file_byte_for_byte(treebank: Path, capsys) -> None:
    io_steps.main([str(treebank / "test.conllu")])
    out = capsys.readouterr().out
    assert "neuralparse.io: 12 sentences" in out and "byte-identical True" in out


def test_step_operators_counts_trained_parsers_parses(
    treebank: Path, tmp_path: Path, capsys
) -> None:
    checkpoints = [
        str(common.untrained_checkpoint(treebank / "train.conllu", tmp_path / f"{name}.pt", name))
        for name in ("arc_eager", "three_step")
    ]
    argv = ["--checkpoint", *checkpoints, "--input", str(treebank / "test.conllu"), "--json"]
    assert step_operators.main(argv) == 0
    rows = {row["parser"]: row for row in json.loads(capsys.readouterr().out)["parsers"]}
    # Three-step's GPU steps never skip a phase: more state operators.  Its CPU steps select
    # the output rows of the steps under way: a few more scorer operators, less arithmetic.
    assert list(rows) == ["arc_eager", "three_step", "three_step, GPU steps"]
    cpu, gpu = rows["three_step"], rows["three_step, GPU steps"]
    assert gpu["state"] > cpu["state"] and gpu["scorer"] < cpu["scorer"]
    assert gpu["encoder"] == cpu["encoder"] == rows["arc_eager"]["encoder"] > 0
    words = sum(len(s) for s in read_conllu(treebank / "test.conllu"))
    assert all(row["words"] == words and row["loop_steps"] > 0 for row in rows.values())
    parts = ("encoder", "scorer", "state", "other")
    assert rows["arc_eager"]["total"] == sum(rows["arc_eager"][p] for p in parts)


def test_step_operators_counts_each_part_of_a_greedy_step(capsys) -> None:
    # A graph-safe system runs the same operators at every step, whatever the configuration:
    # the mean over different walks is the same.
    for name in ("arc_eager", "three_step"):
        first = step_operators.step_operators(name, sentences=4, max_length=8, seed=0)
        second = step_operators.step_operators(name, sentences=6, max_length=12, seed=1)
        assert first == second and all(first[part] > 0 for part in step_operators.PARTS)
    assert step_operators.main(["--systems", "swap"]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[1].startswith("arc_eager") and "1.00" in table  # the baseline
    assert "swap" in table


def test_predict_settings_alternates_the_settings_and_compares_medians(tmp_path: Path) -> None:
    corpus = make_corpus(20, seed=3)
    source = write_corpus(tmp_path / "input.conllu", corpus)
    checkpoint = untrained_checkpoint(source, tmp_path / "untrained.pt")
    out = tmp_path / "settings.json"
    settings = ["default", "NEURALPARSE_MEMORY_TUNING=0 OMP_WAIT_POLICY=PASSIVE tags=keep"]
    assert predict_settings.main(["--settings", *settings, "--rounds", "2", "--threads", "1",
                                  "--input", str(source), "--checkpoint", str(checkpoint),
                                  "--json-out", str(out)]) == 0  # fmt: skip
    rows = json.loads(out.read_text())["rows"]
    assert [(row["busy"], row["setting"]) for row in rows] == [(0, s) for s in settings]
    assert rows[0]["time_vs_first"] == 1.0
    words = sum(len(s) for s in corpus)
    for row in rows:
        assert len(row["runs"]) == 2 and all(run["words"] == words for run in row["runs"])
        assert row["min_seconds"] <= row["median_seconds"] <= row["max_seconds"]
    assert predict_settings.parse_setting(settings[1]) == predict_settings.Setting(
        {"NEURALPARSE_MEMORY_TUNING": "0", "OMP_WAIT_POLICY": "PASSIVE"}, ("tags=keep",)
    )
    with pytest.raises(RuntimeError, match="precision=half"):  # an option predict.py refuses
        predict_settings.main(["--settings", "precision=half", "--rounds", "1", "--threads", "1",
                               "--input", str(source), "--checkpoint", str(checkpoint),
                               "--json-out", str(out)])  # fmt: skip
    with pytest.raises(SystemExit, match="neither"):
        predict_settings.parse_setting("PASSIVE")


def test_precision_scores_both_precisions_and_times_them_in_turn(
    treebank: Path, tmp_path: Path, capsys
) -> None:
    checkpoint = untrained_checkpoint(treebank / "train.conllu", tmp_path / "untrained.pt")
    out = tmp_path / "precision.json"
    argv = ["--checkpoint", str(checkpoint), "--test", str(treebank / "test.conllu")]
    assert precision.main([*argv, "--threads", "1", "--rounds", "2", "--out", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert set(result["accuracy"]) == {"float32", "bfloat16"}
    assert result["accuracy"]["float32"]["same_as_float32"] == 100.0
    assert 0.0 <= result["accuracy"]["bfloat16"]["las"] <= 100.0
    words = sum(len(s) for s in read_conllu(treebank / "test.conllu"))
    assert result["speed"]["words"] == words
    assert all(len(s) == 2 for s in result["speed"]["seconds"].values())
    assert result["speed"]["time_ratio_bfloat16"] > 0
    assert "| bfloat16 |" in capsys.readouterr().out
