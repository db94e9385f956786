"""Oracle examples, batching, the training loop, checkpoints, resume and the Hydra entry."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from omegaconf import OmegaConf

from neuralparse.config import TrainConfig, register_configs
from neuralparse.curves import CURVE_NAME, read_curve
from neuralparse.errors import InputError
from neuralparse.model import ParserModel
from neuralparse.model.parser import summary_features
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import (
    FORMAT_VERSION,
    CheckpointError,
    checkpoint_data,
    load_checkpoint,
    load_parser,
    save_checkpoint,
)
from neuralparse.search import greedy_parse_corpus
from neuralparse.systems import get_system
from neuralparse.training.examples import extract_oracle_examples
from neuralparse.training.preparation import build_system
from neuralparse.training.scoring import configured_test_file, evaluate_parser
from neuralparse.training.trainer import (
    CHECKPOINT_NAME,
    LAST_NAME,
    METRICS_NAME,
    loss_on_batch,
    prepare,
    train,
)
from neuralparse.training.transforms import prepare_trees
from tests.parser_fixtures import UPOS, available_systems, make_corpus, write_corpus

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")


def in_class_corpus(system_name: str, count: int, seed: int) -> list:
    """``count`` generated sentences whose trees the system can derive (half of them
    non-projective when the system allows it)."""
    system = get_system(system_name)
    candidates = make_corpus(4 * count, seed=seed, projective=False)
    chosen = [s for s in candidates if system.in_class(s.heads)][: count // 2]
    return chosen + make_corpus(count - len(chosen), seed=seed + 1)


def learnable_tags(sentences: list) -> list:
    """The sentences with UPOS and FEATS a function of the form (the generated ones are random,
    which no tagger can learn)."""
    tagged = []
    for s in sentences:
        upos = [UPOS[int(form[1:]) % len(UPOS)] for form in s.forms]
        feats = ["Number=Sing" if tag == "NOUN" else "_" for tag in upos]
        tagged.append(dataclasses.replace(s, upos=upos, feats=feats))
    return tagged


def tiny_config(tmp_path: Path, sentences: list, system: str = "arc_eager", **trainer) -> object:
    """A small joint model on ``sentences`` (train = dev), tags made learnable."""
    train_file = write_corpus(tmp_path / "train.conllu", learnable_tags(sentences))
    cfg = OmegaConf.structured(TrainConfig)
    cfg.data.treebank = None
    cfg.data.train = str(train_file)
    cfg.data.dev = str(train_file)
    cfg.system.name = system
    cfg.model = OmegaConf.merge(
        cfg.model,
        {
            "word_dim": 32, "char_dim": 8, "char_out": 16, "upos_dim": 8, "xpos_dim": 8,
            "feats_dim": 8, "lstm_layers": 1, "lstm_hidden": 48, "mlp_hidden": 64,
            "dropout": 0.0, "word_dropout": 0.0, "min_word_count": 1,
        },
    )  # fmt: skip
    cfg.trainer.progress = False
    cfg.trainer.batch_tokens = 100_000
    cfg.trainer.lr = 0.01
    # A constant rate: on a corpus this small dev LAS stalls for a few epochs early on, and
    # halving the rate then would leave the few epochs of a test too little to learn.
    cfg.trainer.lr_decay = 1.0
    for key, value in trainer.items():
        cfg.trainer[key] = value
    return cfg


# -- batching ------------------------------------------------------------------------------
def test_token_batches_partition_respects_budget_and_seed() -> None:
    lengths = torch.tensor([5, 30, 2, 9, 14, 3, 3, 40, 8, 1])
    batches = token_batches(lengths, 20, generator=torch.Generator().manual_seed(0))
    ids = sorted(i for b in batches for i in b.tolist())
    assert ids == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) == 1 or int(lengths[batch].sum()) <= 20
    again = token_batches(lengths, 20, generator=torch.Generator().manual_seed(0))
    assert [b.tolist() for b in batches] == [b.tolist() for b in again]
    ordered = token_batches(lengths, 20, shuffle=False)
    maxima = [int(lengths[b].max()) for b in ordered]
    assert maxima == sorted(maxima)  # length buckets in increasing order


# -- oracle examples -------------------------------------------------------------------------
@pytest.mark.parametrize("system_name", available_systems())
def test_oracle_examples_equal_the_oracle_step_by_step(system_name: str) -> None:
    sentences = in_class_corpus(system_name, 12, seed=7)
    unlabeled = get_system(system_name)
    trees, _ = prepare_trees(unlabeled, [(s.heads, s.deprels) for s in sentences])
    system = get_system(system_name, sorted({d for _, ds in trees for d in ds}))
    examples, reproduced = extract_oracle_examples(system, trees, chunk_size=5)
    assert all(reproduced)
    for i, (heads, deprels) in enumerate(trees):
        batch = examples.gather(torch.tensor([i]))
        expected = system.oracle(heads, deprels)
        assert batch.actions.tolist() == expected
        state = system.initial([len(heads)])
        for step, action in enumerate(expected):
            assert batch.tokens[step].tolist() == system.features(state)[0].tolist()
            assert torch.equal(batch.legal[step], system.legal(state)[0])
            summary = summary_features(system, state)
            assert (batch.summary is None) == (summary is None)
            if summary is not None:
                assert torch.equal(batch.summary[step], summary[0])
            system.apply(state, torch.tensor([action]))
        assert bool(system.terminal(state).all())
        assert (batch.position == 0).all()
    # Gathering several sentences concatenates their configurations in batch order.
    ids = torch.tensor([3, 0, 5])
    batch = examples.gather(ids)
    expected = [a for i in ids.tolist() for a in system.oracle(*trees[i])]
    assert batch.actions.tolist() == expected
    counts = [len(system.oracle(*trees[i])) for i in ids.tolist()]
    assert batch.position.tolist() == [k for k, c in enumerate(counts) for _ in range(c)]


def test_training_trees_are_lifted_into_the_system_class() -> None:
    sentences = make_corpus(40, seed=3, projective=False)
    system = get_system("arc_eager")
    trees = [(s.heads, s.deprels) for s in sentences]
    prepared, report = prepare_trees(system, trees)
    assert all(system.in_class(h) for h, _ in prepared)
    changed = sum(h != list(s.heads) for (h, _), s in zip(prepared, sentences, strict=True))
    assert report.transformed_trees == changed > 0
    assert report.moved_arcs >= changed
    assert prepare_trees(system, [([2, 0, 2], ["a", "root", "b"])])[0] == [
        ([2, 0, 2], ["a", "root", "b"])
    ]  # already projective


# -- training --------------------------------------------------------------------------------
def test_loss_decreases(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(20, seed=1))
    data = prepare(cfg)
    torch.manual_seed(0)
    model = ParserModel.for_system(data.vocabs, cfg.model, data.system)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    ids = data.examples.usable()
    losses = []
    for _ in range(40):  # the loss of the transitions plus that of the UPOS and FEATS heads
        loss, words = loss_on_batch(model, data.train_corpus, data.examples, ids, CPU)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert words == sum(len(s) for s in data.train_sentences)
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.slow
@pytest.mark.parametrize("system_name", available_systems())
def test_tiny_model_overfits_twenty_sentences(tmp_path: Path, system_name: str) -> None:
    cfg = tiny_config(tmp_path, in_class_corpus(system_name, 20, seed=2), system=system_name)
    start = time.perf_counter()
    data = prepare(cfg)
    torch.manual_seed(0)
    model = ParserModel.for_system(data.vocabs, cfg.model, data.system)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    ids = data.examples.usable()
    assert len(ids) == 20
    uas = 0.0
    for step in range(1, 301):
        loss, _ = loss_on_batch(model, data.train_corpus, data.examples, ids, CPU)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 25 == 0:
            scores = evaluate_parser(
                model, data.system, data.dev_corpus, data.dev_sentences, data.vocabs,
                batch_tokens=10_000, device=CPU,
            )  # fmt: skip
            uas = scores["uas"]
            if uas >= 95:
                break
    print(f"{system_name}: UAS {uas:.1f} after {step} steps")
    assert uas >= 95, f"{system_name}: UAS {uas:.1f} after {step} steps"
    assert time.perf_counter() - start < 60


def test_train_writes_checkpoint_and_metrics_and_round_trips(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(12, seed=4), max_epochs=3, patience=10)
    result = train(cfg, tmp_path / "run")
    lines = (tmp_path / "run" / METRICS_NAME).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r.get("epoch") for r in records] == [1, 2, 3, None]
    assert records[-1]["stopped"] == "max_epochs (3) reached"
    assert records[-1]["limit"] == "max_epochs"
    assert records[-1]["best_epoch"] == result.best_epoch
    records = records[:3]
    assert result.best_las == max(r["dev"]["las"] for r in records)
    # The picture of the run, redrawn after every epoch and after the stop.
    curve = read_curve(tmp_path / "run")
    assert curve.epochs == [1, 2, 3] and curve.stopped == "max_epochs (3) reached"
    assert "stopped: max_epochs (3) reached" in (tmp_path / "run" / CURVE_NAME).read_text()
    checkpoint = tmp_path / "run" / CHECKPOINT_NAME
    # Plain data only: the safe loader reads it.
    raw = torch.load(checkpoint, map_location="cpu", weights_only=True)
    assert raw["format_version"] == FORMAT_VERSION and raw["system"] == "arc_eager"
    assert raw["dev_metrics"]["las"] == result.best_las
    loaded = load_parser(checkpoint)
    data = prepare(cfg)
    scores = evaluate_parser(
        loaded.model, loaded.system, data.dev_corpus, data.dev_sentences, loaded.vocabs,
        batch_tokens=1000, device=CPU,
    )  # fmt: skip
    assert scores["las"] == result.best_las and scores["uas"] == raw["dev_metrics"]["uas"]
    assert scores["upos"] == raw["dev_metrics"]["upos"] and scores["upos"] is not None


def test_a_folder_with_a_trained_run_is_not_trained_over(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(8, seed=3), max_epochs=1, patience=10)
    train(cfg, tmp_path / "run")
    model = (tmp_path / "run" / CHECKPOINT_NAME).read_bytes()
    with pytest.raises(InputError, match=r"run: already holds a trained run \(checkpoint.pt"):
        train(cfg, tmp_path / "run")
    assert (tmp_path / "run" / CHECKPOINT_NAME).read_bytes() == model
    cfg.trainer.max_epochs, cfg.trainer.resume = 2, str(tmp_path / "run" / LAST_NAME)
    assert train(cfg, tmp_path / "run").epochs_run == 2  # resuming may write there


def test_save_load_round_trip_predicts_identically(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(10, seed=8), system="swap")
    data = prepare(cfg)
    torch.manual_seed(3)
    model = ParserModel.for_system(data.vocabs, cfg.model, data.system).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4)  # an opinionated untrained model: varied parses
    path = tmp_path / "model.pt"
    save_checkpoint(
        path,
        checkpoint_data(
            model=model, system=data.system, system_options={}, vocabs=data.vocabs,
            config={"note": "test"},
        ),
    )  # fmt: skip
    loaded = load_parser(path)
    before = greedy_parse_corpus(model, data.system, data.dev_corpus)
    after = greedy_parse_corpus(loaded.model, loaded.system, data.dev_corpus)
    assert before == after
    assert loaded.system.labels == data.system.labels


def test_newer_checkpoint_format_fails_clearly(tmp_path: Path) -> None:
    path = tmp_path / "future.pt"
    torch.save({"format_version": FORMAT_VERSION + 1, "library_version": "9.9"}, path)
    with pytest.raises(CheckpointError, match="newer than this library"):
        load_checkpoint(path)
    (tmp_path / "junk.pt").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable"):
        load_checkpoint(tmp_path / "junk.pt")


@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_resume_continues_exactly(tmp_path: Path, oracle: str) -> None:
    """A resumed run draws the batches, dropout masks and (the dynamic oracle's second epoch
    explores) exploration draws of an uninterrupted one."""
    sentences = make_corpus(12, seed=6)
    cfg = tiny_config(
        tmp_path, sentences, max_epochs=2, patience=10, batch_tokens=30, oracle=oracle
    )
    cfg.model.dropout = 0.2
    cfg.model.word_dropout = 0.25
    straight = train(cfg, tmp_path / "straight")
    cfg.trainer.max_epochs = 1
    train(cfg, tmp_path / "first")
    cfg.trainer.max_epochs = 2
    cfg.trainer.resume = str(tmp_path / "first" / LAST_NAME)
    resumed = train(cfg, tmp_path / "resumed")
    assert [r["epoch"] for r in resumed.history] == [2]
    assert resumed.history[0]["loss"] == pytest.approx(straight.history[1]["loss"], rel=1e-5)
    a = load_checkpoint(tmp_path / "straight" / LAST_NAME)["state_dict"]
    b = load_checkpoint(tmp_path / "resumed" / LAST_NAME)["state_dict"]
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=1e-5, atol=1e-6)


def test_early_stopping_and_time_limit(tmp_path: Path) -> None:
    sentences = make_corpus(8, seed=12)
    # With a zero learning rate the dev score never improves after epoch 1.
    cfg = tiny_config(tmp_path, sentences, max_epochs=6, patience=2, lr=0.0)
    result = train(cfg, tmp_path / "patience")
    assert [r["epoch"] for r in result.history] == [1, 2, 3]
    assert result.best_epoch == 1
    cfg = tiny_config(tmp_path, sentences, max_epochs=6, max_time_minutes=1e-6)
    result = train(cfg, tmp_path / "time")
    assert [r["epoch"] for r in result.history] == [1]  # the next epoch would pass the limit
    stopped = json.loads((tmp_path / "time" / METRICS_NAME).read_text().splitlines()[-1])
    assert stopped["limit"] == "max_time_minutes"


def test_dev_labels_unseen_in_training_are_counted(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(6, seed=13))
    dev = make_corpus(3, seed=14)
    for sentence in dev[:2]:  # every non-root word of two sentences gets an unseen label
        sentence.deprels[:] = ["dep" if d != "root" else d for d in sentence.deprels]
    cfg.data.dev = str(write_corpus(tmp_path / "dev.conllu", dev))
    data = prepare(cfg)
    expected = sum(d == "dep" for s in dev for d in s.deprels)
    assert data.unseen_dev_labels == {"dep": expected} and expected > 0
    assert "dep" not in data.system.labels


# -- clear errors ------------------------------------------------------------------------------
def test_bad_names_and_files_fail_before_training(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path, make_corpus(3))
    cfg.system.name = "no_such_system"
    with pytest.raises(InputError, match="unknown transition system 'no_such_system'"):
        prepare(cfg)
    cfg.system.name = "swap"
    cfg.system.options = {"oracle": "psychic"}
    with pytest.raises(InputError, match="system=swap with options"):
        prepare(cfg)
    cfg.system.name, cfg.system.options = "arc_eager", {}
    cfg.search.name = "bogus"
    with pytest.raises(InputError, match="unknown search 'bogus'"):
        prepare(cfg)
    cfg.search.name = "greedy"
    cfg.data.dev = str(tmp_path / "missing.conllu")
    with pytest.raises(InputError, match="dev file not found"):
        prepare(cfg)
    (tmp_path / "empty.conllu").write_text("")
    cfg.data.dev = str(tmp_path / "empty.conllu")
    with pytest.raises(InputError):
        prepare(cfg)


# -- a dev split held out of the training sentences -------------------------------------------
def test_without_a_dev_file_every_tenth_training_sentence_is_dev(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sentences = make_corpus(25, seed=21)
    cfg = tiny_config(tmp_path, sentences)
    cfg.data.dev = None
    with caplog.at_level("WARNING", logger="neuralparse.train"):
        data = prepare(cfg)
    forms = [s.forms for s in sentences]
    assert [s.forms for s in data.dev_sentences] == [forms[9], forms[19]]
    assert [s.forms for s in data.train_sentences] == forms[:9] + forms[10:19] + forms[20:]
    assert "no dev file" in caplog.text and "2 training sentences (1 in 10)" in caplog.text
    cfg.data.dev_holdout = 0.25  # asked for: no warning
    caplog.clear()
    data = prepare(cfg)
    assert [s.forms for s in data.dev_sentences] == forms[3::4] and not caplog.text


def test_a_registered_treebank_without_a_dev_split_trains_on_held_out_dev(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "UD_Kazakh-KTB"  # released with train and test only
    folder.mkdir()
    write_corpus(folder / "kk_ktb-ud-train.conllu", learnable_tags(make_corpus(12, seed=4)))
    cfg = tiny_config(tmp_path, make_corpus(3))
    cfg.data.train = cfg.data.dev = None
    cfg.data.treebank, cfg.data.root, cfg.data.download = "UD_Kazakh-KTB", str(tmp_path), False
    data = prepare(cfg)
    assert (len(data.train_sentences), len(data.dev_sentences)) == (11, 1)


def test_a_missing_dev_file_of_an_unknown_treebank_names_the_way_out(tmp_path: Path) -> None:
    # Outside the registry nobody knows whether the release has a dev split.
    folder = tmp_path / "UD_Testish-Small"
    folder.mkdir()
    write_corpus(folder / "xx_small-ud-train.conllu", learnable_tags(make_corpus(12, seed=4)))
    cfg = tiny_config(tmp_path, make_corpus(3))
    cfg.data.train = cfg.data.dev = None
    cfg.data.treebank, cfg.data.code = "UD_Testish-Small", "xx_small"
    cfg.data.root, cfg.data.download = str(tmp_path), False
    with pytest.raises(InputError, match=r"no dev file .* data\.dev_holdout=0\.1 holds out"):
        prepare(cfg)
    cfg.data.dev_holdout = 0.1
    assert len(prepare(cfg).dev_sentences) == 1


# -- a training split in several files ------------------------------------------------------
def test_a_treebank_released_in_parts_trains_on_all_parts_in_name_order(tmp_path: Path) -> None:
    # Treebanks over GitHub's file size limit ship train as parts (UD_Czech-PDT and others).
    folder = tmp_path / "UD_Czech-PDT"
    folder.mkdir()
    parts = {"b": make_corpus(4, seed=5), "a": make_corpus(3, seed=6)}
    for name, sentences in parts.items():
        write_corpus(folder / f"cs_pdt-ud-train-{name}.conllu", learnable_tags(sentences))
    write_corpus(folder / "cs_pdt-ud-dev.conllu", learnable_tags(make_corpus(2, seed=7)))
    cfg = tiny_config(tmp_path, make_corpus(3))
    cfg.data.train = cfg.data.dev = None
    cfg.data.treebank, cfg.data.root, cfg.data.download = "cs_pdt", str(tmp_path), False
    data = prepare(cfg)
    assert [s.forms for s in data.train_sentences] == [s.forms for s in parts["a"] + parts["b"]]
    assert data.train_sentences[3].source == str(folder / "cs_pdt-ud-train-b.conllu")
    cfg.data.max_train_sentences = 2  # the limit counts over the parts
    assert len(prepare(cfg).train_sentences) == 2


def test_a_glob_pattern_as_the_training_file_reads_every_match(tmp_path: Path) -> None:
    first, second = make_corpus(3, seed=8), make_corpus(2, seed=9)
    write_corpus(tmp_path / "x-train-1.conllu", learnable_tags(first))
    write_corpus(tmp_path / "x-train-2.conllu", learnable_tags(second))
    cfg = tiny_config(tmp_path, make_corpus(3))
    cfg.data.train = str(tmp_path / "x-train-*.conllu")
    data = prepare(cfg)
    assert [s.forms for s in data.train_sentences] == [s.forms for s in first + second]
    cfg.data.train = str(tmp_path / "y-train-*.conllu")
    with pytest.raises(InputError, match=r"data\.train=.*y-train-\*\.conllu: the pattern matches"):
        prepare(cfg)
    cfg.data.train = str(tmp_path / "x-train-1.conllu")
    cfg.data.dev = str(tmp_path / "x-train-*.conllu")  # dev is scored: one file
    with pytest.raises(InputError, match=r"the dev split is 2 files .* cat FILES > dev\.conllu"):
        prepare(cfg)


def test_a_bad_sentence_in_a_later_part_is_reported_in_that_part(tmp_path: Path) -> None:
    write_corpus(tmp_path / "x-train-1.conllu", learnable_tags(make_corpus(3, seed=8)))
    broken = tmp_path / "x-train-2.conllu"
    broken.write_text("1\tword\t_\t_\t_\t_\t7\tnsubj\t_\t_\n\n", encoding="utf-8")
    cfg = tiny_config(tmp_path, make_corpus(3))
    cfg.data.train = str(tmp_path / "x-train-*.conllu")
    with pytest.raises(InputError) as caught:
        prepare(cfg)
    assert str(broken) in str(caught.value) and "line 1" in str(caught.value)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"dev_holdout": 0.0}, "above 0 and at most 0.5"),
        ({"dev_holdout": 0.7}, "above 0 and at most 0.5"),
        ({"dev_holdout": 0.1, "dev": "dev.conllu"}, "give one"),
        ({"dev": None, "max_train_sentences": 1}, "cannot be held out of a single"),
    ],
)
def test_bad_dev_holdout_settings_are_input_errors(
    tmp_path: Path, setting: dict, message: str
) -> None:
    cfg = tiny_config(tmp_path, make_corpus(5))
    cfg.data.dev = None
    for key, value in setting.items():
        cfg.data[key] = value
    with pytest.raises(InputError, match=message):
        prepare(cfg)


def test_config_typos_fail_clearly() -> None:
    from hydra import compose, initialize_config_dir
    from hydra.errors import ConfigCompositionException

    register_configs()
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["system=swap", "trainer=quick"])
        assert cfg.system.name == "swap" and cfg.trainer.max_epochs == 2
        with pytest.raises(ConfigCompositionException, match="max_epoch"):
            compose("config", overrides=["trainer.max_epoch=3"])
        with pytest.raises(ConfigCompositionException, match="lstm_hiden"):
            compose("config", overrides=["model.lstm_hiden=3"])
        with pytest.raises(ConfigCompositionException):
            compose("config", overrides=["trainer.max_epochs=many"])
        # The custom preset's test path is mandatory-missing (???): no test evaluation.
        custom = compose("config", overrides=["data=custom", "data.train=a", "data.dev=b"])
        assert configured_test_file(custom.data) is None
        # Without data.dev the dev split is held out of the training sentences.
        assert compose("config", overrides=["data=custom", "data.train=a"]).data.dev is None


@pytest.mark.parametrize("system_name", available_systems())
def test_every_system_has_a_config_group_that_builds_it(system_name: str) -> None:
    """``system=<name>`` composes and its options build the system (train.py's path)."""
    from hydra import compose, initialize_config_dir

    register_configs()
    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"system={system_name}"])
    assert cfg.system.name == system_name
    options = OmegaConf.to_container(cfg.system.options)
    assert build_system(system_name, ["dep", "root"], options).name == system_name


