"""The package's shape, checked from its source with the standard library's ``ast``.

Data flows one way (file -> sentences -> tensors -> states -> actions -> trees -> file), and
what training and prediction share lives in :mod:`neuralparse.runtime`; these tests keep it
so: no import cycle between the package's modules (imports inside functions count: hiding a
cycle there is still a cycle), and neither end of the pipeline reaching into the other.
Imports under ``if TYPE_CHECKING:`` are for annotations only and are left out.  No module is
longer than :data:`MAX_MODULE_LINES`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "neuralparse"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The package modules that ``path`` imports at run time (``from a import b`` counts as
    ``a.b`` when that is a module, else ``a``)."""
    name = module_name(path)
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imported_modules(p, modules) for p in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (as the list of modules around it), or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            # A package's __init__ importing its own submodules is how packages re-export.
            if module.startswith(target + ".") or target.startswith(module + "."):
                continue
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_the_cycle_finder_finds_cycles() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle_between_modules() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize(
    ("importer", "forbidden"),
    [
        ("neuralparse.runtime", ("neuralparse.training", "neuralparse.prediction")),
        ("neuralparse.prediction", ("neuralparse.training",)),
        ("neuralparse.api", ("neuralparse.training",)),
        ("neuralparse.training", ("neuralparse.prediction", "neuralparse.api")),
        ("neuralparse.search", ("neuralparse.training", "neuralparse.prediction")),
        ("neuralparse.systems", ("neuralparse.model", "neuralparse.search")),
        ("neuralparse.trees", ("neuralparse.systems", "neuralparse.model")),
        ("neuralparse.io", ("neuralparse.model", "neuralparse.systems", "neuralparse.search")),
    ],
)
def test_data_flows_one_way(importer: str, forbidden: tuple[str, ...]) -> None:
    graph = import_graph()
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in graph.items()
        if module == importer or module.startswith(importer + ".")
        for target in targets
        if any(target == f or target.startswith(f + ".") for f in forbidden)
    )
    assert not wrong, "; ".join(wrong)


MAX_MODULE_LINES = 600
"""A module longer than this does more than one thing: split it along a seam (its docstring
says what it is for)."""


def test_no_module_is_too_long() -> None:
    lengths = {
        str(path.relative_to(PACKAGE.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }
    too_long = [
        f"{name} ({lines} lines)" for name, lines in lengths.items() if lines > MAX_MODULE_LINES
    ]
    assert not too_long, f"over {MAX_MODULE_LINES} lines: " + ", ".join(too_long)
