"""The models a fit knows and their names: the solver's dial (``solver:...``) and the extended
family (``kinds``, ``mixed``, ``paced``), their parameters and the temperatures' range, and the
parsing of ``--model`` (:func:`parse_model`, :func:`parse_models`). The models themselves are
described in :mod:`harness.players.fit`'s docstring."""

from __future__ import annotations

from typing import Iterable

from harness.util.errors import UserError

#: The extended family's parameters, in its kernels' order (:func:`harness.players.fit.kernels.family_loglik`).
FAMILY = ("weight", "keep_temperature", "box_temperature", "blunder")
#: The models ``fit`` knows: name -> the parameters it fits. The solver's dial (``solver:...``;
#: the others stay 0) and the extended family: ``kinds`` (a temperature per decision kind and a
#: blunder rate, weight 0), ``mixed`` (and the weight on the myopic values), ``paced`` (the same
#: with the weight on the paced values instead).
MODELS: dict[str, tuple[str, ...]] = {
    "solver:temperature": ("temperature",),
    "solver:blunder": ("blunder",),
    "solver:temperature,blunder": ("temperature", "blunder"),
    "kinds": ("keep_temperature", "box_temperature", "blunder"),
    "mixed": FAMILY,
    "paced": FAMILY,
}
#: The values each weighted model of the family mixes with the exact ones: ``mixed`` the myopic
#: values (:attr:`harness.decisions.analysis.DecisionTable.myopic`), ``paced`` the paced values
#: (:attr:`harness.decisions.analysis.DecisionTable.paced`).
MIXES = {"mixed": "myopic", "paced": "paced"}
#: Other names of models: ``dial`` is the default model, the solver's whole dial.
ALIASES = {"dial": "solver:temperature,blunder"}
#: What ``--model all`` fits, and compares player by player on held-out games (the population
#: picture shows the last one's parameters).
ALL_MODELS = ("solver:temperature,blunder", "kinds", "paced", "mixed")
FAMILY_MODELS = ("kinds", "mixed", "paced")
#: Temperatures are searched in [T_MIN, T_MAX] (log scale) and at 0; beyond T_MAX play is uniform
#: to within the noise of any record.
T_MIN = 1e-3
T_MAX = 1e3


def parse_model(text: str) -> str:
    """The canonical model name of ``text`` (parameter order free); UserError naming the models."""
    name, _, params = text.replace(" ", "").partition(":")
    ps = [x for x in params.split(",") if x]
    if name == "solver" and ps and len(set(ps)) == len(ps) and set(ps) <= {"temperature", "blunder"}:
        return "solver:" + ",".join(x for x in ("temperature", "blunder") if x in ps)
    if not params and name in FAMILY_MODELS:
        return name
    if not params and name in ALIASES:
        return ALIASES[name]
    raise UserError(
        f"unknown model {text!r}: the models are {', '.join([*MODELS, *ALIASES])}, or several joined by '+', or all"
    )


def parse_models(text: str) -> tuple[str, ...]:
    """The models of ``text``: one model, several joined by ``+`` (``dial+mixed``) or ``all``
    (:data:`ALL_MODELS`); each once, in the order given."""
    if text.strip() == "all":
        return ALL_MODELS
    out: list[str] = []
    for part in text.split("+"):
        m = parse_model(part)
        if m not in out:
            out.append(m)
    return tuple(out)


def is_family(model: str) -> bool:
    """A model of the extended family (``kinds``, ``mixed``, ``paced``): no solver bot plays it."""
    return model in FAMILY_MODELS


def mixes(models: Iterable[str]) -> set[str]:
    """The values besides the exact ones that ``models`` need (:data:`MIXES`: ``myopic``, ``paced``)."""
    return {MIXES[m] for m in models if m in MIXES}
