"""Input detection, invalid UTF-8, and the safety of outputs and checkpoints.

Regression tests for defects users hit: CoNLL-U read as plain text by ``input_format=auto``,
runs writing the same output through one fixed temporary name, bad output locations noticed
only after parsing, and raw ``UnicodeDecodeError`` tracebacks.
"""

from __future__ import annotations

import io
import json
import logging
import os
import platform
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from neuralparse import Parser
from neuralparse.analyze import main as analyze_main
from neuralparse.errors import ConlluError, InputError, OptionError
from neuralparse.evaluate import main as evaluate_main
from neuralparse.io import ReadReport, Sentence, detect_format, parse_conllu_text
from neuralparse.oracle import main as oracle_main
from neuralparse.prediction import open_output, open_sentences, predict_file
from neuralparse.runtime import checkpoint as checkpoint_module
from neuralparse.runtime import memory, openmp
from neuralparse.runtime.checkpoint import CheckpointError, load_parser, save_checkpoint
from neuralparse.runtime.cli import USER_ERROR
from neuralparse.runtime.devices import cpu_model, describe_machine, resolve_device, set_threads
from neuralparse.runtime.interrupts import interruptions_held
from neuralparse.training import trainer as trainer_module
from neuralparse.training.trainer import LAST_NAME, METRICS_NAME, forget_epochs_after, train
from tests.killing import default_signals
from tests.parser_fixtures import make_corpus, write_corpus
from tests.test_predict import train_tiny_checkpoint
from tests.test_training import tiny_config

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")

GOOD = "# sent_id = good\n1\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n2\tw2\t_\t_\t_\t_\t_\t_\t_\t_\n\n"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_checkpoint(tmp_path_factory.mktemp("reliability"), "arc_standard")


