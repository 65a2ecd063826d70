"""Load a scenario: the input of a run.

A :class:`Scenario` is the TOML text of a scenario file, checked by the core
on construction (so a bad file raises :class:`satqm.ConfigError` naming the
key), plus the seed, duration, warm-up and memory-limit overrides a command
line or a sweep applies.
Running it is :mod:`satqm.simulation`'s job::

    import satqm
    sc = satqm.load("scenarios/examples/dumbbell-droptail.toml", duration=20)
    res = satqm.run(sc)
"""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Union

from satqm._core import ConfigError, parse_quantity, scenario_files, validate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["Scenario", "load", "ScenarioLike"]

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


def _check_seconds(value: Any, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, (bool, str, bytes)):
        raise config_error(key, "must be a number of seconds")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise config_error(key, "must be a number of seconds") from None


def _warmup_conflict(text: str, duration: float) -> ConfigError | None:
    """The error for a duration given in place of the file's that is not
    longer than the file's warm-up, or None if that is not what is wrong.

    The error names ``simulation.duration`` (the value the caller gave) and
    carries the file's warm-up in seconds as ``warmup_s``.
    """
    try:
        sim = tomllib.loads(text).get("simulation")
        raw = sim.get("warmup") if isinstance(sim, dict) else None
        if raw is None:
            return None
        warmup = parse_quantity(raw, "time", "simulation.warmup")
    except (tomllib.TOMLDecodeError, ConfigError):
        return None
    if warmup < duration:
        return None
    err = config_error(
        "simulation.duration",
        f"{_fmt_seconds(duration)} is not longer than the scenario's warm-up "
        f"(simulation.warmup = {_fmt_seconds(warmup)}): give a shorter warm-up as well "
        "(warmup=)",
    )
    err.warmup_s = warmup
    return err


def quantity_text(value: float, unit: str) -> str:
    """``value`` (in ``unit``) as a scenario quantity that reads back as the
    same number: ``quantity_text(0.29, "s")`` is ``"0.29 s"``,
    ``quantity_text(300.0, "s")`` ``"300 s"``. Scenario files give every
    time, rate and size with its unit (a bare number other than 0 is
    refused); code that writes scenarios writes them with this."""
    text = repr(float(value))
    if text.endswith(".0"):
        text = text[:-2]
    return f"{text} {unit}"


