"""The bent-pipe path terminal -> satellite -> gateway over time, and its schedule.

A satellite *serves* at an instant when its elevation is at least the mask
(``min_elevation_deg``) both at the terminal and at the gateway: a bent pipe
relays what it receives, so it must see both ends at once. The geometry is
sampled on a time grid (``step_s``, plus the reassignment instants of the
``"interval"`` policy); a policy picks one serving satellite per grid time,
and that choice holds until the next grid time, so handovers happen at grid
times only.

Policies (ties that remain are broken by the order of the constellation,
the first satellite winning):

``"highest_elevation"``
    At every grid time, the serving satellite with the highest elevation at
    the terminal. The current satellite is kept unless another one is
    strictly higher (an equal elevation does not switch).
``"longest_visible"``
    Keep the current satellite while it serves. When it stops serving (and
    at the start, and when an outage ends) take the serving satellite whose
    run of serving grid times lasts longest from now; a run still going at
    the end of the window counts to the end of the window. Equal runs: the
    higher elevation at the terminal.
``"interval"``
    Starlink-like scheduling: at ``start`` and every ``interval_s`` after it
    (these instants are inserted into the grid when ``step_s`` does not
    divide them), take the highest-elevation serving satellite (the current
    one kept on an exact tie). In between keep it; a satellite that stops
    serving mid-interval is replaced at once by the highest-elevation serving
    satellite, which is then kept until the next reassignment instant.

Grid times are kept as whole nanoseconds from ``start``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from satqm.leo.constellation import Constellation
from satqm.leo.frames import C_M_PER_S, GroundPoint, as_utc, look_angles

POLICIES = ("highest_elevation", "longest_visible", "interval")
#: At most this many grid times in one path.
MAX_GRID_TIMES = 10_000_000
_NS = 1_000_000_000


def time_grid_s(
    duration_s: float, step_s: float, interval_s: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The grid: (times in s from the start, which of them are reassignment instants).

    Times are ``k * step_s`` up to ``duration_s``, then ``duration_s`` itself
    if the steps miss it, and, given ``interval_s``, every ``m * interval_s``
    up to ``duration_s``; all rounded to whole nanoseconds and deduplicated.
    """
    duration_ns = round(duration_s * _NS)
    step_ns = round(step_s * _NS)
    if step_ns < 1:
        raise ValueError(f"step_s must be >= 1e-9 s, got {step_s!r}")
    if duration_ns // step_ns + 2 > MAX_GRID_TIMES:
        raise ValueError(
            f"step_s is too small for duration_s: more than {MAX_GRID_TIMES} grid times"
        )
    times = [np.arange(0, duration_ns + 1, step_ns, dtype=np.int64), np.array([duration_ns])]
    if interval_s is not None:
        interval_ns = round(interval_s * _NS)
        if interval_ns < 1:
            raise ValueError(f"interval_s must be >= 1e-9 s, got {interval_s!r}")
        if duration_ns // interval_ns + 2 > MAX_GRID_TIMES:
            raise ValueError(
                f"interval_s is too small for duration_s: more than {MAX_GRID_TIMES} instants"
            )
        times.append(np.arange(0, duration_ns + 1, interval_ns, dtype=np.int64))
    grid_ns = np.unique(np.concatenate(times))
    if interval_s is None:
        boundary = np.zeros(grid_ns.shape, dtype=bool)
    else:
        boundary = grid_ns % interval_ns == 0
    return grid_ns / _NS, boundary


@dataclass
class _Served:
    """Every (grid time, serving satellite) pair, sorted by time then satellite."""

    time_idx: np.ndarray
    sat_idx: np.ndarray
    elev_terminal_deg: np.ndarray
    elev_gateway_deg: np.ndarray
    range_up_m: np.ndarray
    range_down_m: np.ndarray
    #: ``first[k]:first[k + 1]`` are the entries of grid time ``k``.
    first: np.ndarray = field(init=False)

    def finish(self, n_times: int) -> _Served:
        self.first = np.searchsorted(self.time_idx, np.arange(n_times + 1))
        return self


def served_pairs(
    constellation: Constellation,
    terminal: GroundPoint,
    gateway: GroundPoint,
    start: datetime,
    times_s: np.ndarray,
    min_elevation_deg: float,
    dut1_s: float = 0.0,
) -> _Served:
    """Propagate the constellation over ``times_s`` (in chunks) and keep the
    pairs where a satellite serves: elevation >= mask at both ends."""
    parts = []
    step = constellation.chunk_times(len(times_s))
    for lo in range(0, len(times_s), step):
        ecef = constellation.ecef_m(start, times_s[lo : lo + step], dut1_s)
        el_t, r_up = look_angles(ecef, terminal)
        el_g, r_down = look_angles(ecef, gateway)
        with np.errstate(invalid="ignore"):  # NaN where SGP4 failed: never serves
            serves = (el_t >= min_elevation_deg) & (el_g >= min_elevation_deg)
        t_local, sat = np.nonzero(serves.T)  # time-major: sorted by time, then satellite
        parts.append(
            (
                t_local + lo,
                sat,
                el_t[sat, t_local],
                el_g[sat, t_local],
                r_up[sat, t_local],
                r_down[sat, t_local],
            )
        )
    cols = [np.concatenate(c) for c in zip(*parts)]
    return _Served(*cols).finish(len(times_s))


