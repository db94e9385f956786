"""Smoke runs of the seeds' experiment scripts (``--quick``) on tiny generated treebanks, with
checks of what they count where the answer is known; and the per-row transition count of
greedy decoding that the running-time study reads."""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import random
import re
import time
from pathlib import Path

import pytest
import torch

from experiments import (
    accuracy_study,
    accuracy_table,
    running_time,
    seed_claims,
    study_headline,
    tag_coverage,
    tree_coverage,
)
from experiments.runs import training_minutes
from neuralparse.analyze import analyze_file
from neuralparse.config import ModelConfig
from neuralparse.evaluation.metrics import ScoreAccumulator
from neuralparse.io import Sentence, read_conllu
from neuralparse.model import EncodedCorpus, ParserModel, build_vocabularies
from neuralparse.runtime.checkpoint import checkpoint_data, save_checkpoint
from neuralparse.search.greedy import greedy_decode, greedy_decode_counted
from neuralparse.systems import get_system
from neuralparse.trees.core import check_tree, is_projective
from tests.parser_fixtures import LABELS, make_corpus, write_corpus

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TREEBANK = "UD_Tiny-Test"
TINY = ModelConfig(
    word_dim=8, use_chars=False, upos_dim=4, use_xpos=False, feats_dim=4,
    lstm_layers=1, lstm_hidden=8, mlp_hidden=8, dropout=0.0, word_dropout=0.0,
)  # fmt: skip


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data root with one tiny non-projective treebank (train and test)."""
    root = tmp_path_factory.mktemp("ud")
    directory = root / TREEBANK
    directory.mkdir()
    write_corpus(directory / "train.conllu", make_corpus(40, seed=1, max_words=9, projective=False))
    write_corpus(directory / "test.conllu", make_corpus(30, seed=2, max_words=12, projective=False))
    return root


def untrained(system_name: str, sentences: list[Sentence]) -> tuple[ParserModel, object, object]:
    vocabs = build_vocabularies(sentences, min_word_count=1, use_chars=False)
    system = get_system(system_name, ["root", *LABELS])
    torch.manual_seed(0)
    model = ParserModel.for_system(vocabs, TINY, system).eval()
    return model, system, vocabs


@pytest.mark.parametrize("name", ["arc_standard", "swap"])
def test_greedy_decode_counted_counts_each_rows_transitions(name: str) -> None:
    corpus = make_corpus(10, seed=4, min_words=1, max_words=12, projective=False)
    model, system, vocabs = untrained(name, corpus)
    batch = EncodedCorpus.build(corpus, vocabs).batch(torch.arange(len(corpus)))
    heads, labels, steps = greedy_decode_counted(model, system, batch)
    plain_heads, plain_labels = greedy_decode(model, system, batch)
    assert torch.equal(heads, plain_heads) and torch.equal(labels, plain_labels)
    lengths = [len(s) for s in corpus]
    if name == "arc_standard":  # a projective arc-standard derivation is exactly 2n long
        assert steps.tolist() == [2 * n for n in lengths]
    else:  # swap: 2n plus two per SWAP (Nivre 2009 §3.2)
        assert all(m >= 2 * n and (m - 2 * n) % 2 == 0 for m, n in zip(steps, lengths, strict=True))


def test_coverage_quick(data_root: Path, tmp_path: Path) -> None:
    png = tmp_path / "coverage.png"
    argv = ["--data-root", str(data_root), "--quick", "--out", str(tmp_path), "--plot", str(png)]
    assert tree_coverage.main(argv) == 0
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    with open(tmp_path / "coverage.csv", encoding="utf-8") as source:
        rows = list(csv.DictReader(source))
    assert [(r["treebank"], r["punctuation"]) for r in rows] == [
        (TREEBANK, "with"),
        (TREEBANK, "without"),
    ]
    expected = analyze_file(str(data_root / TREEBANK / "train.conllu"))
    with_punct = rows[0]
    assert int(with_punct["sentences"]) == 40
    assert float(with_punct["projective"]) == round(expected.projective, 2)
    assert float(with_punct["2ci"]) == round(expected.crossing_interval2, 2)
    assert float(with_punct["ill_nested"]) == round(100 - expected.well_nested, 2)
    assert float(with_punct["projective"]) < 100  # the generated trees are non-projective
    document = json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8"))
    assert document["splits"] == ["train"]
    # "Tiny" is no language of the seeds: only their averages are compared.
    assert {c["language"] for c in document["seed_comparison"]} == {"Average"}
    assert "| UD_Tiny-Test | with | 40 |" in (tmp_path / "coverage.md").read_text()


def tag_row(index: int, upos: str, feats: str) -> str:
    head = 0 if index == 1 else 1
    label = "root" if head == 0 else "dep"
    return f"{index}\tw{index}\t_\t{upos}\t_\t{feats}\t{head}\t{label}\t_\t_"


def test_tag_coverage_counts_test_values_missing_from_train(tmp_path: Path) -> None:
    treebank = tmp_path / "UD_Tiny-Tags"
    treebank.mkdir()
    train = [("NOUN", "Case=Nom"), ("VERB", "Case=Acc"), ("NOUN", "_")]
    test = [("NOUN", "Case=Nom"), ("ADJ", "Case=Nom|Number=Sing"), ("NOUN", "_"), ("X", "_")]
    for name, words in (("train", train), ("test", test)):
        rows = [tag_row(k, upos, feats) for k, (upos, feats) in enumerate(words, 1)]
        (treebank / f"{name}.conllu").write_text("\n".join(rows) + "\n\n", encoding="utf-8")
    assert tag_coverage.main(["--data-root", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    (row,) = json.loads((tmp_path / "out" / "tag_coverage.json").read_text())["rows"]
    assert row["test_words"] == 4
    assert (row["feats_train_values"], row["feats_unseen_test_pct"]) == (3, 25.0)
    assert (row["upos_train_values"], row["upos_unseen_test_pct"]) == (2, 50.0)
    assert (row["xpos_train_values"], row["xpos_unseen_test_pct"]) == (1, 0.0)
    assert tag_coverage.main(["--data-root", str(tmp_path / "none")]) == 1


def test_coverage_quick_on_the_shared_treebanks(ud_root: Path, tmp_path: Path) -> None:
    argv = ["--data-root", str(ud_root), "--quick", "--out", str(tmp_path)]
    assert tree_coverage.main([*argv, "--plot", str(tmp_path / "c.png")]) == 0
    document = json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8"))
    assert len(document["rows"]) == 2 * len(list(ud_root.glob("UD_*")))
    assert {"English", "Turkish"} <= {c["language"] for c in document["seed_comparison"]}


def test_running_time_quick_counts_oracle_and_parser(data_root: Path, tmp_path: Path) -> None:
    train = read_conllu(data_root / TREEBANK / "train.conllu")
    model, system, vocabs = untrained("arc_standard", train)
    checkpoint = tmp_path / "checkpoint.pt"
    config = {"data": {"treebank": TREEBANK}}
    save_checkpoint(
        checkpoint,
        checkpoint_data(
            model=model, system=system, system_options={}, vocabs=vocabs, config=config
        ),
    )
    png = tmp_path / "rt.png"
    argv = ["--data-root", str(data_root), "--quick", "--out", str(tmp_path), "--plot", str(png)]
    argv += ["--systems", "arc_standard", "swap:eager", "swap:lazy"]
    assert running_time.main([*argv, "--checkpoint", str(checkpoint)]) == 0
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    document = json.loads((tmp_path / "running_time.json").read_text(encoding="utf-8"))
    rows = {(r["system"], r["oracle"], r["source"]): r for r in document["rows"]}
    standard = rows[("arc_standard", "", "oracle, train")]
    projective = sum(1 for s in train if is_projective(s.heads))
    assert standard["sentences"] == projective  # in-class trees only
    assert standard["not_in_class"] == len(train) - projective
    assert standard["slope"] == pytest.approx(2.0) and standard["r2"] == pytest.approx(1.0)
    eager, lazy = rows[("swap", "eager", "oracle, train")], rows[("swap", "lazy", "oracle, train")]
    assert eager["sentences"] == lazy["sentences"] == len(train)  # swap derives every tree
    assert (
        lazy["transitions"] <= eager["transitions"]
    )  # lazy never swaps more (design note 01, item 3)
    assert eager["transitions"] > 2 * eager["words"]  # non-projective trees need swaps
    parser = rows[("arc_standard", "", "parser, test")]
    assert parser["sentences"] == 30 and parser["per_word"] == pytest.approx(2.0)
    points = next(p for p in document["points"] if p["source"] == "parser, test")["n_m_count"]
    assert all(m == 2 * n for n, m, _ in points)
    redrawn = tmp_path / "again.png"
    replot = ["--replot", str(tmp_path / "running_time.json"), "--plot", str(redrawn)]
    assert running_time.main(replot) == 0
    assert redrawn.read_bytes().startswith(PNG_SIGNATURE)


# -- the accuracy table on fake runs ----------------------------------------------------------


def perturb(sentence: Sentence, rate: float, rng: random.Random) -> tuple[list[int], list[str]]:
    """The gold tree with about ``rate`` of the words re-attached to another head that is not
    one of their descendants (so the result stays a tree) and some labels changed."""
    heads, labels = list(sentence.heads), list(sentence.deprels)
    n = len(heads)
    for word in range(1, n + 1):
        if rng.random() >= rate:
            continue
        candidates = [h for h in range(0, n + 1) if h != word and not _dominated(heads, h, word)]
        heads[word - 1] = rng.choice(candidates)
        if rng.random() < 0.5:
            labels[word - 1] = rng.choice(LABELS)
    check_tree(heads)
    return heads, labels


def _dominated(heads: list[int], node: int, ancestor: int) -> bool:
    while node != 0:
        if node == ancestor:
            return True
        node = heads[node - 1]
    return False


RECIPE = {"batch_tokens": 1000, "lr": 0.004, "lr_decay": 0.5, "lr_patience": 3, "patience": 10}
"""The default trainer's recipe, as ``scores.json`` records it (``recipe`` changes keys)."""


