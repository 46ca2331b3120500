"""``yatzy-harness strategies``: parameter ranges read as ranges; the examples of ``strategies`` and
``score`` help work. (Here rather than tests/test_cli.py only because of who edits what.)"""

from __future__ import annotations

import shlex

import pytest

from harness.game import registry
from harness.cli import build_parser, main


def listing(capsys, monkeypatch, params):
    item = {"name": "toy", "description": "a toy", "classifier": {}, "module": "toy", "params": params}
    monkeypatch.setattr(registry, "describe", lambda: [item])
    assert main(["strategies"]) == 0
    return capsys.readouterr().out


def param(lo, hi, type_="float"):
    return {"name": "p", "type": type_, "default": 0, "description": "d", "min": lo, "max": hi}


@pytest.mark.parametrize(
    "lo,hi,shown",
    [(0.0, None, "(float >= 0.0)"), (None, 1, "(float <= 1)"), (0, 1, "(float 0..1)"), (None, None, "(float)")],
)
def test_open_ranges_read_as_ranges(capsys, monkeypatch, lo, hi, shown):
    out = listing(capsys, monkeypatch, [param(lo, hi)])
    assert f"p=0 {shown}: d" in out
    assert "None" not in out


def test_builtin_listing_has_no_none(capsys):
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    assert "temperature=0.0 (float >= 0.0)" in out and "blunder=0.0 (float 0.0..1.0)" in out
    assert "None" not in out


def subparser(name):
    parser = build_parser()
    return parser, next(a for a in parser._subparsers._group_actions if name in a.choices).choices[name]


@pytest.mark.parametrize("command", ["strategies", "score"])
def test_help_examples_parse_and_run(capsys, command):
    parser, sub = subparser(command)
    lines = [ln.strip() for ln in (sub.epilog or "").splitlines()[1:]]
    assert sub.epilog.startswith("examples:") and 2 <= len(lines) <= 3
    for line in lines:
        argv = shlex.split(line)
        assert argv[0] == "yatzy-harness"
        parser.parse_args(argv[1:])  # every flag of every example exists
        if argv[1] == command:
            assert main(argv[1:]) == 0, line
    capsys.readouterr()


def test_score_metavars_match_the_other_commands():
    _, sub = subparser("score")
    usage = sub.format_usage()
    assert "RULES DIE [DIE ...]" in usage  # upper case, as --rules RULES elsewhere
