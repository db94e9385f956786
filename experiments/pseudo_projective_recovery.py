"""How much of each treebank's non-projectivity survives pseudo-projective encode -> decode.

For every ``UD_*`` treebank under the data root, on the gold trees of its training split
(``train.conllu`` by default: the split a pseudo-projective parser is trained on, hence the one
that fixes its label set; ``--splits train dev test`` pools all three), and for each label
scheme of Nivre & Nilsson (2005) (``head``, ``path``, ``head+path``; see
``neuralparse.trees.pseudo_projective``):

* non-projective arcs (Gómez-Rodríguez & Nivre 2013 §5.2) and lifted words / lift operations;
* % of non-projective arcs recovered exactly by ``decode(encode(tree))`` (head and label);
* % of lifted words recovered exactly (a lifted word's arc may have been projective at first);
* % of the non-projective trees recovered exactly (projective trees pass through unchanged);
* the number of distinct labels before and after encoding (the parser's label set).

Usage::

    python -m experiments.pseudo_projective_recovery [--data-root DIR] [--out DIR] [--splits ...]

Writes ``pseudo_projective_recovery.md`` (a Markdown table) and ``.json`` to ``--out``
(default ``outputs/pseudo_projective_recovery`` under the repository root) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from neuralparse.datasets import data_root
from neuralparse.io import iter_conllu
from neuralparse.trees.core import nonprojective_arcs
from neuralparse.trees.lifting import lift
from neuralparse.trees.pseudo_projective import SCHEMES, Scheme, decode, encode

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "outputs" / "pseudo_projective_recovery"
DEFAULT_SPLITS = ("train",)


@dataclass
class SchemeCounts:
    """Recovery counts of one scheme on one treebank."""

    nonprojective_arcs_recovered: int = 0
    lifted_recovered: int = 0
    nonprojective_trees_recovered: int = 0
    labels: set[str] = field(default_factory=set)


@dataclass
class TreebankCounts:
    """Everything measured on one treebank split."""

    treebank: str
    splits: list[str]
    sentences: int = 0
    words: int = 0
    nonprojective_trees: int = 0
    nonprojective_arcs: int = 0
    lifted_words: int = 0
    lift_operations: int = 0
    plain_labels: set[str] = field(default_factory=set)
    schemes: dict[Scheme, SchemeCounts] = field(
        default_factory=lambda: {scheme: SchemeCounts() for scheme in SCHEMES}
    )


def measure(treebank: str, paths: list[Path]) -> TreebankCounts:
    """Encode and decode every gold tree of ``paths`` with each scheme."""
    counts = TreebankCounts(treebank, splits=[p.stem for p in paths])
    for sentence in (s for path in paths for s in iter_conllu(path)):
        heads, deprels = sentence.heads, sentence.deprels
        counts.sentences += 1
        counts.words += len(heads)
        counts.plain_labels.update(deprels)
        arcs = nonprojective_arcs(heads)
        if not arcs:
            # Projective: encode is the identity, so only the label set needs updating.
            for scheme_counts in counts.schemes.values():
                scheme_counts.labels.update(deprels)
            continue
        lifting = lift(heads, "projective")
        counts.nonprojective_trees += 1
        counts.nonprojective_arcs += len(arcs)
        counts.lifted_words += len(lifting.lifted_dependents)
        counts.lift_operations += lifting.lifted
        gold = list(zip(heads, deprels, strict=True))
        for scheme, scheme_counts in counts.schemes.items():
            encoded_heads, encoded_labels = encode(heads, deprels, scheme)
            scheme_counts.labels.update(encoded_labels)
            decoded_heads, decoded_labels = decode(encoded_heads, encoded_labels, scheme)
            decoded = list(zip(decoded_heads, decoded_labels, strict=True))
            scheme_counts.nonprojective_arcs_recovered += sum(
                decoded[d - 1] == gold[d - 1] for d in arcs
            )
            scheme_counts.lifted_recovered += sum(
                decoded[d - 1] == gold[d - 1] for d in lifting.lifted_dependents
            )
            scheme_counts.nonprojective_trees_recovered += decoded == gold
    return counts


def percent(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def summary(counts: TreebankCounts) -> dict[str, object]:
    """JSON-ready record of one treebank."""
    record: dict[str, object] = {
        key: value
        for key, value in asdict(counts).items()
        if key not in ("plain_labels", "schemes")
    }
    record["plain_labels"] = len(counts.plain_labels)
    record["schemes"] = {
        scheme: {
            "nonprojective_arcs_recovered_pct": percent(
                c.nonprojective_arcs_recovered, counts.nonprojective_arcs
            ),
            "lifted_words_recovered_pct": percent(c.lifted_recovered, counts.lifted_words),
            "nonprojective_trees_recovered_pct": percent(
                c.nonprojective_trees_recovered, counts.nonprojective_trees
            ),
            "labels": len(c.labels),
        }
        for scheme, c in counts.schemes.items()
    }
    return record


def markdown_table(records: list[dict[str, object]]) -> str:
    """One row per treebank and scheme."""

    def cell(value: object) -> str:
        return "–" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)

    lines = [
        "| treebank | sentences | non-proj. trees | non-proj. arcs | lifted words (lifts) "
        "| scheme | arcs recovered % | lifted recovered % | trees recovered % | labels (plain) |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for record in records:
        schemes = record["schemes"]
        assert isinstance(schemes, dict)
        for scheme, s in schemes.items():
            lines.append(
                f"| {record['treebank']} | {record['sentences']} | {record['nonprojective_trees']} "
                f"| {record['nonprojective_arcs']} "
                f"| {record['lifted_words']} ({record['lift_operations']}) | {scheme} "
                f"| {cell(s['nonprojective_arcs_recovered_pct'])} "
                f"| {cell(s['lifted_words_recovered_pct'])} "
                f"| {cell(s['nonprojective_trees_recovered_pct'])} "
                f"| {s['labels']} ({record['plain_labels']}) |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, help="default: neuralparse.datasets.data_root()")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--splits", nargs="+", default=list(DEFAULT_SPLITS))
    args = parser.parse_args(argv)
    args.data_root = args.data_root or data_root()
    treebanks = {
        directory.name: files
        for directory in sorted(args.data_root.glob("UD_*"))
        if (files := [directory / f"{split}.conllu" for split in args.splits])
        and all(f.is_file() for f in files)
    }
    if not treebanks:
        print(f"no UD_* treebank with {args.splits} under {args.data_root}", file=sys.stderr)
        return 1
    start = time.perf_counter()
    records = []
    for name, files in treebanks.items():
        records.append(summary(measure(name, files)))
        print(f"{name}: done ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    table = markdown_table(records)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pseudo_projective_recovery.md").write_text(table, encoding="utf-8")
    (args.out / "pseudo_projective_recovery.json").write_text(
        json.dumps(records, indent=2) + "\n", encoding="utf-8"
    )
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
