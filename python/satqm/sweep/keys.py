"""Key paths into a parsed scenario, and the values a sweep writes there.

An axis key is a dotted path as in the scenario TOML, with list indices in
brackets: ``"topology.bottleneck.buffer"``, ``"aqm[0].max_p"``,
``"traffic[0].tcp.mss"``. A bad key or a value that cannot be written as TOML
raises :class:`satqm.ConfigError` naming the key.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from satqm.scenario import config_error
from satqm.sweep.canonical_toml import check_value, format_value

SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)((?:\[\d+\])*)$")
_INDEX = re.compile(r"\[(\d+)\]")
#: What :func:`get_path` returns for a key the data does not have.
MISSING = object()


def parse_key(key: Any) -> list[str | int]:
    """``"aqm[0].max_p"`` -> ``["aqm", 0, "max_p"]``."""
    if not isinstance(key, str):
        raise config_error(str(key), f"an axis key is a string, not {type(key).__name__}")
    tokens: list[str | int] = []
    for seg in key.split("."):
        m = SEGMENT.match(seg)
        if m is None:
            raise config_error(
                key,
                "not a key path: dotted names with optional [index], like "
                '"topology.bottleneck.buffer" or "aqm[0].max_p"',
            )
        tokens.append(m.group(1))
        tokens.extend(int(i) for i in _INDEX.findall(m.group(2)))
    return tokens


def show_tokens(tokens: Sequence[str | int]) -> str:
    """``["aqm", 0, "max_p"]`` -> ``"aqm[0].max_p"``."""
    out = ""
    for t in tokens:
        out += f"[{t}]" if isinstance(t, int) else (f".{t}" if out else t)
    return out


def get_path(data: Any, key: str) -> Any:
    """The value at ``key`` in ``data``, or :data:`MISSING`."""
    cur = data
    for t in parse_key(key):
        if isinstance(t, int):
            if not isinstance(cur, list) or t >= len(cur):
                return MISSING
        elif not isinstance(cur, dict) or t not in cur:
            return MISSING
        cur = cur[t]
    return cur


def set_path(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` in the parsed scenario ``data``.

    Missing tables on the way are created (the schema then refuses them if
    they are not scenario keys); a missing list element is refused here.
    """
    tokens = parse_key(key)
    cur: Any = data
    for i, t in enumerate(tokens):
        last = i == len(tokens) - 1
        where = show_tokens(tokens[:i]) or "the scenario"
        if isinstance(t, int):
            if not isinstance(cur, list):
                raise config_error(key, f"{where} is not a list in the base scenario")
            if t >= len(cur):
                raise config_error(
                    key,
                    f"the base scenario has no {show_tokens(tokens[: i + 1])} "
                    f"({where} has {len(cur)} entr{'y' if len(cur) == 1 else 'ies'})",
                )
        else:
            if not isinstance(cur, dict):
                raise config_error(key, f"{where} is not a table in the base scenario")
            if not last and t not in cur:
                if isinstance(tokens[i + 1], int):
                    missing = show_tokens(tokens[: i + 1])
                    raise config_error(key, f"the base scenario has no {missing}")
                cur[t] = {}
        if last:
            cur[t] = copy.deepcopy(value)
        else:
            cur = cur[t]


def plain(v: Any) -> Any:
    """numpy scalars and tuples as plain Python values."""
    if type(v).__module__ == "numpy" and hasattr(v, "item"):
        return v.item()
    if isinstance(v, tuple):
        return [plain(x) for x in v]
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, Mapping):
        return {k: plain(x) for k, x in v.items()}
    return v


def check_writable(key: str, v: Any, where: str) -> Any:
    """``v`` as a plain value; :class:`satqm.ConfigError` naming ``key`` if it
    cannot be written as TOML."""
    v = plain(v)
    try:
        check_value(v)
    except TypeError as e:
        raise config_error(key, f"{where}: {e}") from None
    return v


def fmt(v: Any) -> str:
    """``v`` as TOML for a message (``repr`` if it has no TOML form)."""
    try:
        return format_value(v)
    except TypeError:
        return repr(v)


def flatten(
    table: Mapping[str, Any], base: Mapping[str, Any], prefix: str = "", table_always: bool = False
) -> dict[str, Any]:
    """Sweep-file tables to ``{dotted key: value}``.

    Quoted dotted keys (``"topology.bottleneck.buffer" = ...``) are taken as
    they are. A plain key whose value is a table (from unquoted dotted keys or
    ``[grid.topology]``-style sub-tables) is descended into where the base
    scenario has a table at that place (always, in ``[grid]``, whose values
    are lists); elsewhere the table is the value (an inline table such as
    ``{ bytes = "1 MB" }``).
    """
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix else k
        bare = SEGMENT.match(k) is not None and "[" not in k
        if bare and isinstance(v, dict) and (table_always or isinstance(get_path(base, key), dict)):
            out.update(flatten(v, base, key, table_always))
        else:
            out[key] = v
    return out
