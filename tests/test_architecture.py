"""The layers of docs/architecture.md hold: no module imports a layer above its own, but the listed arrows.

Every import counts (module level, in functions, under TYPE_CHECKING, and the command modules the
commands' registry loads by name: :func:`tests.test_imports.import_graph`), for every module of
``harness/`` and ``strategies/``. A module the table does not place fails; so does an arrow up
that the page does not list, and a listed arrow that is gone (the list only shrinks).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.test_imports import import_graph

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def layer_table() -> list[tuple[str, list[str]]]:
    """(layer, module patterns) from the page's table, bottom layer first."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("| layer |", 1)[1].split("\n\n", 1)[0]
    out = []
    for line in section.splitlines()[2:]:
        cells = _cells(line)
        out.append((cells[0], re.findall(r"`([\w.*]+)`", cells[2])))
    return out


def listed_arrows() -> set[tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Arrows that still run up", 1)[1]
    rows = [_cells(x) for x in section.splitlines() if x.startswith("| `")]
    return {(r[0].strip("`"), r[1].strip("`")) for r in rows}


def _strategies_graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted((ROOT / "strategies").glob("*.py")):
        name = "strategies" if path.stem == "__init__" else f"strategies.{path.stem}"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] in ("harness", "strategies"):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] in ("harness", "strategies"))
        graph[name] = found - {name}
    return graph


def _layer_of(module: str, table: list[tuple[str, list[str]]]) -> int | None:
    for i, (_, patterns) in enumerate(table):
        for p in patterns:
            if module == p or (p.endswith(".*") and module.startswith(p[:-1])):
                return i
    return None


def arrows_up() -> tuple[set[tuple[str, str]], list[str]]:
    table = layer_table()
    graph = {**import_graph(), **_strategies_graph()}
    unplaced = sorted(m for m in graph if _layer_of(m, table) is None)
    up = set()
    for m, deps in graph.items():
        lm = _layer_of(m, table)
        for d in deps:
            ld = _layer_of(d, table)
            if lm is not None and ld is not None and ld > lm:
                up.add((m, d))
    return up, unplaced


def test_every_module_has_a_layer():
    _, unplaced = arrows_up()
    assert not unplaced, f"modules docs/architecture.md does not place: {', '.join(unplaced)}"


def test_no_module_imports_a_layer_above_its_own_but_the_listed_arrows():
    up, _ = arrows_up()
    listed = listed_arrows()
    new = sorted(up - listed)
    gone = sorted(listed - up)
    assert not new, "imports of a layer above (add a row to docs/architecture.md or remove the import):\n" + \
        "\n".join(f"  {a} -> {b}" for a, b in new)
    assert not gone, "listed arrows that are gone (remove their rows):\n" + "\n".join(f"  {a} -> {b}" for a, b in gone)


def test_the_table_reads_as_intended():
    names = [n for n, _ in layer_table()]
    assert names[0] == "util" and names[-1] == "commands" and "bots" in names
    assert all(len(row) == 2 for row in listed_arrows())


#: A module's most lines, but for the files docs/architecture.md lists with their reason.
MAX_LINES = 800


def listed_long_files() -> set[str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Files over 800 lines", 1)[1].split("\n## ", 1)[0]
    return {_cells(x)[0].strip("`") for x in section.splitlines() if x.startswith("| `")}


def test_no_module_is_over_800_lines_but_the_listed_kernels():
    files = sorted((ROOT / "harness").rglob("*.py")) + sorted((ROOT / "strategies").rglob("*.py"))
    long = {str(p.relative_to(ROOT)) for p in files if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES}
    listed = listed_long_files()
    assert not long - listed, f"modules over {MAX_LINES} lines: {sorted(long - listed)} (split by topic, or list with a reason)"
    assert not listed - long, f"listed as long but not: {sorted(listed - long)} (remove their rows)"


def test_the_described_structure_names_every_module_of_the_tree():
    """harness/README.md's table of packages names each library module (by its name in backticks),
    so the description of the house follows the tree when a room is added or split."""
    text = (ROOT / "harness" / "README.md").read_text(encoding="utf-8")
    section = text.split("## The layers of the library: one package each", 1)[1].split("\n## ", 1)[0]
    named = {n.strip("/") for n in re.findall(r"`([\w/.]+)`", section)}
    library = ROOT / "harness"
    missing = sorted(str(p.relative_to(library)) for p in library.rglob("*.py")
                     if p.relative_to(library).parts[0] not in ("commands", "stats")
                     and p.name not in ("__init__.py", "cli.py", "moved.py") and p.stem not in named)
    assert not missing, f"modules harness/README.md's table of packages does not name: {missing}"
