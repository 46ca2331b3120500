"""The old import paths of the flat folder, kept: each names the module of the layered tree it now is.

Issue 38 moved the modules of ``harness/`` into one package per layer (docs/architecture.md). Every
path a user's code, a notebook or a pickle may hold still imports: ``import harness.solver`` gives
the very module object ``harness.exact.solver`` (not a copy), so monkeypatching, ``isinstance`` and
pickles written before the move behave as before. This table is the one place those shims live; a
shim counts in the layer of what it names. New code imports the new paths.

``harness.exact`` was a module and is now the exact layer's package; its names (``ExactTables``,
``outside``...) are given by the package itself (``harness/exact/__init__.py``, from
:mod:`harness.exact.figures`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

#: old path -> new path.
MOVED: dict[str, str] = {
    "harness.errors": "harness.util.errors",
    "harness.jsonable": "harness.util.jsonable",
    "harness.specs": "harness.util.specs",
    "harness.progress": "harness.util.progress",
    "harness.jit": "harness.util.jit",
    "harness.cache": "harness.util.cache",
    "harness.render": "harness.util.render",
    "harness.rules": "harness.game.rules",
    "harness.dice": "harness.game.dice",
    "harness.rng": "harness.game.rng",
    "harness.scoring": "harness.game.scoring",
    "harness.outcome": "harness.game.outcome",
    "harness.engine_kernels": "harness.game.engine_kernels",
    "harness.turn": "harness.game.turn",
    "harness.strategy": "harness.game.strategy",
    "harness.engine": "harness.game.engine",
    "harness.pace": "harness.game.pace",
    "harness.tournament": "harness.game.tournament",
    "harness.solver": "harness.exact.solver",
    "harness.solver_kernels": "harness.exact.kernels.solver",
    "harness.target": "harness.exact.target",
    "harness.target_kernels": "harness.exact.kernels.target",
    "harness.evaluate": "harness.exact.evaluate",
    "harness.evaluate_kernels": "harness.exact.kernels.evaluate",
    "harness.course": "harness.exact.course",
    "harness.depth": "harness.exact.depth",
    "harness.cost": "harness.exact.cost",
    "harness.cluster": "harness.exact.cluster",
    "harness.dask_worker": "harness.exact.dask_worker",
    "harness.sweep": "harness.exact.sweep",
    "harness.codec": "harness.records.codec",
    "harness.record": "harness.records.record",
    "harness.rundir": "harness.records.rundir",
    "harness.positions": "harness.decisions.positions",
    "harness.analysis": "harness.decisions.analysis",
    "harness.analysis_kernels": "harness.decisions.kernels",
    "harness.skill": "harness.decisions.skill",
    "harness.registry": "harness.game.registry",
    "harness.runconfig": "harness.play.runconfig",
    "harness.worker": "harness.play.worker",
    "harness.runner": "harness.play.runner",
    "harness.backends": "harness.util.backends",
    "harness.replay": "harness.play.replay",
    "harness.protocol": "harness.play.protocol",
    "harness.protocol.messages": "harness.play.protocol.messages",
    "harness.protocol.stdio": "harness.play.protocol.stdio",
    "harness.protocol.http": "harness.play.protocol.http",
    "harness.protocol.referee": "harness.play.protocol.referee",
    "harness.protocol.check": "harness.play.protocol.check",
    "harness.protocol.serve": "harness.service.serve",
    "harness.protocol.app": "harness.service.app",
    "harness.fit": "harness.players.fit",
    "harness.fit_kernels": "harness.players.fit.kernels",
    "harness.players.fit_kernels": "harness.players.fit.kernels",
    "harness.levels": "harness.players.levels",
    "harness.opponents": "harness.players.opponents",
    "harness.calibrate": "harness.players.calibrate",
    "harness.summary": "harness.reports.summary",
    "harness.report": "harness.reports.report",
    "harness.analysis_files": "harness.reports.analysis_files",
    "harness.review": "harness.reports.review",
    "harness.plot": "harness.reports.plot",
    "harness.quality": "harness.reports.quality",
    "harness.compare": "harness.reports.compare",
    "harness.compare_exact": "harness.reports.compare_exact",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):  # the new module itself, imported under its own name
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        # the import system set the old name's spec on the module: give it back its own, so the module
        # keeps its name for importlib.resources, pickles and reloads
        module.__spec__ = self.spec


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
