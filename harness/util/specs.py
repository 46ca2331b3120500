"""Bot specs as people write them: ``name:key=value,...``, and lists of them, parsed in one place.

Light on purpose (no numpy, no numba): every command's option parsing imports it.
"""

from __future__ import annotations

from harness.util.errors import UserError


def split_outside_quotes(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` where it is not inside double or single quotes (quotes kept)."""
    out, cur, quote = [], [], ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == sep:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if quote:
        raise UserError(f"unbalanced {quote} in {text!r}")
    out.append("".join(cur))
    return out


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``name:key=value,key=value`` -> (name, {key: value}) with clear errors. A value may be quoted
    (``engine:cmd="node bot.js --fast",move_ms=5``): commas inside quotes belong to the value."""
    name, _, rest = spec.strip().partition(":")
    if not name:
        raise UserError(f"empty strategy name in {spec!r}")
    params: dict[str, str] = {}
    if rest:
        for item in split_outside_quotes(rest):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise UserError(f"strategy {spec!r}: expected key=value, got {item!r}")
            params[key.strip()] = _unquote(value)
    return name, params


def split_specs(text: str) -> list[str]:
    """``"solver:temperature=0.5,blunder=0.1,greedy"`` -> ``["solver:temperature=0.5,blunder=0.1", "greedy"]``.

    The one parser of every list of bots (``run --seats``, ``--entrants`` of every command). Commas
    separate bots, but a piece ``key=value`` whose key has no ``:`` continues the previous bot's
    parameters, so specs with several parameters survive a list; commas inside quotes
    (``engine:cmd="node bot.js,x"``) never split.
    """
    out: list[str] = []
    for raw in split_outside_quotes(text):
        piece = raw.strip()
        if not piece:
            raise UserError(f"empty strategy spec in {text!r}")
        key = piece.split("=", 1)[0]
        if "=" in piece and ":" not in key and out:
            out[-1] += "," + piece
        else:
            out.append(piece)
    return out
