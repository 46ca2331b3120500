"""The flat folder's old import paths (harness/moved.py) still import, as the very modules they name now."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from harness.moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_new_module_itself(old):
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert module.__name__ == MOVED[old] and module.__spec__.name == MOVED[old]  # its own name kept


def test_every_new_path_is_a_module_of_the_tree_and_no_old_file_is_left():
    from pathlib import Path

    import harness

    root = Path(harness.__file__).parent
    for old, new in MOVED.items():
        assert importlib.util.find_spec(new) is not None, new
        flat = root / (old.removeprefix("harness.").replace(".", "/") + ".py")
        assert not flat.exists(), f"{flat} is both a file and a moved path"


def test_the_old_exact_module_names_come_from_the_package():
    from harness.exact import ExactTables, outside
    from harness.exact.figures import ExactTables as T, outside as o

    assert ExactTables is T and outside is o
    with pytest.raises(AttributeError):
        importlib.import_module("harness.exact").nothing_here


def test_from_imports_and_pickles_through_an_old_path():
    code = ("import pickle\nfrom harness.rules import load_rules\nfrom harness import solver\n"
            "import harness.game.rules as R\nassert load_rules is R.load_rules\n"
            "print(type(pickle.loads(pickle.dumps(load_rules('forced')))).__module__, solver.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["harness.game.ruleset", "harness.exact.solver"]
