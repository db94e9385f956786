"""python -m neuralparse.analyze: hand-checked coverage of a small file, format on treebanks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from neuralparse.analyze import TSV_HEADER, analyze_file, main
from tests.conftest import shared_treebanks

# (heads, upos) of four sentences whose classes are worked out by hand below.
SENTENCES = [
    # S1: projective.
    ([2, 0, 2], ["NOUN", "VERB", "PUNCT"]),
    # S2: Nivre (2009) Figure 1.  Word arcs 2->5 and 4->8 cross: not planar, 2-planar.  Arc
    # 2->5 is crossed by 0->3, 3->9 and 4->8 (no common endpoint): not 1-EC.  One crossing
    # interval [0, 9]; hearing2 has on5 beyond its parent is3 (forced), and 0->3, 3->9, 4->8
    # need two more vertices: 3-CI, not 2-CI.  Subtrees of hearing and scheduled interleave:
    # ill-nested.  Gap degree 1.  Non-projective arcs: 2->5 and 4->8.
    (
        [2, 3, 0, 3, 2, 7, 5, 4, 3],
        ["DET", "NOUN", "AUX", "VERB", "ADP", "DET", "NOUN", "ADV", "PUNCT"],
    ),
    # S3: Pitler & McDonald Figure 3 gloss.  7->5 crosses 6->2, 6->3 and 1->6 (a star: 2-planar,
    # not planar); 2-CI with {helped6, paint7}; 1-EC; well-nested; gap degree 1 (paint: 4 5 _
    # 7); one non-projective arc, 7->5 (spans helped6).
    ([0, 6, 6, 5, 7, 1, 6], ["SCONJ", "PRON", "PROPN", "DET", "NOUN", "VERB", "VERB"]),
    # S4: 3->1 crosses only the root arc 0->2: planar, not projective; 2-CI ({3, 2}); 1-EC;
    # well-nested; gap degree 1; one non-projective arc.  Without punctuation: [2, 0].
    ([3, 0, 2], ["X", "VERB", "PUNCT"]),
]


def conllu_text() -> str:
    blocks = []
    for number, (heads, upos) in enumerate(SENTENCES, start=1):
        lines = [f"# sent_id = s{number}"]
        for word, (head, tag) in enumerate(zip(heads, upos, strict=True), start=1):
            deprel = "root" if head == 0 else "dep"
            lines.append(f"{word}\tw{word}\t_\t{tag}\t_\t_\t{head}\t{deprel}\t_\t_")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.conllu"
    path.write_text(conllu_text(), encoding="utf-8")
    return path


def test_hand_checked_row(small_file: Path) -> None:
    row = analyze_file(str(small_file))
    assert row.fields()[1:] == [
        "4",  # sentences
        "25.00",  # projective: S1
        "50.00",  # planar: S1, S4
        "100.00",  # 2-planar
        "100.00",  # 3-planar
        "75.00",  # 2-CI: all but S2
        "100.00",  # 3-CI
        "75.00",  # 1-EC: all but S2
        "75.00",  # well-nested: all but S2
        "1",  # max gap degree
        "18.18",  # non-projective arcs: (0 + 2 + 1 + 1) / (3 + 9 + 7 + 3)
    ]


def test_hand_checked_row_without_punctuation(small_file: Path) -> None:
    row = analyze_file(str(small_file), no_punct=True)
    # S1 -> [2, 0] and S4 -> [2, 0] are projective; S2 loses .9 and keeps its other classes.
    assert row.fields()[1:] == [
        "4",
        "50.00",  # projective: S1, S4
        "50.00",  # planar: S1, S4
        "100.00",
        "100.00",
        "75.00",
        "100.00",
        "75.00",
        "75.00",
        "1",
        "15.79",  # (0 + 2 + 1 + 0) / (2 + 8 + 7 + 2)
    ]


def test_cli_tsv_and_table(small_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(small_file), str(small_file), "--tsv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "\t".join(TSV_HEADER)
    assert lines[0] == (
        "file\tsentences\tprojective\tplanar\t2planar\t3planar\t2ci\t3ci\t1ec\t"
        "well_nested\tmax_gap_degree\tnonproj_arcs"
    )
    assert len(lines) == 3 and lines[1] == lines[2]
    assert lines[1].split("\t")[:3] == [str(small_file), "4", "25.00"]
    assert main([str(small_file), "--no-punct"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:3] == ["file", "sentences", "projective"]
    assert table[1].split() == [
        str(small_file),
        "4",
        "50.00",
        "50.00",
        "100.00",
        "100.00",
        "75.00",
        "100.00",
        "75.00",
        "75.00",
        "1",
        "15.79",
    ]


def test_help_states_conventions() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "neuralparse.analyze", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = " ".join(result.stdout.split())
    assert "include the root and its arcs" in text
    assert "arcs between words only, without root arcs" in text
    assert "--no-punct" in text and "--tsv" in text


def test_bad_file_reports_file_and_line(
    tmp_path: Path, small_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.conllu"
    bad.write_text("# sent_id = b1\n1\tw\t_\tX\t_\t_\t7\troot\t_\t_\n\n", encoding="utf-8")
    assert main([str(small_file), str(bad)]) == 2  # a user error (neuralparse.runtime.cli)
    error = capsys.readouterr().err
    assert str(bad) in error and "line" in error and "b1" in error
    assert main([str(tmp_path / "missing.conllu")]) == 2
    assert "missing.conllu" in capsys.readouterr().err


TREEBANK_FILES = [d / "dev.conllu" for d in shared_treebanks() if (d / "dev.conllu").is_file()]


@pytest.mark.treebank
def test_treebank_columns(ud_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not TREEBANK_FILES:
        pytest.skip(f"no dev.conllu under {ud_root}")
    assert main([str(p) for p in TREEBANK_FILES] + ["--tsv", "--no-punct"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(TREEBANK_FILES) + 1
    percentage = re.compile(r"^\d{1,3}\.\d\d$")
    for path, line in zip(TREEBANK_FILES, lines[1:], strict=True):
        fields = line.split("\t")
        assert len(fields) == len(TSV_HEADER)
        assert fields[0] == str(path)
        text = path.read_text(encoding="utf-8")
        assert int(fields[1]) == len(re.findall(r"^# sent_id", text, flags=re.MULTILINE))
        values = dict(zip(TSV_HEADER, fields, strict=True))
        for key in (*TSV_HEADER[2:10], "nonproj_arcs"):
            assert percentage.match(values[key]), (key, values[key])
        assert values["max_gap_degree"].isdigit()
        number = {k: float(v) for k, v in values.items() if percentage.match(v)}
        # The class inclusions hold on every file.
        assert number["projective"] <= number["planar"] <= number["2planar"] <= number["3planar"]
        assert number["projective"] <= number["2ci"] <= number["3ci"]
        assert number["2ci"] <= number["1ec"]
        assert number["projective"] <= number["well_nested"]
