"""Every command in README.md runs as written from the top of a fresh clone (issue 9, item 15).

Commands are the lines of the README's ```sh blocks (``\\`` continuations joined, comments skipped)
and the ``$ `` lines of its ```console blocks; each is one test, named by its README text. Every
``yatzy-harness`` command is parsed by the real parser and the files it names must be shipped, be
a ```toml block shown earlier in the README (``# NAME.toml`` on its first line), or, under
``results/``, be written by an earlier README command. Then it is run for real with the installed
``yatzy-harness`` in a scratch directory holding ``configs/`` (a symlink) and a fresh solver cache,
except:

* commands that play more games than a test run can afford (:data:`GAME_LIMITS`) play
  :data:`GAME_LIMITS`'s smaller count instead -- the only change ever made to a README command;
* commands that need a Dask cluster (``--scheduler``) or resume its run are parsed only;
* other tools' commands (``pip``, ``pytest``, ``dask``) are checked, not run (see :func:`_check_other`).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: subcommand -> (largest --games run as written, --games played above it): the README's runs,
#: comparisons and calibrations exercise every code path at a size CI affords (a calibration's cost
#: is mostly its evaluations' fixed cost; the winprob run is the one above 5,000 games it lowers).
GAME_LIMITS: dict[str, tuple[int, int]] = {"run": (5_000, 2_000), "compare": (20_000, 2_000),
                                          "calibrate": (150, 150)}
#: A README command that runs away fails instead of hanging CI.
TIMEOUT_S = 600  # far above any command idle (the slowest ~35 s), not hit by a loaded machine

#: The commands share one scratch directory and run in README order (a later one reads an earlier
#: one's results/): with pytest-xdist, one worker runs them all.
pytestmark = pytest.mark.xdist_group("readme")


@dataclass(frozen=True)
class Command:
    text: str                     # as in the README, continuations joined
    line: int                     # 1-based line in README.md
    parts: tuple[tuple[str, ...], ...]  # argv of each `&&`-joined part


def _split(text: str, line: int) -> tuple[tuple[str, ...], ...]:
    tokens = shlex.split(text, comments=True)
    parts: list[tuple[str, ...]] = [()]
    for t in tokens:
        if t == "&&":
            parts.append(())
        else:
            parts[-1] += (t,)
    if any(not p for p in parts) or any(t in ("|", ";", "||", ">") for p in parts for t in p):
        raise AssertionError(f"README.md:{line}: cannot split {text!r} into commands")
    return tuple(parts)


def parse_readme(text: str) -> tuple[list[Command], dict[str, tuple[int, str]]]:
    """The README's commands, and the files it shows: name -> (line, content) of each ```toml
    block whose first line is ``# NAME.toml``."""
    commands: list[Command] = []
    files: dict[str, tuple[int, str]] = {}
    lang: str | None = None
    block: list[str] = []
    start = 0
    pending: list[str] = []
    for no, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("```"):
            if lang is None:
                lang, block, start = raw[3:].strip(), [], no
            else:
                if lang == "toml" and block and (m := re.fullmatch(r"#\s*(\S+\.toml)\s*", block[0])):
                    files[m.group(1)] = (start, "\n".join(block) + "\n")
                lang = None
            continue
        if lang is None:
            continue
        block.append(raw)
        if lang == "sh":
            line = raw.strip()
            if not pending and (not line or line.startswith("#")):
                continue
        elif lang == "console":
            if pending:
                line = raw.strip()
            elif raw.startswith("$ "):
                line = raw[2:].strip()
            else:
                continue  # output
        else:
            continue
        if line.endswith("\\"):
            pending.append(line[:-1].strip())
            continue
        full = " ".join([*pending, line])
        first = no - len(pending)
        pending = []
        commands.append(Command(full, first, _split(full, first)))
    return commands, files


COMMANDS, SHOWN_FILES = parse_readme(README.read_text(encoding="utf-8"))


#: The options whose value is a path a command writes (``--review``: the review pages of analyse and replay;
#: ``--plot``: fit's population picture).
OUTPUT_FLAGS = ("--out", "--review", "--plot")


def _out_dirs() -> dict[str, Command]:
    """results/... directory -> the first README command that writes it (``--out``, ``--review``)."""
    outs: dict[str, Command] = {}
    for c in COMMANDS:
        for argv in c.parts:
            for flag, value in zip(argv, argv[1:]):
                if flag in OUTPUT_FLAGS:
                    outs.setdefault(value.rstrip("/"), c)
    return outs


