"""``satqm sweep``: run a sweep file, say where a sweep folder stands, tabulate it.

::

    satqm sweep FILE --out DIR [--workers N | --scheduler ADDR | --scheduler-file F]
                               [--retries N] [--quiet] [--plots] [--dry-run]
    satqm sweep status DIR
    satqm sweep table DIR --metric M [--metric M]... [--by AXIS]... [--csv]

Registered by :mod:`satqm.cli`; errors are raised as :class:`SweepCliError`,
which it reports like its own (exit 2 bad input, 1 runs failed, 130
interrupted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

USAGE = """\
satqm sweep FILE --out DIR [--workers N | --scheduler ADDR | --scheduler-file F] [options]
       satqm sweep status DIR
       satqm sweep table DIR --metric M [--metric M]... [--by AXIS]... [--csv]"""


class SweepCliError(Exception):
    """A failure to report as ``error: <message>`` with an exit status."""

    def __init__(self, message: str, status: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.status = status


def _workers(text: str) -> int:
    try:
        v = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError("must be >= 0 (0: run in this process)")
    return v


def add_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``sweep`` command to the ``satqm`` subparsers ``sub``."""
    p = sub.add_parser(
        "sweep",
        parents=[common],
        usage=USAGE,
        help="run a parameter sweep (local processes or Dask), resumable; status; tables",
        description="Run the sweep FILE (a base scenario, grid axes, seeds; see "
        "docs/sweeps.md) into DIR: one folder per run, a manifest.parquet of every run's "
        "parameters, status and summary metrics. Runs finished in DIR are not run again, "
        "so the same command resumes an interrupted or partly failed sweep. "
        "'satqm sweep status DIR' says what is done, failed and missing (exit 0 only if all "
        "is done); 'satqm sweep table DIR --metric M' prints the mean and 95 % confidence "
        "interval over seeds.",
        epilog="Exit status: 0 ok, 1 some runs failed (or, for status, not all done), "
        "2 bad input, 130 interrupted (run again to resume).",
    )
    p.add_argument("target", metavar="FILE", help="the sweep file (TOML), or 'status' / 'table'")
    p.add_argument("folder", nargs="?", metavar="DIR", help="the sweep folder (status, table)")
    run = p.add_argument_group("running a sweep")
    run.add_argument(
        "--out", metavar="DIR", help="the sweep folder (created; resumed if it exists)"
    )
    run.add_argument(
        "--workers",
        type=_workers,
        metavar="N",
        help="local worker processes (default: one per CPU; 0: in this process)",
    )
    run.add_argument(
        "--scheduler", metavar="ADDR", help="run on a Dask cluster: its scheduler, tcp://HOST:PORT"
    )
    run.add_argument(
        "--scheduler-file", metavar="F", help="run on the Dask cluster described by this file"
    )
    run.add_argument(
        "--retries",
        type=_workers,
        metavar="N",
        help="times a run whose worker died is tried again (default 2)",
    )
    run.add_argument("--plots", action="store_true", help="also draw each run's plot.png")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar; errors only")
    run.add_argument(
        "--dry-run", action="store_true", help="check the sweep and list its runs; run nothing"
    )
    tab = p.add_argument_group("table")
    tab.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help="summary metric to tabulate (repeatable: one table per metric; with --csv, "
        "one table with a metric column)",
    )
    tab.add_argument(
        "--by",
        action="append",
        metavar="AXIS",
        help="group by this axis (repeatable; default: every axis, i.e. over seeds)",
    )
    tab.add_argument("--csv", action="store_true", help="CSV instead of Markdown")
    return p


def run(args: argparse.Namespace) -> int:
    """Carry out ``satqm sweep ...``; raises :class:`SweepCliError`."""
    if args.target == "status":
        _only(args, "status", allowed=())
        return _status(_folder(args, "status"))
    if args.target == "table":
        _only(args, "table", allowed=("metric", "by", "csv"))
        return _table(_folder(args, "table"), args)
    if args.folder is not None:
        raise SweepCliError(
            f"unexpected argument {args.folder!r} (usage: satqm sweep FILE --out DIR)"
        )
    _only(args, "FILE", allowed=_RUN_OPTS)
    return _run(args)


