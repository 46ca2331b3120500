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