def _pick_highest(sats: np.ndarray, elev: np.ndarray, current: int) -> int:
    """Position (in ``sats``) of the highest elevation; the current satellite
    keeps its place on a tie, otherwise the first (lowest index) wins."""
    best = int(np.argmax(elev))
    if current >= 0:
        at = np.flatnonzero(sats == current)
        if at.size and elev[at[0]] >= elev[best]:
            return int(at[0])
    return best


def _run_end_idx(served: _Served) -> np.ndarray:
    """For each served pair, the last grid index of its satellite's unbroken run."""
    order = np.lexsort((served.time_idx, served.sat_idx))
    t = served.time_idx[order]
    s = served.sat_idx[order]
    new_run = np.ones(len(t), dtype=bool)
    new_run[1:] = (s[1:] != s[:-1]) | (t[1:] != t[:-1] + 1)
    run_id = np.cumsum(new_run) - 1
    starts = np.flatnonzero(new_run)
    ends = np.append(starts[1:], len(t)) - 1
    out = np.empty(len(t), dtype=np.int64)
    out[order] = t[ends][run_id]
    return out


def choose(served: _Served, policy: str, boundary: np.ndarray) -> np.ndarray:
    """The entry of ``served`` each grid time uses (-1: none serves)."""
    n_times = len(served.first) - 1
    chosen = np.full(n_times, -1, dtype=np.int64)
    run_end = _run_end_idx(served) if policy == "longest_visible" else None
    current = -1
    for k in range(n_times):
        lo, hi = served.first[k], served.first[k + 1]
        if lo == hi:
            current = -1
            continue
        sats = served.sat_idx[lo:hi]
        elev = served.elev_terminal_deg[lo:hi]
        at = np.flatnonzero(sats == current) if current >= 0 else np.empty(0, dtype=np.int64)
        if policy == "highest_elevation" or (policy == "interval" and boundary[k]):
            pos = _pick_highest(sats, elev, current)
        elif at.size:
            pos = int(at[0])  # keep the current satellite while it serves
        elif policy == "interval":
            pos = _pick_highest(sats, elev, -1)
        else:  # longest_visible: the furthest run end, then elevation, then order
            ends = run_end[lo:hi]
            pos = int(np.lexsort((np.arange(hi - lo), -elev, -ends))[0])
        chosen[k] = lo + pos
        current = int(sats[pos])
    return chosen


