"""Yatzy-family bot harness: rules, engine, solver, runner, statistics and reports."""