def write_fake_run(
    runs: Path,
    gold: list[Sentence],
    system: str,
    seed: int,
    rate: float,
    prefix: int,
    model: str = "default",
    subtype: str = "",
    recipe: dict | None = None,
) -> Path:
    """A run directory as ``experiments/accuracy_study.py`` writes it, predictions made by
    perturbing the gold trees of the first ``prefix`` sentences (``subtype`` is added to every
    predicted label)."""
    directory = runs / "tiny" / system / ("" if model == "default" else model) / f"seed{seed}"
    directory.mkdir(parents=True)
    modes = {}
    for offset, mode in enumerate(("greedy", "beam8")):
        rng = random.Random(f"{system}/{seed}/{offset}")
        trees = [perturb(s, rate, rng) for s in gold[:prefix]]
        with gzip.open(directory / f"test.{mode}.json.gz", "wt", encoding="utf-8") as sink:
            json.dump(
                {
                    "sent_ids": [s.sent_id for s in gold[:prefix]],
                    "heads": [h for h, _ in trees],
                    "deprels": [[label + subtype for label in d] for _, d in trees],
                },
                sink,
            )
        words = sum(len(s) for s in gold[:prefix])
        modes[mode] = {"scores": {}, "seconds": 0.5, "words": words, "sentences": prefix}
    scores = {
        "data": "tiny",
        "treebank": TREEBANK,
        "system": system,
        "seed": seed,
        "model": model,
        "epochs": 3 + seed,
        "best_epoch": 2,
        "stopped": "patience: no better dev LAS for 1 epochs" if seed == 1 else "max_epochs",
        "test_input": "untagged" if model == "default" else "tagged",
        "recipe": {**RECIPE, **(recipe or {})},
        "train_minutes": 1.5,
        "best_dev_las": 50.0,
        "device": "cpu",
        "modes": modes,
    }
    (directory / "scores.json").write_text(json.dumps(scores), encoding="utf-8")
    return directory


