"""Every example of README.md and of the manual (docs/) runs as written from the top of a fresh clone
(issue 9, item 15; issue 37).

The pages are README.md and then the manual's pages in the order of mkdocs.yml's nav. Their
examples are the ```sh, ```console and ```python blocks. Each such block is marked, on the line just
before it, with its mode, and a block without one fails :func:`test_every_example_block_has_a_mode`:

* ``<!-- example: full -->``: run as written; every ``$ `` command's output shown under it is
  compared with what the command prints (:func:`shown_output_matches`: a ``...`` line stands for
  lines left out, a line ending in ``...`` for the rest of that line, and only what cannot be stable is normalised, :data:`NORMALISE`;
  numbers are compared by value, by the reproducibility contract: :data:`PRINTED_REL`);
* ``<!-- example: reduced -->``: run with fewer games (:data:`GAME_LIMITS` for commands,
  :data:`PY_SCALE` for a python block's large literals), the only change ever made to an example;
  its shown output is the full-size one, written by ``python docs/examples.py regenerate``;
* ``<!-- example: parse-only -->``: parsed and its names checked, not run; each such block is in
  :data:`PARSE_ONLY` with the reason, and the list is printed at the end of the session.

Commands are the lines of ```sh blocks (``\\`` continuations joined, comments skipped) and the
``$ `` lines of ```console blocks; each is one test, named by its text. Every ``yatzy-harness``
command is parsed by the real parser and the files it names must be shipped, be a ```toml block
shown earlier (``# NAME.toml`` on its first line), or, under ``results/``, be written by an earlier
command. Commands run with this checkout's code (``python -m harness.cli`` with the checkout on
``PYTHONPATH``) in a scratch directory holding ``configs/``, ``examples/`` and ``tests/`` (symlinks)
and a fresh solver cache.
Other tools' commands (``pip``, ``pytest``, ``dask``, ``mkdocs``) are checked, not run
(:func:`_check_other`). A python block runs in this process in the same scratch directory.
"""

from __future__ import annotations

import argparse
import contextlib
import io
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
from harness.util.errors import UserError
from tests.tolerance import text_agrees, widths_differ

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

#: subcommand -> (largest --games run as written, --games played above it): the examples' runs,
#: comparisons and calibrations exercise every code path at a size CI affords (a calibration's cost
#: is mostly its evaluations' fixed cost; the winprob run is the one above 5,000 games it lowers).
GAME_LIMITS: dict[str, tuple[int, int]] = {"run": (5_000, 2_000), "compare": (20_000, 2_000), "calibrate": (150, 150)}
#: The port the pages' ``serve`` and ``curl`` examples use; the test serves on a free port instead
#: and reads the pages' commands and output with that port in place of this one.
SERVE_PORT = 8765
SERVE_PORT_OPTION = f"--port {SERVE_PORT}"
#: A python block marked ``reduced`` runs with every integer literal of 10,000 or more that is
#: written with ``_`` (``games=20_000``) divided by this.
PY_SCALE = 50
#: An example that runs away fails instead of hanging CI.
TIMEOUT_S = 600  # far above any command idle (the slowest ~35 s), not hit by a loaded machine

