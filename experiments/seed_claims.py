"""The seeds' claims checked on the accuracy study's runs, and their published figures
beside ours.

Each claim (two-registers against arc-eager and swap, Pitler & McDonald 2015 Table 5;
2-planar against arc-eager and pseudo-projective arc-eager, Gómez-Rodríguez & Nivre 2013
§5.2; three-step's non-projective arcs, Lacroix & Béchet 2014 Table 7; swap against
arc-standard, Nivre 2009 Table 1; crossed and uncrossed arcs, Pitler & McDonald 2015 Table 7)
is measured per treebank and decoding mode, with a paired bootstrap over sentences on every
shared seed and McNemar's test per word on the lowest one
(:mod:`neuralparse.evaluation.significance`), and given a first verdict.  The published
figures come from ``experiments/seed_figures.json`` (CoNLL-X/2007 data there, UD here).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from experiments.study_scores import MODES, Gold, Run, paired, pooled_sentences, rounded
from neuralparse.evaluation.significance import (
    BootstrapResult,
    McNemarResult,
    mcnemar,
    paired_bootstrap,
)

NONPROJECTIVE_THRESHOLD = 19.0
"""Gómez-Rodríguez & Nivre (2013 §5.2): 2-planar beats projective parsing "for languages with
a high proportion of non-projective trees (>= 19%)"."""


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
            "a": rounded(self.a),
            "b": rounded(self.b),
            "difference": rounded(self.difference),
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
        "average_difference": rounded(average),
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