@dataclass
class BentPipePath:
    """The served path over time, from :func:`bent_pipe`.

    ``table`` has one row per grid time: ``time`` (s from ``start``),
    ``satellite`` (None when none serves), ``elev_terminal_deg``,
    ``elev_gateway_deg``, ``range_up_m`` (terminal-satellite),
    ``range_down_m`` (satellite-gateway), ``delay_s`` (the sum over c) and
    ``up`` (1, or 0 when none serves: then the geometry columns are NaN).
    ``handovers`` has a row per change from one satellite to another:
    ``time``, ``from_satellite``, ``to_satellite``, ``delay_before_s`` (the
    old satellite's delay at that time) and ``delay_after_s``. ``outages``
    has ``start``, ``end`` (s; ``end`` is when a satellite serves again, or
    the last grid time) and ``delay_before_s`` (the last satellite's delay at
    ``start``, NaN for an outage at the very start).
    """

    table: pd.DataFrame
    handovers: pd.DataFrame
    outages: pd.DataFrame
    constellation: str
    terminal: GroundPoint
    gateway: GroundPoint
    start: datetime
    policy: str
    min_elevation_deg: float
    step_s: float
    interval_s: float | None
    dut1_s: float = 0.0

    def summary(self) -> dict[str, float]:
        """Availability (share of grid times served), handover count and delays (s)."""
        d = self.table["delay_s"]
        return {
            "availability": float(self.table["up"].mean()),
            "handovers": len(self.handovers),
            "outages": len(self.outages),
            "delay_min_s": float(d.min()),
            "delay_mean_s": float(d.mean()),
            "delay_max_s": float(d.max()),
        }

    def header_lines(self) -> list[str]:
        """The ``#`` comment lines a schedule starts with."""
        policy = self.policy + (
            f" (every {self.interval_s:g} s from start)" if self.policy == "interval" else ""
        )
        return [
            "# link schedule: bent-pipe path terminal -> satellite -> gateway (satqm.leo)",
            f"# constellation: {self.constellation}",
            f"# terminal: {self.terminal}",
            f"# gateway: {self.gateway}",
            f"# policy: {policy}; elevation mask {self.min_elevation_deg:g} deg at both ends",
            f"# start: {self.start.strftime('%Y-%m-%dT%H:%M:%S.%fZ')} UTC "
            f"(UT1-UTC {self.dut1_s:g} s); step {self.step_s:g} s; "
            f"{len(self.table)} grid times",
            f"# delay: (range_up + range_down) / {C_M_PER_S:.0f} m/s; up: 0 when none serves",
            '# interpolate = "linear"; two rows at one time are a jump (handover, outage edge)',
        ]

    def write_schedule(self, path: str | Path, rate: float | None = None) -> Path:
        """Write the path as a link schedule (CSV) and return its path.

        Columns ``time,delay,up`` (and ``rate``, the same on every row, in
        bit/s, when given), for linear interpolation: while one satellite
        serves, one row per grid time; at a handover, two rows at its time,
        the old satellite's delay then the new one's, so the delay jumps; an
        outage starts with two rows (the last delay with up 1, then with up
        0), keeps that delay, and ends with two rows (up 0, then the new
        satellite's delay with up 1). A constant delay is written out rather
        than left empty. An outage at the very start holds the first served
        delay.

        Raises ``ValueError`` if no satellite ever serves the path in the
        window: the link would be down throughout.
        """
        if not np.any(~np.isnan(self.table["delay_s"].to_numpy(dtype=float))):
            raise ValueError(
                "no satellite is above the elevation mask at both the terminal and "
                "the gateway at any time of the window: the link would never be up "
                "(check the elements, the ground points and min_elevation_deg)"
            )
        if rate is not None:
            rate = float(rate)
            if not math.isfinite(rate) or rate <= 0.0:
                raise ValueError(f"rate must be > 0 (bit/s), got {rate!r}")
        path = Path(path)
        rows = self.schedule_rows()
        cols = ["time", "delay", "up"] + (["rate"] if rate is not None else [])
        lines = [*self.header_lines(), ",".join(cols)]
        for t, d, up in rows:
            cells = [_fmt_time(t), "" if d is None else _fmt(d), str(up)]
            if rate is not None:
                cells.append(_fmt(rate))
            lines.append(",".join(cells))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def schedule_rows(self) -> list[tuple[float, float | None, int]]:
        """The schedule as ``(time_s, delay_s or None, up)`` rows."""
        tab = self.table
        times = tab["time"].to_numpy()
        delays = tab["delay_s"].to_numpy()
        sats = tab["satellite"].to_numpy()
        before = dict(zip(self.handovers["time"], self.handovers["delay_before_s"]))
        before.update(zip(self.outages["start"], self.outages["delay_before_s"]))
        served = np.flatnonzero(~np.isnan(delays))
        held = float(delays[served[0]]) if served.size else None
        rows: list[tuple[float, float | None, int]] = []
        last = len(tab) - 1
        for k in range(len(tab)):
            t, sat = float(times[k]), sats[k]
            prev = sats[k - 1] if k else None
            if sat is not None:
                d = float(delays[k])
                if k and prev is not None and prev != sat:  # handover
                    rows.append((t, float(before[times[k]]), 1))
                elif k and prev is None:  # an outage ends
                    rows.append((t, held, 0))
                rows.append((t, d, 1))
                held = d
            elif k == 0:
                rows.append((t, held, 0))
            elif prev is not None:  # an outage starts
                held = float(before[times[k]])
                rows.append((t, held, 1))
                rows.append((t, held, 0))
            elif k == last:
                rows.append((t, held, 0))
        return rows


def _fmt(x: float) -> str:
    return format(x, ".12g")


def _fmt_time(t: float) -> str:
    return format(round(t, 9), ".15g")


def _delay_of(
    constellation: Constellation,
    sat: int,
    start: datetime,
    t_s: float,
    terminal: GroundPoint,
    gateway: GroundPoint,
    dut1_s: float,
) -> float:
    """One satellite's bent-pipe delay at one time, whether it serves or not."""
    ecef = constellation.ecef_m(start, np.array([t_s]), dut1_s, indices=[sat])
    _, r_up = look_angles(ecef, terminal)
    _, r_down = look_angles(ecef, gateway)
    return float((r_up[0, 0] + r_down[0, 0]) / C_M_PER_S)


