"""Multiword tokens learned from a training treebank and split in raw text
(:mod:`neuralparse.io.multiword`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from neuralparse import Parser
from neuralparse.io import Sentence, parse_conllu_text, read_conllu
from neuralparse.io.multiword import MultiwordLexicon
from neuralparse.io.raw import Segmentation, raw_sentences
from neuralparse.runtime.checkpoint import CheckpointError, load_checkpoint, load_parser
from neuralparse.training.trainer import train
from neuralparse.trees.core import check_tree
from tests.parser_fixtures import make_corpus
from tests.test_predict import predict
from tests.test_training import tiny_config

BLANK = "\t".join(["_"] * 8)


def block(*tokens: str | tuple[str, ...]) -> str:
    """A CoNLL-U sentence: a string is a word, a tuple ``(form, word, word...)`` a multiword
    token over its words; every word hangs from the first."""
    lines, word = [], 0
    for token in tokens:
        if isinstance(token, tuple):
            form, *words = token
            lines.append(f"{word + 1}-{word + len(words)}\t{form}\t{BLANK}")
        else:
            words = [token]
        for form in words:
            word += 1
            lines.append(f"{word}\t{form}\t_\t_\t_\t_\t{int(word > 1)}\tdep\t_\t_")
    return "\n".join(lines) + "\n\n"


def sentences(*blocks: str) -> list[Sentence]:
    return parse_conllu_text("".join(blocks))


def test_a_read_sentence_lists_its_multiword_tokens() -> None:
    (sentence,) = sentences(block(("Στο", "Σ", "το"), "σπίτι", ("au", "à", "le")))
    assert sentence.multiword_tokens() == [(1, 2, "Στο"), (4, 5, "au")]
    assert Sentence.from_words(["a", "b"]).multiword_tokens() == []


def test_a_form_is_split_when_the_treebank_splits_it_more_often_than_not() -> None:
    # du: split twice (de le) and once (de la, its rarer analysis), never whole.  des: split
    # once, whole once (a tie stays whole).  au: split once, whole twice.
    lexicon = MultiwordLexicon.from_sentences(
        sentences(
            block(("du", "de", "le"), "x", ("des", "de", "les")),
            block(("du", "de", "le"), "des"),
            block(("du", "de", "la"), "au", "au", ("au", "à", "le")),
        )
    )
    assert lexicon.entries == {"du": ("de", "le")}
    assert lexicon.words("du") == ("de", "le")
    assert lexicon.words("des") is None and lexicon.words("au") is None
    assert lexicon.words("x") is None
    # A multiword token with a word without a form (``_``) teaches nothing.
    odd = MultiwordLexicon.from_sentences(sentences(block(("3'lük", "_", "3'lük"))))
    assert len(odd) == 0


def test_other_capitalization_follows_the_seen_spelling() -> None:
    lexicon = MultiwordLexicon.from_sentences(
        sentences(block(("στο", "σ", "το")), block(("Στη", "Σ", "τη")), block(("zum", "zu", "dem")))
    )
    assert lexicon.words("Στο") == ("Σ", "το")  # capitalized: the first word's first letter
    assert lexicon.words("ΣΤΟ") == ("Σ", "ΤΟ")  # upper case: every word
    assert lexicon.words("στη") == ("σ", "τη")  # lower case from a capitalized spelling
    assert lexicon.words("Στη") == ("Σ", "τη")  # as seen
    assert lexicon.words("ZUM") == ("ZU", "DEM")
    # Case is ignored when counting: capitalized and lower-case occurrences add up.
    mixed = MultiwordLexicon.from_sentences(
        sentences(block(("Im", "In", "dem")), block("im"), block(("im", "in", "dem")))
    )
    assert mixed.words("im") == ("in", "dem")


def test_the_lexicon_travels_as_plain_data_and_refuses_bad_data() -> None:
    lexicon = MultiwordLexicon({"du": ("de", "le"), "Στο": ("Σ", "το")})
    assert MultiwordLexicon.from_dict(lexicon.to_dict()) == lexicon
    for bad, reason in (
        (["du"], "not a dict"),
        ({"du": ["de"]}, "two or more words"),
        ({"du": "de le"}, "two or more words"),
        ({"d\tu": ["de", "le"]}, "not a CoNLL-U FORM"),
        ({"du": ["de", ""]}, "not a FORM"),
        ({"du": ["de", 3]}, "not a FORM"),
    ):
        with pytest.raises(ValueError, match=reason):
            MultiwordLexicon.from_dict(bad)


def test_raw_text_writes_multiword_tokens_over_their_words(spacy_installed: None) -> None:
    lexicon = MultiwordLexicon({"du": ("de", "le"), "au": ("à", "le")})
    (sentence,) = raw_sentences(
        ["Du pain au lait, du vin."], lang="fr", segmentation=Segmentation(lexicon)
    )
    conllu = sentence.to_conllu()
    assert "# text = Du pain au lait, du vin." in conllu
    assert sentence.multiword_tokens() == [(1, 2, "Du"), (4, 5, "au"), (8, 9, "du")]
    assert sentence.forms == ["De", "le", "pain", "à", "le", "lait", ",", "de", "le", "vin", "."]
    assert f"4-5\tau\t{BLANK}\n4\tà\t" in conllu
    (plain,) = raw_sentences(["Du pain au lait, du vin."], lang="fr")
    assert plain.forms == ["Du", "pain", "au", "lait", ",", "du", "vin", "."]
    assert plain.multiword_tokens() == []


def test_a_glued_multiword_token_keeps_space_after_on_its_own_line(spacy_installed: None) -> None:
    lexicon = MultiwordLexicon({"au": ("à", "le")})
    (sentence,) = raw_sentences(["Il va au."], lang="fr", segmentation=Segmentation(lexicon))
    lines = sentence.to_conllu().splitlines()
    token = next(line for line in lines if line.startswith("3-4\t"))
    assert token.endswith("\tSpaceAfter=No")
    assert all(line.endswith("\t_") for line in lines if line.startswith(("3\t", "4\t")))


def test_glued_tokens_that_are_a_multiword_tokens_words_go_under_it(spacy_installed: None) -> None:
    # spaCy's English rules split don't into do n't, the words English-EWT writes under it.
    lexicon = MultiwordLexicon({"don't": ("do", "n't"), "cannot": ("can", "not")})
    text = "Don't go, I cannot. We do n't."
    (first, second) = raw_sentences([text], lang="en", segmentation=Segmentation(lexicon))
    assert first.forms == ["Do", "n't", "go", ",", "I", "can", "not", "."]
    assert first.multiword_tokens() == [(1, 2, "Don't"), (6, 7, "cannot")]
    assert "\n6-7\tcannot\t" in first.to_conllu()
    assert second.multiword_tokens() == []  # written apart: two tokens
    assert lexicon.joins(["do", "n't"]) and not lexicon.joins(["do", "not"])
    assert not lexicon.joins(["don't"])


# -- trained, saved, loaded, parsed ----------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny parser trained on a file whose first two words are the multiword token ``zz``
    in every sentence but one, which has ``zz`` as a word of its own."""
    directory = tmp_path_factory.mktemp("multiword")
    cfg = tiny_config(directory, make_corpus(20, seed=3, min_words=4), max_epochs=2)
    train_file = Path(cfg.data.train)
    blocks = train_file.read_text(encoding="utf-8").split("\n\n")
    with_tokens = [
        text.replace("\n1\t", f"\n1-2\tzz\t{BLANK}\n1\t", 1) if index else text
        for index, text in enumerate(blocks)
    ]
    train_file.write_text("\n\n".join(with_tokens), encoding="utf-8")
    assert sum(len(s.multiword_tokens()) for s in read_conllu(train_file)) == 19
    return train(cfg, directory / "run").checkpoint


