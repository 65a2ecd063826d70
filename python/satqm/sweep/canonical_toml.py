"""A small, canonical TOML writer for scenarios (used by :mod:`satqm.sweep`).

A sweep applies its axis values to the parsed base scenario and writes the
result back as TOML: that text is what runs, what the run's folder keeps in
``scenario.toml``, and (with the seed and the satqm version) what names the
run's folder. So the output must be a pure function of the parsed data, the
same on every machine and with every library version: this writer is part of
satqm, not a dependency, and its output format must not change casually
(a change renames every run folder, so finished sweeps would run again).

Layout: in each table, plain keys first (in the data's order), then
sub-tables as ``[a.b]`` and arrays of tables as ``[[a]]``. Inside an array of
tables, sub-tables are written inline (``tcp = { mss = 1000 }``). Strings are
basic strings with escapes; floats are Python's shortest round-trip ``repr``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["dumps", "format_value", "check_value"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _key(k: str) -> str:
    if not isinstance(k, str):
        raise TypeError(f"TOML keys are strings, not {type(k).__name__}")
    return k if _BARE_KEY.match(k) else _string(k)


def _string(s: str) -> str:
    out = []
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _float(v: float) -> str:
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = repr(v)
    # repr gives "1.0", "0.1", "1e-05", "1e+16": all valid TOML floats.
    return r


def format_value(v: Any) -> str:
    """One TOML value (inline form)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        if not v:
            return "{}"
        return "{ " + ", ".join(f"{_key(k)} = {format_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write a {type(v).__name__} in TOML")


def check_value(v: Any) -> None:
    """Raise :class:`TypeError` if ``v`` cannot be written as a TOML value."""
    format_value(v)


def _is_table_array(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def _table(data: Mapping[str, Any], prefix: str, lines: list[str]) -> None:
    nested: list[tuple[str, Any]] = []
    for k, v in data.items():
        if isinstance(v, Mapping) or _is_table_array(v):
            nested.append((k, v))
        else:
            lines.append(f"{_key(k)} = {format_value(v)}")
    for k, v in nested:
        name = f"{prefix}{_key(k)}"
        if isinstance(v, Mapping):
            lines.append("")
            lines.append(f"[{name}]")
            _table(v, name + ".", lines)
        else:
            for item in v:
                lines.append("")
                lines.append(f"[[{name}]]")
                lines.extend(f"{_key(ik)} = {format_value(iv)}" for ik, iv in item.items())


def dumps(data: Mapping[str, Any]) -> str:
    """The TOML text of ``data`` (a dict as :mod:`tomllib` returns it)."""
    lines: list[str] = []
    _table(data, "", lines)
    while lines and lines[0] == "":
        lines.pop(0)
    return "\n".join(lines) + "\n"
