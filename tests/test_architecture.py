"""The layers of pyproject.toml's table hold: no module imports a layer above its own, but the listed arrows.

Every import counts (module level, in functions, under TYPE_CHECKING, and the command modules the
commands' registry loads by name: :func:`tests.test_imports.import_graph`), for every module of
``harness/`` and ``strategies/``, of any first-party package (``harness``, ``strategies``,
``examples``). A module the table does not place fails; so does an arrow up that the table does not
list, and a listed arrow that is gone (the list only shrinks). The table is ``[tool.yatzy-harness]``
in pyproject.toml, read by docs/architecture.py, which also writes docs/architecture.md from it.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from tests.test_imports import import_graph

ROOT = Path(__file__).resolve().parent.parent


def _architecture():
    """docs/architecture.py, the one reader of the table (a script of the docs, not a package)."""
    name = "docs_architecture"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "architecture.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def table(pyproject: Path = ROOT / "pyproject.toml"):
    return _architecture().table(pyproject)


def arrows_up(t=None, graph: dict[str, set[str]] | None = None) -> tuple[set[tuple[str, str]], list[str]]:
    """(imports of a layer above, modules unplaced): a module and every module it imports must be placed."""
    t = t or table()
    graph = import_graph() if graph is None else graph
    names = set(graph) | {d for deps in graph.values() for d in deps}
    unplaced = sorted(m for m in names if t.layer_of(m) is None)
    up = set()
    for m, deps in graph.items():
        lm = t.layer_of(m)
        for d in deps:
            ld = t.layer_of(d)
            if lm is not None and ld is not None and ld > lm:
                up.add((m, d))
    return up, unplaced


def test_every_module_has_a_layer():
    _, unplaced = arrows_up()
    assert not unplaced, f"modules pyproject.toml's layer table does not place: {', '.join(unplaced)}"


def test_no_module_imports_a_layer_above_its_own_but_the_listed_arrows():
    up, _ = arrows_up()
    listed = set(table().arrows_up)
    new = sorted(up - listed)
    gone = sorted(listed - up)
    assert not new, (
        "imports of a layer above (list it in pyproject.toml's arrows-up or remove the import):\n"
        + "\n".join(f"  {a} -> {b}" for a, b in new)
    )
    assert not gone, "listed arrows that are gone (remove their rows):\n" + "\n".join(f"  {a} -> {b}" for a, b in gone)


def test_the_table_reads_as_intended():
    names = [layer.name for layer in table().layers]
    assert names[0] == "util" and names[-1] == "commands" and "bots" in names
    assert table().layer_of("harness") == 0 and table().layer_of("harness.anything") is None  # the root alone
    assert table().layer_of("harness.players.fit.kernels") == names.index("players")


def test_the_check_fails_on_a_new_arrow_up_and_on_an_unplaced_module():
    t = table()
    graph = {
        "harness.util.errors": {"harness.game.rules"},
        "harness.game.rules": {"strategies.greedy"},
        "harness.nowhere": set(),
        "harness.exact.solver": {"examples.engines.x"},
    }
    up, unplaced = arrows_up(t, graph)
    assert up == {("harness.util.errors", "harness.game.rules"), ("harness.game.rules", "strategies.greedy")}
    assert unplaced == ["examples.engines.x", "harness.nowhere"]


def test_the_page_is_what_the_table_gives():
    arch = _architecture()
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert arch.page(table(), text) == text, "docs/architecture.md is stale: run python docs/architecture.py"


#: A module's most lines, but for the files docs/architecture.md lists with their reason.
MAX_LINES = 800


def listed_long_files() -> set[str]:
    return set(table().long_files)


def test_no_module_is_over_800_lines_but_the_listed_kernels():
    files = sorted((ROOT / "harness").rglob("*.py")) + sorted((ROOT / "strategies").rglob("*.py"))
    long = {str(p.relative_to(ROOT)) for p in files if len(p.read_text(encoding="utf-8").splitlines()) > MAX_LINES}
    listed = listed_long_files()
    assert not long - listed, (
        f"modules over {MAX_LINES} lines: {sorted(long - listed)} (split by topic, or list with a reason)"
    )
    assert not listed - long, f"listed as long but not: {sorted(listed - long)} (remove their rows)"


def test_the_described_structure_names_every_module_of_the_tree():
    """harness/README.md's table of packages names each library module (by its name in backticks),
    so the description of the house follows the tree when a room is added or split."""
    text = (ROOT / "harness" / "README.md").read_text(encoding="utf-8")
    section = text.split("## The layers of the library: one package each", 1)[1].split("\n## ", 1)[0]
    named = {n.strip("/") for n in re.findall(r"`([\w/.]+)`", section)}
    library = ROOT / "harness"
    missing = sorted(
        str(p.relative_to(library))
        for p in library.rglob("*.py")
        if p.relative_to(library).parts[0] not in ("commands", "stats")
        and p.name not in ("__init__.py", "cli.py")
        and p.stem not in named
    )
    assert not missing, f"modules harness/README.md's table of packages does not name: {missing}"
