"""The exact layer's mathematics: value tables, target tables, distributions, exact evaluation and courses.

The jobs that run many exact evaluations are :mod:`harness.jobs`; the studies built on them (the
depth of skill, sweeps, their cost) are :mod:`harness.studies`.
"""
