"""The manual's "Using it from Python" block (docs/python.md) runs as written (with fewer games) and prints what it says."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def python_block() -> str:
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_the_python_example_runs_twice(tmp_path, monkeypatch):
    """The block as a reader runs it, and then again in the same directory (issue 37: the second
    time failed on the run directories the first had written, with an error naming --resume, a
    flag of the command line, from inside the library): the same lines both times."""
    code = python_block()
    assert "games=20_000" in code
    monkeypatch.chdir(tmp_path)
    printed = []
    for _ in range(2):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code.replace("games=20_000", "games=600"), "docs/python.md", "exec"), {})
        printed.append(out.getvalue())
    assert printed[1] == printed[0]
    lines = printed[0].splitlines()
    # the exact line does not depend on the games played: it is the page's own first line
    assert lines[0] == "250.478956 {'1': 148, '5': 189, '25': 227, '50': 250, '75': 277, '95': 310, '99': 325}"
    assert [ln.split()[0] for ln in lines[1:3]] == ["greedy", "bonus"]
    assert lines[3].split()[0] in ("change", "no", "inconclusive")
    assert (tmp_path / "results" / "py-63" / "manifest.json").is_file()
