"""What "the same result" means on another machine (docs/scale.md, "The same result on another
machine"), as the golden tests and the examples' checks apply it: integers, strings and the text
around numbers exactly; a floating-point figure within a relative tolerance of the recorded one.

Two runs on one machine are compared byte for byte elsewhere (tests/test_runner.py,
tests/test_cluster.py); these helpers are for a figure recorded on one machine and computed again
on another, whose processor may add, round or take exponentials in its own way.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

#: Figures computed exactly (sums of products of the dice's probabilities, no search): relative.
EXACT_REL = 1e-12
#: A figure below this in magnitude counts as zero: what is left of 1 - a - b when a + b is 1.
ZERO = 1e-15

#: A number as printed: optional sign, digits (thousands may be grouped by commas), an optional
#: fraction and exponent; not part of a word (x86_64, a hash) and not the tail of another number.
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w])")
_SPACE = re.compile(r"\s+")


def close(a: float, b: float, rel: float) -> bool:
    """a and b agree within ``rel`` of the larger (both below :data:`ZERO`: both zero)."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return False
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), ZERO)


def _is_float(token: str) -> bool:
    return "." in token or "e" in token or "E" in token


def numbers_agree(want: str, have: str, rel: float) -> bool:
    """Two printed numbers: integers as written (a count, a score, a seed); a float by value."""
    if want == have:
        return True
    if not (_is_float(want) and _is_float(have)):
        return False
    return close(float(want.replace(",", "")), float(have.replace(",", "")), rel)


def split_numbers(text: str) -> tuple[list[str], list[str]]:
    """(the text between the numbers, the numbers): len(texts) == len(numbers) + 1."""
    texts, numbers, at = [], [], 0
    for m in NUMBER.finditer(text):
        texts.append(text[at : m.start()])
        numbers.append(m.group(0))
        at = m.end()
    texts.append(text[at:])
    return texts, numbers


def _spaces(text: str) -> str:
    return _SPACE.sub(" ", text)


def widths_differ(want: str, have: str) -> bool:
    """Whether a number of ``have`` is printed wider or narrower than its place in ``want``: then
    its table column's padding (on every row) may legitimately differ."""
    (_, a), (_, b) = split_numbers(want), split_numbers(have)
    return any(len(x) != len(y) for x, y in zip(a, b))


def text_agrees(want: str, have: str, rel: float, loose_padding: bool = False, prefix: bool = False) -> bool:
    """``have`` says what ``want`` says: the same text between the numbers, the same integers,
    floats within ``rel``. With ``loose_padding`` (a number's width changed in the block: see
    :func:`widths_differ`) every run of spaces counts as one and the line's ends are stripped.
    With ``prefix``, ``want`` is a start of ``have`` (its last number may be cut short)."""
    tw, nw = split_numbers(want)
    th, nh = split_numbers(have)
    if loose_padding:
        tw, th = [_spaces(t) for t in tw], [_spaces(t) for t in th]
        tw[0], th[0] = tw[0].lstrip(), th[0].lstrip()
        if not prefix:
            tw[-1], th[-1] = tw[-1].rstrip(), th[-1].rstrip()
    if prefix:
        k = len(nw)
        if len(nh) < k or tw[:k] != th[:k]:
            return False
        if not all(numbers_agree(a, b, rel) for a, b in zip(nw[:-1], nh)):
            return False
        # a shown line ending in a number may cut it: its digits start the printed one
        if k and not (numbers_agree(nw[-1], nh[k - 1], rel) or (tw[k] == "" and nh[k - 1].startswith(nw[-1]))):
            return False
        return th[k].startswith(tw[k])
    return tw == th and len(nw) == len(nh) and all(numbers_agree(a, b, rel) for a, b in zip(nw, nh))


def json_differences(want: Any, got: Any, rel_of: Callable[[str], float], path: str = "") -> list[str]:
    """Where ``got`` differs from the recorded ``want`` beyond the contract, one line each naming
    its JSON path: dict keys and list lengths, booleans, integers and strings' text exactly,
    floats (also the numbers inside a string, like a calibrated ``solver:temperature=...``) within
    ``rel_of(path)``."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for k in sorted(set(want) | set(got), key=str):
            p = f"{path}/{k}"
            if k not in got:
                out.append(f"{p}: missing (recorded {want[k]!r})")
            elif k not in want:
                out.append(f"{p}: not recorded (now {got[k]!r})")
            else:
                out += json_differences(want[k], got[k], rel_of, p)
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{path}: {len(got)} items, recorded {len(want)}"]
        return [d for i, (w, g) in enumerate(zip(want, got)) for d in json_differences(w, g, rel_of, f"{path}[{i}]")]
    if type(want) is float and type(got) is float:
        rel = rel_of(path)
        if close(want, got, rel):
            return []
        off = abs(want - got) / max(abs(want), abs(got)) if math.isfinite(want - got) else math.inf
        return [f"{path}: {got!r}, recorded {want!r} (relative difference {off:.1e}, tolerance {rel:g})"]
    if isinstance(want, str) and isinstance(got, str):
        if text_agrees(want, got, rel_of(path)):
            return []
        return [
            f"{path}: {got!r}, recorded {want!r} (text or integers differ, or a number by more than {rel_of(path):g})"
        ]
    if type(want) is not type(got) or want != got:
        return [f"{path}: {got!r}, recorded {want!r}"]
    return []
