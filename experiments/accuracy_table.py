"""The accuracy study's tables, significance marks, claim checks and crossed/uncrossed plot.

Reads the runs of ``experiments/accuracy_study.py``: ``RUNS/<data>/<system>/seed<k>/`` (the
default joint model) and ``RUNS/<data>/<system>/<model>/seed<k>/`` (another ``model=``
preset, e.g. ``gold_tags``) with ``scores.json`` (run metadata: epochs, best epoch, why
training stopped, the tag setting of the test input, decoding time per mode) and
``test.<mode>.json.gz`` (predicted heads and labels of the treebank's test sentences in file
order).  Every score is recomputed
here from the predictions and the gold test file (found under the data root by the
treebank named in ``scores.json``), so that all runs are scored alike and the per-word
outcomes are at hand for the paired tests.

Per treebank x system x mode (greedy, beam8), mean ± sample standard deviation over seeds:

* UAS, LAS and labeled exact match over all words (:mod:`neuralparse.evaluation.metrics`;
  LAS is the CoNLL 2018 definition, on the universal part of DEPREL, and ``las_full``, on
  whole labels with their subtypes, is kept beside it in the CSV/JSON);
* LP-NP / LR-NP, labeled precision and recall on non-projective arcs (Gómez-Rodríguez &
  Nivre 2013 §5.2, Table 2);
* UAS on tokens whose gold arc is crossed / uncrossed (Pitler & McDonald 2015 Table 7; CoNLL-X
  scoring tokens, punctuation excluded);
* the best and the last epoch, how many seeds stopped by patience (early stopping on dev
  LAS), training minutes, and words per second from ``benchmarks/throughput.py``'s JSON
  (``--speed``; the study's own parse timings are not used, since its runs share a machine),
  so that accuracy and speed are read side by side;
* the LAS difference to a baseline system (``--baseline``, default arc_eager) in the same
  mode over the seeds both have, marked ``(n.s.)`` when a paired bootstrap over sentences is
  not significant at 0.05.  The bootstrap resamples sentences, each carrying its correct and
  total words summed over the shared seeds, so several seeds sharpen the test without counting
  a sentence's seeds as independent samples.  McNemar's test (Gómez-Rodríguez & Nivre's) needs
  one parse per word and system, so it is reported on the lowest shared seed, and decides only
  where there is no bootstrap (recall of non-projective arcs, over the gold non-projective
  words).

The main table, the comparison and the claims are for one model (``--model``, default
``default``); a further table gives, per treebank and system, the greedy LAS of every other
model trained (``gold_tags``: what gold tags add) beside it.

Then a table of the seeds' published figures for the same measures beside ours
(``experiments/seed_figures.json``; CoNLL-X/2007 data there, UD here), and a "claims" list:
each claim of the seeds checked with the numbers and the same two tests
(:mod:`neuralparse.evaluation.significance`).

    python -m experiments.accuracy_table [--runs experiments/study_runs] [--data-root DIR]
        [--model default] [--baseline arc_eager] [--speed JSON] [--out DIR] [--plot PNG]
        [--resamples 10000] [--quick]

Writes ``accuracy.{csv,json,md}`` and ``accuracy_summary.md`` (the README's table) to
``--out`` (default ``experiments/results``) and ``docs/crossed_uncrossed.png``; ``--quick``
uses 1,000 bootstrap resamples and writes under ``outputs/quick`` unless told otherwise.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

from experiments.report import publish
from experiments.runs import STUDY_RUNS
from neuralparse.datasets import data_root, treebank_paths
from neuralparse.errors import InputError
from neuralparse.evaluation.conll18 import universal_label
from neuralparse.evaluation.metrics import ScoreAccumulator, Scores
from neuralparse.evaluation.significance import (
    BootstrapResult,
    McNemarResult,
    mcnemar,
    paired_bootstrap,
)
from neuralparse.io import Sentence, read_conllu
from neuralparse.trees.core import is_projective, nonprojective_arcs

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
QUICK_OUT = ROOT / "outputs" / "quick"
SEED_FIGURES = ROOT / "experiments" / "seed_figures.json"
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
#: Measures of the table: (our key, heading).
MEASURES: tuple[tuple[str, str], ...] = (
    ("uas", "UAS"),
    ("las", "LAS"),
    ("exact_labeled", "EM"),
    ("nonproj_labeled_precision", "LP-NP"),
    ("nonproj_labeled_recall", "LR-NP"),
    ("crossed_recall", "UAS crossed"),
    ("uncrossed_recall", "UAS uncrossed"),
)
#: Further measures kept in the CSV/JSON (the seeds' CoNLL-X scoring excludes punctuation).
EXTRA_MEASURES = ("las_full", "uas_nopunct", "las_nopunct", "exact_unlabeled", "nonproj_recall")
NONPROJECTIVE_THRESHOLD = 19.0
"""Gómez-Rodríguez & Nivre (2013 §5.2): 2-planar beats projective parsing "for languages with
a high proportion of non-projective trees (>= 19%)"."""