#: What may differ between two runs of the same command, and so is normalised before the shown
#: output is compared with the real one: wall times, speeds, dates and the names of temporary
#: directories. Nothing else.
NORMALISE: tuple[tuple[str, str], ...] = (
    (r"\b\d[\d,]*(?:\.\d+)? ?(?:s|ms|µs|us|min)\b", "<time>"),  # 12.4 s, 3 ms
    (r"\b\d[\d,]*(?:\.\d+)? games/s\b", "<speed>"),  # 8,087 games/s
    (r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?", "<date>"),
    (r"\b\d{8}-\d{6}\b", "<date>"),  # results/quick-20260101-120000
    (r"/tmp/[\w./-]+", "<tmp>"),  # pytest's and tempfile's directories
    (r"\bcached\b", "<time>"),  # a time column says `cached` for what an earlier example computed
)

#: After :data:`NORMALISE`, a shown line and a printed one are compared number by number (the
#: reproducibility contract, docs/scale.md: tests/tolerance.py): the text between the numbers and
#: the integers exactly, a float by value within this relative tolerance, so the last bits of a
#: figure computed on another processor do not fail an example. It is tighter than a search's
#: tolerance (a calibrated value's): a search that took other steps on another machine fails here,
#: to be looked at. Where a number is printed wider or narrower than shown, its table column's
#: padding moves on every row: the shown block's runs of spaces are then compared as one space.
PRINTED_REL = 1e-9

#: The examples share one scratch directory and run in reading order (a later one reads an earlier
#: one's results/): with pytest-xdist, one worker runs them all.
pytestmark = pytest.mark.xdist_group("readme")

#: The blocks that are parsed but not run, keyed by their first command (a python block: its first
#: line), with the reason. It must list exactly the blocks marked ``parse-only``.
PARSE_ONLY: dict[str, str] = {
    "pip install -e . && yatzy-harness run": "installs the package (CI's own first step, .ci/run); the quick run is played by the README's test",
    'pip install -e ".[test]" && python -m pytest -q': "installs the package and runs the whole suite, which is this test's caller (.ci/run runs it)",
    'pip install -e ".[docs]" && mkdocs build --strict': "installs the package; the build itself is tests/test_docs.py",
    'pip install -e ".[serve]"': "installs the package",
    "python docs/examples.py regenerate docs/serving.md": "rewrites the pages it names (the test would edit the clone)",
    "dask scheduler --port 8786": "needs a Dask cluster of several machines (tests/test_runner.py plays the dask backend in process)",
    "yatzy-harness sweep forced --set forced_bonus_threshold=36..48:3 --entrants timeout,solver:temperature=2,solver "
    "--depth --backend dask --workers 3": "the block's other commands need a cluster of several machines and hours of CPU; tests/test_cluster.py runs "
    "sweeps with depth on LocalClusters of 2 and 3 workers",
    "yatzy-harness evaluate scandinavian --entrants solver:target=250 --backend dask --scheduler tcp://SCHEDULER:8786 "
    "--cache-dir /shared/cache": "needs a Dask cluster of several machines and ~160 CPU-s; tests/test_cluster.py splits target play over "
    "LocalClusters of 2 and 3 workers",
    "yatzy-harness run --resume results/big-round-robin": "resumes the Dask cluster's run of the block before",
    "from harness.records.record import read_records, records_of_run, write_records_parquet, format_game, parse_turn": "a sketch over the reader's own games.jsonl (tests/test_record.py calls each of these)",
    "yatzy-harness compare --exact bonus63 bonus62 --entrants greedy,solver": "10-12 min of wall time from an empty cache (two solves, four exact evaluations on scandinavian); "
    "tests/test_exact.py checks the same command on tiny rule sets to the last digit",
    "yatzy-harness compare --exact results/bonus63 results/bonus62": "the exact evaluations of the block before (minutes of CPU); tests/test_exact.py checks the sampled-vs-exact lines",
    "yatzy-harness evaluate scandinavian --entrants random,timeout,greedy,bonus,solver": "about 100 s of CPU and 1.5 GiB (the generala block before it runs the same code for real)",
    "yatzy-harness report results/bonus63 --exact --no-plots --out results/rep63": "needs scandinavian's exact evaluations (minutes of CPU); tests/test_exact.py checks report --exact",
    "yatzy-harness evaluate scandinavian --depth --rates 0.75": "hours of CPU (dozens of softmax evaluations on 1.4 million states); the forced block before runs the same code",
    "yatzy-harness sweep scandinavian --set upper_bonus_threshold=55..70 --entrants greedy,solver:temperature=1,solver --out results/sweep-threshold": "16 rule sets x 3 exact evaluations on scandinavian (hours of CPU); tests/test_sweep.py sweeps tiny rule sets",
    "yatzy-harness sweep forced --set forced_bonus_threshold=36..48:3 --entrants timeout,solver:temperature=2,solver --depth": "a depth-of-skill chain at each of 5 values (many minutes of CPU); tests/test_sweep.py checks sweep --depth",
    '"""A yatzy-harness plugin: one bot, found through the ``yatzy_harness.strategies`` entry point."""': "a file of the plugin package in examples/plugin/, which tests/test_plugin_kit.py builds, installs and tests",
    '"""The most-common bot: keeps the most common face, then writes the box that scores most."""': "a file of the plugin package in examples/plugin/, which tests/test_plugin_kit.py builds, installs and tests",
    '"""The harness\'s contract for every bot, run on this plugin\'s bot as installed (through its entry point)."""': "a file of the plugin package in examples/plugin/, which tests/test_plugin_kit.py builds, installs and tests",
    "yatzy-harness serve --levels results/levels-exact/levels.json --host 0.0.0.0 --token-file token.txt --workers 2": "binds every interface and needs a token file of the reader's; tests/test_serve.py checks the token",
    "yatzy-harness serve --levels results/levels-exact/levels.json --bot solver --host 0.0.0.0 --token-file "
    "/etc/yatzy/tokens --access-log --trusted-proxy 127.0.0.1": "binds every interface and needs the reader's token file; tests/test_serve_production.py starts servers "
    "with tokens, an access log and a trusted proxy",
    "yatzy-harness run --seats greedy,random --games 1000000 --chunk-size 500000 --workers 2 --seed 7 --out results/long": "a Ctrl-C in the middle of a million-game run; tests/test_chaos.py interrupts runs at random points and "
    "resumes them to the same bytes",
    "yatzy-harness run --seats greedy,random --scheduler not-an-address": "needs an HTTP server and a closed port of the reader's; tests/test_chaos.py checks each kind of address",
    "yatzy-harness run --seats 'engine:cmd=\"python tests/engines/misbehave.py illegal 0\",name=sloppy,min_games=5,greedy' "
    "--games 40 --chunk-size 10 --workers 1 --quiet --out results/dq": "stops with exit status 1 by design; tests/test_chaos.py disqualifies the same engine and resumes the run",
    "yatzy-harness engine play --levels results/levels-exact/levels.json --level casual": "waits for protocol messages on stdin; tests/test_serve.py plays it through engine check",
    "yatzy-harness export solver --rules scandinavian --out results/level-solver": "a solve and two exact evaluations of 1.4 million states (about a minute of CPU from an empty cache); "
    "the forced block before runs the same code, and tests/test_export.py exports scandinavian",
}


#: The pages in reading order: README.md, then the manual's nav.
def _pages() -> list[Path]:
    nav = re.findall(r":\s*([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), flags=re.M)
    return [README, *(ROOT / "docs" / p for p in nav)]


PAGES = _pages()
MODES = ("full", "reduced", "parse-only")
MODE_RE = re.compile(r"<!--\s*example:\s*([\w-]+)\s*-->")
OUTPUT_RE = re.compile(r"<!--\s*output\s*-->")
EXAMPLE_LANGS = ("sh", "console", "python")


@dataclass(frozen=True)
class Block:
    """A fenced example block of a page."""

    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    mode: str | None
    body: tuple[str, ...]
    output_line: int | None = None  # a python block's ``<!-- output -->`` block (its fence line)
    output: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def key(self) -> str:
        """The block's name in :data:`PARSE_ONLY`: its first command, or a python block's first line."""
        if self.lang == "python":
            return self.body[0].strip()
        cmds = commands_of(self)
        return re.sub(r"\s+#.*$", "", cmds[0].text) if cmds else ""


@dataclass(frozen=True)
class Command:
    text: str  # as in the page, continuations joined
    page: Path
    line: int  # 1-based line in the page
    parts: tuple[tuple[str, ...], ...]  # argv of each `&&`-joined part
    mode: str | None = None
    shown: tuple[str, ...] = ()  # the output shown under a console command
    shown_line: int = 0  # the first line of that output

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def pos(self) -> tuple[int, int]:
        return (PAGES.index(self.page), self.line)


def _split(text: str, where: str) -> tuple[tuple[str, ...], ...]:
    tokens = shlex.split(text, comments=True)
    parts: list[tuple[str, ...]] = [()]
    for t in tokens:
        if t == "&&":
            parts.append(())
        else:
            parts[-1] += (t,)
    if any(not p for p in parts) or any(t in ("|", ";", "||", ">") for p in parts for t in p):
        raise AssertionError(f"{where}: cannot split {text!r} into commands")
    return tuple(parts)


def parse_blocks(page: Path, text: str | None = None) -> tuple[list[Block], dict[str, tuple[int, str]], list[str]]:
    """A page's fenced blocks with their mode, the files it shows (name -> (line, content) of each
    ```toml block whose first line is ``# NAME.toml``), and the problems found (a console block
    without its language, an unknown mode, an output block with no python block before it)."""
    text = page.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines()
    blocks: list[Block] = []
    files: dict[str, tuple[int, str]] = {}
    problems: list[str] = []
    where = page.relative_to(ROOT)
    i = 0
    while i < len(lines):
        raw = lines[i]
        if not raw.startswith("```"):
            i += 1
            continue
        lang, start = raw[3:].strip(), i + 1
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = tuple(lines[i + 1 : j])
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = lines[k].strip() if k >= 0 else ""
        m = MODE_RE.fullmatch(marker)
        # a file of the reader's (a bare name); a shipped one shown by its path is not written
        if lang == "toml" and body and (f := re.fullmatch(r"#\s*([^\s/]+\.toml)\s*", body[0])):
            files[f.group(1)] = (start, "\n".join(body) + "\n")
        if lang in EXAMPLE_LANGS:
            mode = m.group(1) if m else None
            if mode is not None and mode not in MODES:
                problems.append(f"{where}:{start}: unknown example mode {mode!r} (one of {', '.join(MODES)})")
            blocks.append(Block(page, start, lang, mode, body))
        elif OUTPUT_RE.fullmatch(marker):
            if not blocks or blocks[-1].lang != "python" or blocks[-1].output_line is not None:
                problems.append(f"{where}:{start}: an <!-- output --> block follows no python block")
            else:
                blocks[-1] = Block(**{**blocks[-1].__dict__, "output_line": start, "output": body})
        elif m:
            problems.append(f"{where}:{start}: an example mark on a ```{lang} block (only {', '.join(EXAMPLE_LANGS)})")
        elif any(b.startswith("$ ") for b in body[:1]) or lang in ("bash", "shell", "shell-session", "pycon"):
            problems.append(
                f"{where}:{start}: commands in a ```{lang} block: write it as ```console or ```sh, with its mode"
            )
        i = j + 1
    return blocks, files, problems


def commands_of(block: Block) -> list[Command]:
    """The commands of a sh or console block, each with the output shown under it."""
    out: list[Command] = []
    pending: list[str] = []
    for n, raw in enumerate(block.body):
        no = block.line + 1 + n
        if block.lang == "sh":
            line = raw.strip()
            if not pending and (not line or line.startswith("#")):
                continue
        elif block.lang == "console":
            if pending:
                line = raw.strip()
            elif raw.startswith("$ "):
                line = raw[2:].strip()
            else:
                if out and not pending:
                    c = out[-1]
                    out[-1] = Command(c.text, c.page, c.line, c.parts, c.mode, (*c.shown, raw), c.shown_line or no)
                continue
        else:
            return []
        if line.endswith("\\"):
            pending.append(line[:-1].strip())
            continue
        full = " ".join([*pending, line])
        first = no - len(pending)
        pending = []
        where = f"{block.page.relative_to(ROOT)}:{first}"
        out.append(Command(full, block.page, first, _split(full, where), block.mode))
    return out


def _collect() -> tuple[list[Block], dict[str, tuple[Path, int, str]], list[str]]:
    blocks: list[Block] = []
    files: dict[str, tuple[Path, int, str]] = {}
    problems: list[str] = []
    for page in PAGES:
        if not page.is_file():
            problems.append(f"mkdocs.yml names {page.relative_to(ROOT)}, which is not there")
            continue
        b, f, p = parse_blocks(page)
        blocks += b
        problems += p
        for name, (line, content) in f.items():
            files.setdefault(name, (page, line, content))
    return blocks, files, problems


BLOCKS, SHOWN_FILES, PROBLEMS = _collect()
#: Every example in reading order: a Command of a sh/console block, or a python Block.
EXAMPLES: list[Command | Block] = [x for b in BLOCKS for x in (commands_of(b) if b.lang != "python" else [b])]
COMMANDS: list[Command] = [x for x in EXAMPLES if isinstance(x, Command)]


def _pos(page: Path, line: int) -> tuple[int, int]:
    return (PAGES.index(page), line)


#: The options whose value is a path a command writes (``--review``: the review pages of analyse and replay;
#: ``--plot``: fit's population picture).
OUTPUT_FLAGS = ("--out", "--review", "--plot")


def _out_dirs() -> dict[str, Command]:
    """results/... directory -> the first command that writes it (``--out``, ``--review``)."""
    outs: dict[str, Command] = {}
    for c in COMMANDS:
        for argv in c.parts:
            for flag, value in zip(argv, argv[1:]):
                if flag in OUTPUT_FLAGS:
                    outs.setdefault(value.rstrip("/"), c)
    return outs


OUT_DIRS = _out_dirs()


def _producer(path: str) -> Command | None:
    """The command that writes ``path``: its --out, or a directory above it."""
    p = Path(path)
    for q in (p, *p.parents):
        if str(q) in OUT_DIRS:
            return OUT_DIRS[str(q)]
    return None


# ---------------------------------------------------------------------------------------------
# the scratch directory a reader would run in


def harness_argv(argv: tuple[str, ...]) -> list[str]:
    """How a ``yatzy-harness ...`` command is run: this checkout's code, not an installed copy."""
    return [sys.executable, "-m", "harness.cli", *argv[1:]]


class Workspace:
    """A directory with ``configs/``, ``examples/`` and ``tests/`` (symlinks: what a clone has) and the
    pages' own files, where commands run once each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        # what the pages name of a clone besides configs/: the example engines and the test engines
        for shipped in ("configs", "examples", "tests"):
            (root / shipped).symlink_to(ROOT / shipped, target_is_directory=True)
        for name, (_, _, content) in SHOWN_FILES.items():  # whatever the clone holds under that name
            (root / name).write_text(content, encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items() if k != "YATZY_HARNESS_CONFIGS"}
        self.env["YATZY_HARNESS_CACHE"] = str(root / ".solver-cache")
        self.env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
        self.done: dict[tuple[str, ...], subprocess.CompletedProcess[str] | str] = {}
        self.full_size = False  # docs/examples.py regenerate: every command as written
        self.server: subprocess.Popen[str] | None = None
        self.served_port = _free_port()

    def as_played(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        return argv if self.full_size else _as_played(argv)

    def play(self, argv: tuple[str, ...], what: Command) -> subprocess.CompletedProcess[str]:
        """Run a yatzy-harness command (once per distinct argv); fail with its stderr."""
        if argv not in self.done:
            for path in _inputs(argv):
                producer = _producer(path)
                if producer is not None and not (self.root / path).exists():
                    for part in (p for p in producer.parts if p[0] == "yatzy-harness"):
                        try:
                            self.play(self.as_played(part), producer)
                        except AssertionError as exc:
                            raise AssertionError(
                                f"{path} is written by {producer.where}, which failed:\n{exc}"
                            ) from None
            try:
                self.done[argv] = subprocess.run(
                    harness_argv(argv), cwd=self.root, env=self.env, capture_output=True, text=True, timeout=TIMEOUT_S
                )
            except subprocess.TimeoutExpired:
                self.done[argv] = f"did not finish in {TIMEOUT_S} s"
        res = self.done[argv]
        shown = shlex.join(argv)
        if isinstance(res, str):
            raise AssertionError(f"{what.where}: {shown}\n{res}")
        if not _succeeded(argv, res):
            raise AssertionError(
                f"{what.where}: {shown}\nexit {res.returncode}\n"
                f"stderr:\n{res.stderr[-3000:]}\nstdout (end):\n{res.stdout[-1500:]}"
            )
        return res

    def port(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        """``argv`` with the pages' port (:data:`SERVE_PORT`) replaced by the free one this test serves on."""
        return tuple(a.replace(str(SERVE_PORT), str(self.served_port)) for a in argv)

    def serve(self, argv: tuple[str, ...], what: Command) -> str:
        """Start ``yatzy-harness serve`` in the background (once), wait until /ready answers;
        what it printed by then."""
        import time
        import urllib.request

        if self.server is None:
            assert SERVE_PORT_OPTION in " ".join(argv), (
                f"{what.where}: serve the pages' examples on --port {SERVE_PORT}"
            )
            log = self.root / "serve.log"
            self.server = subprocess.Popen(
                harness_argv(self.port(argv)),
                cwd=self.root,
                env=self.env,
                stdout=log.open("w"),
                stderr=subprocess.STDOUT,
                text=True,
            )
            deadline = time.monotonic() + 300
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{self.served_port}/ready", timeout=5) as r:
                        if r.status == 200:
                            break
                except (OSError, ValueError):
                    pass
                if self.server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"{what.where}: the server did not start:\n{log.read_text()[-3000:]}")
                time.sleep(0.3)
        return (self.root / "serve.log").read_text()

    def curl(self, argv: tuple[str, ...], what: Command) -> str:
        """A ``curl`` command against the served port: the real curl when there is one, else the
        same request made here (``-s``, ``-X``, ``-H``, ``-d`` and the URL are all the pages use)."""
        argv = self.port(argv)
        exe = shutil.which("curl")
        if exe:
            res = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=60)
            assert res.returncode == 0, f"{what.where}: curl exited {res.returncode}: {res.stderr}"
            return res.stdout
        import urllib.error
        import urllib.request

        method, headers, data, url = None, {}, None, None
        it = iter(argv[1:])
        for a in it:
            if a == "-s":
                continue
            if a == "-X":
                method = next(it)
            elif a == "-H":
                k, v = next(it).split(":", 1)
                headers[k.strip()] = v.strip()
            elif a == "-d":
                data = next(it).encode()
            else:
                url = a
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.read().decode()
        except urllib.error.HTTPError as exc:  # curl -s prints an error's body too
            return exc.read().decode()

    def close(self) -> None:
        if self.server is not None:
            self.server.terminate()
            try:
                self.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.server.kill()

    def run_python(self, block: Block) -> str:
        """Run a python block here (reduced: :func:`reduce_python`), in this directory; its stdout."""
        code = "\n".join(block.body) + "\n"
        if block.mode == "reduced" and not self.full_size:
            code = reduce_python(code)
        out = io.StringIO()
        old_cwd, old_env = Path.cwd(), dict(os.environ)
        os.environ["YATZY_HARNESS_CACHE"] = self.env["YATZY_HARNESS_CACHE"]
        try:
            os.chdir(self.root)
            with contextlib.redirect_stdout(out):
                exec(compile(code, block.where, "exec"), {"__name__": "__main__"})
        finally:
            os.chdir(old_cwd)
            os.environ.clear()
            os.environ.update(old_env)
        return out.getvalue()


