"""``yatzy-harness export``: a level (of a levels.json, or a bot spec) as a JavaScript module, its compact table and a manifest."""

from __future__ import annotations

import argparse

from harness.commands.options import add_cache_dir_option, describe, print_json


def configure(p: argparse.ArgumentParser) -> None:
    describe(
        p,
        "Export a difficulty level to JavaScript: a self-contained ES module (browsers and "
        "Node 20, no dependencies) that decides every position as the harness's solver bot "
        "does, the level's value table made small (quantised to 2**-SHIFT points, delta-coded, "
        "gzip), an engine.mjs that plays it over the engine protocol, and manifest.json "
        "(harness version, rule set, spec, the table's sha256, the sizes, and the level's "
        "exact figures from this very table: its mean, its loss against full precision, its "
        "score rate against the reference it was tuned against). The same level exported "
        "twice gives the same module and table bytes.",
        "yatzy-harness export solver --rules scandinavian --out results/level-solver",
        "yatzy-harness export solver:temperature=1.2,blunder=0.03 --rules forced --out results/level-casual",
        "yatzy-harness export expert --levels results/levels-exact/levels.json --out results/level-expert",
        "yatzy-harness export solver --rules forced --table f64 --out results/level-exact",
    )
    p.add_argument(
        "level",
        metavar="LEVEL_OR_SPEC",
        help="a level's name in --levels FILE, or a solver spec (solver:temperature=T,blunder=P)",
    )
    p.add_argument("--rules", metavar="NAME", help="the rule set (a built-in name; with --levels, the file's)")
    p.add_argument("--levels", metavar="FILE", help="the levels.json of calibrate --levels holding LEVEL")
    p.add_argument("--out", metavar="DIR", required=True, help="the export directory (created; files replaced)")
    p.add_argument(
        "--table",
        choices=("q", "f64"),
        default="q",
        help="q: values quantised to 2**-SHIFT points (default); f64: full precision",
    )
    p.add_argument(
        "--shift", type=int, default=8, metavar="SHIFT", help="q tables: values to 2**-SHIFT points (default 8)"
    )
    p.add_argument("--no-figures", action="store_true", help="skip the exact evaluation (sizes only in the manifest)")
    add_cache_dir_option(p)
    p.add_argument("--json", action="store_true", help="print the manifest (without the rule set) as JSON")


def run(args: argparse.Namespace) -> int:
    # the library is imported here, not at the top: `export --help` must not pay for numpy and numba
    from pathlib import Path

    from harness.players.export import ExportOptions, export_level, resolve_level
    from harness.util.cache import select_cache_dir

    cache_dir = select_cache_dir(args.cache_dir)
    level = resolve_level(args.level, args.rules, args.levels)
    out = Path(args.out)
    m = export_level(
        level,
        out,
        ExportOptions(args.table, args.shift, not args.no_figures, None if cache_dir is None else str(cache_dir)),
    )
    if args.json:
        print_json({k: v for k, v in m.items() if k != "rules"})
        return 0
    s, t = m["sizes"], m["table"]
    name = f"level {m['level']} ({m['spec']})" if m["level"] else m["spec"]
    print(f"exported {name} on {level.rules.name} to {out}")
    print(f"  {m['module']['file']}  {m['module']['bytes']:,} bytes, {s['module_gzip']:,} gzipped")
    shift = f", values to 2^-{t['shift']} point" if t["kind"] == "q" else ", full precision"
    print(f"  {t['file']}  {t['bytes']:,} bytes gzipped ({t['states']:,} states{shift}); sha256 {t['sha256'][:16]}...")
    print(f"  manifest.json  {s['manifest_gzip']:,} gzipped; engine.mjs (node engine.mjs: the level as an engine)")
    print(f"  transferred (gzip): {s['transferred']:,} bytes")
    fig = m["figures"]
    if fig:
        print(
            f"  mean {fig['mean']:.6f} from this table; full precision {fig['full_precision_mean']:.6f}; "
            f"loss {fig['loss']:.2e} points a game"
        )
        if fig["against"]:
            print(
                f"  score rate against {fig['against']}: {100 * fig['score_rate']:.4f} % "
                f"(full precision {100 * fig['full_precision_score_rate']:.4f} %)"
            )
    return 0
