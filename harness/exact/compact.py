"""A value table made small for export (a level shipped to JavaScript): quantised, delta-coded, gzip.

The exported table holds the solver's turn-start value of every state of the rule set's layout
(:class:`harness.exact.plan.Plan`: only upper subtotals reachable with the filled upper boxes, only
top-to-bottom sheets with forced order; a randomised level reaches every one of them, and every
decision reads the values of all its successors, so none is dropped beyond the layout's own).

Two kinds:

* ``f64``: the float64 values as they are, little-endian (full precision: the level plays the
  harness's own games to the bit);
* ``q``: each value rounded to a multiple of ``2**-shift`` points, stored as the integer
  ``q = round(V * 2**shift)``; along each (mask, flag) item's upper-subtotal slots q is coded as
  the difference from the previous slot (the first slot against the previous item's first), the
  differences zigzag-coded and written one byte plane after another (low bytes of every state,
  then the next bytes...), which gzip packs well. Decoding gives ``q * 2**-shift``, exactly the same
  double in Python and JavaScript (a power of two scales exactly).

The file (before gzip): ``YZT1``, a little-endian uint32 header length, the JSON header (format,
kind, states, shift, planes, rule-set digest, harness version), the body. gzip with mtime 0 and no
file name: the same table gives the same bytes. The loss of a quantised table against full precision
is measured exactly by :mod:`harness.exact.evaluate` (the solver bot's ``table`` parameter plays one).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import struct
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from harness.exact.plan import Plan, Solution, build_plan
from harness.game.rules import RuleSet
from harness.util.errors import UserError

MAGIC = b"YZT1"
#: The manifest's format and the table's (bumped when what they hold changes).
MANIFEST_FORMAT = "yatzy-level/1"
TABLE_FORMAT = "yatzy-level-table/1"
KINDS = ("q", "f64")
#: Default quantisation: values to 1/256 point (the loss it costs is measured, not assumed).
DEFAULT_SHIFT = 8


def harness_version() -> str:
    """The installed harness's version (what a table and its module are stamped with)."""
    try:
        return version("yatzy-harness")
    except PackageNotFoundError:
        return "unknown"


def _item_starts(plan: Plan) -> np.ndarray:
    lay = plan.layout
    n = lay.nslot[lay.umask_of[plan.item_mask]].astype(np.int64)
    return np.cumsum(n) - n


