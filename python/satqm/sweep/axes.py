"""The arguments of a sweep, checked and put in one form.

``grid`` becomes ``{key: [values]}``, ``fixed`` ``{key: value}``, ``runs`` a
list of ``{key: value}``, ``seeds`` a list of distinct integers (or ``None``:
the scenario's own seed), and the base scenario its parsed data. Anything
malformed raises :class:`satqm.ConfigError` naming the argument or key.
"""

from __future__ import annotations

import copy
import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

from satqm.scenario import Scenario, config_error, quantity_text
from satqm.sweep.canonical_toml import dumps
from satqm.sweep.keys import check_writable, fmt, parse_key, plain

#: What a sweep can start from: a Scenario, a scenario file, a parsed scenario.
BaseLike = Union[Scenario, str, "os.PathLike[str]", Mapping[str, Any]]


def grid_axes(grid: Mapping[str, Any] | None) -> dict[str, list[Any]]:
    """``grid``: each key's values, none twice."""
    if grid is None:
        return {}
    if not isinstance(grid, Mapping):
        raise config_error(
            "grid", f"a mapping of axis key -> list of values, not {type(grid).__name__}"
        )
    out: dict[str, list[Any]] = {}
    for key, values in grid.items():
        parse_key(key)
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            raise config_error(
                key, f"grid values must be a list (for one value, use [{fmt(values)}] or fixed=)"
            )
        vals = [check_writable(key, v, "grid value") for v in values]
        if not vals:
            raise config_error(key, "the grid gives no values")
        seen: list[str] = []
        for v in vals:
            t = fmt(v) + type(v).__name__
            if t in seen:
                raise config_error(key, f"value {fmt(v)} is given twice in the grid")
            seen.append(t)
        out[key] = vals
    return out


def fixed_values(fixed: Mapping[str, Any] | None) -> dict[str, Any]:
    """``fixed`` (``[set]`` in a sweep file): one value per key."""
    if fixed is None:
        return {}
    if not isinstance(fixed, Mapping):
        raise config_error("set", f"a mapping of key -> value, not {type(fixed).__name__}")
    out = {}
    for key, v in fixed.items():
        parse_key(key)
        out[key] = check_writable(key, v, "set value")
    return out


def explicit_runs(runs: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """``runs``: non-empty ``{key: value}`` entries."""
    if runs is None:
        return []
    if isinstance(runs, (str, bytes, Mapping)) or not isinstance(runs, Iterable):
        raise config_error("runs", "a list of {axis key: value} mappings")
    out = []
    for i, entry in enumerate(runs):
        if not isinstance(entry, Mapping):
            raise config_error(f"runs[{i}]", "a mapping of axis key -> value")
        if not entry:
            raise config_error(f"runs[{i}]", "empty: give at least one key")
        d = {}
        for key, v in entry.items():
            parse_key(key)
            d[key] = check_writable(key, v, f"runs[{i}]")
        out.append(d)
    return out


_SEED_LIMIT = 2**63


def seed_list(seeds: Any) -> list[int] | None:
    """``seeds`` (a list, a range or ``{from, count}``) as distinct integers in [0, 2^63)."""
    if seeds is None:
        return None
    if isinstance(seeds, Mapping):
        unknown = set(seeds) - {"from", "count"}
        if unknown or "count" not in seeds:
            raise config_error("seeds", "a list of seeds, or { from = FIRST, count = N }")
        first, count = seeds.get("from", 1), seeds["count"]
        for name, v in (("from", first), ("count", count)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise config_error(f"seeds.{name}", "must be an integer")
        if count < 1:
            raise config_error("seeds.count", "must be >= 1")
        seeds = range(first, first + count)
    if isinstance(seeds, (str, bytes, bool)) or not isinstance(seeds, Iterable):
        raise config_error(
            "seeds", "a list or range of seeds (for ten seeds: range(10) or {from = 1, count = 10})"
        )
    out: list[int] = []
    for s in seeds:
        s = plain(s)
        if isinstance(s, bool):
            raise config_error("seeds", f"{s!r} is not an integer")
        try:
            s = operator.index(s)
        except TypeError:
            raise config_error("seeds", f"{s!r} is not an integer") from None
        if not 0 <= s < _SEED_LIMIT:
            raise config_error("seeds", f"{s} is not in [0, 2^63)")
        if s in out:
            raise config_error("seeds", f"seed {s} is given twice")
        out.append(s)
    if not out:
        raise config_error("seeds", "no seeds given")
    return out


def base_scenario(base: BaseLike) -> tuple[Scenario | None, dict[str, Any]]:
    """The base scenario (if a file or Scenario) and its parsed data, with a
    Scenario's overrides written in."""
    if isinstance(base, Mapping):
        data = copy.deepcopy(plain(dict(base)))
        try:
            sc = Scenario(dumps(data))
        except TypeError as e:
            raise config_error("", f"base scenario: {e}") from None
        return sc, data
    if isinstance(base, Scenario):
        sc = base
    elif isinstance(base, (str, os.PathLike)):
        sc = Scenario.load(base)
    else:
        raise TypeError(
            "base must be a Scenario, a scenario file path, or a parsed scenario dict, "
            f"not {type(base).__name__}"
        )
    data = copy.deepcopy(sc.data)
    sim = data.setdefault("simulation", {})
    if "duration" in sc.overrides:
        sim["duration"] = quantity_text(sc.overrides["duration"], "s")
    if "warmup" in sc.overrides:
        sim["warmup"] = quantity_text(sc.overrides["warmup"], "s")
    if "seed" in sc.overrides:
        sim["seed"] = int(sc.overrides["seed"])
    if "max_memory" in sc.overrides:
        sim["max_memory"] = sc.overrides["max_memory"]
    if "capture" in sc.overrides:
        sim["capture"] = list(sc.overrides["capture"])
    if sc.files:
        # The files it names (a link schedule's trace) travel in the text
        # of every run's scenario.
        data["files"] = {**data.get("files", {}), **sc.files}
    return sc, data
