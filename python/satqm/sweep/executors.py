"""Executors of runs: this process, a local process pool, a Dask cluster.

Each takes the runs still to do and a store (:class:`RunStore`: a sweep
folder, or the named runs of a paper reproduction) and calls
``report(task, outcome)`` once per run as it ends (``outcome["status"]`` is
``"done"`` or ``"failed"``). Every run writes its own folder through the
store, so which executor ran it, and in what order, changes nothing on disk
but ``run.json``.

On :class:`KeyboardInterrupt` an executor cancels what has not started,
stops the local workers, and re-raises; finished runs stay, and running the
sweep again does only the rest. A local worker also dies when the process
that started it dies (SIGKILL included), so no run is published by a sweep
that has ended. A full disk (``ENOSPC``) stops every executor the same way:
the error is raised, nothing is recorded for the run it cut off.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol

from satqm.sweep.files import is_disk_full

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


class RunStore(Protocol):
    """Where the runs go (:class:`satqm.sweep.store.SweepStore`,
    :class:`satqm.sweep.store.NamedRuns`). It must pickle: the workers get it
    with every task."""

    def run(self, task: Task) -> dict[str, Any]:
        """Run ``task`` and keep its results (in a worker); a run that raises
        is reported as ``{"status": "failed", "error": ...}``, not raised."""
        ...

    def is_done(self, rid: str) -> bool:
        """Whether run ``rid`` has finished (its folder is complete)."""
        ...

    def remove_unfinished(self) -> list[str]:
        """Delete the folders of runs that were cut off; their run ids."""
        ...

    def record_failure(self, task: Task, exc: BaseException, where: str) -> dict[str, Any]:
        """The outcome of a run that failed outside :meth:`run` (its worker
        died, it could not be sent); ``done`` if it finished after all."""
        ...

    # Optional: ``worker_start()``, called once in each local pool worker
    # before its first run (:meth:`satqm.sweep.store.SweepStore.worker_start`).


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# ----- in this process -------------------------------------------------------


def execute_serial(tasks: Sequence[Task], store: RunStore, *, report: Report) -> None:
    """One run after the other in this process (``workers=0``; for debugging)."""
    for t in sorted(tasks, key=lambda t: t.index):
        report(t, store.run(t))


# ----- local process pool ----------------------------------------------------


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_parent(parent: int) -> None:
    """End this process when ``parent`` (the process that started it) ends.

    On Linux the kernel sends SIGKILL at the parent's death
    (``prctl(PR_SET_PDEATHSIG)``); elsewhere, or if that fails, a thread
    checks every half second whether this process has been handed to
    another parent. Either way, a parent that died before this was set up
    is caught by the check that follows.
    """
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):  # pragma: no cover - no prctl here
            armed = False
    if os.getppid() != parent:
        os._exit(1)
    if armed:
        return

    def watch() -> None:  # pragma: no cover - not Linux
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="satqm-parent-watch", daemon=True).start()


def _init_worker(parent: int, store: RunStore | None = None) -> None:
    """Pool workers die with their parent and leave Ctrl-C to it (it stops
    them itself); then the store marks its folder in use."""
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import satqm  # noqa: F401  (import the package once, up front)

    start = getattr(store, "worker_start", None)
    if start is not None:
        start()


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
    store: RunStore,
    *,
    workers: int,
    retries: int,
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
            max_workers=max(1, min(workers, len(todo))),
            mp_context=ctx,
            initializer=_init_worker,
            initargs=(os.getpid(), store),
        )
        broken = False
        try:
            futs: dict[Future, Task] = {}
            for t in sorted(todo.values(), key=lambda t: t.index):
                try:
                    futs[ex.submit(store.run, t)] = t
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
                        if is_disk_full(e):
                            raise
                        outcome = store.record_failure(t, e, "local pool")
                    todo.pop(t.run_id, None)
                    report(t, outcome)
        except BaseException:
            _stop_workers(ex)
            ex.shutdown(wait=True, cancel_futures=True)
            store.remove_unfinished()
            raise
        ex.shutdown(wait=True, cancel_futures=True)
        if not broken:
            continue
        # The pool is gone, so every .tmp-* folder now is a run that was
        # running when a worker died (or was stopped because one did).
        in_flight = store.remove_unfinished()
        if not in_flight:
            blind_breaks += 1
            if blind_breaks > retries:
                err = RuntimeError("the worker processes die as they start")
                for rid in sorted(todo, key=lambda r: todo[r].index):
                    t = todo[rid]
                    report(t, store.record_failure(t, err, "local pool"))
                todo.clear()
                break
        for rid in in_flight:
            t = todo.get(rid)
            if t is None:
                continue
            if store.is_done(rid):  # finished just before the end
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
                report(t, store.record_failure(t, err, "local pool"))
        for rid in [r for r in todo if store.is_done(r)]:
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
    store: RunStore,
    *,
    client: Client,
    retries: int,
    report: Report,
) -> None:
    """Submit every run to a Dask cluster (``retries`` for lost workers).

    The workers must see the store's folder at the same path (a shared file system) and
    have the same satqm version installed (a worker with another version
    records the run as failed rather than writing a different result).
    Deterministic errors are recorded by the run itself and not retried.
    """
    from distributed import as_completed

    futs = {}
    for t in sorted(tasks, key=lambda t: t.index):
        f = client.submit(
            store.run,
            t,
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
                if is_disk_full(e):
                    raise
                outcome = store.record_failure(t, e, "dask")
            report(t, outcome)
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel(list(futs))
        raise
    finally:
        futs.clear()


# ----- choosing one ----------------------------------------------------------


def execute(
    tasks: Sequence[Task],
    store: RunStore,
    *,
    report: Report,
    workers: int | None = None,
    client: Client | None = None,
    retries: int = 2,
) -> None:
    """Run ``tasks`` on the Dask ``client`` if one is given; else in this
    process if ``workers == 0``; else in a local pool of ``workers``
    processes (default :func:`default_workers`)."""
    if not tasks:
        return
    if client is not None:
        execute_dask(tasks, store, client=client, retries=retries, report=report)
    elif workers == 0:
        execute_serial(tasks, store, report=report)
    else:
        n = workers or default_workers()
        execute_local(tasks, store, workers=n, retries=retries, report=report)