def fake_run_las(directory: Path, gold: list[Sentence]) -> float:
    with gzip.open(directory / "test.greedy.json.gz", "rt", encoding="utf-8") as source:
        predicted = json.load(source)
    accumulator = ScoreAccumulator()
    trees = zip(predicted["heads"], predicted["deprels"], strict=True)
    for sentence, (heads, labels) in zip(gold, trees, strict=False):  # a prefix of gold
        accumulator.add(sentence.heads, sentence.deprels, heads, labels, sentence.forms)
    return accumulator.result().las


def test_accuracy_table_quick_on_fake_runs(data_root: Path, tmp_path: Path) -> None:
    gold = read_conllu(data_root / TREEBANK / "test.conllu")
    runs = tmp_path / "study"
    rates = {"arc_eager": 0.45, "two_registers": 0.05, "swap": 0.45, "three_step": 0.0}
    for system, rate in rates.items():
        for seed in (1, 2):
            write_fake_run(runs, gold, system, seed, rate, prefix=25)  # a --quick prefix
    write_fake_run(runs, gold, "swap", 1, 0.0, prefix=25, model="gold_tags")
    png = tmp_path / "cu.png"
    speed = tmp_path / "throughput.json"
    benchmark = [{"system": "swap", "search": "greedy", "words_per_s": 1234.4}]
    speed.write_text(json.dumps({"runs": benchmark}), encoding="utf-8")
    argv = ["--runs", str(runs), "--data-root", str(data_root), "--quick", "--speed", str(speed)]
    assert accuracy_table.main([*argv, "--out", str(tmp_path), "--plot", str(png)]) == 0
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    document = json.loads((tmp_path / "accuracy.json").read_text(encoding="utf-8"))
    rows = {(r["system"], r["mode"]): r for r in document["rows"]}
    assert len(rows) == 2 * len(rates) and all(r["seeds"] == 2 for r in rows.values())

    # Scores are recomputed from the predictions: the mean of the two seeds' LAS.
    las = [fake_run_las(runs / "tiny" / "swap" / f"seed{k}", gold) for k in (1, 2)]
    assert las[0] != las[1]
    las = sum(las) / 2
    assert rows[("swap", "greedy")]["las"] == pytest.approx(las, abs=0.01)
    assert rows[("swap", "greedy")]["las_sd"] is not None
    assert rows[("swap", "greedy")]["words_per_s"] == 1234  # from the benchmark's JSON
    assert rows[("swap", "beam8")]["words_per_s"] is None
    # Epochs: the means over seeds, and how many seeds stopped by patience.
    swap = rows[("swap", "greedy")]
    assert (swap["best_epoch"], swap["epochs"], swap["stopped_by_patience"]) == (2, 4.5, 1)

    # The gold-tag run is left out of the main rows, and compared with the default model.
    (other,) = document["other_models"]
    assert (other["system"], other["model"], other["seeds"], other["las"]) == (
        "swap",
        "gold_tags",
        1,
        100.0,
    )
    assert other["las_default"] == pytest.approx(las, abs=0.01)
    assert other["difference"] == pytest.approx(100.0 - las, abs=0.02)
    # Every run has its own row, and the per-seed table puts the seeds side by side.
    per_seed = {(r["system"], r["model"], r["seed"]): r for r in document["per_seed"]}
    assert len(per_seed) == 2 * len(rates) + 1
    swap_1 = per_seed[("swap", "default", 1)]
    assert swap_1["las"] == pytest.approx(
        fake_run_las(runs / "tiny" / "swap" / "seed1", gold), abs=0.01
    )
    assert (swap_1["best_epoch"], swap_1["epochs"], swap_1["stopped_by_patience"]) == (2, 4, True)
    seeds_md = (tmp_path / "accuracy_seeds.md").read_text(encoding="utf-8")
    swap_row = next(line for line in seeds_md.splitlines() if line.startswith("| swap |"))
    assert swap_row.count(" / ") == 2 and swap_row.endswith(" | 100.00 |")  # gold_tags LAS
    assert "| seed 1: best / last | LAS (beam 8) | LR-NP | seed 2: best / last |" in seeds_md
    assert seeds_md.index("| three_step |") < seeds_md.index("| arc_eager |")  # best first
    assert document["test_input"] == "untagged"

    perfect = rows[("three_step", "greedy")]
    assert perfect["uas"] == perfect["las"] == perfect["exact_labeled"] == 100.0
    assert perfect["las_diff"] > 0 and perfect["p_value"] < 0.05
    assert rows[("arc_eager", "greedy")]["las_diff"] is None  # the baseline itself

    claims = {(c["claim"], c["mode"]): c for c in document["claims"]}
    better = claims[("two_registers beats arc_eager on UAS", "greedy")]
    assert better["verdict"] == "supported" and better["average_difference"] > 20
    (comparison,) = better["comparisons"]
    assert comparison["mcnemar_p"] < 0.001 and comparison["bootstrap_p"] < 0.01
    low, high = comparison["bootstrap_interval"]
    assert 0 < low < comparison["difference"] < high
    markdown = (tmp_path / "accuracy.md").read_text(encoding="utf-8")
    assert "| Tiny-Test | two_registers | greedy | 2 |" in markdown
    assert "| Tiny-Test | swap | gold_tags | tagged | 1 | 100.00 |" in markdown
    assert "| 2 / 4.5 | 1 of 2 |" in markdown
    assert "two_registers beats arc_eager on UAS" in markdown
    recipe = "- Tiny-Test: lr 0.004 ×0.5 after 3, batch 1000 words, patience 10\n"
    assert recipe in markdown and "mixed" not in markdown
    assert document["recipes"] == {TREEBANK: [recipe.removeprefix("- Tiny-Test: ")[:-1]]}
    # Which system: per system its greedy LAS difference to arc_eager over the treebanks (one
    # here), how often significantly, its LR-NP and benchmark speed; drawn where it has one.
    choice = {c["system"]: c for c in document["choice"]}
    assert choice["arc_eager"]["las_diff_mean"] == 0.0
    assert choice["three_step"]["las_diff_mean"] == perfect["las_diff"]
    assert (
        choice["three_step"]["significantly_above"],
        choice["three_step"]["significantly_below"],
    ) == (1, 0)
    assert choice["swap"]["words_per_s"] == 1234 and choice["arc_eager"]["words_per_s"] is None
    assert choice["swap"]["nonproj_labeled_recall_mean"] == swap["nonproj_labeled_recall"]
    assert (tmp_path / "which_system.png").read_bytes().startswith(PNG_SIGNATURE)
    # The published Table 5/7 averages are shown beside our mean over treebanks.
    assert any(
        c["source"] == "PM2015 Table 5" and c["language"] == "Average"
        for c in document["seed_comparison"]
    )