def predict(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, str(REPO / "predict.py"), "device=cpu", "progress=false", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def source_of(kind: str, data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``data`` as a path, as standard input (``-``) or as an open text file, and its name."""
    if kind == "path":
        path = tmp_path / "in.conllu"
        path.write_bytes(data)
        return path, str(path)
    if kind == "stdin":
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        return "-", "<stdin>"
    return io.StringIO(data.decode(), newline=""), "<file>"


def read_all(source: Any, **options: Any) -> list[Sentence]:
    with open_sentences(source, **options) as sentences:
        return list(sentences)


# -- defect 1: CoNLL-U that input_format=auto read as plain text ------------------------------

# A first sentence whose first word line is malformed, then a good sentence: strict reading
# must stop at line 2 of sentence "bad", lenient reading must keep the good sentence.
MALFORMED_FIRST_WORD_LINE = {
    "nine_columns": ("1\tw1\t_\t_\t_\t_\t_\t_\t_\n", "found 9"),
    "non_integer_id": ("one\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n", "malformed token id"),
    "tab_inside_form": ("1\tNew\tYork\t_\t_\t_\t_\t_\t_\t_\t_\n", "found 11"),
    "spaces_for_tabs": ("1 w1 _ _ _ _ _ _ _ _\n", "found 1"),
}


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
@pytest.mark.parametrize("case", sorted(MALFORMED_FIRST_WORD_LINE))
def test_malformed_conllu_is_detected_and_reported_with_its_location(
    case: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    word_line, reason = MALFORMED_FIRST_WORD_LINE[case]
    data = ("# sent_id = bad\n" + word_line + "\n" + GOOD).encode()
    assert detect_format(data.decode().splitlines(keepends=True)) == "conllu"
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(ConlluError, match=reason) as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 2, "bad")
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    report = ReadReport()
    with pytest.warns(UserWarning, match="skipped 1"):
        assert [s.sent_id for s in read_all(source, lenient=True, report=report)] == ["good"]
    assert [(s.line, s.sent_id) for s in report.skipped] == [(2, "bad")]


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_byte_order_mark_does_not_hide_conllu(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = ("\ufeff1\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n\n" + GOOD).encode()
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    with open_sentences(source) as sentences:
        first, second = sentences
    assert (first.forms, second.forms) == (["w1"], ["w1", "w2"])
    assert first.to_conllu().startswith("\ufeff1\tw1\t")  # the mark is kept on output
    assert detect_format(["\ufeff# sent_id = 1\n", "1\tw1\n"]) == "conllu"


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_many_leading_comments_without_equals_sign_do_not_hide_conllu(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    comments = "# newdoc\n" + "# a licence line without an equals sign\n" * 60
    data = (comments + GOOD).encode()
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    with open_sentences(source) as sentences:
        (sentence,) = sentences
    assert (sentence.forms, sentence.sent_id) == (["w1", "w2"], "good")
    assert sentence.to_conllu() == data.decode()  # the comments are kept


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The cat sat .\nIt ran .\n", "text"),
        ("1 . Introduction\n2 . Methods\n", "text"),  # numbered lines are not word lines
        ("1 The cat sat on the mat and then left\n", "text"),  # 10 tokens, HEAD not a number
        ("#hashtag day\n" * 70 + "sun is out\n", "text"),
        ("  w4\tw5 zzz  w6 \nw7\n", "text"),  # a tab between words
        ("a\tb\tc\nd e\n", "text"),
        ("a\tb\tc\n3\tw3\t_\n", "conllu"),  # a token id before a tab: CoNLL-U
        ("a\tb\tc\n" + "x\t" * 9 + "x\n", "conllu"),  # ten tab-separated columns
        ("the cat\n" * 60 + "1\tw1\t_\n", "text"),  # past the 50 probed lines
        ("# sent_id = 1\n# text = w1\n", "conllu"),
        ("", "text"),
    ],
)
def test_detection_rule(text: str, expected: str) -> None:
    assert detect_format(text.splitlines(keepends=True)) == expected


def test_detected_format_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "in.txt"
    path.write_text("w1 w2\n")
    caplog.set_level(logging.INFO, logger="neuralparse.predict")
    with open_sentences(path) as sentences:
        assert [s.forms for s in sentences] == [["w1", "w2"]]
    path.write_text(GOOD)
    with open_sentences(path) as sentences:
        list(sentences)
    messages = [r.getMessage() for r in caplog.records if r.name == "neuralparse.predict"]
    assert len(messages) == 2
    assert str(path) in messages[0] and "plain text" in messages[0]
    assert "CoNLL-U" in messages[1] and "line 1 is a '# key = value' comment" in messages[1]


@pytest.mark.parametrize("suffix", [".conllu", ".txt"])
def test_a_file_of_comments_only_is_read_as_its_name_says(tmp_path: Path, suffix: str) -> None:
    """Comments without ``=`` could be hashtags of plain text or a CoNLL-U file that lost its
    word lines; only a ``.conllu`` name tips it, so that such a file gets the CoNLL-U reader's
    error (naming its first line) rather than having its comments parsed as words."""
    path = tmp_path / f"notes{suffix}"
    path.write_text("# just a note\n\n")
    if suffix == ".conllu":
        with (
            pytest.raises(
                ConlluError, match=r"notes\.conllu, line 1, sentence #1: .*no word lines"
            ),
            open_sentences(path) as sentences,
        ):
            list(sentences)
    else:
        with open_sentences(path) as sentences:
            assert [s.forms for s in sentences] == [["#", "just", "a", "note"]]


def test_predict_py_parses_stdin_conllu_with_byte_order_mark(checkpoint: Path) -> None:
    data = ("\ufeff" + GOOD).encode()
    result = predict(f"checkpoint={checkpoint}", "input=-", "output=-", stdin=data)
    assert result.returncode == 0, result.stderr.decode()
    (parsed,) = parse_conllu_text(result.stdout.decode())
    assert result.stdout.startswith("\ufeff# sent_id = good\n".encode())
    assert parsed.heads is not None and parsed.sent_id == "good"
    assert b"<stdin>: detected CoNLL-U" in result.stderr


# -- defect 2: temporary files of outputs and checkpoints -------------------------------------


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


def test_two_writers_of_one_output_do_not_corrupt_it(tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    with open_output(out) as first:
        first.write("first\n" * 1000)
        with open_output(out) as second:
            second.write("second\n")
            partials = leftovers(tmp_path)
        assert out.read_text() == "second\n"
    assert out.read_text() == "first\n" * 1000  # the last to finish wins, whole
    assert len(partials) == 2 and all(p.startswith(".out.conllu.") for p in partials)
    assert leftovers(tmp_path) == []


def raise_keyboard_interrupt() -> None:
    raise KeyboardInterrupt


def raise_value_error() -> None:
    raise ValueError("boom")


def send_sigterm() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)  # interrupted by the handler's SystemExit
    raise AssertionError("the SIGTERM handler did not run")


@pytest.mark.parametrize(
    ("interrupt", "expected"),
    [
        (raise_value_error, ValueError),
        (raise_keyboard_interrupt, KeyboardInterrupt),
        (send_sigterm, SystemExit),
    ],
)
def test_an_interrupted_output_leaves_no_file(
    interrupt: Any, expected: type[BaseException], tmp_path: Path
) -> None:
    def exit_on_sigterm(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # what predict.py's SIGTERM handler does

    previous = signal.signal(signal.SIGTERM, exit_on_sigterm)
    try:
        out = tmp_path / "out.conllu"
        with pytest.raises(expected), open_output(out) as handle:
            handle.write("half a sentence")
            interrupt()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert list(tmp_path.iterdir()) == []


SIGNAL_AT_EXIT = """
import atexit, os, signal, sys, time
from neuralparse.runtime.cli import exit_on_sigterm, run_program

def main():
    exit_on_sigterm()
    # Exit callbacks run after the command's work; the signal comes in one of them.
    atexit.register(lambda: (os.kill(os.getpid(), int(sys.argv[1])), time.sleep(5)))
    return 0

run_program(main)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_after_the_work_ends_the_process_without_a_traceback(signum: int) -> None:
    # A kill that lands while the interpreter runs its exit callbacks (torch has some) used
    # to raise SystemExit/KeyboardInterrupt inside one: "Exception ignored" and a traceback.
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_AT_EXIT, str(int(signum))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signum, done.stderr
    assert "Traceback" not in done.stderr


def run_command(main: str) -> subprocess.CompletedProcess[str]:
    """Run ``main`` (the body of a command's ``main``) as a program through ``run_program``."""
    program = (
        "from neuralparse.runtime.cli import run_program, user_errors\n"
        f"def main():\n    {main}\nrun_program(main)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )


def test_ctrl_c_ends_a_command_with_one_line_and_status_130() -> None:
    done = run_command("raise KeyboardInterrupt")
    assert done.returncode == 130 and done.stderr == "error: interrupted\n", done.stderr


SLOW_COMMAND = """
import signal, sys
signal.raise_signal(signal.SIGINT)  # Ctrl-C while the command's module (torch...) loads
sys.modules[__name__].LOADED = True

def main(arguments):
    return 0
"""


RUNS_SLOW_COMMAND = """
import sys
from neuralparse import commands
from neuralparse.runtime.cli import run_program

commands.COMMANDS["slow"] = ("slow_command", "loads slowly")

def main():
    try:
        return commands.main(["slow"])
    finally:
        print(getattr(sys.modules.get("slow_command"), "LOADED", False), flush=True)

run_program(main)
"""


def test_ctrl_c_while_a_command_loads_waits_for_the_import(tmp_path: Path) -> None:
    # Cut short, importing torch fails in numpy with an error of its own (a traceback, 1).
    (tmp_path / "slow_command.py").write_text(SLOW_COMMAND)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", RUNS_SLOW_COMMAND],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": path},
        preexec_fn=default_signals,  # Ctrl-C delivered even where the suite runs with it ignored
    )
    assert done.stdout == "True\n", "the import was cut short"
    assert done.returncode == 130 and done.stderr == "error: interrupted\n", done.stderr


WRITES_A_LOT = """
import contextlib, sys
from neuralparse.runtime.cli import run_program, user_errors

def main():
    with user_errors() if sys.argv[1] == "user_errors" else contextlib.nullcontext():
        for _ in range(10_000):
            print("x" * 1000)
    return 0

run_program(main)
"""


@pytest.mark.parametrize("where", ["user_errors", "plain"])
def test_a_closed_standard_output_ends_a_command_quietly(where: str) -> None:
    # `predict.py output=- | head`: the reader goes away; as Unix tools, no message, 141.
    process = subprocess.Popen(
        [sys.executable, "-c", WRITES_A_LOT, where],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.read(10)
    process.stdout.close()
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGPIPE and errors == b"", errors.decode()


def test_a_broken_pipe_elsewhere_stays_an_error() -> None:
    done = run_command("with user_errors():\n        raise BrokenPipeError(32, 'Broken pipe')")
    assert done.returncode == USER_ERROR and done.stderr == "error: [Errno 32] Broken pipe\n"


def test_run_program_exits_with_the_command_status() -> None:
    done = run_command("return 3")
    assert done.returncode == 3, done.stderr


def test_output_keeps_the_usual_permissions(tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    with open_output(out) as handle:
        handle.write("x\n")
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_named_pipe_is_written_not_replaced(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    with open_output(pipe) as handle:
        handle.write("through the pipe\n")
    reader.join(timeout=10)
    assert received == [b"through the pipe\n"]
    assert stat.S_ISFIFO(pipe.stat().st_mode) and leftovers(tmp_path) == []


def test_save_checkpoint_uses_a_unique_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "checkpoint.pt"
    real_save = torch.save
    seen: list[str] = []

    def save_and_meanwhile_save_again(data: Any, target: Any) -> None:
        real_save(data, target)
        seen.extend(leftovers(tmp_path))
        if data["run"] == 1:  # a second writer of the same checkpoint, while the first writes
            save_checkpoint(path, {"run": 2})

    monkeypatch.setattr(checkpoint_module.torch, "save", save_and_meanwhile_save_again)
    save_checkpoint(path, {"run": 1})
    assert torch.load(path, weights_only=True) == {"run": 1}
    assert len(set(seen)) == 2 and all(name.startswith(".checkpoint.pt.") for name in seen)

    def fail(data: Any, target: Any) -> None:
        real_save(data, target)
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_module.torch, "save", fail)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, {"run": 3})
    assert torch.load(path, weights_only=True) == {"run": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]


@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGTERM, SystemExit), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_signal_during_save_checkpoint_waits_for_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int, raised: type[BaseException]
) -> None:
    # Unwound half-way, torch.save's zip writer raised a second error that hid the
    # interruption: a killed train.py ended with a traceback and status 1, not 143.
    path = tmp_path / "checkpoint.pt"
    real_save = torch.save

    def interrupted_save(data: Any, target: Any) -> None:
        signal.raise_signal(signum)
        real_save(data, target)

    def terminate(number: int, frame: object) -> None:
        raise SystemExit(128 + number)

    earlier = signal.signal(signal.SIGTERM, terminate)
    # Python's own Ctrl-C handler, even where the suite was started with SIGINT ignored.
    earlier_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(checkpoint_module.torch, "save", interrupted_save)
        with pytest.raises(raised):
            save_checkpoint(path, {"run": 1})
        assert signal.getsignal(signal.SIGTERM) is terminate
    finally:
        signal.signal(signal.SIGTERM, earlier)
        signal.signal(signal.SIGINT, earlier_int)
    assert torch.load(path, weights_only=True) == {"run": 1}
    assert leftovers(tmp_path) == []


