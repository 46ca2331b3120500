"""A plugin author's kit: the write-a-bot page's package is examples/plugin/, built offline, installed
and its contract test run from the installed harness (``harness.testing``), as a plugin's own CI would.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = ROOT / "examples" / "plugin"
PAGE = ROOT / "docs" / "write-a-bot.md"


def _shown_files() -> dict[str, str]:
    """The files the page shows, each after a ``<!-- plugin file: PATH -->`` line: path -> text."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.findall(
        r"<!-- plugin file: ([\w/.-]+) -->\n(?:<!-- example: [\w-]+ -->\n)?```\w*\n(.*?)\n```", text, flags=re.S
    )
    return {path: body + "\n" for path, body in found}


def test_the_page_shows_every_file_of_the_example_package_as_it_is():
    shown = _shown_files()
    on_disk = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for p in sorted(PLUGIN.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)
    }
    assert shown == on_disk


def test_the_contract_ships_in_the_installed_package():
    from harness.testing import StrategyContract, classifier_problems

    assert StrategyContract.__module__ == "harness.testing" and callable(classifier_problems)


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_the_example_plugin_builds_offline_installs_and_passes_its_contract_test(tmp_path):
    """Build a wheel of the package copied to a temporary folder with no index and no build
    isolation (offline: setuptools is the harness's own build requirement), install it into a
    virtual environment that sees this interpreter's packages (the harness among them, with pytest),
    and run the package's own tests there: the contract reaches the bot through its entry point."""
    src = tmp_path / "yatzy-most-common"
    shutil.copytree(PLUGIN, src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    wheels = tmp_path / "wheels"
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheels),
            str(src),
        ],
        tmp_path,
        env,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("yatzy_most_common-1.0.0-*.whl")
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(tmp_path / "venv")
    py = str(tmp_path / "venv" / "bin" / "python")
    env["PYTHONPATH"] = str(ROOT)  # the harness of this clone, whether or not it is pip-installed here
    # this interpreter's pip installs into the venv (pip --python: the venv is made without pip of its own)
    installed = _run(
        [sys.executable, "-m", "pip", "--python", py, "install", "--no-deps", "--no-index", str(wheel)], tmp_path, env
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = _run([py, "-m", "harness.cli", "strategies"], tmp_path, env)
    assert listed.returncode == 0 and "most-common" in listed.stdout, listed.stdout + listed.stderr
    tested = _run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly", "tests"], src, env
    )
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-3000:]
    assert re.search(r"\b\d+ passed\b", tested.stdout) and " failed" not in tested.stdout, tested.stdout[-2000:]
