"""``yatzy-harness strategies``: the registered bots (built-in and plugins) with their parameters."""

from __future__ import annotations

import argparse
from typing import Any

from harness.commands.options import describe, print_json


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "List the registered bots (built-in and plugins) with their parameters. "
        "Name a bot (in --seats, --entrants or a run config) as NAME or NAME:KEY=VALUE,...",
        "yatzy-harness strategies",
        "yatzy-harness strategies --json",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _bounds(lo: Any, hi: Any) -> str:  # an open end is left out, not printed as None
    from harness.game.strategy import range_text

    text = range_text(lo, hi)
    return f" {text}" if text else ""


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `strategies --help` must not pay for numpy and numba
    # (benchmarks/BENCHMARKS.md, 'Start-up')
    from harness.game.registry import describe as describe_bots

    items = describe_bots()
    if args.json:
        print_json(items)
        return 0
    for s in items:
        print(f"{s['name']:<10} {s['description']}")
        for p in s["params"]:
            print(f"    {p['name']}={p['default']} ({p['type']}{_bounds(p['min'], p['max'])}): {p['description']}")
    return 0