def test_interruptions_are_held_only_in_the_main_thread() -> None:
    # Python runs signal handlers in the main thread only, and refuses to install them
    # elsewhere: another thread's block runs as it is, with the handlers untouched.
    seen: list[object] = []

    def elsewhere() -> None:
        with interruptions_held():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(timeout=10)
    assert seen == [before]
    with interruptions_held():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


# -- defect 3: bad output locations are refused before anything is parsed --------------------


class Untouchable:
    """A parser that fails the test as soon as anything uses it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"parsing started (parser.{name}) before the output was checked")


def bad_output(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if kind == "missing_folder":
        return tmp_path / "missing" / "out.conllu"
    if kind == "folder":
        (tmp_path / "folder").mkdir()
        return tmp_path / "folder"
    if kind == "unwritable_folder":
        folder = tmp_path / "locked"
        folder.mkdir(mode=0o555)
        if os.access(folder, os.W_OK):  # root may write anyway: refuse as for a user
            real_open = os.open

            def refuse(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
                if str(path).startswith(str(folder)) and flags & os.O_CREAT:
                    raise PermissionError(13, "Permission denied", str(path))
                return real_open(path, flags, *args, **kwargs)

            monkeypatch.setattr(os, "open", refuse)
        return folder / "out.conllu"
    out = tmp_path / "readonly.conllu"
    out.write_text("keep me\n")
    out.chmod(0o444)
    if os.access(out, os.W_OK):  # root may write anyway
        monkeypatch.setattr(os, "access", lambda path, mode, **kw: Path(path) != out)
    return out


@pytest.mark.parametrize("kind", ["missing_folder", "folder", "unwritable_folder", "readonly"])
def test_bad_output_location_is_refused_before_parsing(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "in.conllu"
    source.write_text(GOOD)
    out = bad_output(kind, tmp_path, monkeypatch)
    with pytest.raises(InputError) as caught:
        predict_file(Untouchable(), source, out, device=CPU)  # type: ignore[arg-type]
    assert caught.value.source == str(out)
    if out.parent.is_dir():
        assert leftovers(out.parent) == []
    if kind == "readonly":
        assert out.read_text() == "keep me\n"


def test_predict_py_refuses_a_missing_output_folder_in_one_line(
    checkpoint: Path, tmp_path: Path
) -> None:
    out = tmp_path / "missing" / "out.conllu"
    result = predict(f"checkpoint={checkpoint}", "input=-", f"output={out}", stdin=b"w1 w2\n")
    message = result.stderr.decode()
    assert result.returncode == 2, message
    (error,) = [line for line in message.splitlines() if str(out) in line]
    assert "folder" in error and "Traceback" not in message and not result.stdout


# -- defect 4: invalid UTF-8 -------------------------------------------------------------------

BAD_UTF8 = b"# sent_id = latin\n1\tcaf\xe9\t_\t_\t_\t_\t_\t_\t_\t_\n\n"


@pytest.mark.parametrize("kind", ["path", "stdin"])
def test_invalid_utf8_names_source_line_and_sentence(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = GOOD.encode() + BAD_UTF8 + GOOD.encode()
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(InputError, match=r"not valid utf-8 \(byte 6 of the line\)") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 6, "latin")


def test_text_that_cannot_be_utf8_is_reported_too() -> None:
    """A caller's string holding a lone surrogate cannot be written as UTF-8 either."""
    lines = ["# sent_id = x\ud800\n", "1\tw\t_\t_\t_\t_\t0\troot\t_\t_\n"]
    with pytest.raises(ConlluError, match=r"not valid utf-8 \(byte 14 of the line\)") as caught:
        read_all(iter(lines), input_format="conllu")
    assert (caught.value.line, caught.value.sent_id) == (1, "x\\ud800")


