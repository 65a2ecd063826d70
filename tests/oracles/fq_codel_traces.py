"""Replay traces for the FQ-CoDel queue discipline (``fq_codel.py``).

A trace is a list of operations in the replay format of
``satqm._core.qdisc_replay``::

    {"op": "enqueue", "t": ns, "bucket": int, "size": bytes, "ecn": codepoint}
    {"op": "dequeue", "t": ns}

generated *closed loop* around the oracle: seeded sources (one per flow,
several flows may hash to one bucket) offer packets; a transmitter of rate
``rate_bps`` asks for the next packet (a dequeue) when the previous one has
been serialised, and when a dequeue finds the qdisc empty it asks again at
the next enqueue's instant (right after it). At one instant a dequeue comes
before an enqueue. Responsive sources (``aimd``) halve their rate when one
of their packets is dropped or CE-marked (at most once per ``rtt``) and
otherwise grow it linearly; the others are open loop (constant rate,
Poisson, on/off Poisson, a burst).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .fq_codel import FqCoDel

NS = 1_000_000_000


def tx_ns(size: int, rate_bps: int) -> int:
    """Serialisation time, rounded up to the next ns."""
    return -(-size * 8 * NS // rate_bps)


@dataclass(frozen=True)
class Source:
    """One flow. ``kind``: ``"cbr"`` (constant spacing), ``"poisson"``,
    ``"onoff"`` (Poisson during ``on`` s, silent ``off`` s), ``"burst"``
    (``n`` packets ``gap`` s apart from ``t0``) or ``"aimd"`` (responsive:
    the spacing follows a rate that grows by ``increase`` bit/s per second and
    halves on a drop or mark, at most once per ``rtt`` s, never below
    ``min_bps``). ``sizes`` and ``ecn``: one value, or a list to draw from per
    packet."""

    kind: str
    bucket: int
    rate_bps: float
    t0: float
    t1: float
    sizes: int | tuple = 1500
    ecn: str | tuple = "not-ect"
    on: float = 0.1
    off: float = 0.1
    n: int = 0
    gap: float = 0.0
    increase: float = 2e6
    rtt: float = 0.02
    min_bps: float = 2e5


class _Flow:
    def __init__(self, src: Source, rng: np.random.Generator):
        self.s = src
        self.rng = rng
        self.rate = float(src.rate_bps)
        self.last_cut = -math.inf
        self.sent = 0
        self.t = src.t0  # seconds: time of the next packet

    def draw(self) -> tuple[int, str]:
        s = self.s
        size = s.sizes if isinstance(s.sizes, int) else int(self.rng.choice(s.sizes))
        ecn = s.ecn if isinstance(s.ecn, str) else str(self.rng.choice(s.ecn))
        return size, ecn

    def mean_size(self) -> float:
        s = self.s.sizes
        return float(s) if isinstance(s, int) else float(np.mean(s))

    def advance(self, size: int) -> None:
        """Move ``self.t`` to the next packet's time (``inf`` when done)."""
        s = self.s
        self.sent += 1
        if s.kind == "cbr":
            self.t += self.mean_size() * 8 / self.rate
        elif s.kind == "poisson":
            self.t += self.rng.exponential(self.mean_size() * 8 / self.rate)
        elif s.kind == "onoff":
            self.t += self.rng.exponential(self.mean_size() * 8 / self.rate)
            period = s.on + s.off
            phase = (self.t - s.t0) % period
            if phase >= s.on:  # in the off part: jump to the next on period
                self.t += period - phase
        elif s.kind == "burst":
            self.t = s.t0 + self.sent * s.gap if self.sent < s.n else math.inf
        elif s.kind == "aimd":
            dt = size * 8 / self.rate
            self.t += dt
            self.rate += s.increase * dt
        else:
            raise ValueError(f"unknown source kind {s.kind!r}")
        if self.t >= s.t1:
            self.t = math.inf

    def signal(self, now_s: float) -> None:
        if self.s.kind == "aimd" and now_s - self.last_cut >= self.s.rtt:
            self.rate = max(self.rate / 2, self.s.min_bps)
            self.last_cut = now_s


@dataclass
class Trace:
    params: dict
    limit_packets: int
    rate_bps: int
    ops: list[dict]
    outputs: list[dict]
    hits: Counter
    stats: Counter = field(default_factory=Counter)


