"""The accuracy study's runs scored against gold, and the selections the tables compare.

A run of ``experiments/accuracy_study.py`` leaves ``scores.json`` (its metadata: epochs, best
epoch, why training stopped, the tag setting of the test input, its recipe) and
``test.<mode>.json.gz`` (predicted heads and labels of the test sentences, in file order).
Every score is recomputed here from those predictions and the gold test file, so that all runs
are scored alike and each word's and sentence's outcome is at hand for the paired tests of
:mod:`experiments.seed_claims` and :mod:`experiments.accuracy_table`.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from neuralparse.datasets import treebank_paths
from neuralparse.evaluation.conll18 import universal_label
from neuralparse.evaluation.metrics import ScoreAccumulator, Scores
from neuralparse.io import Sentence, read_conllu
from neuralparse.trees.core import is_projective, nonprojective_arcs

MODES = ("greedy", "beam8")
SYSTEM_ORDER = (
    "arc_standard",
    "arc_eager",
    "arc_hybrid",
    "planar",
    "arc_eager_pp",
    "swap",
    "two_planar",
    "two_registers",
    "three_step",
)


@dataclass
class ModeRun:
    """One decoding mode of one run, scored against gold."""

    scores: Scores
    uas_words: list[bool]
    las_words: list[bool]
    """Per-word outcomes over all test words in file order (McNemar's test)."""
    sentence_uas: list[tuple[int, int]]
    sentence_las: list[tuple[int, int]]
    """Per-sentence (correct, total) (the bootstrap)."""


@dataclass
class Run:
    data: str
    treebank: str
    system: str
    seed: int
    epochs: int | None
    train_minutes: float | None
    device: str
    model: str = "default"
    best_epoch: int | None = None
    stopped: str | None = None
    """Why training ended, as the trainer's ``metrics.jsonl`` says (``patience: ...``)."""
    test_input: str | None = None
    """``untagged`` or ``tagged``: the test file's tag columns as the parser got them."""
    recipe: str | None = None
    """The training settings that make runs comparable (``scores.json``'s ``recipe``)."""
    modes: dict[str, ModeRun] = field(default_factory=dict)

    @property
    def stopped_by_patience(self) -> bool:
        return (self.stopped or "").startswith("patience")


@dataclass
class Gold:
    """A treebank's gold test sentences and the word masks the claims need."""

    sentences: list[Sentence]
    nonprojective_words: list[bool]
    """Per test word: its gold arc is non-projective (LR-NP's denominator)."""
    train_nonprojective_percent: float
    """% of non-projective trees in the training split (test when there is no train file)."""


def load_gold(treebank: str, data: Path) -> Gold:
    paths = treebank_paths(treebank, data, ("test",), download=False)
    sentences = read_conllu(paths["test"])
    mask = [
        word in nonprojective_arcs(s.heads)
        for s in sentences
        for word in range(1, len(s.heads) + 1)
    ]
    train_path = paths["test"].with_name("train.conllu")
    train = read_conllu(train_path) if train_path.is_file() else sentences
    share = 100.0 * sum(not is_projective(s.heads) for s in train) / max(1, len(train))
    return Gold(sentences, mask, share)


def score_mode(gold: Sequence[Sentence], predicted: dict) -> ModeRun:
    """Score one mode's predictions; they cover the first sentences of the gold file (a
    ``--quick`` study parses a prefix)."""
    heads, deprels = predicted["heads"], predicted["deprels"]
    ids = predicted.get("sent_ids") or [None] * len(heads)
    if len(heads) > len(gold):
        raise ValueError(f"{len(heads)} predicted trees for {len(gold)} gold sentences")
    accumulator = ScoreAccumulator()
    uas_words: list[bool] = []
    las_words: list[bool] = []
    sentence_uas: list[tuple[int, int]] = []
    sentence_las: list[tuple[int, int]] = []
    for sentence, sent_id, pred_heads, pred_labels in zip(gold, ids, heads, deprels, strict=False):
        if sent_id is not None and sentence.sent_id is not None and sent_id != sentence.sent_id:
            raise ValueError(
                f"prediction {sent_id!r} does not align with gold {sentence.sent_id!r}"
            )
        accumulator.add(sentence.heads, sentence.deprels, pred_heads, pred_labels, sentence.forms)
        uas = [g == p for g, p in zip(sentence.heads, pred_heads, strict=True)]
        las = [
            u and universal_label(g) == universal_label(p)  # LAS as CoNLL 2018 defines it
            for u, g, p in zip(uas, sentence.deprels, pred_labels, strict=True)
        ]
        uas_words += uas
        las_words += las
        sentence_uas.append((sum(uas), len(uas)))
        sentence_las.append((sum(las), len(las)))
    return ModeRun(
        accumulator.result(),
        uas_words,
        las_words,
        sentence_uas,
        sentence_las,
    )


def load_runs(runs_root: Path, data: Path) -> tuple[list[Run], dict[str, Gold]]:
    """Every run with a ``scores.json`` under ``runs_root``, scored; the gold by treebank."""
    golds: dict[str, Gold] = {}
    runs = []
    found = [*runs_root.glob("*/*/seed*/scores.json"), *runs_root.glob("*/*/*/seed*/scores.json")]
    for scores_path in sorted(found):
        meta = json.loads(scores_path.read_text(encoding="utf-8"))
        treebank = meta["treebank"]
        if treebank not in golds:
            golds[treebank] = load_gold(treebank, data)
        run = Run(
            data=meta.get("data", scores_path.parents[2].name),
            treebank=treebank,
            system=meta["system"],
            seed=int(meta["seed"]),
            epochs=meta.get("epochs"),
            train_minutes=meta.get("train_minutes"),
            device=str(meta.get("device", "")),
            model=meta.get("model", "default"),
            best_epoch=meta.get("best_epoch"),
            stopped=meta.get("stopped"),
            test_input=meta.get("test_input"),
            recipe=recipe_text(meta.get("recipe")),
        )
        for mode in MODES:
            trees = scores_path.with_name(f"test.{mode}.json.gz")
            if not trees.is_file():
                continue
            with gzip.open(trees, "rt", encoding="utf-8") as source:
                predicted = json.load(source)
            run.modes[mode] = score_mode(golds[treebank].sentences, predicted)
        runs.append(run)
    return runs, golds


def recipe_text(recipe: dict | None) -> str | None:
    """``lr 0.004 ×0.5 after 3, batch 1000 words, patience 10`` and, for a model trained with
    the auxiliary arc loss, ``, arc loss 1 (128 units), arc term 0.75`` (None: not
    recorded)."""
    if not recipe:
        return None
    decay = (
        f" ×{recipe['lr_decay']:g} after {recipe['lr_patience']}"
        if recipe["lr_decay"] < 1
        else " constant"
    )
    arc_loss = recipe.get("arc_loss_weight") or 0.0  # runs before the loss existed: none
    arcs = ""
    if arc_loss:
        arcs = f", arc loss {arc_loss:g} ({recipe.get('arc_hidden') or 256} units)"
        arcs += f", arc term {recipe.get('arc_decoding_weight') or 0:g}"
    if recipe["lr_decay"] < 1 and recipe.get("max_lr_decays") is not None:
        decay += f" (at most {recipe['max_lr_decays']} times)"
    return (
        f"lr {recipe['lr']:g}{decay}, batch {recipe['batch_tokens']} words, "
        f"patience {recipe['patience']}" + arcs
    )


def recipes_by_treebank(runs: Sequence[Run]) -> dict[str, list[str]]:
    """The distinct training recipes of each treebank's runs (all models)."""
    treebanks = sorted({r.treebank for r in runs})
    return {
        treebank: sorted({r.recipe or "not recorded" for r in runs if r.treebank == treebank})
        for treebank in treebanks
    }


def recipes_markdown(runs: Sequence[Run]) -> str:
    """One line per treebank naming its runs' training recipe; a treebank whose runs were
    trained differently is flagged, since its systems' differences then mix in the recipe's."""
    lines = []
    for treebank, recipes in recipes_by_treebank(runs).items():
        flag = " **(mixed: the comparison is not fair)**" if len(recipes) > 1 else ""
        lines.append(f"- {treebank.removeprefix('UD_')}: {'; '.join(recipes)}{flag}")
    return "\n".join(lines) + "\n"


# -- aggregation ------------------------------------------------------------------------------


def select(runs: Sequence[Run], treebank: str, system: str, mode: str) -> list[Run]:
    return sorted(
        (r for r in runs if r.treebank == treebank and r.system == system and mode in r.modes),
        key=lambda r: r.seed,
    )


def paired(
    runs: Sequence[Run], treebank: str, system_a: str, system_b: str, mode: str
) -> tuple[ModeRun, ModeRun, int] | None:
    """The two systems' runs of the lowest seed they share (see the module docstring)."""
    a = {r.seed: r for r in select(runs, treebank, system_a, mode)}
    b = {r.seed: r for r in select(runs, treebank, system_b, mode)}
    common = sorted(set(a) & set(b))
    if not common:
        return None
    seed = common[0]
    first, second = a[seed].modes[mode], b[seed].modes[mode]
    if len(first.las_words) != len(second.las_words):
        return None  # parsed different prefixes of the test set
    return first, second, seed


def pooled_sentences(
    runs: Sequence[Run], treebank: str, system_a: str, system_b: str, mode: str, measure: str
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[int]] | None:
    """Per-sentence ``(correct, total)`` of ``measure`` ("uas"/"las") summed over every seed
    both systems have, for a bootstrap over sentences that uses all seeds without treating a
    sentence's seeds as independent samples."""
    a = {r.seed: r for r in select(runs, treebank, system_a, mode)}
    b = {r.seed: r for r in select(runs, treebank, system_b, mode)}
    seeds = sorted(set(a) & set(b))
    key = "sentence_uas" if measure == "uas" else "sentence_las"
    sums: list[list[tuple[int, int]]] = []
    for runs_of in (a, b):
        columns = [getattr(runs_of[seed].modes[mode], key) for seed in seeds]
        if not columns or len({len(c) for c in columns}) != 1:
            return None
        sums.append(
            [(sum(c for c, _ in s), sum(t for _, t in s)) for s in zip(*columns, strict=True)]
        )
    if len(sums[0]) != len(sums[1]):
        return None
    return sums[0], sums[1], seeds


def ordered_systems(names: Iterable[str]) -> list[str]:
    known = [s for s in SYSTEM_ORDER if s in names]
    return known + sorted(set(names) - set(known))


def rounded(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)
