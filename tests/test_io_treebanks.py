"""Every shared UD treebank file survives read -> write byte for byte (skipped when absent)."""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import pytest

from neuralparse.io import Sentence, parse_conllu_text, read_conllu
from tests.conftest import SHARED_UD, shared_treebanks

pytestmark = pytest.mark.treebank

SPLITS = ("train", "dev", "test")


def _files() -> list[Path]:
    return [tb / f"{split}.conllu" for tb in shared_treebanks() for split in SPLITS]


def _params() -> list:
    files = _files()
    if not files:
        reason = f"shared UD treebanks not found at {SHARED_UD}"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="absent")]
    return [pytest.param(path, id=f"{path.parent.name}/{path.stem}") for path in files]


@cache
def _read(path: Path) -> tuple[Sentence, ...]:
    return tuple(read_conllu(path))


@cache
def _manifest_counts() -> dict[tuple[str, str], int]:
    manifest = SHARED_UD / "MANIFEST.tsv"
    if not manifest.is_file():
        return {}
    with manifest.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t")
        return {(row["treebank"], row["split"]): int(row["sentences"]) for row in rows}


@pytest.mark.parametrize("path", _params())
def test_read_write_is_byte_identical(path: Path) -> None:
    sentences = _read(path)
    original = path.read_bytes()
    written = "".join(s.to_conllu() for s in sentences).encode("utf-8")
    assert written == original
    expected = _manifest_counts().get((path.parent.name, path.stem))
    if expected is not None:
        assert len(sentences) == expected
    assert all(s.heads is not None and s.heads.count(0) == 1 for s in sentences)


def test_relabelling_a_whole_file_changes_only_deprel_columns(ud_root: Path) -> None:
    path = ud_root / "UD_English-EWT" / "dev.conllu"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    sentences = _read(path)
    relabelled = [s.with_tree(s.heads or [], ["dep"] * len(s)) for s in sentences]
    original_lines = path.read_text(encoding="utf-8").splitlines()
    written = "".join(s.to_conllu() for s in relabelled)
    new_lines = written.splitlines()
    assert len(new_lines) == len(original_lines)
    changed = 0
    for old, new in zip(original_lines, new_lines, strict=True):
        if old == new:
            continue
        old_fields, new_fields = old.split("\t"), new.split("\t")
        assert old_fields[0].isdigit()
        assert old_fields[:7] + old_fields[8:] == new_fields[:7] + new_fields[8:]
        assert new_fields[7] == "dep"
        changed += 1
    assert changed == sum(d != "dep" for s in sentences for d in s.deprels)
    reread = parse_conllu_text(written)
    assert [s.heads for s in reread] == [s.heads for s in sentences]
