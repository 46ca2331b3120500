"""The harness's import graph has no loops: no two modules import each other, directly or through others.

Every import counts, at module level, inside a function (a lazy import is still a dependency) or
under ``if TYPE_CHECKING:`` (a type named there is a dependency too, even if the import never runs).
The commands registry (``harness.commands``) imports the command modules it lists by name, so those
count as its imports too. Imports of every first-party top-level package count (``harness``,
``strategies``, ``examples``), and the graph holds the modules of ``harness/`` and ``strategies/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import harness
from harness.commands import COMMANDS

HARNESS = Path(harness.__file__).resolve().parent
ROOT = HARNESS.parent
#: The first-party top-level packages: an import of any of them is an arrow of the graph.
FIRST_PARTY = ("harness", "strategies", "examples")


def _ours(name: str) -> bool:
    return name.split(".")[0] in FIRST_PARTY


def _imports(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and _ours(node.args[0].value)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
            )
        ):
            found.add(node.args[0].value)  # importlib.import_module("harness.x") is an import too
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if _ours(a.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _ours(node.module):
            if node.module in FIRST_PARTY:  # from harness import util: the submodule, or the package's name
                found.update(
                    f"{node.module}.{a.name}"
                    if (ROOT / node.module / a.name).exists() or (ROOT / node.module / f"{a.name}.py").exists()
                    else node.module
                    for a in node.names
                )
            else:
                found.add(node.module)
    return found


def import_graph() -> dict[str, set[str]]:
    graph = {}
    for path in sorted(HARNESS.rglob("*.py")) + sorted((ROOT / "strategies").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph[name] = _imports(ast.parse(path.read_text(encoding="utf-8"))) - {name}
    graph["harness.commands"] |= {c.module for c in COMMANDS}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop as a path [a, b, ..., a], or None (depth-first search with colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (cyc := dfs(m)):
                return cyc
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (cyc := dfs(n)):
            return cyc
    return None


def test_no_module_of_the_harness_imports_itself_back():
    graph = import_graph()
    assert "harness.commands.report" in graph["harness.commands"]  # the registry's modules are its edges
    assert "harness.commands" in graph["harness.cli"]
    cycle = find_cycle(graph)
    assert cycle is None, "import loop: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_loops():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    assert _imports(ast.parse("def f():\n    from harness.reports.report import x\n")) == {"harness.reports.report"}
    assert _imports(ast.parse("if TYPE_CHECKING:\n    from harness.reports.report import x\n")) == {
        "harness.reports.report"
    }
    assert _imports(ast.parse("if typing.TYPE_CHECKING:\n    import harness.reports.report\n")) == {
        "harness.reports.report"
    }
    assert _imports(ast.parse("importlib.import_module('harness.reports.report')")) == {"harness.reports.report"}


def test_every_registered_command_is_a_module_of_the_wing_named_after_it():
    names = sorted(p.stem for p in (HARNESS / "commands").glob("*.py") if p.stem not in ("__init__", "options"))
    assert names == sorted(c.name for c in COMMANDS)  # one file per command, each in the registry
    for c in COMMANDS:
        module = c.load()
        assert callable(module.configure) and callable(module.run), c.name
