"""Where runs are kept: a sweep folder, or a folder of named runs; and the
function that runs one point of a sweep.

Layout of a sweep folder::

    DIR/
      sweep.json            the plan: every run's index, id, seed, axis values
      manifest.parquet      one row per planned run: parameters, status,
                            error, summary metrics (rebuilt from runs/ and
                            failed/ after every execution)
      timings.parquet       wall-clock seconds per finished run (not
                            deterministic; kept apart from the manifest)
      runs/<run_id>/        one finished run: Results.save files + params.json
      failed/<run_id>.json  the error of a run that failed (removed once it
                            succeeds)
      .lock                 held (flock) while a sweep executes in DIR
      .workers.lock         held (shared) by each local pool worker while it lives

A run folder appears only complete: the run is written into
``runs/.tmp-<run_id>-<host>-<pid>-<random>/``, its files flushed to disk, and
the folder renamed to ``runs/<run_id>`` in one step. A crash leaves at most a
``.tmp-*`` folder, which the next execution deletes. So a run is finished
when ``runs/<run_id>/params.json`` exists.

``params.json`` also records the size and SHA-256 of every other file of
the run whose bytes are deterministic (:func:`file_record`). A folder damaged
after it was published (a truncated copy, a disk error, an edit by hand) no
longer matches its record: :func:`run_status` calls it ``"damaged"``, the
manifest reports it as failed with the reason, and the next execution
deletes and redoes it (:func:`check_run`).

The run id is the first 16 hex digits of the SHA-256 of the canonical
scenario text, the seed and the satqm version (:func:`make_run_id`).

The executors (:mod:`satqm.sweep.executors`) see a store through four
methods: :class:`SweepStore` for a sweep folder, :class:`NamedRuns` for run
folders named by the caller (the ``runs/`` of a paper reproduction, which
hold the :meth:`satqm.Results.save` files only).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from satqm.sweep import files
from satqm.sweep.files import TMP_PREFIX

if TYPE_CHECKING:
    import pandas as pd

    from satqm.results import Results
    from satqm.scenario import Scenario
    from satqm.sweep.executors import Task

RUNS = "runs"
FAILED = "failed"
PLAN = "sweep.json"
MANIFEST = "manifest.parquet"
TIMINGS = "timings.parquet"
LOCK = ".lock"
WORKER_LOCK = ".workers.lock"
#: Seconds a new execution waits for the pool workers of a killed one to end.
WORKER_LOCK_WAIT_S = 30.0
PARAMS = "params.json"
#: The file of a finished run in a :class:`NamedRuns` folder.
NAMED_DONE = "summary.json"
#: The record of a :class:`NamedRuns` run's files (sizes and SHA-256), a
#: hidden file beside what :meth:`satqm.Results.save` wrote.
NAMED_RECORD = ".files.json"

#: Files of a run left out of its record in ``params.json``: the record
#: itself, and the two whose bytes differ from one execution to the next
#: (``run.json`` is checked to be readable instead).
UNRECORDED = (PARAMS, NAMED_RECORD, "run.json", "plot.png")
#: How a damaged run's ``error`` in the manifest begins.
DAMAGED = "damaged run folder"

#: Bumped when the folder layout changes incompatibly.
FORMAT = 1


class DiskFull(OSError):
    """The disk holding a sweep folder is full (``errno`` ``ENOSPC``): the
    sweep stopped, keeping the runs that finished."""


def make_run_id(text: str, seed: int, version: str) -> str:
    """Name of a run's folder: ``sha256(text NUL seed NUL version)``, 16 hex digits."""
    h = hashlib.sha256()
    h.update(text.encode("utf-8"))
    h.update(b"\0")
    h.update(str(int(seed)).encode("ascii"))
    h.update(b"\0")
    h.update(version.encode("utf-8"))
    return h.hexdigest()[:16]


# ----- run folders -----------------------------------------------------------


def run_dir(out: Path, rid: str) -> Path:
    return out / RUNS / rid


def failed_file(out: Path, rid: str) -> Path:
    return out / FAILED / f"{rid}.json"


