"""FQ-PIE, COBALT and FQ-COBALT: independent Python references
(tests/oracles/fq_pie.py, tests/oracles/cobalt.py, written from Linux's
sch_fq_pie.c / sch_cake.c, ns-3's cobalt-queue-disc.cc and RFC 8033) checked
on their own (hand-computed cases, branch coverage of closed-loop traces,
trace invariants), then used to check satqm's queue disciplines through
``satqm._core.qdisc_replay`` operation by operation.

The traces come from FQ-CoDel's closed-loop generator
(``oracles.fq_codel_traces.generate``) run around these oracles; for FQ-PIE
an ``update`` operation is put in before the first operation at or after each
multiple of ``t_update``. (The generator's responsive sources hear of drops
and of marks at dequeue; FQ-PIE's marks at enqueue do not reach them.)

Two points are also checked by minimal cases: FQ-PIE's marks at enqueue
are reported on the enqueue step, and PIE's burst allowance runs out after
exactly ``max_burst / t_update`` updates (in FQ-PIE and in the single-queue
PIE).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from unittest import mock

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from oracles import cobalt, fq_codel_traces, fq_pie  # noqa: E402
from oracles.cobalt import INV_SQRT_CACHE, Cobalt, FqCobalt, newton_step  # noqa: E402
from oracles.fq_codel_traces import Source, Trace, generate, tx_ns  # noqa: E402
from oracles.fq_pie import FqPie, SplitMix64  # noqa: E402

MS = 1_000_000
MIX = (64, 576, 1500)
ECN_MIX = ("not-ect", "ect0", "ect1", "ce")

#: Eight Poisson sources, one per bucket, with mixed sizes and codepoints
#: (the three-packet-limit scenarios).
TINY_SOURCES = tuple(
    Source("poisson", b, 0.5e6, 0.0, 1.5, sizes=(64, 1500) if b % 2 else 576, ecn=ECN_MIX)
    for b in range(8)
)


# ---------------------------------------------------------------------------
# trace generation: FQ-CoDel's generator around another oracle
# ---------------------------------------------------------------------------


class _Recorder:
    """Stands in for ``FqCoDel`` in ``fq_codel_traces.generate``: hands each
    operation to the oracle (after the updates that are due, if the
    discipline has a timer) and records every operation and output."""

    def __init__(self, q, update_ns: int | None):
        self.q = q
        self.update_ns = update_ns
        self.next_update = update_ns
        self.ops: list[dict] = []
        self.outputs: list[dict] = []
        self.stats: Counter = Counter()

    @property
    def n_flows(self) -> int:
        return self.q.n_flows

    @property
    def hits(self) -> Counter:
        return self.q.hits

    def _run(self, op: dict) -> dict:
        out = self.q.apply(op)
        self.ops.append(op)
        self.outputs.append(out)
        kind = op["op"]
        self.stats[kind + "_drops"] += len(out["dropped"])
        if out["mark"] is not None:
            self.stats[f"{kind}_mark_{out['mark']}"] += 1
        if kind == "dequeue" and out["sent"] is None:
            self.stats["idle"] += 1
        return out

    def apply(self, op: dict) -> dict:
        if self.update_ns is not None:
            while self.next_update <= op["t"]:
                self._run({"op": "update", "t": self.next_update})
                self.stats["updates"] += 1
                self.next_update += self.update_ns
        return self._run(op)


def make_trace(factory, params, limit, rate_bps, sources, duration, seed, update_ns=None) -> Trace:
    """``generate`` with ``factory(params, limit)`` as the discipline."""
    made: list[_Recorder] = []

    def stand_in(p, lim):
        made.append(_Recorder(factory(p, lim), update_ns))
        return made[-1]

    with mock.patch.object(fq_codel_traces, "FqCoDel", stand_in):
        tr = generate(params, limit, rate_bps, sources, duration, seed)
    (rec,) = made
    return dataclasses.replace(tr, ops=rec.ops, outputs=rec.outputs, stats=rec.stats)


def check_trace(tr: Trace, enqueue_labels: tuple, dequeue_labels: tuple) -> None:
    """Invariants of a generated trace: ops in time order and made of plain
    ints and strings; every packet accounted for at most once (sent or
    dropped); a dequeue never earlier than the end of the previous packet's
    serialisation; marks only on ECN-capable packets, with the known labels;
    an update changes nothing visible."""
    ecn: list[str] = []
    sizes: list[int] = []
    fate: dict[int, str] = {}
    last_t = 0
    busy_until = 0
    for idx, (op, out) in enumerate(zip(tr.ops, tr.outputs)):
        where = f"op {idx}: {op} -> {out}"
        assert all(type(v) in (int, str) for v in op.values()), where
        assert op["t"] >= last_t, where
        last_t = op["t"]
        assert set(out) == {"dropped", "sent", "mark"}, where
        if op["op"] == "enqueue":
            ecn.append(op["ecn"])
            sizes.append(op["size"])
        for pid in out["dropped"]:
            assert 0 <= pid < len(ecn) and pid not in fate, where
            fate[pid] = "dropped"
        if op["op"] == "update":
            assert out == {"dropped": [], "sent": None, "mark": None}, where
            continue
        if op["op"] == "enqueue":
            assert out["sent"] is None, where
            if out["mark"] is not None:
                assert out["mark"] in enqueue_labels and ecn[-1] != "not-ect", where
                assert len(ecn) - 1 not in fate, where
            continue
        assert op["t"] >= busy_until, where
        pid = out["sent"]
        if pid is None:
            assert out["mark"] is None, where
            continue
        assert 0 <= pid < len(ecn) and pid not in fate, where
        fate[pid] = "sent"
        busy_until = op["t"] + tx_ns(sizes[pid], tr.rate_bps)
        if out["mark"] is not None:
            assert out["mark"] in dequeue_labels, where
            assert ecn[pid] != "not-ect", where
            if out["mark"] == "ce_threshold" and tr.params.get("ce_threshold_ect1"):
                assert ecn[pid] == "ect1", where


# ---------------------------------------------------------------------------
# scenarios
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str
    params: dict
    limit_packets: int
    rate_bps: int
    sources: tuple
    duration: float


def _aimd(bucket, rate, t0, t1, **kw):
    return Source("aimd", bucket, rate, t0, t1, **kw)


#: a quicker PIE (so that a few seconds show every state)
FAST_PIE = {"target": 0.005, "t_update": 0.005, "max_burst": 0.030}
#: a quicker CoDel for COBALT
SHORT = {"target": 0.001, "interval": 0.010}

PIE_SCENARIOS = [
    # Linux's defaults (drop mode, tail drop): responsive flows, one pair
    # colliding, an unresponsive overload that drives p above 0.1, on/off
    # bursts of every codepoint and a sparse flow
    Scenario(
        "pie-mix8-drop",
        "fq_pie",
        {"flows": 8},
        200,
        10_000_000,
        (
            _aimd(0, 3e6, 0.0, 3.0, ecn="ect0"),
            _aimd(1, 2e6, 0.1, 3.0, ecn=("ect0", "not-ect"), sizes=(576, 1500)),
            _aimd(1, 1e6, 0.3, 3.0, sizes=1500),
            Source("cbr", 2, 6e6, 0.5, 2.5, sizes=1500),
            Source("onoff", 3, 8e6, 0.0, 3.0, sizes=MIX, ecn=ECN_MIX, on=0.05, off=0.12),
            Source("cbr", 5, 2e5, 0.0, 3.0, sizes=64, ecn="ect1"),
        ),
        3.0,
    ),
    # ECN: PIE marks (p <= 0.1), drops not-ECT packets, drops above 0.1;
    # ce_threshold on top
    Scenario(
        "pie-mark",
        "fq_pie",
        {"flows": 8, "mode": "mark", "ce_threshold": 0.002, **FAST_PIE},
        100,
        10_000_000,
        (
            _aimd(0, 3e6, 0.0, 2.5, ecn=ECN_MIX, sizes=MIX),
            _aimd(4, 3e6, 0.0, 2.5, ecn=("ect1", "ect0"), sizes=1500),
            Source("poisson", 6, 5e6, 0.3, 2.0, sizes=MIX, ecn=ECN_MIX),
            Source("onoff", 7, 9e6, 0.0, 2.5, sizes=1500, ecn=("ect0", "not-ect"), on=0.1, off=0.2),
        ),
        2.5,
    ),
    # marks never turn into drops (threshold 1): an ECN-capable overload
    # builds a standing queue of seconds: p climbs to 1 (the 250 ms rule,
    # the 2 % cap), the buffer overflows; not-ECT arrivals are dropped
    Scenario(
        "pie-saturate",
        "fq_pie",
        {"flows": 4, "mode": "mark", "mark_ecn_threshold": 1.0},
        300,
        2_000_000,
        (
            Source("cbr", 0, 3e6, 0.0, 2.5, sizes=1500, ecn="ect0"),
            Source("cbr", 1, 1.5e6, 0.5, 2.0, sizes=1500, ecn=("not-ect", "ect1")),
            Source("onoff", 2, 1e6, 0.0, 3.0, sizes=MIX, ecn="not-ect", on=0.2, off=0.3),
        ),
        3.0,
    ),
    # overflow "fattest": batches from the largest queue, ECN marks
    Scenario(
        "pie-fattest",
        "fq_pie",
        {"flows": 8, "overflow": "fattest", "drop_batch": 4, "mode": "mark", **FAST_PIE},
        30,
        5_000_000,
        (
            _aimd(0, 2e6, 0.0, 2.0, ecn=ECN_MIX, sizes=MIX),
            Source("cbr", 1, 4e6, 0.2, 2.0, sizes=1500, ecn="ect0"),
            Source("burst", 2, 0.0, 0.5, 2.0, sizes=1500, n=40, gap=1e-5, ecn="ect1"),
            Source("poisson", 3, 1e6, 0.0, 2.0, sizes=MIX, ecn=ECN_MIX),
        ),
        2.0,
    ),
    # a tiny limit over many sparse buckets: batches that empty a bucket, ties
    Scenario(
        "pie-tiny",
        "fq_pie",
        {"flows": 8, "overflow": "fattest", "drop_batch": 2, "mode": "mark", **FAST_PIE},
        3,
        2_000_000,
        TINY_SOURCES,
        1.5,
    ),
    # 1024 buckets (every one updated at every t_update), scattered indices
    Scenario(
        "pie-1024",
        "fq_pie",
        {"mode": "mark"},
        100,
        10_000_000,
        (
            Source("cbr", 1023, 7e6, 0.0, 2.0, sizes=1500, ecn="ect0"),
            Source("poisson", 17, 5e6, 0.2, 2.0, sizes=MIX, ecn="not-ect"),
            _aimd(500, 2e6, 0.0, 2.0, sizes=(576, 1500)),
            Source("burst", 3, 0.0, 1.0, 2.0, sizes=1500, n=60, gap=1e-5),
        ),
        2.0,
    ),
    # the L4S selector: ce_threshold for ECT(1) only; a small quantum on a
    # slow link (deficit refills)
    Scenario(
        "pie-ect1-slow",
        "fq_pie",
        {
            "flows": 8,
            "quantum": 300,
            "mode": "mark",
            "ce_threshold": 0.001,
            "ce_threshold_ect1": True,
            **FAST_PIE,
        },
        60,
        2_000_000,
        (
            _aimd(2, 1e6, 0.0, 2.5, ecn="ect1", sizes=1500),
            _aimd(3, 1e6, 0.0, 2.5, ecn=ECN_MIX, sizes=MIX),
            Source("poisson", 7, 1e6, 0.0, 2.5, sizes=MIX, ecn=ECN_MIX),
        ),
        2.5,
    ),
]

COBALT_SCENARIOS = [
    # one queue, ECN: CoDel marks, drops not-ECT, the buffer overflows
    # (queue_full), BLUE above a 20 ms sojourn
    Scenario(
        "cobalt-mark",
        "cobalt",
        {"blue_threshold": 0.020, **SHORT},
        40,
        10_000_000,
        (
            _aimd(0, 3e6, 0.0, 2.5, ecn=ECN_MIX, sizes=MIX),
            Source("cbr", 0, 6e6, 0.5, 1.5, sizes=1500, ecn=("ect0", "not-ect")),
            Source("onoff", 0, 8e6, 0.0, 2.5, sizes=MIX, ecn=ECN_MIX, on=0.05, off=0.15),
        ),
        2.5,
    ),
    # one queue, drop mode, CoDel's default timescale
    Scenario(
        "cobalt-drop",
        "cobalt",
        {"mode": "drop"},
        60,
        5_000_000,
        (
            _aimd(0, 2e6, 0.0, 3.0, sizes=1500),
            _aimd(0, 1e6, 0.2, 3.0, sizes=(576, 1500), ecn="ect0"),
            Source("onoff", 0, 6e6, 0.0, 3.0, sizes=1500, on=0.2, off=0.3),
        ),
        3.0,
    ),
    # eight buckets, fattest drops, ECN
    Scenario(
        "fqc-mix8",
        "fq_cobalt",
        {"flows": 8, "drop_batch": 8, "blue_threshold": 0.050, **SHORT},
        40,
        10_000_000,
        (
            _aimd(0, 3e6, 0.0, 2.5, ecn="ect0"),
            _aimd(1, 2e6, 0.1, 2.5, ecn=("ect0", "not-ect"), sizes=(576, 1500)),
            _aimd(1, 1e6, 0.3, 2.5, sizes=1500),
            Source("cbr", 2, 6e6, 0.5, 2.0, sizes=1500, ecn=("ect0", "not-ect")),
            Source("onoff", 3, 8e6, 0.0, 2.5, sizes=MIX, ecn=ECN_MIX, on=0.05, off=0.12),
            Source("cbr", 5, 2e5, 0.0, 2.5, sizes=64, ecn="ect1"),
        ),
        2.5,
    ),
    # 1024 buckets, drop mode, scattered indices
    Scenario(
        "fqc-1024-drop",
        "fq_cobalt",
        {"mode": "drop", **SHORT},
        30,
        10_000_000,
        (
            Source("cbr", 1023, 7e6, 0.0, 2.0, sizes=1500, ecn="ect0"),
            Source("poisson", 17, 5e6, 0.2, 2.0, sizes=MIX),
            _aimd(500, 2e6, 0.0, 2.0, sizes=(576, 1500)),
            Source("burst", 3, 0.0, 1.0, 2.0, sizes=1500, n=60, gap=1e-5),
        ),
        2.0,
    ),
    # tail drop into the arrival's bucket (queue_full there); an
    # unresponsive ECN-capable overload: CoDel's count climbs past the cache
    # (Newton steps), the sojourn past blue_threshold
    Scenario(
        "fqc-tail",
        "fq_cobalt",
        {"flows": 8, "overflow": "tail", "blue_threshold": 0.030, **SHORT},
        60,
        5_000_000,
        (
            Source("cbr", 0, 6e6, 0.0, 2.0, sizes=1500, ecn="ect0"),
            _aimd(1, 1e6, 0.0, 2.5, ecn=ECN_MIX, sizes=MIX),
            Source("onoff", 2, 3e6, 0.0, 2.5, sizes=MIX, ecn=ECN_MIX, on=0.1, off=0.3),
        ),
        2.5,
    ),
    # a tiny limit over many sparse buckets
    Scenario(
        "fqc-tiny",
        "fq_cobalt",
        {"flows": 8, "drop_batch": 2, **SHORT},
        3,
        2_000_000,
        TINY_SOURCES,
        1.5,
    ),
    # ce_threshold on every codepoint, a small quantum
    Scenario(
        "fqc-ce",
        "fq_cobalt",
        {"flows": 8, "quantum": 600, "ce_threshold": 0.0005, **SHORT},
        60,
        10_000_000,
        (
            _aimd(0, 4e6, 0.0, 2.0, ecn=ECN_MIX, sizes=MIX),
            _aimd(4, 4e6, 0.0, 2.0, ecn=("ect1", "ect0"), sizes=1500),
            Source("onoff", 6, 9e6, 0.0, 2.0, sizes=MIX, ecn=ECN_MIX, on=0.03, off=0.05),
        ),
        2.0,
    ),
    # the L4S selector, drop mode (ce_threshold still marks)
    Scenario(
        "fqc-ce-ect1",
        "fq_cobalt",
        {"flows": 8, "mode": "drop", "ce_threshold": 0.0005, "ce_threshold_ect1": True, **SHORT},
        60,
        10_000_000,
        (
            _aimd(2, 5e6, 0.0, 2.0, ecn="ect1", sizes=1500),
            _aimd(3, 4e6, 0.0, 2.0, ecn=ECN_MIX, sizes=MIX),
            Source("poisson", 7, 4e6, 0.0, 2.0, sizes=MIX, ecn=ECN_MIX),
        ),
        2.0,
    ),
]

SCENARIOS = PIE_SCENARIOS + COBALT_SCENARIOS
SEEDS = (1, 2)


def oracle_class(kind: str):
    return {"fq_pie": FqPie, "cobalt": Cobalt, "fq_cobalt": FqCobalt}[kind]


def spec_of(kind: str, params: dict) -> str:
    if kind == "fq_pie":
        return fq_pie.spec_toml(params)
    return cobalt.spec_toml(kind, params)


def replay_oracle(kind, params, limit, ops, variants=frozenset()):
    if kind == "fq_pie":
        return fq_pie.replay(params, limit, ops, variants)
    return cobalt.replay(kind, params, limit, ops, variants)


@cache
def trace(i: int, seed: int) -> Trace:
    sc = SCENARIOS[i]
    cls = oracle_class(sc.kind)
    update_ns = FqPie(sc.params, 1).t_update if sc.kind == "fq_pie" else None
    return make_trace(
        cls, sc.params, sc.limit_packets, sc.rate_bps, sc.sources, sc.duration, seed, update_ns
    )


CASES = [(i, s) for i in range(len(SCENARIOS)) for s in SEEDS]
IDS = [f"{SCENARIOS[i].name}-{s}" for i, s in CASES]
PIE_CASES = [(i, s) for i, s in CASES if SCENARIOS[i].kind == "fq_pie"]
COBALT_CASES = [(i, s) for i, s in CASES if SCENARIOS[i].kind != "fq_pie"]


# ---------------------------------------------------------------------------
# the traces themselves
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("i,seed", CASES, ids=IDS)
def test_trace_is_consistent(i, seed):
    tr = trace(i, seed)
    assert len(tr.ops) > 1000
    check_trace(tr, ("pie",), ("ce_threshold", "cobalt"))
    if SCENARIOS[i].kind == "fq_pie":
        assert tr.stats["updates"] > 100 and tr.stats["dequeue_drops"] == 0
    else:
        assert all(
            out["mark"] is None for op, out in zip(tr.ops, tr.outputs) if op["op"] != "dequeue"
        )


def test_generation_is_deterministic():
    for i in (0, len(PIE_SCENARIOS)):
        sc = SCENARIOS[i]
        cls = oracle_class(sc.kind)
        upd = FqPie(sc.params, 1).t_update if sc.kind == "fq_pie" else None
        again = make_trace(cls, sc.params, sc.limit_packets, sc.rate_bps, sc.sources, 1.0, 1, upd)
        first = trace(i, 1)
        n = len(again.ops)
        assert first.ops[:n] == again.ops and first.outputs[:n] == again.outputs
        other = make_trace(cls, sc.params, sc.limit_packets, sc.rate_bps, sc.sources, 1.0, 99, upd)
        assert other.ops != again.ops


def _hits(cases) -> Counter:
    total: Counter = Counter()
    for i, s in cases:
        total += trace(i, s).hits
    return total


@pytest.mark.parametrize(
    "module,cases",
    [(fq_pie, PIE_CASES), (cobalt, COBALT_CASES)],
    ids=["fq_pie", "cobalt"],
)
def test_traces_cover_every_branch(module, cases):
    hits = _hits(cases)
    known = set(module.BRANCHES) | set(getattr(module, "RARE_BRANCHES", ()))
    unknown = sorted(set(hits) - known)
    assert not unknown, f"branches not listed in BRANCHES: {unknown}"
    missing = [k for k in module.BRANCHES if hits[k] == 0]
    assert not missing, f"branches never reached: {missing}"


def test_traces_signal_every_way():
    """Tail drops, PIE drops and marks, drop batches, COBALT drops and marks,
    ce_threshold marks and idle periods all occur."""
    pie: Counter = Counter()
    for i, s in PIE_CASES:
        pie += trace(i, s).stats
    for key in ("enqueue_drops", "enqueue_mark_pie", "dequeue_mark_ce_threshold", "idle"):
        assert pie[key] > 0, (key, pie)
    cob: Counter = Counter()
    for i, s in COBALT_CASES:
        cob += trace(i, s).stats
    for key in (
        "enqueue_drops",
        "dequeue_drops",
        "dequeue_mark_cobalt",
        "dequeue_mark_ce_threshold",
        "idle",
    ):
        assert cob[key] > 0, (key, cob)


def test_update_of_bucket_at_rest_changes_nothing():
    """satqm skips the update of an empty bucket whose PIE is at rest
    (probability and delays 0, burst allowance full): the oracle updates
    every bucket and checks that such an update changed nothing."""
    hits = _hits(PIE_CASES)
    assert hits["update_at_rest"] > 10_000
    assert hits["update_at_rest_changed"] == 0


# ---------------------------------------------------------------------------
# hand-computed cases: the draws and the FQ-PIE oracle
# ---------------------------------------------------------------------------


class FixedDraws:
    """Stands in for the discipline's SplitMix64 with given uniforms."""

    def __init__(self, *us: float):
        self.us = list(us)
        self.draws = 0

    def uniform(self) -> float:
        self.draws += 1
        return self.us.pop(0)


