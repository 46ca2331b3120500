"""The library has no command line in it: only the commands wing and ``harness.cli`` parse flags, print or exit.

Checked from the source (every module of ``harness`` and ``strategies``, parsed) and from the import
graph: a workflow is a typed Python call, so nothing below the wing may take an argparse namespace,
write to stdout or stop the process, and nothing in the library may import the wing back. Nor does
any function outside the numba kernels take more than eight parameters (:data:`MAX_PARAMS`).
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
        "import argparse",
        "print() at line 2",
        "sys.exit() at line 4",
    ]
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
    p.write_text(
        "def f():\n    # why\n    from harness.exact import evaluate as E, figures\n"
        "    def g():\n        import harness.game.rules\n"
    )
    assert deferred_imports(p) == [
        (3, "harness.exact.evaluate", True),
        (3, "harness.exact.figures", True),
        (5, "harness.game.rules", False),
    ]


# ---------------------------------------------------------------------------------------------
# short signatures (issue 47, item 5)

#: The most parameters a function may take outside the numba kernels (``self``/``cls`` of a
#: method, ``*args`` and ``**kwargs`` not counted): more go into a frozen dataclass that says what
#: they hold (``FitOptions``, ``Limits``, ``CompareSettings``, ...). A kernel stays flat: numba
#: compiles arrays and scalars, not Python objects.
MAX_PARAMS = 8
#: Numba's decorators: a function under one of them is a kernel.
KERNEL_DECORATORS = {"njit", "jit", "generated_jit", "intrinsic", "vectorize", "guvectorize", "overload"}


def is_kernel_module(rel: str) -> bool:
    """A module of numba kernels: ``kernels.py``, ``*_kernels.py`` or a module of a ``kernels`` package."""
    parts = rel.split("/")
    return "kernels" in parts[:-1] or parts[-1] == "kernels.py" or parts[-1].endswith("_kernels.py")


def is_kernel(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in KERNEL_DECORATORS:
            return True
    return False


def long_signatures(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(name, line, parameters) of every function of a module over :data:`MAX_PARAMS` parameters
    that is not a numba kernel, nested functions and methods included."""
    out = []

    def visit(node: ast.AST, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in child.decorator_list)
                if in_class and not static and names[:1] in (["self"], ["cls"]):
                    names = names[1:]
                if len(names) > MAX_PARAMS and not is_kernel(child):
                    out.append((child.name, child.lineno, len(names)))
                visit(child, False)
            else:
                visit(child, isinstance(child, ast.ClassDef))

    visit(tree, False)
    return out


def test_no_function_outside_the_kernels_takes_more_than_eight_parameters():
    files = sorted((ROOT / "harness").rglob("*.py")) + sorted((ROOT / "strategies").rglob("*.py"))
    found = []
    for p in files:
        rel = p.relative_to(ROOT).as_posix()
        if not is_kernel_module(rel):
            found += [(rel, name, line, n) for name, line, n in long_signatures(ast.parse(p.read_text()))]
    offenders = [f"  {rel}:{line} {name}: {n} parameters" for rel, name, line, n in found]
    assert not offenders, (
        f"functions over {MAX_PARAMS} parameters (group them in a frozen dataclass; a numba "
        "kernel is exempt):\n" + "\n".join(offenders)
    )


def test_the_signature_check_can_fail():
    src = (
        "import numba as nb\n"
        "def f(a, b, c, d, e, f, g, h, i): pass\n"
        "def ok(a, b, c, d, e, f, g, h, *args, **kw): pass\n"
        "@nb.njit(cache=True)\ndef k(a, b, c, d, e, f, g, h, i): pass\n"
        "class C:\n    def m(self, a, b, c, d, e, f, g, h): pass\n    def n(self, a, b, c, d, e, f, g, h, i): pass\n"
        "    @staticmethod\n    def s(self, a, b, c, d, e, f, g, h): pass\n"
        "def outer():\n    def inner(a, b, c, d, e, f, g, h, i, j): pass\n"
    )
    assert long_signatures(ast.parse(src)) == [("f", 2, 9), ("n", 8, 9), ("s", 10, 9), ("inner", 12, 10)]
    assert is_kernel_module("harness/exact/kernels/solver.py") and is_kernel_module("harness/game/loop_kernels.py")
    assert not is_kernel_module("harness/exact/target.py")