def is_done(out: Path, rid: str) -> bool:
    """Whether run ``rid`` was published (see :func:`check_run` for whether
    it is still intact)."""
    return (run_dir(out, rid) / PARAMS).is_file()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def file_record(folder: Path) -> dict[str, dict[str, Any]]:
    """``{name: {"bytes": size, "sha256": hex}}`` for the files of a run
    folder but :data:`UNRECORDED`, by name (the same for the same run)."""
    rec = {}
    for p in sorted(folder.iterdir(), key=lambda p: p.name):
        if p.name not in UNRECORDED and p.is_file():
            rec[p.name] = {"bytes": p.stat().st_size, "sha256": _sha256(p)}
    return rec


def check_files(folder: Path, recorded: Mapping[str, Any] | None) -> str | None:
    """What is wrong with the run folder ``folder`` against ``recorded``,
    the :func:`file_record` written when it was published (``None``:
    nothing). Each recorded file must be present, of the recorded size and
    SHA-256; ``run.json`` must be readable JSON. Without a record (a folder
    from before records were kept) its ``summary.json`` is read instead."""
    for name, rec in (recorded or {}).items():
        p = folder / name
        try:
            size = p.stat().st_size
        except OSError:
            return f"{name}: missing"
        if size != rec.get("bytes"):
            return f"{name}: {size} bytes, {rec.get('bytes')} when written"
        try:
            if _sha256(p) != rec.get("sha256"):
                return f"{name}: its contents changed since it was written"
        except OSError as e:
            return f"{name}: not readable ({e.strerror or e})"
    for name in ("run.json",) if recorded is not None else ("summary.json", "run.json"):
        p = folder / name
        if name == "run.json" and not p.exists():
            continue
        try:
            files.read_json(p)
        except (OSError, ValueError):
            return f"{name}: not readable JSON"
    return None


def _recorded(path: Path) -> dict[str, Any] | None:
    """The ``files`` record in the JSON file ``path``; ``None`` if it has
    none. Raises ``OSError``/``ValueError`` if ``path`` is not readable."""
    doc = files.read_json(path)
    recorded = doc.get("files") if isinstance(doc, dict) else None
    return recorded if isinstance(recorded, dict) else None


def check_run(out: Path, rid: str) -> str | None:
    """What is wrong with the published sweep run ``rid`` (``None``:
    nothing): its files against the record in its ``params.json``
    (:func:`check_files`)."""
    d = run_dir(out, rid)
    try:
        recorded = _recorded(d / PARAMS)
    except (OSError, ValueError):
        return f"{PARAMS}: not readable"
    return check_files(d, recorded)


def remove_damaged(out: Path, rid: str) -> None:
    """Delete a damaged sweep run folder (:func:`remove_folder`)."""
    remove_folder(run_dir(out, rid))


def remove_folder(d: Path) -> None:
    """Delete a damaged run folder, first renamed out of the way so that it
    is never seen half deleted."""
    aside = d.with_name(f"{TMP_PREFIX}{d.name}-damaged-0-{os.urandom(4).hex()}")
    os.rename(d, aside)
    shutil.rmtree(aside, ignore_errors=True)


def tmp_dirs(out: Path) -> list[Path]:
    """Unfinished run folders (``runs/.tmp-*``) left by interrupted workers."""
    return files.tmp_dirs(out / RUNS)


def remove_tmp_dirs(out: Path) -> list[str]:
    """Delete the unfinished run folders; returns their run ids."""
    return files.remove_tmp_dirs(out / RUNS)


def _error_record(
    rid: str, seed: int, params: Mapping[str, Any], exc: BaseException, where: str
) -> dict[str, Any]:
    return {
        "run_id": rid,
        "seed": seed,
        "params": dict(params),
        "error_type": type(exc).__name__,
        "error": str(exc) or type(exc).__name__,
        "where": where,
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }


def record_failure(
    out: Path,
    rid: str,
    seed: int,
    params: Mapping[str, Any],
    exc: BaseException,
    where: str = "",
) -> dict[str, Any]:
    """Write ``failed/<rid>.json`` unless the run has meanwhile finished.

    Returns the outcome dict the executors report (``status`` is ``"failed"``
    or, if another attempt finished it, ``"done"``).
    """
    if is_done(out, rid):
        return {"run_id": rid, "status": "done", "skipped": True}
    rec = _error_record(rid, seed, params, exc, where or socket.gethostname())
    (out / FAILED).mkdir(parents=True, exist_ok=True)
    files.write_json_atomic(failed_file(out, rid), _jsonable(rec))
    return {"run_id": rid, "status": "failed", "error": f"{rec['error_type']}: {rec['error']}"}


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and v != v:  # NaN
        return None
    return v


