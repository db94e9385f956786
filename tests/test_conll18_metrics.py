"""Tests of the CoNLL 2018 shared task metrics (Zeman et al. 2018): hand-worked examples of LAS,
CLAS, MLAS, BLEX, UPOS, XPOS, UFeats, AllTags and Lemmas, when they are reported, and a
comparison with the official scorer (``udtools.udeval``, the CoNLL 2018 ``conll18_ud_eval.py``
extended for IWPT 2020; the tests skip when the ``udtools`` package is not installed); then the
same for system outputs with another tokenization (character alignment): hand-worked merged and
split tokens, multiword tokens and sentence boundaries, and random re-tokenizations of generated
and real sentences."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from neuralparse.errors import InputError
from neuralparse.evaluate import main
from neuralparse.evaluation import (
    TAG_SCORE_COLUMNS,
    F1Counts,
    ScoreAccumulator,
    Scores,
    TagColumns,
    evaluate,
    evaluate_files,
    universal_features,
)
from neuralparse.evaluation.alignment import (
    SystemScores,
    evaluate_system_files,
    score_by_alignment,
)
from neuralparse.io import read_conllu
from tests.conftest import shared_treebanks


@dataclass(frozen=True)
class Word:
    """One word of a hand-written sentence (the columns the metrics read)."""

    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: int
    deprel: str


def accumulate(
    sentences: Sequence[tuple[Sequence[Word], Sequence[Word]]], *, lemmas: bool = True
) -> ScoreAccumulator:
    """Add (gold words, predicted words) pairs with their tag columns."""
    acc = ScoreAccumulator()
    for gold, pred in sentences:
        acc.add(
            [w.head for w in gold],
            [w.deprel for w in gold],
            [w.head for w in pred],
            [w.deprel for w in pred],
            [w.form for w in gold],
            gold_tags=tags_of(gold, lemmas=lemmas),
            pred_tags=tags_of(pred, lemmas=lemmas),
        )
    return acc


def tags_of(words: Sequence[Word], *, lemmas: bool = True) -> TagColumns:
    return TagColumns(
        [w.upos for w in words],
        [w.xpos for w in words],
        [w.feats for w in words],
        [w.lemma for w in words] if lemmas else None,
    )


def score(gold: Sequence[Word], pred: Sequence[Word]) -> Scores:
    return accumulate([(gold, pred)]).result()


def changed(words: Sequence[Word], index: int, **columns: str | int) -> list[Word]:
    """A copy of ``words`` with the word ``index`` (1-based) changed."""
    return [replace(w, **columns) if i == index else w for i, w in enumerate(words, 1)]


def f1_counts(scores: Scores, key: str) -> tuple[int, int, int]:
    counts = scores.f1_counts[key]
    return counts.correct, counts.gold, counts.predicted


# "She sat in the chair ." -- content words: She (nsubj), sat (root), chair (obl); function
# words: in (case), the (det), both children of chair; "." (punct) is neither.
CHAIR = [
    Word("She", "she", "PRON", "PRP", "Case=Nom|Number=Sing|Person=3|PronType=Prs", 2, "nsubj"),
    Word("sat", "sit", "VERB", "VBD", "Mood=Ind|Tense=Past|VerbForm=Fin", 0, "root"),
    Word("in", "in", "ADP", "IN", "_", 5, "case"),
    Word("the", "the", "DET", "DT", "Definite=Def|PronType=Art", 5, "det"),
    Word("chair", "chair", "NOUN", "NN", "Number=Sing", 2, "obl"),
    Word(".", ".", "PUNCT", ".", "_", 2, "punct"),
]


def test_perfect_prediction() -> None:
    scores = score(CHAIR, CHAIR)
    for key in ("uas", "las", "las_full", "clas", "mlas", "blex", "upos", "xpos", "ufeats"):
        assert getattr(scores, key) == 100.0, key
    assert scores.alltags == scores.lemmas == 100.0
    assert f1_counts(scores, "clas") == (3, 3, 3)


def test_las_compares_the_universal_part_of_the_relation() -> None:
    # "Kim was seen": subtypes differ on words 1 and 2; word 3 has a wrong universal relation.
    gold = [
        Word("Kim", "Kim", "PROPN", "NNP", "Number=Sing", 3, "nsubj:pass"),
        Word("was", "be", "AUX", "VBD", "Tense=Past", 3, "aux:pass"),
        Word("seen", "see", "VERB", "VBN", "VerbForm=Part", 0, "root"),
    ]
    pred = changed(changed(gold, 1, deprel="nsubj"), 2, deprel="aux:tense")
    pred = changed(pred, 3, deprel="ccomp")
    scores = score(gold, pred)
    assert scores.uas == 100.0
    assert scores.las == pytest.approx(200 / 3)  # words 1 and 2
    assert scores.las_full == 0.0
    assert scores.las_nopunct == 0.0 and scores.exact_labeled == 0.0  # full labels
    # Content words: Kim and seen on both sides; only Kim is right.
    assert f1_counts(scores, "clas") == (1, 2, 2)


def test_clas_leaves_out_function_words_and_punctuation() -> None:
    # "The dog barked .": the wrong heads are on the determiner and the full stop.
    gold = [
        Word("The", "the", "DET", "DT", "_", 2, "det"),
        Word("dog", "dog", "NOUN", "NN", "_", 3, "nsubj"),
        Word("barked", "bark", "VERB", "VBD", "_", 0, "root"),
        Word(".", ".", "PUNCT", ".", "_", 3, "punct"),
    ]
    pred = changed(changed(gold, 1, head=3), 4, head=2)
    scores = score(gold, pred)
    assert scores.uas == scores.las == 50.0
    assert scores.clas == 100.0
    assert f1_counts(scores, "clas") == (2, 2, 2)


def test_clas_is_an_f1_over_gold_and_predicted_content_words() -> None:
    # "in" predicted obl instead of case: a content word in the prediction only. Gold content
    # words 3 (She, sat, chair), predicted 4, correct 3: precision 3/4, recall 3/3, and
    # F1 = 2 * 3 / (3 + 4), not the accuracy 3/3 over gold content words.
    pred = changed(CHAIR, 3, deprel="obl")
    scores = score(CHAIR, pred)
    assert f1_counts(scores, "clas") == (3, 3, 4)
    assert scores.clas == pytest.approx(600 / 7)
    counts = scores.f1_counts["clas"]
    assert counts.precision == 75.0 and counts.recall == 100.0
    # "in" is no longer a functional child of chair in the prediction: MLAS loses chair too.
    assert f1_counts(scores, "mlas") == (2, 3, 4)
    assert scores.las == pytest.approx(500 / 6)


def test_mlas_wrong_feature_on_a_function_word() -> None:
    # Every head and relation is right, but the determiner's universal feature Definite is
    # wrong: chair, whose functional children are "in" and "the", is wrong for MLAS.
    pred = changed(CHAIR, 4, feats="Definite=Ind|PronType=Art")
    scores = score(CHAIR, pred)
    assert scores.las == scores.clas == 100.0
    assert f1_counts(scores, "mlas") == (2, 3, 3)
    assert scores.ufeats == pytest.approx(500 / 6)
    assert scores.alltags == pytest.approx(500 / 6)


def test_mlas_function_word_attached_to_the_wrong_content_word() -> None:
    # "the" attached to sat: chair misses a functional child and sat gains one, so both are
    # wrong for MLAS although CLAS (which ignores function words) is perfect.
    pred = changed(CHAIR, 4, head=2)
    scores = score(CHAIR, pred)
    assert scores.clas == 100.0
    assert scores.las == pytest.approx(500 / 6)
    assert f1_counts(scores, "mlas") == (1, 3, 3)


def test_mlas_checks_the_content_words_own_tags() -> None:
    # chair tagged PROPN; and She with a wrong universal feature.
    pred = changed(CHAIR, 5, upos="PROPN")
    pred = changed(pred, 1, feats="Case=Acc|Number=Sing|Person=3|PronType=Prs")
    scores = score(CHAIR, pred)
    assert f1_counts(scores, "mlas") == (1, 3, 3)  # only sat
    assert scores.upos == pytest.approx(500 / 6)


def test_mlas_ignores_language_specific_features_and_xpos() -> None:
    pred = changed(CHAIR, 4, feats="Definite=Def|PronType=Art|Typo=Yes", xpos="DET")
    pred = changed(pred, 5, feats="Number=Sing|NounType=Common")
    scores = score(CHAIR, pred)
    assert scores.mlas == 100.0
    assert scores.ufeats == 100.0
    assert scores.xpos == pytest.approx(500 / 6)
    assert scores.alltags == pytest.approx(500 / 6)


def test_universal_features() -> None:
    assert universal_features("Number=Sing|Typo=Yes|Case=Nom") == "Case=Nom|Number=Sing"
    assert universal_features("Gender[psor]=Masc|Number=Sing") == "Number=Sing"  # layered
    assert universal_features("_") == universal_features("Foo=Bar") == ""
    assert universal_features("PronType=Dem,Ind") == "PronType=Dem,Ind"


def test_ufeats_compares_universal_features_only() -> None:
    # Gold / predicted FEATS of six words, each attached to the root word 1.
    pairs = [
        ("Number=Sing|Typo=Yes", "Number=Sing"),  # right: Typo is language-specific
        ("Case=Nom|Number=Sing", "Number=Sing|Case=Nom"),  # right: order is ignored
        ("Gender[psor]=Masc|Number=Sing", "Number=Sing"),  # right: layered feature ignored
        ("_", "Foo=Bar"),  # right: no universal feature on either side
        ("_", "Abbr=Yes"),  # wrong: Abbr is universal
        ("Number=Plur", "Number=Sing"),  # wrong
    ]
    gold = [Word(f"w{i}", "_", "X", "_", g, 0 if i == 1 else 1, "dep") for i, (g, _) in
            enumerate(pairs, 1)]  # fmt: skip
    pred = [replace(w, feats=p) for w, (_, p) in zip(gold, pairs, strict=True)]
    scores = score(gold, pred)
    assert scores.ufeats == pytest.approx(400 / 6)
    assert scores.ratios["ufeats"].correct == 4
    assert scores.xpos is None and scores.alltags is None  # XPOS is "_" throughout the gold
    assert scores.lemmas is None and scores.blex is None  # so is LEMMA
    assert scores.mlas == pytest.approx(400 / 6)  # every word is a content word


def test_alltags_needs_upos_xpos_and_universal_features() -> None:
    gold = [
        Word("a", "a", "NOUN", "NN", "Number=Sing", 0, "root"),
        Word("b", "b", "VERB", "VB", "VerbForm=Inf", 1, "acl"),
        Word("c", "c", "ADJ", "JJ", "Degree=Pos", 1, "amod"),
        Word("d", "d", "ADV", "RB", "Degree=Pos", 1, "advmod"),
    ]
    pred = changed(gold, 2, upos="AUX")  # UPOS wrong
    pred = changed(pred, 3, xpos="JJR")  # XPOS wrong
    pred = changed(pred, 4, feats="Degree=Pos|Style=Coll")  # only a language-specific extra
    scores = score(gold, pred)
    assert scores.upos == scores.xpos == 75.0
    assert scores.ufeats == 100.0
    assert scores.alltags == 50.0  # words 1 and 4


def test_lemmas_and_blex() -> None:
    # Gold LEMMA "_" accepts any prediction (as the official scorer does).
    gold = [
        Word("She", "she", "PRON", "PRP", "_", 2, "nsubj"),
        Word("sat", "_", "VERB", "VBD", "_", 0, "root"),
        Word("in", "in", "ADP", "IN", "_", 4, "case"),
        Word("chairs", "chair", "NOUN", "NNS", "_", 2, "obl"),
    ]
    pred = changed(changed(changed(gold, 2, lemma="sit"), 3, lemma="at"), 4, lemma="chairs")
    scores = score(gold, pred)
    assert scores.lemmas == 50.0  # She, sat
    assert scores.clas == 100.0
    assert f1_counts(scores, "blex") == (2, 3, 3)  # chairs has the wrong lemma
    assert scores.ufeats is None and scores.mlas is None  # FEATS "_" throughout the gold


def test_tag_scores_need_both_sides_in_every_sentence() -> None:
    acc = accumulate([(CHAIR, CHAIR)])
    # A second sentence without predicted tags: no tag score covers only part of the data.
    acc.add([0], ["root"], [0], ["root"], ["Yes"], gold_tags=tags_of(CHAIR[:1]))
    scores = acc.result()
    for key in ("mlas", "blex", "upos", "xpos", "ufeats", "alltags", "lemmas"):
        assert getattr(scores, key) is None, key
        assert key not in scores.ratios and key not in scores.f1_counts, key
    assert scores.clas == 100.0 and scores.words == 7


def test_missing_lemmas_leave_only_lemma_scores_out() -> None:
    scores = accumulate([(CHAIR, CHAIR)], lemmas=False).result()
    assert scores.lemmas is None and scores.blex is None
    assert scores.upos == scores.alltags == scores.mlas == 100.0


def test_gold_underscore_in_some_sentences_is_compared_as_a_value() -> None:
    # UPOS is annotated in one sentence, so it is reported, and "_" in the other is a value.
    bare = [replace(w, upos="_") for w in CHAIR]
    scores = accumulate([(CHAIR, CHAIR), (bare, CHAIR)]).result()
    assert scores.upos == 50.0


def test_tag_columns_must_agree_in_length() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        TagColumns(["X", "X"], ["_"], ["_", "_"])
    with pytest.raises(ValueError, match="differ in length"):
        TagColumns(["X"], ["_"], ["_"], ["a", "b"])


def test_evaluate_reads_the_tag_columns(tmp_path: Path) -> None:
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text(conllu([CHAIR]), encoding="utf-8")
    pred_path.write_text(conllu([changed(CHAIR, 4, head=2, lemma="a")]), encoding="utf-8")
    scores = evaluate(read_conllu(gold_path), read_conllu(pred_path))
    assert f1_counts(scores, "mlas") == (1, 3, 3)  # as in the accumulator test above
    assert f1_counts(scores, "blex") == (3, 3, 3)  # "the" is not a content word
    assert scores.lemmas == pytest.approx(500 / 6)
    assert evaluate_files(gold_path, pred_path) == scores


def conllu(sentences: Sequence[Sequence[Word]]) -> str:
    """CoNLL-U text of the sentences, every column filled."""
    blocks = []
    for number, words in enumerate(sentences, 1):
        lines = [f"# sent_id = {number}", f"# text = {' '.join(w.form for w in words)}"]
        lines += [
            f"{i}\t{w.form}\t{w.lemma}\t{w.upos}\t{w.xpos}\t{w.feats}\t{w.head}\t{w.deprel}\t_\t_"
            for i, w in enumerate(words, 1)
        ]
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)


# --- Comparison with the official scorer ------------------------------------------------------

RELATIONS = [
    "nsubj", "nsubj:pass", "obj", "obl", "obl:tmod", "nmod", "nmod:poss", "amod", "advmod",
    "conj", "compound:prt", "acl:relcl", "dep", "aux", "aux:pass", "cop", "mark", "det",
    "det:poss", "case", "cc", "clf", "punct", "notud",
]  # fmt: skip
UPOS = ["NOUN", "VERB", "ADP", "DET", "AUX", "PUNCT", "_"]
XPOS = ["NN", "VB", "IN", "DT", "_"]
FEATS = [
    "_", "Number=Sing", "Case=Nom|Number=Sing", "Number=Sing|Case=Nom", "Number=Sing|Typo=Yes",
    "Definite=Def|PronType=Art", "Foo=Bar", "Gender[psor]=Masc|Number=Plur", "Abbr=Yes",
]  # fmt: skip
LEMMAS = ["_", "a", "b", "c"]
FORMS = ["a", "bb", ".", ",", "ccc"]
OFFICIAL_NAMES = {
    "uas": "UAS", "las": "LAS", "clas": "CLAS", "mlas": "MLAS", "blex": "BLEX", "upos": "UPOS",
    "xpos": "XPOS", "ufeats": "UFeats", "alltags": "AllTags", "lemmas": "Lemmas",
}  # fmt: skip


def random_heads(rng: random.Random, n: int) -> list[int]:
    """A random tree with one root: words attach, in a random order, to a placed word."""
    order = rng.sample(range(1, n + 1), n)
    heads = [0] * n
    for placed, word in enumerate(order[1:], 1):
        heads[word - 1] = rng.choice(order[:placed])
    return heads


def random_sentence(rng: random.Random) -> list[Word]:
    n = rng.randint(1, 12)
    return [
        Word(
            rng.choice(FORMS),
            rng.choice(LEMMAS),
            rng.choice(UPOS),
            rng.choice(XPOS),
            rng.choice(FEATS),
            head,
            "root" if head == 0 else rng.choice(RELATIONS),
        )
        for head in random_heads(rng, n)
    ]


def perturbed(rng: random.Random, words: list[Word], rate: float) -> list[Word]:
    """A prediction: a new random tree for some sentences, and random changes of columns."""
    heads = random_heads(rng, len(words)) if rng.random() < 0.5 else [w.head for w in words]
    pools = {"lemma": LEMMAS, "upos": UPOS, "xpos": XPOS, "feats": FEATS, "deprel": RELATIONS}
    result = []
    for word, head in zip(words, heads, strict=True):
        columns = {name: rng.choice(pool) for name, pool in pools.items() if rng.random() < rate}
        result.append(replace(word, head=head, **columns))
    return result


def official_scores(gold_path: Path, pred_path: Path) -> dict:
    udeval = pytest.importorskip("udtools.udeval")
    return udeval.evaluate(
        udeval.load_conllu_file(str(gold_path)), udeval.load_conllu_file(str(pred_path))
    )


def assert_same_as_official(scores: Scores, official: dict) -> None:
    for key, name in OFFICIAL_NAMES.items():
        reference = official[name]
        assert getattr(scores, key) == pytest.approx(100 * reference.f1), key
        if key in scores.f1_counts:
            counts = (reference.correct, reference.gold_total, reference.system_total)
            assert f1_counts(scores, key) == counts, key
        else:
            ratio = scores.ratios[key]
            assert (ratio.correct, ratio.total) == (reference.correct, reference.gold_total), key


@pytest.mark.parametrize("seed", range(8))
def test_generated_files_score_as_the_official_scorer(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    gold = [random_sentence(rng) for _ in range(40)]
    pred = [perturbed(rng, sentence, rate=0.25) for sentence in gold]
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text(conllu(gold), encoding="utf-8")
    pred_path.write_text(conllu(pred), encoding="utf-8")
    official = official_scores(gold_path, pred_path)
    assert_same_as_official(evaluate_files(gold_path, pred_path), official)


TREEBANK_FILES = [d / "dev.conllu" for d in shared_treebanks() if (d / "dev.conllu").is_file()]


def perturbed_block(rng: random.Random, block: str) -> str:
    """A treebank sentence (CoNLL-U lines) with its word lines perturbed as in
    :func:`perturbed`; comments, multiword-token and empty-node lines are kept."""
    lines = block.split("\n")
    rows = [line.split("\t") for line in lines]
    word_rows = [row for row in rows if len(row) == 10 and row[0].isdigit()]
    words = [Word(r[1], r[2], r[3], r[4], r[5], int(r[6]), r[7]) for r in word_rows]
    for row, word in zip(word_rows, perturbed(rng, words, rate=0.1), strict=True):
        row[2:8] = [word.lemma, word.upos, word.xpos, word.feats, str(word.head), word.deprel]
    return "\n".join("\t".join(row) for row in rows)


@pytest.mark.treebank
@pytest.mark.parametrize("path", TREEBANK_FILES, ids=[p.parent.name for p in TREEBANK_FILES])
def test_treebank_prediction_scores_as_the_official_scorer(tmp_path: Path, path: Path) -> None:
    # The first sentences of a real treebank (multiword tokens included) against a perturbed
    # copy.
    rng = random.Random(path.parent.name)
    blocks = path.read_text(encoding="utf-8").strip("\n").split("\n\n")[:300]
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    pred_blocks = [perturbed_block(rng, block) for block in blocks]
    pred_path.write_text("\n\n".join(pred_blocks) + "\n\n", encoding="utf-8")
    official = official_scores(gold_path, pred_path)
    assert_same_as_official(evaluate_files(gold_path, pred_path), official)


# --- Different tokenizations: the character alignment -----------------------------------------


def block(sent_id: str, rows: Sequence[tuple[str, ...]]) -> str:
    """A CoNLL-U sentence: word rows (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL) and multiword
    token rows (ID FORM)."""
    lines = [f"# sent_id = {sent_id}"]
    for row in rows:
        cells = [*row, *["_"] * (10 - len(row))]
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n\n"


def system_scores(tmp_path: Path, gold: str, pred: str) -> tuple[SystemScores, dict]:
    """Our scores of the CoNLL-U texts ``pred`` against ``gold``, and the official ones."""
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text(gold, encoding="utf-8")
    pred_path.write_text(pred, encoding="utf-8")
    return evaluate_system_files(gold_path, pred_path), official_scores(gold_path, pred_path)


def counts_of(counts: F1Counts) -> tuple[int, int, int]:
    return counts.correct, counts.gold, counts.predicted


def assert_aligned_as_official(result: SystemScores, official: dict) -> None:
    """Every count of the segmentation and of the CoNLL 2018 scores equals the official one;
    a score we do not report must be a tag score whose gold column is ``_`` throughout."""
    for name in ("Tokens", "Sentences", "Words"):
        reference = official[name]
        counts = counts_of(getattr(result.segmentation, name.lower()))
        assert counts == (reference.correct, reference.gold_total, reference.system_total), name
    for key, name in OFFICIAL_NAMES.items():
        value = getattr(result.scores, key)
        if value is None:
            assert key in TAG_SCORE_COLUMNS, key
            continue
        reference = official[name]
        counts = result.scores.f1_counts[key]
        assert counts_of(counts) == (reference.correct, reference.gold_total,
                                     reference.system_total), key  # fmt: skip
        assert value == pytest.approx(100 * reference.f1, abs=0.01), key
        assert counts.precision == pytest.approx(100 * reference.precision, abs=0.01), key
        assert counts.recall == pytest.approx(100 * reference.recall, abs=0.01), key


NEW_YORK = block("1", [
    ("1", "New", "New", "PROPN", "NNP", "Number=Sing", "2", "compound"),
    ("2", "York", "York", "PROPN", "NNP", "Number=Sing", "4", "nsubj"),
    ("3", "is", "be", "AUX", "VBZ", "Mood=Ind", "4", "cop"),
    ("4", "big", "big", "ADJ", "JJ", "Degree=Pos", "0", "root"),
])  # fmt: skip
NEWYORK = block("1", [
    ("1", "NewYork", "NewYork", "PROPN", "NNP", "Number=Sing", "3", "nsubj"),
    ("2", "is", "be", "AUX", "VBZ", "Mood=Ind", "3", "cop"),
    ("3", "big", "big", "ADJ", "JJ", "Degree=Pos", "0", "root"),
])  # fmt: skip


def test_merged_tokens(tmp_path: Path) -> None:
    # "New York" predicted as one token: "is" and "big" are aligned (same character spans),
    # "New", "York" and "NewYork" are not.
    result, official = system_scores(tmp_path, NEW_YORK, NEWYORK)
    assert result.aligned
    segmentation = result.segmentation
    assert counts_of(segmentation.tokens) == (2, 4, 3)
    assert counts_of(segmentation.sentences) == (1, 1, 1)
    assert counts_of(segmentation.words) == (2, 4, 3)
    assert segmentation.words.f1 == pytest.approx(400 / 7)
    scores = result.scores
    for key in ("uas", "las", "upos", "xpos", "ufeats", "alltags", "lemmas"):
        assert counts_of(scores.f1_counts[key]) == (2, 4, 3), key
    # Content words: New, York, big in gold; NewYork, big predicted; only big is aligned.
    for key in ("clas", "mlas", "blex"):
        assert counts_of(scores.f1_counts[key]) == (1, 3, 2), key
    assert scores.clas == 40.0
    assert scores.f1_counts["clas"].precision == 50.0
    # The scores that need the same words are not reported, nor are the breakdowns.
    assert scores.las_full is None and scores.exact_labeled is None and not scores.per_label
    assert scores.words == 4 and scores.sentences == 1
    assert_aligned_as_official(result, official)


def test_split_token_swaps_precision_and_recall(tmp_path: Path) -> None:
    result, official = system_scores(tmp_path, NEWYORK, NEW_YORK)
    assert counts_of(result.segmentation.tokens) == (2, 3, 4)
    assert counts_of(result.segmentation.words) == (2, 3, 4)
    assert counts_of(result.scores.f1_counts["clas"]) == (1, 2, 3)
    assert_aligned_as_official(result, official)


# "vista del mar": the multiword token "del" is "de" + "el".
DEL_MAR = block("1", [
    ("1", "vista", "vista", "NOUN", "NC", "Number=Sing", "0", "root"),
    ("2-3", "del"),
    ("2", "de", "de", "ADP", "SP", "_", "4", "case"),
    ("3", "el", "el", "DET", "DA", "Definite=Def", "4", "det"),
    ("4", "mar", "mar", "NOUN", "NC", "Number=Sing", "1", "nmod"),
])  # fmt: skip


def test_multiword_token_left_unsplit(tmp_path: Path) -> None:
    pred = block("1", [
        ("1", "vista", "vista", "NOUN", "NC", "Number=Sing", "0", "root"),
        ("2", "del", "del", "ADP", "SP", "_", "3", "case"),
        ("3", "mar", "mar", "NOUN", "NC", "Number=Sing", "1", "nmod"),
    ])  # fmt: skip
    result, official = system_scores(tmp_path, DEL_MAR, pred)
    assert counts_of(result.segmentation.tokens) == (3, 3, 3)  # the same tokens
    # "de" and "el" against "del": no common form, so only vista and mar are aligned.
    assert counts_of(result.segmentation.words) == (2, 4, 3)
    scores = result.scores
    assert counts_of(scores.f1_counts["uas"]) == (2, 4, 3)
    assert counts_of(scores.f1_counts["clas"]) == (2, 2, 2)
    # mar's functional children (de, el) are not those of the prediction (del, unaligned).
    assert counts_of(scores.f1_counts["mlas"]) == (1, 2, 2)
    assert_aligned_as_official(result, official)


def test_multiword_words_aligned_by_common_forms(tmp_path: Path) -> None:
    # The prediction splits "del" into "De" + "l": "De" matches "de" (case is ignored).
    pred = block("1", [
        ("1", "vista", "vista", "NOUN", "NC", "Number=Sing", "0", "root"),
        ("2-3", "del"),
        ("2", "De", "de", "ADP", "SP", "_", "4", "case"),
        ("3", "l", "el", "DET", "DA", "Definite=Def", "4", "det"),
        ("4", "mar", "mar", "NOUN", "NC", "Number=Sing", "1", "nmod"),
    ])  # fmt: skip
    result, official = system_scores(tmp_path, DEL_MAR, pred)
    assert counts_of(result.segmentation.words) == (3, 4, 4)
    scores = result.scores
    assert counts_of(scores.f1_counts["uas"]) == (3, 4, 4)  # de -> mar is aligned with mar
    assert counts_of(scores.f1_counts["lemmas"]) == (3, 4, 4)
    assert counts_of(scores.f1_counts["clas"]) == (2, 2, 2)
    assert counts_of(scores.f1_counts["mlas"]) == (1, 2, 2)  # "l" is not aligned with "el"
    assert_aligned_as_official(result, official)


HI, BYE = (
    block(sent_id, [
        ("1", word, word.lower(), "INTJ", "UH", "_", "0", "root"),
        ("2", ".", ".", "PUNCT", ".", "_", "1", "punct"),
    ])
    for sent_id, word in (("1", "Hi"), ("2", "Bye"))
)  # fmt: skip
HI_BYE = block("1", [
    ("1", "Hi", "hi", "INTJ", "UH", "_", "0", "root"),
    ("2", ".", ".", "PUNCT", ".", "_", "1", "punct"),
    ("3", "Bye", "bye", "INTJ", "UH", "_", "1", "parataxis"),
    ("4", ".", ".", "PUNCT", ".", "_", "3", "punct"),
])  # fmt: skip


@pytest.mark.parametrize("merged_side", ["pred", "gold"])
def test_sentence_boundaries(tmp_path: Path, merged_side: str) -> None:
    # One sentence against two: every word is aligned, no sentence matches, and the root of
    # the second gold sentence has another head in the merged one.
    gold, pred = (HI + BYE, HI_BYE) if merged_side == "pred" else (HI_BYE, HI + BYE)
    result, official = system_scores(tmp_path, gold, pred)
    assert counts_of(result.segmentation.tokens) == (4, 4, 4)
    assert counts_of(result.segmentation.words) == (4, 4, 4)
    sentences = (0, 2, 1) if merged_side == "pred" else (0, 1, 2)
    assert counts_of(result.segmentation.sentences) == sentences
    assert counts_of(result.scores.f1_counts["uas"]) == (3, 4, 4)
    assert counts_of(result.scores.f1_counts["clas"]) == (1, 2, 2)
    assert_aligned_as_official(result, official)


def test_different_texts_cannot_be_aligned(tmp_path: Path) -> None:
    pred = HI_BYE.replace("\tBye\t", "\tBy\t")
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text(HI + BYE, encoding="utf-8")
    pred_path.write_text(pred, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        evaluate_system_files(gold_path, pred_path)
    message = str(caught.value)
    assert "different texts (whitespace aside) from character 6" in message
    assert f"gold has 'e.' in token 'Bye' ({gold_path}, line 5, sentence 2)" in message
    assert f"prediction has '.' in token '.' ({pred_path}, line 1, sentence 1)" in message
    assert main([str(gold_path), str(pred_path)]) == 2


def test_whitespace_inside_forms_is_ignored(tmp_path: Path) -> None:
    # "New York" as one token with a space (and a no-break space) against two tokens.
    pred = NEWYORK.replace("\tNewYork\tNewYork\t", "\tNew\u00a0York\tNew York\t")
    result, official = system_scores(tmp_path, NEW_YORK, pred)
    assert counts_of(result.segmentation.tokens) == (2, 4, 3)
    assert_aligned_as_official(result, official)


def test_same_words_give_the_same_figures_as_before(tmp_path: Path) -> None:
    rng = random.Random(7)
    gold = [random_sentence(rng) for _ in range(30)]
    pred = [perturbed(rng, sentence, rate=0.25) for sentence in gold]
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text(conllu(gold), encoding="utf-8")
    pred_path.write_text(conllu(pred), encoding="utf-8")
    result = evaluate_system_files(gold_path, pred_path)
    assert not result.aligned
    assert result.scores == evaluate_files(gold_path, pred_path)
    words = sum(len(sentence) for sentence in gold)
    assert counts_of(result.segmentation.words) == (words, words, words)
    assert counts_of(result.segmentation.tokens) == (words, words, words)
    assert counts_of(result.segmentation.sentences) == (30, 30, 30)
    # Forced through the alignment, the same words give the same CoNLL 2018 figures, as F1.
    aligned = score_by_alignment(read_conllu(gold_path), read_conllu(pred_path)).scores
    for key in OFFICIAL_NAMES:
        assert getattr(aligned, key) == pytest.approx(getattr(result.scores, key)), key


def test_same_words_grouped_into_other_tokens(tmp_path: Path) -> None:
    # The same four words, "del" written as two tokens: only the tokens differ.
    pred = "\n".join(line for line in DEL_MAR.split("\n") if not line.startswith("2-3"))
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text(DEL_MAR, encoding="utf-8")
    pred_path.write_text(pred, encoding="utf-8")
    result = evaluate_system_files(gold_path, pred_path)
    assert not result.aligned and result.scores.las == 100.0
    assert counts_of(result.segmentation.tokens) == (2, 3, 4)
    assert counts_of(result.segmentation.words) == (4, 4, 4)


def test_cli_prints_the_segmentation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold_path, pred_path = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold_path.write_text(NEW_YORK, encoding="utf-8")
    pred_path.write_text(NEWYORK, encoding="utf-8")
    assert main([str(gold_path), str(pred_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split("  ")[0].strip(): line.split() for line in lines if line.strip()}
    assert rows["Tokens F1"][2:] == ["57.14", "2", "/", "4", "predicted", "3", "P", "66.67",
                                     "R", "50.00"]  # fmt: skip
    assert rows["Sentences F1"][2:6] == ["100.00", "1", "/", "1"]
    assert rows["Words F1"][2:6] == ["57.14", "2", "/", "4"]
    assert rows["UAS"][1:] == ["57.14", "2", "/", "4", "predicted", "3"]
    assert rows["LAS full labels"] == ["LAS", "full", "labels", "n/a"]
    assert any("differ" in line for line in lines)
    assert main([str(gold_path), str(pred_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["tokenization"]["words"] == {
        "correct": 2, "gold": 4, "predicted": 3,
        "precision": pytest.approx(200 / 3), "recall": 50.0, "f1": pytest.approx(400 / 7),
    }  # fmt: skip
    assert result["uas"] == pytest.approx(400 / 7)


# --- Randomized re-tokenizations, compared with the official scorer --------------------------


@dataclass(eq=False)
class Node:
    """A word of a file being re-tokenized; its head is another node (``None``: the root)."""

    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    deprel: str
    head: Node | None = None


@dataclass(eq=False)
class Token:
    """A token: a multiword token when ``form`` is set, else one word with its own FORM."""

    form: str | None
    words: list[Node]

    @property
    def text(self) -> str:
        return self.form if self.form is not None else self.words[0].form


Document = list[list[Token]]


def document_of(sentences: Sequence[Sequence[Word]]) -> Document:
    document = []
    for words in sentences:
        nodes = [Node(w.form, w.lemma, w.upos, w.xpos, w.feats, w.deprel) for w in words]
        for node, word in zip(nodes, words, strict=True):
            node.head = nodes[word.head - 1] if word.head else None
        document.append([Token(None, [node]) for node in nodes])
    return document


def parse_block(text: str) -> list[Token]:
    """The tokens of a CoNLL-U sentence (empty nodes left out)."""
    tokens: list[Token] = []
    nodes: list[tuple[Node, int]] = []
    multiword_end = 0
    for line in text.split("\n"):
        cells = line.split("\t")
        if len(cells) != 10 or "." in cells[0]:
            continue
        if "-" in cells[0]:
            multiword_end = int(cells[0].split("-")[1])
            tokens.append(Token(cells[1], []))
            continue
        node = Node(cells[1], cells[2], cells[3], cells[4], cells[5], cells[7])
        nodes.append((node, int(cells[6])))
        if int(cells[0]) <= multiword_end:
            tokens[-1].words.append(node)
        else:
            tokens.append(Token(None, [node]))
    for node, head in nodes:
        node.head = nodes[head - 1][0] if head else None
    return tokens


def tree_heads(nodes: Sequence[Node]) -> list[int]:
    """1-based heads of ``nodes`` made a tree: heads outside the sentence become roots, each
    cycle is cut once, and every root but the first is attached to the first."""
    index = {id(node): i for i, node in enumerate(nodes)}
    heads: list[int | None] = [
        None if node.head is None else index.get(id(node.head)) for node in nodes
    ]
    state = [0] * len(nodes)  # 0 unseen, 1 on the current path, 2 done
    for start in range(len(nodes)):
        path, word = [], start
        while word is not None and state[word] == 0:
            state[word] = 1
            path.append(word)
            word = heads[word]
        if word is not None and state[word] == 1:
            heads[path[-1]] = None
        for seen in path:
            state[seen] = 2
    roots = [i for i, head in enumerate(heads) if head is None]
    return [0 if i == roots[0] else (roots[0] if head is None else head) + 1
            for i, head in enumerate(heads)]  # fmt: skip


def document_conllu(document: Document) -> str:
    blocks = []
    for number, tokens in enumerate(document, 1):
        nodes = [node for token in tokens for node in token.words]
        heads = tree_heads(nodes)
        lines = [f"# sent_id = {number}", f"# text = {' '.join(t.text for t in tokens)}"]
        word = 1
        for token in tokens:
            if token.form is not None:
                lines.append(f"{word}-{word + len(token.words) - 1}\t{token.form}" + "\t_" * 8)
            for node in token.words:
                lines.append(
                    f"{word}\t{node.form}\t{node.lemma}\t{node.upos}\t{node.xpos}\t{node.feats}"
                    f"\t{heads[word - 1]}\t{node.deprel}\t_\t_"
                )
                word += 1
        blocks.append("\n".join(lines) + "\n\n")
    return "".join(blocks)


def plain(token: Token | None) -> bool:
    """Whether ``token`` is one word (not a multiword token)."""
    return token is not None and token.form is None


def splittable(token: Token) -> bool:
    form = token.words[0].form
    return plain(token) and len(form) > 1 and not any(char.isspace() for char in form)


def retokenized_sentence(rng: random.Random, tokens: list[Token], merged: dict) -> list[Token]:
    """Tokens merged, split (into tokens or a multiword token), multiword tokens left unsplit,
    given other words or joined with the next token. ``merged`` maps a node that disappeared
    to the node that took its place."""
    result: list[Token] = []
    i = 0
    while i < len(tokens):
        token, chance = tokens[i], rng.random()
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if chance < 0.08 and plain(token) and plain(following):
            assert following is not None
            first, second = token.words[0], following.words[0]
            first.form += second.form
            merged[second] = first
            result.append(Token(None, [first]))
            i += 2
            continue
        if chance < 0.16 and splittable(token):
            word = token.words[0]
            form, cut = word.form, rng.randint(1, len(word.form) - 1)
            word.form = form[:cut]
            extra = replace(word, form=form[cut:], deprel=rng.choice(RELATIONS), head=word)
            if rng.random() < 0.5:
                result += [Token(None, [word]), Token(None, [extra])]
            else:  # a multiword token, whose words need not spell it
                if rng.random() < 0.5:
                    extra.form = form[cut - 1 :]
                result.append(Token(form, [word, extra]))
        elif chance < 0.24 and token.form is not None:
            action = rng.choice(["unsplit", "rewrite", "join"])
            if action == "unsplit" or (action == "join" and following is None):
                first = token.words[0]
                first.form = token.form
                merged.update((node, first) for node in token.words[1:])
                result.append(Token(None, [first]))
            elif action == "rewrite":
                # Other word forms (repeated ones give the longest common subsequence a choice),
                # a word fewer or a word more.
                forms = [node.form for node in token.words]
                for node in token.words:
                    node.form = rng.choice(
                        [node.form.upper(), node.form[:-1] or "x", node.form, rng.choice(forms)]
                    )
                if len(token.words) > 2 and rng.random() < 0.3:
                    dropped = token.words.pop(rng.randrange(len(token.words)))
                    merged[dropped] = token.words[0]
                if rng.random() < 0.3:
                    model = rng.choice(token.words)
                    token.words.insert(rng.randint(0, len(token.words)), replace(model, head=model))
                result.append(token)
            else:
                assert following is not None
                result.append(Token(token.form + following.text, token.words + following.words))
                i += 1
        elif chance < 0.3 and plain(token) and plain(following):
            assert following is not None  # two words become a multiword token
            result.append(Token(token.text + following.text, token.words + following.words))
            i += 1
        else:
            result.append(token)
        i += 1
    return result


def retokenized(rng: random.Random, document: Document, rate: float) -> Document:
    """A system output for ``document``: sentence boundaries dropped and added, tokens
    re-tokenized (:func:`retokenized_sentence`), and random heads, relations and tags."""
    document = copy.deepcopy(document)
    sentences: Document = []
    for tokens in document:
        if sentences and rng.random() < 0.15:
            sentences[-1] += tokens
        elif len(tokens) > 1 and rng.random() < 0.15:
            cut = rng.randint(1, len(tokens) - 1)
            sentences += [tokens[:cut], tokens[cut:]]
        else:
            sentences.append(tokens)
    merged: dict[Node, Node] = {}
    sentences = [retokenized_sentence(rng, tokens, merged) for tokens in sentences]
    pools = {"lemma": LEMMAS, "upos": UPOS, "xpos": XPOS, "feats": FEATS, "deprel": RELATIONS}
    for tokens in sentences:
        nodes = [node for token in tokens for node in token.words]
        for node in nodes:
            while node.head in merged:
                node.head = merged[node.head]
            if rng.random() < rate:
                node.head = rng.choice([None, *nodes])
            for name, pool in pools.items():
                if rng.random() < rate:
                    setattr(node, name, rng.choice(pool))
    return sentences


def gold_document(rng: random.Random) -> Document:
    """Random sentences (few distinct forms, so that alignment has choices) with some
    multiword tokens."""
    document = document_of([random_sentence(rng) for _ in range(40)])
    for tokens in document:
        i = 0
        while i + 1 < len(tokens):
            if rng.random() < 0.15 and plain(tokens[i]) and plain(tokens[i + 1]):
                words = tokens[i].words + tokens[i + 1].words
                form = "".join(node.form for node in words)
                tokens[i : i + 2] = [Token(form if rng.random() < 0.5 else form[:-1] or "y", words)]
            i += 1
    return document


@pytest.mark.parametrize("seed", range(12))
def test_retokenized_generated_files_score_as_the_official_scorer(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    gold = gold_document(rng)
    result, official = system_scores(
        tmp_path, document_conllu(gold), document_conllu(retokenized(rng, gold, rate=0.2))
    )
    assert result.aligned
    assert_aligned_as_official(result, official)


@pytest.mark.treebank
@pytest.mark.parametrize("path", TREEBANK_FILES, ids=[p.parent.name for p in TREEBANK_FILES])
def test_retokenized_treebank_scores_as_the_official_scorer(tmp_path: Path, path: Path) -> None:
    # The first sentences of a real treebank (its multiword tokens included), re-tokenized.
    rng = random.Random(path.parent.name)
    blocks = path.read_text(encoding="utf-8").strip("\n").split("\n\n")[:250]
    gold = [parse_block(text) for text in blocks]
    result, official = system_scores(
        tmp_path, document_conllu(gold), document_conllu(retokenized(rng, gold, rate=0.1))
    )
    assert result.aligned
    assert_aligned_as_official(result, official)
