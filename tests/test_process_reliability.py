"""Process reliability: checkpoints, resuming, devices and threads, one error type and exit
status, native memory of long prediction runs.

Regression tests for inconsistent checkpoints that gave KeyError/RuntimeError tracebacks, torch's
advice to unpickle a refused file, metrics.jsonl repeating an epoch after a resume, device and
thread tracebacks, and entry points that disagreed on exit status.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from neuralparse import Parser
from neuralparse.analyze import main as analyze_main
from neuralparse.errors import InputError, OptionError
from neuralparse.evaluate import main as evaluate_main
from neuralparse.oracle import main as oracle_main
from neuralparse.runtime import memory, openmp
from neuralparse.runtime.checkpoint import CheckpointError, load_parser
from neuralparse.runtime.cli import USER_ERROR
from neuralparse.runtime.devices import cpu_model, describe_machine, resolve_device, set_threads
from neuralparse.training import trainer as trainer_module
from neuralparse.training.trainer import LAST_NAME, METRICS_NAME, forget_epochs_after, train
from tests.parser_fixtures import make_corpus, write_corpus
from tests.test_predict import train_tiny_checkpoint
from tests.test_training import tiny_config

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_checkpoint(tmp_path_factory.mktemp("process"), "arc_standard")


def break_checkpoint(data: dict[str, Any], case: str) -> None:
    """Make ``data`` (a checkpoint) inconsistent in the way ``case`` says."""
    if case in ("no_state_dict", "no_vocabularies"):
        del data[case.removeprefix("no_")]
    elif case == "weights_of_another_size":
        data["model"]["config"]["lstm_hidden"] += 8
    elif case == "missing_weight":
        del data["state_dict"][next(iter(data["state_dict"]))]
    elif case == "unknown_system":
        data["system"] = "arc_psychic"
    elif case == "labels_not_strings":
        data["labels"] = list(range(len(data["labels"])))
    elif case == "model_not_a_dict":
        data["model"] = "big"
    elif case == "system_option_unknown":
        data["system_options"] = {"oracle": "psychic"}


BROKEN_CHECKPOINTS = {
    "no_state_dict": "it has no state_dict entry",
    "no_vocabularies": "it has no vocabularies entry",
    "weights_of_another_size": "its weights do not fit the model its configuration describes",
    "missing_weight": "is missing",
    "unknown_system": "unknown transition system 'arc_psychic'",
    "labels_not_strings": "its labels are not all strings",
    "model_not_a_dict": "its model entry is of type str, not dict",
    "system_option_unknown": "system arc_standard with options {'oracle': 'psychic'}",
}


def broken_copy(checkpoint: Path, case: str, folder: Path) -> Path:
    data = torch.load(checkpoint, weights_only=True)
    break_checkpoint(data, case)
    path = folder / f"{case}.pt"
    torch.save(data, path)
    return path


@pytest.mark.parametrize("case", sorted(BROKEN_CHECKPOINTS))
def test_inconsistent_checkpoint_is_a_checkpoint_error_naming_file_and_problem(
    case: str, checkpoint: Path, tmp_path: Path
) -> None:
    path = broken_copy(checkpoint, case, tmp_path)
    for load in (load_parser, Parser.load):
        with pytest.raises(CheckpointError) as caught:
            load(path)
        message = str(caught.value)
        assert message.startswith(f"{path}: ") and BROKEN_CHECKPOINTS[case] in message
        assert "\n" not in message


def test_resume_from_an_inconsistent_checkpoint_fails_before_reading_data(
    checkpoint: Path, tmp_path: Path
) -> None:
    cfg = tiny_config(tmp_path, make_corpus(4, seed=3), system="arc_standard")
    cfg.trainer.resume = str(broken_copy(checkpoint, "weights_of_another_size", tmp_path))
    cfg.data.train = str(tmp_path / "missing.conllu")  # never reached
    with pytest.raises(CheckpointError, match="weights do not fit") as caught:
        train(cfg, tmp_path / "run")
    assert caught.value.source == cfg.trainer.resume


class RunsCode:
    """Unpickling this calls ``os.mkdir(marker)``: what a malicious checkpoint would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.mkdir, (str(self.marker),))


