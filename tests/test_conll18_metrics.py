"""Tests of the CoNLL 2018 shared task metrics (Zeman et al. 2018): hand-worked examples of LAS,
CLAS, MLAS, BLEX, UPOS, XPOS, UFeats, AllTags and Lemmas, when they are reported, and a
comparison with the official scorer (``udtools.udeval``, the CoNLL 2018 ``conll18_ud_eval.py``
extended for IWPT 2020; the tests skip when the ``udtools`` package is not installed)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from neuralparse.evaluation import (
    ScoreAccumulator,
    Scores,
    TagColumns,
    evaluate,
    evaluate_files,
    universal_features,
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
