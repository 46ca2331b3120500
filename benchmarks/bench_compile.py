"""What a command's first use compiles: each numba specialisation's compile time, from empty caches.

Runs one ``yatzy-harness`` command in this process with numba's kernel cache
(``NUMBA_CACHE_DIR``) and the harness's cache (``YATZY_HARNESS_CACHE``) pointed at fresh empty
folders (set before numba is imported), listening to numba's compile events. Prints every
specialisation compiled (kernel, argument types), its CPU seconds inclusive of the kernels it
compiled inside it and exclusive of them, the biggest first, then the command's whole CPU and
wall time and the load average. Kernels compiled by a forked helper process are not seen here
(their time shows in the children's CPU).

    python benchmarks/bench_compile.py -- calibrate --levels exact_levels.toml --out /tmp/lv
    python benchmarks/bench_compile.py --top 15 -- run
    python benchmarks/bench_compile.py --spans -- solve scandinavian   # each wait: when, how long, what
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=40, help="print this many specialisations")
    ap.add_argument("--keep-caches", action="store_true", help="use the caches of the environment as they are")
    ap.add_argument("--full", action="store_true", help="print whole argument types")
    ap.add_argument("--dump", help="write every specialisation (kernel, types, incl, excl, caller) as JSON here")
    ap.add_argument("--spans", action="store_true", help="print every stretch of compiling over 0.2 s, and its kernel")
    ap.add_argument("argv", nargs="+", help="the command, after --")
    args = ap.parse_args()
    if not args.keep_caches:
        os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="compile-kernels-")
        os.environ["YATZY_HARNESS_CACHE"] = tempfile.mkdtemp(prefix="compile-cache-")
        for d in (os.environ["NUMBA_CACHE_DIR"], os.environ["YATZY_HARNESS_CACHE"]):
            atexit.register(shutil.rmtree, d, True)
    sys.path.insert(0, str(ROOT))
    from numba.core import event

    stack: list[list] = []
    done: list[tuple[str, str, float, float, str]] = []

    class Watch(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            d = ev.data.get("dispatcher")
            f = getattr(d, "py_func", None)
            name = f"{getattr(f, '__module__', '?')}.{getattr(f, '__name__', '?')}"
            sig = ", ".join(str(a) for a in ev.data.get("args", ()))
            stack.append([name, sig, time.process_time(), 0.0, stack[-1][0] if stack else ""])

        def on_end(self, ev: event.Event) -> None:
            name, sig, t0, inner, parent = stack.pop()
            total = time.process_time() - t0
            if stack:
                stack[-1][3] += total
            done.append((name, sig, total, total - inner, parent))

    event.register("numba:compile", Watch())
    # waits: the wall time of each outermost compile and of each wait for a kernel helper
    spans: list[tuple[float, float, str]] = []
    outer = [0.0]

    class Wall(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            if len(stack) == 1:
                outer[0] = time.monotonic()

        def on_end(self, ev: event.Event) -> None:
            if not stack:
                f = getattr(ev.data.get("dispatcher"), "py_func", None)
                spans.append((outer[0], time.monotonic(), getattr(f, "__name__", "?")))

    event.register("numba:compile", Wall())
    from harness.util import jit

    await_helper = jit.await_helper

    def timed_await() -> None:
        t0 = time.monotonic()
        await_helper()
        spans.append((t0, time.monotonic(), "(a kernel helper)"))

    jit.await_helper = timed_await
    load0 = os.getloadavg()[0]
    w0, c0 = time.monotonic(), time.process_time()
    from harness.cli import entry

    sys.argv = ["yatzy-harness", *args.argv]
    try:
        code = entry()
    except SystemExit as e:  # noqa: PERF203 - the command's own exit
        code = e.code
    wall, cpu = time.monotonic() - w0, time.process_time() - c0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = sys.stderr
    print(
        f"\nexit {code}; wall {wall:.1f} s, CPU {cpu:.1f} s (+ children {kids.ru_utime + kids.ru_stime:.1f} s), "
        f"load {load0:.1f} -> {os.getloadavg()[0]:.1f}",
        file=out,
    )
    waits: list[list[float]] = []  # spans less than 0.5 s apart are one wait
    for a, b, name in sorted(spans):
        if args.spans and b - a > 0.2:
            print(f"  {a - w0:6.1f} -> {b - w0:6.1f} s ({b - a:5.1f} s) {name}", file=out)
    for a, b, _ in sorted(spans):
        if waits and a - waits[-1][1] < 0.5:
            waits[-1][1] = max(waits[-1][1], b)
        else:
            waits.append([a, b])
    longest = sorted((b - a for a, b in waits), reverse=True)
    print(
        f"waits for compiling (wall, compiles and helper waits less than 0.5 s apart joined): "
        f"{len(waits)}, {sum(longest):.1f} s in all, the longest {', '.join(f'{x:.1f}' for x in longest[:4])} s",
        file=out,
    )
    print(f"compiled {len(done)} specialisations, {sum(d[3] for d in done):.1f} s of CPU:", file=out)
    print(f"{'incl s':>7} {'excl s':>7}  kernel (argument types)", file=out)
    for name, sig, total, own, _ in sorted(done, key=lambda d: -d[2])[: args.top]:
        print(f"{total:7.2f} {own:7.2f}  {name}({sig if args.full else sig[:160]})", file=out)
    if args.dump:
        import json

        Path(args.dump).write_text(json.dumps(done, indent=0))


if __name__ == "__main__":
    main()
