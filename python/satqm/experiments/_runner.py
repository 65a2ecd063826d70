"""Run a reproduction's batch of scenarios, and small helpers the reproductions share.

The runs go through the sweep's executors (:mod:`satqm.sweep.executors`):
in this process, or in a local process pool whose dead workers are replaced
and their runs retried. Each run is kept by :class:`satqm.sweep.store.NamedRuns`
in ``runs/<name>/`` (the files of :meth:`satqm.Results.save`), written under
a temporary name and renamed when complete, with a record of its files' sizes
and SHA-256, so a finished run is never redone when its folder is intact, a
damaged one (a truncated copy, an edit by hand) is redone, and an interrupted
batch can be restarted. A saved run whose scenario text or seed is not the
one asked for (a reproduction changed since) is redone too; a change of
satqm itself is not detected, so a folder is reused only with the code that
wrote it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from satqm.sweep.executors import Task, execute
from satqm.sweep.store import NamedRuns


@dataclass(frozen=True)
class Run:
    """One run: a name (its folder), the scenario text and the seed."""

    name: str
    text: str
    seed: int


class RunFailed(RuntimeError):
    """Some runs of a reproduction failed (their errors in the message)."""


def run_all(
    runs: list[Run],
    out: Path,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Path]:
    """Run every run not already saved under ``out/<name>``; returns the folders.

    ``workers`` processes (default: one per CPU, at most one per run to do;
    1 or fewer: in this process). ``progress(done, total)`` is called before
    the first run and after each. Raises :class:`RunFailed` naming the runs
    that failed, once the others have finished.
    """
    out.mkdir(parents=True, exist_ok=True)
    store = NamedRuns(out)
    folders = {r.name: store.folder(r.name) for r in runs}
    store.remove_unfinished()  # left by a batch that was killed
    for r in runs:
        if store.is_done(r.name) and not _same_run(folders[r.name], r):
            shutil.rmtree(folders[r.name])
    todo = [
        Task(i, r.name, r.text, r.seed, {}) for i, r in enumerate(runs) if not store.ready(r.name)
    ]
    done = len(runs) - len(todo)
    failed: list[str] = []
    if progress:
        progress(done, len(runs))

    def report(task: Task, outcome: dict[str, Any]) -> None:
        nonlocal done
        if outcome.get("status") == "failed":
            failed.append(f"{task.run_id}: {outcome.get('error', '')}")
        done += 1
        if progress:
            progress(done, len(runs))

    n = workers if workers is not None else min(len(todo), os.cpu_count() or 1)
    execute(todo, store, report=report, workers=n if n > 1 else 0)
    if failed:
        raise RunFailed(f"{len(failed)} of {len(runs)} runs failed:\n" + "\n".join(failed))
    return folders


def _same_run(folder: Path, run: Run) -> bool:
    """Whether the run saved in ``folder`` ran ``run``'s scenario text with
    its seed (the header :meth:`satqm.Results.save` writes names the seed)."""
    from satqm.results import _strip_header

    try:
        saved = (folder / "scenario.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    first = saved.split("\n", 1)[0]
    return _strip_header(saved) == run.text and f" with seed = {run.seed}," in first


def write_json(path: Path, data: object) -> None:
    """Write JSON through a temporary name, then rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def save_figure(fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` under a temporary name, then rename it."""
    tmp = path.with_name(path.stem + ".tmp" + path.suffix)
    fig.savefig(tmp)
    os.replace(tmp, path)


def write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def mean_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and 95 % confidence half-width (t distribution)."""
    import numpy as np
    from scipy import stats

    a = np.asarray(xs, dtype=float)
    m = float(a.mean())
    if a.size < 2:
        return m, math.nan
    return m, float(stats.t.ppf(0.975, a.size - 1) * a.std(ddof=1) / math.sqrt(a.size))


def fmt_ci(m: float, h: float, digits: int = 2) -> str:
    return f"{m:.{digits}f}" if math.isnan(h) else f"{m:.{digits}f} ± {h:.{digits}f}"


def ci_cell(xs: list[float], digits: int = 2) -> str:
    """A table cell: the mean of ``xs`` over seeds ± its 95 % half-width
    (the mean alone for one seed); ``n/a`` when there is none to give (no
    value, or a seed without the figure)."""
    if not xs:
        return "n/a"
    m, h = mean_ci(xs)
    return "n/a" if math.isnan(m) else fmt_ci(m, h, digits)


# ---------------------------------------------------------------------------
# Scenario text: the reproductions edit the packaged scenario files as text,
# so that what a run used reads like the file it came from.
# ---------------------------------------------------------------------------


def packaged_scenario(path: str) -> str:
    """The text of a scenario shipped in the package (``scenarios/...``)."""
    from importlib.resources import files

    return files("satqm").joinpath(path).read_text(encoding="utf-8")


def before_aqm(text: str) -> str:
    """The scenario text before its first ``[[aqm]]`` table (at the start of
    a line: a comment may mention the table too)."""
    m = re.search(r"^\[\[aqm\]\]", text, flags=re.M)
    if m is None:
        raise ValueError("the scenario has no [[aqm]] table")
    return text[: m.start()]


def set_run(
    text: str,
    *,
    name: str | None = None,
    duration: float | None = None,
    warmup: float | None = None,
) -> str:
    """The scenario text with its ``name``, ``duration`` and ``warmup`` keys
    (the first of each at the start of a line) set to the given values."""
    for key, value in (
        ("name", None if name is None else f'"{name}"'),
        ("duration", None if duration is None else f'"{duration:g} s"'),
        ("warmup", None if warmup is None else f'"{warmup:g} s"'),
    ):
        if value is not None:
            text = re.sub(rf'^{key} = "[^"]*"', f"{key} = {value}", text, count=1, flags=re.M)
    return text