# -- loading and scoring ----------------------------------------------------------------------


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


def mean_sd(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    present = [v for v in values if v is not None]
    if not present:
        return None, None
    return statistics.fmean(present), statistics.stdev(present) if len(present) > 1 else None


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


def benchmark_speed(path: Path | None) -> dict[tuple[str, str], float]:
    """Words/s per ``(system, mode)`` from ``benchmarks/throughput.py``'s JSON: the study's own
    parse timings are not comparable (runs share the machine), so speed comes from the
    benchmark, measured alone."""
    if path is None or not path.is_file():
        return {}
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
    modes = {"greedy": "greedy", "beam": "beam8"}
    return {(r["system"], modes[r["search"]]): round(r["words_per_s"]) for r in runs}


def aggregate(
    runs: Sequence[Run], baseline: str, speed: dict[tuple[str, str], float], resamples: int
) -> list[dict[str, object]]:
    rows = []
    treebanks = sorted({r.treebank for r in runs})
    for treebank in treebanks:
        for system in ordered_systems({r.system for r in runs if r.treebank == treebank}):
            for mode in MODES:
                chosen = select(runs, treebank, system, mode)
                if not chosen:
                    continue
                row: dict[str, object] = {
                    "treebank": treebank,
                    "data": chosen[0].data,
                    "system": system,
                    "mode": mode,
                    "seeds": len(chosen),
                }
                for key in [k for k, _ in MEASURES] + list(EXTRA_MEASURES):
                    mean, sd = mean_sd(getattr(r.modes[mode].scores, key) for r in chosen)
                    row[key], row[f"{key}_sd"] = _round(mean), _round(sd)
                row["epochs"] = _round(mean_sd(r.epochs for r in chosen)[0], 1)
                row["best_epoch"] = _round(mean_sd(r.best_epoch for r in chosen)[0], 1)
                row["stopped_by_patience"] = sum(r.stopped_by_patience for r in chosen)
                row["train_minutes"] = _round(mean_sd(r.train_minutes for r in chosen)[0], 1)
                row["words_per_s"] = speed.get((system, mode))
                row["device"] = chosen[0].device
                row.update(baseline_test(runs, treebank, system, baseline, mode, resamples))
                rows.append(row)
    return rows


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def baseline_test(
    runs: Sequence[Run], treebank: str, system: str, baseline: str, mode: str, resamples: int
) -> dict[str, object]:
    """LAS of ``system`` minus the baseline's over the seeds both have, with the p-value of a
    paired bootstrap over sentences (per-sentence counts summed over those seeds)."""
    empty = {"vs_baseline": baseline, "las_diff": None, "p_value": None, "seeds_tested": None}
    if system == baseline:
        return empty
    pooled = pooled_sentences(runs, treebank, baseline, system, mode, "las")
    if pooled is None:
        return empty
    base, other, seeds = pooled
    test = paired_bootstrap(base, other, resamples=resamples)
    total = sum(t for _, t in base)
    difference = 100 * (sum(c for c, _ in other) - sum(c for c, _ in base)) / total
    return {
        "vs_baseline": baseline,
        "las_diff": _round(difference),
        "p_value": round(test.p_value, 4),
        "seeds_tested": seeds,
    }


# -- presentation -----------------------------------------------------------------------------


def cell(mean: object, sd: object) -> str:
    if mean is None:
        return "–"
    return f"{mean:.2f}" if sd is None else f"{mean:.2f} ± {sd:.2f}"


def diff_cell(row: dict) -> str:
    if row["las_diff"] is None:
        return "–"
    mark = "" if row["p_value"] < 0.05 else " (n.s.)"
    return f"{row['las_diff']:+.2f}{mark}"


def table_markdown(rows: Sequence[dict], baseline: str) -> str:
    header = [
        "treebank",
        "system",
        "mode",
        "seeds",
        *(h for _, h in MEASURES),
        f"ΔLAS vs {baseline}",
        "best / last epoch",
        "stopped by patience",
        "train min",
        "words/s (benchmark)",
    ]
    rules = ["---"] * 3 + ["---:"] * (len(header) - 3)
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rules) + " |"]
    for r in rows:
        values = [
            str(r["treebank"]).removeprefix("UD_"),
            r["system"],
            r["mode"],
            r["seeds"],
            *(cell(r[k], r[f"{k}_sd"]) for k, _ in MEASURES),
            diff_cell(r),
            epochs_cell(r),
            f"{r['stopped_by_patience']} of {r['seeds']}",
            "–" if r["train_minutes"] is None else f"{r['train_minutes']:.1f}",
            "–" if r["words_per_s"] is None else f"{r['words_per_s']:.0f}",
        ]
        lines.append("| " + " | ".join(str(v) for v in values) + " |")
    return "\n".join(lines) + "\n"


