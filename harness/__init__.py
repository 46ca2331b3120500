"""Yatzy-family bot harness: rules, engine, solver, runner, statistics and reports."""

from harness.moved import install as _install_moved

# the flat folder's old import paths (harness.solver, harness.runner...) lead to the layered modules
_install_moved()
