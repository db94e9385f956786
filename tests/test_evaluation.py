"""Tests for neuralparse.evaluation and the ``python -m neuralparse.evaluate`` CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.errors import InputError
from neuralparse.evaluate import main
from neuralparse.evaluation import (
    CORE_KEYS,
    ScoreAccumulator,
    TagColumns,
    evaluate,
    evaluate_files,
    is_punctuation,
    universal_label,
)
from neuralparse.io import read_conllu
from neuralparse.trees.core import is_projective
from tests.trees_strategies import trees

REPO = Path(__file__).resolve().parents[1]

# --- A hand-checked example -------------------------------------------------------------------
# Three sentences as (sent_id, forms, heads, deprels); heads are 1-based, 0 = root.
#
# s1 gold heads [2,0,2,1,2]: arc 1->4 spans word 2, which 1 does not dominate, so it is
#   non-projective (GR&N §5.2): gold nonproj = {4}.  Crossing pairs (root arcs included):
#   0-2 x 1-4 and 1-4 x 2-5, so gold crossed = {2, 4, 5}.  Word 5 "." is punctuation.
#   Prediction: same heads (pred nonproj = {4}, head right), labels obl for obl:tmod (word 3,
#   universal part right) and obl for nmod (word 4, wrong even universally).
# s2 gold heads [2,3,0,3,2]: arc 2->5 spans the root word 3: gold nonproj = {5}; crossed:
#   0-3 x 2-5 -> {3, 5}.  Prediction: word 5 attached to 1 (wrong head; 1->5 spans word 2,
#   which is 1's head, so pred nonproj = {5}, a wrong non-projective arc) and nmod for
#   nmod:poss on word 1 (head right).
# s3 gold heads [2,0,2,2], projective, nothing crossed; word 4 "." is punctuation.
#   Prediction heads [2,0,1,3]: 1->3 spans the root word 2, pred nonproj = {3} with the wrong
#   head; word 4 "." also gets a wrong head.
GOLD = [
    (
        "s1",
        ["Hearing", "is", "today", "about", "."],
        [2, 0, 2, 1, 2],
        ["nsubj", "root", "obl:tmod", "nmod", "punct"],
    ),
    (
        "s2",
        ["His", "dog", "barked", "loudly", "black"],
        [2, 3, 0, 3, 2],
        ["nmod:poss", "nsubj", "root", "advmod", "amod"],
    ),
    ("s3", ["They", "left", "early", "."], [2, 0, 2, 2], ["nsubj", "root", "advmod", "punct"]),
]
PRED = [
    ("s1", GOLD[0][1], [2, 0, 2, 1, 2], ["nsubj", "root", "obl", "obl", "punct"]),
    ("s2", GOLD[1][1], [2, 3, 0, 3, 1], ["nmod", "nsubj", "root", "advmod", "amod"]),
    ("s3", GOLD[2][1], [2, 0, 1, 3], ["nsubj", "root", "advmod", "punct"]),
]
# Words: 5 + 5 + 4 = 14; correct heads 5 + 4 + 2 = 11.
# LAS full labels: s1 words 1,2,5; s2 words 2,3,4; s3 words 1,2 -> 8.  LAS (CoNLL 2018,
#   universal part of the label) adds s1w3 (obl:tmod/obl) and s2w1 (nmod:poss/nmod) -> 10.
# CLAS: content words (all but punct) are 4 + 5 + 3 = 12 on both sides; correct: s1w1-3 (s1w4
#   has obl for nmod), s2w1-4 (s2w5 has the wrong head), s3w1-2 -> 9, so F1 = 9/12.
# No punct (s1w5, s3w4 excluded): 12 words; heads right 4 + 4 + 2 = 10; labeled 2 + 3 + 2 = 7.
# Exact: only s1 has every head right, none has every label right.
# Non-proj precision: predicted {s1w4 right, s2w5 wrong, s3w3 wrong} -> 1/3; labeled: s1w4 has
#   label obl, gold nmod -> 0/3.  Recall: gold {s1w4 right, s2w5 wrong} -> 1/2; labeled 0/2.
# Crossed (non-punct): s1w2 ok, s1w4 ok, s2w3 ok, s2w5 wrong -> 3/4.
# Uncrossed (non-punct): s1w1, s1w3, s2w1, s2w2, s2w4 ok; s3w1, s3w2 ok, s3w3 wrong -> 7/8.
EXPECTED = {
    "uas": 100 * 11 / 14,
    "las": 100 * 10 / 14,
    "las_full": 100 * 8 / 14,
    "clas": 75.0,
    # Plain lists carry no tag columns: these scores are not reported.
    "mlas": None,
    "blex": None,
    "upos": None,
    "xpos": None,
    "ufeats": None,
    "alltags": None,
    "lemmas": None,
    "uas_nopunct": 100 * 10 / 12,
    "las_nopunct": 100 * 7 / 12,
    "exact_unlabeled": 100 * 1 / 3,
    "exact_labeled": 0.0,
    "nonproj_precision": 100 * 1 / 3,
    "nonproj_recall": 50.0,
    "crossed_recall": 75.0,
    "uncrossed_recall": 87.5,
    "words": 14,
    "sentences": 3,
}
# The files written by conllu() below have UPOS X and LEMMA = lowercased FORM on both sides
# and XPOS and FEATS "_" throughout: UPOS, Lemmas and BLEX (= CLAS, every lemma right) are
# reported; XPOS, UFeats, AllTags and MLAS (needs FEATS) are not.
EXPECTED_FILES = {**EXPECTED, "upos": 100.0, "lemmas": 100.0, "blex": 75.0}


def conllu(sentences: Sequence[tuple[str, list[str], list[int], list[str]]]) -> str:
    """Minimal CoNLL-U text for (sent_id, forms, heads, deprels) tuples."""
    blocks = []
    for sent_id, forms, heads, deprels in sentences:
        lines = [f"# sent_id = {sent_id}"]
        for i, (form, head, deprel) in enumerate(zip(forms, heads, deprels, strict=True), 1):
            lines.append(f"{i}\t{form}\t{form.lower()}\tX\t_\t_\t{head}\t{deprel}\t_\t_")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


def write(path: Path, sentences: Sequence[tuple[str, list[str], list[int], list[str]]]) -> Path:
    path.write_text(conllu(sentences), encoding="utf-8")
    return path


@pytest.fixture
def example_files(tmp_path: Path) -> tuple[Path, Path]:
    return write(tmp_path / "gold.conllu", GOLD), write(tmp_path / "pred.conllu", PRED)


def accumulate(
    gold: Sequence[tuple[str, list[str], list[int], list[str]]],
    pred: Sequence[tuple[str, list[str], list[int], list[str]]],
) -> ScoreAccumulator:
    acc = ScoreAccumulator()
    for (_, forms, gold_heads, gold_deprels), (_, _, pred_heads, pred_deprels) in zip(
        gold, pred, strict=True
    ):
        acc.add(gold_heads, gold_deprels, pred_heads, pred_deprels, forms)
    return acc


def test_hand_checked_scores_from_plain_lists() -> None:
    scores = accumulate(GOLD, PRED).result()
    assert scores.to_dict() == pytest.approx(EXPECTED)
    assert scores.nonproj_labeled_precision == 0.0
    assert scores.nonproj_labeled_recall == 0.0
    # The counts behind the percentages, for the denominators the definitions fix.
    counts = {key: (r.correct, r.total) for key, r in scores.ratios.items()}
    assert counts["nonproj_precision"] == (1, 3)
    assert counts["nonproj_recall"] == (1, 2)
    assert counts["crossed_recall"] == (3, 4)
    assert counts["uas_nopunct"] == (10, 12)
    assert counts["las"] == (10, 14) and counts["las_full"] == (8, 14)
    assert "upos" not in counts and "clas" not in counts  # unreported / an F1 score
    clas = scores.f1_counts["clas"]
    assert (clas.correct, clas.gold, clas.predicted) == (9, 12, 12)
    assert set(scores.f1_counts) == {"clas"}


def test_hand_checked_breakdowns() -> None:
    scores = accumulate(GOLD, PRED).result()
    labels = {label: s.to_dict() for label, s in scores.per_label.items()}
    # nmod: gold s1w4 (predicted obl), predicted s2w1 (gold nmod:poss): no label match.
    assert labels["nmod"] == {
        "gold": 1,
        "predicted": 1,
        "precision": 0.0,
        "recall": 0.0,
        "las": 0.0,
    }
    # advmod: both labels right; s3w3 has the wrong head.
    assert labels["advmod"] == {
        "gold": 2,
        "predicted": 2,
        "precision": 100.0,
        "recall": 100.0,
        "las": 50.0,
    }
    # obl is only predicted (twice), obl:tmod only gold: undefined sides are None.
    assert labels["obl"] == {
        "gold": 0,
        "predicted": 2,
        "precision": 0.0,
        "recall": None,
        "las": None,
    }
    assert labels["obl:tmod"]["precision"] is None and labels["obl:tmod"]["recall"] == 0.0
    assert labels["punct"]["las"] == 50.0
    assert sum(s.gold for s in scores.per_label.values()) == 14
    assert sum(s.predicted for s in scores.per_label.values()) == 14
    buckets = {s.bucket: s for s in scores.per_length}
    assert list(buckets) == ["1-10", "11-20", "21-30", "31-40", "41+"]
    assert (buckets["1-10"].sentences, buckets["1-10"].words) == (3, 14)
    assert buckets["1-10"].uas == pytest.approx(100 * 11 / 14)
    assert buckets["1-10"].las == pytest.approx(100 * 10 / 14)  # CoNLL 2018 LAS
    assert buckets["11-20"].sentences == 0 and buckets["11-20"].uas is None


def test_evaluate_files_matches_hand_checked_scores(example_files: tuple[Path, Path]) -> None:
    gold_path, pred_path = example_files
    assert evaluate_files(gold_path, pred_path).to_dict() == pytest.approx(EXPECTED_FILES)
    assert evaluate(read_conllu(gold_path), read_conllu(pred_path)).to_dict() == pytest.approx(
        EXPECTED_FILES
    )


def test_undefined_scores_are_none() -> None:
    # A projective gold tree parsed projectively, all words punctuation: no non-projective arc
    # on either side and nothing to score without punctuation.
    acc = ScoreAccumulator()
    acc.add([0, 1], ["root", "punct"], [0, 1], ["root", "punct"], ["!", "?"])
    scores = acc.result()
    assert scores.uas == 100.0
    for key in ("nonproj_precision", "nonproj_recall", "uas_nopunct", "crossed_recall"):
        assert getattr(scores, key) is None, key
    assert ScoreAccumulator().result().to_dict() == {
        key: (0 if key in ("words", "sentences") else None) for key in CORE_KEYS
    }


def test_accumulator_refuses_length_mismatch() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        ScoreAccumulator().add([0, 1], ["root", "obj"], [0], ["root"], ["a", "b"])
    tags = TagColumns(["X"], ["_"], ["_"])
    with pytest.raises(ValueError, match="differ in length"):
        ScoreAccumulator().add(
            [0, 1], ["root", "obj"], [0, 1], ["root", "obj"], ["a", "b"], gold_tags=tags
        )


@pytest.mark.parametrize(
    ("form", "expected"),
    [
        (".", True),
        ("...", True),
        ("«", True),  # Pi
        ("—", True),  # Pd
        ("_", True),  # Pc
        ("$", False),  # Sc: a symbol, not punctuation
        ("a.", False),
        ("3", False),
        ("", False),
    ],
)
def test_is_punctuation_uses_unicode_categories(form: str, expected: bool) -> None:
    assert is_punctuation(form) is expected


def test_universal_label() -> None:
    assert universal_label("nmod:poss") == "nmod"
    assert universal_label("nmod") == "nmod"
    assert universal_label("acl:relcl:x") == "acl"


def test_trainer_call_without_tags_still_works() -> None:
    # The trainer calls add() positionally, without tag columns: tree scores and CLAS are
    # reported, the tag scores, MLAS and BLEX are not.
    acc = ScoreAccumulator()
    acc.add([2, 0], ["nsubj:pass", "root"], [2, 0], ["nsubj", "root"], ["It", "works"])
    scores = acc.result()
    assert (scores.uas, scores.las, scores.las_full, scores.clas) == (100.0, 100.0, 50.0, 100.0)
    for key in ("mlas", "blex", "upos", "xpos", "ufeats", "alltags", "lemmas"):
        assert getattr(scores, key) is None, key


@given(trees(max_words=10))
def test_tree_against_itself_is_perfect(heads: list[int]) -> None:
    n = len(heads)
    deprels = ["dep", "det"] * (n // 2) + ["dep"] * (n % 2)
    forms = [f"w{i}" for i in range(1, n + 1)]
    tags = TagColumns(["NOUN"] * n, ["NN"] * n, ["Number=Sing"] * n, ["w"] * n)
    acc = ScoreAccumulator()
    acc.add(heads, deprels, heads, deprels, forms, gold_tags=tags, pred_tags=tags)
    scores = acc.result()
    for key in CORE_KEYS[:-2]:
        value = getattr(scores, key)
        # Only the non-projective and crossed scores can be undefined, and exactly when the
        # tree has no such arc.
        assert value == 100.0 or (value is None and key != "uas"), key
    assert scores.mlas == scores.blex == 100.0
    assert (scores.nonproj_precision is None) == is_projective(heads)
    assert (scores.nonproj_recall is None) == is_projective(heads)
    assert (scores.crossed_recall is None) == is_projective(heads)


@given(st.data())
def test_score_relations(data: st.DataObject) -> None:
    gold = data.draw(trees(max_words=9))
    n = len(gold)
    pred = data.draw(trees(min_words=n, max_words=n))
    labels = st.sampled_from(["nmod", "nmod:poss", "obj", "punct"])
    gold_deprels = data.draw(st.lists(labels, min_size=n, max_size=n))
    pred_deprels = data.draw(st.lists(labels, min_size=n, max_size=n))
    forms = data.draw(st.lists(st.sampled_from(["a", ".", "b"]), min_size=n, max_size=n))
    acc = ScoreAccumulator()
    acc.add(gold, gold_deprels, pred, pred_deprels, forms)
    scores = acc.result()
    r = scores.ratios
    assert scores.uas is not None and scores.las is not None
    assert scores.las_full is not None
    assert scores.las_full <= scores.las <= scores.uas
    # Every label here is a content relation except punct, on both sides.
    clas = scores.f1_counts["clas"]
    assert clas.gold == sum(universal_label(d) != "punct" for d in gold_deprels)
    assert clas.predicted == sum(universal_label(d) != "punct" for d in pred_deprels)
    assert clas.correct <= r["las"].correct
    # Crossed and uncrossed partition the scoring (non-punctuation) words.
    assert r["crossed_recall"].total + r["uncrossed_recall"].total == r["uas_nopunct"].total
    assert r["crossed_recall"].correct + r["uncrossed_recall"].correct == r["uas_nopunct"].correct
    assert (r["nonproj_precision"].total == 0) == is_projective(pred)
    assert (r["nonproj_recall"].total == 0) == is_projective(gold)
    assert scores.exact_unlabeled == (100.0 if gold == pred else 0.0)


# --- Mismatched files -------------------------------------------------------------------------


def test_mismatched_word_names_sentence_and_word(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.conllu", GOLD)
    cat = ["His", "cat", "barked", "loudly", "black"]
    changed = [PRED[0], ("s2", cat, PRED[1][2], PRED[1][3]), PRED[2]]
    pred = write(tmp_path / "pred.conllu", changed)
    with pytest.raises(InputError) as caught:
        evaluate_files(gold, pred)
    message = str(caught.value)
    assert "sentence s2" in message
    assert "word 2" in message and "'dog'" in message and "'cat'" in message
    assert "gold.conllu" in message and "pred.conllu" in message
    # s2 starts on line 8 in both files: s1 takes lines 1-6 (comment + 5 words), blank line 7.
    assert "line 8" in message
    assert caught.value.sent_id == "s2" and caught.value.line == 8


def test_mismatched_sentence_length(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.conllu", GOLD)
    s3 = ("s3", ["They", "left", "early"], [2, 0, 2], ["nsubj", "root", "advmod"])
    shorter = [PRED[0], PRED[1], s3]
    pred = write(tmp_path / "pred.conllu", shorter)
    with pytest.raises(InputError, match=r"sentence s3.*word 4.*'\.' vs predicted <missing>"):
        evaluate_files(gold, pred)


def test_mismatched_sentence_count(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.conllu", GOLD)
    pred = write(tmp_path / "pred.conllu", PRED[:2])
    with pytest.raises(InputError, match=r"gold has 3 sentences but prediction has 2") as caught:
        evaluate_files(gold, pred)
    assert "sentence s3" in str(caught.value)
    assert main([str(gold), str(pred)]) == 2


# --- CLI --------------------------------------------------------------------------------------


def test_cli_json_has_exactly_the_core_keys(
    example_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gold, pred = example_files
    assert main([str(gold), str(pred), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert list(result) == list(CORE_KEYS)
    assert set(result) == {
        "uas", "las", "las_full", "clas", "mlas", "blex", "upos", "xpos", "ufeats", "alltags",
        "lemmas", "uas_nopunct", "las_nopunct", "exact_unlabeled", "exact_labeled",
        "nonproj_precision", "nonproj_recall", "crossed_recall", "uncrossed_recall", "words",
        "sentences",
    }  # fmt: skip
    assert result == pytest.approx(EXPECTED_FILES)
    assert result["xpos"] is None and result["mlas"] is None


def test_cli_json_verbose_adds_breakdowns(
    example_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gold, pred = example_files
    assert main([str(gold), str(pred), "--json", "--verbose"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) - set(CORE_KEYS) == {
        "per_label",
        "per_length",
        "nonproj_labeled_precision",
        "nonproj_labeled_recall",
        "f1_counts",
    }
    assert result["per_label"]["obl"]["recall"] is None
    # MLAS is not reported (FEATS is "_" throughout the gold file), so it has no counts.
    assert set(result["f1_counts"]) == {"clas", "blex"}
    assert result["f1_counts"]["clas"] == {
        "correct": 9,
        "gold": 12,
        "predicted": 12,
        "precision": 75.0,
        "recall": 75.0,
        "f1": 75.0,
    }
    assert result["per_length"]["1-10"]["sentences"] == 3


def test_cli_table(example_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    gold, pred = example_files
    assert main([str(gold), str(pred), "--verbose"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split("  ")[0].strip(): line.split() for line in lines if line.strip()}
    assert rows["UAS"][1:] == ["78.57", "11", "/", "14"]
    assert rows["LAS (CoNLL 2018: universal part of DEPREL)"][-4:] == ["71.43", "10", "/", "14"]
    assert rows["LAS full labels"][-4:] == ["57.14", "8", "/", "14"]
    assert rows["CLAS F1 (content words)"][-6:] == ["75.00", "9", "/", "12", "predicted", "12"]
    assert rows["XPOS"] == ["XPOS", "n/a"]  # "_" throughout the gold file: no counts either
    assert rows["UPOS"][1:] == ["100.00", "14", "/", "14"]
    assert rows["Non-proj. arcs precision"][-4:] == ["33.33", "1", "/", "3"]
    assert rows["Sentences"][-1] == "3"
    assert rows["nmod:poss"] == ["nmod:poss", "1", "0", "n/a", "0.00", "0.00"]
    assert rows["1-10"] == ["1-10", "3", "14", "78.57", "71.43"]


def test_cli_subprocess(example_files: tuple[Path, Path]) -> None:
    gold, pred = example_files
    done = subprocess.run(
        [sys.executable, "-m", "neuralparse.evaluate", str(gold), str(pred), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["words"] == 14


# --- Shared treebank --------------------------------------------------------------------------


def test_gold_against_itself_on_a_treebank(ud_root: Path) -> None:
    path = ud_root / "UD_English-EWT" / "dev.conllu"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    sentences = read_conllu(path)
    scores = evaluate(sentences, sentences)
    assert scores.sentences == len(sentences)
    assert scores.words == sum(len(s) for s in sentences)
    for key in CORE_KEYS[:-2]:
        assert getattr(scores, key) == 100.0, key


def test_cli_reports_unreadable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write(tmp_path / "gold.conllu", GOLD)
    assert main([str(gold), str(tmp_path / "missing.conllu")]) == 2
    assert "missing.conllu" in capsys.readouterr().err
