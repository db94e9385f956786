"""The accuracy study's tables, significance marks, claim checks and crossed/uncrossed plot.

Reads the runs of ``experiments/accuracy_study.py``: ``RUNS/<data>/<system>/seed<k>/`` (the
default joint model) and ``RUNS/<data>/<system>/<model>/seed<k>/`` (another ``model=``
preset, e.g. ``gold_tags``), each scored against the treebank's gold test file by
:mod:`experiments.study_scores`.

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
(:mod:`experiments.seed_claims`).

    python -m experiments.accuracy_table [--runs experiments/study_runs] [--data-root DIR]
        [--model default] [--baseline arc_eager] [--speed JSON] [--out DIR] [--plot PNG]
        [--resamples 10000] [--quick]

Writes ``accuracy.{csv,json,md}``, ``accuracy_summary.md`` (the README's table) and
``accuracy_seeds.md`` (every run: a column group per seed) to ``--out`` (default
``experiments/results``), ``docs/crossed_uncrossed.png`` (``--plot``) and beside it
``which_system.png``: per system, its LAS difference to the baseline against its recall of
non-projective arcs, coloured by its benchmark speed (greedy); ``--quick`` uses 1,000 bootstrap
resamples and writes under ``outputs/quick`` unless told otherwise.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

from experiments.report import publish
from experiments.runs import STUDY_RUNS
from experiments.seed_claims import claims, claims_markdown, comparison_markdown, seed_comparison
from experiments.study_scores import (
    MODES,
    Run,
    load_runs,
    ordered_systems,
    pooled_sentences,
    recipes_by_treebank,
    recipes_markdown,
    rounded,
    select,
)
from neuralparse.datasets import data_root
from neuralparse.errors import InputError
from neuralparse.evaluation.significance import paired_bootstrap

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
QUICK_OUT = ROOT / "outputs" / "quick"
SEED_FIGURES = ROOT / "experiments" / "seed_figures.json"
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


# -- aggregation ------------------------------------------------------------------------------


def mean_sd(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    present = [v for v in values if v is not None]
    if not present:
        return None, None
    return statistics.fmean(present), statistics.stdev(present) if len(present) > 1 else None


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
                    row[key], row[f"{key}_sd"] = rounded(mean), rounded(sd)
                row["epochs"] = rounded(mean_sd(r.epochs for r in chosen)[0], 1)
                row["best_epoch"] = rounded(mean_sd(r.best_epoch for r in chosen)[0], 1)
                row["stopped_by_patience"] = sum(r.stopped_by_patience for r in chosen)
                row["train_minutes"] = rounded(mean_sd(r.train_minutes for r in chosen)[0], 1)
                row["words_per_s"] = speed.get((system, mode))
                row["device"] = chosen[0].device
                row.update(baseline_test(runs, treebank, system, baseline, mode, resamples))
                rows.append(row)
    return rows


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
        "las_diff": rounded(difference),
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
        return rounded(mean_sd(r.modes["greedy"].scores.las for r in chosen)[0])

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
                row["difference"] = rounded(row["las"] - row[f"las_{model}"]) if both else None
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


def seed_rows(runs: Sequence[Run]) -> list[dict[str, object]]:
    """One row per run (every model and seed): its epochs, greedy and beam-8 LAS and greedy
    labeled recall of non-projective arcs, so that the spread between seeds shows."""
    rows = []
    for run in sorted(runs, key=lambda r: (r.treebank, r.system, r.model, r.seed)):
        if not {"greedy", "beam8"} <= set(run.modes):
            continue
        greedy, beam = run.modes["greedy"].scores, run.modes["beam8"].scores
        rows.append(
            {
                "treebank": run.treebank,
                "system": run.system,
                "model": run.model,
                "seed": run.seed,
                "test_input": run.test_input,
                "best_epoch": run.best_epoch,
                "epochs": run.epochs,
                "stopped_by_patience": run.stopped_by_patience,
                "train_minutes": rounded(run.train_minutes, 1),
                "las": rounded(greedy.las),
                "las_beam8": rounded(beam.las),
                "nonproj_labeled_recall": rounded(greedy.nonproj_labeled_recall),
            }
        )
    return rows


def seeds_markdown(rows: Sequence[dict], model: str) -> str:
    """Per treebank, a row per system (best mean LAS first) and a column group per seed of
    ``model``: best / last epoch, LAS greedy (beam 8), LR-NP; then the mean and every other
    model's greedy LAS (mean over its seeds)."""
    parts = []
    for treebank in sorted({r["treebank"] for r in rows}):
        here = [r for r in rows if r["treebank"] == treebank]
        main = [r for r in here if r["model"] == model]
        seeds = sorted({r["seed"] for r in main})
        others = sorted({r["model"] for r in here} - {model})
        by_system: dict[str, dict[int, dict]] = {}
        for r in main:
            by_system.setdefault(str(r["system"]), {})[int(r["seed"])] = r
        mean = {s: statistics.fmean(r["las"] for r in v.values()) for s, v in by_system.items()}
        header = ["system"]
        for seed in seeds:
            header += [f"seed {seed}: best / last", "LAS (beam 8)", "LR-NP"]
        header += [f"mean LAS ({len(seeds)} seeds)", *(f"{other} LAS" for other in others)]
        lines = [
            f"{str(treebank).removeprefix('UD_')}, model `{model}`",
            "",
            "| " + " | ".join(header) + " |",
            "| --- |" + " ---: |" * (len(header) - 1),
        ]
        for system in sorted(by_system, key=lambda s: (-mean[s], s)):
            values = [system]
            for seed in seeds:
                r = by_system[system].get(seed)
                if r is None:
                    values += ["–"] * 3
                    continue
                values += [
                    f"{r['best_epoch']} / {r['epochs']}",
                    f"{r['las']:.2f} ({r['las_beam8']:.2f})",
                    cell(r["nonproj_labeled_recall"], None),
                ]
            missing = len(by_system[system]) < len(seeds)
            values.append(f"{mean[system]:.2f}{' (fewer seeds)' if missing else ''}")
            for other in others:
                theirs = [r["las"] for r in here if r["system"] == system and r["model"] == other]
                values.append(cell(statistics.fmean(theirs), None) if theirs else "–")
            lines.append("| " + " | ".join(values) + " |")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


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


