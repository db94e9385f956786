"""Input detection, invalid UTF-8, and the safety of outputs and checkpoints.

Regression tests for defects users hit: CoNLL-U read as plain text by ``input_format=auto``,
runs writing the same output through one fixed temporary name, bad output locations noticed
only after parsing, and raw ``UnicodeDecodeError`` tracebacks.
"""

from __future__ import annotations

import io
import logging
import os
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

from neuralparse.errors import ConlluError, InputError
from neuralparse.io import ReadReport, Sentence, detect_format, parse_conllu_text
from neuralparse.prediction import open_output, open_sentences, predict_file
from neuralparse.runtime import checkpoint as checkpoint_module
from neuralparse.runtime.checkpoint import save_checkpoint
from tests.test_predict import train_tiny_checkpoint

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
