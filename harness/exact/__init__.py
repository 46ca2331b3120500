"""The exact layer: value tables, target tables, exact evaluation, courses, depth of skill, sweeps, exact tasks.

``harness.exact`` was the module of exact figures beside sampled ones before the move into layers
(issue 38); its names still import from here, from :mod:`harness.exact.figures`, loaded on first use
(the package itself imports nothing, so ``import harness.exact.solver`` does not load the evaluator).
"""

from __future__ import annotations

_FIGURES = ("ALARM_CONFIDENCE", "ExactTables", "outside")


def __getattr__(name: str):
    if name in _FIGURES:
        from harness.exact import figures  # the old module's names, on first use (see the docstring)

        return getattr(figures, name)
    raise AttributeError(f"module 'harness.exact' has no attribute {name!r}")