def test_hydra_smoke_run(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "tiny.conllu", make_corpus(15, seed=9))
    run_dir = tmp_path / "run"
    command = [
        sys.executable, "train.py", "data=custom", f"data.train={corpus}",
        f"data.dev={corpus}", f"data.test={corpus}", "trainer=quick", "model=small",
        "system=arc_hybrid", "analysis.run=true", f"hydra.run.dir={run_dir}",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (run_dir / CHECKPOINT_NAME).is_file()
    records = [json.loads(x) for x in (run_dir / METRICS_NAME).read_text().splitlines()]
    kinds = [r.get("epoch", r.get("split", "stopped" in r and "stopped")) for r in records]
    assert kinds == [1, 2, "stopped", "test"]
    best = max(records[:2], key=lambda r: r["dev"]["las"])
    assert records[3]["las"] == best["dev"]["las"]  # test file == dev file here
    assert "stopped after epoch 2: max_epochs (2) reached" in done.stdout
    assert "arc_hybrid" in (run_dir / "config.yaml").read_text()
    study = json.loads((run_dir / "corpus_study.json").read_text())
    assert set(study) == {"train", "dev", "test"}  # the corpus study ran first
    typo = subprocess.run(
        [*command[:-1], "trainer.max_epoch=1", f"hydra.run.dir={tmp_path / 'typo'}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert typo.returncode != 0 and "max_epoch" in typo.stderr
    added = subprocess.run(
        [*command[:-1], "+trainer.max_epoch=1", f"hydra.run.dir={tmp_path / 'plus'}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert added.returncode == 2
    assert "unknown configuration key 'trainer.max_epoch'" in added.stdout + added.stderr


@pytest.mark.slow
@pytest.mark.parametrize("oracle", ["static", "dynamic"])
def test_torchrun_trains_with_two_cpu_processes(tmp_path: Path, oracle: str) -> None:
    """Both oracles: the dynamic one parses inside the data-parallel forward pass."""
    corpus = write_corpus(tmp_path / "tiny.conllu", make_corpus(16, seed=10))
    run_dir = tmp_path / "ddp"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
        "--standalone", "train.py", "data=custom", f"data.train={corpus}",
        f"data.dev={corpus}", f"data.test={corpus}", "trainer=quick", "model=small",
        "trainer.batch_tokens=40", f"trainer.oracle={oracle}", "trainer.exploration_from_epoch=1",
        f"hydra.run.dir={run_dir}",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(x) for x in (run_dir / METRICS_NAME).read_text().splitlines()]
    kinds = [r.get("epoch", r.get("split", "stopped" in r and "stopped")) for r in records]
    assert kinds == [1, 2, "stopped", "test"]  # rank 0 alone
    # Both ranks trained: together they saw (nearly) every word, each about half the steps.
    words = sum(len(s) for s in make_corpus(16, seed=10))
    assert 0.5 * words < records[0]["train_words"] <= words
    assert "2 process(es)" in done.stderr + done.stdout
    assert load_parser(run_dir / CHECKPOINT_NAME).system.name == "arc_eager"


def test_training_stops_by_patience_or_update_budget_and_says_why(tmp_path: Path) -> None:
    corpus = make_corpus(12, seed=4)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # lr 0 learns nothing: dev LAS never improves after epoch 1, so patience 2 ends at 3.
    cfg = tiny_config(tmp_path / "a", corpus, max_epochs=50, patience=2, lr=0.0)
    result = train(cfg, tmp_path / "a" / "run")
    stopped = json.loads((tmp_path / "a" / "run" / METRICS_NAME).read_text().splitlines()[-1])
    assert stopped["stopped"] == "patience: no better dev LAS for 2 epochs"
    assert stopped["limit"] == "patience"
    assert (stopped["best_epoch"], stopped["epochs"]) == (1, 3) == (result.best_epoch, 3)
    # One update per epoch (the whole corpus is one batch): the budget ends at epoch 2.
    cfg = tiny_config(tmp_path / "b", corpus, max_epochs=50, patience=50, max_updates=2)
    train(cfg, tmp_path / "b" / "run")
    records = (tmp_path / "b" / "run" / METRICS_NAME).read_text().splitlines()
    stopped = json.loads(records[-1])
    assert stopped["stopped"] == "max_updates (2) reached" and stopped["epochs"] == 2
    assert stopped["limit"] == "max_updates"
    assert stopped["updates"] == 2


def test_learning_rate_decays_on_a_plateau_and_resumes_decayed(tmp_path: Path) -> None:
    corpus = make_corpus(8, seed=12)
    # A learning rate this small changes no decision: dev LAS is the same every epoch.
    settings = {"max_epochs": 6, "patience": 5, "lr": 1e-9, "lr_decay": 0.5, "lr_patience": 2}
    cfg = tiny_config(tmp_path, corpus, **settings)
    result = train(cfg, tmp_path / "straight")
    assert [r["lr"] for r in result.history] == pytest.approx(
        [1e-9, 1e-9, 5e-10, 5e-10, 2.5e-10, 2.5e-10]
    )
    assert [r["lr_decayed"] for r in result.history] == [False, False, True, False, True, False]
    # The checkpoint holds the decayed rate: a resumed run goes on from it.
    cfg.trainer.max_epochs = 3
    train(cfg, tmp_path / "first")
    cfg.trainer.max_epochs = 4
    cfg.trainer.resume = str(tmp_path / "first" / LAST_NAME)
    resumed = train(cfg, tmp_path / "resumed")
    assert [(r["epoch"], r["lr"]) for r in resumed.history] == [(4, pytest.approx(5e-10))]
    for key, value in (("lr_decay", 0.0), ("lr_decay", 1.5), ("lr_patience", 0)):
        bad = tiny_config(tmp_path, corpus, **{key: value})
        with pytest.raises(InputError, match=f"trainer.{key}="):
            prepare(bad)


def test_a_plateau_at_the_lowest_learning_rate_ends_the_run(tmp_path: Path) -> None:
    """After ``max_lr_decays`` decays the next plateau of ``lr_patience`` epochs ends the run
    (long before ``patience``), and a resumed run counts the decays made before it."""
    corpus = make_corpus(8, seed=12)
    settings = {"max_epochs": 20, "patience": 50, "lr": 1e-9, "lr_decay": 0.5, "lr_patience": 2}
    cfg = tiny_config(tmp_path, corpus, **settings, max_lr_decays=2)
    result = train(cfg, tmp_path / "straight")
    # Dev LAS is the same every epoch: plateaus end at epochs 3 and 5 (decays), then 7 (stop).
    decayed = [r["lr_decayed"] for r in result.history]
    assert decayed == [False, False, True, False, True, False, False]
    assert result.history[-1]["lr"] == pytest.approx(2.5e-10)
    stopped = json.loads((tmp_path / "straight" / METRICS_NAME).read_text().splitlines()[-1])
    assert stopped["limit"] == "max_lr_decays" and stopped["epochs"] == 7
    assert stopped["stopped"] == (
        "patience: no better dev LAS for 6 epochs at the lowest learning rate "
        "(2 decays: max_lr_decays)"
    )
    cfg.trainer.max_epochs = 4
    train(cfg, tmp_path / "first")
    cfg.trainer.max_epochs = 20
    cfg.trainer.resume = str(tmp_path / "first" / LAST_NAME)
    resumed = train(cfg, tmp_path / "resumed")
    assert [r["epoch"] for r in resumed.history] == [5, 6, 7]
    cfg = tiny_config(tmp_path, corpus, max_lr_decays=-1)
    with pytest.raises(InputError, match=r"trainer\.max_lr_decays=-1"):
        prepare(cfg)


def test_training_flushes_denormal_numbers_to_zero(tmp_path: Path) -> None:
    """Training computes with numbers below float32's normal range as zeros (a CPU computes
    with them many times slower, and shrinking gradients make them)."""
    torch.set_flush_denormal(False)  # as a new process starts (an earlier training flushed)
    denormal = torch.tensor([torch.finfo(torch.float32).tiny / 4])
    try:
        assert (denormal * 1.0).item() > 0
        train(tiny_config(tmp_path, make_corpus(4, seed=3), max_epochs=1), tmp_path / "run")
        assert (denormal * 1.0).item() == 0.0
    finally:
        torch.set_flush_denormal(False)


def test_averaged_weights_are_evaluated_kept_and_resumed(tmp_path: Path) -> None:
    """With ``trainer.average_epochs`` the dev scores and ``checkpoint.pt`` are those of the
    averaged weights, ``last.pt`` keeps the raw ones and the average, and a resumed run goes
    on with both as an uninterrupted one does."""
    corpus = make_corpus(12, seed=16)
    cfg = tiny_config(tmp_path, corpus, max_epochs=1, batch_tokens=30, average_epochs=1.0)
    first = train(cfg, tmp_path / "first")
    best = load_checkpoint(tmp_path / "first" / CHECKPOINT_NAME)
    last = load_checkpoint(tmp_path / "first" / LAST_NAME)
    average = last["training"]["average"]
    assert average["updates"] == first.history[0]["steps"] > 1
    loaded = load_parser(tmp_path / "first" / CHECKPOINT_NAME)
    names = [name for name, _ in loaded.model.named_parameters()]
    for name, weights in zip(names, average["weights"], strict=True):
        torch.testing.assert_close(best["state_dict"][name], weights)
    assert any(
        not torch.equal(best["state_dict"][name], last["state_dict"][name]) for name in names
    )
    data = prepare(cfg)
    scores = evaluate_parser(
        loaded.model, loaded.system, data.dev_corpus, data.dev_sentences, loaded.vocabs,
        batch_tokens=1000, device=CPU,
    )  # fmt: skip
    assert scores["las"] == first.best_las == first.history[0]["dev"]["las"]
    cfg.trainer.max_epochs = 2
    straight = train(cfg, tmp_path / "straight")
    cfg.trainer.resume = str(tmp_path / "first" / LAST_NAME)
    resumed = train(cfg, tmp_path / "resumed")
    assert resumed.history[0]["dev"]["las"] == straight.history[1]["dev"]["las"]
    a = load_checkpoint(tmp_path / "straight" / LAST_NAME)["training"]["average"]
    b = load_checkpoint(tmp_path / "resumed" / LAST_NAME)["training"]["average"]
    assert a["updates"] == b["updates"]
    for x, y in zip(a["weights"], b["weights"], strict=True):
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-6)
    bad = tiny_config(tmp_path, corpus, average_epochs=-1.0)
    with pytest.raises(InputError, match=r"trainer\.average_epochs="):
        prepare(bad)


def test_resume_with_another_model_config_names_the_keys(tmp_path: Path) -> None:
    sentences = make_corpus(6, seed=15)
    cfg = tiny_config(tmp_path, sentences, max_epochs=1)
    train(cfg, tmp_path / "first")
    cfg.trainer.max_epochs = 2
    cfg.trainer.resume = str(tmp_path / "first" / LAST_NAME)
    cfg.model.mlp_hidden += 8
    with pytest.raises(CheckpointError, match=r"checkpoint's in model\.mlp_hidden"):
        train(cfg, tmp_path / "resumed")


def test_dev_evaluation_on_graphs_scores_what_the_eager_loop_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On CUDA the dev evaluation replays graphs (trainer.dev_decoder); here their fixed-length
    loop runs eagerly in the trainer, across epochs, and must give the eager loop's scores."""
    from neuralparse.training import trainer as trainer_module

    sentences = make_corpus(24, seed=8, projective=False)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    eager = train(tiny_config(tmp_path / "a", sentences, max_epochs=2), tmp_path / "a" / "run")
    recorded = []
    assert trainer_module.dev_decoder(None, get_system("arc_eager"), torch.device("cpu")) is None

    def graphed(model, system, device):
        recorded.append(system.name)
        search = trainer_module.GraphedSearch(model, system)
        return lambda batch, table: search(batch, table)[:2]

    monkeypatch.setattr(trainer_module, "dev_decoder", graphed)
    cfg = tiny_config(tmp_path / "b", sentences, max_epochs=2)
    replayed = train(cfg, tmp_path / "b" / "run")
    assert recorded == ["arc_eager"]
    assert [r["dev"] for r in replayed.history] == [r["dev"] for r in eager.history]


def test_the_default_joint_model_trains_and_evaluates_on_cuda(tmp_path: Path) -> None:
    """Two epochs on CUDA, character model and dev evaluation on graphs included (the
    character vectors are computed on the device, so moving a batch must not pin them)."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    cfg = tiny_config(tmp_path, make_corpus(12, seed=4), max_epochs=2, device="cuda")
    train(cfg, tmp_path / "run")
    loaded = load_parser(tmp_path / "run" / CHECKPOINT_NAME, "cuda")
    assert loaded.model.encoder.chars is not None
