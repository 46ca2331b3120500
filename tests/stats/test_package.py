"""The harness.stats package: its API, one-way imports inside it, lazy scipy."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import harness.stats
from tests.test_imports import _imports

PACKAGE = Path(harness.stats.__file__).resolve().parent

#: Every module imports only modules before it in this order (so the package has no import loop).
ORDER = (
    "common",
    "moments",
    "proportions",
    "paired",
    "control_variates",
    "clustered",
    "delta",
    "multiple",
    "histogram",
    "distributions",
    "elo",
    "sprt",
    "ratings",
)

#: The names ``from harness.stats import ...`` gave when the package was the single module stats.py.
API = (
    "Moments",
    "VecMoments",
    "pentanomial_moments",
    "MeanCI",
    "mean_ci",
    "wilson",
    "Rate",
    "rate",
    "PairedDiff",
    "paired_difference",
    "paired_difference_from_moments",
    "CoMoments",
    "ControlVariateMean",
    "control_variate_mean",
    "Estimate",
    "delta_estimate",
    "holm",
    "IntHistogram",
    "DistTest",
    "ks_2samp_counts",
    "anderson_ksamp_counts",
    "sprt_bounds",
    "SPRTResult",
    "sprt_mean",
    "sprt_trinomial",
    "sprt_pentanomial",
    "SPRT_PSEUDO_COUNT",
    "SPRT_VAR_FLOOR_REL",
    "Ratings",
    "bradley_terry",
    "elo_from_score",
    "score_from_elo",
    "elo_ci_from_pentanomial",
    "ELO_PER_NAT",
)
#: The names added to the package since, in __all__ after those.
ADDED = ("ClusteredMean", "clustered_mean")


def test_the_package_exports_the_api_of_the_single_module():
    assert list(harness.stats.__all__) == list(API + ADDED)
    for name in API + ADDED + ("HIST_MAX_VALUE", "CV_MIN_VAR"):  # the last two were public, not in __all__
        obj = getattr(harness.stats, name)
        if callable(obj):
            assert obj.__module__.startswith("harness.stats."), name  # defined in a topic module


def test_modules_import_each_other_in_one_direction():
    assert sorted(ORDER) == sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    for i, name in enumerate(ORDER):
        deps = _imports(ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8")))
        allowed = {f"harness.stats.{m}" for m in ORDER[:i]} | {"harness.util.sums"}  # pure: fixed-order sums
        assert deps <= allowed, f"harness.stats.{name} imports {sorted(deps - allowed)}"


def test_scipy_is_imported_in_one_place_and_only_when_first_used():
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        funcs = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)]
        for node in ast.walk(tree):
            mods = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(m.split(".")[0] == "scipy" for m in mods):
                owner = [f.name for f in funcs if node in ast.walk(f)]
                found.append((path.stem, owner))
    assert found == [("common", ["scipy_stats"])]
    # A fresh interpreter: importing the package (as every CLI command does) leaves scipy unloaded.
    root = str(PACKAGE.parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = "import sys, harness.stats; print(harness.stats.__file__); print('scipy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=root, check=True
    ).stdout.split()
    assert out == [str(PACKAGE / "__init__.py"), "False"]
