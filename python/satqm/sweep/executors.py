"""Executors of a sweep: this process, a local process pool, a Dask cluster.

Each takes the runs still to do and calls ``report(task, outcome)`` once per
run as it ends (``outcome["status"]`` is ``"done"`` or ``"failed"``). Every
run writes its own folder (:func:`satqm.sweep.store.run_one`), so which
executor ran it, and in what order, changes nothing on disk but ``run.json``.

On :class:`KeyboardInterrupt` an executor cancels what has not started,
stops the local workers, and re-raises; finished runs stay, and running the
sweep again does only the rest.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from satqm.sweep import store

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from distributed import Client


class Task(NamedTuple):
    """One run to do."""

    index: int
    run_id: str
    text: str
    seed: int
    params: Mapping[str, Any]


Report = Callable[[Task, "dict[str, Any]"], None]


def _submit_args(task: Task, out: Path, options: Mapping[str, Any]) -> tuple[tuple, dict]:
    """Arguments of :func:`satqm.sweep.store.run_one` for ``task``; ``options``
    holds the keywords common to all runs (``version``, ``plot``, ``simulate``)."""
    return (
        (task.text, task.seed, str(out)),
        {"run_id": task.run_id, "params": dict(task.params), **options},
    )


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# ----- in this process -------------------------------------------------------


def execute_serial(
    tasks: Sequence[Task], out: Path, *, options: Mapping[str, Any], report: Report
) -> None:
    """One run after the other in this process (``workers=0``; for debugging)."""
    for t in tasks:
        args, kwargs = _submit_args(t, out, options)
        report(t, store.run_one(*args, **kwargs))


# ----- local process pool ----------------------------------------------------


def _init_worker() -> None:
    """Pool workers leave Ctrl-C to the parent, which stops them itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import satqm  # noqa: F401  (import the package once, up front)