def epochs_cell(row: dict) -> str:
    """Mean best and mean last epoch over the seeds."""
    best, last = row["best_epoch"], row["epochs"]
    return f"{'–' if best is None else f'{best:g}'} / {'–' if last is None else f'{last:g}'}"


def other_models(runs: Sequence[Run], model: str) -> list[dict[str, object]]:
    """Per treebank and system, the greedy LAS (mean over seeds) of ``model`` and of every other
    model trained, with the difference: what gold tags add, for ``gold_tags``."""

    def las(chosen: Sequence[Run]) -> float | None:
        return _round(mean_sd(r.modes["greedy"].scores.las for r in chosen)[0])

    rows = []
    for treebank in sorted({r.treebank for r in runs}):
        for system in ordered_systems({r.system for r in runs if r.treebank == treebank}):
            here = [r for r in select(runs, treebank, system, "greedy")]
            main = [r for r in here if r.model == model]
            for other in sorted({r.model for r in here} - {model}):
                chosen = [r for r in here if r.model == other]
                row = {
                    "treebank": treebank,
                    "system": system,
                    "model": other,
                    "seeds": len(chosen),
                    "test_input": chosen[0].test_input,
                    "las": las(chosen),
                    f"las_{model}": las(main),
                    f"{model}_seeds": len(main),
                    f"{model}_test_input": main[0].test_input if main else None,
                }
                both = row["las"] is not None and row[f"las_{model}"] is not None
                row["difference"] = _round(row["las"] - row[f"las_{model}"]) if both else None
                rows.append(row)
    return rows


def other_models_markdown(rows: Sequence[dict], model: str) -> str:
    header = ["treebank", "system", "model", "its test input", "seeds", "LAS", f"LAS {model}"]
    lines = [
        "| " + " | ".join([*header, f"{model} seeds", "difference"]) + " |",
        "| " + " | ".join(["---"] * 4 + ["---:"] * 5) + " |",
    ]
    for r in rows:
        values = [
            str(r["treebank"]).removeprefix("UD_"),
            r["system"],
            r["model"],
            r["test_input"] or "?",
            r["seeds"],
            cell(r["las"], None),
            cell(r[f"las_{model}"], None),
            r[f"{model}_seeds"],
            "–" if r["difference"] is None else f"{r['difference']:+.2f}",
        ]
        lines.append("| " + " | ".join(str(v) for v in values) + " |")
    return "\n".join(lines) + "\n"


def language(treebank: str) -> str:
    return treebank.removeprefix("UD_").split("-")[0]


