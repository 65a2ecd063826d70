"""Parameter sweeps: a base scenario, axes of values, many runs, one table.

::

    from satqm.sweep import sweep

    sw = sweep(
        "scenarios/examples/dumbbell-droptail.toml",
        grid={"topology.bottleneck.buffer": [100, 400, 800], "tcp.recovery": ["newreno", "sack"]},
        fixed={"simulation.duration": "30 s"},
        seeds=range(10),
        out="sweeps/buffers",
    )
    sw.aggregate()                                  # mean, std, n, ci95 per metric
    print(sw.table("utilization_mean"))             # Markdown
    sw.plot("queue_mean_packets", x="topology.bottleneck.buffer", hue="tcp.recovery")

A sweep is the cross product of its explicit ``runs`` (each a dict of axis
values), its ``grid`` axes and its ``seeds``, applied on top of the base
scenario with the ``fixed`` values. Axis keys are dotted scenario paths as in
the TOML: ``"topology.bottleneck.buffer"``, ``"aqm[0].max_p"``,
``"traffic[0].tcp.mss"``. Every run's scenario is written out and validated
before anything runs: a key that does not exist or a value of the wrong type
raises :class:`satqm.ConfigError` naming the key.

Each run is stored in its own folder named by a hash of (scenario, seed,
satqm version), written atomically; running the same sweep into the same
folder again does only the runs that are missing or failed. The executor is a
local process pool by default, or a Dask cluster (``scheduler=``,
``scheduler_file=`` or ``client=``); the files are the same whichever ran
them. See ``docs/sweeps.md``.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import math
import operator
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Union

from satqm import _core
from satqm import _sweep_store as store
from satqm._core import ConfigError
from satqm._sweep_exec import Task
from satqm._sweep_store import SweepBusy, run_one
from satqm._sweep_toml import check_value, dumps, format_value
from satqm.scenario import Scenario, config_error

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from rich.console import Console

    from satqm.results import Results

__all__ = [
    "Sweep",
    "SweepBusy",
    "SweepResult",
    "load",
    "run_one",
    "sweep",
]

#: The manifest column of every run's seed; not an axis to average over.
SEED = "seed"

_SEGMENT = re.compile(r"^([A-Za-z0-9_-]+)((?:\[\d+\])*)$")
_INDEX = re.compile(r"\[(\d+)\]")
_MISSING = object()

BaseLike = Union[Scenario, str, "os.PathLike[str]", Mapping[str, Any]]


# ----- key paths -------------------------------------------------------------


def _parse_key(key: Any) -> list[str | int]:
    """``"aqm[0].max_p"`` -> ``["aqm", 0, "max_p"]``."""
    if not isinstance(key, str):
        raise config_error(str(key), f"an axis key is a string, not {type(key).__name__}")
    tokens: list[str | int] = []
    for seg in key.split("."):
        m = _SEGMENT.match(seg)
        if m is None:
            raise config_error(
                key,
                "not a key path: dotted names with optional [index], like "
                '"topology.bottleneck.buffer" or "aqm[0].max_p"',
            )
        tokens.append(m.group(1))
        tokens.extend(int(i) for i in _INDEX.findall(m.group(2)))
    return tokens


def _show_tokens(tokens: Sequence[str | int]) -> str:
    out = ""
    for t in tokens:
        out += f"[{t}]" if isinstance(t, int) else (f".{t}" if out else t)
    return out


def _get_path(data: Any, key: str) -> Any:
    cur = data
    for t in _parse_key(key):
        if isinstance(t, int):
            if not isinstance(cur, list) or t >= len(cur):
                return _MISSING
        elif not isinstance(cur, dict) or t not in cur:
            return _MISSING
        cur = cur[t]
    return cur


def _set_path(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` in the parsed scenario ``data``.

    Missing tables on the way are created (the schema then refuses them if
    they are not scenario keys); a missing list element is refused here.
    """
    tokens = _parse_key(key)
    cur: Any = data
    for i, t in enumerate(tokens):
        last = i == len(tokens) - 1
        where = _show_tokens(tokens[:i]) or "the scenario"
        if isinstance(t, int):
            if not isinstance(cur, list):
                raise config_error(key, f"{where} is not a list in the base scenario")
            if t >= len(cur):
                raise config_error(
                    key,
                    f"the base scenario has no {_show_tokens(tokens[: i + 1])} "
                    f"({where} has {len(cur)} entr{'y' if len(cur) == 1 else 'ies'})",
                )
        else:
            if not isinstance(cur, dict):
                raise config_error(key, f"{where} is not a table in the base scenario")
            if not last and t not in cur:
                if isinstance(tokens[i + 1], int):
                    missing = _show_tokens(tokens[: i + 1])
                    raise config_error(key, f"the base scenario has no {missing}")
                cur[t] = {}
        if last:
            cur[t] = copy.deepcopy(value)
        else:
            cur = cur[t]


