"""The commands wing: one module per subcommand, named after it, imported only when that command runs.

Each ``harness/commands/<name>.py`` has ``configure(parser)`` (its description, examples and
options) and ``run(args) -> exit code``; it parses, calls the library, and renders. The registry
below is the only list of commands: ``yatzy-harness --help`` reads the summaries from it without
importing any command, and a command's own module is imported only when it is named. Adding a
subcommand is one new module plus one line here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Command:
    """A subcommand: its name (= its module's name) and its one-line summary for ``--help``."""

    name: str
    summary: str

    @property
    def module(self) -> str:
        return f"{__name__}.{self.name}"

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


#: Every subcommand, in the order of ``yatzy-harness --help``.
COMMANDS: tuple[Command, ...] = (
    Command("rules", "list rule sets, or show one sheet"),
    Command("score", "score one roll in every box"),
    Command("strategies", "list bots with their parameters"),
    Command("run", "play a run, tournament or gauntlet into a run directory"),
    Command("replay", "replay one game alone with a turn-by-turn trace"),
    Command("records", "check a file of game records and show them as text"),
    Command("solve", "exact optimal expected score and score distribution"),
    Command("evaluate", "exact score distribution and head-to-heads of solitaire bots (no sampling)"),
    Command("sweep", "exact figures, head-to-heads and depth of skill across values of rule settings"),
    Command("odds", "probability of making each lower box within one turn"),
    Command("advise", "exact value and regret of every option of a position"),
    Command("review", "one game's review page: every decision, its luck and regret, the chances to win (HTML)"),
    Command("report", "summarise a run directory (tables, plots, HTML)"),
    Command("compare", "paired comparison of two runs (exit 0 no change, 1 change, 2 inconclusive)"),
    Command("calibrate", "find the bot parameter value that hits a target mean score or win rate"),
    Command("analyse", "luck and skill of every player in game records"),
    Command("fit", "fit a bot model (the solver's temperature / blunder dial) to players' recorded decisions"),
    Command("engine", "external engines: check one for conformance, or play a harness bot as one (stdio)"),
    Command("serve", "serve tuned levels and built-in bots over HTTP (the engine protocol, advise, OpenAPI)"),
    Command("export", "a level as a JavaScript module with its compact value table (browsers, Node)"),
)

BY_NAME: dict[str, Command] = {c.name: c for c in COMMANDS}