def reduce_python(code: str) -> str:
    """A python block at the reduced size: every ``_``-grouped integer literal of 10,000 or more
    divided by :data:`PY_SCALE`."""

    def smaller(m: re.Match[str]) -> str:
        value = int(m.group(0).replace("_", ""))
        return f"{value // PY_SCALE:_}" if value >= 10_000 else m.group(0)

    return re.sub(r"(?<![\w.])\d{1,3}(?:_\d{3})+(?![\w.])", smaller, code)


def _free_port() -> int:
    """The pages' own port when it is free, else the next free one of four digits (a table's
    column width follows the length of an engine's URL)."""
    import socket

    for port in range(SERVE_PORT, 10_000):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port from {SERVE_PORT} to 9999")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory):
    ws = Workspace(tmp_path_factory.mktemp("readme"))
    yield ws
    ws.close()


def _succeeded(argv: tuple[str, ...], res: subprocess.CompletedProcess[str]) -> bool:
    if res.returncode == 0:
        return True
    if argv[1] == "compare":  # 1 = a change, 2 = inconclusive (a usage error also exits 2, without a verdict)
        return res.returncode == 1 or (res.returncode == 2 and "verdict: INCONCLUSIVE" in res.stdout)
    if argv[1:3] == ("engine", "check"):  # 1 = a check failed, which a page may show on purpose
        return res.returncode == 1 and " FAIL " in res.stdout
    return False