def _plain(v: Any) -> Any:
    """numpy scalars and tuples as plain Python values."""
    if type(v).__module__ == "numpy" and hasattr(v, "item"):
        return v.item()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _check_writable(key: str, v: Any, where: str) -> Any:
    v = _plain(v)
    try:
        check_value(v)
    except TypeError as e:
        raise config_error(key, f"{where}: {e}") from None
    return v


def _fmt(v: Any) -> str:
    try:
        return format_value(v)
    except TypeError:
        return repr(v)


# ----- normalizing the inputs ------------------------------------------------


def _norm_grid(grid: Mapping[str, Any] | None) -> dict[str, list[Any]]:
    if grid is None:
        return {}
    if not isinstance(grid, Mapping):
        raise config_error(
            "grid", f"a mapping of axis key -> list of values, not {type(grid).__name__}"
        )
    out: dict[str, list[Any]] = {}
    for key, values in grid.items():
        _parse_key(key)
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            raise config_error(
                key, f"grid values must be a list (for one value, use [{_fmt(values)}] or fixed=)"
            )
        vals = [_check_writable(key, v, "grid value") for v in values]
        if not vals:
            raise config_error(key, "the grid gives no values")
        seen: list[str] = []
        for v in vals:
            t = _fmt(v) + type(v).__name__
            if t in seen:
                raise config_error(key, f"value {_fmt(v)} is given twice in the grid")
            seen.append(t)
        out[key] = vals
    return out


def _norm_fixed(fixed: Mapping[str, Any] | None) -> dict[str, Any]:
    if fixed is None:
        return {}
    if not isinstance(fixed, Mapping):
        raise config_error("set", f"a mapping of key -> value, not {type(fixed).__name__}")
    out = {}
    for key, v in fixed.items():
        _parse_key(key)
        out[key] = _check_writable(key, v, "set value")
    return out