def _read_named_files(
    text: str, path: Path | None, unread: dict[str, str] | None = None
) -> dict[str, str]:
    """The text of each file the scenario names, read relative to the
    folder of the scenario file at ``path`` (or the working directory).

    A file that cannot be read is left out, with why in ``unread``: the
    core then refuses the key that names it, and :class:`Scenario` adds
    the reason."""
    try:
        names = scenario_files(text)
    except ConfigError:
        return {}  # the scenario itself is invalid: validation says why
    base = path.parent if path is not None else Path.cwd()
    out: dict[str, str] = {}
    for name in names:
        f = base / name
        try:
            out[name] = f.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            if unread is not None:
                unread[name] = f"cannot read {f}: {reason}"
    return out


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
    files : dict
        The text of the files the scenario names (a link schedule's
        ``trace``), by the name it gives them. They are read relative to
        the scenario file's folder (the working directory for a scenario
        given as text) when the scenario is made, unless given.
    overrides : dict
        The values given in place of the file's, only those given: ``seed``
        (int), ``duration`` and ``warmup`` (float seconds), ``max_memory``,
        ``capture`` (tuple of link names).
    """

    __slots__ = ("text", "data", "path", "overrides", "files", "_info")

    def __init__(
        self,
        text: str,
        *,
        seed: int | None = None,
        duration: float | None = None,
        path: str | os.PathLike[str] | None = None,
        max_memory: str | None = None,
        capture: Sequence[str] | None = None,
        warmup: float | None = None,
        capture_side: str | None = None,
        files: dict[str, str] | None = None,
    ) -> None:
        if not isinstance(text, str):
            raise TypeError(f"scenario text must be str, not {type(text).__name__}")
        seed = _check_seed(seed)
        duration = _check_seconds(duration, "simulation.duration")
        warmup = _check_seconds(warmup, "simulation.warmup")
        if capture is not None:
            if isinstance(capture, str) or not all(isinstance(c, str) for c in capture):
                raise config_error("simulation.capture", "must be a list of link names")
            capture = tuple(capture)
        if capture_side is not None and not isinstance(capture_side, str):
            raise config_error("simulation.capture_side", 'must be "out", "in" or "both"')
        unread: dict[str, str] = {}
        if files is None:
            files = _read_named_files(text, None if path is None else Path(path), unread)
        try:
            info = validate(
                text,
                seed,
                duration,
                max_memory,
                None if capture is None else list(capture),
                warmup,
                capture_side,
                files,
            )
        except ConfigError as e:
            key = getattr(e, "path", "")
            for name, why in unread.items():
                if key.endswith(".trace") and f"\"{name}\"" in str(e):
                    raise config_error(key, f"file {name!r}: {why}") from None
            # A shorter run than the file's warm-up: blame the duration given.
            path = getattr(e, "path", "")
            if duration is not None and warmup is None and path == "simulation.warmup":
                conflict = _warmup_conflict(text, duration)
                if conflict is not None:
                    raise conflict from None
            raise
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:  # the core accepted it; should not happen
            raise config_error("", f"invalid TOML: {e}") from None
        self.text = text
        self.data = data
        self.path = Path(path) if path is not None else None
        self.files = dict(files)
        self.overrides: dict[str, Any] = {}
        if seed is not None:
            self.overrides["seed"] = seed
        if duration is not None:
            self.overrides["duration"] = duration
        if warmup is not None:
            self.overrides["warmup"] = warmup
        if max_memory is not None:
            self.overrides["max_memory"] = max_memory
        if capture is not None:
            self.overrides["capture"] = capture
        if capture_side is not None:
            self.overrides["capture_side"] = capture_side
        self._info = info

    @classmethod
    def from_toml(
        cls,
        text: str,
        *,
        seed: int | None = None,
        duration: float | None = None,
        warmup: float | None = None,
        files: dict[str, str] | None = None,
    ) -> Scenario:
        """Parse and validate TOML text; raises :class:`satqm.ConfigError`.

        ``files`` gives the text of the files the scenario names (a link
        schedule's ``trace``) by the name it gives them; without it they
        are read relative to the working directory."""
        return cls(text, seed=seed, duration=duration, warmup=warmup, files=files)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        seed: int | None = None,
        duration: float | None = None,
        warmup: float | None = None,
    ) -> Scenario:
        """Read and validate a scenario file (UTF-8 TOML).

        ``seed``, ``duration`` and ``warmup`` (seconds) replace the file's
        values. A ``duration`` not longer than the file's warm-up is refused
        (naming ``simulation.duration``) unless a shorter ``warmup`` is
        given too.

        Raises :class:`FileNotFoundError` (an :class:`OSError`) if it cannot be
        read and :class:`satqm.ConfigError` if it is not UTF-8 text or not a
        valid scenario.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8-sig")  # tolerate a byte-order mark
        except UnicodeDecodeError as e:
            raise config_error(
                "", f"{p}: not UTF-8 text (byte {e.start} is {e.object[e.start]:#04x})"
            ) from None
        return cls(text, seed=seed, duration=duration, path=p, warmup=warmup)

    def with_overrides(
        self,
        *,
        seed: int | None = None,
        duration: float | None = None,
        capture: Sequence[str] | None = None,
        warmup: float | None = None,
        capture_side: str | None = None,
    ) -> Scenario:
        """A copy with the seed, duration, warm-up (seconds), captured links
        (``simulation.capture``) and/or the side of their queues captured
        (``simulation.capture_side``) replaced.

        Overrides given earlier are kept unless replaced here.
        """
        if (
            seed is None
            and duration is None
            and capture is None
            and warmup is None
            and capture_side is None
        ):
            return self
        ov = self.overrides
        return Scenario(
            self.text,
            seed=seed if seed is not None else ov.get("seed"),
            duration=duration if duration is not None else ov.get("duration"),
            path=self.path,
            max_memory=ov.get("max_memory"),
            capture=capture if capture is not None else ov.get("capture"),
            warmup=warmup if warmup is not None else ov.get("warmup"),
            capture_side=capture_side if capture_side is not None else ov.get("capture_side"),
            files=self.files,
        )

    def core_arguments(self) -> tuple[Any, ...]:
        """The text and the overrides in the order the compiled run objects
        (``_core.Simulation``, ``_core.Emulation``) take them."""
        ov = self.overrides
        cap = ov.get("capture")
        return (
            self.text,
            ov.get("seed"),
            ov.get("duration"),
            ov.get("max_memory"),
            None if cap is None else list(cap),
            ov.get("warmup"),
            ov.get("capture_side"),
            self.files,
        )

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
        """Seconds excluded from the summary statistics (override, else the
        file's, else 0)."""
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
        return (
            self.text == other.text
            and self.overrides == other.overrides
            and self.files == other.files
        )

    def __hash__(self) -> int:
        return hash((self.text, tuple(sorted(self.overrides.items()))))


def load(
    path: str | os.PathLike[str],
    *,
    seed: int | None = None,
    duration: float | None = None,
    warmup: float | None = None,
) -> Scenario:
    """Read and validate a scenario file; ``seed``, ``duration`` and ``warmup``
    (seconds) replace the file's values. See :meth:`Scenario.load`."""
    return Scenario.load(path, seed=seed, duration=duration, warmup=warmup)


def as_scenario(scenario: ScenarioLike) -> Scenario:
    """``scenario`` if it is a :class:`Scenario`, else the scenario file it names.

    Scenario text (a string with line breaks) is refused with a message that
    says to use :meth:`Scenario.from_toml`."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, str) and "\n" in scenario:
        # A path never holds a line break; scenario text always does.
        raise ValueError(
            "expected the path of a scenario file, got what looks like its text: "
            "pass satqm.Scenario.from_toml(text) instead"
        )
    if isinstance(scenario, (str, os.PathLike)):
        return load(scenario)
    raise TypeError(
        f"expected a Scenario or the path of a scenario file, not {type(scenario).__name__}"
    )


def __getattr__(name: str) -> Any:
    # `Simulation` and `run` live in `satqm.simulation` (above this module);
    # the old names keep working, with a warning.
    if name in ("Simulation", "run"):
        import warnings

        warnings.warn(
            f"satqm.scenario.{name} has moved: use satqm.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        from satqm import simulation

        return getattr(simulation, name)
    raise AttributeError(f"module 'satqm.scenario' has no attribute {name!r}")