def bent_pipe(
    constellation: Constellation,
    terminal: GroundPoint,
    gateway: GroundPoint,
    start: datetime,
    duration_s: float,
    step_s: float = 1.0,
    policy: str = "highest_elevation",
    min_elevation_deg: float = 25.0,
    interval_s: float = 15.0,
    *,
    dut1_s: float = 0.0,
) -> BentPipePath:
    """The bent-pipe path from ``terminal`` to ``gateway`` over ``duration_s``.

    Parameters
    ----------
    constellation, terminal, gateway
        The satellites and the two ground ends.
    start
        UTC datetime of time 0 (a naive one is UTC).
    duration_s, step_s
        Length of the window and the sampling step, s. The grid runs from 0
        to ``duration_s`` inclusive.
    policy
        ``"highest_elevation"``, ``"longest_visible"`` or ``"interval"``
        (see :mod:`satqm.leo.bentpipe`).
    min_elevation_deg
        The elevation mask, at both ends.
    interval_s
        The reassignment period of the ``"interval"`` policy, s.
    dut1_s
        UT1 - UTC, s, for the Earth's rotation angle (0 by default).
    """
    if not isinstance(constellation, Constellation):
        raise ValueError(
            f"constellation must be a Constellation, got {type(constellation).__name__}"
        )
    for name, point in (("terminal", terminal), ("gateway", gateway)):
        if not isinstance(point, GroundPoint):
            raise ValueError(f"{name} must be a GroundPoint, got {type(point).__name__}")
    start = as_utc(start, "start")
    duration_s = _positive(duration_s, "duration_s")
    step_s = _positive(step_s, "step_s")
    interval_s = _positive(interval_s, "interval_s")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}; got {policy!r}")
    mask = float(min_elevation_deg)
    if not -90.0 <= mask < 90.0:
        raise ValueError(f"min_elevation_deg must be in [-90, 90), got {min_elevation_deg!r}")
    dut1_s = float(dut1_s)
    if not abs(dut1_s) <= 1.0:
        raise ValueError(f"dut1_s must be in [-1, 1] (s), got {dut1_s!r}")

    times_s, boundary = time_grid_s(
        duration_s, step_s, interval_s if policy == "interval" else None
    )
    served = served_pairs(constellation, terminal, gateway, start, times_s, mask, dut1_s)
    chosen = choose(served, policy, boundary)

    n = len(times_s)
    up = chosen >= 0
    pick = np.where(up, chosen, 0)

    def column(values: np.ndarray) -> np.ndarray:
        """``values`` of the chosen entries; NaN where none serves."""
        return np.where(up, values[pick], np.nan) if values.size else np.full(n, np.nan)

    sat_idx = np.where(up, served.sat_idx[pick], -1) if served.sat_idx.size else np.full(n, -1)
    names = [constellation.names[i] if i >= 0 else None for i in sat_idx]
    range_up = column(served.range_up_m)
    range_down = column(served.range_down_m)
    table = pd.DataFrame(
        {
            "time": times_s,
            "satellite": pd.Series(names, dtype=object),
            "elev_terminal_deg": column(served.elev_terminal_deg),
            "elev_gateway_deg": column(served.elev_gateway_deg),
            "range_up_m": range_up,
            "range_down_m": range_down,
            "delay_s": (range_up + range_down) / C_M_PER_S,
            "up": up.astype(np.int64),
        }
    )

    def delay_before(k: int) -> float:
        """The delay at grid time k of the satellite that served at k - 1."""
        t = float(times_s[k])
        return _delay_of(constellation, int(sat_idx[k - 1]), start, t, terminal, gateway, dut1_s)

    handovers = [
        (
            float(times_s[k]),
            constellation.names[sat_idx[k - 1]],
            constellation.names[sat_idx[k]],
            delay_before(k),
            float(table["delay_s"].iat[k]),
        )
        for k in range(1, n)
        if up[k - 1] and up[k] and sat_idx[k - 1] != sat_idx[k]
    ]
    down = np.flatnonzero(~up)
    outages = []
    for k in down[np.r_[True, np.diff(down) > 1]] if down.size else []:
        back = np.flatnonzero(up[k:])
        end = float(times_s[k + back[0]]) if back.size else float(times_s[-1])
        outages.append((float(times_s[k]), end, delay_before(k) if k else math.nan))

    return BentPipePath(
        table=table,
        handovers=pd.DataFrame(
            handovers,
            columns=["time", "from_satellite", "to_satellite", "delay_before_s", "delay_after_s"],
        ),
        outages=pd.DataFrame(outages, columns=["start", "end", "delay_before_s"]),
        constellation=constellation.description,
        terminal=terminal,
        gateway=gateway,
        start=start,
        policy=policy,
        min_elevation_deg=mask,
        step_s=step_s,
        interval_s=interval_s if policy == "interval" else None,
        dut1_s=dut1_s,
    )


def _positive(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return v