def _stop_workers(ex: ProcessPoolExecutor) -> None:
    """Kill the pool's processes now (their unfinished runs leave only
    ``.tmp-*`` folders, deleted on the next execution)."""
    terminate = getattr(ex, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        with contextlib.suppress(Exception):
            terminate()
        return
    procs = getattr(ex, "_processes", None) or {}
    for p in list(procs.values()):
        with contextlib.suppress(Exception):
            p.terminate()


def _wait_interruptibly(futs: set[Future]) -> tuple[set[Future], set[Future]]:
    from concurrent.futures import FIRST_COMPLETED, wait

    # A bounded wait keeps the main thread responsive to Ctrl-C everywhere.
    done, pending = wait(futs, timeout=0.5, return_when=FIRST_COMPLETED)
    return set(done), set(pending)


def execute_local(
    tasks: Sequence[Task],
    out: Path,
    *,
    workers: int,
    retries: int,
    options: Mapping[str, Any],
    report: Report,
) -> None:
    """A :class:`~concurrent.futures.ProcessPoolExecutor` of ``workers``
    processes (started with ``spawn``).

    If a worker process dies (killed, out of memory, a crash), the pool
    breaks: the runs it was running (found by their ``.tmp-*`` folders) are
    charged one attempt, a new pool is started, and every unfinished run is
    submitted again. A run charged more than ``retries + 1`` attempts is
    recorded as failed.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    ctx = multiprocessing.get_context("spawn")
    todo: dict[str, Task] = {t.run_id: t for t in tasks}
    attempts: dict[str, int] = {}
    blind_breaks = 0  # breaks with no run in flight: workers dying as they start
    while todo:
        ex = ProcessPoolExecutor(
            max_workers=max(1, min(workers, len(todo))), mp_context=ctx, initializer=_init_worker
        )
        broken = False
        try:
            futs: dict[Future, Task] = {}
            for t in sorted(todo.values(), key=lambda t: t.index):
                args, kwargs = _submit_args(t, out, options)
                try:
                    futs[ex.submit(store.run_one, *args, **kwargs)] = t
                except BrokenProcessPool:  # a worker died already: resubmit later
                    broken = True
                    break
            pending = set(futs)
            while pending:
                done, pending = _wait_interruptibly(pending)
                for f in sorted(done, key=lambda f: futs[f].index):
                    t = futs[f]
                    try:
                        outcome = f.result()
                    except BrokenProcessPool:
                        broken = True
                        continue
                    except Exception as e:  # e.g. the worker could not start
                        outcome = store.record_failure(
                            out, t.run_id, t.seed, t.params, e, "local pool"
                        )
                    todo.pop(t.run_id, None)
                    report(t, outcome)
        except BaseException:
            _stop_workers(ex)
            ex.shutdown(wait=True, cancel_futures=True)
            store.remove_tmp_dirs(out)
            raise
        ex.shutdown(wait=True, cancel_futures=True)
        if not broken:
            continue
        # The pool is gone, so every .tmp-* folder now is a run that was
        # running when a worker died (or was stopped because one did).
        in_flight = store.remove_tmp_dirs(out)
        if not in_flight:
            blind_breaks += 1
            if blind_breaks > retries:
                err = RuntimeError("the worker processes die as they start")
                for rid in sorted(todo, key=lambda r: todo[r].index):
                    t = todo[rid]
                    report(t, store.record_failure(out, rid, t.seed, t.params, err, "local pool"))
                todo.clear()
                break
        for rid in in_flight:
            t = todo.get(rid)
            if t is None:
                continue
            if store.is_done(out, rid):  # finished just before the end
                todo.pop(rid)
                report(t, {"run_id": rid, "status": "done"})
                continue
            attempts[rid] = attempts.get(rid, 0) + 1
            if attempts[rid] > retries:
                err = RuntimeError(
                    f"a worker process died while running it ({attempts[rid]} times): "
                    "killed, out of memory, or crashed"
                )
                todo.pop(rid)
                report(t, store.record_failure(out, rid, t.seed, t.params, err, "local pool"))
        for rid in [r for r in todo if store.is_done(out, r)]:
            report(todo.pop(rid), {"run_id": rid, "status": "done"})


# ----- Dask ------------------------------------------------------------------


def connect(
    scheduler: str | None = None, scheduler_file: str | os.PathLike[str] | None = None
) -> Client:
    """A :class:`distributed.Client` for a scheduler address or file."""
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            "running a sweep on Dask needs dask.distributed: pip install 'satqm[dask]'"
        ) from None
    # The connection timeout is Dask's (distributed.comm.timeouts.connect,
    # 30 s by default; DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=10s to change).
    if scheduler_file is not None:
        return Client(scheduler_file=str(scheduler_file))
    return Client(scheduler)


def execute_dask(
    tasks: Sequence[Task],
    out: Path,
    *,
    client: Client,
    retries: int,
    options: Mapping[str, Any],
    report: Report,
) -> None:
    """Submit every run to a Dask cluster (``retries`` for lost workers).

    The workers must see ``out`` at the same path (a shared file system) and
    have the same satqm version installed (a worker with another version
    records the run as failed rather than writing a different result).
    Deterministic errors are recorded by the run itself and not retried.
    """
    from distributed import as_completed

    futs = {}
    for t in sorted(tasks, key=lambda t: t.index):
        args, kwargs = _submit_args(t, out, options)
        f = client.submit(
            store.run_one,
            *args,
            **kwargs,
            key=f"satqm-run-{t.run_id}-{uuid.uuid4().hex[:8]}",
            pure=False,
            retries=retries,
        )
        futs[f] = t
    try:
        for f in as_completed(list(futs)):
            t = futs[f]
            try:
                outcome = f.result()
            except Exception as e:  # KilledWorker after retries, lost data, …
                outcome = store.record_failure(out, t.run_id, t.seed, t.params, e, "dask")
            report(t, outcome)
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel(list(futs))
        raise
    finally:
        futs.clear()