def seed_comparison(rows: Sequence[dict], seeds: dict) -> list[dict[str, object]]:
    """Each published figure beside our mean for the same system and measure: the treebank of
    the same language, else (for the seeds' averages and other languages) our average over
    treebanks."""
    by_key = {(r["treebank"], r["system"], r["mode"]): r for r in rows}
    treebanks = sorted({str(r["treebank"]) for r in rows})
    by_language = {language(t): t for t in treebanks}
    comparison = []
    for figure in seeds["accuracy"]:
        if figure["language"] in by_language:
            scope = [by_language[figure["language"]]]
        elif figure["language"] in ("Average", "French"):
            scope = treebanks
        else:
            continue
        ours = {}
        for mode in MODES:
            values = [
                by_key[(t, figure["system"], mode)][figure["measure"]]
                for t in scope
                if (t, figure["system"], mode) in by_key
            ]
            values = [v for v in values if v is not None]
            ours[mode] = round(statistics.fmean(values), 2) if len(values) == len(scope) else None
        if all(v is None for v in ours.values()):
            continue
        comparison.append(
            {
                "source": f"{figure['source']} {figure['table']}",
                "language": figure["language"],
                "system": figure["system"],
                "system_in_paper": figure["system_in_paper"],
                "measure": figure["measure"],
                "published": figure["value"],
                "ours_greedy": ours["greedy"],
                "ours_beam8": ours["beam8"],
                "ours_on": scope[0] if len(scope) == 1 else f"mean of {len(scope)} treebanks",
            }
        )
    return comparison


def comparison_markdown(comparison: Sequence[dict]) -> str:
    lines = [
        "| source | language | system (paper) | measure | published | ours greedy "
        "| ours beam8 | ours on |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- |",
    ]
    for c in comparison:
        greedy = "–" if c["ours_greedy"] is None else f"{c['ours_greedy']:.2f}"
        beam = "–" if c["ours_beam8"] is None else f"{c['ours_beam8']:.2f}"
        lines.append(
            f"| {c['source']} | {c['language']} | {c['system']} ({c['system_in_paper']}) "
            f"| {c['measure']} | {c['published']:.2f} | {greedy} | {beam} "
            f"| {str(c['ours_on']).removeprefix('UD_')} |"
        )
    return "\n".join(lines) + "\n"