def test_a_checkpoint_carries_its_training_sets_multiword_tokens(checkpoint: Path) -> None:
    loaded = load_parser(checkpoint)
    words = loaded.multiwords.words("zz")
    assert words is not None and len(words) == 2
    assert set(loaded.multiwords.entries) == {"zz"}


def test_predict_splits_multiword_tokens_in_raw_text(
    checkpoint: Path, spacy_installed: None, tmp_path: Path
) -> None:
    source = tmp_path / "in.txt"
    source.write_text("zz w3 w4. w5 zz.\n", encoding="utf-8")
    words = load_parser(checkpoint).multiwords.words("zz")
    assert words is not None
    # spaCy's sentencizer: the tiny training text has no punctuation to learn sentence ends by.
    raw = ("input_format=raw", "sentence_splitter=sentencizer")
    split = predict(f"checkpoint={checkpoint}", f"input={source}", "output=-", *raw)
    parsed = parse_conllu_text(split.stdout.decode())
    assert [s.multiword_tokens() for s in parsed] == [[(1, 2, "zz")], [(2, 3, "zz")]]
    assert parsed[0].forms[:2] == list(words) and parsed[1].forms[1:3] == list(words)
    for sentence in parsed:
        check_tree(sentence.heads, single_root=True)
    whole = predict(
        f"checkpoint={checkpoint}", f"input={source}", "output=-", *raw, "multiword_tokens=false"
    )
    unsplit = parse_conllu_text(whole.stdout.decode())
    assert [s.forms for s in unsplit] == [["zz", "w3", "w4", "."], ["w5", "zz", "."]]
    # The notebook API splits the same way.
    api = Parser.load(checkpoint, device="cpu").parse(
        "zz w3 w4. w5 zz.", raw=True, sentence_splitter="sentencizer"
    )
    assert [s.to_conllu() for s in api] == [s.to_conllu() for s in parsed]


@pytest.mark.parametrize(
    ("entry", "bad", "reason"),
    [
        ("multiword_tokens", {"zz": ["only one"]}, r"zz.*two or more words"),
        ("sentence_splitter", {"bias": "high"}, "not a number"),
    ],
)
def test_checkpoints_without_segmentation_load_and_bad_ones_are_refused(
    checkpoint: Path, tmp_path: Path, entry: str, bad: dict, reason: str
) -> None:
    data = load_checkpoint(checkpoint)
    del data[entry]  # as written before neuralparse learned what it says of raw text
    older = tmp_path / "older.pt"
    torch.save(data, older)
    segmentation = load_parser(older).segmentation()
    if entry == "multiword_tokens":
        assert len(segmentation.multiwords) == 0 and segmentation.sentences is not None
    else:
        assert segmentation.sentences is None and len(segmentation.multiwords) == 1
    data[entry] = bad
    broken = tmp_path / "broken.pt"
    torch.save(data, broken)
    with pytest.raises(CheckpointError, match=reason):
        load_checkpoint(broken)
