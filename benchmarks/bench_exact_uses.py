"""What the exact answers of compare, calibrate and report cost: each README command of theirs, run
as a user runs it, with its CPU time (user + sys), wall time and peak RSS (``/usr/bin/time``).

    python benchmarks/bench_exact_uses.py --tables ~/.cache/yatzy-harness [--runs] [--ladder]

``--tables``: a solver cache holding scandinavian's value tables at thresholds 63 and 62; the script
works in a scratch directory whose cache links to those tables only, so every exact evaluation is
computed (cold) the first time and read from the evaluation cache the second. ``--runs`` also plays
the README's two 100,000-game solver runs and times ``compare --exact`` on them and ``report`` with
and without ``--exact``; ``--ladder`` times the site's own ladder on scandinavian (``calibrate
--exact --levels configs/difficulty/default.toml``: hours of CPU). Prints one Markdown row per
command, with the load average (``os.getloadavg``) before and after it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_file(name: str) -> str:
    """A ```toml block of the README whose first line is ``# NAME`` (the file the README shows)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"```toml\n(# {re.escape(name)}\n.*?)```", text, re.S)
    if not m:
        raise SystemExit(f"README.md shows no {name}")
    return m.group(1)


def timed(argv: list[str], cwd: Path, env: dict[str, str], what: str) -> None:
    load0 = os.getloadavg()[0]
    res = subprocess.run(
        ["/usr/bin/time", "-f", "%U %S %e %M", *argv], cwd=cwd, env=env, capture_output=True, text=True
    )
    load1 = os.getloadavg()[0]
    if res.returncode not in (0, 1):  # compare exits 1 on a change
        raise SystemExit(f"{' '.join(argv)} failed ({res.returncode}):\n{res.stderr[-2000:]}")
    user, sys_, wall, rss = res.stderr.strip().splitlines()[-1].split()
    cmd = " ".join(a if a != sys.executable else "python" for a in argv).replace(
        "python -m harness.cli", "yatzy-harness"
    )
    print(
        f"| {what} | `{cmd}` | {float(user) + float(sys_):.1f} | {float(wall):.0f} | {int(rss) / 1024:.0f} | "
        f"{load0:.1f}–{load1:.1f} |",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", required=True, type=Path, help="a solver cache with scandinavian's value tables")
    ap.add_argument("--runs", action="store_true", help="also the run-directory commands (plays 2 x 100,000 games)")
    ap.add_argument("--ladder", action="store_true", help="also the scandinavian ladder (hours of CPU)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cache = work / ".solver-cache"
        cache.mkdir()
        for f in a.tables.glob("solve-*-v1.bin"):  # value tables only: every evaluation starts cold
            (cache / f.name).symlink_to(f.resolve())
        (work / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
        (work / "exact_levels.toml").write_text(readme_file("exact_levels.toml"))
        env = dict(os.environ, YATZY_HARNESS_CACHE=str(cache), PYTHONPATH=str(ROOT))
        cli = [sys.executable, "-m", "harness.cli"]
        print("| what | command | CPU (s) | wall (s) | peak RSS (MiB) | load average |")
        print("|---|---|---:|---:|---:|---|")
        cmp = [*cli, "compare", "--exact", "bonus63", "bonus62", "--entrants", "greedy,solver"]
        timed(cmp, work, env, "compare --exact, 4 evaluations (cold)")
        timed(cmp, work, env, "the same, from the evaluation cache")
        timed(
            [*cli, "calibrate", "--levels", "exact_levels.toml", "--out", "results/levels-exact"],
            work,
            env,
            "README's exact ladder (Forced Yatzy, empty cache for it)",
        )
        if a.runs:
            for t in (63, 62):
                subprocess.run(
                    [
                        *cli,
                        "run",
                        "--rules",
                        "scandinavian",
                        "--set",
                        f"upper_bonus_threshold={t}",
                        "--seats",
                        "solver,solver",
                        "--games",
                        "100000",
                        "--seed",
                        "1",
                        "--out",
                        f"results/bonus{t}",
                        "--quiet",
                    ],
                    cwd=work,
                    env=env,
                    check=True,
                    capture_output=True,
                )
            timed(
                [*cli, "compare", "--exact", "results/bonus63", "results/bonus62"],
                work,
                env,
                "compare --exact on 2 x 100,000-game runs (cached)",
            )
            for flag in ("--exact", "--no-exact"):
                timed(
                    [*cli, "report", "results/bonus63", flag, "--no-plots", "--out", f"results/rep{flag}"],
                    work,
                    env,
                    f"report {flag} of 100,000 games",
                )
        if a.ladder:
            timed(
                [
                    *cli,
                    "calibrate",
                    "--exact",
                    "--levels",
                    "configs/difficulty/default.toml",
                    "--out",
                    "results/levels-default",
                ],
                work,
                env,
                "the site's ladder on scandinavian, exact (cold)",
            )
        shutil.rmtree(work / "results", ignore_errors=True)


if __name__ == "__main__":
    main()