def enq(q, t, bucket, size=1500, ecn="not-ect"):
    return q.enqueue(t, bucket, size, ecn)


class Recorded:
    """An FQ-PIE oracle that records the operations and outputs of a
    hand-built case, for :func:`replay_check` (other attributes pass through)."""

    def __init__(self, params: dict, limit: int):
        self.params, self.limit = params, limit
        self.q = FqPie(params, limit)
        self.ops: list[dict] = []
        self.outs: list[dict] = []

    def __getattr__(self, name):
        return getattr(self.q, name)

    def _run(self, op: dict) -> dict:
        self.ops.append(op)
        self.outs.append(self.q.apply(op))
        return self.outs[-1]

    def enqueue(self, t, bucket, size, ecn):
        return self._run({"op": "enqueue", "t": t, "bucket": bucket, "size": size, "ecn": ecn})

    def dequeue(self, t):
        return self._run({"op": "dequeue", "t": t})

    def update(self, t):
        return self._run({"op": "update", "t": t})

    def check_against_satqm(self):
        replay_check("fq_pie", self.params, self.limit, self.ops, self.outs)


def test_splitmix64_from_zero():
    # SplitMix64's published sequence for the seed 0
    g = SplitMix64(0)
    assert [g.next_u64() for _ in range(3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]
    g = SplitMix64(0)
    assert g.uniform() == (0xE220A8397B1DCDAF >> 11) / 2.0**53
    assert g.uniform() == pytest.approx(0.431527997)
    assert g.draws == 2


def test_fq_pie_drr_order():
    # quantum 1514, 1500-byte packets: as FQ-CoDel (the new bucket sends two,
    # then the buckets alternate); every packet passes PIE (burst allowance)
    q = Recorded({"flows": 8}, 1000)
    for _ in range(5):
        enq(q, 0, 1)  # ids 0..4
    for _ in range(5):
        enq(q, 0, 2)  # ids 5..9
    ids = [q.dequeue(0)["sent"] for _ in range(10)]
    assert ids == [0, 1, 5, 6, 2, 7, 3, 8, 4, 9]
    assert q.dequeue(0) == {"dropped": [], "sent": None, "mark": None}
    assert q.hits["pie_pass_burst"] == 10 and q.rng.draws == 10
    q.check_against_satqm()


def test_fq_pie_tail_drop_takes_no_draw():
    q = Recorded({"flows": 4}, 3)
    assert [enq(q, 0, b)["dropped"] for b in (0, 1, 0)] == [[], [], []]
    assert q.rng.draws == 3
    assert enq(q, 1, 3) == {"dropped": [3], "sent": None, "mark": None}
    assert q.rng.draws == 3 and q.hits["tail_drop"] == 1 and q.flows[3].where is None
    assert q.dequeue(2)["sent"] == 0
    assert enq(q, 3, 3)["dropped"] == [] and q.rng.draws == 4
    q.check_against_satqm()


def _congested(q, bucket, prob, qdelay_old=10 * MS):
    """Put ``bucket``'s PIE past its burst allowance, delayed and at ``prob``."""
    pie = q.flows[bucket].aqm
    pie.burst_allowance = 0
    pie.qdelay_old = qdelay_old
    pie.prob = prob
    return pie


def test_fq_pie_decides_on_its_own_bucket():
    q = FqPie({"flows": 4}, 1000)
    for _ in range(2):
        enq(q, 0, 0)
    for _ in range(10):
        enq(q, 0, 1)
    _congested(q, 0, 0.05)
    q.rng = FixedDraws(0.0, 0.0, 0.06)
    # bucket 0 holds 3000 bytes (<= 2 * 1500): passes, whatever the others hold
    assert enq(q, 1, 0)["dropped"] == [] and q.hits["pie_pass_two_packets"] == 1
    # 4500 bytes: u = 0 < p = 0.05 <= 0.1: a mark, in drop mode a drop
    assert enq(q, 1, 0, ecn="ect0")["dropped"] == [13]
    assert q.hits["pie_mark_dropped_drop_mode"] == 1
    # u = 0.06 >= p: passes
    assert enq(q, 1, 0)["dropped"] == [] and q.hits["pie_pass_random"] == 1
    # the low-delay pass: qdelay_old < target / 2 and p < 0.2
    _congested(q, 0, 0.19, qdelay_old=7_499_999)
    q.rng = FixedDraws(0.0)
    assert enq(q, 2, 0)["dropped"] == [] and q.hits["pie_pass_low_delay"] == 1


def test_fq_pie_mark_mode_verdicts():
    q = FqPie({"flows": 2, "mode": "mark"}, 1000)
    for _ in range(3):
        enq(q, 0, 0)
    _congested(q, 0, 0.1)
    q.rng = FixedDraws(0.0, 0.0, 0.0, 0.0)
    # p <= mark_ecn_threshold: an ECN-capable arrival is marked and queued
    assert enq(q, 1, 0, ecn="ect1") == {"dropped": [], "sent": None, "mark": "pie"}
    assert q.flows[0].q[-1].ce and q.flows[0].q[-1].ect1
    assert enq(q, 1, 0, ecn="ce")["mark"] == "pie"
    assert enq(q, 1, 0)["dropped"] == [5]  # not-ECT: dropped
    assert q.hits["pie_mark_dropped_not_ect"] == 1
    # p above the threshold: dropped, ECN-capable or not
    q.flows[0].aqm.prob = 0.11
    assert enq(q, 1, 0, ecn="ect0") == {"dropped": [6], "sent": None, "mark": None}
    assert q.hits["pie_drop_dropped"] == 1 and q.packets == 5


def test_fq_pie_departure_and_update_per_bucket():
    q = Recorded({"flows": 2}, 1000)
    for _ in range(3):
        enq(q, 0, 0)  # ids 0..2
    enq(q, 0, 1)  # id 3
    assert [q.dequeue(40 * MS)["sent"] for _ in range(3)] == [0, 1, 3]
    # bucket 0 keeps id 2: its sojourn stands; bucket 1's departure left it
    # empty: 0 (Linux's pie_process_dequeue())
    assert (q.flows[0].aqm.last_sojourn, q.flows[1].aqm.last_sojourn) == (40 * MS, 0)
    q.update(45 * MS)
    p0, p1 = q.flows[0].aqm, q.flows[1].aqm
    # bucket 0 still holds id 2: qdelay 40 ms, p < 1e-6 scales by 1/2048
    assert p0.prob == pytest.approx((0.125 * (0.040 - 0.015) + 1.25 * 0.040) / 2048, rel=1e-12)
    assert p0.qdelay_old == 40 * MS and p0.burst_allowance == 135 * MS
    # bucket 1 is empty: qdelay 0, at rest
    assert (p1.prob, p1.qdelay_old, p1.burst_allowance) == (0.0, 0, 150 * MS)
    assert q.hits["update_busy"] == 1 and q.hits["update_at_rest"] == 1
    q.update(60 * MS)  # qdelay_old 40 ms, qdelay 40 ms: (0.125 * 0.025) / 128
    assert p0.prob == pytest.approx(
        (0.125 * (0.040 - 0.015) + 1.25 * 0.040) / 2048 + 0.125 * 0.025 / 128, rel=1e-12
    )
    assert q.dequeue(61 * MS)["sent"] == 2 and q.dequeue(62 * MS)["sent"] is None
    q.check_against_satqm()


def test_fq_pie_fattest_batch():
    q = Recorded({"flows": 8, "overflow": "fattest"}, 6)
    for b in (2, 2, 2, 2, 5, 5):
        enq(q, 0, b)  # ids 0..5
    # 7 > 6 packets: bucket 2 (6000 bytes) loses its head until 3000 bytes
    assert enq(q, 0, 5, size=64)["dropped"] == [0, 1]
    assert q.backlog_of(2) == 3000 and q.packets == 5
    enq(q, 0, 5)  # id 7; bucket 5: 1500 + 1500 + 64 + 1500
    # id 8: bucket 5 (6064) the fattest, threshold 3032: 1500, 3000, 3064
    assert enq(q, 0, 5)["dropped"] == [4, 5, 6]
    assert q.hits["batch_other_bucket"] == 1 and q.hits["batch_own_bucket"] == 1
    # PIE hears nothing of it; every arrival drew once
    assert q.flows[2].aqm.prob == 0.0 and q.rng.draws == 9
    q.check_against_satqm()
    with pytest.raises(ValueError):
        FqPie({"drop_batch": 4}, 10)  # only with "fattest"


def test_fq_pie_ce_threshold():
    q = FqPie({"flows": 2, "ce_threshold": 0.001, "mode": "mark"}, 100)
    for ecn in ("ect0", "not-ect", "ect1", "ce", "ect0", "ect0"):
        enq(q, 0, 0, ecn=ecn)  # ids 0..5
    _congested(q, 0, 0.05)
    q.rng = FixedDraws(0.0)
    assert enq(q, 0, 0, ecn="ect0")["mark"] == "pie"  # id 6
    assert q.dequeue(1 * MS)["mark"] is None  # sojourn not above 1 ms
    assert q.dequeue(2 * MS)["mark"] is None  # not ECN-capable
    assert [q.dequeue(2 * MS)["mark"] for _ in range(4)] == ["ce_threshold"] * 4
    assert q.dequeue(2 * MS) == {"dropped": [], "sent": 6, "mark": "ce_threshold"}
    assert q.hits["ce_threshold_pie_marked"] == 1
    # the L4S selector: ECT(1) only, also once PIE marked it CE
    q = FqPie({"flows": 2, "ce_threshold": 0.001, "ce_threshold_ect1": True, "mode": "mark"}, 9)
    for ecn in ("ect0", "ce", "ect0", "ect0"):
        enq(q, 0, 0, ecn=ecn)
    _congested(q, 0, 0.05)
    q.rng = FixedDraws(0.0)
    assert enq(q, 0, 0, ecn="ect1")["mark"] == "pie"
    assert [q.dequeue(2 * MS)["mark"] for _ in range(5)] == [None] * 4 + ["ce_threshold"]


def test_fq_pie_parameters_and_spec_toml():
    q = FqPie({}, 10)
    assert (q.n_flows, q.quantum, q.overflow, q.mark_mode, q.t_update) == (
        1024,
        1514,
        "tail",
        False,
        15 * MS,
    )
    pie = q.flows[0].aqm
    assert (pie.target, pie.max_burst, pie.alpha, pie.beta, pie.ecn_th) == (
        15 * MS,
        150 * MS,
        0.125,
        1.25,
        0.1,
    )
    for bad in ({"bogus": 1}, {"mode": "maybe"}, {"overflow": "head"}):
        with pytest.raises(ValueError):
            FqPie(bad, 10)
    text = fq_pie.spec_toml({"flows": 8, "target": 0.005, "mode": "mark", "ce_threshold": None})
    assert text == 'kind = "fq_pie"\nflows = 8\ntarget = "5000000 ns"\nmode = "mark"\n'
    assert fq_pie.params_from_toml(_tomllib().loads(text)) == {
        "flows": 8,
        "target": 0.005,
        "mode": "mark",
    }


# ---------------------------------------------------------------------------
# hand-computed cases: COBALT
# ---------------------------------------------------------------------------


def test_cobalt_newton_step_and_cache():
    # count 2 from r = 2^32 - 1: invsqrt2 = 2^32 - 2, val = 3*2^32 - 2*(2^32 - 2)
    # = 2^32 + 4, >> 2 = 2^30 + 1, * (2^32 - 1) >> 31 = 2^31 + 1
    assert newton_step(0xFFFFFFFF, 2) == 2**31 + 1
    assert INV_SQRT_CACHE[:2] == (0xFFFFFFFF, 0xFFFFFFFF)
    for n in range(2, 16):  # four steps: within 0.06 % of 2^32 / sqrt(n) (count 2)
        assert INV_SQRT_CACHE[n] == pytest.approx(2**32 / math.sqrt(n), rel=6e-4)
    assert INV_SQRT_CACHE[3:] == pytest.approx(
        [2**32 / math.sqrt(n) for n in range(3, 16)], rel=3e-8
    )
    assert INV_SQRT_CACHE[4] == 2147483647 and INV_SQRT_CACHE[9] == 1431655765
    # current Linux's eight-step table differs at 2, 3 and 6
    diff = [n for n in range(16) if INV_SQRT_CACHE[n] != cobalt.LINUX_INV_SQRT_CACHE[n]]
    assert diff == [2, 3, 6]
    assert INV_SQRT_CACHE[2] == 3035289760 and cobalt.LINUX_INV_SQRT_CACHE[2] == 3037000500
    # beyond the cache, one step per count from the previous value
    assert newton_step(INV_SQRT_CACHE[15], 16) == pytest.approx(2**30, rel=2e-3)


def test_cobalt_control_law():
    c = Cobalt({}, 10)
    assert c._control(0, 0xFFFFFFFF) == 99_999_999  # 1e8 * (1 - 2^-32), floor
    assert c._control(5, INV_SQRT_CACHE[2]) == 5 + 70_670_846
    assert c._control(0, INV_SQRT_CACHE[3]) == 57_735_025
    assert c._control(0, INV_SQRT_CACHE[4]) == 49_999_999


def _ops_enqueue(t, n, bucket=0, size=1500, ecn="not-ect"):
    ecns = [ecn] * n if isinstance(ecn, str) else list(ecn)
    return [{"op": "enqueue", "t": t, "bucket": bucket, "size": size, "ecn": e} for e in ecns]


def _deq(t):
    return {"op": "dequeue", "t": t}


def _step(dropped=(), sent=None, mark=None):
    return {"dropped": list(dropped), "sent": sent, "mark": mark}


#: One COBALT queue, mode "drop", target 5 ms, interval 100 ms: ten packets
#: waiting from 0. 5 ms: sojourn == target, not over: count 0, drop_next =
#: 105 ms. 6 ms: over: dropping, drop_next = 6 ms + 99999999 ns, count 1.
#: At drop_next - 1 nothing; at drop_next a drop (count 2, drop_next +=
#: 70670846) and the next head is sent; at that drop_next a drop (count 3,
#: += 57735025); 200 ms nothing due; at 234405870 a drop (count 4, +=
#: 49999999); 250 ms empty: count kept (not due); 400 ms a packet below
#: target: two decay steps (count 2, drop_next 412811740); at that time the
#: queue (still listed: it sent at 400 ms) is found empty and decays once
#: more (count 1, drop_next += 99999999), and leaves the lists.
COBALT_DROP_OPS = (
    _ops_enqueue(0, 10)
    + [_deq(t) for t in (5 * MS, 6 * MS, 105_999_998, 105_999_999, 176_670_845)]
    + [_deq(200 * MS), _deq(234_405_870), _deq(250 * MS)]
    + _ops_enqueue(400 * MS, 1)
    + [_deq(400 * MS), _deq(412_811_740)]
)
COBALT_DROP_OUTS = [_step()] * 10 + [
    _step(sent=0),
    _step(sent=1),
    _step(sent=2),
    _step([3], 4),
    _step([5], 6),
    _step(sent=7),
    _step([8], 9),
    _step(),
    _step(),
    _step(sent=10),
    _step(),
]


def test_cobalt_codel_part_by_hand():
    outs, c = cobalt.replay("cobalt", {"mode": "drop"}, 100, COBALT_DROP_OPS)
    assert outs == COBALT_DROP_OUTS
    v = c.flows[0].aqm
    assert (v.count, v.drop_next, v.dropping, v.p_drop) == (1, 512_811_739, False, 0.0)
    assert v.rec_inv_sqrt == 0xFFFFFFFF
    for branch in (
        "timeout_count_zero",
        "enter_dropping",
        "count_to_one",
        "signal_drop",
        "decay_step_again",
        "empty_count_keep",
        "empty_count_decay",
    ):
        assert c.hits[branch] > 0, branch
    replay_check("cobalt", {"mode": "drop"}, 100, COBALT_DROP_OPS, outs)


def test_cobalt_isqrt_table_variant_by_hand():
    """With current Linux's table the count-2 step is 70710678 ns, so at
    176670845 ns the second signal is not due yet."""
    ops = COBALT_DROP_OPS[:15]
    outs, _ = cobalt.replay("cobalt", {"mode": "drop"}, 100, ops, frozenset(["linux_isqrt_table"]))
    assert outs[-1] == _step(sent=5)
    # Linux's zeroed rec_inv_sqrt: entering at 6 ms sets drop_next = 6 ms, so
    # at 105999998 two signals are due: count 2 (drop_next 76670846, still
    # past), count 3 (134405871)
    outs, c = cobalt.replay(
        "cobalt", {"mode": "drop"}, 100, ops[:13], frozenset(["linux_rec_inv_sqrt_zero"])
    )
    assert outs[-1] == _step([2, 3], 4)
    assert (c.flows[0].aqm.count, c.flows[0].aqm.drop_next) == (3, 134_405_871)


def test_cobalt_marks_in_mark_mode():
    """Mode "mark" (the default), without the 5 ms dequeue of the drop-mode
    case. At 6 ms the queue enters the dropping state (count 1, drop_next =
    6 ms + 99999999) but ``schedule`` was taken against the initial drop_next
    0: it is > 0, so the activity-timeout rule sets drop_next = now = 6 ms
    (Linux and ns-3 alike). At 105999999 the ECT(0) id 1 is due: marked,
    count 2, drop_next = 6 ms + 70670846, still past: drop_next = now again.
    At 176670845 the not-ECT id 2 is dropped (count 3, drop_next 163735024,
    past), so id 3 is due too: marked (count 4, drop_next 213735023)."""
    ecns = ["ect0", "ect0", "not-ect"] + ["ect0"] * 7
    ops = _ops_enqueue(0, 10, ecn=ecns) + [_deq(t) for t in (6 * MS, 105_999_999, 176_670_845)]
    outs, c = cobalt.replay("cobalt", {}, 100, ops)
    assert outs[10:] == [
        _step(sent=0),
        _step(sent=1, mark="cobalt"),
        _step([2], 3, mark="cobalt"),
    ]
    v = c.flows[0].aqm
    assert (v.count, v.drop_next, v.dropping) == (4, 213_735_023, True)
    assert c.hits["drop_not_ect_in_mark_mode"] == 1 and c.hits["timeout_reset"] == 2
    replay_check("cobalt", {}, 100, ops, outs)


#: One COBALT queue, limit 2, p_inc 0.5, p_dec 0.25, blue_threshold 20 ms;
#: the draws are SplitMix64's from 0: 0.883, 0.432, 0.026, 0.971, 0.106,
#: 0.327, 0.174, 0.772.
BLUE_PARAMS = {"p_inc": 0.5, "p_dec": 0.25, "blue_threshold": 0.020}
BLUE_OPS = (
    _ops_enqueue(0, 3, ecn="ect0")  # id 2 overflows: queue_full at 0, BLUE waits
    + _ops_enqueue(6 * MS, 1)  # id 3 overflows: p_drop 0.5, drop_next 6 ms
    + [_deq(6 * MS)]  # id 0 due: marked (count 2); u 0.883 >= 0.5
    + _ops_enqueue(7 * MS, 1, ecn="ect0")  # id 4
    + [_deq(80 * MS)]  # id 1: sojourn > 20 ms: p 1; due: marked (count 3),
    # u 0.432 < 1: dropped; id 4: u 0.026: dropped; empty: BLUE waits
    + _ops_enqueue(90 * MS, 1)  # id 5
    + [_deq(90 * MS)]  # u 0.971 < 1: dropped; empty: p 0.75
    + _ops_enqueue(100 * MS, 1, ecn="ect1")  # id 6
    + [_deq(100 * MS)]  # u 0.106 < 0.75: dropped; empty: p 0.5
    + _ops_enqueue(110 * MS, 2)  # ids 7, 8
    + [_deq(110 * MS)]  # u 0.327, 0.174 < 0.5: both dropped; empty: p 0.25
    + _ops_enqueue(120 * MS, 1)  # id 9
    + [_deq(120 * MS)]  # u 0.772 >= 0.25: sent
    + [_deq(200 * MS)]  # empty: p 0; count 3 -> 2 (drop_next 134405871 due)
)
BLUE_OUTS = [
    _step(),
    _step(),
    _step([2]),
    _step([3]),
    _step(sent=0, mark="cobalt"),
    _step(),
    _step([1, 4]),
    _step(),
    _step([5]),
    _step(),
    _step([6]),
    _step(),
    _step(),
    _step([7, 8]),
    _step(),
    _step(sent=9),
    _step(),
]


def test_cobalt_blue_by_hand():
    outs, c = cobalt.replay("cobalt", BLUE_PARAMS, 2, BLUE_OPS)
    assert outs == BLUE_OUTS
    v = c.flows[0].aqm
    assert c.rng.draws == 8
    assert (v.p_drop, v.blue_timer, v.count, v.drop_next) == (0.0, 200 * MS, 2, 205_076_717)
    for branch in (
        "full_blue_wait",
        "full_blue_up",
        "blue_threshold_up",
        "blue_threshold_wait",
        "blue_drops_marked",
        "blue_draw_drop",
        "blue_draw_pass",
        "empty_blue_wait",
        "empty_blue_down",
        "loop_drop_empties",
    ):
        assert c.hits[branch] > 0, branch
    replay_check("cobalt", BLUE_PARAMS, 2, BLUE_OPS, outs)


def test_cobalt_blue_timer_boundary():
    # queue_full raises p_drop only when now - blue_timer > target (strict)
    ops = _ops_enqueue(10 * MS, 2) + _ops_enqueue(15 * MS, 1) + _ops_enqueue(15 * MS + 1, 1)
    outs, c = cobalt.replay("cobalt", {}, 1, ops)
    assert [o["dropped"] for o in outs] == [[], [1], [2], [3]]
    v = c.flows[0].aqm
    assert v.p_drop == 2 / 256 and v.blue_timer == 15 * MS + 1 and v.drop_next == 15 * MS + 1
    assert c.hits["full_blue_up"] == 2 and c.hits["full_blue_wait"] == 1
    replay_check("cobalt", {}, 1, ops, outs)


def test_fq_cobalt_batch_tells_cobalt_nothing():
    ops = (
        _ops_enqueue(10 * MS, 4, bucket=2)
        + _ops_enqueue(10 * MS, 2, bucket=5)
        + _ops_enqueue(10 * MS, 1, bucket=5, size=64)
        + [_deq(10 * MS)] * 2
    )
    outs, c = cobalt.replay("fq_cobalt", {"flows": 8}, 6, ops)
    # bucket 2 (6000 bytes) loses 3000 (ns-3: its COBALT hears nothing of it)
    assert outs[6] == _step([0, 1])
    assert outs[7:] == [_step(sent=2), _step(sent=3)]  # bucket 2 first (new list)
    v2 = c.flows[2].aqm
    assert (v2.p_drop, v2.dropping, v2.count, v2.drop_next) == (0.0, False, 0, 110 * MS)
    assert c.rng.draws == 0
    replay_check("fq_cobalt", {"flows": 8}, 6, ops, outs)
    # CAKE's cake_drop calls cobalt_queue_full on that queue: p_drop 1/256,
    # dropping, drop_next = now, count 1. At the first dequeue id 2 (sojourn
    # 0) leaves the dropping state; count 1 is due: it winds down to 0; one
    # draw (0.883 >= 1/256): sent; drop_next = now + interval
    variant = frozenset(["cake_queue_full_on_batch"])
    outs, c = cobalt.replay("fq_cobalt", {"flows": 8}, 6, ops[:8], variant)
    assert outs[7] == _step(sent=2)
    v2 = c.flows[2].aqm
    assert (v2.p_drop, v2.blue_timer, v2.count, v2.drop_next) == (1 / 256, 10 * MS, 0, 110 * MS)
    assert c.rng.draws == 1 and c.hits["leave_dropping"] == 1 and c.hits["decay_step"] == 1


def test_fq_cobalt_tail_drop_hits_arrival_bucket():
    params = {"flows": 4, "overflow": "tail"}
    ops = _ops_enqueue(10 * MS, 1, bucket=0) + _ops_enqueue(10 * MS, 1, bucket=1)
    ops += _ops_enqueue(10 * MS, 1, bucket=3) + [_deq(10 * MS)]
    outs, c = cobalt.replay("fq_cobalt", params, 2, ops)
    assert outs[2] == _step([2]) and outs[3] == _step(sent=0)
    v3 = c.flows[3].aqm
    assert (v3.p_drop, v3.dropping, v3.count, c.flows[3].where) == (1 / 256, True, 1, None)
    assert c.flows[0].aqm.p_drop == 0.0
    replay_check("fq_cobalt", params, 2, ops, outs)
    with pytest.raises(ValueError):
        FqCobalt({"overflow": "tail", "drop_batch": 4}, 10)


def test_cobalt_ce_threshold():
    params = {"flows": 2, "ce_threshold": 0.001, "mode": "drop"}
    ops = _ops_enqueue(0, 4, ecn=("ect0", "not-ect", "ect1", "ce"))
    ops += [_deq(1 * MS), _deq(2 * MS), _deq(2 * MS), _deq(2 * MS)]
    outs, _ = cobalt.replay("fq_cobalt", params, 10, ops)
    assert [o["mark"] for o in outs[4:]] == [None, None, "ce_threshold", "ce_threshold"]
    replay_check("fq_cobalt", params, 10, ops, outs)
    # a CoDel mark is reported as "cobalt"
    ops = _ops_enqueue(0, 3, ecn="ect0") + [_deq(6 * MS), _deq(105_999_999)]
    outs, c = cobalt.replay("cobalt", {"ce_threshold": 0.001}, 10, ops)
    assert [o["mark"] for o in outs[3:]] == ["ce_threshold", "cobalt"]
    assert c.hits["ce_threshold_after_cobalt"] == 1
    replay_check("cobalt", {"ce_threshold": 0.001}, 10, ops, outs)


def test_cobalt_parameters_and_spec_toml():
    c = Cobalt({}, 10)
    assert (c.n_flows, c.overflow, c.mark_mode, c.target, c.interval) == (
        1,
        "tail",
        True,
        5 * MS,
        100 * MS,
    )
    assert (c.p_inc, c.p_dec, c.blue_threshold, c.ce_threshold) == (
        1 / 256,
        1 / 4096,
        400 * MS,
        None,
    )
    f = FqCobalt({}, 10)
    assert (f.n_flows, f.quantum, f.overflow, f.drop_batch, f.mark_mode) == (
        1024,
        1514,
        "fattest",
        64,
        True,
    )
    for bad in ({"flows": 2}, {"overflow": "tail"}, {"mode": "x"}, {"interval": 5.0}):
        with pytest.raises(ValueError):
            Cobalt(bad, 10)
    text = cobalt.spec_toml("cobalt", {"target": 0.001, "blue_threshold": 0.02, "mode": "drop"})
    assert text == (
        'kind = "cobalt"\ntarget = "1000000 ns"\nblue_threshold = "20000000 ns"\nmode = "drop"\n'
    )
    assert cobalt.params_from_toml(_tomllib().loads(text)) == {
        "target": 0.001,
        "blue_threshold": 0.02,
        "mode": "drop",
    }


# ---------------------------------------------------------------------------
# replay: the oracle against itself (open loop, through the TOML spec) and
# against satqm's queue disciplines
# ---------------------------------------------------------------------------


def _tomllib():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    return tomllib


def _replay_fn():
    try:
        import satqm._core as core
    except ImportError as e:  # the package is not built
        pytest.skip(f"satqm._core not importable: {e}")
    if not hasattr(core, "qdisc_replay"):
        pytest.skip("satqm._core.qdisc_replay is not implemented yet")
    return core.qdisc_replay


def satqm_steps(kind: str, params: dict, limit: int, ops: list) -> list[dict]:
    got = _replay_fn()(spec_of(kind, params), limit, ops)
    return [
        {
            "dropped": [int(x) for x in s["dropped"]],
            "sent": None if s["sent"] is None else int(s["sent"]),
            "mark": s["mark"],
        }
        for s in got
    ]


def compare(name: str, ops: list, want: list, have: list) -> None:
    """Fail at the first operation whose output differs, with some context."""
    assert len(have) == len(ops), f"{len(have)} outputs for {len(ops)} operations"
    for idx, (op, w, h) in enumerate(zip(ops, want, have)):
        if h != w:
            lo = max(0, idx - 4)
            ctx = "\n".join(f"  [{j}] {ops[j]} -> oracle {want[j]}" for j in range(lo, idx))
            pytest.fail(
                f"{name} output differs at op {idx}: {op}\n"
                f"  oracle:    {w}\n  simulator: {h}\n"
                f"preceding operations:\n{ctx}"
            )


def replay_check(kind, params, limit, ops, outs) -> None:
    """A hand-built case through satqm (skipped when it cannot run)."""
    try:
        have = satqm_steps(kind, params, limit, ops)
    except pytest.skip.Exception:
        return
    compare(kind, ops, outs, have)


@pytest.mark.parametrize("i,seed", CASES[::3], ids=IDS[::3])
def test_open_loop_replay_of_oracle_reproduces_trace(i, seed):
    sc = SCENARIOS[i]
    tr = trace(i, seed)
    table = _tomllib().loads(spec_of(sc.kind, tr.params))
    mod = fq_pie if sc.kind == "fq_pie" else cobalt
    outs, _ = replay_oracle(sc.kind, mod.params_from_toml(table), tr.limit_packets, tr.ops)
    compare(sc.name, tr.ops, tr.outputs, outs)
    j = next(k for k, o in enumerate(outs) if o.get("sent") is not None)
    outs[j] = {**outs[j], "sent": outs[j]["sent"] + 1}
    with pytest.raises(pytest.fail.Exception, match="differs at op"):
        compare(sc.name, tr.ops, tr.outputs, outs)


#: variants no trace tells apart (checked by hand instead)
TRACE_BLIND = {"linux_isqrt_table": "test_cobalt_isqrt_table_variant_by_hand"}
VARIANT_CASES = [("fq_pie", v) for v in sorted(fq_pie.VARIANTS)] + [
    ("cobalt", v) for v in sorted(cobalt.VARIANTS) if v not in TRACE_BLIND
]


@pytest.mark.parametrize("family,variant", VARIANT_CASES, ids=[v for _, v in VARIANT_CASES])
def test_traces_tell_documented_variants_apart(family, variant):
    """Each documented reading of another source changes the outputs of at
    least one trace: the replay comparison would notice an implementation
    that followed it."""
    for i, s in PIE_CASES if family == "fq_pie" else COBALT_CASES:
        sc = SCENARIOS[i]
        tr = trace(i, s)
        outs, _ = replay_oracle(sc.kind, tr.params, tr.limit_packets, tr.ops, frozenset([variant]))
        if outs != tr.outputs:
            return
    pytest.fail(f"no trace tells {variant!r} apart")


REPLAY_PARAMS = [pytest.param(i, s, id=case_id) for (i, s), case_id in zip(CASES, IDS)]


@pytest.mark.parametrize("i,seed", REPLAY_PARAMS)
def test_replay_matches_oracle(i, seed):
    sc = SCENARIOS[i]
    tr = trace(i, seed)
    compare(sc.name, tr.ops, tr.outputs, satqm_steps(sc.kind, tr.params, tr.limit_packets, tr.ops))


def _pie_congestion_ops(updates: int, arrivals: int, ecn: str) -> list[dict]:
    """One bucket: 30 packets at 0, one leaves at 300 ms (sojourn 300 ms),
    ``updates`` updates, then ``arrivals`` arrivals. p after the updates
    (qdelay 300 ms > 250 ms each time): 0.02020050 (1/2048 scaling + 2 %),
    0.05801300, 0.09582550 (1/2 scaling + 2 %), 0.13363800, then + 0.04 per
    update (the 2 % cap and the 2 % of the 250 ms rule)."""
    ops = _ops_enqueue(0, 30, ecn=ecn) + [_deq(300 * MS)]
    ops += [{"op": "update", "t": 300 * MS} for _ in range(updates)]
    return ops + _ops_enqueue(300 * MS, arrivals, ecn=ecn)


def _uniforms(n: int) -> list[float]:
    g = SplitMix64(0)
    return [g.uniform() for _ in range(n)]


def test_fq_pie_burst_allowance_runs_out_after_max_burst():
    """max_burst / t_update = 10 updates exhaust the allowance (RFC 8033's
    max(0, burst - t_update), Linux's integer ticks): the arrivals after the
    tenth update meet the random test (p = 0.373638 > 0.1: drops)."""
    ops = _pie_congestion_ops(10, 10, "not-ect")
    outs, q = fq_pie.replay({"flows": 1}, 1000, ops)
    pie = q.flows[0].aqm
    assert pie.burst_allowance == 0 and pie.prob == pytest.approx(0.373638, abs=1e-6)
    u = _uniforms(40)  # the arrivals 0..29 drew u[0..29]
    want = [30 + k for k in range(10) if u[30 + k] < pie.prob]
    assert want == [31, 32, 33, 36, 37, 39]
    assert [d for o in outs[-10:] for d in o["dropped"]] == want
    # after the ninth update the allowance (15 ms) still passes everything
    outs, _ = fq_pie.replay({"flows": 1}, 1000, _pie_congestion_ops(9, 10, "not-ect"))
    assert all(o["dropped"] == [] for o in outs)
    # one update later, more drops
    ops = _pie_congestion_ops(11, 10, "not-ect")
    outs, q = fq_pie.replay({"flows": 1}, 1000, ops)
    assert [d for o in outs[-10:] for d in o["dropped"]] == [31, 32, 33, 35, 36, 37, 39]
    replay_check("fq_pie", {"flows": 1}, 1000, ops, outs)


def test_replay_burst_allowance_runs_out_after_max_burst():
    ops = _pie_congestion_ops(10, 10, "not-ect")
    outs, _ = fq_pie.replay({"flows": 1}, 1000, ops)
    compare("fq_pie", ops, outs, satqm_steps("fq_pie", {"flows": 1}, 1000, ops))


def test_single_queue_pie_burst_allowance_runs_out_after_max_burst():
    try:
        from satqm._core import aqm_replay
    except ImportError as e:  # pragma: no cover
        pytest.skip(f"satqm._core.aqm_replay not importable: {e}")
    from oracles import make

    def view(t):
        return {"t": t, "q_packets": 29, "q_bytes": 43_500, "idle_since": None, "departed_bytes": 0}

    events = [{"ev": "departure", **view(300 * MS), "size": 1500, "sojourn": 300 * MS}]
    events += [{"ev": "timer", **view(300 * MS + k)} for k in range(10)]
    events += [{"ev": "arrival", **view(310 * MS), "size": 1500, "u": 0.0}]
    p = make("pie", {}, 10_000_000, 10**6)
    p.on_departure(events[0])
    for e in events[1:-1]:
        p.on_timer(e)
    assert p.on_arrival(events[-1]) == "drop:early"  # u = 0 < p = 0.374
    got = aqm_replay('kind = "pie"\n', events, 10_000_000, 10**6)
    assert list(got["verdict"])[-1] == "drop:early"


def test_fq_pie_mark_at_enqueue_by_hand():
    """Mode "mark" with mark_ecn_threshold 1: after 12 updates p = 0.453638
    and every arrival with u < p is CE-marked at its enqueue, label "pie"."""
    params = {"flows": 1, "mode": "mark", "mark_ecn_threshold": 1.0}
    ops = _pie_congestion_ops(12, 20, "ect0")
    outs, q = fq_pie.replay(params, 1000, ops)
    assert q.flows[0].aqm.prob == pytest.approx(0.453638, abs=1e-6)
    u = _uniforms(50)
    marked = [30 + k for k, o in enumerate(outs[-20:]) if o["mark"] == "pie"]
    assert marked == [30 + k for k in range(20) if u[30 + k] < 0.453638]
    assert marked == [31, 32, 33, 35, 36, 37, 38, 39, 41, 42, 43, 46, 47, 49]
    assert all(o["dropped"] == [] for o in outs)


def test_replay_reports_pie_mark_at_enqueue():
    params = {"flows": 1, "mode": "mark", "mark_ecn_threshold": 1.0}
    ops = _pie_congestion_ops(12, 20, "ect0")
    outs, _ = fq_pie.replay(params, 1000, ops)
    compare("fq_pie", ops, outs, satqm_steps("fq_pie", params, 1000, ops))
