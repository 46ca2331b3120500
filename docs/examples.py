"""The manual's examples: list them with their mode, or regenerate the output they show.

    python docs/examples.py list                      # every example block of README.md and docs/, with its mode
    python docs/examples.py regenerate [PAGE ...]     # re-run the full and reduced blocks AT FULL SIZE
                                                      # and rewrite the output shown under them

``tests/test_readme.py`` runs every example (a ``reduced`` one with fewer games) and compares a
``full`` one's shown output with what it prints; this script is how the shown output is made. It
runs the examples of the pages named (all pages by default; the commands that write what they
read run first) in a scratch directory with a fresh solver cache, exactly as written, and
replaces each shown run of lines (cut at ``...`` lines, which stay) by the lines the command
printed there. Expect hours for every page: the reduced examples are the long ones. Review the
diff (``git diff docs README.md``) before committing: the prose around an output may need the new
figures too.
"""

from __future__ import annotations

import difflib
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import test_readme as tr  # noqa: E402  (the examples' parser and runner)


def _score(seg: list[str], window: list[str]) -> float:
    def one(a: str, b: str) -> float:
        a, b = tr.normalise(a), tr.normalise(b)
        if a.endswith("...") and a.strip() != "...":  # a line cut short: its start must be there
            return 2.0 if b.startswith(a[:-3].rstrip()) else 0.0
        return difflib.SequenceMatcher(None, a, b).ratio()

    return sum(one(a, b) for a, b in zip(seg, window))


def _line(old: str, new: str) -> str:
    """The new printed line, or for a shown line cut with a trailing ``...``, as much of it."""
    if old.rstrip().endswith("...") and old.strip() != "...":
        cut = old.rstrip()[:-3]
        keep = len(cut.rstrip())
        return new[:keep] + cut[keep:] + "..."
    return new


def regenerate_shown(shown: list[str], printed: list[str]) -> list[str]:
    """``shown`` with each run of lines between ``...`` lines replaced by the best-matching run of
    ``printed`` (stderr, then stdout); with no ``...`` at all, all of ``printed``."""
    if not any(line.strip() == "..." or line.rstrip().endswith("...") for line in shown):
        return printed
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if not run:
            return
        n = len(run)
        starts = range(max(1, len(printed) - n + 1))
        best = max(starts, key=lambda i: _score(run, printed[i : i + n]), default=0)
        window = printed[best : best + n]
        out.extend(_line(o, w) for o, w in zip(run, window))
        run.clear()

    for line in shown:
        if line.strip() == "...":
            flush()
            out.append(line)
        else:
            run.append(line)
    flush()
    return out


def list_examples() -> None:
    for b in tr.BLOCKS:
        print(f"{b.where:32} {b.mode or 'NO MODE':10} {b.lang:8} {b.key[:100]}")


def regenerate(pages: list[str]) -> int:
    chosen = {(ROOT / p).resolve() for p in pages} if pages else {p.resolve() for p in tr.PAGES}
    edits: dict[Path, list[tuple[int, int, list[str]]]] = {}
    with tempfile.TemporaryDirectory(prefix="yatzy-examples-") as tmp:
        ws = tr.Workspace(Path(tmp) / "ws")
        ws.full_size = True
        try:
            for x in tr.EXAMPLES:
                if x.page.resolve() not in chosen or x.mode not in ("full", "reduced"):
                    continue
                if isinstance(x, tr.Block):
                    print(f"{x.where}: python", file=sys.stderr)
                    printed = ws.run_python(x).splitlines()
                    if x.output_line is not None:
                        edits.setdefault(x.page, []).append((x.output_line + 1, len(x.output), printed))
                    continue
                printed: list[str] = []
                for argv in x.parts:
                    if argv[0] == "curl":
                        printed = ws.curl(argv, x).splitlines()
                    elif argv[0] != "yatzy-harness":
                        continue
                    elif argv[1] == "serve":
                        printed = ws.serve(argv, x).splitlines()
                    else:
                        print(f"{x.where}: {tr.shlex.join(argv)}", file=sys.stderr)
                        res = ws.play(ws.port(argv), x)
                        printed = res.stderr.splitlines() + res.stdout.splitlines()
                if x.shown:
                    port = str(ws.served_port)
                    new = [line.replace(port, str(tr.SERVE_PORT)) for line in regenerate_shown(list(x.shown), printed)]
                    edits.setdefault(x.page, []).append((x.shown_line, len(x.shown), new))
        finally:
            ws.close()
    for page, changes in edits.items():
        lines = page.read_text(encoding="utf-8").splitlines()
        for start, n, new in sorted(changes, reverse=True):
            lines[start - 1 : start - 1 + n] = new
        page.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"rewrote {page.relative_to(ROOT)} ({len(changes)} outputs)", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["list"]:
        list_examples()
        return 0
    if argv[:1] == ["regenerate"]:
        return regenerate(argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
