"""predict.py end to end (subprocess) and the streaming prediction module."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from neuralparse.errors import InputError
from neuralparse.io import Sentence, parse_conllu_text, read_conllu
from neuralparse.prediction import PredictOptions, batches_by_length, predict_file, predict_stream
from neuralparse.runtime.checkpoint import LoadedParser, load_parser
from neuralparse.training.trainer import train
from neuralparse.trees.core import check_tree
from tests.parser_fixtures import make_corpus, write_corpus
from tests.test_training import tiny_config

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")


def train_tiny_checkpoint(directory: Path, system: str) -> Path:
    """A small parser trained for a few seconds on generated sentences (words ``w0..w59``,
    UPOS and FEATS present, half of the trees non-projective)."""
    sentences = make_corpus(30, seed=5, projective=False)
    cfg = tiny_config(directory, sentences, system=system, max_epochs=6, patience=10)
    return train(cfg, directory / "run").checkpoint


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # arc_eager_pp: the output must go through the pseudo-projective decoding.
    return train_tiny_checkpoint(tmp_path_factory.mktemp("predict"), "arc_eager_pp")


@pytest.fixture(scope="module")
def loaded(checkpoint: Path) -> LoadedParser:
    return load_parser(checkpoint, CPU)


def predict(
    *args: str, stdin: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(
        [sys.executable, str(REPO / "predict.py"), "device=cpu", "progress=false", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    if check:
        assert result.returncode == 0, result.stderr.decode()
    return result


# Comments, a multiword token, an empty node, a sentence without a tree, an unknown word,
# CRLF line endings and a missing final blank line: everything but HEAD/DEPREL must survive.
RICH_CONLLU = (
    "# newdoc id = d1\n"
    "# sent_id = a\n"
    "# text = w1 w2w3 w4\n"
    "1\tw1\tl1\tNOUN\tNN\tNumber=Sing\t2\tnsubj\t2:nsubj\tSpaceAfter=No\n"
    "2-3\tw2w3\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tw2\tl2\tVERB\tVB\t_\t0\troot\t0:root\t_\n"
    "3\tw3\tl3\tADP\tIN\t_\t2\tcase\t2:case\t_\n"
    "3.1\tghost\t_\tNOUN\t_\t_\t_\t_\t2:obj\t_\n"
    "4\tw4\tl4\tPUNCT\t.\t_\t2\tpunct\t2:punct\t_\n"
    "\n"
    "# sent_id = b\r\n"
    "1\tunknownword\t_\tDET\t_\t_\t_\t_\t_\t_\r\n"
    "2\tw5\t_\tNOUN\t_\tNumber=Sing\t_\t_\t_\t_\r\n"
    "3\tw6\t_\tVERB\t_\t_\t_\t_\t_\t_\r\n"
    "\r\n"
    "1\tw7\t_\tADJ\t_\t_\t_\t_\t_\tGloss=x|A=b\n"
    "2\tw8\t_\tNOUN\t_\t_\t_\t_\t_\t_\n"
)

BAD_CONLLU = (
    "# sent_id = good1\n1\tw1\t_\tNOUN\t_\t_\t_\t_\t_\t_\n\n"
    "# sent_id = broken\n1\tw2\t_\tNOUN\t_\t_\t_\t_\t_\n\n"  # nine columns
    "# sent_id = good2\n1\tw3\t_\tNOUN\t_\t_\t_\t_\t_\t_\n2\tw4\t_\tVERB\t_\t_\t_\t_\t_\t_\n\n"
)


def assert_only_head_and_deprel_changed(source: str, output: str) -> None:
    source_lines = source.splitlines(keepends=True)
    output_lines = output.splitlines(keepends=True)
    if not source.endswith(("\n\n", "\r\n\r\n")):
        source_lines.append("\n")  # io terminates an unterminated last sentence
    assert len(output_lines) == len(source_lines)
    for before, after in zip(source_lines, output_lines, strict=True):
        columns = before.split("\t")
        if len(columns) == 10 and columns[0].isdigit():
            new = after.split("\t")
            assert new[:6] + new[8:] == columns[:6] + columns[8:]
        else:
            assert after == before


def assert_parsed(sentences: list[Sentence], labels: set[str]) -> None:
    for sentence in sentences:
        assert sentence.heads is not None
        check_tree(sentence.heads, single_root=True)
        assert set(sentence.deprels) <= labels


def training_labels(checkpoint: Path) -> set[str]:
    sentences = read_conllu(checkpoint.parents[1] / "train.conllu")
    return {d for s in sentences for d in s.deprels}


def test_conllu_keeps_every_column_but_head_and_deprel(checkpoint: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.conllu"
    source.write_bytes(RICH_CONLLU.encode())
    out = tmp_path / "out.conllu"
    result = predict(
        f"checkpoint={checkpoint}", f"input={source}", f"output={out}", "tags=keep", "deps=keep"
    )
    assert b"enhanced graphs" not in result.stderr  # nothing is left out
    output = out.read_bytes().decode()
    assert_only_head_and_deprel_changed(RICH_CONLLU, output)
    parsed = read_conllu(out)  # strict reading: well-formed single-rooted trees
    assert [s.sent_id for s in parsed] == ["a", "b", "#3"]
    assert_parsed(parsed, training_labels(checkpoint))
    assert not list(tmp_path.glob(".out.conllu.*.partial"))


def test_deps_of_the_input_are_cleared_by_default(checkpoint: Path, tmp_path: Path) -> None:
    """The input's enhanced graph describes its own tree, not the predicted one."""
    source = tmp_path / "in.conllu"
    source.write_bytes(RICH_CONLLU.encode())
    out = tmp_path / "out.conllu"
    result = predict(f"checkpoint={checkpoint}", f"input={source}", f"output={out}", "tags=keep")
    # Said once, naming the file and the way to keep them.
    assert result.stderr.decode().count(f"{source}: the input has enhanced graphs") == 1
    assert b"deps=keep keeps them" in result.stderr
    written = out.read_bytes().decode()
    assert "3.1\tghost" not in written  # the empty node of the enhanced graph
    before = [ln for ln in RICH_CONLLU.splitlines() if "\t" in ln and "." not in ln.split("\t")[0]]
    after = [ln for ln in written.splitlines() if "\t" in ln]
    assert len(before) == len(after)
    for old, new in zip(before, after, strict=True):
        old_cells, new_cells = old.split("\t"), new.split("\t")
        assert new_cells[8] == ("_" if old_cells[0].isdigit() else old_cells[8])
        keep = [0, 1, 2, 3, 4, 5, 9] if old_cells[0].isdigit() else range(10)
        assert [new_cells[i] for i in keep] == [old_cells[i] for i in keep]


