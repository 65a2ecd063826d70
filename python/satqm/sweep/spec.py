"""The plan of a sweep: a base scenario, axes, seeds; every run's scenario.

:class:`Sweep` applies each combination of axis values to the base scenario,
writes the result as canonical TOML (:mod:`satqm.sweep.canonical_toml`),
validates it, and names the run by a hash of (scenario text, seed, satqm
version). :meth:`Sweep.run` hands the runs not yet done to an executor
(:mod:`satqm.sweep.executors`) and the folder to the store
(:mod:`satqm.sweep.store`).
"""

from __future__ import annotations

import copy
import errno
import hashlib
import itertools
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from satqm._core import ConfigError, validate
from satqm._core import __version__ as _VERSION
from satqm.scenario import Scenario, config_error
from satqm.sweep import executors as ex
from satqm.sweep import files, store
from satqm.sweep.aggregate import SweepResult
from satqm.sweep.axes import (
    BaseLike,
    base_scenario,
    explicit_runs,
    fixed_values,
    grid_axes,
    seed_list,
)
from satqm.sweep.canonical_toml import dumps
from satqm.sweep.executors import Task
from satqm.sweep.keys import MISSING, flatten, fmt, get_path, set_path
from satqm.sweep.progress import ProgressBar

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

if TYPE_CHECKING:
    from distributed import Client
    from rich.console import Console

    from satqm.results import Results


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
        validate(text, None, None)
    except ConfigError as e:
        return e
    return None


def _blame(e: ConfigError, key: str, value: Any, where: str) -> ConfigError:
    path = getattr(e, "path", "") or ""
    rule = getattr(e, "rule", str(e))
    detail = rule if path == key else (f"{path}: {rule}" if path else rule)
    return config_error(key, f"{fmt(value)} ({where}): {detail}")


class Sweep:
    """A base scenario and axes: the plan of a sweep (nothing runs yet).

    Parameters
    ----------
    base : Scenario, path, or dict
        The scenario every run starts from (a :class:`satqm.Scenario`, a
        scenario file, or a parsed scenario as a dict). Its overrides
        (seed, duration, warm-up, memory limit, captured links) are kept.
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
        self.base, base_data = base_scenario(base)
        self.grid = grid_axes(grid)
        self.runs = explicit_runs(runs)
        self.fixed = fixed_values(fixed)
        self.seeds = seed_list(seeds)
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
            set_path(base_fixed, key, v)
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
            flatten(grid, data, table_always=True) if grid else None,
            seeds=doc.get("seeds"),
            runs=[flatten(r, data) for r in runs] if runs else None,
            fixed=flatten(fixed, data) if fixed else None,
            path=p,
        )

    # ----- expansion ------------------------------------------------------------

    def _expand(
        self, base_data: dict[str, Any], base_fixed: dict[str, Any], run_keys: list[str]
    ) -> list[RunPoint]:
        version = _VERSION
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
                    set_path(d, key, v)
                    e = _validate(dumps(d))
                    if e is not None:
                        single[(key, j)] = _blame(e, key, v, "grid")
            for i, entry in enumerate(self.runs):
                d = copy.deepcopy(base_fixed)
                for key, v in entry.items():
                    set_path(d, key, v)
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
                        set_path(data, key, entry[key])
                    else:
                        got = get_path(base_fixed, key)
                        params[key] = None if got is MISSING else copy.deepcopy(got)
                for key, j in zip(grid_keys, combo):
                    v = self.grid[key][j]
                    params[key] = v
                    set_path(data, key, v)
                params = {k: params[k] for k in self.axes}
                text = dumps(data)
                try:
                    info = validate(text, None, None)
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
            return config_error(k, f"{fmt(v)} ({where}): {detail}{extra}")
        if combo:
            return config_error(path, f"{rule} (in the run with {combo})")
        suffix = " (with the set values applied)" if self.fixed else ""
        return config_error(path, f"{rule}{suffix}")

    @staticmethod
    def _describe(params: Mapping[str, Any], seed: int | None) -> str:
        parts = [f"{k} = {fmt(v)}" for k, v in params.items()]
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
            "satqm_version": _VERSION,
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

    def _repr_html_(self) -> str:
        """A notebook's view: the planned runs, one row each."""
        import html

        import pandas as pd

        rows = [
            {"index": p.index, "run_id": p.run_id, **p.params, "seed": p.seed} for p in self._points
        ]
        table = pd.DataFrame(rows).to_html(index=False, max_rows=40)
        return f"<div><p><code>{html.escape(repr(self))}</code></p>{table}</div>"

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

        plan = self.plan()
        folder = store.SweepStore(outp, _VERSION, bool(plot), simulate)
        disk_full: OSError | None = None
        manifest = None
        with store.locked(outp):
            try:
                store.remove_tmp_dirs(outp)
                (outp / store.RUNS).mkdir(exist_ok=True)
                store.write_plan(outp, plan)
                todo = [
                    Task(p.index, p.run_id, p.text, p.seed, p.params)
                    for p in self._points
                    if not self._ready(outp, p.run_id)
                ]
                bar = ProgressBar(len(self._points), len(todo), progress)
                with bar:
                    if todo and dask and client is None:
                        c = ex.connect(scheduler, scheduler_file)
                        try:
                            ex.execute(todo, folder, client=c, retries=retries, report=bar.report)
                        finally:
                            c.close()
                    else:
                        ex.execute(
                            todo, folder, workers=workers, client=client, retries=retries,
                            report=bar.report,
                        )  # fmt: skip
                # Every run has ended: what is left in .tmp-* is the debris of
                # attempts whose worker died (not after Ctrl-C on Dask, where
                # cancelled runs may still be finishing on the cluster).
                store.remove_tmp_dirs(outp)
            except OSError as e:
                if not files.is_disk_full(e):
                    raise
                disk_full = e
                store.remove_tmp_dirs(outp)  # the run it cut off
            finally:
                # Also after Ctrl-C: the manifest says what is done so far.
                try:
                    store.remove_stale_failures(outp)
                    manifest = store.build_manifest(outp, plan)
                    files.write_parquet_atomic(outp / store.MANIFEST, manifest)
                    timings = store.build_timings(outp, plan)
                    files.write_parquet_atomic(outp / store.TIMINGS, timings)
                except OSError as e:
                    if not files.is_disk_full(e):
                        raise
                    disk_full = disk_full or e
        if disk_full is not None:
            if manifest is not None:
                n = int((manifest["status"] == "done").sum())
            else:
                n = sum(store.is_done(outp, p.run_id) for p in self._points)
            raise store.DiskFull(
                errno.ENOSPC,
                f"no space left on {outp}: {n} runs finished are kept; "
                "free space and run the same command again",
            ) from disk_full
        assert manifest is not None
        return SweepResult(outp, plan, manifest)

    @staticmethod
    def _ready(out: Path, rid: str) -> bool:
        """Whether run ``rid`` is done and intact in ``out``; a damaged run
        folder is deleted here, to be redone."""
        status = store.run_status(out, rid)
        if status == "damaged":
            store.remove_damaged(out, rid)
        return status == "done"


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