def simulate_into(
    folder: Path,
    text: str,
    seed: int,
    *,
    plot: bool,
    simulate: Callable[[Scenario], Results] | None = None,
) -> None:
    """Run the scenario ``text`` with ``seed`` and save its results in
    ``folder`` (:meth:`satqm.Results.save`): the work of one run, whichever
    store keeps it."""
    from satqm.scenario import Scenario
    from satqm.simulation import run

    sc = Scenario(text, seed=seed)
    res = run(sc) if simulate is None else simulate(sc)
    res.save(folder, plot=plot)


def run_one(
    text: str,
    seed: int,
    out: str | os.PathLike[str],
    *,
    run_id: str | None = None,
    params: Mapping[str, Any] | None = None,
    version: str | None = None,
    plot: bool = False,
    simulate: Callable[[Scenario], Results] | None = None,
) -> dict[str, Any]:
    """Run one scenario and store it in ``out/runs/<run_id>`` (the sweep's
    worker function; top level so that process pools and Dask can import it).

    ``text`` is the scenario TOML, ``seed`` the seed to run it with, ``out``
    the sweep folder (shared by all workers). A run that raises is recorded
    in ``out/failed/<run_id>.json`` and reported, not raised, so that the
    sweep goes on (and Dask does not retry a deterministic error). A run
    already finished (by an earlier attempt) is not run again. ``simulate``
    (a function :class:`satqm.Scenario` -> :class:`satqm.Results`) replaces
    :func:`satqm.run`.

    Returns ``{"run_id", "status": "done" | "failed", ...}``.
    """
    from satqm._core import __version__

    outp = Path(out)
    params = dict(params or {})
    rid = run_id if run_id is not None else make_run_id(text, seed, __version__)
    final = run_dir(outp, rid)
    if (final / PARAMS).is_file():
        return {"run_id": rid, "status": "done", "skipped": True}
    if version is not None and version != __version__:
        err = RuntimeError(
            f"this worker ({socket.gethostname()}) has satqm {__version__}, "
            f"the sweep was planned with satqm {version}"
        )
        return record_failure(outp, rid, seed, params, err)

    tmp = files.new_tmp_dir(outp / RUNS, rid)
    t0 = time.perf_counter()
    try:
        simulate_into(tmp, text, seed, plot=plot, simulate=simulate)
        doc = {
            "run_id": rid,
            "seed": int(seed),
            "satqm_version": __version__,
            "params": _jsonable(params),
        }
        doc["files"] = file_record(tmp)
        (tmp / PARAMS).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        files.publish(tmp, final, PARAMS)
    except Exception as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if files.is_disk_full(e):
            raise  # nothing more can be written: the sweep stops
        return record_failure(outp, rid, seed, params, e)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    with contextlib.suppress(OSError):
        failed_file(outp, rid).unlink()
    return {
        "run_id": rid,
        "status": "done",
        "wall_time_s": time.perf_counter() - t0,
    }


# ----- what the executors see ---------------------------------------------------


@dataclass(frozen=True)
class SweepStore:
    """A sweep folder as the executors use it (:class:`~satqm.sweep.executors.RunStore`).

    ``version`` is the satqm version the sweep was planned with (a worker
    with another one records the run as failed), ``plot`` draws each run's
    ``plot.png``, ``simulate`` replaces :func:`satqm.run`.
    """

    out: Path
    version: str | None = None
    plot: bool = False
    simulate: Callable[[Scenario], Results] | None = None

    def worker_start(self) -> None:
        """In a local pool worker, before its first run: mark the folder as
        in use while the worker lives (:func:`hold_worker_lock`)."""
        hold_worker_lock(self.out)

    def run(self, task: Task) -> dict[str, Any]:
        return run_one(
            task.text,
            task.seed,
            self.out,
            run_id=task.run_id,
            params=task.params,
            version=self.version,
            plot=self.plot,
            simulate=self.simulate,
        )

    def is_done(self, rid: str) -> bool:
        return is_done(self.out, rid)

    def remove_unfinished(self) -> list[str]:
        return remove_tmp_dirs(self.out)

    def record_failure(self, task: Task, exc: BaseException, where: str) -> dict[str, Any]:
        return record_failure(self.out, task.run_id, task.seed, task.params, exc, where)