@pytest.mark.parametrize("kind", ["path", "stdin"])
def test_lenient_skips_a_sentence_with_invalid_utf8(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = GOOD.encode() + BAD_UTF8.replace(b"latin", b"l\xe4tin") + GOOD.encode()
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    report = ReadReport()
    with pytest.warns(UserWarning, match="skipped 1"):
        sentences = read_all(source, lenient=True, report=report)
    assert [s.sent_id for s in sentences] == ["good", "good"]
    (skipped,) = report.skipped
    assert (skipped.line, skipped.sent_id) == (5, "l\\xe4tin")
    assert "not valid utf-8" in skipped.reason


@pytest.mark.parametrize("kind", ["path", "stdin"])
def test_invalid_utf8_in_plain_text_names_its_exact_line(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"w1 w2\n" * 300 + b"caf\xe9 au lait\n" + b"w3\n" * 300
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(InputError, match="not valid utf-8") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 301, "#301")


def test_predict_py_reports_invalid_utf8_on_stdin(checkpoint: Path) -> None:
    result = predict(f"checkpoint={checkpoint}", "input=-", stdin=b"w1 w2\nw3\n\xff\xfe w4\n")
    message = result.stderr.decode()
    assert result.returncode == 2, message
    assert "<stdin>, line 3, sentence #3: not valid utf-8" in message
    assert "Traceback" not in message and not result.stdout


# =============================================================================================
# Process reliability (checkpoints, resume, devices and threads, one error type and exit
# status): regression tests for inconsistent checkpoints that gave KeyError/RuntimeError
# tracebacks, torch's advice to unpickle a refused file, metrics.jsonl repeating an epoch
# after a resume, device/thread tracebacks, and entry points that disagreed on exit status.
# =============================================================================================


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


# -- reader input: whitespace-only lines inside sentences, bare-CR files ----------------------

# A line of spaces and a tab between two word lines: it used to end the sentence, so lenient
# reading wrote "1 w1" as a whole sentence and strict reading blamed "sentence #3" at line 8.
SPLIT_BY_BLANK = (
    "# sent_id = split\n1\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n \t\n2\tw2\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
)


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_whitespace_only_line_inside_a_sentence_is_reported_at_its_line(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (GOOD + SPLIT_BY_BLANK + GOOD).encode()
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(ConlluError, match="only whitespace") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 7, "split")
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    report = ReadReport()
    with pytest.warns(UserWarning, match="skipped 1"):
        sentences = read_all(source, lenient=True, report=report)
    assert "".join(s.to_conllu() for s in sentences) == GOOD + GOOD  # nothing of "split"
    assert [(s.line, s.sent_id) for s in report.skipped] == [(7, "split")]


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_bare_cr_input_is_read_line_by_line_with_short_messages(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare-CR file or standard input used to be one line: its first error quoted it all."""
    text = (GOOD + "# sent_id = bad\n" + "1\tw1\t_\n" * 300 + "\n" + GOOD).replace("\n", "\r")
    source, name = source_of(kind, text.encode(), tmp_path, monkeypatch)
    with pytest.raises(ConlluError, match="found 3") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 6, "bad")
    assert len(str(caught.value)) < len(name) + 100
    source, _ = source_of(kind, text.encode(), tmp_path, monkeypatch)
    with pytest.warns(UserWarning, match="skipped 1"):
        sentences = read_all(source, lenient=True)
    assert "".join(s.to_conllu() for s in sentences) == (GOOD + GOOD).replace("\n", "\r")


# -- standard output: all or nothing ------------------------------------------------------------


def test_bad_input_after_the_first_chunk_writes_nothing_to_standard_output(
    checkpoint: Path,
) -> None:
    bad = "# sent_id = bad\n1\tw1\t_\t_\t_\t_\t_\t_\t_\n\n"  # nine columns
    data = (GOOD * 5 + bad).encode()
    failed = predict(f"checkpoint={checkpoint}", "input=-", "output=-", "chunk_size=2", stdin=data)
    assert failed.returncode == 2
    assert failed.stdout == b""  # not the four sentences parsed before the error
    assert b"<stdin>, line 22, sentence bad" in failed.stderr
    whole = predict(f"checkpoint={checkpoint}", "input=-", "output=-", "chunk_size=2",
                    stdin=(GOOD * 5).encode())  # fmt: skip
    assert whole.returncode == 0 and whole.stdout.count(b"# sent_id = good") == 5
