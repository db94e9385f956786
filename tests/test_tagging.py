"""The joint tagger-parser at prediction time: tags written as ``tags`` says, trees that never
depend on the input's tags, gold-tag models refused or warned about, old checkpoints."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest
import torch

from neuralparse import Parser
from neuralparse.config import preset_model_config
from neuralparse.errors import InputError
from neuralparse.evaluation import predicted_tag_scores_only
from neuralparse.io import Sentence, read_conllu
from neuralparse.model.encoder import FeatsPairsHead
from neuralparse.model.vocab import Vocabulary
from neuralparse.runtime.checkpoint import load_checkpoint, save_checkpoint
from neuralparse.training.preparation import feats_strings_per_1000_words, rich_morphology_hint
from neuralparse.training.trainer import train
from tests.parser_fixtures import UPOS, make_corpus, write_corpus
from tests.test_predict import RICH_CONLLU, predict
from tests.test_training import learnable_tags, tiny_config

TAG_COLUMNS = (3, 4, 5)  # UPOS, XPOS, FEATS (0-based CoNLL-U columns)


def train_tagger(directory: Path, **model: object) -> Path:
    """A small model trained until it tags the generated corpus (tags follow the form)."""
    corpus = make_corpus(30, seed=5, projective=False)
    cfg = tiny_config(directory, corpus, max_epochs=30, batch_tokens=50)
    for key, value in model.items():
        cfg.model[key] = value
    return train(cfg, directory / "run").checkpoint


@pytest.fixture(scope="module")
def joint(tmp_path_factory: pytest.TempPathFactory) -> Parser:
    return Parser.load(train_tagger(tmp_path_factory.mktemp("joint")), device="cpu")


@pytest.fixture(scope="module")
def gold_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tagger(tmp_path_factory.mktemp("gold"), tag_input="gold")


def test_training_reports_tag_accuracy_and_the_model_learns_it(joint: Parser) -> None:
    assert joint.model.tagged_columns == ("upos", "feats")  # the corpus has no XPOS
    assert joint.dev_metrics["upos"] >= 90
    assert joint.dev_metrics["ufeats"] >= 90


def test_plain_text_gets_the_models_tags(joint: Parser) -> None:
    words = ["w3", "w17", "w42", "w8"]
    (parsed,) = joint.parse([" ".join(words)])
    assert set(parsed.upos) <= set(UPOS)
    assert set(parsed.feats) <= {"Number=Sing", "_"}
    assert parsed.xpos == ["_"] * 4  # no XPOS head: left as given
    assert f"\t{parsed.upos[0]}\t" in parsed.to_conllu()
    (tagged,) = joint.parse([Sentence.from_words(words, upos=["X"] * 4)], tags="predict")
    assert tagged.upos == parsed.upos and tagged.feats == parsed.feats


def test_tags_modes_fill_overwrite_or_keep(joint: Parser) -> None:
    words = ["w3", "w17", "w42"]
    given = Sentence.from_words(words, upos=["X", "_", "_"], feats=["Foo=Bar", "_", "_"])
    guessed = joint.parse([words], tags="predict")[0].upos
    auto, predicted, kept = (joint.parse([given], tags=mode)[0] for mode in TAG_MODES_ORDER)
    assert auto.upos == ["X", *guessed[1:]] and auto.feats[0] == "Foo=Bar"
    assert predicted.upos == guessed
    assert kept.upos == given.upos and kept.feats == given.feats
    # The tags never reach the parser: the same trees in every mode.
    assert auto.heads == predicted.heads == kept.heads
    assert auto.deprels == predicted.deprels == kept.deprels


TAG_MODES_ORDER = ("auto", "predict", "keep")


def test_trees_and_tags_do_not_depend_on_the_input_tags(joint: Parser) -> None:
    corpus = learnable_tags(make_corpus(12, seed=31, max_words=12))
    blank = [s.with_tags(upos=["_"] * len(s), feats=["_"] * len(s)) for s in corpus]
    wrong = [s.with_tags(upos=["PUNCT"] * len(s), feats=["Case=Nom"] * len(s)) for s in corpus]
    results = [joint.parse(sentences, tags="predict") for sentences in (corpus, blank, wrong)]
    first = [(s.heads, s.deprels, s.upos, s.feats) for s in results[0]]
    for other in results[1:]:
        assert [(s.heads, s.deprels, s.upos, s.feats) for s in other] == first


def test_unseen_feats_and_tags_in_the_input_still_parse(joint: Parser) -> None:
    odd = Sentence.from_words(["w1", "never-seen"], upos=["NEWTAG", "_"], feats=["Zz=Qq", "_"])
    (parsed,) = joint.parse([odd])
    assert parsed.upos[0] == "NEWTAG" and parsed.upos[1] in UPOS
    assert sorted(parsed.heads) in ([0, 1], [0, 2])


def test_auto_fills_feats_only_where_a_sentence_has_none(joint: Parser) -> None:
    # A FEATS `_` beside annotated features says "no features": auto keeps it.  A UPOS `_` is
    # never a tag: auto fills it word by word.
    annotated = Sentence.from_words(
        ["w1", "w2", "w3"], upos=["NOUN", "_", "_"], feats=["Case=Nom", "_", "_"]
    )
    bare = Sentence.from_words(["w1", "w2", "w3"])
    auto = joint.parse([annotated, bare], tags="auto")
    predicted = joint.parse([annotated, bare], tags="predict")
    assert auto[0].feats == ["Case=Nom", "_", "_"]
    assert auto[0].upos == ["NOUN", *predicted[0].upos[1:]]
    assert auto[1].feats == predicted[1].feats and auto[1].upos == predicted[1].upos


def test_predict_writes_tags_and_keeps_every_other_byte(joint: Parser, tmp_path: Path) -> None:
    source = tmp_path / "in.conllu"
    source.write_bytes(RICH_CONLLU.encode())
    checkpoint = tmp_path / "joint.pt"
    save_checkpoint(checkpoint, joint.loaded.checkpoint)
    for mode in TAG_MODES_ORDER:
        out = tmp_path / f"{mode}.conllu"
        predict(
            f"checkpoint={checkpoint}",
            f"input={source}",
            f"output={out}",
            f"tags={mode}",
            "deps=keep",
        )
        before = RICH_CONLLU.splitlines(keepends=True)
        after = out.read_bytes().decode().splitlines(keepends=True)
        assert after[len(before) :] == ["\n"]  # the last sentence gets its blank line
        for old, new in zip(before, after, strict=False):
            old_cells, new_cells = old.split("\t"), new.split("\t")
            if len(old_cells) != 10 or not old_cells[0].isdigit():
                assert old == new  # comments, ranges, empty nodes, blank lines
                continue
            for column in range(10):
                if column in TAG_COLUMNS:
                    if mode == "keep" or (mode == "auto" and old_cells[column] != "_"):
                        assert new_cells[column] == old_cells[column]
                    elif column == 3:  # UPOS head present: filled or overwritten
                        assert new_cells[column] in UPOS
                elif column not in (6, 7):
                    assert new_cells[column] == old_cells[column]
    assert [s.upos for s in read_conllu(tmp_path / "predict.conllu")][2] == joint.parse(["w7 w8"])[
        0
    ].upos


def test_evaluate_scores_the_models_tags_tagged_and_untagged(joint: Parser, tmp_path: Path) -> None:
    training = learnable_tags(make_corpus(30, seed=5, projective=False))  # = its dev file
    gold = write_corpus(tmp_path / "gold.conllu", training)
    tagged, untagged = joint.evaluate(gold), joint.evaluate(gold, untagged=True)
    for key in ("las", "uas", "upos", "ufeats"):
        assert tagged[key] == pytest.approx(joint.dev_metrics[key])
    assert tagged == untagged  # the model reads no tags


def test_a_gold_tag_model_cannot_predict_tags_and_warns_on_untagged_input(
    gold_checkpoint: Path, caplog: pytest.LogCaptureFixture
) -> None:
    parser = Parser.load(gold_checkpoint, device="cpu")
    assert parser.model.tagged_columns == () and parser.model.reads_gold_tags
    with pytest.raises(InputError, match="no tagging heads"):
        parser.parse(["w1 w2"], tags="predict")
    with caplog.at_level(logging.WARNING, logger="neuralparse.predict"):
        (parsed,) = parser.parse(["w1 w2"])
    assert "NEEDS GOLD TAGS" in caplog.text
    assert parsed.upos == ["_", "_"]  # nothing to fill with


def test_a_checkpoint_from_before_the_tagger_loads_as_a_gold_tag_model(
    gold_checkpoint: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = load_checkpoint(gold_checkpoint)
    tagger_keys = ("tag_input", "tagger_layer", "gold_tag_rate")
    for key in [k for k in data["model"]["config"] if k in tagger_keys or "loss_weight" in k]:
        del data["model"]["config"][key]
    del data["vocabularies"]["feats_classes"]
    old = tmp_path / "old.pt"
    save_checkpoint(old, data)
    with caplog.at_level(logging.WARNING, logger="neuralparse.checkpoint"):
        parser = Parser.load(old, device="cpu")
    assert "predates the tagger" in caplog.text
    new = Parser.load(gold_checkpoint, device="cpu")
    sentences = learnable_tags(make_corpus(6, seed=2))
    assert [s.heads for s in parser.parse(sentences)] == [s.heads for s in new.parse(sentences)]
    state = {k: v for k, v in parser.model.state_dict().items()}
    assert all(torch.equal(v, new.model.state_dict()[k]) for k, v in state.items())


def test_scores_of_columns_the_model_copied_are_not_reported() -> None:
    scores = {"las": 80.0, "upos": 100.0, "xpos": 100.0, "ufeats": 99.0, "alltags": 99.0}
    scores |= {"mlas": 70.0, "lemmas": 100.0, "blex": 60.0}
    assert predicted_tag_scores_only(scores, ("upos", "feats")) == {
        "las": 80.0,
        "upos": 100.0,
        "xpos": None,  # copied from the input: would score a tagger that never ran
        "ufeats": 99.0,
        "alltags": None,
        "mlas": 70.0,
        "lemmas": None,
        "blex": None,
    }


def test_the_pairs_feats_head_shares_a_pairs_vector_among_the_strings_that_hold_it() -> None:
    classes = Vocabulary.build(["Case=Nom|Number=Sing", "Case=Acc|Number=Sing", "Case=Nom", "_"])
    head = FeatsPairsHead(4, classes)
    vectors = torch.randn(5, 4)
    before = head(vectors)
    with torch.no_grad():
        head.pairs.weight[sorted(["Case=Acc", "Case=Nom", "Number=Sing"]).index("Number=Sing")] += 1
    moved = head(vectors) - before
    grown = vectors.sum(1, keepdim=True).expand(-1, len(classes))
    holds = [s.endswith("Number=Sing") for s in classes.symbols]
    assert torch.allclose(moved[:, holds], grown[:, holds], atol=1e-5)
    assert moved[:, [not h for h in holds]].abs().max() < 1e-6  # padding, unknown, Case=Nom, _


def test_a_model_with_the_pairs_feats_head_tags_and_loads_from_its_checkpoint(
    tmp_path: Path,
) -> None:
    checkpoint = train_tagger(tmp_path, feats_head="pairs")
    parser = Parser.load(checkpoint, device="cpu")
    assert isinstance(parser.model.encoder.taggers["feats"], FeatsPairsHead)
    assert parser.dev_metrics["ufeats"] >= 90
    (parsed,) = parser.parse(["w3 w17 w42 w8"])
    assert set(parsed.feats) <= {"Number=Sing", "_"}


def test_many_feats_strings_per_word_suggest_the_rich_morphology_preset() -> None:
    def sentence(feats: list[str]) -> Sentence:
        return Sentence.from_words([f"w{i}" for i in range(len(feats))], feats=feats)

    # 3 distinct non-empty strings in 200 words: 15 per 1,000 words ("_" is no string).
    rich = [sentence(["Case=Nom", "Case=Acc", "_", "Case=Nom|Number=Plur"] + ["_"] * 96)] * 2
    # 1 string in 200 words: 5 per 1,000, under the threshold of 10.
    poor = [sentence(["Number=Sing"] * 100)] * 2
    assert feats_strings_per_1000_words(rich) == 15.0
    assert feats_strings_per_1000_words(poor) == 5.0
    assert feats_strings_per_1000_words([]) == 0.0
    default = preset_model_config("default")
    hint = rich_morphology_hint(rich, default)
    assert hint is not None and "15.0" in hint and "model=rich_morphology" in hint
    assert rich_morphology_hint(poor, default) is None
    # No hint where the model already shares FEATS weights, reads gold tags or has no FEATS head.
    for changes in ({"feats_head": "pairs"}, {"tag_input": "gold"}, {"feats_loss_weight": 0.0}):
        assert rich_morphology_hint(rich, dataclasses.replace(default, **changes)) is None
