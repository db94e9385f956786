"""Tree-class coverage of CoNLL-U files: ``python -m neuralparse.analyze FILE... [--no-punct]``.

One row per file, as in Pitler & McDonald (2015) Table 1 and Gómez-Rodríguez & Nivre (2013)
Table 1: the percentage of sentences whose tree is projective, planar, 2-/3-planar,
2-/3-Crossing-Interval, 1-Endpoint-Crossing and well-nested, the largest gap degree, and the
percentage of arcs that are non-projective (Gómez-Rodríguez & Nivre §5.2).  Exit status 2
when a file cannot be read or holds no tree.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from neuralparse.errors import InputError
from neuralparse.io import Sentence, read_conllu
from neuralparse.runtime.cli import ArgumentParser, report_error, run_program
from neuralparse.trees.core import (
    check_tree,
    gap_degree,
    is_projective,
    is_well_nested,
    nonprojective_arcs,
)
from neuralparse.trees.crossing import is_one_endpoint_crossing, min_crossing_interval_k
from neuralparse.trees.planarity import min_planarity
from neuralparse.trees.punctuation import remove_words

CONVENTIONS = """\
conventions:
  Node 0 is the artificial root at the left edge.  Projectivity, non-projective arcs,
  crossing intervals (k-Crossing-Interval) and 1-Endpoint-Crossing include the root and its
  arcs (Pitler & McDonald 2015, section 2).  Planarity and k-planarity use the arcs between
  words only, without root arcs, as Gomez-Rodriguez & Nivre (2013) Table 1 must be (with
  root arcs, 'planar' would equal 'projective').  Percentages of trees are over sentences;
  non-projective arcs (an arc h->d spanning a word not dominated by h) are a percentage of
  all arcs.  --no-punct removes UPOS PUNCT words first and re-attaches their dependents to
  the nearest ancestor that is not punctuation (root 0 if none), as Pitler & McDonald's
  Table 1 excludes punctuation; this can leave several words attached to the root.
"""

TSV_HEADER = (
    "file",
    "sentences",
    "projective",
    "planar",
    "2planar",
    "3planar",
    "2ci",
    "3ci",
    "1ec",
    "well_nested",
    "max_gap_degree",
    "nonproj_arcs",
)
TABLE_HEADER = (
    "file",
    "sentences",
    "projective",
    "planar",
    "2-planar",
    "3-planar",
    "2-CI",
    "3-CI",
    "1-EC",
    "well-nested",
    "max gap deg.",
    "non-proj. arcs",
)


@dataclass(frozen=True)
class TreeProfile:
    """The classes one tree belongs to (see :data:`CONVENTIONS` for root-arc handling)."""

    projective: bool
    planarity: int | None  # minimal k <= 3, None above
    crossing_interval_k: int | None  # minimal k <= 3, None above
    one_endpoint_crossing: bool
    well_nested: bool
    gap_degree: int
    nonprojective_arcs: int
    arcs: int


def profile_tree(heads: Sequence[int]) -> TreeProfile:
    """Classify one tree.  Projective trees skip the other tests: they lie in every class
    (gap degree 0, no crossing at all), which the brute-force tests confirm."""
    if is_projective(heads):
        return TreeProfile(True, 1, 0, True, True, 0, 0, len(heads))
    return TreeProfile(
        projective=False,
        planarity=min_planarity(heads, max_k=3),
        crossing_interval_k=min_crossing_interval_k(heads, max_k=3),
        one_endpoint_crossing=is_one_endpoint_crossing(heads),
        well_nested=is_well_nested(heads),
        gap_degree=gap_degree(heads),
        nonprojective_arcs=len(nonprojective_arcs(heads)),
        arcs=len(heads),
    )


@dataclass(frozen=True)
class CoverageRow:
    """One file's row: percentages of sentences (of arcs for ``nonprojective_arcs``)."""

    file: str
    sentences: int
    projective: float
    planar: float
    planar2: float
    planar3: float
    crossing_interval2: float
    crossing_interval3: float
    one_endpoint_crossing: float
    well_nested: float
    max_gap_degree: int
    nonprojective_arcs: float

    def fields(self) -> list[str]:
        """The row as strings in :data:`TSV_HEADER` order, percentages with two decimals."""
        percentages = (
            self.projective,
            self.planar,
            self.planar2,
            self.planar3,
            self.crossing_interval2,
            self.crossing_interval3,
            self.one_endpoint_crossing,
            self.well_nested,
        )
        return [
            self.file,
            str(self.sentences),
            *(f"{p:.2f}" for p in percentages),
            str(self.max_gap_degree),
            f"{self.nonprojective_arcs:.2f}",
        ]