def test_accuracy_table_flags_a_treebank_whose_runs_were_trained_differently(
    data_root: Path, tmp_path: Path
) -> None:
    gold = read_conllu(data_root / TREEBANK / "test.conllu")
    runs = tmp_path / "study"
    write_fake_run(runs, gold, "arc_eager", 1, 0.3, prefix=20)
    write_fake_run(runs, gold, "swap", 1, 0.3, prefix=20, recipe={"lr": 0.002, "lr_decay": 1.0})
    argv = ["--runs", str(runs), "--data-root", str(data_root), "--quick", "--out", str(tmp_path)]
    assert accuracy_table.main([*argv, "--plot", str(tmp_path / "cu.png")]) == 0
    markdown = (tmp_path / "accuracy.md").read_text(encoding="utf-8")
    assert (
        "- Tiny-Test: lr 0.002 constant, batch 1000 words, patience 10; "
        "lr 0.004 ×0.5 after 3, batch 1000 words, patience 10 "
        "**(mixed: the comparison is not fair)**"
    ) in markdown


def test_accuracy_table_flags_runs_with_and_without_the_arc_loss(
    data_root: Path, tmp_path: Path
) -> None:
    """Runs of a model trained with the auxiliary arc loss are another recipe than those of
    the model before it (whose scores.json has no arc_loss_weight)."""
    gold = read_conllu(data_root / TREEBANK / "test.conllu")
    runs = tmp_path / "study"
    write_fake_run(runs, gold, "arc_eager", 1, 0.3, prefix=20)
    write_fake_run(runs, gold, "swap", 1, 0.3, prefix=20, recipe={"arc_loss_weight": 1.0})
    argv = ["--runs", str(runs), "--data-root", str(data_root), "--quick", "--out", str(tmp_path)]
    assert accuracy_table.main(argv) == 0
    markdown = (tmp_path / "accuracy.md").read_text(encoding="utf-8")
    assert (
        "- Tiny-Test: lr 0.004 ×0.5 after 3, batch 1000 words, patience 10; "
        "lr 0.004 ×0.5 after 3, batch 1000 words, patience 10, arc loss 1 (256 units), "
        "arc term 0 **(mixed: the comparison is not fair)**"
    ) in markdown


def test_accuracy_table_marks_identical_systems_not_significant(
    data_root: Path, tmp_path: Path
) -> None:
    gold = read_conllu(data_root / TREEBANK / "test.conllu")
    runs = tmp_path / "study"
    write_fake_run(runs, gold, "arc_eager", 1, 0.3, prefix=30)
    write_fake_run(runs, gold, "planar", 1, 0.3, prefix=30)
    # Same perturbation stream name -> different trees; copy arc_eager's to make them equal.
    for mode in ("greedy", "beam8"):
        source = runs / "tiny" / "arc_eager" / "seed1" / f"test.{mode}.json.gz"
        (runs / "tiny" / "planar" / "seed1" / source.name).write_bytes(source.read_bytes())
    argv = ["--runs", str(runs), "--data-root", str(data_root), "--quick", "--out", str(tmp_path)]
    assert accuracy_table.main([*argv, "--plot", str(tmp_path / "p.png")]) == 0
    markdown = (tmp_path / "accuracy.md").read_text(encoding="utf-8")
    (row,) = [line for line in markdown.splitlines() if "| planar | greedy |" in line]
    assert "+0.00 (n.s.)" in row


def test_accuracy_table_las_is_conll_2018s_and_full_labels_are_beside_it(
    data_root: Path, tmp_path: Path
) -> None:
    """Labels that differ from gold only in a subtype count as correct for LAS (the universal
    part of DEPREL), in the table and in the per-word outcomes that the tests pair."""
    gold = read_conllu(data_root / TREEBANK / "test.conllu")
    runs = tmp_path / "study"
    write_fake_run(runs, gold, "arc_eager", 1, 0.0, prefix=30)
    write_fake_run(runs, gold, "planar", 1, 0.0, prefix=30, subtype=":sub")
    argv = ["--runs", str(runs), "--data-root", str(data_root), "--quick", "--out", str(tmp_path)]
    assert accuracy_table.main([*argv, "--plot", str(tmp_path / "p.png")]) == 0
    document = json.loads((tmp_path / "accuracy.json").read_text(encoding="utf-8"))
    rows = {(r["system"], r["mode"]): r for r in document["rows"]}
    planar = rows[("planar", "greedy")]
    assert planar["las"] == 100.0 and planar["las_full"] == 0.0
    assert planar["las_diff"] == 0.0


def test_accuracy_table_without_runs_fails_cleanly(tmp_path: Path) -> None:
    assert accuracy_table.main(["--runs", str(tmp_path), "--out", str(tmp_path)]) == 1


