"""Physically consistent AQM traces from a tiny FIFO simulation.

A single port: a buffer of ``limit_bytes`` (bytes waiting, not counting the
packet being serialised) in front of a transmitter of ``rate_bps``. Packets
arrive from open-loop sources (seeded NumPy generators: Poisson, on/off
bursts with idle gaps, linear overload ramps, periodic streams). The trace
is generated *closed loop*: every arrival is first shown to the oracle
(view of the queue *before* it joins); a dropped packet (``drop:*``, or
``mark:*`` when ``marks_join`` is false, i.e. ``mode = "drop"``) does not
join; a passed or marked packet joins unless the buffer is full
(``overflow``, invisible to the AQM). A departure is the moment a packet
leaves the queue and starts serialisation; the oracle sees the view *after*
it left. For CoDel a signal at dequeue that drops the packet makes the port
dequeue the next one at once (same instant). Timers fire at ``k * interval``,
``k >= 1``, for the algorithms that have one.

Ties at one instant are ordered: end of transmission (and the dequeue it
triggers), then timer, then arrival.

Event dicts (the replay format)::

    {"ev": "arrival", "t", "size", "u", "q_packets", "q_bytes", "idle_since",
     "departed_bytes"}
    {"ev": "departure", "t", "size", "sojourn", "q_packets", "q_bytes",
     "idle_since", "departed_bytes"}
    {"ev": "timer", "t", "q_packets", "q_bytes", "idle_since", "departed_bytes"}
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import VERDICTS, Oracle

NS = 1_000_000_000


def tx_ns(size: int, rate_bps: int) -> int:
    """Serialisation time, rounded up to the next ns (as the simulator)."""
    return -(-size * 8 * NS // rate_bps)


# ---------------------------------------------------------------------------
# arrival processes: lists of (t_ns, size)
# ---------------------------------------------------------------------------


def _sizes(rng: np.random.Generator, sizes, n: int) -> list[int]:
    if isinstance(sizes, int):
        return [sizes] * n
    return [int(x) for x in rng.choice(np.asarray(sizes), size=n)]


def _mean_size(sizes) -> float:
    return float(sizes) if isinstance(sizes, int) else float(np.mean(sizes))


def poisson(rng, rate_bps: int, load: float, t0: float, t1: float, sizes=1000):
    """Poisson arrivals offering ``load`` times the link rate on [t0, t1) s."""
    pps = load * rate_bps / (8.0 * _mean_size(sizes))
    n = rng.poisson(pps * (t1 - t0))
    times = np.sort(rng.uniform(t0, t1, size=n))
    return list(zip((int(t * NS) for t in times), _sizes(rng, sizes, n)))


def ramp(rng, rate_bps: int, load0: float, load1: float, t0: float, t1: float, sizes=1000):
    """Poisson arrivals whose load goes linearly from load0 to load1 (thinning)."""
    top = max(load0, load1)
    out = []
    for t, s in poisson(rng, rate_bps, top, t0, t1, sizes):
        x = (t / NS - t0) / (t1 - t0)
        if rng.random() * top < load0 + (load1 - load0) * x:
            out.append((t, s))
    return out


def onoff(rng, rate_bps: int, load: float, on: float, off: float, t0: float, t1: float,
          sizes=1000):
    """Poisson bursts at ``load`` during ``on`` s, silent during ``off`` s."""
    out = []
    t = t0
    while t < t1:
        out += poisson(rng, rate_bps, load, t, min(t + on, t1), sizes)
        t += on + off
    return out


def periodic(spacing: float, t0: float, t1: float, size: int = 1000, phase: float = 0.0):
    """One packet every ``spacing`` s."""
    n = int(math.floor((t1 - t0 - phase) / spacing))
    return [(int((t0 + phase + k * spacing) * NS), size) for k in range(max(n, 0) + 1)
            if t0 + phase + k * spacing < t1]


def merge(*streams: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out = [a for s in streams for a in s]
    out.sort(key=lambda a: a[0])
    return out


def build_arrivals(seed: int, rate_bps: int, phases: Sequence[tuple]) -> list[tuple[int, int]]:
    """Arrivals from a list of phases, e.g. ``("poisson", load, t0, t1, sizes)``,
    ``("ramp", load0, load1, t0, t1, sizes)``, ``("onoff", load, on, off, t0, t1,
    sizes)``, ``("periodic", spacing, t0, t1, size)``."""
    rng = np.random.default_rng(seed)
    streams = []
    for ph in phases:
        kind, args = ph[0], ph[1:]
        if kind == "poisson":
            streams.append(poisson(rng, rate_bps, *args))
        elif kind == "ramp":
            streams.append(ramp(rng, rate_bps, *args))
        elif kind == "onoff":
            streams.append(onoff(rng, rate_bps, *args))
        elif kind == "periodic":
            streams.append(periodic(*args))
        else:
            raise ValueError(f"unknown phase {kind!r}")
    return merge(*streams)


# ---------------------------------------------------------------------------
# the closed-loop FIFO simulation
# ---------------------------------------------------------------------------


@dataclass
class Trace:
    events: list[dict]
    verdicts: list[str]
    probes: list[dict]
    hits: Counter
    rate_bps: int
    limit_bytes: int
    marks_join: bool
    #: per event: for an arrival, whether the packet joined the queue
    joined: list[bool]
    stats: Counter = field(default_factory=Counter)

    def probe_series(self, key: str) -> list[float]:
        return [p[key] for p in self.probes]


def _joins(verdict: str, marks_join: bool) -> bool:
    return verdict == "pass" or (marks_join and verdict.startswith("mark"))


def run(oracle: Oracle, arrivals: Sequence[tuple[int, int]], *, seed: int, duration: float,
        marks_join: bool = True) -> Trace:
    """Simulate the port with ``oracle`` deciding, record the trace."""
    rate = oracle.rate_bps
    limit = oracle.limit_bytes
    end = int(duration * NS)
    timer = oracle.timer_interval_ns()
    urng = np.random.default_rng([seed, 0x5A7])
    us = urng.random(len(arrivals)).tolist()

    queue: deque[tuple[int, int]] = deque()  # (enqueue time, size)
    q_bytes = 0
    busy_until: int | None = None
    idle_since: int | None = 0
    departed = 0
    events: list[dict] = []
    verdicts: list[str] = []
    probes: list[dict] = []
    joined: list[bool] = []
    stats: Counter = Counter()

    def record(ev: dict, verdict: str) -> None:
        events.append(ev)
        verdicts.append(verdict)
        probes.append(oracle.full_probe())
        joined.append(False)

    def dequeue(now: int) -> None:
        nonlocal q_bytes, busy_until, idle_since, departed
        while queue:
            enq, size = queue.popleft()
            q_bytes -= size
            departed += size
            ev = {"ev": "departure", "t": now, "size": size, "sojourn": now - enq,
                  "q_packets": len(queue), "q_bytes": q_bytes, "idle_since": None,
                  "departed_bytes": departed}
            verdict = oracle.on_departure(ev)
            record(ev, verdict)
            if _joins(verdict, marks_join):
                stats["departure_" + verdict] += 1
                busy_until = now + tx_ns(size, rate)
                idle_since = None
                return
            stats["dequeue_drop"] += 1
        busy_until = None
        idle_since = now

    i = 0
    k = 1
    n = len(arrivals)
    while True:
        t_arr = arrivals[i][0] if i < n else math.inf
        t_tx = busy_until if busy_until is not None else math.inf
        t_tim = k * timer if timer else math.inf
        t = min(t_arr, t_tx, t_tim)
        if t > end:
            break
        view = {"q_packets": len(queue), "q_bytes": q_bytes,
                "idle_since": idle_since if busy_until is None and not queue else None,
                "departed_bytes": departed}
        if t == t_tx:
            busy_until = None
            dequeue(t)
        elif t == t_tim:
            ev = {"ev": "timer", "t": t, **view}
            oracle.on_timer(ev)
            record(ev, "timer")
            k += 1
        else:
            size = arrivals[i][1]
            # Marked packets join the queue only as ECN-capable packets.
            ev = {"ev": "arrival", "t": t, "size": size, "u": us[i], "ecn": marks_join, **view}
            i += 1
            verdict = oracle.on_arrival(ev)
            record(ev, verdict)
            stats["arrival_" + verdict] += 1
            if ev["idle_since"] is not None:
                stats["arrival_idle"] += 1
            if not _joins(verdict, marks_join):
                continue
            if q_bytes + size > limit:
                stats["overflow"] += 1
                continue
            joined[-1] = True
            queue.append((t, size))
            q_bytes += size
            if busy_until is None:
                dequeue(t)
    return Trace(events, verdicts, probes, oracle.hits, rate, limit, marks_join, joined, stats)


def check_consistent(trace: Trace) -> None:
    """Assert the physical invariants of a trace: views match a shadow FIFO
    rebuilt from the events (and whether each arrival joined), times are
    ordered, departures are FIFO with the right sojourn, the transmitter is
    never idle with packets waiting, departed bytes add up."""
    fifo: deque[tuple[int, int]] = deque()
    q_bytes = 0
    departed = 0
    last_t = 0
    busy_until = None  # end of the current transmission (None: idle)
    for idx, (ev, verdict) in enumerate(zip(trace.events, trace.verdicts)):
        t = ev["t"]
        assert t >= last_t, idx
        last_t = t
        where = f"event {idx}: {ev}"
        if ev["ev"] != "departure":
            assert ev["q_packets"] == len(fifo) and ev["q_bytes"] == q_bytes, where
            idle = busy_until is None or busy_until <= t
            if ev["idle_since"] is not None:
                assert idle and not fifo and ev["idle_since"] <= t, where
            else:
                assert fifo or not idle, where
        assert ev["departed_bytes"] >= departed, where
        if ev["ev"] == "arrival":
            assert ev["departed_bytes"] == departed, where
            assert 0.0 <= ev["u"] < 1.0, where
            assert verdict in VERDICTS, where
            if trace.joined[idx]:
                assert _joins(verdict, trace.marks_join), where
                fifo.append((t, ev["size"]))
                q_bytes += ev["size"]
                assert q_bytes <= trace.limit_bytes, where
        elif ev["ev"] == "departure":
            enq, size = fifo.popleft()
            q_bytes -= size
            departed += size
            assert size == ev["size"] and ev["sojourn"] == t - enq, where
            assert ev["q_packets"] == len(fifo) and ev["q_bytes"] == q_bytes, where
            assert ev["departed_bytes"] == departed and ev["idle_since"] is None, where
            assert busy_until is None or busy_until <= t, where
            if _joins(verdict, trace.marks_join):
                busy_until = t + tx_ns(size, trace.rate_bps)
            else:
                busy_until = None
        else:
            assert verdict == "timer", where
