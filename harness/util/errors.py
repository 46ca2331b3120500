"""The exception types the command line turns into one message: a user's mistake (exit 2), a run that stopped (exit 1)."""


class UserError(ValueError):
    """A problem in the user's input; its message names the file, key or value at fault.

    The CLI prints the message on one line without a traceback and exits with status 2.
    """


class RunFailed(RuntimeError):
    """Games could not be played to the end (a bot failed, a worker died); the directory is resumable.

    The message is a short block for the console (what failed, the replay and resume commands);
    the CLI prints it and exits with status 1. ``details`` holds the traceback, if any.
    """

    details: str | None = None


#: ``extra=`` of a log record that belongs in the run's log only: the command prints its own
#: summary of the same event on stderr (a failing bot's traceback, a run that stopped).
RUN_LOG_ONLY = {"run_log_only": True}


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C in disguise: a ``KeyboardInterrupt`` in its chain of causes (a numba
    kernel interrupted by SIGINT returns with the interrupt set, which Python reports as a
    ``SystemError`` raised from it)."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False
