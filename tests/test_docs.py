"""The project's Markdown pages link to files and headings that exist.

README.md, docs/ and the result tables cross-reference each other by relative links, many
with a heading anchor (``docs/results.md#speed``); headings get renamed as results move on.
This checks every relative link of every tracked Markdown page: the file must exist and, for
a link into a Markdown page, the anchor must be one of that page's headings as GitHub names
them.  Links with a scheme (``https:``) are not followed: no network at test time.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
"""A Markdown link or image, ``[text](target)`` / ``![alt](target)``: its target."""
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def markdown_pages() -> list[Path]:
    """The Markdown pages git tracks (or would: untracked ones it does not ignore)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout ({listed.stderr.strip()}): cannot list the pages")
    return [ROOT / name for name in listed.stdout.splitlines() if (ROOT / name).is_file()]


def headings(text: str) -> list[tuple[int, str]]:
    """The headings of a Markdown page in order, as (level, anchor), with the anchors GitHub
    gives them: the heading's text (a link in it reduced to its words) in lower case, without
    punctuation but ``-`` and ``_``, spaces turned into ``-``; a repeated anchor gets ``-1``,
    ``-2``, ..."""
    found = []
    seen: dict[str, int] = {}
    for line in FENCE.sub("", text).splitlines():
        heading = re.match(r"(#{1,6}) (.*)", line)
        if heading is None:
            continue
        words = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(2)).strip().lower()
        anchor = "".join(c for c in words if c.isalnum() or c in " -_").replace(" ", "-")
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.append((len(heading.group(1)), anchor if count == 0 else f"{anchor}-{count}"))
    return found


def heading_anchors(text: str) -> set[str]:
    return {anchor for _, anchor in headings(text)}


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file or heading does not exist."""
    text = CODE_SPAN.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1)
        if re.match(r"[a-zA-Z][a-zA-Z+.-]*:", target):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path) if path else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif (
            anchor
            and destination.suffix == ".md"
            and anchor not in heading_anchors(destination.read_text(encoding="utf-8"))
        ):
            broken.append(f"{target}: no such heading")
    return broken


def test_heading_anchors_follow_githubs_rules() -> None:
    text = "# Results: the seeds' experiments on UD\n## `swap` (2026-12-04)\n## Speed\n## Speed\n"
    assert heading_anchors(text) == {
        "results-the-seeds-experiments-on-ud",
        "swap-2026-12-04",
        "speed",
        "speed-1",
    }
    assert heading_anchors("```\n# not a heading\n```\n### [Linked](x.md) heading\n") == {
        "linked-heading"
    }


def test_broken_links_are_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# A heading\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-heading) [gone](missing.md) [wrong](other.md#another-heading) "
        "[web](https://example.org/x#y) `[code](nowhere.md)` [self](#top)\n# Top\n",
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "missing.md: no such file",
        "other.md#another-heading: no such heading",
    ]


def test_every_relative_link_of_the_docs_resolves() -> None:
    pages = markdown_pages()
    assert ROOT / "README.md" in pages
    broken = {str(page.relative_to(ROOT)): found for page in pages if (found := broken_links(page))}
    assert not broken, f"links to missing files or headings: {broken}"


def test_the_results_pages_contents_list_every_section() -> None:
    """docs/results.md is long: its contents list names each of its sections (levels 2 and
    3) in order, so a new section is not left out of it."""
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    contents = text.split("**Contents**", 1)[1].split("\n#", 1)[0]
    listed = re.findall(r"^\s*- \[[^\]]*\]\(#([^)]+)\)", contents, re.M)
    assert listed == [anchor for level, anchor in headings(text) if level in (2, 3)]