@dataclass(frozen=True)
class NamedRuns:
    """Run folders named by the caller, ``ROOT/<name>/``, holding what
    :meth:`satqm.Results.save` writes and the record of those files
    (``.files.json``): the ``runs/`` of a paper reproduction
    (:class:`~satqm.sweep.executors.RunStore`).

    A task's ``run_id`` is its folder name. A run is done when its
    ``summary.json`` exists; it is written under a ``.tmp-*`` name and
    renamed when complete, like a sweep's runs. A run that fails leaves no
    file: its error is only reported (the caller decides what to do).
    :meth:`ready` also checks a done run's files against its record and
    deletes a damaged run, to be redone.
    """

    root: Path
    plot: bool = True

    def folder(self, name: str) -> Path:
        return self.root / name

    def run(self, task: Task) -> dict[str, Any]:
        final = self.folder(task.run_id)
        if self.is_done(task.run_id):
            return {"run_id": task.run_id, "status": "done", "skipped": True}
        tmp = files.new_tmp_dir(self.root, task.run_id)
        t0 = time.perf_counter()
        try:
            simulate_into(tmp, task.text, task.seed, plot=self.plot)
            files.write_json_atomic(tmp / NAMED_RECORD, {"files": file_record(tmp)})
            files.publish(tmp, final, NAMED_DONE)
        except Exception as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if files.is_disk_full(e):
                raise  # nothing more can be written: the batch stops
            return self.record_failure(task, e, socket.gethostname())
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return {"run_id": task.run_id, "status": "done", "wall_time_s": time.perf_counter() - t0}

    def is_done(self, rid: str) -> bool:
        return (self.folder(rid) / NAMED_DONE).is_file()

    def check(self, rid: str) -> str | None:
        """What is wrong with the done run ``rid`` (``None``: nothing), by
        its record (:func:`check_files`)."""
        d = self.folder(rid)
        record = d / NAMED_RECORD
        try:
            recorded = _recorded(record) if record.exists() else None
        except (OSError, ValueError):
            return f"{NAMED_RECORD}: not readable"
        return check_files(d, recorded)

    def ready(self, rid: str) -> bool:
        """Whether run ``rid`` is done and intact; a damaged run folder is
        deleted here, to be redone."""
        if not self.is_done(rid):
            return False
        if self.check(rid) is None:
            return True
        remove_folder(self.folder(rid))
        return False

    def remove_unfinished(self) -> list[str]:
        return files.remove_tmp_dirs(self.root)

    def record_failure(self, task: Task, exc: BaseException, where: str) -> dict[str, Any]:
        if self.is_done(task.run_id):
            return {"run_id": task.run_id, "status": "done", "skipped": True}
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return {"run_id": task.run_id, "status": "failed", "error": error, "where": where}


# ----- the plan and the manifest --------------------------------------------


def write_plan(out: Path, plan: Mapping[str, Any]) -> None:
    files.write_json_atomic(out / PLAN, _jsonable(plan))


def read_plan(out: Path) -> dict[str, Any]:
    p = out / PLAN
    if not p.is_file():
        raise FileNotFoundError(f"{out}: not a sweep folder (no {PLAN})")
    plan = files.read_json(p)
    if plan.get("format") != FORMAT:
        raise ValueError(f"{p}: sweep folder format {plan.get('format')!r}, expected {FORMAT}")
    return plan


def run_status(out: Path, rid: str) -> str:
    """``"done"``, ``"damaged"`` (published, but its files no longer match
    their record), ``"failed"`` or ``"missing"``."""
    if is_done(out, rid):
        return "done" if check_run(out, rid) is None else "damaged"
    if failed_file(out, rid).is_file():
        return "failed"
    return "missing"


