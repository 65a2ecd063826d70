"""Load a scenario, run it, step through it.

A :class:`Scenario` is the TOML text of a scenario file, checked by the core
on construction (so a bad file raises :class:`satqm.ConfigError` naming the
key), plus the seed and duration overrides a command line or a sweep applies.
:class:`Simulation` runs one scenario step by step; :func:`run` runs it to the
end and returns :class:`satqm.Results`::

    import satqm
    res = satqm.run("scenarios/examples/dumbbell-droptail.toml", duration=20)
    res.timeseries.query("link == 'bottleneck'").plot(x="time_s", y="queue_packets")
"""

from __future__ import annotations

import math
import operator
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from satqm import _core
from satqm._core import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

if TYPE_CHECKING:
    from rich.console import Console

    from satqm.results import Results

__all__ = ["Scenario", "Simulation", "load", "run", "ScenarioLike"]

ScenarioLike = Union["Scenario", str, "os.PathLike[str]"]

_SEED_LIMIT = 2**63


def config_error(path: str, rule: str) -> ConfigError:
    """A :class:`ConfigError` raised on the Python side, shaped like the core's."""
    err = ConfigError(f"{path}: {rule}" if path else rule)
    err.path = path
    err.rule = rule
    return err


def _check_seed(seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool):
        raise config_error("simulation.seed", "must be an integer")
    try:
        s = operator.index(seed)
    except TypeError:
        raise config_error("simulation.seed", "must be an integer") from None
    if s < 0:
        raise config_error("simulation.seed", "must be >= 0")
    if s >= _SEED_LIMIT:
        raise config_error("simulation.seed", "must be below 2^63")
    return s


def _check_duration(duration: Any) -> float | None:
    if duration is None:
        return None
    if isinstance(duration, (bool, str, bytes)):
        raise config_error("simulation.duration", "must be a number of seconds")
    try:
        return float(duration)
    except (TypeError, ValueError, OverflowError):
        raise config_error("simulation.duration", "must be a number of seconds") from None


def _fmt_seconds(s: float) -> str:
    """Seconds for people: `120 s`, `0.5 s`, `1e+06 s`."""
    return f"{s:.9g} s"


class Scenario:
    """A validated scenario: its TOML text, the parsed table, and overrides.

    Construct with :meth:`from_toml` or :func:`satqm.load`; both validate
    through the core, so an invalid scenario never gets this far.

    Attributes
    ----------
    text : str
        The TOML text exactly as given.
    data : dict
        The parsed TOML (``tomllib``), without the overrides applied.
    path : pathlib.Path or None
        The file it was read from, if any.
    overrides : dict
        ``{"seed": int, "duration": float}`` for the values given in place of
        the file's (only the keys that are overridden).
    """

    __slots__ = ("text", "data", "path", "overrides", "_info")

    def __init__(
        self,
        text: str,
        *,
        seed: int | None = None,
        duration: float | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        if not isinstance(text, str):
            raise TypeError(f"scenario text must be str, not {type(text).__name__}")
        seed = _check_seed(seed)
        duration = _check_duration(duration)
        info = _core.validate(text, seed, duration)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:  # the core accepted it; should not happen
            raise config_error("", f"invalid TOML: {e}") from None
        self.text = text
        self.data = data
        self.path = Path(path) if path is not None else None
        self.overrides: dict[str, Any] = {}
        if seed is not None:
            self.overrides["seed"] = seed
        if duration is not None:
            self.overrides["duration"] = duration
        self._info = info

    @classmethod
    def from_toml(
        cls, text: str, *, seed: int | None = None, duration: float | None = None
    ) -> Scenario:
        """Parse and validate TOML text; raises :class:`satqm.ConfigError`."""
        return cls(text, seed=seed, duration=duration)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        seed: int | None = None,
        duration: float | None = None,
    ) -> Scenario:
        """Read and validate a scenario file (UTF-8 TOML).

        Raises :class:`FileNotFoundError` (an :class:`OSError`) if it cannot be
        read and :class:`satqm.ConfigError` if it is not a valid scenario.
        """
        p = Path(path)
        text = p.read_text(encoding="utf-8-sig")  # tolerate a byte-order mark
        return cls(text, seed=seed, duration=duration, path=p)

    def with_overrides(self, *, seed: int | None = None, duration: float | None = None) -> Scenario:
        """A copy with the seed and/or duration (seconds) replaced.

        Overrides given earlier are kept unless replaced here.
        """
        if seed is None and duration is None:
            return self
        s = seed if seed is not None else self.overrides.get("seed")
        d = duration if duration is not None else self.overrides.get("duration")
        return Scenario(self.text, seed=s, duration=d, path=self.path)

    @property
    def name(self) -> str:
        """The scenario's ``name`` (``"scenario"`` if the file has none)."""
        return str(self._info["name"])

    @property
    def description(self) -> str:
        return str(self.data.get("description", ""))

    @property
    def seed(self) -> int:
        """The seed the run will use (override, else the file's, else 1)."""
        return int(self._info["seed"])

    @property
    def duration(self) -> float:
        """Simulated duration in seconds."""
        return float(self._info["duration"])

    @property
    def warmup(self) -> float:
        """Seconds excluded from the summary statistics."""
        return float(self._info["warmup"])

    @property
    def sample_interval(self) -> float:
        """Seconds between time-series samples."""
        return float(self._info["sample_interval"])

    @property
    def flows(self) -> int:
        """Number of flows (one per traffic source and pair)."""
        return int(self._info["flows"])

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path is not None else ""
        return (
            f"Scenario({self.name!r}, duration={_fmt_seconds(self.duration)!r}, "
            f"seed={self.seed}, flows={self.flows}{where})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.text == other.text and self.overrides == other.overrides

    def __hash__(self) -> int:
        return hash((self.text, tuple(sorted(self.overrides.items()))))


def load(
    path: str | os.PathLike[str], *, seed: int | None = None, duration: float | None = None
) -> Scenario:
    """Read and validate a scenario file; see :class:`Scenario`."""
    return Scenario.load(path, seed=seed, duration=duration)


def _as_scenario(scenario: ScenarioLike) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, (str, os.PathLike)):
        return load(scenario)
    raise TypeError(
        f"expected a Scenario or the path of a scenario file, not {type(scenario).__name__}"
    )


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
        self, scenario: ScenarioLike, seed: int | None = None, duration: float | None = None
    ) -> None:
        sc = _as_scenario(scenario).with_overrides(seed=seed, duration=duration)
        self.scenario = sc
        self._sim = _core.Simulation(
            sc.text, sc.overrides.get("seed"), sc.overrides.get("duration")
        )
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
        """Everything recorded so far (the run need not be finished)."""
        from satqm.results import Results

        return Results._from_core(self._sim.results(), self.scenario, self._wall)

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
) -> Results:
    """Run a scenario (a :class:`Scenario` or a file path) to the end.

    ``seed`` and ``duration`` (seconds) replace the scenario's values.
    Raises :class:`satqm.ConfigError` for a bad scenario and
    :class:`satqm.SimulationError` if the run fails.
    """
    sim = Simulation(scenario, seed=seed, duration=duration)
    sim.run(progress=progress)
    return sim.results()
