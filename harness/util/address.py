"""A Dask scheduler's address, checked for its form before anything connects (light: the config imports it)."""

from __future__ import annotations

import re

from harness.util.errors import UserError

_ADDRESS = re.compile(r"^(?:(tcp|tls)://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$")


def parse_scheduler(address: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a scheduler address ``[tcp://|tls://]HOST:PORT``; one line at once otherwise."""
    m = _ADDRESS.match(address.strip())
    if m is None or not 0 < int(m.group(3)) < 65536:
        raise UserError(
            f"--scheduler {address!r} is not a Dask scheduler address: give tcp://HOST:PORT "
            f"(e.g. tcp://127.0.0.1:8786), or tls://HOST:PORT"
        )
    return m.group(1) or "tcp", m.group(2).strip("[]"), int(m.group(3))
