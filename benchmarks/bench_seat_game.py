"""CPU per seat-game: the playing loop alone and the whole `run` command, against the anchor's figures.

"loop": in this process, the bot prepared first (its tables loaded, or built: timed apart), then
``harness.game.loop.play`` on batches of 50,000 solitaire games (the runner's chunk) until N
seat-games; CPU time (user + system) of the batches only, per seat-game, and this process's peak
RSS. "command": ``yatzy-harness run --seats BOT --games N --workers W --quiet`` in a child
process, CPU of the child and its workers (``os.wait4``), per seat-game, and the peak RSS of the
largest process. Compare CPU, not wall time: the development machine is shared.

    python benchmarks/bench_seat_game.py --mode loop --bots solver --seat-games 10000000
    python benchmarks/bench_seat_game.py --mode command --bots solver,greedy,random,solver:temperature=1 \\
        --seat-games 10000,100000,1000000 --workers 1,2
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BATCH = 50_000


def loop(bot: str, n: int, rules_name: str) -> tuple[float, float, float]:
    """(prepare CPU s, CPU us per seat-game, peak RSS MiB) of n solitaire seat-games in this process."""
    from harness.game.loop import play
    from harness.game.registry import make
    from harness.game.rules import load_rules

    rules = load_rules(rules_name)
    s = make(bot, rules)
    c0 = time.process_time()
    s.expect_games(n)
    s.prepare()
    play(rules, [s], np.arange(1, dtype=np.int64), 1)  # kernels loaded
    c1 = time.process_time()
    done = 0
    while done < n:
        k = min(BATCH, n - done)
        play(rules, [s], np.arange(done, done + k, dtype=np.int64), 1)
        done += k
    c2 = time.process_time()
    return c1 - c0, (c2 - c1) / n * 1e6, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def command(bot: str, n: int, workers: int, rules_name: str) -> tuple[float, float, float]:
    """(wall s, CPU us per seat-game, peak RSS MiB of the largest process) of one `run`."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--rules",
            rules_name,
            "--seats",
            bot,
            "--games",
            str(n),
            "--workers",
            str(workers),
            "--seed",
            "1",
            "--out",
            str(Path(tmp) / "r"),
            "--quiet",
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        if status != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({status})")
    return wall, (ru.ru_utime + ru.ru_stime) / n * 1e6, ru.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["loop", "command"], default="loop")
    ap.add_argument("--bots", default="solver")
    ap.add_argument("--seat-games", default="1000000", help="comma-separated counts")
    ap.add_argument("--workers", default="1", help="command mode: comma-separated worker counts")
    ap.add_argument("--rules", default="scandinavian")
    args = ap.parse_args()
    counts = [int(x) for x in args.seat_games.split(",")]
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}, rules {args.rules}")
    for bot in args.bots.split(","):
        for n in counts:
            if args.mode == "loop":
                # a fresh interpreter per row: one row's tables and caches must not warm the next
                out = subprocess.run(
                    [sys.executable, __file__, "--one", bot, str(n), args.rules],
                    check=True,
                    capture_output=True,
                    text=True,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                )
                print(out.stdout.strip(), flush=True)
            else:
                for w in (int(x) for x in args.workers.split(",")):
                    wall, us, rss = command(bot, n, w, args.rules)
                    print(
                        f"command {bot:24s} seat-games {n:>10,}  workers {w}  CPU {us:6.2f} us/seat-game  "
                        f"wall {wall:7.1f} s  peak RSS {rss:6.0f} MiB  load {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--one":
        prep, us, rss = loop(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        print(
            f"loop    {sys.argv[2]:24s} seat-games {int(sys.argv[3]):>10,}  CPU {us:6.2f} us/seat-game  "
            f"(prepare {prep:5.2f} s CPU)  peak RSS {rss:6.0f} MiB  load {os.getloadavg()[0]:.1f}"
        )
    else:
        main()