def _percent(count: int, total: int) -> float:
    return 100.0 * count / total if total else 0.0


def summarize(profiles: Sequence[TreeProfile], file: str = "") -> CoverageRow:
    """Aggregate tree profiles into a coverage row."""
    n = len(profiles)

    def share(test: Iterable[bool]) -> float:
        return _percent(sum(test), n)

    return CoverageRow(
        file=file,
        sentences=n,
        projective=share(p.projective for p in profiles),
        planar=share(p.planarity == 1 for p in profiles),
        planar2=share(p.planarity is not None and p.planarity <= 2 for p in profiles),
        planar3=share(p.planarity is not None for p in profiles),
        crossing_interval2=share(
            p.crossing_interval_k is not None and p.crossing_interval_k <= 2 for p in profiles
        ),
        crossing_interval3=share(p.crossing_interval_k is not None for p in profiles),
        one_endpoint_crossing=share(p.one_endpoint_crossing for p in profiles),
        well_nested=share(p.well_nested for p in profiles),
        max_gap_degree=max((p.gap_degree for p in profiles), default=0),
        nonprojective_arcs=_percent(
            sum(p.nonprojective_arcs for p in profiles), sum(p.arcs for p in profiles)
        ),
    )


def sentence_tree(sentence: Sentence, *, no_punct: bool = False) -> list[int]:
    """The sentence's checked heads, punctuation removed when ``no_punct``."""
    where = {"source": sentence.source, "line": sentence.line, "sent_id": sentence.sent_id}
    if sentence.heads is None:
        raise InputError("sentence has no tree (HEAD is _), nothing to analyze", **where)
    check_tree(sentence.heads, **where)
    if not no_punct:
        return list(sentence.heads)
    heads, _kept = remove_words(sentence.heads, [tag == "PUNCT" for tag in sentence.upos])
    return heads


def analyze_sentences(
    sentences: Iterable[Sentence], *, no_punct: bool = False, file: str = ""
) -> CoverageRow:
    """The coverage row of ``sentences`` (library entry point of the CLI)."""
    return summarize(
        [profile_tree(sentence_tree(s, no_punct=no_punct)) for s in sentences], file=file
    )


def analyze_file(path: str, *, no_punct: bool = False) -> CoverageRow:
    """The coverage row of one CoNLL-U file (bad input raises an :class:`InputError`)."""
    return analyze_sentences(read_conllu(path), no_punct=no_punct, file=path)


def format_table(rows: Sequence[CoverageRow]) -> str:
    """Rows as an aligned plain-text table (file left-aligned, numbers right-aligned)."""
    cells = [list(TABLE_HEADER), *(row.fields() for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(TABLE_HEADER))]
    lines = []
    for line in cells:
        first = line[0].ljust(widths[0])
        rest = (value.rjust(width) for value, width in zip(line[1:], widths[1:], strict=True))
        lines.append("  ".join([first, *rest]).rstrip())
    return "\n".join(lines)


def format_tsv(rows: Sequence[CoverageRow]) -> str:
    """Rows as tab-separated values, :data:`TSV_HEADER` first."""
    return "\n".join("\t".join(line) for line in [list(TSV_HEADER), *(r.fields() for r in rows)])


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m neuralparse.analyze",
        description="Tree-class coverage of CoNLL-U files, one row per file.",
        epilog=CONVENTIONS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="CoNLL-U files")
    parser.add_argument(
        "--no-punct",
        action="store_true",
        help="remove UPOS PUNCT words first (dependents re-attached to the nearest kept ancestor)",
    )
    parser.add_argument("--tsv", action="store_true", help="tab-separated output, header first")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rows = [analyze_file(path, no_punct=args.no_punct) for path in args.files]
    except (InputError, OSError) as error:
        return report_error(error)
    print(format_tsv(rows) if args.tsv else format_table(rows))
    return 0


if __name__ == "__main__":
    run_program(main)