def test_plain_text_through_stdin_and_stdout_with_beam(checkpoint: Path, tmp_path: Path) -> None:
    text = "w1 w2 w3\n\n  w4\tw5 zzz  w6 \nw7\n"
    beam = ("search=beam", "search.beam_size=3")
    result = predict(f"checkpoint={checkpoint}", *beam, stdin=text.encode())
    parsed = parse_conllu_text(result.stdout.decode())
    assert [s.forms for s in parsed] == [["w1", "w2", "w3"], ["w4", "w5", "zzz", "w6"], ["w7"]]
    assert_parsed(parsed, training_labels(checkpoint))
    # The joint model tags the text itself (no head for XPOS: the training data has none).
    assert all(tag != "_" for s in parsed for tag in s.upos)
    assert all(tag == "_" for s in parsed for tag in s.xpos)
    assert b"GOLD TAGS" not in result.stderr
    # The same input from a file, written to a file, is the same output.
    source, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    source.write_text(text)
    predict(f"checkpoint={checkpoint}", f"input={source}", f"output={out}", "input_format=text",
            *beam)  # fmt: skip
    assert out.read_bytes() == result.stdout


def test_bad_input_fails_with_location_or_is_skipped_when_lenient(
    checkpoint: Path, tmp_path: Path
) -> None:
    source, out = tmp_path / "bad.conllu", tmp_path / "out.conllu"
    source.write_text(BAD_CONLLU)
    strict = predict(f"checkpoint={checkpoint}", f"input={source}", f"output={out}", check=False)
    assert strict.returncode == 2
    message = strict.stderr.decode()
    assert f"{source}, line 5, sentence broken" in message and "columns" in message
    assert not out.exists() and not list(tmp_path.glob(".out.conllu.*.partial"))
    files = (f"checkpoint={checkpoint}", f"input={source}", f"output={out}")
    lenient = predict(*files, "lenient=true")
    assert [s.sent_id for s in read_conllu(out)] == ["good1", "good2"]
    assert "skipped 1 malformed sentences" in lenient.stderr.decode()


