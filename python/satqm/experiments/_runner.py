"""Run a batch of scenarios in worker processes and save each run's results.

Reproductions are small batches (tens of runs); each run is one process task
that writes its folder with :meth:`Results.save` (atomic), so a finished run
is never redone when the folder exists and an interrupted batch can be
restarted.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import math
import multiprocessing as mp
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass(frozen=True)
class Run:
    """One run: a name (its folder), the scenario text and the seed."""

    name: str
    text: str
    seed: int


def _run_one(text: str, seed: int, folder: str) -> str:
    import satqm

    res = satqm.run(satqm.Scenario.from_toml(text), seed=seed)
    res.save(folder)
    return folder


def run_all(
    runs: list[Run],
    out: Path,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Path]:
    """Run every run not already saved under ``out/<name>``; returns the folders."""
    out.mkdir(parents=True, exist_ok=True)
    folders = {r.name: out / r.name for r in runs}
    todo = [r for r in runs if not (folders[r.name] / "summary.json").exists()]
    done = len(runs) - len(todo)
    if progress:
        progress(done, len(runs))
    if not todo:
        return folders
    n = workers or min(len(todo), os.cpu_count() or 1)
    if n <= 1:
        for r in todo:
            _run_one(r.text, r.seed, str(folders[r.name]))
            done += 1
            if progress:
                progress(done, len(runs))
        return folders
    ctx = mp.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
        futures = [pool.submit(_run_one, r.text, r.seed, str(folders[r.name])) for r in todo]
        try:
            for fut in cf.as_completed(futures):
                fut.result()
                done += 1
                if progress:
                    progress(done, len(runs))
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
    return folders


def write_json(path: Path, data: object) -> None:
    """Write JSON through a temporary name, then rename."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
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
