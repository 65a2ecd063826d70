"""Run a scenario, or step through it.

:class:`Simulation` runs one scenario step by step; :func:`run` runs it to the
end and returns :class:`satqm.Results`::

    import satqm
    res = satqm.run("scenarios/examples/dumbbell-droptail.toml", duration=20)
    res.timeseries.query("link == 'bottleneck'").plot(x="time_s", y="queue_packets")
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from satqm._core import Simulation as CoreSimulation
from satqm.results import Results
from satqm.scenario import ScenarioLike, as_scenario

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["DropLogFull", "Simulation", "run"]


class DropLogFull(UserWarning):
    """The drop log stopped at its most rows (``simulation.log_drops``)."""


class Simulation:
    """One run of a scenario, advanced step by step or to the end.

    >>> sim = satqm.Simulation("scenarios/examples/dumbbell-droptail.toml", duration=20)
    >>> while not sim.finished:
    ...     sim.run_until(sim.now + 1.0)     # look at something every second
    >>> res = sim.results()

    Stepping never changes the outcome: the same seed gives the same results
    however the run is divided. A step releases the GIL and stops with
    :class:`KeyboardInterrupt` on Ctrl-C, after which the run can go on.
    """

    def __init__(
        self,
        scenario: ScenarioLike,
        seed: int | None = None,
        duration: float | None = None,
        capture: Sequence[str] | None = None,
        warmup: float | None = None,
        capture_side: str | None = None,
    ) -> None:
        sc = as_scenario(scenario).with_overrides(
            seed=seed,
            duration=duration,
            capture=capture,
            warmup=warmup,
            capture_side=capture_side,
        )
        self.scenario = sc
        self._sim = CoreSimulation(*sc.core_arguments())
        self._wall = 0.0

    @property
    def seed(self) -> int:
        return self.scenario.seed

    @property
    def now(self) -> float:
        """Current simulated time in seconds."""
        return self._sim.now

    @property
    def end(self) -> float:
        """Simulated time at which the run ends, in seconds."""
        return self._sim.end

    @property
    def finished(self) -> bool:
        return self._sim.finished

    @property
    def events(self) -> int:
        """Events processed so far."""
        return self._sim.events

    @property
    def wall_time_s(self) -> float:
        """Wall-clock seconds spent simulating so far."""
        return self._wall

    def run_until(self, t: float) -> float:
        """Advance to simulated time ``t`` seconds (at most :attr:`end`).

        Returns the new :attr:`now`.
        """
        t0 = time.perf_counter()
        try:
            return self._sim.run_until(t)
        finally:
            self._wall += time.perf_counter() - t0

    def run(self, progress: bool | Console = False) -> float:
        """Run to the end; returns :attr:`end`.

        With ``progress`` (``True`` or a :class:`rich.console.Console`), show a
        progress bar of simulated time, advancing in 1 % steps.
        """
        if not progress:
            return self.run_until(self.end)
        console = None if progress is True else progress
        return _run_with_progress(self, console)

    def results(self) -> Results:
        """Everything recorded so far (the run need not be finished).

        Warns (:class:`DropLogFull`) when the drop log reached its most rows
        (``simulation.log_drops``): the ``drops`` table then holds the first
        drops only, while the summary counts every one.
        """
        res = Results._from_core(self._sim.results(), self.scenario, self._wall)
        full_at = res.summary().get("drop_log_full_s")
        if full_at is not None:
            warnings.warn(
                f"{self.scenario.name}: the drop log kept its first {len(res.drops):,} rows "
                f"(to t = {full_at:.6g} s), the most simulation.log_drops allows; the summary "
                "counts every drop. Set simulation.log_drops = true to keep every row.",
                DropLogFull,
                stacklevel=2,
            )
        return res

    def __repr__(self) -> str:
        return (
            f"Simulation({self.scenario.name!r}, seed={self.seed}, "
            f"now={self.now:.6g} s, end={self.end:.6g} s)"
        )


def _run_with_progress(sim: Simulation, console: Console | None = None, steps: int = 100) -> float:
    """Drive ``sim`` to its end in ``steps`` slices of simulated time, with a
    rich progress bar on stderr (or ``console``)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    if console is None:
        console = Console(stderr=True)
    end = sim.end
    step = end / steps
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[sim]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(
            sim.scenario.name, total=end, sim=f"0/{end:.6g} s", rate="", completed=sim.now
        )
        last_events, last_wall = sim.events, time.perf_counter()
        i = 0
        while not sim.finished:
            i += 1
            target = end if i >= steps else max(sim.now, min(end, i * step))
            now = sim.run_until(target)
            wall = time.perf_counter()
            dt = wall - last_wall
            if dt > 0.25 or sim.finished:
                ev = sim.events
                rate = (ev - last_events) / dt if dt > 0 else math.inf
                last_events, last_wall = ev, wall
                bar.update(task, rate=f"{rate / 1e6:.2f} M events/s")
            bar.update(task, completed=now, sim=f"{now:.6g}/{end:.6g} s")
    return sim.now


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    duration: float | None = None,
    progress: bool | Console = False,
    capture: Sequence[str] | None = None,
    warmup: float | None = None,
    capture_side: str | None = None,
) -> Results:
    """Run a scenario (a :class:`Scenario` or a file path) to the end.

    ``seed``, ``duration`` and ``warmup`` (seconds), ``capture`` (links to
    write a packet capture of) and ``capture_side`` (``"out"``, ``"in"`` or
    ``"both"``: the departures after the links' queues, the arrivals before
    them, or both) replace the scenario's values.
    Raises :class:`satqm.ConfigError` for a bad scenario and
    :class:`satqm.SimulationError` if the run fails.
    """
    sim = Simulation(
        scenario,
        seed=seed,
        duration=duration,
        capture=capture,
        warmup=warmup,
        capture_side=capture_side,
    )
    sim.run(progress=progress)
    return sim.results()
