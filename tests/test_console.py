"""Console behaviour shared by every command: quiet broken pipes, --version, JSON conversion, help."""

from __future__ import annotations

import math
import shlex
import subprocess
import sys

import numpy as np
import pytest

from harness.cli import EXIT_BROKEN_PIPE, build_parser, main
from harness.util.jsonable import jsonable


@pytest.mark.parametrize("argv", [["rules", "show", "scandinavian", "--json"], ["strategies", "--json"]])
def test_closed_stdout_exits_quietly_like_unix_tools(argv):
    """``... --json | head``: the reader goes away; no BrokenPipeError traceback, exit 141 (SIGPIPE)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from harness.cli import main; sys.exit(main())", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # before the command writes anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert err == ""


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("yatzy-harness ")


def test_jsonable_turns_numpy_and_non_finite_values_into_json():
    d = jsonable(
        {
            "a": np.int16(3),
            "b": np.float32(0.5),
            "c": math.nan,
            "d": (1, np.inf),
            "e": np.arange(2),
            "f": np.bool_(True),
        }
    )
    assert d == {"a": 3, "b": 0.5, "c": None, "d": [1, None], "e": [0, 1], "f": True}


def test_every_subcommand_has_examples_in_its_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        assert p.epilog and p.epilog.startswith("examples:"), f"{name} --help has no examples"
        examples = [line.strip() for line in p.epilog.splitlines()[1:] if line.strip()]
        assert all(x.startswith("yatzy-harness ") for x in examples), (name, examples)
        assert sum(x.startswith(f"yatzy-harness {name}") for x in examples) >= 2, (name, examples)
        for x in (e.split(" | ")[0] for e in examples):  # every example parses as written
            build_parser().parse_args(shlex.split(x, comments=True)[1:])