def test_a_pickle_that_runs_code_is_refused_without_advice_to_unpickle_it(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "model.pt"
    torch.save({"format_version": 1, "payload": RunsCode(marker)}, path)
    for load in (load_parser, Parser.load):
        with pytest.raises(CheckpointError) as caught:
            load(path)
        message = str(caught.value)
        assert message.startswith(f"{path}: refused: the file is a pickle that calls ")
        assert "mkdir" in message and "neuralparse refuses to unpickle code" in message
        assert "weights_only" not in message and "trusted" not in message
    assert not marker.exists()


# -- metrics.jsonl after a resume ----------------------------------------------------------------


def epochs_in(metrics: Path) -> list[int]:
    return [r["epoch"] for r in map(json.loads, metrics.read_text().splitlines()) if "epoch" in r]


def test_resume_after_a_kill_between_metrics_line_and_last_pt_lists_each_epoch_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tiny_config(tmp_path, make_corpus(6, seed=2), max_epochs=3, evaluate_test=False)
    run = tmp_path / "run"
    real_save = trainer_module.save_checkpoint

    def killed_before_last_pt_of_epoch_2(path: Path, data: dict[str, Any]) -> None:
        if Path(path).name == LAST_NAME and data["training"]["epoch"] == 2:
            raise SystemExit(143)  # SIGTERM, after epoch 2's metrics line was appended
        real_save(path, data)

    monkeypatch.setattr(trainer_module, "save_checkpoint", killed_before_last_pt_of_epoch_2)
    with pytest.raises(SystemExit):
        train(cfg, run)
    assert epochs_in(run / METRICS_NAME) == [1, 2]
    monkeypatch.setattr(trainer_module, "save_checkpoint", real_save)
    cfg.trainer.resume = str(run / LAST_NAME)
    result = train(cfg, run)
    assert [r["epoch"] for r in result.history] == [2, 3]
    assert epochs_in(run / METRICS_NAME) == [1, 2, 3]
    assert [p.name for p in run.iterdir() if p.name.startswith(".")] == []


def test_forget_epochs_after_drops_later_lines_and_a_torn_one(tmp_path: Path) -> None:
    metrics = tmp_path / METRICS_NAME
    lines = [json.dumps({"epoch": e, "loss": 1.0}) + "\n" for e in (1, 2, 3)]
    finished = [json.dumps({"stopped": "max_epochs (3) reached", "epochs": 3}) + "\n"]
    metrics.write_text("".join(lines + finished))
    forget_epochs_after(metrics, 3)  # a finished run resumed for more epochs
    assert metrics.read_text() == "".join(lines)
    metrics.write_text("".join(lines) + '{"epoch": 4, "lo')  # killed while appending
    forget_epochs_after(metrics, 2)
    assert metrics.read_text() == "".join(lines[:2])
    forget_epochs_after(metrics, 2)
    assert metrics.read_text() == "".join(lines[:2])
    assert [p.name for p in tmp_path.iterdir()] == [METRICS_NAME]


# -- devices and threads -------------------------------------------------------------------------


def test_devices_this_machine_lacks_are_input_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_device("cpu") == CPU
    for name in ("tpu", "cuda:x", "", "cpu:0:1"):
        with pytest.raises(InputError, match="expected auto, cpu, cuda or cuda:N"):
            resolve_device(name)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(InputError, match=r"trainer\.device=cuda:0 but CUDA is not available"):
        resolve_device("cuda:0", "trainer.device")
    assert resolve_device("auto") == CPU
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(InputError, match=r"device=cuda:7 but this machine has 1 CUDA device\(s\)"):
        resolve_device("cuda:7")
    assert resolve_device("cuda:0") == torch.device("cuda:0")


def test_measurements_name_the_cpu_and_its_instruction_set(monkeypatch: pytest.MonkeyPatch) -> None:
    info = describe_machine(CPU)
    capabilities = {"DEFAULT", "VSX", "Z VECTOR", "NO AVX", "AVX2", "AVX512", "SVE256"}
    assert info["cpu_capability"] in capabilities
    assert info["cpu_model"] and "gpu" not in info
    # Without /proc/cpuinfo (macOS, Windows) the model falls back to the architecture.
    real_open = open

    def no_cpuinfo(path, *args, **kwargs):
        if str(path) == "/proc/cpuinfo":
            raise FileNotFoundError(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_cpuinfo)
    assert cpu_model() == (platform.processor() or platform.machine())


def test_thread_counts_below_one_are_input_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    for threads in (-3, 0):
        with pytest.raises(InputError, match=f"trainer.threads={threads}: expected a positive"):
            set_threads(threads, "trainer.threads")
    monkeypatch.setattr(torch, "set_num_threads", lambda n: pytest.fail("threads changed"))
    set_threads(None)


# -- one error type and exit status for every entry point ---------------------------------------


@pytest.fixture(scope="module")
def user_files(checkpoint: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("user_errors")
    latin1 = folder / "latin1.conllu"
    latin1.write_bytes(b"# sent_id = latin\n1\tcaf\xe9\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n")
    return {
        "checkpoint": checkpoint,
        "broken": broken_copy(checkpoint, "weights_of_another_size", folder),
        "gold": write_corpus(folder / "gold.conllu", make_corpus(6, seed=4)),
        "latin1": latin1,
        "missing": folder / "missing.conllu",
        "folder": folder,
    }


ERROR_KINDS = {
    "train.py": ("key", "device", "threads", "checkpoint", "path", "encoding"),
    "predict.py": ("key", "value", "device", "threads", "checkpoint", "path", "encoding"),
    "evaluate": ("key", "path", "encoding"),
    "analyze": ("key", "path", "encoding"),
    "oracle": ("key", "device", "path", "encoding"),
    "Parser": ("key", "device", "checkpoint", "path", "encoding"),
}
EXPECTED = {
    "value": "batch_size: Value 'many' of type 'str' could not be converted to Integer",
    "device": "device=tpu: expected auto, cpu, cuda or cuda:N",
    "threads": "threads=-3: expected a positive number of threads",
    "checkpoint": "weights_of_another_size.pt: its weights do not fit",
    "path": "missing.conllu",
    "encoding": "latin1.conllu, line 2, sentence latin: not valid utf-8",
}
UNKNOWN_KEY = {
    "train.py": "unknown configuration key 'trainer.max_epoch'",
    "predict.py": "unknown configuration key 'lenint'",
    "Parser": "unknown option(s) ['beam_width']",
}
"""What the message of an unknown key says (argparse's for the modules)."""


def expected(entry: str, kind: str) -> str:
    if kind == "key":
        return UNKNOWN_KEY.get(entry, "unrecognized arguments: --bogus (see --help)")
    return EXPECTED[kind]


def script_arguments(entry: str, kind: str, files: dict[str, Path]) -> list[str]:
    """The command line of ``train.py`` / ``predict.py`` that makes the error ``kind``."""
    if entry == "train.py":
        gold = files["gold"]
        settings = {
            "data": "custom", "data.train": gold, "data.dev": gold, "data.test": gold,
            "trainer": "quick", "model": "small", "hydra.run.dir": files["folder"] / kind,
        }  # fmt: skip
        changed = {
            "key": {"trainer.max_epoch": 3},
            "device": {"trainer.device": "tpu"},
            "threads": {"trainer.threads": -3},
            "checkpoint": {"trainer.resume": files["broken"]},
            "path": {"data.train": files["missing"]},
            "encoding": {"data.train": files["latin1"]},
        }[kind]
    else:
        settings = {
            "checkpoint": files["checkpoint"], "input": files["gold"], "output": "-",
            "device": "cpu", "progress": "false",
        }  # fmt: skip
        changed = {
            "key": {"lenint": "true"},
            "value": {"batch_size": "many"},
            "device": {"device": "tpu"},
            "threads": {"threads": -3},
            "checkpoint": {"checkpoint": files["broken"]},
            "path": {"input": files["missing"]},
            "encoding": {"input": files["latin1"]},
        }[kind]
    return [f"{key}={value}" for key, value in {**settings, **changed}.items()]


def module_arguments(entry: str, kind: str, files: dict[str, Path]) -> list[str]:
    """The command line of ``python -m neuralparse.ENTRY`` that makes the error ``kind``."""
    named = {"path": str(files["missing"]), "encoding": str(files["latin1"])}
    target = named.get(kind, str(files["gold"]))
    options = {"key": ["--bogus"], "device": ["--device", "tpu"]}.get(kind, [])
    if entry == "evaluate":
        return [*options, target, str(files["gold"])]
    if entry == "analyze":
        return [*options, target]
    return ["--system", "arc_standard", *options, target]


def parser_errors(kind: str, files: dict[str, Path]) -> list[InputError]:
    """The exceptions :class:`Parser` raises for the error ``kind``."""
    parser = Parser.load(files["checkpoint"])
    calls = {
        "key": [lambda: Parser.load(files["checkpoint"], beam_width=3)],
        "device": [lambda: Parser.load(files["checkpoint"], device="tpu")],
        "checkpoint": [lambda: Parser.load(files["broken"])],
        "path": [
            lambda: parser.parse_file(files["missing"], "-"),
            lambda: parser.evaluate(files["missing"]),
        ],
        "encoding": [
            lambda: parser.parse_file(files["latin1"], "-"),
            lambda: parser.evaluate(files["latin1"]),
        ],
    }
    errors = []
    for call in calls[kind]:
        with pytest.raises(InputError) as caught:
            call()
        errors.append(caught.value)
    return errors


@pytest.mark.parametrize(
    ("entry", "kind"), [(entry, kind) for entry, kinds in ERROR_KINDS.items() for kind in kinds]
)
def test_every_user_error_is_one_line_and_exit_status_2(
    entry: str,
    kind: str,
    user_files: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    if entry == "Parser":
        for error in parser_errors(kind, user_files):
            assert expected(entry, kind) in str(error) and "\n" not in str(error)
            assert kind != "key" or isinstance(error, OptionError)
        return
    if entry.endswith(".py"):
        done = subprocess.run(
            [sys.executable, str(REPO / entry), *script_arguments(entry, kind, user_files)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
        status, stderr = done.returncode, done.stderr
    else:
        main = {"evaluate": evaluate_main, "analyze": analyze_main, "oracle": oracle_main}[entry]
        try:
            status = main(module_arguments(entry, kind, user_files))
        except SystemExit as exit:  # argparse's bad command line
            status = exit.code
        stderr = capsys.readouterr().err
    assert status == USER_ERROR, stderr
    (error,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert expected(entry, kind) in error, stderr
    assert "Traceback" not in stderr


# -- native memory of long prediction runs -------------------------------------------------------


class FakeGlibc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


def test_allocator_settings_keep_what_the_user_set(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = FakeGlibc()
    monkeypatch.setattr(memory, "_glibc", lambda: libc)
    heap_variables = [variable for variable, _ in memory._MALLOPT.values()]
    for variable in (memory.SWITCH, memory.ONEDNN_CACHE, *heap_variables):
        monkeypatch.delenv(variable, raising=False)
    memory.bound_primitive_cache()
    memory.bound_native_heap()
    assert os.environ[memory.ONEDNN_CACHE] == "0"
    assert libc.calls == [(-3, 32 * 2**20), (-1, 128 * 1024)]  # M_MMAP_ and M_TRIM_THRESHOLD
    libc.calls.clear()
    monkeypatch.setenv(memory.ONEDNN_CACHE, "1024")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    memory.bound_primitive_cache()
    memory.bound_native_heap()
    assert os.environ[memory.ONEDNN_CACHE] == "1024" and libc.calls == [(-1, 128 * 1024)]
    libc.calls.clear()
    monkeypatch.delenv(memory.ONEDNN_CACHE)
    monkeypatch.setenv(memory.SWITCH, "0")
    memory.bound_primitive_cache()
    memory.bound_native_heap()
    assert memory.ONEDNN_CACHE not in os.environ and libc.calls == []


@pytest.mark.parametrize(
    ("device", "world_size", "gpu_driver", "policy"),
    [
        ("cpu", "1", True, None),  # one process on free cores: OpenMP's default waiting
        ("auto", "1", False, None),  # no GPU driver: auto parses on the CPU
        ("auto", "1", True, "PASSIVE"),  # worker processes share the cores with the GPU run
        ("cuda:0", "1", False, "PASSIVE"),
        ("cpu", "2", False, "PASSIVE"),  # torchrun ranks share the cores
    ],
)
def test_openmp_threads_sleep_only_where_the_cores_are_shared(
    monkeypatch: pytest.MonkeyPatch, device: str, world_size: str, gpu_driver: bool, policy: str
) -> None:
    monkeypatch.setattr(openmp, "gpu_driver_present", lambda: gpu_driver)
    monkeypatch.setenv("WORLD_SIZE", world_size)
    for variable in (openmp.WAIT_POLICY, openmp.SPIN_COUNT):
        monkeypatch.delenv(variable, raising=False)
    openmp.choose_waiting(device)
    assert os.environ.get(openmp.WAIT_POLICY) == policy
    for variable, value in ((openmp.WAIT_POLICY, "ACTIVE"), (openmp.SPIN_COUNT, "1000")):
        monkeypatch.delenv(openmp.WAIT_POLICY, raising=False)
        monkeypatch.setenv(variable, value)  # the user's choice is kept
        openmp.choose_waiting(device)
        assert os.environ.get(openmp.WAIT_POLICY) == (
            value if variable == openmp.WAIT_POLICY else None
        )


def test_commands_load_torch_only_after_choosing_how_openmp_waits() -> None:
    # OpenMP reads its variables once, when torch loads it: importing the commands must not.
    code = (
        "import sys, neuralparse.__main__, neuralparse.commands.predict, "
        "neuralparse.commands.train; assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_memory_benchmark_writes_its_table_and_json(tmp_path: Path) -> None:
    from benchmarks import memory as benchmark

    corpus = make_corpus(30, seed=5)
    out = tmp_path / "memory.json"
    source = write_corpus(tmp_path / "train.conllu", corpus)
    assert benchmark.main(["--sentences", "70", "--source", str(source),
                           "--json-out", str(out)]) == 0  # fmt: skip
    (run,) = json.loads(out.read_text())["runs"]
    assert run["sentences"] == 70 and run["peak_rss_mb"] > 0 and len(run["rss_timeline_mb"]) == 10
    words = [len(s) for s in corpus]
    assert run["words"] == 2 * sum(words) + sum(words[::3])  # twice, then spread over it


def test_busy_cores_reads_the_share_of_cpu_time_not_idle() -> None:
    stats = iter(
        [
            "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4\n",
            "cpu  200 0 150 750 150 0 0 0 0 0\ncpu0 1 2 3 4\n",  # 150 of 250 ticks busy
        ]
    )
    assert openmp.cpu_times("cpu  1 2 3 4 5 6 7 8 0 0\n") == (1 + 2 + 3 + 6 + 7 + 8, 36)
    busy = openmp.busy_cores(read=lambda: next(stats), sleep=lambda seconds: None, cores=2)
    assert busy == pytest.approx(1.2)

    def unreadable() -> str:
        raise OSError("no /proc here")

    assert openmp.busy_cores(read=unreadable, sleep=lambda seconds: None) is None


@pytest.mark.parametrize(
    ("threads", "busy", "sleeps"),
    [
        (2, 1.0, True),  # one of two cores taken: two threads would spin against it
        (2, 0.3, False),  # a background program's fraction of a core
        (2, None, False),  # not Linux: nothing measured, nothing changed
        (None, 1.0, True),  # torch's default, a thread a core
        (1, 2.0, False),  # one thread waits for no other (and nothing is measured)
    ],
)
def test_openmp_threads_sleep_where_other_programs_keep_the_cores_busy(
    monkeypatch: pytest.MonkeyPatch, threads: int | None, busy: float | None, sleeps: bool
) -> None:
    monkeypatch.setattr(openmp.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(openmp, "gpu_driver_present", lambda: False)
    measured = []

    def busy_cores() -> float | None:
        measured.append(busy)
        return busy

    environ = {"WORLD_SIZE": "1"}
    assert openmp.choose_waiting("cpu", environ, threads, busy_cores) is sleeps
    assert environ.get(openmp.WAIT_POLICY) == ("PASSIVE" if sleeps else None)
    assert measured == ([] if threads == 1 else [busy])
    environ = {openmp.WAIT_POLICY: "ACTIVE"}  # the user's choice is kept
    assert openmp.choose_waiting("cpu", environ, threads, busy_cores) is False
    assert environ[openmp.WAIT_POLICY] == "ACTIVE"
