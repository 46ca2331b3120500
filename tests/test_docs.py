"""The manual builds with one command, offline, every warning an error; the README's links resolve (issue 37).

``mkdocs build --strict`` (mkdocs.yml at the top of the clone, pages in docs/) is built into a
temporary directory: a broken link, a missing anchor, a page left out of the nav, a docstring
mkdocstrings cannot read or the CLI reference hook failing is a failed build, so a failed test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_manual_builds_strictly_and_offline(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]'; the test extra has it)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    site = tmp_path / "site"
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    assert "WARNING" not in res.stderr, res.stderr[-4000:]
    # the command-line reference is generated from the parser, every command in it
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    from harness.commands import COMMANDS

    for c in COMMANDS:
        assert f"yatzy-harness {c.name}" in cli, c.name
    assert "--target-win-rate" in cli and "--max-games" in cli
    # the library reference is generated from the docstrings
    assert "load_rules" in (site / "reference" / "library.html").read_text(encoding="utf-8")
    # the rules reference is configs/rules/README.md itself, included
    assert "upper_bonus_threshold" in (site / "reference" / "rules.html").read_text(encoding="utf-8")
    # nothing is fetched from the network when the pages are opened: no web fonts, no CDN
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, page


def _links(text: str) -> list[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    return re.findall(r"!?\[[^\]]*\]\(([^)\s]+)\)", text)


def test_every_relative_link_of_the_readme_resolves() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = _links(readme)
    assert links, "the README links into the manual"
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        path = link.split("#", 1)[0]
        assert path and (ROOT / path).is_file(), f"README.md links to {link}, which is not a file of the clone"
        if "#" in link and path.endswith(".md"):
            anchor = link.split("#", 1)[1]
            heads = re.findall(r"^#+ (.+)$", (ROOT / path).read_text(encoding="utf-8"), flags=re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in heads}
            assert anchor in slugs, f"README.md links to {link}: no such heading"
