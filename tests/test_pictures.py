"""Pictures of trees (neuralparse.pictures) and their command (python -m neuralparse.show).

The SVG is checked as XML: one path per arc, the marks (crossing, non-projective, wrong head,
wrong label) on exactly the arcs worked out by hand, escaping; the command's outputs and error
exits; and one test draws a PNG with a real headless Chromium and checks its pixels' rows.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from neuralparse.io import Sentence, parse_conllu_text
from neuralparse.pictures import ARC_INK, arc_levels, draw, figure, html_page
from neuralparse.show import BROWSERS, main

SVG = "{http://www.w3.org/2000/svg}"

# Nivre (2009) Figure 1.  Crossing pairs: 2->5 with 0->3, 3->9 and 4->8 (nothing else crosses),
# so the crossed arcs are those of words 3, 5, 8 and 9; non-projective: 2->5 (spans is3, which
# hearing2 does not dominate) and 4->8 (spans on5 and the issue).
FORMS = ["A", "hearing", "is", "scheduled", "on", "the", "issue", "today", "."]
HEADS = [2, 3, 0, 3, 2, 7, 5, 4, 3]
DEPRELS = ["det", "nsubj", "root", "xcomp", "nmod", "det", "obj", "advmod", "punct"]
UPOS = ["DET", "NOUN", "AUX", "VERB", "ADP", "DET", "NOUN", "ADV", "PUNCT"]
CROSSED = {3, 5, 8, 9}
NONPROJECTIVE = {5, 8}


def nivre(heads: Sequence[int] = HEADS, deprels: Sequence[str] = DEPRELS) -> Sentence:
    return Sentence.from_words(FORMS, heads=heads, deprels=deprels, upos=UPOS, sent_id="s1")


def conllu(*sentences: Sentence) -> str:
    return "".join(s.to_conllu() for s in sentences)


def arcs_by_dependent(svg: str) -> dict[int, ET.Element]:
    """The ``<path>`` of each arc, keyed by the dependent its group names."""
    root = ET.fromstring(svg)
    return {
        int(group.attrib["data-dependent"]): path
        for group in root.iter(f"{SVG}g")
        if "data-dependent" in group.attrib
        for path in group.iter(f"{SVG}path")
    }


def classes(path: ET.Element) -> set[str]:
    return set(path.attrib["class"].split())


def texts(svg: str, cls: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text") if t.get("class") == cls]


def test_svg_is_xml_with_one_path_per_arc() -> None:
    svg = draw(nivre()).svg
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert len(list(root.iter(f"{SVG}path"))) == len(FORMS)
    assert sorted(arcs_by_dependent(svg)) == list(range(1, len(FORMS) + 1))
    assert texts(svg, "form") == FORMS
    assert texts(svg, "upos") == UPOS
    assert sorted(texts(svg, "label")) == sorted(DEPRELS)
    assert {d for d, p in arcs_by_dependent(svg).items() if "root" in classes(p)} == {3}
    # Self-contained: no script, no stylesheet, no reference outside the document.
    assert "<script" not in svg and "<style" not in svg and "href" not in svg


def test_crossing_arcs_are_exactly_the_highlighted_ones() -> None:
    arcs = arcs_by_dependent(draw(nivre()).svg)
    crossing = {d for d, path in arcs.items() if "crossing" in classes(path)}
    coloured = {d for d, path in arcs.items() if path.attrib["stroke"] != ARC_INK}
    assert crossing == coloured == CROSSED
    assert {d for d, path in arcs.items() if "nonprojective" in classes(path)} == NONPROJECTIVE
    assert all(("filter" in path.attrib) == (d in NONPROJECTIVE) for d, path in arcs.items())
    # Arcs that cross each other look different.
    for other in (3, 8, 9):
        assert arcs[5].attrib["stroke"] != arcs[other].attrib["stroke"]


def test_levels_keep_overlapping_arcs_apart() -> None:
    levels = arc_levels(HEADS)
    spans = {d: sorted((h, d)) for d, h in enumerate(HEADS, start=1) if h != 0}
    assert set(levels) == set(spans)
    for a, (lo_a, hi_a) in spans.items():
        for b, (lo_b, hi_b) in spans.items():
            if a < b and max(lo_a, lo_b) < min(hi_a, hi_b):
                assert levels[a] != levels[b], (a, b)
            if a != b and lo_a <= lo_b and hi_b <= hi_a and (lo_a, hi_a) != (lo_b, hi_b):
                assert levels[a] > levels[b], (a, b)  # nested arcs lie below


def test_gold_marks_exactly_the_wrong_arcs() -> None:
    heads = list(HEADS)
    heads[0] = 3  # A: head is3 instead of hearing2
    deprels = list(DEPRELS)
    deprels[0] = "dep"  # ... and another label, which a wrong head does not add to
    deprels[7] = "obl"  # today: right head, wrong label
    picture = draw(nivre(heads, deprels), gold=nivre())
    arcs = arcs_by_dependent(picture.svg)
    assert {d for d, p in arcs.items() if "wrong-head" in classes(p)} == {1}
    assert {d for d, p in arcs.items() if "wrong-label" in classes(p)} == {8}
    assert {d for d, p in arcs.items() if "stroke-dasharray" in p.attrib} == {1}
    marks = [(m.dependent, m.wrong_head, m.wrong_label) for m in picture.marks]
    assert marks == [(d, d == 1, d == 8) for d in range(1, 10)]
    assert "obl (advmod)" in texts(picture.svg, "label")
    legend = " ".join(texts(picture.svg, "legend"))
    assert "wrong head (1 of 9)" in legend and "gold label in brackets (1)" in legend
    # Without differences nothing is marked, but the legend still says so.
    same = draw(nivre(), gold=nivre()).svg
    assert not any(
        {"wrong-head", "wrong-label"} & classes(p) for p in arcs_by_dependent(same).values()
    )
    assert "wrong head (0 of 9)" in " ".join(texts(same, "legend"))


def test_text_is_escaped() -> None:
    forms = ["<b>", "&amp;", '"quoted"', "it's"]
    sentence = Sentence.from_words(forms, heads=[0, 1, 1, 1], deprels=["root", "<x>", "&", '"'])
    svg = draw(sentence).svg
    assert texts(svg, "form") == forms
    assert sorted(texts(svg, "label")) == sorted(["root", "<x>", "&", '"'])
    assert "<b>" not in svg and "<x>" not in svg
    html = html_page([sentence])
    assert "&lt;b&gt; &amp;amp; &quot;quoted&quot;" in html  # the heading


def test_multiword_tokens_draw_syntactic_words() -> None:
    text = (
        "# sent_id = mwt\n"
        "1\tVa\tir\tVERB\t_\t_\t0\troot\t_\t_\n"
        "2-3\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tde\tde\tADP\t_\t_\t4\tcase\t_\t_\n"
        "3\tel\tel\tDET\t_\t_\t4\tdet\t_\t_\n"
        "4\tpueblo\tpueblo\tNOUN\t_\t_\t1\tobl\t_\t_\n\n"
    )
    svg = draw(parse_conllu_text(text)[0]).svg
    assert texts(svg, "form") == ["Va", "de", "el", "pueblo"]
    assert len(arcs_by_dependent(svg)) == 4


def test_sentence_without_tree_or_tags_draws_words_only() -> None:
    svg = draw(Sentence.from_words(["just", "words"])).svg
    assert texts(svg, "form") == ["just", "words"]
    assert not arcs_by_dependent(svg) and not texts(svg, "upos")


def test_repr_html_is_the_picture() -> None:
    sentence = nivre()
    html = sentence._repr_html_()
    assert html == figure(sentence)
    assert draw(sentence).svg in html


def test_pictures_need_no_torch() -> None:
    code = "import sys, neuralparse.show; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture
def treebank(tmp_path: Path) -> Path:
    path = tmp_path / "trees.conllu"
    second = Sentence.from_words(["Hi", "!"], heads=[0, 1], deprels=["root", "punct"], sent_id="s2")
    path.write_text(conllu(nivre(), second), encoding="utf-8")
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


def test_show_writes_html_with_every_sentence(treebank: Path) -> None:
    out = treebank.with_name("trees.html")
    assert main([str(treebank), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count("<svg") == 2
    assert "<code>s1</code> A hearing is scheduled on the issue today ." in page
    assert "<code>s2</code> Hi !" in page
    assert leftovers(treebank.parent) == []


def test_show_writes_one_svg_with_gold(treebank: Path, tmp_path: Path) -> None:
    predicted = tmp_path / "pred.conllu"
    heads = list(HEADS)
    heads[0] = 3
    second = Sentence.from_words(["Hi", "!"], heads=[0, 1], deprels=["root", "punct"], sent_id="s2")
    predicted.write_text(conllu(nivre(heads), second), encoding="utf-8")
    out = tmp_path / "s1.svg"
    args = [str(predicted), "--sentence", "s1", "--gold", str(treebank), "-o", str(out)]
    assert main(args) == 0
    arcs = arcs_by_dependent(out.read_text(encoding="utf-8"))
    assert {d for d, p in arcs.items() if "wrong-head" in classes(p)} == {1}
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{dir}/missing.conllu", "-o", "{dir}/x.html"], "cannot read the file"),
        (["{file}", "--sentence", "nope", "-o", "{dir}/x.html"], "no sentence with id 'nope'"),
        (["{file}", "-o", "{dir}/x.svg"], "SVG output holds one sentence, 2 selected"),
        (["{file}", "-o", "{dir}/x.txt"], "output must end in .html, .svg or .png"),
        (["{file}", "-o", "{dir}/no/such/folder/x.html"], "does not exist"),
        (["{file}", "--browser", "no-such-browser", "-o", "{dir}/x.png"], "needs no-such-browser"),
        (
            ["{file}", "--gold", "{dir}/one.conllu", "-o", "{dir}/x.html"],
            "sentence count 1 differs",
        ),
        (["{file}", "--gold", "{dir}/other.conllu", "-o", "{dir}/x.html"], "gold word 2 is"),
    ],
)
def test_show_errors_exit_2_with_one_line(
    treebank: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = treebank.parent
    (folder / "one.conllu").write_text(conllu(nivre()), encoding="utf-8")
    other = Sentence.from_words(["Hi", "?"], heads=[0, 1], deprels=["root", "punct"])
    (folder / "other.conllu").write_text(conllu(nivre(), other), encoding="utf-8")
    argv = [a.format(dir=folder, file=treebank) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert message in err
    assert not [p for p in folder.iterdir() if p.stem == "x"]
    assert leftovers(folder) == []


def test_show_bad_command_line_exits_2_with_one_line(
    treebank: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([str(treebank)])  # no -o
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "--output" in err, err


def png_rows(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and filtered scanlines (filter byte dropped) of an 8-bit PNG, every
    chunk's CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat = 8, b""
    width = height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = 1 + width * channels
    assert len(raw) == height * stride
    return width, height, [raw[r * stride + 1 + channels : (r + 1) * stride] for r in range(height)]


def test_png_drawn_by_a_headless_browser(tmp_path: Path) -> None:
    if not any(shutil.which(b) for b in BROWSERS):
        pytest.skip(
            f"no headless browser on PATH ({', '.join(BROWSERS)}): apt-get install chromium"
        )
    source = tmp_path / "one.conllu"
    source.write_text(conllu(nivre()), encoding="utf-8")
    out = tmp_path / "tree.png"
    assert main([str(source), "-o", str(out)]) == 0
    picture = draw(nivre())
    width, height, rows = png_rows(out.read_bytes())
    assert (width, height) == (2 * picture.width, 2 * picture.height)
    # A uniform row filters to one repeated byte after its first pixel, whatever the filter;
    # words, arcs and legend make many rows that are not.
    drawn = sum(len(set(row)) > 1 for row in rows)
    assert drawn > height // 3, (drawn, height)
    assert drawn < height  # the margins are blank
    assert leftovers(tmp_path) == []
