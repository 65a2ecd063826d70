"""Replay traces for the DualPI2 queue discipline (``dualpi2.py``).

A trace is a list of operations in the replay format of
``satqm._core.qdisc_replay``::

    {"op": "enqueue", "t": ns, "bucket": 0, "size": bytes, "ecn": codepoint}
    {"op": "dequeue", "t": ns}
    {"op": "update", "t": ns}

generated *closed loop* around the oracle, as for FQ-CoDel
(``fq_codel_traces.py``, whose sources are reused): seeded sources offer
packets (L flows send ECT(1), Classic flows not-ECT or ECT(0)); a
transmitter of rate ``rate_bps`` asks for a packet when the previous one has
been serialised, and after an idle dequeue asks again right after the next
enqueue; the PI2 controller's ``update`` comes every ``tupdate`` from
``tupdate`` on. At one instant: update, then dequeue, then enqueue.
Responsive (``aimd``) sources halve their rate on a drop or mark (at most
once per ``rtt``), so the traces show the controller working, and open-loop
sources make overload phases (p_CL saturating).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from .dualpi2 import DualPI2
from .fq_codel_traces import NS, Source, Trace, _Flow, tx_ns

__all__ = ["NS", "Source", "Trace", "check_trace", "generate", "tx_ns"]

MARKS = ("l4s", "l4s_overload", "classic")


def generate(
    params: dict,
    limit_packets: int,
    rate_bps: int,
    sources: Sequence[Source],
    duration: float,
    seed: int,
    cls: type = DualPI2,
) -> Trace:
    """Run sources, transmitter and PI2 timer around a fresh oracle (``cls``:
    DualPI2 or the single-queue PI2); record the operations and the
    oracle's outputs."""
    q = cls(params, limit_packets)
    flows = [_Flow(s, np.random.default_rng([seed, i])) for i, s in enumerate(sources)]
    end = int(duration * NS)
    heap = [(int(f.t * NS), i) for i, f in enumerate(flows) if f.t < math.inf]
    heapq.heapify(heap)
    owner: list[int] = []
    sizes: list[int] = []
    ops: list[dict] = []
    outputs: list[dict] = []
    stats: Counter = Counter()
    busy_until: int | None = None
    next_update = q.tupdate

    def run(op: dict) -> dict:
        out = q.apply(op)
        ops.append(op)
        outputs.append(out)
        for pid in out["dropped"]:
            flows[owner[pid]].signal(op["t"] / NS)
        return out

    def dequeue(t: int) -> None:
        nonlocal busy_until
        out = run({"op": "dequeue", "t": t})
        stats["aqm_drops"] += len(out["dropped"])
        if out["sent"] is None:
            busy_until = None
            stats["idle"] += 1
            return
        if out["mark"] is not None:
            flows[owner[out["sent"]]].signal(t / NS)
            stats["mark_" + out["mark"]] += 1
        busy_until = t + tx_ns(sizes[out["sent"]], rate_bps)

    while True:
        t_arr = heap[0][0] if heap else math.inf
        t_deq = busy_until if busy_until is not None else math.inf
        t = min(t_arr, t_deq, next_update)
        if t > end:
            break
        if next_update <= t_deq and next_update <= t_arr:
            out = run({"op": "update", "t": next_update})
            stats["max_p"] = max(stats["max_p"], out["p"])
            next_update += q.tupdate
            continue
        if t_deq <= t_arr:
            dequeue(t_deq)
            continue
        _, i = heapq.heappop(heap)
        f = flows[i]
        size, ecn = f.draw()
        owner.append(i)
        sizes.append(size)
        out = run({"op": "enqueue", "t": t, "bucket": 0, "size": size, "ecn": ecn})
        stats["overlimit"] += len(out["dropped"])
        f.advance(size)
        if f.t < math.inf:
            heapq.heappush(heap, (max(int(f.t * NS), t), i))
        if busy_until is None:
            dequeue(t)
    return Trace(dict(params), limit_packets, rate_bps, ops, outputs, q.hits, stats)


def check_trace(tr: Trace) -> None:
    """Invariants of a generated trace: ops in time order and made of plain
    ints/strs; every packet's fate recorded at most once; a dequeue never
    before the previous packet's serialisation end; marks only with the known
    labels, "classic" only on ECT(0) packets, "l4s*" only on ECT(1)/CE
    packets; update ops exactly every tupdate; p' within [0, 2^32]."""
    q = DualPI2(tr.params, tr.limit_packets)
    ecn: list[str] = []
    sizes: list[int] = []
    fate: dict[int, str] = {}
    last_t = 0
    busy_until = 0
    n_updates = 0
    for idx, (op, out) in enumerate(zip(tr.ops, tr.outputs)):
        where = f"op {idx}: {op} -> {out}"
        assert all(type(v) in (int, str) for v in op.values()), where
        assert op["t"] >= last_t, where
        last_t = op["t"]
        if op["op"] == "update":
            n_updates += 1
            assert op["t"] == n_updates * q.tupdate, where
            assert 0 <= out["p"] <= 1 << 32 and out["dropped"] == [], where
            continue
        if op["op"] == "enqueue":
            ecn.append(op["ecn"])
            sizes.append(op["size"])
        for pid in out["dropped"]:
            assert 0 <= pid < len(ecn) and pid not in fate, where
            fate[pid] = "dropped"
        if op["op"] == "enqueue":
            continue
        assert op["t"] >= busy_until, where
        pid = out["sent"]
        if pid is None:
            assert out["mark"] is None, where
            continue
        assert pid not in fate, where
        fate[pid] = "sent"
        busy_until = op["t"] + tx_ns(sizes[pid], tr.rate_bps)
        m = out["mark"]
        if m is not None:
            assert m in MARKS, where
            if m == "classic":
                assert ecn[pid] == "ect0", where
            else:
                assert ecn[pid] in ("ect1", "ce"), where
