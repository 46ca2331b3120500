"""The ``yatzy-harness`` command line: the parser shell over the commands wing, errors as one line.

The subcommands live in :mod:`harness.commands` (one module each, listed in its registry). A run
of the program imports only the command it names; ``--help`` and ``--version`` import none.
Exit codes: 2 a user's mistake (one line on stderr), 1 a run that stopped (a bot failed), 130
interrupted, 141 stdout closed by its reader (``... | head``); otherwise the command's own.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import Any, Sequence

from harness.commands import COMMANDS
from harness.commands.options import HelpFormatter, end_bars
from harness.util.cache import command_scope
from harness.util.errors import RunFailed, UserError

EXIT_USAGE = 2
#: Games could not be played to the end (a bot failed); the run directory is resumable.
EXIT_RUN_FAILED = 1
#: What a shell reports for a process killed by SIGPIPE (128 + 13): ``... | head`` closed stdout.
EXIT_BROKEN_PIPE = 141
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # argparse's own usage errors: one line, exit 2
        # a command's parser is named "yatzy-harness run"; main() puts "yatzy-harness: error: " in
        # front, so only the command's words go here (else the line names the program twice)
        words = self.prog.split(maxsplit=1)[1:]
        raise UserError(f"{words[0]}: {message}" if words else message)


def _named_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names (its first word that is not an option), if any."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with ``only``, every command is listed but only that one is configured
    (its module imported), which is what a run of the program needs."""
    parser = _Parser(prog="yatzy-harness", description="Yatzy-family bots playing each other by the million.")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the program's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.summary)
        if only is None or only == c.name:
            module = c.load()
            module.configure(p)
            p.set_defaults(func=module.run)
    return parser


class _Version(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked (importlib.metadata
    costs every other command ~50 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = version("yatzy-harness")
        except PackageNotFoundError:  # running from a checkout that was not installed
            text = "(not installed)"
        print(f"{parser.prog} {text}")
        parser.exit()


def _quiet_broken_pipe() -> int:
    """stdout's reader went away (``... | head``): stop quietly, as Unix tools do.

    Point stdout at /dev/null so that the interpreter's final flush does not raise again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def _speak_on_first_run(args: argparse.Namespace) -> None:
    """First-run steps (compiling kernels, solving a table) draw on stderr when it is a terminal
    and neither --quiet nor --json was given (:mod:`harness.util.progress`)."""
    from harness.util import progress

    progress.enable(sys.stderr.isatty() and not getattr(args, "quiet", False) and not getattr(args, "json", False))


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(only=_named_command(argv) or "")
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        _speak_on_first_run(args)
        with command_scope():  # the cache directory the command selects is its own
            return int(args.func(args) or 0)
    except UserError as exc:
        print(f"yatzy-harness: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RunFailed as exc:
        verbose = getattr(exc, "verbose", None)  # set by commands that have a --verbose flag
        if verbose and exc.details:
            print(exc.details.rstrip("\n"), file=sys.stderr)
        hint = "\n  (--verbose prints the traceback here)" if exc.details and verbose is False else ""
        print(f"yatzy-harness: {exc}{hint}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except KeyboardInterrupt:
        end_bars()  # a bar the stopped step left drawn: the line below starts a line of its own
        print("yatzy-harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def entry() -> int:
    """The program's entry point (the ``yatzy-harness`` script and ``python -m harness.cli``):
    :func:`main`, then every object left frozen out of the garbage collector's reach.

    The process ends next; its objects are freed by reference counts as the modules are torn
    down, and the collections the interpreter runs on its way out would only walk what is left,
    numba's typing and LLVM registries above all: about 0.67 s at the end of every command that
    loaded a kernel (over a quarter of a one-game ``review``). Exit handlers run as before. Not part of
    :func:`main`, which tests and library callers call many times in one process.
    """
    rc = main()
    gc.freeze()
    return rc


if __name__ == "__main__":
    sys.exit(entry())
