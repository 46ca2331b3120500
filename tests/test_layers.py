"""The library has no command line in it: only the commands wing and ``harness.cli`` parse flags, print or exit.

Checked from the source (every module of ``harness`` and ``strategies``, parsed) and from the import
graph: a workflow is a typed Python call, so nothing below the wing may take an argparse namespace,
write to stdout or stop the process, and nothing in the library may import the wing back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import harness

from tests.test_imports import import_graph

ROOT = Path(harness.__file__).resolve().parent.parent
WING = ("harness/commands/", "harness/cli.py")


def library_modules() -> list[Path]:
    files = sorted((ROOT / "harness").rglob("*.py")) + sorted((ROOT / "strategies").rglob("*.py"))
    return [p for p in files if not str(p.relative_to(ROOT)).startswith(WING)]


def offences(tree: ast.AST) -> list[str]:
    """What in a module's source belongs to a command line: argparse, print, stdout writes, exits."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] == "argparse"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "argparse":
            found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else (ast.unparse(f) if isinstance(f, ast.Attribute) else "")
            if name in ("print", "exit", "quit", "sys.exit", "os._exit", "sys.stdout.write", "sys.stderr.write"):
                found.append(f"{name}() at line {node.lineno}")
        elif isinstance(node, ast.Attribute) and ast.unparse(node) == "argparse.Namespace":
            found.append(f"argparse.Namespace at line {node.lineno}")
    return found


def test_the_library_never_parses_flags_prints_or_exits():
    bad = {str(p.relative_to(ROOT)): o for p in library_modules() if (o := offences(ast.parse(p.read_text())))}
    assert bad == {}


def test_the_library_never_imports_the_commands_wing():
    graph = import_graph()
    wing = {n for n in graph if n == "harness.cli" or n == "harness.commands" or n.startswith("harness.commands.")}
    leaks = {n: sorted(deps & wing) for n, deps in graph.items() if n not in wing and deps & wing}
    assert leaks == {}


def test_the_checks_can_fail():
    assert offences(ast.parse("import argparse\nprint(1)\nimport sys\nsys.exit(2)")) == [
        "import argparse", "print() at line 2", "sys.exit() at line 4"]
    assert offences(ast.parse("def f(a: 'x'):\n    return argparse.Namespace()")) == ["argparse.Namespace at line 2"]


#: The most modules of the harness the library may import inside functions (issue 38); each such
#: import says why on its line or the line above (a heavy import deferred, measured, or a loop).
MAX_DEFERRED = 15


def deferred_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, module, has a reason) of each harness or bots module imported inside a function of
    ``path``: every name of ``from harness.pkg import a, b`` that is a module counts as one."""
    def is_module(name: str) -> bool:
        base = ROOT.joinpath(*name.split("."))
        return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()

    lines = path.read_text().splitlines()
    tree = ast.parse("\n".join(lines))
    seen: set[int] = set()
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if id(node) in seen or not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            seen.add(id(node))  # a nested function's import counts once
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names if a.name.split(".")[0] in ("harness", "strategies")]
            elif node.level == 0 and node.module and node.module.split(".")[0] in ("harness", "strategies"):
                subs = [f"{node.module}.{a.name}" for a in node.names]
                mods = [m for m in subs if is_module(m)] or [node.module]
            else:
                mods = []
            said = "#" in lines[node.lineno - 1] or lines[node.lineno - 2].strip().startswith("#")
            out += [(node.lineno, m, said) for m in mods]
    return out


def test_the_library_defers_few_imports_of_the_harness_each_with_its_reason():
    found = {str(p.relative_to(ROOT)): d for p in library_modules() if (d := deferred_imports(p))}
    listing = "\n".join(f"  {f}:{n} {m}" for f, d in sorted(found.items()) for n, m, _ in d)
    assert sum(map(len, found.values())) <= MAX_DEFERRED, f"imports inside functions:\n{listing}"
    silent = [f"{f}:{n} {m}" for f, d in found.items() for n, m, said in d if not said]
    assert not silent, "imports inside functions without a reason in a comment: " + ", ".join(silent)


def test_the_deferred_import_count_sees_every_module(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("def f():\n    # why\n    from harness.exact import evaluate as E, figures\n"
                 "    def g():\n        import harness.game.rules\n")
    assert deferred_imports(p) == [(3, "harness.exact.evaluate", True), (3, "harness.exact.figures", True),
                                   (5, "harness.game.rules", False)]