def test_an_output_that_is_the_input_file_is_refused(loaded: LoadedParser, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("w1 w2\n")
    link = tmp_path / "link.txt"
    link.symlink_to(source)
    for dest in (source, link, tmp_path / "." / "in.txt"):
        with pytest.raises(InputError, match="the output is the input file"):
            predict_file(loaded, source, dest, device=CPU)
    assert source.read_text() == "w1 w2\n"


@pytest.mark.parametrize("content", [None, b"not a checkpoint at all"])
def test_bad_checkpoint_is_named_in_the_error(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "model.pt"
    if content is not None:
        path.write_bytes(content)
    result = predict(f"checkpoint={path}", "input=-", stdin=b"w1 w2\n", check=False)
    assert result.returncode == 2 and not result.stdout
    message = result.stderr.decode()
    assert str(path) in message
    assert ("not found" if content is None else "not a readable neuralparse checkpoint") in message


# -- the streaming module, in process ------------------------------------------------------


def test_batches_respect_budgets_and_cover_every_sentence() -> None:
    lengths = torch.tensor([5, 500, 3, 7, 600, 2, 9, 4])
    options = PredictOptions(batch_tokens=40, batch_size=3)
    batches = batches_by_length(lengths, options)
    assert sorted(i for b in batches for i in b.tolist()) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) <= 3
        assert int(lengths[batch].sum()) <= 40 or len(batch) == 1
    assert [b.tolist() for b in batches if int(lengths[b].max()) >= 500] == [[1], [4]]
    beam_options = PredictOptions(search="beam", beam_size=8, beam_batch_tokens=40)
    beam = batches_by_length(lengths, beam_options)
    assert all(int(lengths[b].sum()) * 8 <= 40 or len(b) == 1 for b in beam)


def test_stream_is_lazy_and_chunking_does_not_change_the_output(loaded: LoadedParser) -> None:
    corpus = make_corpus(23, seed=9, max_words=12)

    def endless():  # an input without end: only what is consumed gets read
        for index in itertools.count():
            yield corpus[index % len(corpus)]

    small = PredictOptions(chunk_size=4, batch_size=2, batch_tokens=15)
    first = list(itertools.islice(predict_stream(loaded, endless(), small, device=CPU), 30))
    whole = list(predict_stream(loaded, corpus, PredictOptions(), device=CPU))
    assert [s.to_conllu() for s in first] == [s.to_conllu() for s in (whole + whole)[:30]]
    assert [s.forms for s in whole] == [s.forms for s in corpus]


def test_chunks_start_small_on_cuda_so_that_output_starts_early(loaded: LoadedParser) -> None:
    def sizes(device: str, count: int, **options: int) -> list[int]:
        schedule = PredictOptions(**options).chunk_sizes(torch.device(device))
        return list(itertools.islice(schedule, count))

    assert sizes("cuda", 7) == [625, 1250, 2500, 5000] + [10_000] * 3
    assert sizes("cuda", 5, chunk_size=1000) == [256, 512, 1000, 1000, 1000]
    assert sizes("cuda", 3, chunk_size=100) == [100] * 3
    assert sizes("cpu", 3) == [10_000] * 3  # small chunks cost throughput on the CPU
    assert sizes("cpu", 5, first_chunk_size=3, chunk_size=20) == [3, 6, 12, 20, 20]
    with pytest.raises(InputError, match="first_chunk_size must be positive"):
        PredictOptions(first_chunk_size=0)

    corpus = make_corpus(23, seed=9, max_words=12)
    consumed = 0

    def endless():
        nonlocal consumed
        for index in itertools.count():
            consumed += 1
            yield corpus[index % len(corpus)]

    options = PredictOptions(first_chunk_size=5, chunk_size=10_000)
    stream = predict_stream(loaded, endless(), options, device=CPU)
    first = next(stream).to_conllu()
    assert consumed == 5  # the first chunk only
    assert first == next(predict_stream(loaded, corpus, PredictOptions(), device=CPU)).to_conllu()


def test_torchrun_shards_and_writes_one_output_in_input_order(
    checkpoint: Path, tmp_path: Path
) -> None:
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available in this build")
    corpus = make_corpus(40, seed=31, max_words=15)
    source = write_corpus(tmp_path / "in.conllu", corpus)
    single, sharded = tmp_path / "single.conllu", tmp_path / "sharded.conllu"
    predict(f"checkpoint={checkpoint}", f"input={source}", f"output={single}", "chunk_size=7")
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2"]
    result = subprocess.run(
        [*torchrun, str(REPO / "predict.py"), f"checkpoint={checkpoint}", f"input={source}",
         f"output={sharded}", "device=cpu", "chunk_size=3", "threads=1"],
        cwd=REPO, capture_output=True, timeout=120, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    assert sharded.read_bytes() == single.read_bytes()


def test_output_piped_into_a_reader_that_stops_early(checkpoint: Path, tmp_path: Path) -> None:
    # `predict.py output=- | head -1`: no message once head has what it wants, status 141
    # (ended by SIGPIPE, as Unix tools are), not "error: [Errno 32] Broken pipe".
    # About 250 KB of output: more than a pipe holds, so the writer finds the reader gone.
    source = write_corpus(tmp_path / "in.conllu", make_corpus(1000, seed=5))
    process = subprocess.Popen(
        [sys.executable, str(REPO / "predict.py"), f"checkpoint={checkpoint}",
         f"input={source}", "output=-", "device=cpu", "progress=false"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline().startswith(b"# ")
    process.stdout.close()
    _, errors = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGPIPE, errors.decode()
    assert b"error" not in errors and b"Traceback" not in errors, errors.decode()


def test_a_key_added_with_plus_must_exist(checkpoint: Path, tmp_path: Path) -> None:
    """``+key=value`` adds a key in Hydra: a misspelt one must not be accepted and ignored."""
    source = write_corpus(tmp_path / "in.conllu", make_corpus(2, seed=1))
    result = predict(
        f"checkpoint={checkpoint}", f"input={source}", "output=-", "+lenint=true", check=False
    )
    assert result.returncode == 2
    assert b"unknown configuration key 'lenint'" in result.stderr
    assert result.stdout == b""  # nothing parsed


def test_untokenized_plain_text_is_parsed_with_a_warning(
    checkpoint: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Plain text is split at whitespace only: punctuation attached to words says the text was
    not tokenized, and predict.py (one process or workers) and Parser.parse say how to read it.
    """
    from neuralparse.api import Parser

    source, out = tmp_path / "in.txt", tmp_path / "out.conllu"
    source.write_text("w1 w2 w3.\nw4, w5 w6\n")
    for workers in ("0", "1"):
        result = predict(f"checkpoint={checkpoint}", f"input={source}", f"output={out}",
                         f"workers={workers}")  # fmt: skip
        message = result.stderr.decode()
        assert "2 of the first 2 sentences have punctuation attached to words: 'w3.', 'w4,'" in (
            message
        )
        assert "input_format=raw" in message
        assert [s.forms for s in read_conllu(out)] == [["w1", "w2", "w3."], ["w4,", "w5", "w6"]]
    source.write_text("w1 w2 w3 .\nw4 , w5 w6\n")
    tokenized = predict(f"checkpoint={checkpoint}", f"input={source}", f"output={out}")
    assert b"punctuation attached" not in tokenized.stderr
    parser = Parser.load(checkpoint, device="cpu")
    with caplog.at_level("WARNING", logger="neuralparse.predict"):
        parser.parse(["w1 w2 w3."])
        parser.parse([Sentence.from_words(["w1", "w2", "w3."])])  # a Sentence is not checked
    assert ["raw=True" in r.getMessage() for r in caplog.records] == [True]