_RUN_OPTS = (
    "out", "workers", "scheduler", "scheduler_file", "retries", "plots", "quiet", "dry_run",
)  # fmt: skip
_TABLE_OPTS = ("metric", "by", "csv")


def _only(args: argparse.Namespace, what: str, allowed: tuple[str, ...]) -> None:
    for name in _RUN_OPTS + _TABLE_OPTS:
        if name in allowed:
            continue
        v = getattr(args, name)
        if v is not None and v is not False:  # 0 is given (--workers 0)
            flag = "--" + name.replace("_", "-")
            raise SweepCliError(f"{flag} does not apply to 'satqm sweep {what}'")


def _folder(args: argparse.Namespace, what: str) -> Path:
    if args.folder is None:
        raise SweepCliError(f"usage: satqm sweep {what} DIR")
    d = Path(args.folder)
    if not d.is_dir():
        raise SweepCliError(f"{d}: no such folder")
    return d


def _load_result(d: Path) -> Any:
    from satqm.sweep import SweepResult

    try:
        return SweepResult.load(d)
    except (FileNotFoundError, ValueError) as e:
        raise SweepCliError(str(e)) from None


# ----- satqm sweep FILE --------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from satqm._core import ConfigError
    from satqm.sweep import Sweep, SweepBusy
    from satqm.sweep.store import DiskFull

    path = Path(args.target)
    if args.scheduler and args.scheduler_file:
        raise SweepCliError("give --scheduler or --scheduler-file, not both")
    dask = bool(args.scheduler or args.scheduler_file)
    if dask and args.workers is not None:
        raise SweepCliError("--workers is for the local pool; a Dask cluster has its own workers")
    try:
        sw = Sweep.from_file(path)
    except FileNotFoundError:
        raise SweepCliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise SweepCliError(f"{path}: is a directory, not a sweep file") from None
    except UnicodeDecodeError:
        raise SweepCliError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise SweepCliError(f"{path}: {e.strerror or e}") from None
    except ConfigError as e:
        raise SweepCliError(f"{path}: {e}") from e

    if args.dry_run:
        out = Path(args.out) if args.out else sw.default_out()
        seeds = f"{len(sw.seeds)} seeds" if sw.seeds is not None else "the scenario's seed"
        print(f"{path}: {len(sw)} runs of {sw.name} ({', '.join(sw.axes) or 'no axes'}; {seeds})")
        if out.is_dir():
            from satqm.sweep import store

            done = sum(store.run_status(out.absolute(), p.run_id) == "done" for p in sw.points)
            print(f"{out}: {done} done, {len(sw) - done} to run")
        return EXIT_OK
    if args.out is None:
        raise SweepCliError("--out DIR is required (the sweep folder)")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise SweepCliError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SweepCliError(f"--out {out}: cannot create: {e.strerror or e}") from None

    client = None
    if dask:
        from satqm.sweep.executors import connect

        where = (
            f"--scheduler {args.scheduler}"
            if args.scheduler
            else (f"--scheduler-file {args.scheduler_file}")
        )
        try:
            client = connect(args.scheduler, args.scheduler_file)
        except ImportError as e:
            raise SweepCliError(str(e)) from None
        except Exception as e:  # OSError, TimeoutError, a bad address, a bad file
            raise SweepCliError(f"{where}: cannot connect: {e}") from None
    progress: Any = False
    if not args.quiet:
        from rich.console import Console

        progress = Console(stderr=True)
        how = (
            f"Dask scheduler {client.scheduler.address}"
            if client is not None
            else ("this process" if args.workers == 0 else
                  f"{args.workers or _default_workers()} local worker processes")
        )  # fmt: skip
        progress.print(f"sweep {path}: {len(sw)} runs on {how} -> {out}", markup=False,
                       highlight=False)  # fmt: skip
    try:
        res = sw.run(
            out,
            workers=args.workers,
            client=client,
            retries=2 if args.retries is None else args.retries,
            progress=progress,
            plot=args.plots,
        )
    except SweepBusy as e:
        raise SweepCliError(str(e)) from None
    except DiskFull as e:
        raise SweepCliError(e.strerror or str(e), EXIT_FAILED) from None
    except KeyboardInterrupt:
        msg = "interrupted"
        try:
            c = _load_result(out).counts()
            msg += f": {c['done']} of {sum(c.values())} runs done"
        except BaseException:  # a second Ctrl-C, an unreadable folder: say less
            pass
        raise SweepCliError(
            f"{msg}; run the same command again to do the rest", EXIT_INTERRUPTED
        ) from None
    finally:
        if client is not None:
            client.close()
    c = res.counts()
    if not args.quiet:
        print(
            f"{len(res)} runs: {c['done']} done, {c['failed']} failed, {c['missing']} missing; "
            f"manifest: {res.out / 'manifest.parquet'}"
        )
    if c["failed"] or c["missing"]:
        if not args.quiet:
            _print_failures(res, limit=10, file=sys.stderr)
        raise SweepCliError(
            f"{c['failed'] + c['missing']} of {len(res)} runs did not finish "
            f"(satqm sweep status {out}); run the same command again to retry them",
            EXIT_FAILED,
        )
    return EXIT_OK


