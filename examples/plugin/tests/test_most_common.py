"""The harness's contract for every bot, run on this plugin's bot as installed (through its entry point)."""

from harness.testing import StrategyContract


class TestMostCommon(StrategyContract):
    spec = "most-common"  # the spec the checks build, parameters included
    opponent = "timeout"  # who it plays against in the checks
    too_costly = {}  # rule sets it cannot play in CI time, each with the reason
