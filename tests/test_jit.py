"""harness.util.jit: numba starts without importing scipy.linalg, and nothing of scipy or numba's BLAS
is lost by it; the program's entry point exits with main's code and leaves its output whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)

PROBE = """
import json, sys
from harness.util.jit import nb
import numpy as np

@nb.njit
def dot(a, b):
    return np.dot(a, b)

a = np.arange(12.0).reshape(3, 4)
b = np.arange(8.0).reshape(4, 2)
out = {"dot": bool(np.array_equal(dot(a, b), a @ b)), "linalg_after_start": "scipy.linalg" in sys.modules}
import scipy.linalg
import scipy.linalg.cython_blas as cb
out["bound"] = scipy.linalg.cython_blas is sys.modules["scipy.linalg.cython_blas"] is cb
out["capi"] = "dgemm" in cb.__pyx_capi__
out["gemm"] = scipy.linalg.blas.dgemm(1.0, a, b).tolist() == (a @ b).tolist()
out["solve"] = scipy.linalg.solve(2.0 * np.eye(2), np.ones(2)).tolist()
import scipy.stats
out["norm"] = float(scipy.stats.norm.cdf(0.0))
print(json.dumps(out))
"""


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )


def test_numba_starts_without_scipy_linalg_and_blas_still_works():
    proc = _python(PROBE)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out == {
        "dot": True,
        "linalg_after_start": False,
        "bound": True,
        "capi": True,
        "gemm": True,
        "solve": [0.5, 0.5],
        "norm": 0.5,
    }


def test_numba_after_scipy_linalg_is_left_alone():
    """scipy.linalg imported first: harness.util.jit loads nothing and registers no finder."""
    proc = _python(
        "import sys, scipy.linalg, harness\nn = len(sys.meta_path)\nfrom harness.util.jit import nb\n"
        "print(len(sys.meta_path) == n, sys.modules['scipy.linalg.cython_blas'].__name__)"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "scipy.linalg.cython_blas"]


def test_entry_point_exits_with_mains_code_and_whole_output(tmp_path):
    ok = _python("import sys\nfrom harness.cli import entry\nsys.exit(entry())", "rules")
    assert ok.returncode == 0, ok.stderr
    assert "scandinavian" in ok.stdout
    bad = _python("import sys\nfrom harness.cli import entry\nsys.exit(entry())", "rules", "show", "no-such-rules")
    assert bad.returncode == 2
    assert bad.stderr.startswith("yatzy-harness: error: ")


def test_numba_errors_leave_no_colour_reset_at_exit():
    """A numba error message formatted in a command (overload resolution makes some) must not make
    colorama register its exit hook, which writes ESC [0m on a terminal after the command's last
    line (issue 52)."""
    code = (
        "import harness.util.jit\nfrom numba.core import errors, ir\nerrors.TypingError('x')\n"
        "ir._termcolor.highlight('x')\n"  # a constant numba cannot infer formats its line so
        "import sys\nci = sys.modules.get('colorama.initialise')\n"
        "print('hook' if ci is not None and ci.atexit_done else 'none')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "none\n"


def test_a_helper_is_forked_from_the_main_thread_only_and_awaited(tmp_path):
    import threading

    from harness.util import jit

    mark = tmp_path / "ran"
    assert not jit.has_helper()
    assert jit.fork_helper(lambda: mark.write_text("yes"), 1.0, "a test's kernels")
    assert jit.has_helper()
    assert jit.fork_helper(lambda: None, 1.0, "a second") is None  # one helper at a time
    jit.await_helper()
    assert not jit.has_helper() and mark.read_text() == "yes"
    proc = jit.fork_helper(lambda: None, 1.0, "not registered", register=False)
    assert proc is not None and not jit.has_helper()
    proc.join()

    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(jit.fork_helper(lambda: None, 1.0, "from a thread")))
    t.start()
    t.join()
    assert got == [None] and not jit.has_helper()