def _default_workers() -> int:
    from satqm.sweep.executors import default_workers

    return default_workers()


# ----- satqm sweep status DIR ----------------------------------------------------


def _describe(res: Any, row: Any) -> str:
    from satqm.sweep.store import display

    parts = [f"{a} = {display(_py(row[a]))}" for a in res.axes]
    parts.append(f"seed = {int(row['seed'])}")
    return ", ".join(parts)


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _print_failures(res: Any, limit: int | None = None, file: Any = None) -> None:
    f = res.failures
    for i, (_, row) in enumerate(f.iterrows()):
        if limit is not None and i >= limit:
            print(f"  … and {len(f) - limit} more", file=file)
            break
        print(f"  #{int(row['index'])} {row['run_id']} ({_describe(res, row)})", file=file)
        print(f"      {row['error']}", file=file)


def _status(d: Path) -> int:
    from satqm.sweep import store

    res = _load_result(d)
    c = res.counts()
    name = res.plan.get("base", {}).get("name") or "?"
    print(
        f"{d}: sweep of {name}, {len(res)} runs: {c['done']} done, {c['failed']} failed, "
        f"{c['missing']} missing"
    )
    if c["failed"]:
        print("failed:")
        _print_failures(res)
        f = res.failures
        damaged = f[f["error"].astype(str).str.startswith(store.DAMAGED)]
        if len(damaged):
            idx = ", ".join(f"#{int(i)}" for i in damaged["index"])
            print(f"damaged: {idx} (their files changed after they were written; "
                  "running the sweep again redoes them)")  # fmt: skip
    if c["missing"]:
        m = res.manifest[res.manifest["status"] == "missing"]
        idx = [f"#{int(i)}" for i in m["index"]]
        shown = ", ".join(idx[:40]) + (f", … ({len(idx)} in all)" if len(idx) > 40 else "")
        print(f"missing: {shown}")
    planned = set(res.manifest["run_id"].astype(str))
    runs = d / store.RUNS
    extra = (
        [p for p in runs.iterdir() if not p.name.startswith(".") and p.name not in planned]
        if runs.is_dir()
        else []
    )
    if extra:
        print(f"({len(extra)} other run folder{'s' if len(extra) != 1 else ''} in {runs}, "
              "from another sweep plan)")  # fmt: skip
    if tmp := store.tmp_dirs(d):
        print(f"({len(tmp)} unfinished run folder{'s' if len(tmp) != 1 else ''}: "
              "a sweep is running, or was killed; the next run cleans them)")  # fmt: skip
    return EXIT_OK if res.ok else EXIT_FAILED


# ----- satqm sweep table DIR -------------------------------------------------------


def _table(d: Path, args: argparse.Namespace) -> int:
    res = _load_result(d)
    if not args.metric:
        raise SweepCliError(
            "--metric M is required; metrics: " + ", ".join(res.metrics or ["(none yet)"])
        )
    metric = args.metric[0] if len(args.metric) == 1 else args.metric
    try:
        text = res.table(metric, by=args.by, fmt="csv" if args.csv else "markdown")
    except KeyError as e:
        raise SweepCliError(str(e.args[0])) from None
    sys.stdout.write(text)
    return EXIT_OK