OUT_DIRS = _out_dirs()


# ---------------------------------------------------------------------------------------------
# the scratch directory a reader would run in


class Workspace:
    """A directory with ``configs/`` and the README's own files, where commands run once each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        (root / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
        for name, (_, content) in SHOWN_FILES.items():  # whatever the clone holds under that name
            (root / name).write_text(content, encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if k != "YATZY_HARNESS_CONFIGS"}
        self.env["YATZY_HARNESS_CACHE"] = str(root / ".solver-cache")
        script = Path(sys.executable).with_name("yatzy-harness")
        exe = str(script) if script.exists() else shutil.which("yatzy-harness")
        assert exe, "the yatzy-harness script is not installed (pip install -e .)"
        self.exe = exe
        self.done: dict[tuple[str, ...], subprocess.CompletedProcess[str] | str] = {}

    def play(self, argv: tuple[str, ...], what: Command) -> subprocess.CompletedProcess[str]:
        """Run a yatzy-harness command (once per distinct argv); fail with its stderr."""
        if argv not in self.done:
            for path in _inputs(argv):
                if path in OUT_DIRS and not (self.root / path).exists():
                    producer = OUT_DIRS[path]
                    for part in (p for p in producer.parts if p[0] == "yatzy-harness"):
                        try:
                            self.play(_as_played(part), producer)
                        except AssertionError as exc:
                            raise AssertionError(f"{path} is written by README.md:{producer.line}, "
                                                 f"which failed:\n{exc}") from None
            try:
                self.done[argv] = subprocess.run([self.exe, *argv[1:]], cwd=self.root, env=self.env,
                                                 capture_output=True, text=True, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.done[argv] = f"did not finish in {TIMEOUT_S} s"
        res = self.done[argv]
        shown = shlex.join(argv)
        if isinstance(res, str):
            raise AssertionError(f"README.md:{what.line}: {shown}\n{res}")
        if not _succeeded(argv, res):
            raise AssertionError(f"README.md:{what.line}: {shown}\nexit {res.returncode}\n"
                                 f"stderr:\n{res.stderr[-3000:]}\nstdout (end):\n{res.stdout[-1500:]}")
        return res


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("readme"))


def _succeeded(argv: tuple[str, ...], res: subprocess.CompletedProcess[str]) -> bool:
    if res.returncode == 0:
        return True
    if argv[1] == "compare":  # 1 = a change, 2 = inconclusive (a usage error also exits 2, without a verdict)
        return res.returncode == 1 or (res.returncode == 2 and "verdict: INCONCLUSIVE" in res.stdout)
    return False


def _inputs(argv: tuple[str, ...]) -> list[str]:
    """The results/... paths a command reads (every one but the value of an :data:`OUTPUT_FLAGS` option)."""
    return [t.rstrip("/") for prev, t in zip(("",) + argv, argv)
            if t.startswith("results/") and prev not in OUTPUT_FLAGS]


def _as_played(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The command as this test plays it: the README's, with --games lowered above GAME_LIMITS."""
    if len(argv) < 2 or argv[1] not in GAME_LIMITS or "--games" not in argv:
        return argv
    limit, small = GAME_LIMITS[argv[1]]
    i = argv.index("--games") + 1
    if int(argv[i]) <= limit:
        return argv
    return argv[:i] + (str(small),) + argv[i + 1:]


# ---------------------------------------------------------------------------------------------
# static checks


def _parse(argv: tuple[str, ...], c: Command, capsys: pytest.CaptureFixture[str]) -> argparse.Namespace | None:
    try:
        return build_parser().parse_args(list(argv[1:]))
    except UserError as exc:
        raise AssertionError(f"README.md:{c.line}: {shlex.join(argv)}\ndoes not parse: {exc}") from None
    except SystemExit as exc:  # --version, --help: argparse prints and exits
        assert exc.code == 0, f"README.md:{c.line}: {shlex.join(argv)} exited {exc.code}"
        assert capsys.readouterr().out.strip(), f"README.md:{c.line}: {shlex.join(argv)} printed nothing"
        return None


