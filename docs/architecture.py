"""The layer table of ``pyproject.toml`` ([tool.yatzy-harness]): read, and written into docs/architecture.md.

``python docs/architecture.py`` rewrites the page's generated part (between the two markers) from the
table; ``python docs/architecture.py --check`` exits 1 when the page is not what the table gives.
tests/test_architecture.py reads the same table through :func:`table`.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
BEGIN = (
    "<!-- generated from pyproject.toml [tool.yatzy-harness] by python docs/architecture.py: edit the table there -->"
)
END = "<!-- end of the generated part -->"


@dataclass(frozen=True)
class Package:
    name: str
    about: str
    alone: bool = False  # places the package's own module only, not its submodules

    def holds(self, module: str) -> bool:
        return module == self.name or (not self.alone and module.startswith(self.name + "."))


@dataclass(frozen=True)
class Layer:
    name: str
    owns: str
    packages: tuple[Package, ...]


@dataclass(frozen=True)
class Table:
    layers: tuple[Layer, ...]
    long_files: dict[str, str]  # file -> why it is longer
    arrows_up: dict[tuple[str, str], str]  # (from, to) -> what removes it

    def layer_of(self, module: str) -> int | None:
        """The index of the layer of the longest package that holds ``module`` (None: unplaced)."""
        best: tuple[int, int] | None = None
        for i, layer in enumerate(self.layers):
            for p in layer.packages:
                if p.holds(module) and (best is None or len(p.name) > best[1]):
                    best = (i, len(p.name))
        return None if best is None else best[0]


def table(pyproject: Path = ROOT / "pyproject.toml") -> Table:
    conf = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["yatzy-harness"]
    layers = tuple(Layer(x["name"], x["owns"], tuple(Package(**p) for p in x["packages"])) for x in conf["layers"])
    return Table(
        layers,
        {x["file"]: x["why"] for x in conf.get("long-files", [])},
        {(x["from"], x["to"]): x["removes"] for x in conf.get("arrows-up", [])},
    )


def render(t: Table) -> str:
    out = ["| layer | package | what it holds |", "|---|---|---|"]
    for layer in t.layers:
        for p in layer.packages:
            shown = f"`{p.name}`" + (" (its own module)" if p.alone else "")
            out.append(f"| {layer.name} | {shown} | {p.about} |")
    out += [
        "",
        "## Files over 800 lines",
        "",
        "A module holds one topic and stays under 800 lines; a split follows a named topic (each module's",
        "docstring says which), not a line count. The files below are the exceptions, each with its reason;",
        "`tests/test_architecture.py` fails on any other module over the limit and on a listed file that is",
        "no longer over it.",
        "",
        "| file | why it is longer |",
        "|---|---|",
    ]
    out += [f"| `{f}` | {why} |" for f, why in sorted(t.long_files.items())]
    out += [
        "",
        "## Arrows that still run up",
        "",
        "The imports below go to a layer above their own. Each is listed with what removes it; the test",
        "fails on any arrow up that is not listed, and on a listed one that is gone (so the list only",
        "shrinks).",
        "",
    ]
    if t.arrows_up:
        out += ["| from | to | what removes it |", "|---|---|---|"]
        out += [f"| `{a}` | `{b}` | {why} |" for (a, b), why in sorted(t.arrows_up.items())]
    else:
        out.append("There are none today.")
    return "\n".join(out)


def page(t: Table, text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{render(t)}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text = PAGE.read_text(encoding="utf-8")
    want = page(table(), text)
    if argv == ["--check"]:
        if want != text:
            print("docs/architecture.md is not what pyproject.toml's table gives: run python docs/architecture.py")
            return 1
        return 0
    if argv:
        print("usage: python docs/architecture.py [--check]")
        return 2
    PAGE.write_text(want, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