@pytest.mark.parametrize(
    ("kind", "average", "better", "worse", "expected"),
    [
        ("better", 1.2, 2, 0, "supported"),
        ("better", 0.3, 0, 0, "same direction, not significant"),
        ("better", 0.3, 1, 1, "mixed"),
        ("better", -0.5, 0, 0, "not supported"),
        ("same", -0.2, 0, 0, "supported"),
        ("same", 0.9, 1, 0, "not supported"),
        ("not_worse", -0.1, 0, 0, "supported"),
        ("not_worse", 0.4, 2, 1, "not supported"),
        ("better", None, 0, 0, "no runs"),
    ],
)
def test_claim_verdicts(
    kind: str, average: float | None, better: int, worse: int, expected: str
) -> None:
    assert seed_claims.verdict(kind, average, better, worse) == expected


def epoch_times(*seconds: tuple[float, float, float]) -> list[dict[str, float]]:
    """Epoch records with ``(elapsed, train, eval)`` seconds."""
    return [
        {"elapsed_seconds": elapsed, "train_seconds": train, "eval_seconds": evaluation}
        for elapsed, train, evaluation in seconds
    ]


def test_training_minutes_add_up_the_processes_of_a_resumed_run() -> None:
    one_process = epoch_times((10, 8, 2), (20, 8, 2))
    assert training_minutes(one_process) == pytest.approx(20 / 60)
    # Resumed after epoch 2: the third epoch's clock starts again (it began at 1 s).
    resumed = [*one_process, *epoch_times((12, 9, 2), (22, 8, 2))]
    assert training_minutes(resumed) == pytest.approx((20 + 22) / 60)
    # A first process of one epoch, shorter than the next process's first epoch: elapsed
    # time grows (40 -> 60 s), yet the epoch began (10 s) before the one before it ended.
    assert training_minutes(epoch_times((40, 35, 5), (60, 45, 5))) == pytest.approx(100 / 60)
    assert training_minutes([]) is None