def _check_names(argv: tuple[str, ...], c: Command, ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file, run directory, rule set and run config the command names exists for a reader."""
    from harness.rules import load_rules
    from harness.runconfig import resolve_config_path

    where = f"README.md:{c.line}: {shlex.join(argv)}\n"
    for t in argv[2:]:
        if t.endswith(".toml") and not (ROOT / t).exists():
            assert t in SHOWN_FILES, where + f"names {t}, which is neither shipped nor shown in the README"
            assert SHOWN_FILES[t][0] < c.line, where + f"{t} is shown only after it is used (line {SHOWN_FILES[t][0]})"
        elif t.startswith(("configs/", "benchmarks/")):
            assert (ROOT / t).exists(), where + f"names {t}, which is not shipped"
    for path in _inputs(argv):
        assert path in OUT_DIRS and OUT_DIRS[path].line < c.line, \
            where + f"reads {path}, which no earlier README command writes (--out {path})"
    if "--version" in argv:
        return
    ns = build_parser().parse_args(list(argv[1:]))
    monkeypatch.chdir(ws.root)  # names resolve from where the reader runs the command
    try:
        configs = [ns.config] if ns.command == "run" else [ns.base, ns.candidate] if ns.command == "compare" else []
        for name in configs:
            if name and not name.startswith("results/"):
                resolve_config_path(name)
        rules = getattr(ns, "rules", None)
        if rules:
            load_rules(rules, getattr(ns, "settings", None) or None)
    except UserError as exc:
        raise AssertionError(where + str(exc)) from None


def _check_other(argv: tuple[str, ...], c: Command) -> None:
    """Commands of other tools: what they name must be there; none is run."""
    where = f"README.md:{c.line}: {shlex.join(argv)}\n"
    if argv[:3] == ("pip", "install", "-e"):
        assert len(argv) == 4, where + "expected pip install -e TARGET"
        m = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", argv[3])
        assert m, where + f"installs {argv[3]!r}, not this checkout"
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
        for extra in (m.group(1) or "").split(","):
            assert not extra or extra in extras, where + f"pyproject.toml has no extra {extra!r}"
    elif argv[:3] == ("python", "-m", "pytest"):
        # running the suite from inside the suite would recurse; .ci/run is where it runs
        ci = (ROOT / ".ci" / "run").read_text()
        assert shlex.join(argv) in ci, where + ".ci/run does not run this command"
    elif argv[0] == "dask":
        from importlib.metadata import entry_points

        (ep,) = [e for e in entry_points(group="dask_cli") if e.name == argv[1]] or [None]
        assert ep is not None, where + f"dask has no subcommand {argv[1]!r} (pip install -e '.[dask]')"
        import click

        try:
            ep.load().make_context(f"dask {argv[1]}", list(argv[2:]))
        except click.ClickException as exc:
            raise AssertionError(where + exc.format_message()) from None
    else:
        raise AssertionError(where + "test_readme.py does not know how to check this command; teach it")


# ---------------------------------------------------------------------------------------------


def test_readme_has_commands() -> None:
    assert len(COMMANDS) >= 20 and any(c.parts[0][0] == "yatzy-harness" for c in COMMANDS)
    assert "../shared" not in README.read_text(encoding="utf-8")  # a clone has only this repository


@pytest.mark.parametrize("command", COMMANDS, ids=[" && ".join(map(shlex.join, c.parts)) for c in COMMANDS])
def test_readme_command(command: Command, workspace: Workspace, capsys: pytest.CaptureFixture[str],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    for argv in command.parts:
        if argv[0] != "yatzy-harness":
            _check_other(argv, command)
            continue
        _parse(argv, command, capsys)
        _check_names(argv, command, workspace, monkeypatch)
        if "--scheduler" in argv or "--resume" in argv:
            continue  # needs a Dask cluster, or the run one played on it
        workspace.play(_as_played(argv), command)


def test_a_file_the_user_keeps_in_the_clone_does_not_change_the_readme_run(tmp_path, monkeypatch) -> None:
    """The README says to save my_house.toml where the commands run: a user who does so at the
    top of the clone must still see the README's own file in the commands' directory."""
    clone = tmp_path / "clone"
    (clone / "configs").mkdir(parents=True)
    (clone / "my_house.toml").write_text('extends = "standard"\nname = "theirs"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", clone)
    ws = Workspace(tmp_path / "ws")
    assert "my_house.toml" in SHOWN_FILES
    assert (ws.root / "my_house.toml").read_text() == SHOWN_FILES["my_house.toml"][1]


def test_every_test_runs_in_a_directory_of_its_own() -> None:
    assert Path.cwd().resolve() != ROOT and not any(Path.cwd().iterdir())
