"""Column rewrites of read sentences: with_tags (UPOS/XPOS/FEATS), with_tree, without_deps.

A read sentence must write back byte for byte when unchanged, and otherwise change exactly the
cells whose value changed; everything else (comments, multiword tokens, empty nodes, DEPS,
MISC, line endings, blank lines) stays as read.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuralparse.errors import InputError
from neuralparse.io import Sentence, parse_conllu_text, read_conllu
from tests.conftest import SHARED_UD

UPOS, XPOS, FEATS, HEAD, DEPREL, DEPS = 3, 4, 5, 6, 7, 8

# Comments, a multiword token, an empty node (with enhanced DEPS pointing to it), XPOS, FEATS,
# MISC, then a second sentence after two blank lines and followed by two blank lines.
RICH = (
    "# newdoc id = doc1\n"
    "# sent_id = tags-1\n"
    "# text = Vámonos al mar.\n"
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tVamos\tir\tVERB\tVMM01P0\tMood=Imp|Number=Plur|Person=1\t0\troot\t0:root\t_\n"
    "2\tnos\tnosotros\tPRON\tPP1CP00\tCase=Acc|Number=Plur|Person=1\t1\tobj\t1:obj\t_\n"
    "2.1\tir\tir\tVERB\t_\t_\t_\t_\t1:conj\tNote=an elided verb\n"
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\ta\ta\tADP\tSPS00\t_\t5\tcase\t5:case\t_\n"
    "4\tel\tel\tDET\tDA0MS0\tDefinite=Def|Gender=Masc\t5\tdet\t5:det\t_\n"
    "5\tmar\tmar\tNOUN\tNCMS000\tGender=Masc|Number=Sing\t1\tobl\t1:obl:a|2.1:obl\tSpaceAfter=No\n"
    "6\t.\t.\tPUNCT\tFp\tPunctType=Peri\t1\tpunct\t1:punct\t_\n"
    "\n"
)
SECOND = "\n\n# sent_id = tags-2\n1\tHola\thola\tINTJ\tI\t_\t0\troot\t0:root\t_\n\n\n"
# RICH with the enhanced graph cleared: DEPS '_' on the words, the empty node 2.1 dropped.
RICH_WITHOUT_DEPS = (
    "# newdoc id = doc1\n"
    "# sent_id = tags-1\n"
    "# text = Vámonos al mar.\n"
    "1-2\tVámonos\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tVamos\tir\tVERB\tVMM01P0\tMood=Imp|Number=Plur|Person=1\t0\troot\t_\t_\n"
    "2\tnos\tnosotros\tPRON\tPP1CP00\tCase=Acc|Number=Plur|Person=1\t1\tobj\t_\t_\n"
    "3-4\tal\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "3\ta\ta\tADP\tSPS00\t_\t5\tcase\t_\t_\n"
    "4\tel\tel\tDET\tDA0MS0\tDefinite=Def|Gender=Masc\t5\tdet\t_\t_\n"
    "5\tmar\tmar\tNOUN\tNCMS000\tGender=Masc|Number=Sing\t1\tobl\t_\tSpaceAfter=No\n"
    "6\t.\t.\tPUNCT\tFp\tPunctType=Peri\t1\tpunct\t_\t_\n"
    "\n"
)
ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}

# Line index in RICH of each word (word 1 first).
RICH_WORD_LINES = (4, 5, 8, 9, 10, 11)


def _with_ending(text: str, ending: str) -> str:
    return text.replace("\n", ending)


def _lines(text: str) -> list[str]:
    """Lines with their endings, split as the reader splits them (only at CR, LF, CRLF)."""
    return list(io.StringIO(text, newline=""))


def _changed_cells(before: str, after: str) -> set[tuple[int, int]]:
    """(line index, 0-based column) of each cell that differs between two CoNLL-U texts.

    Asserts that the texts have the same lines, that every line keeps its ending and its
    number of columns, so that a difference can only be a cell.
    """
    old_lines, new_lines = _lines(before), _lines(after)
    assert len(old_lines) == len(new_lines)
    cells: set[tuple[int, int]] = set()
    for index, (old, new) in enumerate(zip(old_lines, new_lines, strict=True)):
        if old == new:
            continue
        old_content, new_content = old.rstrip("\r\n"), new.rstrip("\r\n")
        assert old[len(old_content) :] == new[len(new_content) :], f"line {index}: ending"
        old_fields, new_fields = old_content.split("\t"), new_content.split("\t")
        assert len(old_fields) == len(new_fields) == 10, f"line {index}: columns"
        cells.update(
            (index, column)
            for column, (a, b) in enumerate(zip(old_fields, new_fields, strict=True))
            if a != b
        )
    return cells


def _is_empty_node_line(line: str) -> bool:
    """Whether a line of a valid CoNLL-U text is an empty node (id ``i.k``)."""
    return not line.startswith("#") and "." in line.lstrip("\ufeff").split("\t")[0]


# ------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
def test_unchanged_sentences_write_back_byte_identically(ending: str) -> None:
    text = _with_ending(RICH + SECOND, ending)
    sentences = parse_conllu_text(text)
    assert "".join(s.to_conllu() for s in sentences) == text
    same_tags = [s.with_tags(upos=s.upos, xpos=s.xpos, feats=s.feats) for s in sentences]
    assert "".join(s.to_conllu() for s in same_tags) == text
    assert "".join(s.with_tags().to_conllu() for s in sentences) == text
    same_tree = [s.with_tree(s.heads or [], s.deprels) for s in same_tags]
    assert "".join(s.to_conllu() for s in same_tree) == text


# ---------------------------------------------------------------------------- with_tags


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
def test_with_tags_changes_exactly_the_intended_cells(ending: str) -> None:
    text = _with_ending(RICH, ending)
    (sentence,) = parse_conllu_text(text)
    upos = ["VERB", "DET", "ADP", "DET", "PROPN", "PUNCT"]  # words 2 and 5 change
    xpos = ["VMM01P0", "PP1CP00", "SPS00", "DA0MS0", "NCMS000", "Fe"]  # word 6 changes
    feats = [  # words 1 and 4 change
        "_",
        "Case=Acc|Number=Plur|Person=1",
        "_",
        "Gender=Masc",
        "Gender=Masc|Number=Sing",
        "PunctType=Peri",
    ]
    changed = sentence.with_tags(upos=upos, xpos=xpos, feats=feats)
    written = changed.to_conllu()
    expected = {(4, FEATS), (5, UPOS), (9, FEATS), (10, UPOS), (11, XPOS)}
    assert _changed_cells(text, written) == expected
    assert _lines(written)[4] == f"1\tVamos\tir\tVERB\tVMM01P0\t_\t0\troot\t0:root\t_{ending}"
    (reread,) = parse_conllu_text(written)
    assert (reread.upos, reread.xpos, reread.feats) == (upos, xpos, feats)
    # The copy has new lists; the original is untouched and still writes the source.
    assert sentence.to_conllu() == text
    assert sentence.upos[1] == "PRON" and changed.upos is not upos


def test_with_tags_keeps_the_columns_not_given() -> None:
    (sentence,) = parse_conllu_text(RICH)
    changed = sentence.with_tags(xpos=["x"] * 6)
    assert changed.upos == sentence.upos and changed.feats == sentence.feats
    assert _changed_cells(RICH, changed.to_conllu()) == {(i, XPOS) for i in RICH_WORD_LINES}


_ALTERNATIVES = {"upos": ("NOUN", "X"), "xpos": ("NN", "_"), "feats": ("_", "Case=Nom|Foo=A,B")}
_COLUMN_OF = {"upos": UPOS, "xpos": XPOS, "feats": FEATS}


@given(data=st.data())
def test_with_tags_rewrites_exactly_the_differing_cells(data: st.DataObject) -> None:
    text = _with_ending(RICH, "\r\n")
    (sentence,) = parse_conllu_text(text)
    new = {
        name: [data.draw(st.sampled_from([old, *alternatives])) for old in getattr(sentence, name)]
        for name, alternatives in _ALTERNATIVES.items()
    }
    expected = {
        (RICH_WORD_LINES[i], _COLUMN_OF[name])
        for name, values in new.items()
        for i, value in enumerate(values)
        if value != getattr(sentence, name)[i]
    }
    changed = sentence.with_tags(**new)
    assert _changed_cells(text, changed.to_conllu()) == expected


def test_in_place_edits_are_written_too() -> None:
    # to_conllu compares with the values as read, not with what with_tags was given.
    (sentence,) = parse_conllu_text(RICH)
    sentence.upos[2] = "NOUN"
    assert _changed_cells(RICH, sentence.to_conllu()) == {(8, UPOS)}


def test_with_tags_and_with_tree_combined_in_either_order() -> None:
    (sentence,) = parse_conllu_text(RICH)
    heads = [0, 1, 5, 5, 1, 5]  # word 6 moves to 5
    deprels = ["root", "iobj", "case", "det", "obl", "punct"]  # word 2 relabelled
    upos = ["VERB", "PRON", "ADP", "PRON", "NOUN", "PUNCT"]  # word 4 retagged
    feats = ["_"] * 6  # every word but word 3 changes
    expected = {(5, DEPREL), (11, HEAD), (9, UPOS)}
    expected |= {(line, FEATS) for line in RICH_WORD_LINES if line != 8}
    for changed in (
        sentence.with_tags(upos=upos, feats=feats).with_tree(heads, deprels),
        sentence.with_tree(heads, deprels).with_tags(upos=upos, feats=feats),
    ):
        written = changed.to_conllu()
        assert _changed_cells(RICH, written) == expected
        (reread,) = parse_conllu_text(written)
        assert (reread.heads, reread.deprels, reread.upos, reread.feats) == (
            heads,
            deprels,
            upos,
            feats,
        )


def test_built_sentences_write_the_new_tags() -> None:
    sentence = Sentence.from_words(["Hi", "there"], heads=[0, 1], deprels=["root", "dep"])
    tagged = sentence.with_tags(upos=["INTJ", "ADV"], xpos=["UH", "RB"], feats=["_", "A=B|C=D"])
    assert tagged.to_conllu() == (
        "# text = Hi there\n"
        "1\tHi\t_\tINTJ\tUH\t_\t0\troot\t_\t_\n"
        "2\tthere\t_\tADV\tRB\tA=B|C=D\t1\tdep\t_\t_\n"
        "\n"
    )
    assert sentence.to_conllu().count("\t_\t_\t_\t") == 2  # the original keeps '_' tags


# ----------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"upos": ["X"] * 5}, r"5 UPOS values given for 6 words"),
        ({"xpos": ["X"] * 7}, r"7 XPOS values given for 6 words"),
        ({"feats": []}, r"0 FEATS values given for 6 words"),
        ({"upos": ["X", "", "X", "X", "X", "X"]}, r"UPOS of word 2 is '': empty"),
        ({"upos": ["X", "X", "A\tB", "X", "X", "X"]}, r"UPOS of word 3 is 'A\\tB'"),
        ({"xpos": ["X", "X", "X", "X", "X", "a\nb"]}, r"XPOS of word 6 is 'a\\nb'"),
        ({"xpos": ["X", "X", "X", "X", "a\rb", "X"]}, r"XPOS of word 5 is 'a\\rb'"),
        ({"upos": ["X", None, "X", "X", "X", "X"]}, r"UPOS of word 2 is None: .*not a string"),
        ({"feats": ["Case", "_", "_", "_", "_", "_"]}, r"FEATS of word 1 is 'Case': neither"),
        ({"feats": ["_", "=Nom", "_", "_", "_", "_"]}, r"FEATS of word 2 is '=Nom'"),
        ({"feats": ["_", "_", "Case=", "_", "_", "_"]}, r"FEATS of word 3 is 'Case='"),
        ({"feats": ["_", "_", "_", "A=B||C=D", "_", "_"]}, r"FEATS of word 4 is 'A=B\|\|C=D'"),
        ({"feats": ["_", "_", "_", "_", "A=B|", "_"]}, r"FEATS of word 5 is 'A=B\|'"),
    ],
)
def test_with_tags_refuses_bad_values_naming_the_sentence(
    arguments: dict[str, list[str]], message: str
) -> None:
    (sentence,) = parse_conllu_text(RICH, name="rich.conllu")
    with pytest.raises(InputError, match=message) as info:
        sentence.with_tags(**arguments)
    assert isinstance(info.value, ValueError)
    assert (info.value.source, info.value.line, info.value.sent_id) == ("rich.conllu", 1, "tags-1")
    assert str(info.value).startswith("rich.conllu, line 1, sentence tags-1: ")


# ---------------------------------------------------------------------------- without_deps


@pytest.mark.parametrize("ending", ENDINGS.values(), ids=ENDINGS.keys())
def test_without_deps_clears_deps_and_drops_empty_nodes(ending: str) -> None:
    text = _with_ending(RICH + SECOND, ending)
    cleared = [s.without_deps() for s in parse_conllu_text(text)]
    second = SECOND.replace("0:root", "_")
    assert "".join(s.to_conllu() for s in cleared) == _with_ending(
        RICH_WITHOUT_DEPS + second, ending
    )
    # Still valid CoNLL-U, with the same words, and clearing again changes nothing.
    reread = parse_conllu_text("".join(s.to_conllu() for s in cleared))
    assert [s.forms for s in reread] == [s.forms for s in cleared]
    assert [s.without_deps().to_conllu() for s in cleared] == [s.to_conllu() for s in cleared]


def test_without_deps_then_new_tree_and_tags_rewrite_the_right_lines() -> None:
    # Dropping the empty node shifts the lines of words 3-6: later rewrites must follow.
    (sentence,) = parse_conllu_text(RICH)
    cleared = sentence.without_deps()
    changed = cleared.with_tree([0, 1, 1, 5, 1, 1], ["root", "obj", "dep", "det", "obl", "punct"])
    changed = changed.with_tags(upos=["VERB", "PRON", "ADP", "DET", "NOUN", "SYM"])
    expected = {(7, HEAD), (7, DEPREL), (10, UPOS)}
    assert _changed_cells(RICH_WITHOUT_DEPS, changed.to_conllu()) == expected
    assert sentence.to_conllu() == RICH  # the original keeps its enhanced graph
    assert parse_conllu_text(cleared.to_conllu())[0].heads == sentence.heads


def test_without_deps_keeps_a_byte_order_mark_on_a_dropped_first_line() -> None:
    text = (
        "\ufeff0.1\tPRO\t_\tPRON\t_\t_\t_\t_\t1:nsubj\t_\n"
        "1\tgo\tgo\tVERB\t_\t_\t0\troot\t0:root\t_\n"
        "\n"
    )
    (sentence,) = parse_conllu_text(text)
    assert sentence.to_conllu() == text
    assert sentence.without_deps().to_conllu() == "\ufeff1\tgo\tgo\tVERB\t_\t_\t0\troot\t_\t_\n\n"


def test_has_enhanced_graph_is_a_deps_cell_or_an_empty_node() -> None:
    word = "1\tgo\tgo\tVERB\t_\t_\t0\troot\t{deps}\t_\n"
    node = "0.1\tPRO\t_\tPRON\t_\t_\t_\t_\t_\t_\n"
    cases = {word.format(deps="_"): False, word.format(deps="0:root"): True}
    cases[node + word.format(deps="_")] = True  # an empty node alone is part of the graph
    for text, expected in cases.items():
        (sentence,) = parse_conllu_text(text + "\n")
        assert sentence.has_enhanced_graph is expected, text
        # What is written after clearing no longer has one; the flag says what was read.
        assert not parse_conllu_text(sentence.without_deps().to_conllu())[0].has_enhanced_graph
    assert not Sentence.from_words(["a"]).has_enhanced_graph


def test_without_deps_of_a_built_sentence_changes_nothing() -> None:
    sentence = Sentence.from_words(["a", "b"], heads=[0, 1], deprels=["root", "dep"])
    cleared = sentence.without_deps()
    assert cleared is not sentence
    assert cleared.to_conllu() == sentence.to_conllu()


# -------------------------------------------------------------------- shared treebanks


def _dev_files() -> list[Path]:
    return sorted(SHARED_UD.glob("*/dev.conllu")) if SHARED_UD.is_dir() else []


def _dev_params() -> list:
    files = _dev_files()
    if not files:
        reason = f"no shared UD dev files found under {SHARED_UD}"
        return [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="absent")]
    return [pytest.param(path, id=path.parent.name) for path in files]


@pytest.mark.treebank
@pytest.mark.parametrize("path", _dev_params())
def test_treebank_rewrites_touch_only_their_column(path: Path) -> None:
    sentences = read_conllu(path)
    original = path.read_bytes().decode("utf-8")
    same = [s.with_tags(upos=s.upos, xpos=s.xpos, feats=s.feats) for s in sentences]
    assert "".join(s.to_conllu() for s in same) == original
    retagged = [s.with_tags(upos=["X"] * len(s)) for s in sentences]
    written = "".join(s.to_conllu() for s in retagged)
    cells = _changed_cells(original, written)
    assert {column for _, column in cells} <= {UPOS}
    assert len(cells) == sum(tag != "X" for s in sentences for tag in s.upos)
    new_lines = _lines(written)
    assert all(new_lines[line].split("\t")[UPOS] == "X" for line, _ in cells)
    # Clearing the enhanced graph drops the empty nodes and changes DEPS cells only.
    cleared = "".join(s.without_deps().to_conllu() for s in sentences)
    kept_lines = [line for line in _lines(original) if not _is_empty_node_line(line)]
    cells = _changed_cells("".join(kept_lines), cleared)
    assert {column for _, column in cells} <= {DEPS}
    assert [s.heads for s in parse_conllu_text(cleared)] == [s.heads for s in sentences]


def test_without_tags_blanks_exactly_the_three_tag_columns() -> None:
    sentence = Sentence.from_words(["a", "b"], upos=["DET", "NOUN"], xpos=["DT", "NN"])
    sentence = sentence.with_tags(feats=["_", "Number=Sing"])
    blank = sentence.without_tags()
    assert blank.upos == blank.xpos == blank.feats == ["_", "_"]
    assert blank.forms == sentence.forms and blank.misc == sentence.misc