def encode(rules: RuleSet, values: np.ndarray, kind: str = "q", shift: int = DEFAULT_SHIFT) -> bytes:
    """The gzip bytes of a value table (see the module docstring); reproducible."""
    if kind not in KINDS:
        raise UserError(f"table kind must be one of {', '.join(KINDS)}, got {kind!r}")
    plan = build_plan(rules)
    v = np.asarray(values, dtype=np.float64)
    if v.shape != (plan.n_states,):
        raise ValueError(f"values must be ({plan.n_states},), got {v.shape}")
    head: dict[str, Any] = {
        "format": TABLE_FORMAT,
        "kind": kind,
        "states": int(plan.n_states),
        "digest": rules.digest,
        "harness": harness_version(),
    }
    if kind == "f64":
        body = v.astype("<f8").tobytes()
    else:
        if not 0 <= shift <= 30:
            raise UserError(f"shift must be 0..30 (values to 2**-shift points), got {shift}")
        q = np.rint(v * 2.0**shift).astype(np.int64)
        d = np.empty_like(q)
        d[0] = q[0]
        d[1:] = q[1:] - q[:-1]
        starts = _item_starts(plan)
        firsts = q[starts]
        d[starts] = firsts - np.concatenate([[0], firsts[:-1]])
        z = ((d << 1) ^ (d >> 63)).astype(np.uint64)
        planes = max(1, (int(z.max()).bit_length() + 7) // 8)
        body = b"".join(((z >> np.uint64(8 * i)) & np.uint64(255)).astype(np.uint8).tobytes() for i in range(planes))
        head |= {"shift": int(shift), "planes": planes}
    hb = json.dumps(head, sort_keys=True, separators=(",", ":")).encode()
    raw = MAGIC + struct.pack("<I", len(hb)) + hb + body
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", fileobj=buf, mode="wb", compresslevel=9, mtime=0) as g:
        g.write(raw)
    return buf.getvalue()


def decode(rules: RuleSet, data: bytes) -> tuple[np.ndarray, dict[str, Any]]:
    """(values (states,) float64, header) of a table's gzip bytes, checked against ``rules`` and
    this harness's version (a :class:`UserError` saying which differs)."""
    try:
        raw = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise UserError(f"not a gzip level table ({exc})") from None
    if raw[:4] != MAGIC:
        raise UserError("not a yatzy-harness level table (bad magic)")
    (hl,) = struct.unpack("<I", raw[4:8])
    head = json.loads(raw[8 : 8 + hl])
    if head.get("format") != TABLE_FORMAT:
        raise UserError(f"level table format {head.get('format')!r}, this harness reads {TABLE_FORMAT}")
    if head.get("harness") != harness_version():
        raise UserError(
            f"the level table was written by yatzy-harness {head.get('harness')}, this is "
            f"{harness_version()}: export it again"
        )
    if head.get("digest") != rules.digest:
        raise UserError(
            f"the level table is of another rule set (digest {str(head.get('digest'))[:12]}), "
            f"not {rules.name} ({rules.digest[:12]})"
        )
    plan = build_plan(rules)
    n = int(head["states"])
    if n != plan.n_states:
        raise UserError(f"the level table has {n} states, rule set {rules.name} has {plan.n_states}")
    body = raw[8 + hl :]
    if head["kind"] == "f64":
        return np.frombuffer(body, dtype="<f8", count=n).astype(np.float64), head
    planes = int(head["planes"])
    z = np.zeros(n, dtype=np.uint64)
    for i in range(planes):
        z |= np.frombuffer(body, dtype=np.uint8, count=n, offset=i * n).astype(np.uint64) << np.uint64(8 * i)
    d = (z >> np.uint64(1)).astype(np.int64) ^ -(z & np.uint64(1)).astype(np.int64)
    starts = _item_starts(plan)
    # the first slot of each item is a difference from the previous item's first: a running sum
    firsts = np.cumsum(d[starts])
    d = d.copy()
    d[starts] = 0
    seg = np.cumsum(d)
    # within an item: its first plus the running sum of its differences since the item began
    item_of = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))
    q = firsts[item_of] + seg - seg[starts][item_of]
    return q.astype(np.float64) * 2.0 ** -int(head["shift"]), head


@dataclass(frozen=True)
class Exported:
    """An export directory read back: its manifest, the table's values and a :class:`Solution` over them."""

    path: Path
    manifest: dict[str, Any]
    solution: Solution


def read_manifest(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    f = p / "manifest.json" if p.is_dir() else p
    try:
        m = json.loads(f.read_text())
    except FileNotFoundError:
        raise UserError(
            f"{f}: no such file (an export directory of `yatzy-harness export` holds manifest.json)"
        ) from None
    except ValueError as exc:
        raise UserError(f"{f}: not JSON ({exc})") from None
    if not isinstance(m, dict) or m.get("format") != MANIFEST_FORMAT:
        raise UserError(f"{f}: not a level manifest (format {MANIFEST_FORMAT})")
    return m


def load_export(path: str | Path, rules: RuleSet) -> Exported:
    """The export directory's table as a :class:`Solution` of ``rules``: the manifest's sha256 of the
    table checked, then the table's rule set and harness version (a :class:`UserError` for any)."""
    d = Path(path)
    m = read_manifest(d)
    if m.get("digest") != rules.digest:
        raise UserError(
            f"{d}: the level is of rule set {m.get('rules', {}).get('name')!r} "
            f"(digest {str(m.get('digest'))[:12]}), not {rules.name} ({rules.digest[:12]})"
        )
    f = d / str(m["table"]["file"])
    data = f.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if sha != m["table"]["sha256"]:
        raise UserError(f"{f}: sha256 {sha[:16]}... is not the manifest's {str(m['table']['sha256'])[:16]}...")
    values, _ = decode(rules, data)
    values.setflags(write=False)
    plan = build_plan(rules)
    sol = Solution(rules, plan, values, float(values[0]) + plan.bonus0, 0.0, True, None)
    return Exported(d, m, sol)


__all__ = [
    "DEFAULT_SHIFT",
    "Exported",
    "KINDS",
    "MANIFEST_FORMAT",
    "TABLE_FORMAT",
    "decode",
    "encode",
    "harness_version",
    "load_export",
    "read_manifest",
]