def _column(values: Sequence[Any]) -> Any:
    """Values of one axis as one typed column (``None``: a key an explicit
    run left out where the base has no value; missing in the column).

    Numbers and booleans stay typed, other values become text: their
    :func:`label`, or their :func:`display` for every value of the axis if
    two different values would share a label."""
    import numpy as np
    import pandas as pd

    present = [v for v in values if v is not None]
    nulls = len(present) != len(values)
    if present and all(isinstance(v, bool) for v in present):
        return pd.array(values, dtype="boolean") if nulls else np.asarray(values, dtype=bool)
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.array(values, dtype="Int64") if nulls else np.asarray(values, dtype=np.int64)
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    if all(isinstance(v, str) for v in present):
        return list(values)  # pandas infers its string dtype
    texts = [None if v is None else display(v) for v in values]
    labels = [None if v is None else label(v) for v in values]
    if len(set(labels) - {None}) == len(set(texts) - {None}):  # one label per value
        return labels
    return texts


def label(v: Any) -> str:
    """An axis value as a short readable text.

    A table with a ``kind`` (an ``[[aqm]]`` or ``[[traffic]]`` entry) is
    ``AT=KIND``, its other keys after it in parentheses, sorted:
    ``bottleneck=pie``, ``bottleneck=red(max_p=0.1, min_th=5)``; a list of
    such tables joins theirs with ", " (``bottleneck=pie, access[0]=red``),
    and is ``none`` when empty. Anything else is its :func:`display`.
    """
    if _is_kind_table(v):
        return _table_label(v)
    if isinstance(v, (list, tuple)) and all(_is_kind_table(t) for t in v):
        return ", ".join(_table_label(t) for t in v) if v else "none"
    return display(v)


def _is_kind_table(v: Any) -> bool:
    return isinstance(v, Mapping) and isinstance(v.get("kind"), str)


def _table_label(t: Mapping[str, Any]) -> str:
    at = t.get("at")
    head = f"{at}={t['kind']}" if isinstance(at, str) else str(t["kind"])
    rest = sorted(k for k in t if k != "kind" and not (k == "at" and isinstance(at, str)))
    if not rest:
        return head
    return head + "(" + ", ".join(f"{k}={display(t[k])}" for k in rest) + ")"


def display(v: Any) -> str:
    """A value as a short text (strings as they are, missing as "", the rest
    as JSON: ``true``, ``100``, ``{"bytes": "1 MB"}``)."""
    if isinstance(v, str):
        return v
    if v is None or type(v).__name__ == "NAType" or (isinstance(v, float) and v != v):
        return ""  # missing (a key an explicit run left out)
    return json.dumps(_jsonable(v), sort_keys=True, separators=(", ", ": "))


def _iter_rows(out: Path, plan: Mapping[str, Any]) -> Iterator[tuple[dict, str, Any]]:
    for r in plan["runs"]:
        rid = r["run_id"]
        status = run_status(out, rid)
        detail: Any = None
        if status == "done":
            try:
                detail = files.read_json(run_dir(out, rid) / "summary.json")
            except (OSError, ValueError) as e:  # damaged while we looked
                status, detail = "damaged", f"summary.json: {e}"
        if status == "damaged":
            problem = detail or check_run(out, rid) or "changed"
            status = "failed"
            detail = {
                "error_type": None,
                "error": f"{DAMAGED}: {problem}; running the sweep again redoes it",
            }
        elif status == "failed":
            try:
                detail = files.read_json(failed_file(out, rid))
            except (OSError, ValueError) as e:
                detail = {"error_type": type(e).__name__, "error": str(e)}
        yield r, status, detail