def generate(
    params: dict,
    limit_packets: int,
    rate_bps: int,
    sources: Sequence[Source],
    duration: float,
    seed: int,
) -> Trace:
    """Run the sources and the transmitter around a fresh oracle; record the
    operations and the oracle's outputs."""
    q = FqCoDel(params, limit_packets)
    flows = [_Flow(s, np.random.default_rng([seed, i])) for i, s in enumerate(sources)]
    for s in sources:
        if not 0 <= s.bucket < q.n_flows:
            raise ValueError(f"bucket {s.bucket} outside 0..{q.n_flows - 1}")
    end = int(duration * NS)
    heap = [(int(f.t * NS), i) for i, f in enumerate(flows) if f.t < math.inf]
    heapq.heapify(heap)
    owner: list[int] = []  # packet id -> flow index
    sizes: list[int] = []  # packet id -> size
    ops: list[dict] = []
    outputs: list[dict] = []
    stats: Counter = Counter()
    busy_until: int | None = None  # None: the transmitter waits for an enqueue

    def signal(pid: int, t: int) -> None:
        flows[owner[pid]].signal(t / NS)

    def dequeue(t: int) -> None:
        nonlocal busy_until
        op = {"op": "dequeue", "t": t}
        out = q.apply(op)
        ops.append(op)
        outputs.append(out)
        for pid in out["dropped"]:
            signal(pid, t)
        stats["codel_drops"] += len(out["dropped"])
        if out["sent"] is None:
            busy_until = None
            stats["idle"] += 1
            return
        if out["mark"] is not None:
            signal(out["sent"], t)
            stats["mark_" + out["mark"]] += 1
        busy_until = t + tx_ns(sizes[out["sent"]], rate_bps)

    while True:
        t_arr = heap[0][0] if heap else math.inf
        t_deq = busy_until if busy_until is not None else math.inf
        t = min(t_arr, t_deq)
        if t > end:
            break
        if t_deq <= t_arr:
            dequeue(t_deq)
            continue
        _, i = heapq.heappop(heap)
        f = flows[i]
        size, ecn = f.draw()
        op = {"op": "enqueue", "t": t, "bucket": f.s.bucket, "size": size, "ecn": ecn}
        owner.append(i)
        sizes.append(size)
        out = q.apply(op)
        ops.append(op)
        outputs.append(out)
        for pid in out["dropped"]:
            signal(pid, t)
        stats["batch_drops"] += len(out["dropped"])
        f.advance(size)
        if f.t < math.inf:
            # never earlier than now (integer ns times keep the order)
            heapq.heappush(heap, (max(int(f.t * NS), t), i))
        if busy_until is None:
            dequeue(t)
    return Trace(dict(params), limit_packets, rate_bps, ops, outputs, q.hits, stats)


def check_trace(tr: Trace) -> None:
    """Assert the invariants of a generated trace: ops in time order, every
    packet accounted for exactly once (sent, dropped by CoDel, dropped by the
    drop batch, or still queued), a dequeue never earlier than the previous
    packet's serialisation end, a dequeue after an idle one only at an
    enqueue's instant, marks only on ECN-capable packets, operations made of
    plain ints and strings."""
    n_pkts = sum(1 for op in tr.ops if op["op"] == "enqueue")
    fate: dict[int, str] = {}
    ecn: list[str] = []
    sizes: list[int] = []
    last_t = 0
    busy_until = 0
    idle = True
    for idx, (op, out) in enumerate(zip(tr.ops, tr.outputs)):
        where = f"op {idx}: {op} -> {out}"
        # plain Python values only (the replay interface takes dicts of int/str)
        assert all(type(v) in (int, str) for v in op.values()), where
        assert op["t"] >= last_t, where
        last_t = op["t"]
        if op["op"] == "enqueue":
            ecn.append(op["ecn"])
            sizes.append(op["size"])
        for pid in out["dropped"]:
            assert 0 <= pid < len(ecn) and pid not in fate, where
            fate[pid] = "dropped"
        if op["op"] == "enqueue":
            continue
        assert op["t"] >= busy_until, where
        if idle:
            prev = tr.ops[idx - 1] if idx else None
            assert prev is not None and prev["op"] == "enqueue" and prev["t"] == op["t"], where
        pid = out["sent"]
        if pid is None:
            assert out["mark"] is None, where
            idle = True
            continue
        idle = False
        assert 0 <= pid < len(ecn) and pid not in fate, where
        fate[pid] = "sent"
        busy_until = op["t"] + tx_ns(sizes[pid], tr.rate_bps)
        if out["mark"] is not None:
            assert out["mark"] in ("codel", "ce_threshold"), where
            assert ecn[pid] != "not-ect", where
            if out["mark"] == "ce_threshold" and tr.params.get("ce_threshold_ect1"):
                assert ecn[pid] == "ect1", where
    assert len(ecn) == n_pkts and all(0 <= p < n_pkts for p in fate)