def test_accuracy_study_plan_lists_each_runs_state_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--plan`` reads the run folders only: a finished run, one trained but not parsed, one
    cut off with its last.pt, one whose checkout lost it, and one never started."""
    out = tmp_path / "study"

    def folder(system: str) -> Path:
        run = out / "en_ewt" / system / "seed1"
        run.mkdir(parents=True)
        (run / "config.yaml").write_text("trainer:\n  max_time_minutes: 120.0\n")
        return run

    epoch = {"epoch": 7, "best_epoch": 5}
    stopped = {"stopped": "patience: no better dev LAS for 10 epochs", "best_epoch": 5}
    done = folder("arc_eager")
    summary = {"best_epoch": 5, "epochs": 15, "stopped": stopped["stopped"], "train_minutes": 36}
    (done / "scores.json").write_text(json.dumps(summary))
    parse = folder("swap")
    (parse / "metrics.jsonl").write_text(json.dumps(epoch) + "\n" + json.dumps(stopped) + "\n")
    (parse / "checkpoint.pt").write_bytes(b"")
    goes_on = folder("planar")
    trained = {**epoch, "elapsed_seconds": 720, "train_seconds": 100, "eval_seconds": 5}
    (goes_on / "metrics.jsonl").write_text(json.dumps(trained) + '\n{"epoch": 8, "lo')
    (goes_on / "last.pt").write_bytes(b"")
    lost = folder("two_planar")
    (lost / "metrics.jsonl").write_text(json.dumps(epoch) + "\n")
    systems = ["arc_eager", "swap", "planar", "two_planar", "arc_hybrid"]
    argv = ["--plan", "--data", "en_ewt", "--systems", *systems, "--out", str(out)]
    assert accuracy_study.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines[:-2]) == [
        "done      en_ewt arc_eager default seed 1: best epoch 5 of 15, stopped by patience",
        "goes on   en_ewt planar default seed 1: after epoch 7 (best 5), from last.pt",
        "to parse  en_ewt swap default seed 1: training ended; test not parsed yet",
        "to train  en_ewt arc_hybrid default seed 1",
        "to train  en_ewt two_planar default seed 1: logged to epoch 7, no last.pt: trains from "
        "the start",
    ]
    assert lines[-2] == "1 done, 1 to parse, 1 goes on, 2 to train of 5"
    # The estimate: the finished run took 36 minutes; planar trained for 12 of them, so 24
    # are left for it, 36 for each of the two runs to train, none for the one to parse.
    assert lines[-1] == (
        "about 1.6 h of training left one run at a time, 0.8 h with --jobs 2 (by the median "
        "of each treebank and model's finished runs)"
    )
    assert not (out / "en_ewt" / "arc_hybrid").exists()


def test_accuracy_study_whole_runs_starts_none_that_would_not_finish(tmp_path: Path) -> None:
    """With ``--whole-runs`` a run is not started when its treebank and model's finished runs
    took longer (median) than the time left before the deadline."""
    out = tmp_path / "study"
    done = out / "en_ewt" / "arc_eager" / "seed1"
    done.mkdir(parents=True)
    (done / "scores.json").write_text(json.dumps({"train_minutes": 36}))
    args = argparse.Namespace(out=out, max_minutes=120.0, min_minutes=1.0, whole_runs=True)
    run = accuracy_study.Run("en_ewt", "swap", 1)
    deadline = time.time() + 30 * 60  # 30 minutes, less the margin for parsing test
    message = accuracy_study.execute(run, args, deadline)
    assert message.endswith(
        "not started (deadline): needs about 36 min of training by the "
        "median of the finished runs, 28 min are left"
    )
    assert not run.directory(out).exists()


def test_accuracy_study_quick_trains_parses_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tiny runs through the study's own commands (train.py, then test parsing greedy and with
    the beam), on a synthetic treebank found through NEURALPARSE_DATA.  Two systems: nothing
    in the study depends on the system, and every system's training is tested elsewhere."""
    treebank = tmp_path / "ud" / "UD_English-EWT"
    treebank.mkdir(parents=True)
    for split, count in (("train", 12), ("dev", 4), ("test", 5)):
        corpus = make_corpus(count, seed=len(split), projective=False)
        write_corpus(treebank / f"{split}.conllu", corpus)
    monkeypatch.setenv("NEURALPARSE_DATA", str(tmp_path / "ud"))
    out = tmp_path / "study"
    systems = ["arc_eager", "two_registers"]
    argv = ["--quick", "--data", "en_ewt", "--systems", *systems, "--jobs", "2", "--out", str(out)]
    assert accuracy_study.main(argv) == 0
    # Progress: each run's start and end, with the time of day.
    lines = capsys.readouterr().out.splitlines()
    for system in systems:
        run_dir = out / "en_ewt" / system / "seed1"
        assert any(line.endswith(f"{run_dir}: training, up to 120 min") for line in lines)
        assert any(f"{run_dir}: done in" in line for line in lines)
    assert all(re.match(r"\d\d:\d\d ", line) for line in lines), lines
    gold = read_conllu(treebank / "test.conllu")
    for system in systems:
        run = out / "en_ewt" / system / "seed1"
        scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))
        assert (scores["system"], scores["epochs"], scores["best_epoch"]) == (system, 1, 1)
        assert (scores["model"], scores["test_input"]) == ("default", "untagged")
        quick = {"batch_tokens": 500, "lr": 0.004, "lr_decay": 0.5, "lr_patience": 3}
        quick["max_lr_decays"] = 5
        arcs = {"arc_loss_weight": 1.0, "arc_hidden": 128, "arc_decoding_weight": 0.75}
        assert scores["recipe"] == {**quick, "patience": 2, **arcs}
        assert scores["decoding_arc_weight"] == 0.75  # both systems decode with the term
        assert scores["stopped"].startswith("max_epochs")
        for mode in ("greedy", "beam8"):
            assert scores["modes"][mode]["sentences"] == len(gold)
            with gzip.open(run / f"test.{mode}.json.gz", "rt", encoding="utf-8") as source:
                predicted = json.load(source)
            for sentence, heads in zip(gold, predicted["heads"], strict=True):
                check_tree(heads)
                assert len(heads) == len(sentence.heads)
    # A finished run is not redone.
    assert accuracy_study.main(argv) == 0
    # A run whose training ended is only parsed again; one cut off resumes from last.pt.
    run = out / "en_ewt" / "arc_eager" / "seed1"
    metrics = (run / "metrics.jsonl").read_text(encoding="utf-8")
    (run / "scores.json").unlink()
    assert accuracy_study.main([*argv, "--systems", "arc_eager"]) == 0
    assert (run / "scores.json").is_file()
    assert (run / "metrics.jsonl").read_text(encoding="utf-8") == metrics
    cut = [line for line in metrics.splitlines(keepends=True) if '"stopped"' not in line]
    (run / "metrics.jsonl").write_text("".join(cut) + '{"epoch": 2, "los', encoding="utf-8")
    (run / "scores.json").unlink()
    capsys.readouterr()
    assert accuracy_study.main([*argv, "--systems", "arc_eager"]) == 0
    assert (
        "training, up to 120 min; after epoch 1 (best 1), from last.pt" in capsys.readouterr().out
    )
    log = (run / "study.log").read_text(encoding="utf-8")
    assert "resuming from" in log and str(run / "last.pt") in log
    assert accuracy_study.training_finished(run) and (run / "scores.json").is_file()
    # A new checkout keeps a finished run's metrics but not its checkpoints (.gitignore):
    # without scores.json it is trained again from the start, then parsed.
    for ignored in ("checkpoint.pt", "last.pt"):
        (run / ignored).unlink()
    (run / "scores.json").unlink()
    assert not accuracy_study.training_finished(run)
    assert accuracy_study.main([*argv, "--systems", "arc_eager"]) == 0
    assert accuracy_study.training_finished(run) and (run / "scores.json").is_file()
    assert (run / "metrics.jsonl").read_text(encoding="utf-8").count('"stopped"') == 1
    # A run that the study's deadline ended (a time limit below --max-minutes) is not parsed
    # but goes on from last.pt in the next study.
    records = (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    stopped = json.loads(records[-1])
    deadline = {**stopped, "stopped": "another epoch would pass", "limit": "max_time_minutes"}
    (run / "metrics.jsonl").write_text(
        "".join(records[:-1]) + json.dumps(deadline) + "\n", encoding="utf-8"
    )
    config = (run / "config.yaml").read_text(encoding="utf-8")
    assert "max_time_minutes: 120.0" in config
    (run / "config.yaml").write_text(
        config.replace("max_time_minutes: 120.0", "max_time_minutes: 7.5")
    )
    (run / "scores.json").unlink()
    assert not accuracy_study.training_finished(run)
    assert accuracy_study.training_finished(run, safety_net_minutes=5.0)  # a safety net
    resumed = (run / "study.log").read_text(encoding="utf-8").count("resuming from")
    assert accuracy_study.main([*argv, "--systems", "arc_eager"]) == 0
    assert (run / "study.log").read_text(encoding="utf-8").count("resuming from") == resumed + 1
    assert accuracy_study.training_finished(run) and (run / "scores.json").is_file()
    assert accuracy_study.stop_record(run)["limit"] == "max_epochs"
    # The gold-tag model beside it reads the test file's tags.
    gold_tags = [*argv, "--models", "gold_tags", "--systems", "arc_eager"]
    assert accuracy_study.main(gold_tags) == 0
    run = out / "en_ewt" / "arc_eager" / "gold_tags" / "seed1"
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    assert (scores["model"], scores["test_input"], scores["data"]) == (
        "gold_tags",
        "tagged",
        "en_ewt",
    )


def test_headline_scores_untagged_and_tagged_input_and_times_parsing(tmp_path: Path) -> None:
    from experiments import headline
    from neuralparse.training.trainer import train
    from tests.test_training import tiny_config

    sentences = make_corpus(20, seed=4)
    checkpoint = train(tiny_config(tmp_path, sentences, max_epochs=2), tmp_path / "run").checkpoint
    out = tmp_path / "headline.json"
    test = tmp_path / "train.conllu"  # tiny_config's file, gold tags learnable
    assert headline.main(["--checkpoints", str(checkpoint), "--test", str(test), "--threads",
                          "1", "--repeats", "1", "--out", str(out)]) == 0  # fmt: skip
    (row,) = json.loads(out.read_text())["rows"]
    assert row["words"] == sum(len(s) for s in sentences) and row["words_per_second"] > 0
    assert row["words_per_second_text"] > 0 and row["words_per_second_conllu"] > 0
    for setting in ("untagged", "tagged"):
        assert 0 <= row[setting]["las"] <= row[setting]["uas"] <= 100
        assert row[setting]["upos"] is not None  # the model's own tags
    assert row["untagged"]["las"] == row["tagged"]["las"]  # the joint model never reads tags


def test_convergence_reads_every_run_and_says_which_converged(tmp_path: Path, capsys) -> None:
    from experiments import convergence

    def run(
        path: Path, las: list[float], stopped: dict | None, cut: bool = False, decayed=None
    ) -> None:
        path.mkdir(parents=True)
        lines = [json.dumps({"epoch": k + 1, "dev": {"las": v}}) for k, v in enumerate(las)]
        if decayed:
            lines = [
                json.dumps({"epoch": k + 1, "dev": {"las": v}, "lr_decayed": d})
                for k, (v, d) in enumerate(zip(las, decayed, strict=True))
            ]
        lines += [json.dumps({"split": "test", "epoch": 2, "las": 1.0})]
        lines += [json.dumps(stopped)] if stopped else []
        text = "\n".join(lines) + ("\n" + '{"epoch": 9, "dev' if cut else "\n")
        (path / "metrics.jsonl").write_text(text, encoding="utf-8")

    patience = {"stopped": "patience: no better dev LAS for 2 epochs", "best_epoch": 2}
    run(tmp_path / "hu" / "swap" / "seed1", [50.0, 60.0, 59.0, 58.0], patience)
    run(tmp_path / "hu" / "swap" / "gold_tags" / "seed1", [70.0, 71.0], {
        "stopped": "max_epochs (2) reached", "best_epoch": 2,
    })  # fmt: skip
    run(tmp_path / "el" / "arc_eager" / "seed2", [40.0], None, cut=True)
    late = {"stopped": "patience: no better dev LAS for 2 epochs", "best_epoch": 4}
    decays = [False, False, True, False, True, False]  # after epochs 3 and 5
    run(tmp_path / "hu" / "arc_eager" / "seed1", [50.0, 55.0, 54.0, 60.0, 59.0, 58.0], late,
        decayed=decays)  # fmt: skip
    curves = {(c.data, c.system, c.model): c for c in convergence.read_curves(tmp_path)}
    swap = curves[("hu", "swap", "default")]
    assert (swap.las, swap.best_epoch, swap.converged) == ([50.0, 60.0, 59.0, 58.0], 2, True)
    assert not curves[("hu", "swap", "gold_tags")].converged  # its best epoch was its last
    training = curves[("el", "arc_eager", "default")]
    assert (training.las, training.stopped, training.seed) == ([40.0], None, "2")
    png = tmp_path / "curves.png"
    assert convergence.main(["--runs", str(tmp_path), "--out", str(png)]) == 0
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    out = capsys.readouterr().out
    assert "2 of 3 finished runs stopped by patience after their best epoch" in out
    assert "| el | arc_eager | default | 2 | 1 | – | 40.00 | still training |" in out
    # Patience 1 stops both converged runs after epoch 3: swap loses nothing (its best, 60,
    # came at epoch 2), arc-eager loses 60 - 55; 6 of their 10 epochs trained.
    assert "| 1 | 2.500 | 5.00 | 1 | 60.0% |" in out
    assert "| 2 | 0.000 | 0.00 | 0 | 100.0% |" in out  # the patience they had
    assert [convergence.stop_epoch([1.0, 2.0, 2.0, 2.0], p) for p in (1, 2, 3)] == [3, 4, 4]
    # One decay allowed: arc-eager (the one run that recorded its decays) stops at the
    # plateau of epoch 5, after its best: nothing lost, 5 of its 6 epochs trained.
    assert "| max_lr_decays | dev LAS lost, mean | worst | runs losing > 0.1 (of 1) |" in out
    assert "| 1 | 0.000 | 0.00 | 0 | 83.3% |" in out
    marks = [False, True, False, True]
    assert [convergence.decay_stop_epoch(marks, k) for k in (0, 1, 2)] == [2, 4, 4]
    assert convergence.main(["--runs", str(tmp_path / "none"), "--out", str(png)]) == 1


def test_tag_gap_feeds_the_gold_tag_parser_gold_predicted_and_mixed_tags(tmp_path: Path) -> None:
    from omegaconf import OmegaConf

    from experiments import tag_gap
    from neuralparse import Parser
    from neuralparse.training.trainer import train
    from tests.test_training import tiny_config

    sentences = make_corpus(20, seed=4)
    runs = tmp_path / "runs" / "el_gdt" / "arc_eager"
    for run, tag_input in ((runs / "seed1", "none"), (runs / "gold_tags" / "seed1", "gold")):
        run.mkdir(parents=True)
        cfg = tiny_config(run, sentences, max_epochs=2)
        cfg.model.tag_input = tag_input
        shared = str(runs / "seed1" / "train.conllu")  # both runs on one file, as in a study
        cfg.data.train = cfg.data.dev = cfg.data.test = shared
        train(cfg, run)
        (run / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    gold = read_conllu(runs / "seed1" / "train.conllu")
    predicted = [s.with_tags(upos=["X"] * len(s), feats=["A=B"] * len(s)) for s in gold]
    mixed = tag_gap.given_tags(gold, predicted, tag_gap.GIVEN["predicted_pos"])
    assert [s.upos for s in mixed] == [s.upos for s in predicted]
    assert [s.xpos for s in mixed] == [s.xpos for s in predicted]
    assert [s.feats for s in mixed] == [s.feats for s in gold]
    out = tmp_path / "results"
    argv = ["--data", "el_gdt", "hu_szeged", "--runs", str(tmp_path / "runs"), "--threads", "1"]
    assert tag_gap.main([*argv, "--out", str(out)]) == 0
    (row,) = json.loads((out / "tag_gap.json").read_text())["rows"]
    words = sum(len(s) for s in gold)
    assert (row["data"], row["system"], row["words"]) == ("el_gdt", "arc_eager", words)
    las = [row[f"tagged_{setting}"] for setting in (*tag_gap.GIVEN, "untagged")]
    assert all(0 <= value <= 100 for value in [*las, row["joint_untagged"], row["joint_upos"]])
    assert row["gap"] == pytest.approx(row["tagged_gold"] - row["joint_untagged"])
    # The same figures as each model's own evaluation in the matching setting.
    test = runs / "seed1" / "train.conllu"
    joint, tagged = (
        Parser.load(d / "checkpoint.pt") for d in (runs / "seed1", runs / "gold_tags" / "seed1")
    )
    assert row["joint_untagged"] == joint.evaluate(test, untagged=True)["las"]
    assert row["joint_upos"] == joint.evaluate(test, untagged=True)["upos"]
    assert row["tagged_gold"] == tagged.evaluate(test)["las"]
    assert row["tagged_untagged"] == tagged.evaluate(test, untagged=True)["las"]
    assert "| el_gdt | arc_eager |" in (out / "tag_gap.md").read_text()
    assert tag_gap.main([*argv[:3], "--runs", str(tmp_path / "none"), "--out", str(out)]) == 1


@pytest.mark.parametrize("study", ["dynamic_oracle", "weight_average"])
def test_recipe_table_pairs_the_study_and_the_recipe_runs_by_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, study: str
) -> None:
    import importlib

    from experiments import recipe_study

    module = importlib.import_module(f"experiments.{study}")
    label = module.RECIPE.label

    study_runs, runs = tmp_path / "study", tmp_path / "runs"
    for seed, las in ((1, 70.0), (2, 72.0)):
        static = study_runs / "hu_szeged" / "arc_eager" / f"seed{seed}"
        static.mkdir(parents=True)
        scores = {"epochs": 80, "best_epoch": 70, "best_dev_las": 73.0, "train_minutes": 9.0}
        scores["modes"] = {"greedy": {"scores": {"las": las}}}
        (static / "scores.json").write_text(json.dumps(scores))
    dynamic = runs / "arc_eager" / "hu_szeged" / "seed1"
    dynamic.mkdir(parents=True)
    lines = [
        {"epoch": 1, "dev": {"las": 60.0}, "elapsed_seconds": 30.0},
        {"epoch": 2, "dev": {"las": 61.0}, "elapsed_seconds": 60.0},
        {"stopped": "patience", "limit": "patience", "epochs": 2, "best_epoch": 1, "best_las": 61},
        {"split": "test", "las": 71.5},
    ]
    (dynamic / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    monkeypatch.setattr(recipe_study, "STUDY_RUNS", study_runs)
    argv = ["--data", "hu_szeged", "--seeds", "1", "2", "--runs", str(runs), "--out", str(tmp_path)]
    assert module.main(argv) == 0
    captured = capsys.readouterr()
    assert "| hu_szeged | 1 | 70 / 80 | 70.00 | 1 / 2 | 71.50 | +1.50 |" in captured.out
    assert "hu_szeged seed 2: a run is missing or unfinished" in captured.err
    result = json.loads((tmp_path / f"{study}_arc_eager.json").read_text())
    assert result["recipe"] == list(module.RECIPE.overrides)
    assert result["means"]["hu_szeged"]["test_las_difference"] == pytest.approx(1.5)
    assert result["means"]["hu_szeged"][f"{label}_minutes"] == pytest.approx(1.0)


def test_study_headline_averages_the_seeds_and_sets_the_gold_tag_model_beside_them(
    tmp_path: Path,
) -> None:
    def run(path: Path, las: float, upos: float | None, best: int, model: str) -> None:
        path.mkdir(parents=True)
        scores = {"las": las, "upos": upos, "ufeats": None if upos is None else upos - 5}
        meta = {"treebank": "UD_Greek-GDT", "system": "arc_eager", "model": model,
                "best_epoch": best, "epochs": best + 10, "test_input": "untagged",
                "modes": {"greedy": {"scores": scores}}}  # fmt: skip
        (path / "scores.json").write_text(json.dumps(meta), encoding="utf-8")

    runs = tmp_path / "runs"
    run(runs / "el_gdt/arc_eager/seed1", 86.0, 96.0, 40, "default")
    run(runs / "el_gdt/arc_eager/seed2", 87.0, 97.0, 50, "default")
    run(runs / "el_gdt/arc_eager/seed3", 88.5, 98.0, 60, "default")
    run(runs / "el_gdt/arc_eager/gold_tags/seed1", 91.0, None, 30, "gold_tags")
    run(runs / "el_gdt/swap/seed1", 10.0, 10.0, 5, "default")  # another system: not read
    out = tmp_path / "out"
    assert study_headline.main(["--runs", str(runs), "--out", str(out)]) == 0
    (row,) = json.loads((out / "headline.json").read_text(encoding="utf-8"))["rows"]
    assert (row["las"], row["las_min"], row["las_max"]) == (87.17, 86.0, 88.5)
    assert (row["upos"], row["ufeats"]) == (97.0, 92.0)
    assert (row["gold_tags_las"], row["gap"]) == (91.0, 3.83)
    assert row["best_epochs"] == [40, 50, 60] and row["epochs"] == [50, 60, 70]
    table = (out / "headline.md").read_text(encoding="utf-8")
    assert "| Greek-GDT | 87.17 (86.00–88.50) | 97.00 | 92.00 | 91.00 | 3.83 |" in table
    assert study_headline.main(["--runs", str(runs), "--system", "planar"]) == 1