def build_manifest(out: Path, plan: Mapping[str, Any]) -> pd.DataFrame:
    """One row per planned run, in plan order, from the run folders.

    Columns: ``index``, ``run_id``, ``status`` (``done``, ``failed``,
    ``missing``), one per axis (the axis key), ``seed``, ``error``, then the
    summary metrics of the run (NaN unless done). A damaged run folder
    (:func:`check_run`) is ``failed`` with an ``error`` that begins with
    :data:`DAMAGED`. No wall-clock values: for the same finished runs the
    table is the same, bytes included.
    """
    import numpy as np
    import pandas as pd

    axes: list[str] = list(plan["axes"])
    rows = list(_iter_rows(out, plan))
    cols: dict[str, Any] = {
        "index": np.asarray([r["index"] for r, _, _ in rows], dtype=np.int64),
        "run_id": [r["run_id"] for r, _, _ in rows],
        "status": [s for _, s, _ in rows],
    }
    for a in axes:
        cols[a] = _column([r["params"].get(a) for r, _, _ in rows])
    cols["seed"] = np.asarray([r["seed"] for r, _, _ in rows], dtype=np.int64)
    errors = []
    for _, s, d in rows:
        if s != "failed":
            errors.append(None)
        elif d.get("error_type", "Error") is None:  # a damaged folder: the text says so
            errors.append(d.get("error", ""))
        else:
            errors.append(f"{d.get('error_type', 'Error')}: {d.get('error', '')}")
    cols["error"] = errors
    metrics: list[str] = []
    for _, s, d in rows:
        if s == "done":
            for k in d.get("summary", {}):
                if k not in metrics and k not in cols:
                    metrics.append(k)
    for m in metrics:
        col = np.full(len(rows), np.nan)
        for i, (_, s, d) in enumerate(rows):
            if s == "done":
                v = d.get("summary", {}).get(m)
                col[i] = np.nan if v is None else float(v)
        cols[m] = col
    return pd.DataFrame(cols)


def build_timings(out: Path, plan: Mapping[str, Any]) -> pd.DataFrame:
    """Wall-clock seconds and events of each finished run (from run.json)."""
    import numpy as np
    import pandas as pd

    idx, ids, wall, events = [], [], [], []
    for r in plan["runs"]:
        rid = r["run_id"]
        p = run_dir(out, rid) / "run.json"
        if not (run_dir(out, rid) / PARAMS).is_file() or not p.is_file():
            continue
        try:
            doc = files.read_json(p)
        except (OSError, ValueError):
            continue
        idx.append(r["index"])
        ids.append(rid)
        w = doc.get("wall_time_s")
        wall.append(np.nan if w is None else float(w))
        e = doc.get("events")
        events.append(np.nan if e is None else float(e))
    return pd.DataFrame(
        {
            "index": np.asarray(idx, dtype=np.int64),
            "run_id": ids,
            "wall_time_s": np.asarray(wall, dtype=np.float64),
            "events": np.asarray(events, dtype=np.float64),
        }
    )


def remove_stale_failures(out: Path) -> None:
    """Delete failure records of runs that have since finished."""
    d = out / FAILED
    if not d.is_dir():
        return
    for p in d.iterdir():
        if p.name.startswith(TMP_PREFIX):
            # A half-written record of a killed process (never complete).
            with contextlib.suppress(OSError):
                p.unlink()
        elif p.suffix == ".json" and is_done(out, p.stem):
            with contextlib.suppress(OSError):
                p.unlink()


class SweepBusy(RuntimeError):
    """Another process is executing a sweep in the same folder."""


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``out/.lock`` (released if the process dies).

    Then wait (up to :data:`WORKER_LOCK_WAIT_S`) until no local pool worker
    of an earlier execution is alive: each holds a shared lock on
    ``out/.workers.lock`` while it lives (:func:`hold_worker_lock`). Workers
    die with the process that started them, but not in the same instant, and
    one still running could publish a run while this execution redoes it.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        yield
        return
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepBusy(f"{out}: another sweep is running in this folder") from None
        except OSError:  # pragma: no cover - a file system without locks
            pass
        _wait_for_old_workers(out)
        yield
    finally:
        os.close(fd)


def _wait_for_old_workers(out: Path) -> None:
    import fcntl

    fd = os.open(out / WORKER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + WORKER_LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise SweepBusy(
                        f"{out}: worker processes of an earlier sweep are still running "
                        "in this folder; wait for them to end (or stop them) and run again"
                    ) from None
                time.sleep(0.05)
            except OSError:  # pragma: no cover - a file system without locks
                return
    finally:
        os.close(fd)  # releases it: this execution's workers take it shared


_held_worker_locks: dict[str, int] = {}


def hold_worker_lock(out: str | os.PathLike[str]) -> None:
    """Hold a shared lock on ``out/.workers.lock`` until this process ends
    (a local pool worker of a sweep in ``out``; see :func:`locked`)."""
    key = os.path.abspath(out)
    if key in _held_worker_locks:
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return
    fd = os.open(Path(key) / WORKER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:  # pragma: no cover - a file system without locks
        os.close(fd)
        return
    _held_worker_locks[key] = fd