# -- claims -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """B against A on one treebank and mode: the means over seeds and the paired tests."""

    treebank: str
    mode: str
    a: float | None
    b: float | None
    mcnemar: McNemarResult | None
    bootstrap: BootstrapResult | None
    mcnemar_seed: int | None = None
    bootstrap_seeds: tuple[int, ...] = ()

    @property
    def difference(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    def text(self) -> str:
        if self.difference is None:
            return f"{self.treebank.removeprefix('UD_')}: –"
        tests = []
        if self.bootstrap is not None:
            seeds = ",".join(str(k) for k in self.bootstrap_seeds)
            tests.append(f"bootstrap p={self.bootstrap.p_value:.3g} (seeds {seeds})")
        if self.mcnemar is not None:
            tests.append(f"McNemar p={self.mcnemar.p_value:.3g} (seed {self.mcnemar_seed})")
        mark = "" if self.significant() else ", n.s."
        return (
            f"{self.treebank.removeprefix('UD_')} {self.a:.2f} → {self.b:.2f} "
            f"({self.difference:+.2f}; {', '.join(tests)}{mark})"
        )

    def significant(self) -> bool:
        """The bootstrap over sentences with every shared seed where there is one (UAS, LAS),
        else McNemar's test on the lowest shared seed (non-projective words)."""
        if self.bootstrap is not None:
            return self.bootstrap.significant()
        return self.mcnemar is not None and self.mcnemar.significant()

    def to_dict(self) -> dict[str, object]:
        return {
            "treebank": self.treebank,
            "mode": self.mode,
            "a": _round(self.a),
            "b": _round(self.b),
            "difference": _round(self.difference),
            "mcnemar_p": None if self.mcnemar is None else self.mcnemar.p_value,
            "bootstrap_p": None if self.bootstrap is None else self.bootstrap.p_value,
            "bootstrap_interval": None
            if self.bootstrap is None
            else [self.bootstrap.low, self.bootstrap.high],
        }


def compare(
    runs: Sequence[Run],
    rows_by_key: dict,
    golds: dict[str, Gold],
    treebank: str,
    mode: str,
    system_a: str,
    system_b: str,
    measure: str,
    resamples: int,
) -> Comparison | None:
    """``measure`` of B against A (means over seeds): for ``uas``/``las`` the bootstrap over
    sentences on the shared seeds and McNemar per word on the lowest one; for
    ``nonproj_labeled_recall`` McNemar on the gold non-projective words only."""
    row_a = rows_by_key.get((treebank, system_a, mode))
    row_b = rows_by_key.get((treebank, system_b, mode))
    if row_a is None or row_b is None:
        return None
    pair = paired(runs, treebank, system_a, system_b, mode)
    test = boot = None
    seed, seeds = None, ()
    if pair is not None:
        first, second, seed = pair
        if measure in ("uas", "las"):
            words = "uas_words" if measure == "uas" else "las_words"
            test = mcnemar(getattr(first, words), getattr(second, words))
            pooled = pooled_sentences(runs, treebank, system_a, system_b, mode, measure)
            if pooled is not None:
                counts_a, counts_b, shared = pooled
                boot = paired_bootstrap(counts_a, counts_b, resamples=resamples)
                seeds = tuple(shared)
        elif measure == "nonproj_labeled_recall":
            mask = golds[treebank].nonprojective_words
            pick = [i for i in range(len(first.las_words)) if mask[i]]
            test = mcnemar([first.las_words[i] for i in pick], [second.las_words[i] for i in pick])
    return Comparison(treebank, mode, row_a[measure], row_b[measure], test, boot, seed, seeds)


def verdict(
    kind: str, average: float | None, significant_better: int, significant_worse: int
) -> str:
    """A first reading of a claim's numbers, significance at 0.05 as
    :meth:`Comparison.significant` decides: ``better`` (B beats A), ``not_worse`` (B is at
    least as accurate as A) or ``same`` (no significant difference either way)."""
    if average is None:
        return "no runs"
    if kind == "same":
        return "supported" if significant_better + significant_worse == 0 else "not supported"
    if kind == "not_worse":
        return "supported" if significant_worse == 0 else "not supported"
    if average > 0 and significant_worse == 0:
        return "supported" if significant_better else "same direction, not significant"
    return "mixed" if average > 0 else "not supported"


def claim(
    title: str,
    published: str,
    comparisons: Sequence[Comparison],
    measure: str,
    kind: str,
) -> dict[str, object]:
    """A claim's numbers: per treebank, the average difference and how many are better."""
    present = [c for c in comparisons if c.difference is not None]
    average = statistics.fmean(c.difference for c in present) if present else None
    better = sum(c.difference > 0 for c in present)
    significant_better = sum(c.difference > 0 and c.significant() for c in present)
    significant_worse = sum(c.difference < 0 and c.significant() for c in present)
    return {
        "claim": title,
        "published": published,
        "measure": measure,
        "average_difference": _round(average),
        "treebanks": len(present),
        "better": better,
        "significantly_better": significant_better,
        "significantly_worse": significant_worse,
        "kind": kind,
        "verdict": verdict(kind, average, significant_better, significant_worse),
        "comparisons": [c.to_dict() for c in comparisons],
        "text": "; ".join(c.text() for c in comparisons),
    }


def claims(
    runs: Sequence[Run],
    rows: Sequence[dict],
    golds: dict[str, Gold],
    resamples: int,
) -> list[dict[str, object]]:
    """The checks of the seeds' claims, in both modes."""
    rows_by_key = {(r["treebank"], r["system"], r["mode"]): r for r in rows}
    treebanks = sorted(golds)
    heavy = [
        t for t in treebanks if golds[t].train_nonprojective_percent >= NONPROJECTIVE_THRESHOLD
    ]
    shares = ", ".join(
        f"{t.removeprefix('UD_')} {golds[t].train_nonprojective_percent:.1f}%" for t in treebanks
    )
    specs = [
        (
            "two_registers beats arc_eager on UAS",
            "P&M 2015 Table 5: +0.83 UAS on average (84.92 → 85.75), better on 8 of 10 languages",
            "arc_eager",
            "two_registers",
            "uas",
            treebanks,
            "better",
        ),
        (
            "two_registers beats swap on UAS",
            "P&M 2015 Table 5: +0.46 UAS on average (85.29 → 85.75), better on 7 of 10 languages",
            "swap",
            "two_registers",
            "uas",
            treebanks,
            "better",
        ),
        (
            f"two_planar beats projective arc_eager on LAS where >= 19% of training trees are "
            f"non-projective ({', '.join(t.removeprefix('UD_') for t in heavy) or 'none'}; "
            f"non-projective trees in train: {shares})",
            "G-R&N 2013 §5.2, Table 2: significantly better (McNemar, 0.05) on Czech, Dutch, "
            "German, Portuguese",
            "arc_eager",
            "two_planar",
            "las",
            heavy,
            "better",
        ),
        (
            "two_planar and arc_eager do not differ on LAS where < 19% of training trees are "
            "non-projective",
            "G-R&N 2013 §5.2: smaller differences, often not significant",
            "arc_eager",
            "two_planar",
            "las",
            [t for t in treebanks if t not in heavy],
            "same",
        ),
        (
            "two_planar performs about as well as pseudo-projective arc_eager_pp (LAS)",
            "G-R&N 2013 §5.2: 'generally performs at about the same level'",
            "arc_eager_pp",
            "two_planar",
            "las",
            treebanks,
            "same",
        ),
        (
            "three_step beats pseudo-projective arc_eager_pp on non-projective arcs (LR-NP)",
            "L&B 2014 Table 7: LAS on non-projective dependencies 53.5 → 66.3",
            "arc_eager_pp",
            "three_step",
            "nonproj_labeled_recall",
            treebanks,
            "better",
        ),
        (
            "swap beats projective arc_standard on non-projective arcs (LR-NP)",
            "Nivre 2009 Table 1: e.g. Czech 3.7 → 73.8, Turkish 6.6 → 11.8",
            "arc_standard",
            "swap",
            "nonproj_labeled_recall",
            treebanks,
            "better",
        ),
        (
            "swap is at least as accurate as projective arc_standard (LAS)",
            "Nivre 2009 Table 1: Su vs Sp within -0.4 .. +1.5 LAS",
            "arc_standard",
            "swap",
            "las",
            treebanks,
            "not_worse",
        ),
    ]
    found = []
    for mode in MODES:
        for title, published, a, b, measure, scope, kind in specs:
            comparisons = [
                c
                for t in scope
                if (c := compare(runs, rows_by_key, golds, t, mode, a, b, measure, resamples))
                is not None
            ]
            if comparisons:
                found.append(
                    {
                        "mode": mode,
                        "a": a,
                        "b": b,
                        **claim(title, published, comparisons, measure, kind),
                    }
                )
        found.extend(crossing_claims(rows, mode))
    return found


def crossing_claims(rows: Sequence[dict], mode: str) -> list[dict[str, object]]:
    """P&M 2015 Table 7: on crossed arcs swap > two_registers > arc_eager; on uncrossed arcs
    arc_eager ≈ two_registers > swap (averages over the treebanks all three systems have)."""
    systems = ("arc_eager", "swap", "two_registers")
    by_key = {(r["treebank"], r["system"]): r for r in rows if r["mode"] == mode}
    treebanks = sorted(
        {t for t, _ in by_key if all((t, s) in by_key for s in systems)},
    )
    if not treebanks:
        return []
    found = []
    for measure, published in (
        (
            "crossed_recall",
            "P&M 2015 Table 7 averages: arc_eager 32.51, swap 55.96, two_registers 52.05",
        ),
        (
            "uncrossed_recall",
            "P&M 2015 Table 7 averages: arc_eager 87.25, swap 86.72, two_registers 87.25",
        ),
    ):
        averages = {}
        for s in systems:
            values = [by_key[(t, s)][measure] for t in treebanks]
            present = [v for v in values if v is not None]
            averages[s] = round(statistics.fmean(present), 2) if present else None
        ranking = sorted(
            (s for s in systems if averages[s] is not None), key=lambda s: -averages[s]
        )
        found.append(
            {
                "mode": mode,
                "claim": f"{'crossed' if measure == 'crossed_recall' else 'uncrossed'} arcs: "
                + (
                    "swap > two_registers > arc_eager"
                    if measure == "crossed_recall"
                    else "arc_eager ≈ two_registers > swap"
                ),
                "published": published,
                "measure": measure,
                "averages": averages,
                "ranking": ranking,
                "treebanks": len(treebanks),
                "text": ", ".join(f"{s} {averages[s]}" for s in systems)
                + f" (mean over {len(treebanks)} treebanks)",
            }
        )
    return found


def claims_markdown(found: Sequence[dict]) -> str:
    lines = []
    for c in found:
        head = f"- **[{c['mode']}] {c['claim']}** — published: {c['published']}."
        if "verdict" in c:
            avg = c["average_difference"]
            summary = (
                f" Ours: {c['verdict']}; mean difference "
                f"{'–' if avg is None else f'{avg:+.2f}'} over {c['treebanks']} treebank(s), "
                f"better on {c['better']} ({c['significantly_better']} significantly), "
                f"significantly worse on {c['significantly_worse']}. {c['text']}."
            )
        else:
            summary = f" Ours: ranking {' > '.join(c['ranking'])}; {c['text']}."
        lines.append(head + summary)
    return "\n".join(lines) + "\n"


# -- plot -------------------------------------------------------------------------------------


def plot(rows: Sequence[dict], path: Path) -> None:
    """Per system, UAS on crossed and on uncrossed gold arcs: bars are the mean over
    treebanks, dots the treebanks (Pitler & McDonald 2015 Table 7); one panel per mode."""
    modes = [m for m in MODES if any(r["mode"] == m for r in rows)]
    figure, axes = plt.subplots(
        1, len(modes), figsize=(7 * len(modes), 4), squeeze=False, sharey=True
    )
    for axis, mode in zip(axes[0], modes, strict=True):
        chosen = [r for r in rows if r["mode"] == mode]
        systems = ordered_systems({str(r["system"]) for r in chosen})
        for k, (measure, label, color) in enumerate(
            (
                ("crossed_recall", "crossed", "tab:red"),
                ("uncrossed_recall", "uncrossed", "tab:blue"),
            )
        ):
            means, points = [], []
            for i, system in enumerate(systems):
                values = [
                    r[measure] for r in chosen if r["system"] == system and r[measure] is not None
                ]
                means.append(statistics.fmean(values) if values else 0.0)
                points += [(i + (k - 0.5) * 0.38, v) for v in values]
            axis.bar(
                [i + (k - 0.5) * 0.38 for i in range(len(systems))],
                means,
                0.38,
                color=color,
                alpha=0.55,
                label=f"{label} (mean over treebanks)",
            )
            if points:
                xs, ys = zip(*points, strict=True)
                axis.scatter(xs, ys, s=9, color=color, edgecolors="black", linewidths=0.3)
        axis.set_xticks(range(len(systems)))
        axis.set_xticklabels(systems, rotation=30, ha="right", fontsize=8)
        axis.set_ylabel("UAS (%), punctuation excluded")
        axis.set_title(mode)
        axis.grid(axis="y", linewidth=0.3)
    axes[0][0].legend(fontsize=7, loc="lower left")
    figure.suptitle("UAS on crossed vs uncrossed gold arcs (cf. Pitler & McDonald 2015, Table 7)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# -- main -------------------------------------------------------------------------------------


def summary_markdown(rows: Sequence[dict], baseline: str) -> str:
    """The README's table: one row per treebank and system, greedy scores with the beam's LAS
    beside them, and the benchmark's speed of both modes."""
    by_key = {(r["treebank"], r["system"], r["mode"]): r for r in rows}
    header = [
        "treebank", "system", "seeds", "UAS", "LAS", "LAS beam 8", "EM", "LP-NP", "LR-NP",
        "UAS crossed", "UAS uncrossed", f"ΔLAS vs {baseline}", "best / last epoch", "words/s",
        "words/s beam 8",
    ]  # fmt: skip
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + " |",
    ]
    for r in rows:
        if r["mode"] != "greedy":
            continue
        beam = by_key.get((r["treebank"], r["system"], "beam8"))

        def speed(row: dict | None) -> str:
            return "–" if row is None or row["words_per_s"] is None else f"{row['words_per_s']:,}"

        values = [
            str(r["treebank"]).removeprefix("UD_"),
            r["system"],
            r["seeds"],
            cell(r["uas"], r["uas_sd"]),
            cell(r["las"], r["las_sd"]),
            "–" if beam is None else cell(beam["las"], beam["las_sd"]),
            *(cell(r[k], r[f"{k}_sd"]) for k, _ in MEASURES[2:]),
            diff_cell(r),
            epochs_cell(r),
            speed(r),
            speed(beam),
        ]
        lines.append("| " + " | ".join(str(v) for v in values) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=STUDY_RUNS)
    parser.add_argument("--data-root", type=Path, default=None, help="default: the data root")
    parser.add_argument("--model", default="default", help="the model of the main tables")
    parser.add_argument("--baseline", default="arc_eager")
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap (default 10000)")
    parser.add_argument("--out", type=Path, default=None, help=f"default: {RESULTS}")
    parser.add_argument(
        "--plot", type=Path, default=None, help="default: docs/crossed_uncrossed.png"
    )
    parser.add_argument(
        "--speed",
        type=Path,
        default=ROOT / "outputs" / "benchmarks" / "throughput.json",
        help="benchmarks/throughput.py JSON giving the words/s column",
    )
    parser.add_argument("--quick", action="store_true", help="CI-sized: 1,000 resamples")
    args = parser.parse_args(argv)
    data = args.data_root or data_root()
    out = args.out or (QUICK_OUT if args.quick else RESULTS)
    png = args.plot or (out if args.quick else ROOT / "docs") / "crossed_uncrossed.png"
    resamples = args.resamples or (1000 if args.quick else 10_000)
    try:
        every_run, golds = load_runs(args.runs, data)
    except (InputError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    runs = [r for r in every_run if r.model == args.model]
    if not runs:
        print(
            f"error: no run of model {args.model!r} (*/*/seed*/scores.json, "
            f"*/*/<model>/seed*/scores.json) under {args.runs}",
            file=sys.stderr,
        )
        return 1
    others = other_models(every_run, args.model)
    inputs = " and ".join(sorted({r.test_input or "unrecorded" for r in runs}))
    rows = aggregate(runs, args.baseline, benchmark_speed(args.speed), resamples)
    seeds = json.loads(SEED_FIGURES.read_text(encoding="utf-8"))
    comparison = seed_comparison(rows, seeds)
    found = claims(runs, rows, golds, resamples)
    arguments = argv if argv is not None else sys.argv[1:]
    command = " ".join(["python -m experiments.accuracy_table", *arguments])
    md = (
        f"Test accuracy per treebank, system and decoding mode of model `{args.model}` "
        f"(test input: {inputs}): mean ± sd over seeds ({date.today()}; `{command}`). "
        f"UAS/LAS/EM over all words, LAS as CoNLL 2018 defines it (the universal part of "
        f"DEPREL); best / last epoch: means over seeds; LP-NP/LR-NP labeled "
        f"precision/recall on non-projective arcs; crossed/uncrossed: UAS without punctuation. "
        f"ΔLAS vs {args.baseline}: same mode, seeds both have; (n.s.) = paired bootstrap over "
        f"sentences p >= 0.05.\n\n"
        + table_markdown(rows, args.baseline)
        + "\nTraining recipe (every model of the treebank)\n\n"
        + recipes_markdown(every_run)
        + "\nPublished figures for the same measures (CoNLL-X/2007 data there, UD here)\n\n"
        + comparison_markdown(comparison)
        + "\nClaims of the seeds, checked\n\n"
        + claims_markdown(found)
    )
    if others:
        md += (
            f"\nOther models beside `{args.model}` (greedy LAS, mean over seeds)\n\n"
            + other_models_markdown(others, args.model)
        )
    document = {
        "command": command,
        "date": str(date.today()),
        "runs": str(args.runs),
        "model": args.model,
        "test_input": inputs,
        "recipes": recipes_by_treebank(every_run),
        "las_definition": "CoNLL 2018 (universal part of DEPREL); las_full: whole labels",
        "baseline": args.baseline,
        "resamples": resamples,
        "rows": rows,
        "other_models": others,
        "seed_comparison": comparison,
        "claims": found,
        "sources": seeds["sources"],
    }
    publish(out, "accuracy", rows, document, md, png, lambda path: plot(rows, path))
    (out / "accuracy_summary.md").write_text(summary_markdown(rows, args.baseline), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