def _norm_runs(runs: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
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
            _parse_key(key)
            d[key] = _check_writable(key, v, f"runs[{i}]")
        out.append(d)
    return out


_SEED_LIMIT = 2**63


def _norm_seeds(seeds: Any) -> list[int] | None:
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
        s = _plain(s)
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


def _base(base: BaseLike) -> tuple[Scenario | None, dict[str, Any]]:
    """The base scenario (if a file or Scenario) and its parsed data, with a
    Scenario's seed/duration overrides written in."""
    if isinstance(base, Mapping):
        data = copy.deepcopy(_plain(dict(base)))
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
        sim["duration"] = float(sc.overrides["duration"])
    if "seed" in sc.overrides:
        sim["seed"] = int(sc.overrides["seed"])
    return sc, data


# ----- the sweep -------------------------------------------------------------


class RunPoint(NamedTuple):
    """One planned run: its place, id, seed, axis values and scenario text."""

    index: int
    run_id: str
    seed: int
    params: dict[str, Any]
    text: str


def _related(axis: str, path: str) -> bool:
    if not path:
        return False
    return (
        path == axis
        or path.startswith(axis + ".")
        or path.startswith(axis + "[")
        or axis.startswith(path + ".")
        or axis.startswith(path + "[")
    )


def _validate(text: str) -> ConfigError | None:
    try:
        _core.validate(text, None, None)
    except ConfigError as e:
        return e
    return None


def _blame(e: ConfigError, key: str, value: Any, where: str) -> ConfigError:
    path = getattr(e, "path", "") or ""
    rule = getattr(e, "rule", str(e))
    detail = rule if path == key else (f"{path}: {rule}" if path else rule)
    return config_error(key, f"{_fmt(value)} ({where}): {detail}")


class Sweep:
    """A base scenario and axes: the plan of a sweep (nothing runs yet).

    Parameters
    ----------
    base : Scenario, path, or dict
        The scenario every run starts from (a :class:`satqm.Scenario`, a
        scenario file, or a parsed scenario as a dict). Its seed and
        duration overrides are kept.
    grid : dict, optional
        ``{axis key: [values]}``: every combination is run (the first key
        varies slowest).
    seeds : list or range of int, or ``{"from": 1, "count": 10}``, optional
        Each combination runs once per seed. Without ``seeds`` each runs once
        with the scenario's own ``simulation.seed``.
    runs : list of dict, optional
        Explicit combinations ``{axis key: value, ...}`` (say RED's four
        parameter sets); each is crossed with the grid and the seeds. A key
        an entry leaves out keeps the base scenario's value there.
    fixed : dict, optional
        ``{key: value}`` applied to every run (``[set]`` in a sweep file),
        not an axis.

    Raises :class:`satqm.ConfigError` naming the key for a key that does not
    exist, a value the scenario schema refuses, or a malformed argument;
    every run's scenario is validated here.
    """

    def __init__(
        self,
        base: BaseLike,
        grid: Mapping[str, Any] | None = None,
        *,
        seeds: Any = None,
        runs: Sequence[Mapping[str, Any]] | None = None,
        fixed: Mapping[str, Any] | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.base, base_data = _base(base)
        self.grid = _norm_grid(grid)
        self.runs = _norm_runs(runs)
        self.fixed = _norm_fixed(fixed)
        self.seeds = _norm_seeds(seeds)
        self.path = Path(path) if path is not None else None

        for key in self.grid:
            if key in self.fixed:
                raise config_error(key, "given both in grid and in set (fixed)")
        for i, entry in enumerate(self.runs):
            for key in entry:
                if key in self.grid:
                    raise config_error(key, f"given both in grid and in runs[{i}]")
                if key in self.fixed:
                    raise config_error(key, f"given both in runs[{i}] and in set (fixed)")
        if self.seeds is not None:
            for key in itertools.chain(self.grid, self.fixed, *self.runs):
                if key == "simulation.seed" or key == "simulation":
                    raise config_error(
                        key, "the seed is given both by seeds and as a key; use one of them"
                    )

        run_keys: list[str] = []
        for entry in self.runs:
            run_keys.extend(k for k in entry if k not in run_keys)
        #: Axis keys in order (grid keys, then the keys of ``runs``), not the seed.
        self.axes: list[str] = list(self.grid) + run_keys

        base_fixed = copy.deepcopy(base_data)
        for key, v in self.fixed.items():
            _set_path(base_fixed, key, v)
        self._points = self._expand(base_data, base_fixed, run_keys)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Sweep:
        """Read a sweep file (TOML; see ``docs/sweeps.md``)::

        base = "../scenarios/examples/dumbbell-droptail.toml"  # relative to this file
        seeds = { from = 1, count = 10 }
        [grid]
        "topology.bottleneck.buffer" = [100, 400, 800]
        [set]
        "simulation.duration" = "30 s"
        [[runs]]
        "tcp.recovery" = "sack"
        """
        p = Path(path)
        text = p.read_text(encoding="utf-8-sig")
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise config_error("", f"invalid TOML: {e}") from None
        allowed = ("base", "seeds", "grid", "set", "runs")
        for k in doc:
            if k not in allowed:
                raise config_error(k, f"unknown key; a sweep file has {', '.join(allowed)}")
        base = doc.get("base")
        if base is None:
            raise config_error("base", "required: the path of the base scenario file")
        if not isinstance(base, str):
            raise config_error("base", "must be a path (a string)")
        bp = Path(base)
        if not bp.is_absolute():
            bp = p.parent / bp
        try:
            sc = Scenario.load(bp)
        except FileNotFoundError:
            raise config_error("base", f"{bp}: no such file") from None
        except IsADirectoryError:
            raise config_error("base", f"{bp}: is a directory") from None
        except ConfigError as e:
            raise config_error("base", f"{bp}: {e}") from None
        data = sc.data
        grid = doc.get("grid")
        if grid is not None and not isinstance(grid, dict):
            raise config_error("grid", "must be a table of axis key -> list of values")
        fixed = doc.get("set")
        if fixed is not None and not isinstance(fixed, dict):
            raise config_error("set", "must be a table of key -> value")
        runs = doc.get("runs")
        if runs is not None and not (
            isinstance(runs, list) and all(isinstance(r, dict) for r in runs)
        ):
            raise config_error("runs", "must be an array of tables ([[runs]])")
        return cls(
            sc,
            _flatten(grid, data, table_always=True) if grid else None,
            seeds=doc.get("seeds"),
            runs=[_flatten(r, data) for r in runs] if runs else None,
            fixed=_flatten(fixed, data) if fixed else None,
            path=p,
        )

    # ----- expansion ------------------------------------------------------------

    def _expand(
        self, base_data: dict[str, Any], base_fixed: dict[str, Any], run_keys: list[str]
    ) -> list[RunPoint]:
        version = _core.__version__
        # Single values on their own first, for precise errors (only when the
        # base with the fixed values is itself valid; otherwise a value could
        # be blamed for the base's fault).
        single: dict[tuple[str, int], ConfigError] = {}
        entry_err: dict[int, ConfigError] = {}
        base_err = _validate(dumps(base_fixed))
        if base_err is None:
            for key, vals in self.grid.items():
                for j, v in enumerate(vals):
                    d = copy.deepcopy(base_fixed)
                    _set_path(d, key, v)
                    e = _validate(dumps(d))
                    if e is not None:
                        single[(key, j)] = _blame(e, key, v, "grid")
            for i, entry in enumerate(self.runs):
                d = copy.deepcopy(base_fixed)
                for key, v in entry.items():
                    _set_path(d, key, v)
                e = _validate(dumps(d))
                if e is not None:
                    entry_err[i] = self._blame_entry(e, entry, f"runs[{i}]")

        points: list[RunPoint] = []
        seen: dict[str, int] = {}
        failures: list[tuple[int, tuple[int, ...], dict[str, Any], ConfigError]] = []
        fine: set[tuple[str, int]] = set()  # (grid key, value index) seen in a valid run
        fine_entries: set[int] = set()
        entries = self.runs or [{}]
        grid_keys = list(self.grid)
        combos = list(itertools.product(*(range(len(v)) for v in self.grid.values())))
        for i, entry in enumerate(entries):
            for combo in combos:
                data = copy.deepcopy(base_fixed)
                params: dict[str, Any] = {}
                for key in run_keys:
                    if key in entry:
                        params[key] = entry[key]
                        _set_path(data, key, entry[key])
                    else:
                        got = _get_path(base_fixed, key)
                        params[key] = None if got is _MISSING else copy.deepcopy(got)
                for key, j in zip(grid_keys, combo):
                    v = self.grid[key][j]
                    params[key] = v
                    _set_path(data, key, v)
                params = {k: params[k] for k in self.axes}
                text = dumps(data)
                try:
                    info = _core.validate(text, None, None)
                except ConfigError as e:
                    failures.append((i, combo, params, e))
                    continue
                fine.update(zip(grid_keys, combo))
                fine_entries.add(i)
                for seed in self.seeds if self.seeds is not None else [int(info["seed"])]:
                    rid = store.make_run_id(text, seed, version)
                    if rid in seen:
                        other = points[seen[rid]]
                        raise config_error(
                            "runs" if self.runs else "grid",
                            f"run #{len(points)} ({self._describe(params, seed)}) is the same "
                            f"scenario and seed as run #{other.index} "
                            f"({self._describe(other.params, other.seed)})",
                        )
                    seen[rid] = len(points)
                    points.append(RunPoint(len(points), rid, seed, params, text))
        if failures:
            raise self._explain(*failures[0], single, entry_err, fine, fine_entries) from None
        return points

    def _explain(
        self,
        i: int,
        combo: tuple[int, ...],
        params: dict[str, Any],
        e: ConfigError,
        single: Mapping[tuple[str, int], ConfigError],
        entry_err: Mapping[int, ConfigError],
        fine: set[tuple[str, int]],
        fine_entries: set[int],
    ) -> ConfigError:
        """The error for the first invalid run: blame a single value (or
        [[runs]] entry) that is invalid on its own; say which combination
        failed when that value is valid in other runs."""
        culprit: ConfigError | None = None
        in_valid_runs = False
        if self.runs and i in entry_err:
            culprit, in_valid_runs = entry_err[i], i in fine_entries
        else:
            for key, j in zip(self.grid, combo):
                if (key, j) in single:
                    culprit, in_valid_runs = single[(key, j)], (key, j) in fine
                    break
        if culprit is None:
            return self._blame_combo(e, params, None)
        if in_valid_runs and len(params) > 1:
            rule = getattr(culprit, "rule", str(culprit))
            path = getattr(culprit, "path", "")
            return config_error(path, f"{rule} (in the run with {self._describe(params, None)})")
        return culprit

    def _blame_entry(self, e: ConfigError, entry: Mapping[str, Any], where: str) -> ConfigError:
        path = getattr(e, "path", "") or ""
        related = [k for k in entry if _related(k, path)]
        if related:
            k = max(related, key=len)
            return _blame(e, k, entry[k], where)
        rule = getattr(e, "rule", str(e))
        return config_error(path, f"{rule} (in {where}: {self._describe(entry, None)})")

    def _blame_combo(
        self, e: ConfigError, params: Mapping[str, Any], base_err: ConfigError | None
    ) -> ConfigError:
        """The error of an invalid run no single value explains."""
        path = getattr(e, "path", "") or ""
        rule = getattr(e, "rule", str(e))
        related = [k for k in itertools.chain(params, self.fixed) if _related(k, path)]
        combo = self._describe(params, None)
        if related:
            k = max(related, key=len)
            v = params[k] if k in params else self.fixed[k]
            where = "set" if k in self.fixed else ("grid" if k in self.grid else "runs")
            detail = rule if path == k else f"{path}: {rule}"
            extra = f" (in the run with {combo})" if combo and list(params) != [k] else ""
            return config_error(k, f"{_fmt(v)} ({where}): {detail}{extra}")
        if combo:
            return config_error(path, f"{rule} (in the run with {combo})")
        suffix = " (with the set values applied)" if self.fixed else ""
        return config_error(path, f"{rule}{suffix}")

    @staticmethod
    def _describe(params: Mapping[str, Any], seed: int | None) -> str:
        parts = [f"{k} = {_fmt(v)}" for k, v in params.items()]
        if seed is not None:
            parts.append(f"seed = {seed}")
        return ", ".join(parts)

    # ----- looking --------------------------------------------------------------

    @property
    def points(self) -> list[RunPoint]:
        """Every run, in order: explicit runs, then grid (first key slowest),
        then seeds (fastest)."""
        return list(self._points)

    def __len__(self) -> int:
        return len(self._points)

    @property
    def name(self) -> str:
        return self.base.name if self.base is not None else "sweep"

    def default_out(self) -> Path:
        """``sweeps/<base name>-<hash of the run ids>``: the same sweep gets the
        same folder, so running it again resumes it."""
        h = hashlib.sha256("\n".join(p.run_id for p in self._points).encode()).hexdigest()
        return Path("sweeps") / f"{self.name}-{h[:10]}"

    def plan(self) -> dict[str, Any]:
        """The document written to ``sweep.json``."""
        return {
            "format": store.FORMAT,
            "satqm_version": _core.__version__,
            "base": {
                "name": self.name,
                "path": str(self.base.path) if self.base is not None and self.base.path else None,
            },
            "sweep_file": str(self.path) if self.path is not None else None,
            "axes": list(self.axes),
            "seeds": self.seeds,
            "fixed": self.fixed,
            "runs": [
                {"index": p.index, "run_id": p.run_id, "seed": p.seed, "params": p.params}
                for p in self._points
            ],
        }

    def __repr__(self) -> str:
        seeds = f"{len(self.seeds)} seeds" if self.seeds is not None else "1 seed"
        return f"<Sweep {self.name!r}: {len(self)} runs, axes {self.axes}, {seeds}>"

    # ----- running --------------------------------------------------------------

    def run(
        self,
        out: str | os.PathLike[str] | None = None,
        *,
        workers: int | None = None,
        scheduler: str | None = None,
        scheduler_file: str | os.PathLike[str] | None = None,
        client: Client | None = None,
        retries: int = 2,
        progress: bool | Console = True,
        plot: bool = False,
        simulate: Callable[[Scenario], Results] | None = None,
    ) -> SweepResult:
        """Run every run not yet finished in ``out``; see :func:`sweep`."""
        if sum(x is not None for x in (scheduler, scheduler_file, client)) > 1:
            raise ValueError("give one of scheduler=, scheduler_file= and client=")
        dask = scheduler is not None or scheduler_file is not None or client is not None
        if dask and workers is not None:
            raise ValueError("workers= is for the local pool; a Dask cluster has its own workers")
        if workers is not None and (isinstance(workers, bool) or workers < 0):
            raise ValueError(f"workers must be >= 0 (0: in this process), not {workers!r}")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an integer >= 0, not {retries!r}")
        outp = Path(out) if out is not None else self.default_out()
        outp = Path(os.path.abspath(outp))
        if outp.exists() and not outp.is_dir():
            raise NotADirectoryError(f"{outp}: exists and is not a directory")
        outp.mkdir(parents=True, exist_ok=True)

        from satqm import _sweep_exec as ex

        plan = self.plan()
        options = {"version": _core.__version__, "plot": bool(plot), "simulate": simulate}
        with store.locked(outp):
            store.remove_tmp_dirs(outp)
            (outp / store.RUNS).mkdir(exist_ok=True)
            store.write_plan(outp, plan)
            todo = [
                Task(p.index, p.run_id, p.text, p.seed, p.params)
                for p in self._points
                if not store.is_done(outp, p.run_id)
            ]
            bar = _Progress(len(self._points), len(todo), progress)
            try:
                with bar:
                    if not todo:
                        pass
                    elif client is not None:
                        ex.execute_dask(
                            todo, outp, client=client, retries=retries, options=options,
                            report=bar.report,
                        )  # fmt: skip
                    elif dask:
                        c = ex.connect(scheduler, scheduler_file)
                        try:
                            ex.execute_dask(
                                todo, outp, client=c, retries=retries, options=options,
                                report=bar.report,
                            )  # fmt: skip
                        finally:
                            c.close()
                    elif workers == 0:
                        ex.execute_serial(todo, outp, options=options, report=bar.report)
                    else:
                        ex.execute_local(
                            todo, outp, workers=workers or default_workers(), retries=retries,
                            options=options, report=bar.report,
                        )  # fmt: skip
                # Every run has ended: what is left in .tmp-* is the debris of
                # attempts whose worker died (not after Ctrl-C on Dask, where
                # cancelled runs may still be finishing on the cluster).
                store.remove_tmp_dirs(outp)
            finally:
                # Also after Ctrl-C: the manifest says what is done so far.
                store.remove_stale_failures(outp)
                manifest = store.build_manifest(outp, plan)
                store.write_parquet_atomic(outp / store.MANIFEST, manifest)
                store.write_parquet_atomic(outp / store.TIMINGS, store.build_timings(outp, plan))
        return SweepResult(outp, plan, manifest)


def _flatten(
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
        plain = _SEGMENT.match(k) is not None and "[" not in k
        if (
            plain
            and isinstance(v, dict)
            and (table_always or isinstance(_get_path(base, key), dict))
        ):
            out.update(_flatten(v, base, key, table_always))
        else:
            out[key] = v
    return out


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class _Progress:
    """A progress bar over runs (with ETA) on stderr; failures printed above it."""

    def __init__(self, total: int, todo: int, progress: bool | Console) -> None:
        self.total, self.todo = total, todo
        self.done = self.failed = 0
        self._console = None if progress is True or not progress else progress
        self._enabled = bool(progress)
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> _Progress:
        if not self._enabled:
            return self
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = self._console or Console(stderr=True)
        self._console = console
        already = self.total - self.todo
        if already:
            console.print(
                f"sweep: {self.total} runs, {already} already done, {self.todo} to run",
                highlight=False,
            )
        if not self.todo:
            return self
        self._bar = Progress(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._bar.__enter__()
        self._task = self._bar.add_task("sweep", total=self.todo, failed="")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None

    def report(self, task: Task, outcome: Mapping[str, Any]) -> None:
        if outcome.get("status") == "failed":
            self.failed += 1
            if self._bar is not None:
                self._bar.console.print(
                    f"run #{task.index} ({task.run_id}) failed: {outcome.get('error', '')}",
                    markup=False,
                    highlight=False,
                )
        else:
            self.done += 1
        if self._bar is not None:
            self._bar.update(
                self._task,
                advance=1,
                failed=f"[red]{self.failed} failed[/red]" if self.failed else "",
            )


def sweep(
    base: BaseLike,
    grid: Mapping[str, Any] | None = None,
    *,
    seeds: Any = None,
    runs: Sequence[Mapping[str, Any]] | None = None,
    fixed: Mapping[str, Any] | None = None,
    out: str | os.PathLike[str] | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    scheduler_file: str | os.PathLike[str] | None = None,
    client: Client | None = None,
    retries: int = 2,
    progress: bool | Console = True,
    plot: bool = False,
    simulate: Callable[[Scenario], Results] | None = None,
) -> SweepResult:
    """Plan a sweep (see :class:`Sweep` for ``base``, ``grid``, ``seeds``,
    ``runs``, ``fixed``), run what is not yet done in ``out``, return the
    results.

    ``out`` defaults to ``sweeps/<scenario name>-<hash>`` (the same for the
    same sweep). Executors: a local process pool of ``workers`` processes
    (default: one per CPU; ``0`` runs in this process), or a Dask cluster
    given by ``scheduler="tcp://host:8786"``, ``scheduler_file=`` or
    ``client=`` (an open :class:`distributed.Client`, left open). ``retries``
    is how often a run whose worker died is tried again. ``progress`` shows a
    bar over runs on stderr. ``plot`` also draws each run's ``plot.png``.
    ``simulate`` replaces :func:`satqm.run` as the function that turns a run's
    :class:`satqm.Scenario` (seed applied) into :class:`satqm.Results`: say,
    to step through the run; it must be a top-level function the workers can
    import, and what it returns is stored like any run.

    A run that fails is recorded (``manifest`` ``status == "failed"`` and its
    ``error``); the others go on. Ctrl-C stops the workers and raises
    :class:`KeyboardInterrupt`; call again to resume. Runs in a script need
    the usual ``if __name__ == "__main__":`` guard (the local pool starts
    fresh Python processes).
    """
    sw = Sweep(base, grid, seeds=seeds, runs=runs, fixed=fixed)
    return sw.run(
        out,
        workers=workers,
        scheduler=scheduler,
        scheduler_file=scheduler_file,
        client=client,
        retries=retries,
        progress=progress,
        plot=plot,
        simulate=simulate,
    )


def load(out: str | os.PathLike[str]) -> SweepResult:
    """The results of the sweep in folder ``out`` (its manifest rebuilt from
    the run folders; nothing is written)."""
    return SweepResult.load(out)


# ----- results ---------------------------------------------------------------


def _t975(dof: int) -> float:
    from scipy.stats import t

    return float(t.ppf(0.975, dof))


class SweepResult:
    """The runs of a sweep folder and what they say.

    Attributes
    ----------
    out : pathlib.Path
        The sweep folder.
    manifest : pandas.DataFrame
        One row per planned run: ``index``, ``run_id``, ``status`` (``done``,
        ``failed``, ``missing``), one column per axis (named by its key),
        ``seed``, ``error``, then every summary metric (NaN unless done).
    axes : list of str
        The axis keys (not the seed).
    metrics : list of str
        The summary metrics in the manifest.
    """

    def __init__(self, out: Path, plan: Mapping[str, Any], manifest: pd.DataFrame) -> None:
        self.out = Path(out)
        self.plan = dict(plan)
        self.manifest = manifest
        self.axes: list[str] = list(plan["axes"])
        fixed_cols = {"index", "run_id", "status", SEED, "error", *self.axes}
        self.metrics: list[str] = [c for c in manifest.columns if c not in fixed_cols]

    @classmethod
    def load(cls, out: str | os.PathLike[str]) -> SweepResult:
        """Read a sweep folder (rebuilding its manifest from the run folders)."""
        outp = Path(out)
        plan = store.read_plan(outp)
        return cls(outp, plan, store.build_manifest(outp, plan))

    # ----- status ---------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """``{"done": n, "failed": n, "missing": n}``."""
        s = self.manifest["status"]
        return {k: int((s == k).sum()) for k in ("done", "failed", "missing")}

    @property
    def ok(self) -> bool:
        """Every planned run is done."""
        return bool((self.manifest["status"] == "done").all())

    @property
    def failures(self) -> pd.DataFrame:
        """The failed runs' rows (with ``error``)."""
        return self.manifest[self.manifest["status"] == "failed"]

    def __len__(self) -> int:
        return len(self.manifest)

    def __repr__(self) -> str:
        c = self.counts()
        return (
            f"<SweepResult {str(self.out)!r}: {len(self)} runs, {c['done']} done, "
            f"{c['failed']} failed, {c['missing']} missing>"
        )

    # ----- one run --------------------------------------------------------------

    def _row(self, run: int | str) -> Any:
        m = self.manifest
        if isinstance(run, str):
            hits = m[m["run_id"].astype(str).str.startswith(run)] if run else m.iloc[:0]
            if len(hits) != 1:
                how = "no" if hits.empty else "more than one"
                raise KeyError(f"{run!r}: {how} run with this id")
            return hits.iloc[0]
        if isinstance(run, bool) or not isinstance(run, int):
            raise TypeError(f"a run index (int) or run id (str), not {type(run).__name__}")
        hits = m[m["index"] == run]
        if hits.empty:
            raise KeyError(f"no run #{run} (there are {len(m)})")
        return hits.iloc[0]

    def run_dir(self, run: int | str) -> Path:
        """The folder of one run (by index or run id)."""
        return store.run_dir(self.out, str(self._row(run)["run_id"]))

    def results(self, run: int | str) -> Results:
        """The :class:`satqm.Results` of one finished run (by index or run id)."""
        from satqm.results import Results

        row = self._row(run)
        if row["status"] != "done":
            raise KeyError(f"run #{row['index']} ({row['run_id']}) is {row['status']}")
        return Results.load(store.run_dir(self.out, str(row["run_id"])))

    # ----- aggregation ----------------------------------------------------------

    def _by(self, by: str | Sequence[str] | None) -> list[str]:
        if by is None:
            return [a for a in self.axes if a != "simulation.seed"]
        cols = [by] if isinstance(by, str) else list(by)
        for c in cols:
            if c not in self.axes and c != SEED:
                raise KeyError(f"{c!r} is not an axis of this sweep (axes: {', '.join(self.axes)})")
        return cols

    def _metrics(self, metrics: str | Sequence[str] | None) -> list[str]:
        if metrics is None:
            return list(self.metrics)
        ms = [metrics] if isinstance(metrics, str) else list(metrics)
        for m in ms:
            if m not in self.metrics:
                known = ", ".join(self.metrics)
                raise KeyError(f"{m!r} is not a summary metric (metrics: {known})")
        return ms

    def aggregate(
        self, by: str | Sequence[str] | None = None, metrics: str | Sequence[str] | None = None
    ) -> pd.DataFrame:
        """Mean, standard deviation, count and 95 % confidence half-width of
        each summary metric over the finished runs of each group.

        ``by`` defaults to every axis (so the groups are the seeds of one
        combination); ``[]`` pools every run. The result is indexed by the
        ``by`` columns, in sweep order; its columns are ``(metric, stat)``
        with stat ``mean``, ``std``, ``n``, ``ci95``. ``ci95`` is
        ``t(0.975, n-1) * std / sqrt(n)`` (Student's t; NaN for n < 2).
        """
        import numpy as np
        import pandas as pd

        cols = self._by(by)
        ms = self._metrics(metrics)
        df = self.manifest[self.manifest["status"] == "done"]
        if not cols:
            df = df.assign(_all="all")
            keys = ["_all"]
        else:
            keys = cols
        g = df.groupby(keys, sort=False, dropna=False)
        mean, std, n = g[ms].mean(), g[ms].std(ddof=1), g[ms].count()
        parts = {}
        for m in ms:
            nn = n[m].to_numpy()
            sd = std[m].to_numpy()
            with np.errstate(invalid="ignore", divide="ignore"):
                tq = np.array([_t975(int(k) - 1) if k >= 2 else np.nan for k in nn])
                ci = tq * sd / np.sqrt(nn)
            parts[(m, "mean")] = mean[m].to_numpy()
            parts[(m, "std")] = sd
            parts[(m, "n")] = nn.astype(np.int64)
            parts[(m, "ci95")] = ci
        out = pd.DataFrame(parts, index=mean.index)
        out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "stat"])
        if not cols:
            out.index = pd.Index(["all"], name=None) if len(out) else pd.Index([], name=None)
        return out

    def table(
        self,
        metric: str,
        by: str | Sequence[str] | None = None,
        fmt: str = "markdown",
        digits: int = 4,
    ) -> str:
        """One metric's mean ± 95 % CI per group, as a Markdown or CSV table.

        Columns: the ``by`` axes, ``n``, ``mean``, ``ci95``, ``std``.
        Markdown rounds to ``digits`` significant digits; CSV keeps full
        precision.
        """
        if fmt not in ("markdown", "csv"):
            raise ValueError(f"fmt must be 'markdown' or 'csv', not {fmt!r}")
        agg = self.aggregate(by, [metric])
        cols = self._by(by)
        flat = agg[metric].reset_index()
        if not cols:
            flat = flat.rename(columns={"index": "group"})
            cols = ["group"]
        flat = flat[[*cols, "n", "mean", "ci95", "std"]]
        if fmt == "csv":
            return flat.to_csv(index=False, lineterminator="\n")

        def cell(v: Any) -> str:
            if isinstance(v, float):
                return "" if math.isnan(v) else f"{v:.{digits}g}"
            s = store.display(v) if not isinstance(v, str) else v
            return s.replace("|", "\\|")

        header = [*cols, "n", f"{metric} (mean)", "± 95 % CI", "std"]
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] * len(cols) + ["---:"] * 4) + "|",
        ]
        for row in flat.itertuples(index=False):
            vals = list(row)
            lines.append(
                "| "
                + " | ".join(
                    [cell(_plain(v)) for v in vals[: len(cols)]]
                    + [str(int(vals[len(cols)]))]
                    + [cell(float(v)) for v in vals[len(cols) + 1 :]]
                )
                + " |"
            )
        return "\n".join(lines) + "\n"

    def plot(
        self,
        metric: str,
        x: str,
        hue: str | None = None,
        where: Mapping[str, Any] | None = None,
        ax: Axes | None = None,
    ) -> Figure:
        """``metric`` (mean over seeds) against axis ``x``, one line per value
        of axis ``hue``, with 95 % confidence error bars.

        Every other axis must have one value among the runs shown: select
        with ``where={axis: value or [values]}``. Returns the Figure (no
        pyplot state; pass ``ax`` to draw into your own axes).
        """
        import numpy as np
        import pandas as pd

        self._metrics(metric)
        for a in (x, hue) if hue is not None else (x,):
            self._by(a)
        m = self.manifest[self.manifest["status"] == "done"]
        for k, v in (where or {}).items():
            self._by(k)
            vals = list(v) if isinstance(v, (list, tuple, set)) else [v]
            m = m[m[k].isin(vals)]
        others = [a for a in self.axes if a not in (x, hue) and m[a].nunique(dropna=False) > 1]
        if others:
            raise ValueError(
                f"{', '.join(others)} also vary among these runs: choose values with "
                f"where={{...}} or use one as hue"
            )
        if m.empty:
            raise ValueError("no finished runs to plot")
        sub = SweepResult(self.out, self.plan, m)
        agg = sub.aggregate([x] + ([hue] if hue else []), [metric])[metric].reset_index()

        if ax is None:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            fig = Figure(figsize=(7, 4.5), constrained_layout=True)
            FigureCanvasAgg(fig)
            ax = fig.subplots()
        else:
            fig = ax.figure  # type: ignore[assignment]
        numeric = pd.api.types.is_numeric_dtype(agg[x]) and not pd.api.types.is_bool_dtype(agg[x])
        if not numeric:
            labels = list(dict.fromkeys(agg[x].tolist()))
            pos = {v: i for i, v in enumerate(labels)}
        groups = [(None, agg)] if hue is None else list(agg.groupby(hue, sort=False, dropna=False))
        for hv, g in groups:
            g = g.sort_values(x) if numeric else g
            xs = g[x].to_numpy() if numeric else np.array([pos[v] for v in g[x]])
            err = np.nan_to_num(g["ci95"].to_numpy(dtype=float), nan=0.0)
            label = None if hue is None else f"{hue} = {store.display(_plain(hv))}"
            ax.errorbar(xs, g["mean"].to_numpy(dtype=float), yerr=err, marker="o", capsize=3,
                        label=label)  # fmt: skip
        if not numeric:
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels([store.display(_plain(v)) for v in labels])
        ax.set_xlabel(x)
        ax.set_ylabel(metric)
        n = agg["n"]
        ns = f"{int(n.min())}" if n.min() == n.max() else f"{int(n.min())}–{int(n.max())}"
        ax.set_title(f"mean and 95 % CI over {ns} run{'s' if n.max() != 1 else ''} per point")
        if hue is not None:
            ax.legend()
        ax.grid(True, alpha=0.3)
        return fig
