"""The server's tokens: read from a token file that cannot silently turn authentication off.

A token file holds one token a line (several at once, so a token is rotated without downtime: add
the new one, send SIGHUP, move the clients, remove the old one, SIGHUP again). A file that is not
UTF-8, holds no token, or holds a token under :data:`MIN_TOKEN` bytes is an error that names it,
never "no token". A request's ``Authorization`` header is compared as bytes, whatever it holds.
"""

from __future__ import annotations

import hmac
from pathlib import Path

from harness.util.errors import UserError

#: The shortest token accepted, in bytes (a guessable token is no token).
MIN_TOKEN = 16


def read_tokens(path: str) -> tuple[bytes, ...]:
    """The tokens of a token file (one a line, blank lines skipped), or a :class:`UserError`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"token file {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"token file {path}: not UTF-8 text") from None
    tokens = [line.strip() for line in text.splitlines() if line.strip()]
    if not tokens:
        raise UserError(f"token file {path}: empty or only whitespace; a server with a token file needs a token")
    for i, tok in enumerate(tokens, 1):
        raw = tok.encode("utf-8")
        if len(raw) < MIN_TOKEN:
            raise UserError(
                f"token file {path}: token on line {i} is {len(raw)} bytes, under the {MIN_TOKEN} a token needs"
            )
        if any(c.isspace() for c in tok) or not tok.isprintable():
            raise UserError(f"token file {path}: token on line {i} holds spaces or control characters")
    return tuple(t.encode("utf-8") for t in tokens)


def authorised(headers: list[tuple[bytes, bytes]], tokens: tuple[bytes, ...]) -> bool:
    """Whether a request's raw headers carry exactly one ``Authorization: Bearer TOKEN`` with one of
    ``tokens`` (every token compared, in constant time each): False for anything else."""
    if not tokens:
        return True
    got = [v for k, v in headers if k.lower() == b"authorization"]
    if len(got) != 1 or not got[0].startswith(b"Bearer "):
        return False
    offered = got[0][7:].strip()
    ok = False
    for tok in tokens:
        ok |= hmac.compare_digest(offered, tok)
    return ok
