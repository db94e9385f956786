"""The ``python -m neuralparse.oracle`` command line."""

from __future__ import annotations

import json

import pytest

from neuralparse.io import parse_conllu_text
from neuralparse.oracle import least_squares, main
from neuralparse.trees.core import check_tree, is_projective

# Nivre 2009 Figure 1 (non-projective) and a projective 3-word sentence.
CONLLU = """# sent_id = fig1
1\tA\t_\tDET\t_\t_\t2\tdet\t_\t_
2\thearing\t_\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tis\t_\tAUX\t_\t_\t0\troot\t_\t_
4\tscheduled\t_\tVERB\t_\t_\t3\txcomp\t_\t_
5\ton\t_\tADP\t_\t_\t2\tnmod\t_\t_
6\tthe\t_\tDET\t_\t_\t7\tdet\t_\t_
7\tissue\t_\tNOUN\t_\t_\t5\tobj\t_\t_
8\ttoday\t_\tNOUN\t_\t_\t4\tobl\t_\t_
9\t.\t_\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = small
1\tThe\t_\tDET\t_\t_\t2\tdet\t_\t_
2\tcat\t_\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tsat\t_\tVERB\t_\t_\t0\troot\t_\t_

"""


@pytest.fixture
def conllu_file(tmp_path):
    path = tmp_path / "two.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    return path


def run_json(capsys, *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_report(capsys, conllu_file) -> None:
    record = run_json(capsys, "--system", "arc_standard", str(conllu_file))
    assert set(record) == {
        "sentences",
        "in_class",
        "reproduced",
        "transitions",
        "swaps",
        "slope",
        "r2",
        "seconds",
    }
    assert record["sentences"] == 2 and record["in_class"] == 1 and record["reproduced"] == 1
    assert record["transitions"] == 6 and record["swaps"] == 0
    eager = run_json(capsys, "--system", "swap", "--oracle", "eager", str(conllu_file))
    assert eager["in_class"] == eager["reproduced"] == 2
    assert eager["swaps"] == 6 and eager["transitions"] == 30 + 6
    lazy = run_json(capsys, "--system", "swap", "--oracle", "lazy", str(conllu_file))
    assert lazy["swaps"] == 2 and lazy["transitions"] == 22 + 6
    assert eager["slope"] == pytest.approx((30 - 6) / (9 - 3))


def test_text_report(capsys, conllu_file) -> None:
    assert main(["--system", "arc_eager", str(conllu_file)]) == 0
    out = capsys.readouterr().out
    assert "in class             1" in out and "reproduced           1" in out


def test_least_squares() -> None:
    slope, intercept, r2 = least_squares([1, 2, 3], [3, 5, 7])
    assert (slope, intercept, r2) == pytest.approx((2.0, 1.0, 1.0))


@pytest.mark.parametrize("system", ["arc_standard", "arc_eager", "arc_hybrid", "swap"])
def test_random_derivations_are_trees_of_the_class(capsys, system: str) -> None:
    assert main(["--system", system, "--random", "40", "--length", "7", "--seed", "3"]) == 0
    sentences = parse_conllu_text(capsys.readouterr().out)
    assert len(sentences) == 40
    for sentence in sentences:
        assert len(sentence) == 7
        check_tree(sentence.heads, single_root=True)
        assert system == "swap" or is_projective(sentence.heads)
        assert all(
            (d == "root") == (h == 0) for h, d in zip(sentence.heads, sentence.deprels, strict=True)
        )
    if system == "swap":
        assert any(not is_projective(s.heads) for s in sentences)


def test_errors(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit):
        main(["--system", "arc_standard"])
    with pytest.raises(SystemExit):
        main(["--system", "arc_standard", "--oracle", "lazy", "x.conllu"])
    assert main(["--system", "arc_standard", str(tmp_path / "missing.conllu")]) == 2
    assert "missing.conllu" in capsys.readouterr().err
