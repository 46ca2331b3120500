"""The one exception type for mistakes a user can make (bad config, unknown name, bad value)."""


class UserError(ValueError):
    """A problem in the user's input; its message names the file, key or value at fault.

    The CLI prints the message on one line without a traceback and exits with status 2.
    """