def _inputs(argv: tuple[str, ...]) -> list[str]:
    """The results/... paths a command reads (every one but the value of an :data:`OUTPUT_FLAGS` option)."""
    return [
        t.rstrip("/") for prev, t in zip(("",) + argv, argv) if t.startswith("results/") and prev not in OUTPUT_FLAGS
    ]


def _as_played(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The command as this test plays it: as written, with --games lowered above GAME_LIMITS."""
    if len(argv) < 2 or argv[1] not in GAME_LIMITS or "--games" not in argv:
        return argv
    limit, small = GAME_LIMITS[argv[1]]
    i = argv.index("--games") + 1
    if int(argv[i]) <= limit:
        return argv
    return argv[:i] + (str(small),) + argv[i + 1 :]


def _lowered(c: Command, seen: set[int] | None = None) -> bool:
    """Whether the test plays ``c`` smaller than written, or reads what such a command wrote."""
    seen = set() if seen is None else seen
    if id(c) in seen:
        return False
    seen.add(id(c))
    for argv in c.parts:
        if argv[0] != "yatzy-harness":
            continue
        if _as_played(argv) != argv:
            return True
        if any((q := _producer(p)) is not None and _lowered(q, seen) for p in _inputs(argv)):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# comparing shown output with the real one


def normalise(line: str) -> str:
    for pattern, repl in NORMALISE:
        line = re.sub(pattern, repl, line)
    return line.rstrip()


def _segments(shown: tuple[str, ...]) -> list[list[str]]:
    """The shown output cut at its ``...`` lines (lines left out), blank edges dropped."""
    segs: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == "...":
            segs.append([])
        else:
            segs[-1].append(line)
    out = []
    for s in segs:
        while s and not s[0].strip():
            s = s[1:]
        while s and not s[-1].strip():
            s = s[:-1]
        if s:
            out.append(s)
    return out


def _same(want: str, have: str, loose_padding: bool = False) -> bool:
    """A shown line (normalised) against a printed one: the same text and integers, floats within
    :data:`PRINTED_REL`; when the shown line ends with ``...``, its text before that starts the
    printed line."""
    if want.endswith("..."):
        return text_agrees(want[:-3].rstrip(), have, PRINTED_REL, loose_padding, prefix=True)
    return text_agrees(want, have, PRINTED_REL, loose_padding)


def lines_match(want: list[str], have: list[str]) -> bool:
    """A run of shown lines against as many printed ones (both normalised), each by :func:`_same`;
    with its runs of spaces compared as one only where a number is printed wider or narrower than
    shown (its table column's padding moves on every row of the block)."""
    if len(want) != len(have):
        return False
    if all(_same(w, h) for w, h in zip(want, have)):
        return True
    return any(widths_differ(w, h) for w, h in zip(want, have)) and all(_same(w, h, True) for w, h in zip(want, have))


def _find(seg: list[str], lines: list[str]) -> int:
    want = [normalise(x) for x in seg]
    have = [normalise(x) for x in lines]
    for i in range(len(have) - len(want) + 1):
        if lines_match(want, have[i : i + len(want)]):
            return i
    return -1


def shown_output_matches(shown: tuple[str, ...], stdout: str, stderr: str) -> str | None:
    """None when every run of shown lines (cut at ``...``) is, normalised, a run of lines of the
    command's stdout, its stderr, or one followed by the other (``playing into DIR`` on stderr,
    then the results; a table, then ``N games read`` on stderr); else what differs."""
    out, err = stdout.splitlines(), stderr.splitlines()
    streams = (out, err, err + out, out + err)
    for seg in _segments(shown):
        if not any(_find(seg, s) >= 0 for s in streams):
            import difflib

            best = max(
                streams,
                key=lambda s: max(
                    (difflib.SequenceMatcher(None, normalise(seg[0]), normalise(x)).ratio() for x in s), default=0
                ),
            )
            i = max(
                range(len(best)),
                default=0,
                key=lambda k: difflib.SequenceMatcher(None, normalise(seg[0]), normalise(best[k])).ratio(),
            )
            diff = "\n".join(
                difflib.unified_diff(
                    [normalise(x) for x in seg],
                    [normalise(x) for x in best[i : i + len(seg)]],
                    "shown",
                    "printed",
                    lineterm="",
                )
            )
            return diff or "(no output)"
    return None


# ---------------------------------------------------------------------------------------------
# static checks


def _parse(argv: tuple[str, ...], c: Command, capsys: pytest.CaptureFixture[str]) -> argparse.Namespace | None:
    try:
        return build_parser().parse_args(list(argv[1:]))
    except UserError as exc:
        raise AssertionError(f"{c.where}: {shlex.join(argv)}\ndoes not parse: {exc}") from None
    except SystemExit as exc:  # --version, --help: argparse prints and exits
        assert exc.code == 0, f"{c.where}: {shlex.join(argv)} exited {exc.code}"
        assert capsys.readouterr().out.strip(), f"{c.where}: {shlex.join(argv)} printed nothing"
        return None


def _check_names(argv: tuple[str, ...], c: Command, ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file, run directory, rule set and run config the command names exists for a reader."""
    from harness.game.rules import load_rules
    from harness.play.runconfig import resolve_config_path

    where = f"{c.where}: {shlex.join(argv)}\n"
    for t in argv[2:]:
        if t.endswith(".toml") and not (ROOT / t).exists():
            assert t in SHOWN_FILES, where + f"names {t}, which is neither shipped nor shown in the pages"
            page, line, _ = SHOWN_FILES[t]
            assert _pos(page, line) < c.pos, where + f"{t} is shown only after it is used ({page.name}:{line})"
        elif t.startswith(("configs/", "benchmarks/")):
            assert (ROOT / t).exists(), where + f"names {t}, which is not shipped"
    for path in _inputs(argv):
        producer = _producer(path)
        assert producer is not None and producer.pos < c.pos, (
            where + f"reads {path}, which no earlier command writes (--out {path})"
        )
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
        # engine and serve take a comma-separated list; sweep's --set takes ranges (KEY=LO..HI)
        for name in rules.split(",") if rules and ns.command in ("engine", "serve") else [rules] if rules else []:
            load_rules(name, None if ns.command == "sweep" else getattr(ns, "settings", None) or None)
    except UserError as exc:
        raise AssertionError(where + str(exc)) from None


def _check_other(argv: tuple[str, ...], c: Command) -> None:
    """Commands of other tools: what they name must be there; none is run."""
    where = f"{c.where}: {shlex.join(argv)}\n"
    while argv and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", argv[0]):  # VAR=VALUE before a command: its environment
        argv = argv[1:]
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
    elif argv[0] == "mkdocs":
        assert argv[1:] == ("build", "--strict"), where + "the manual's build is `mkdocs build --strict`"
        assert (ROOT / "mkdocs.yml").is_file(), where + "no mkdocs.yml"
    elif argv[:2] == ("python", "docs/examples.py"):
        assert (ROOT / "docs" / "examples.py").is_file(), where + "no docs/examples.py"
    elif argv[0] == "curl":
        assert any(re.match(r"https?://(127\.0\.0\.1|localhost)[:/]", a) for a in argv), (
            where + "curl the harness's own server, on this machine"
        )
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


def test_pages_have_examples() -> None:
    assert len(COMMANDS) >= 20 and any(c.parts[0][0] == "yatzy-harness" for c in COMMANDS)
    readme = README.read_text(encoding="utf-8")
    assert "../shared" not in readme  # a clone has only this repository
    assert any(c.page == README for c in COMMANDS)


def test_every_example_block_has_a_mode() -> None:
    problems = list(PROBLEMS)
    for b in BLOCKS:
        if b.mode is None:
            problems.append(
                f"{b.where}: a ```{b.lang} block with no mode: put <!-- example: full -->, "
                f"reduced or parse-only on the line before it"
            )
    assert not problems, "\n".join(problems)


def test_the_parse_only_list_is_the_marked_blocks() -> None:
    marked = {b.key: b for b in BLOCKS if b.mode == "parse-only"}
    unlisted = [f"{b.where}: {k}" for k, b in marked.items() if k not in PARSE_ONLY]
    stale = [k for k in PARSE_ONLY if k not in marked]
    assert not unlisted, "parse-only blocks missing from PARSE_ONLY (give the reason):\n" + "\n".join(unlisted)
    assert not stale, "PARSE_ONLY names blocks that are not marked parse-only:\n" + "\n".join(stale)


def test_each_mode_says_what_the_test_does() -> None:
    """A ``full`` block runs at the size written; a ``reduced`` one does not (else it would be full)."""
    wrong = []
    for b in BLOCKS:
        if b.mode == "full" and b.lang != "python":
            wrong += [f"{c.where}: marked full but played smaller: {c.text}" for c in commands_of(b) if _lowered(c)]
        elif b.mode == "reduced":
            smaller = (
                reduce_python("\n".join(b.body)) != "\n".join(b.body)
                if b.lang == "python"
                else any(_lowered(c) for c in commands_of(b))
            )
            if not smaller:
                wrong.append(f"{b.where}: marked reduced but runs at the size written: mark it full")
        if b.mode == "full" and b.lang == "python" and reduce_python("\n".join(b.body)) != "\n".join(b.body):
            wrong.append(f"{b.where}: a full python block with literals {PY_SCALE}x too big for CI: mark it reduced")
    assert not wrong, "\n".join(wrong)


def _example_id(x: Command | Block) -> str:
    if isinstance(x, Command):
        return " && ".join(map(shlex.join, x.parts))
    return f"python {x.where}"


@pytest.mark.parametrize("example", EXAMPLES, ids=[_example_id(x) for x in EXAMPLES])
def test_example(
    example: Command | Block, workspace: Workspace, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if isinstance(example, Block):
        code = "\n".join(example.body) + "\n"
        compile(code, example.where, "exec")
        if example.mode in ("full", "reduced"):
            printed = workspace.run_python(example)
            if example.mode == "full" and example.output:
                diff = shown_output_matches(example.output, printed, "")
                assert diff is None, (
                    f"{example.where}: the output shown is not what the block prints "
                    f"(python docs/examples.py regenerate rewrites it):\n{diff}"
                )
        return
    command = example
    shown = tuple(line.replace(str(SERVE_PORT), str(workspace.served_port)) for line in command.shown)
    for argv in command.parts:
        if argv[0] != "yatzy-harness":
            _check_other(argv, command)
            if argv[0] == "curl" and command.mode == "full":
                printed = workspace.curl(argv, command)
                diff = shown_output_matches(shown, printed, "")
                assert diff is None, f"{command.where}: {command.text}\nthe output shown is not what it prints:\n{diff}"
            continue
        _parse(argv, command, capsys)
        _check_names(argv, command, workspace, monkeypatch)
        if command.mode in (None, "parse-only"):
            continue
        if argv[1] == "serve":
            printed = workspace.serve(argv, command)
            diff = shown_output_matches(shown, "", printed)
            assert diff is None, f"{command.where}: {command.text}\nthe output shown is not what it prints:\n{diff}"
            continue
        res = workspace.play(workspace.as_played(workspace.port(argv)), command)
        if command.mode == "full" and shown and argv is command.parts[-1]:
            diff = shown_output_matches(shown, res.stdout, res.stderr)
            assert diff is None, (
                f"{command.where}: {command.text}\nthe output shown is not what it prints "
                f"(normalised: NORMALISE; regenerate with python docs/examples.py regenerate):\n{diff}"
            )


def test_a_file_the_user_keeps_in_the_clone_does_not_change_the_readme_run(tmp_path, monkeypatch) -> None:
    """The manual says to save my_house.toml where the commands run: a user who does so at the
    top of the clone must still see the manual's own file in the commands' directory."""
    clone = tmp_path / "clone"
    (clone / "configs").mkdir(parents=True)
    (clone / "my_house.toml").write_text('extends = "standard"\nname = "theirs"\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", clone)
    ws = Workspace(tmp_path / "ws")
    assert "my_house.toml" in SHOWN_FILES
    assert (ws.root / "my_house.toml").read_text() == SHOWN_FILES["my_house.toml"][2]


def test_every_test_runs_in_a_directory_of_its_own() -> None:
    assert Path.cwd().resolve() != ROOT and not any(Path.cwd().iterdir())


def test_output_comparison_normalises_only_what_cannot_be_stable() -> None:
    shown = ("results: results/gb  (1 lineup(s) x 100 games; 12.4 s, 8,087 games/s)", "...", "  b  2")
    assert (
        shown_output_matches(
            shown, "x\nresults: results/gb  (1 lineup(s) x 100 games; 0.3 s, 301 games/s)\na\n  b  2\n", ""
        )
        is None
    )
    assert (
        shown_output_matches(shown[:1], "results: results/gb  (1 lineup(s) x 101 games; 0.3 s, 301 games/s)\n", "")
        is not None
    )
    assert reduce_python("run(games=20_000, seed=1_2)\nx = 100_000") == "run(games=400, seed=1_2)\nx = 2_000"


def test_output_comparison_compares_numbers_by_value():
    """The reproducibility contract (docs/scale.md): a float's last bits, and the padding its width
    moves, pass; a changed integer, a float beyond PRINTED_REL or changed text fail."""
    shown = (
        "level     value",
        "  casual    solver:temperature=1.6270207047278964   1.627020705 [1.627020705, 1.627021205]  40.000000 %",
        "  strong    solver:temperature=0.7296367405470241   0.7296367405 [0.7296367405, 0.7296372405]  55.000002 %",
        "  4,745 decisions, mean 0.9350945284811192",
    )

    def printed(
        casual: str = "1.627020704727902",
        decisions: str = "4,745",
        mean: str = "0.935094528481119",
        word: str = "decisions",
        pad: str = "  ",
    ) -> str:
        rows = [
            ("casual", f"solver:temperature={casual}", "1.627020705 [1.627020705, 1.627021205]", "40.000000 %"),
            (
                "strong",
                "solver:temperature=0.7296367405470241",
                "0.7296367405 [0.7296367405, 0.7296372405]",
                "55.000002 %",
            ),
        ]
        width = max(len(r[1]) for r in rows)
        return (
            "\n".join(
                ["level     value"]
                + [f"  {a:8}  {b:{width}}{pad} {c}{pad}{d}" for a, b, c, d in rows]
                + [f"  {decisions} {word}, mean {mean}"]
            )
            + "\n"
        )

    # the last bits of two floats, and the column one moves one space narrower on both rows
    assert shown_output_matches(shown, printed(), "") is None
    assert shown_output_matches(shown[1:2], printed(casual="1.6270207047278964"), "") is None
    # beyond the tolerance, another integer, other text, padding that moves with no number's width
    assert shown_output_matches(shown, printed(casual="1.6270207147"), "") is not None
    assert shown_output_matches(shown, printed(mean="0.9350945184"), "") is not None
    assert shown_output_matches(shown, printed(decisions="4,746"), "") is not None
    assert shown_output_matches(shown, printed(word="decision"), "") is not None
    assert shown_output_matches(shown[2:3], printed(casual="1.6270207047278964", pad="   "), "") is not None
    # a line cut by `...` keeps comparing the numbers it shows
    assert shown_output_matches(("  4,745 decisions, mean 0.93509452848111...",), printed(), "") is None
    assert shown_output_matches(("  4,745 decisions, mean 0.93519...",), printed(), "") is not None