CHOICE_PNG = "which_system.png"
"""The file name of :func:`plot_choice`'s picture, written beside ``--plot``'s."""


def choice_rows(rows: Sequence[dict]) -> list[dict[str, object]]:
    """Per system, greedy, what a user choosing one weighs: its LAS difference to the
    baseline (mean, lowest and highest over the treebanks where they share seeds, the baseline
    counting 0), on how many treebanks it is significantly below or above, its mean LR-NP and
    its words/s."""
    chosen = [r for r in rows if r["mode"] == "greedy"]
    found = []
    for system in ordered_systems({str(r["system"]) for r in chosen}):
        mine = [r for r in chosen if r["system"] == system]
        if system == mine[0]["vs_baseline"]:
            differences = [0.0] * len(mine)
        else:  # treebanks where it shares seeds with the baseline
            differences = [r["las_diff"] for r in mine if r["las_diff"] is not None]
        if not differences:
            continue
        significant = [
            r["las_diff"] for r in mine if r["p_value"] is not None and r["p_value"] < 0.05
        ]
        recall, _ = mean_sd(r["nonproj_labeled_recall"] for r in mine)
        found.append(
            {
                "system": system,
                "treebanks": len(differences),
                "las_diff_mean": rounded(statistics.fmean(differences)),
                "las_diff_min": rounded(min(differences)),
                "las_diff_max": rounded(max(differences)),
                "significantly_below": sum(d < 0 for d in significant),
                "significantly_above": sum(d > 0 for d in significant),
                "nonproj_labeled_recall_mean": rounded(recall),
                "words_per_s": mine[0]["words_per_s"],
            }
        )
    return found


def plot_choice(choices: Sequence[dict], baseline: str, path: Path) -> bool:
    """One point per system (greedy): its mean recall of non-projective arcs against its mean
    LAS difference to the baseline, the bar spanning its treebanks' differences, the colour
    its benchmark speed.  Systems without a benchmark speed are left out; False (nothing
    written) when none has one."""
    drawn = [c for c in choices if c["words_per_s"] is not None]
    if not drawn:
        return False
    figure, axis = plt.subplots(figsize=(8, 5))
    speeds = [c["words_per_s"] for c in drawn]
    colours = matplotlib.colormaps["viridis"]
    norm = matplotlib.colors.Normalize(min(speeds), max(speeds))
    points = [(c["nonproj_labeled_recall_mean"] or 0.0, c["las_diff_mean"]) for c in drawn]
    xs, ys = zip(*points, strict=True)
    width, height = (max(xs) - min(xs)) or 1.0, (max(ys) - min(ys)) or 1.0
    for choice, (x, mean) in zip(drawn, points, strict=True):
        colour = colours(norm(choice["words_per_s"]))
        spread = [[mean - choice["las_diff_min"]], [choice["las_diff_max"] - mean]]
        axis.errorbar(x, mean, yerr=spread, fmt="o", color=colour, capsize=3, markersize=7)
        counts = f"{choice['significantly_below']} of {choice['treebanks']} below"
        if choice["significantly_above"]:
            counts += f", {choice['significantly_above']} above"
        # A label goes to the left of its point where another point sits just right of it.
        crowded = any(0 < u - x < 0.12 * width and abs(v - mean) < 0.15 * height for u, v in points)
        axis.annotate(
            f"{choice['system']}\n{counts}",
            (x, mean),
            xytext=(-6 if crowded else 6, 2),
            textcoords="offset points",
            ha="right" if crowded else "left",
            fontsize=7,
        )
    axis.set_xlim(0, max(xs) + 0.15 * width)
    axis.axhline(0, color="grey", linewidth=0.6)
    axis.set_xlabel("labeled recall of non-projective arcs (%, mean over treebanks)")
    axis.set_ylabel(f"LAS − {baseline}'s (mean over treebanks)")
    axis.grid(linewidth=0.3)
    bar = figure.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=colours), ax=axis)
    bar.set_label("words/s, greedy (benchmark)")
    axis.set_title(
        "Which system: greedy, untagged test, CoNLL 2018 LAS\n(bar: range over treebanks; "
        "'below': significantly below on that many treebanks)",
        fontsize=9,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


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
    per_seed = seed_rows(every_run)
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
        "per_seed": per_seed,
        "seed_comparison": comparison,
        "claims": found,
        "choice": choice_rows(rows),
        "sources": seeds["sources"],
    }
    publish(out, "accuracy", rows, document, md, png, lambda path: plot(rows, path))
    choice_png = png.with_name(CHOICE_PNG)
    if plot_choice(document["choice"], args.baseline, choice_png):
        print(f"saved {choice_png}", file=sys.stderr)
    else:
        print(f"no {CHOICE_PNG}: no system has a words/s in {args.speed}", file=sys.stderr)
    (out / "accuracy_summary.md").write_text(summary_markdown(rows, args.baseline), "utf-8")
    (out / "accuracy_seeds.md").write_text(
        f"Every run, greedy test LAS (CoNLL 2018) with beam 8's beside it, and LR-NP (labeled "
        f"recall of non-projective arcs, greedy); other models' LAS is their mean over seeds "
        f"(`{command}`).\n\n" + seeds_markdown(per_seed, args.model),
        "utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
