"""FQ-CoDel: an independent Python reference (tests/oracles/fq_codel.py, from
RFC 8290, RFC 8289 and Linux's sch_fq_codel.c / codel_impl.h) checked on its
own (hand-computed cases, branch coverage of closed-loop traces, trace
invariants), then used to check satqm's queue discipline through
``satqm._core.qdisc_replay`` operation by operation.

The traces are also checked to tell apart the documented places where RFC
8290 / RFC 8289 and Linux differ (``oracles.fq_codel.VARIANTS``): an
implementation that followed the other reading fails the replay.

The replay test skips until ``satqm._core.qdisc_replay`` exists.
"""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from oracles import to_ns  # noqa: E402
from oracles.fq_codel import (  # noqa: E402
    BRANCHES,
    VARIANTS,
    FqCoDel,
    params_from_toml,
    replay,
    round_half_away,
    spec_toml,
)
from oracles.fq_codel_traces import Source, Trace, check_trace, generate  # noqa: E402

MS = 1_000_000
US = 1_000

# ---------------------------------------------------------------------------
# scenarios: short target / interval so that CoDel's states all occur
# ---------------------------------------------------------------------------

SHORT = {"target": 0.001, "interval": 0.010}
MIX = (64, 576, 1500)
ECN_MIX = ("not-ect", "ect0", "ect1", "ce")


@dataclass(frozen=True)
class Scenario:
    name: str
    params: dict
    limit_packets: int
    rate_bps: int
    sources: tuple
    duration: float


def _aimd(bucket, rate, t0, t1, **kw):
    return Source("aimd", bucket, rate, t0, t1, **kw)


SCENARIOS = [
    # eight buckets: two responsive flows (one pair colliding in bucket 1), an
    # unresponsive overload, on/off bursts and a sparse flow; ECN mark mode
    Scenario(
        "mix8-mark",
        {"flows": 8, "drop_batch": 8, **SHORT},
        40,
        10_000_000,
        (
            _aimd(0, 3e6, 0.0, 3.0, ecn="ect0"),
            _aimd(1, 2e6, 0.1, 3.0, ecn=("ect0", "not-ect"), sizes=(576, 1500)),
            _aimd(1, 1e6, 0.3, 3.0, ecn="not-ect", sizes=1500),
            Source("cbr", 2, 6e6, 0.5, 2.0, sizes=1500, ecn="not-ect"),
            Source("onoff", 3, 8e6, 0.0, 3.0, sizes=MIX, ecn=ECN_MIX, on=0.05, off=0.12),
            Source("cbr", 5, 2e5, 0.0, 3.0, sizes=64, ecn="ect1"),
        ),
        3.0,
    ),
    # 1024 buckets, drop mode, scattered bucket indices, fat unresponsive flows
    Scenario(
        "drop-1024",
        {"mode": "drop", "drop_batch": 64, **SHORT},
        30,
        10_000_000,
        (
            Source("cbr", 1023, 7e6, 0.0, 2.5, sizes=1500, ecn="ect0"),
            Source("poisson", 17, 5e6, 0.2, 2.5, sizes=MIX, ecn="not-ect"),
            _aimd(500, 2e6, 0.0, 2.5, sizes=(576, 1500)),
            Source("burst", 3, 0.0, 1.0, 2.5, sizes=1500, n=60, gap=1e-5),
            Source("burst", 3, 0.0, 2.0, 2.5, sizes=64, n=40, gap=0.0),
        ),
        2.5,
    ),
    # ce_threshold on every ECN-capable codepoint, CoDel marking too
    Scenario(
        "ce-threshold",
        {"flows": 8, "ce_threshold": 0.0005, "quantum": 600, **SHORT},
        60,
        10_000_000,
        (
            _aimd(0, 4e6, 0.0, 2.5, ecn=ECN_MIX, sizes=MIX),
            _aimd(4, 4e6, 0.0, 2.5, ecn=("ect1", "ect0"), sizes=1500),
            Source("onoff", 6, 9e6, 0.0, 2.5, sizes=MIX, ecn=ECN_MIX, on=0.03, off=0.05),
        ),
        2.5,
    ),
    # the L4S selector: ce_threshold for ECT(1) only
    Scenario(
        "ce-ect1",
        {"flows": 8, "ce_threshold": 0.0005, "ce_threshold_ect1": True, **SHORT},
        60,
        10_000_000,
        (
            _aimd(2, 5e6, 0.0, 2.0, ecn="ect1", sizes=1500),
            _aimd(3, 4e6, 0.0, 2.0, ecn=ECN_MIX, sizes=MIX),
            Source("poisson", 7, 4e6, 0.0, 2.0, sizes=MIX, ecn=ECN_MIX),
        ),
        2.0,
    ),
    # a tiny limit over many sparse buckets: batches that empty a bucket, ties
    Scenario(
        "tiny-limit",
        {"flows": 8, "drop_batch": 2, **SHORT},
        3,
        2_000_000,
        tuple(
            Source("poisson", b, 0.5e6, 0.0, 2.0, sizes=(64, 1500) if b % 2 else 576, ecn=ECN_MIX)
            for b in range(8)
        ),
        2.0,
    ),
    # a slow link (one MTU takes 12 ms > target): CoDel's byte check; a small
    # quantum: many deficit refills
    Scenario(
        "slow-link",
        {"flows": 8, "quantum": 300, "mtu": 1500, **SHORT},
        25,
        1_000_000,
        (
            Source("poisson", 0, 0.6e6, 0.0, 4.0, sizes=MIX, ecn="ect0"),
            Source("onoff", 1, 1.5e6, 0.0, 4.0, sizes=1500, ecn="not-ect", on=0.3, off=0.4),
            Source("cbr", 2, 0.1e6, 0.0, 4.0, sizes=64, ecn="not-ect"),
        ),
        4.0,
    ),
    # 1500-byte packets at 12 Mbit/s: dequeues on an exact 1 ms grid while
    # busy, so now == first_above and now == drop_next occur (boundaries)
    Scenario(
        "ms-grid",
        {"flows": 4, "mode": "drop", **SHORT},
        100,
        12_000_000,
        (
            Source("cbr", 0, 8e6, 0.0, 2.0, sizes=1500),
            Source("cbr", 1, 7e6, 0.3, 2.0, sizes=1500, ecn="ect0"),
            Source("onoff", 2, 6e6, 0.0, 2.0, sizes=1500, on=0.1, off=0.2),
        ),
        2.0,
    ),
    # repeated overload episodes of one bucket: re-entry with count re-use
    # (gaps < 16 intervals) and fresh entries (longer gaps); drop mode
    Scenario(
        "reentry-drop",
        {"flows": 1024, "mode": "drop", "target": 0.002, "interval": 0.020},
        200,
        5_000_000,
        (
            Source("onoff", 42, 7e6, 0.0, 2.0, sizes=1500, on=0.25, off=0.08),
            Source("onoff", 42, 7e6, 2.0, 5.0, sizes=1500, on=0.25, off=0.6),
            Source("cbr", 900, 1e6, 0.0, 5.0, sizes=576),
        ),
        5.0,
    ),
]

SEEDS = (1, 2)


@cache
def trace(i: int, seed: int) -> Trace:
    sc = SCENARIOS[i]
    return generate(sc.params, sc.limit_packets, sc.rate_bps, sc.sources, sc.duration, seed)


CASES = [(i, s) for i in range(len(SCENARIOS)) for s in SEEDS]
IDS = [f"{SCENARIOS[i].name}-{s}" for i, s in CASES]


# ---------------------------------------------------------------------------
# the traces themselves
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("i,seed", CASES, ids=IDS)
def test_trace_is_consistent(i, seed):
    tr = trace(i, seed)
    assert len(tr.ops) > 500
    check_trace(tr)


def test_generation_is_deterministic():
    sc = SCENARIOS[0]
    again = generate(sc.params, sc.limit_packets, sc.rate_bps, sc.sources, 1.0, SEEDS[0])
    first = trace(0, SEEDS[0])
    n = len(again.ops)
    assert first.ops[:n] == again.ops and first.outputs[:n] == again.outputs
    other = generate(sc.params, sc.limit_packets, sc.rate_bps, sc.sources, 1.0, 99)
    assert other.ops != again.ops


def test_traces_cover_every_branch():
    hits: dict[str, int] = dict.fromkeys(BRANCHES, 0)
    for i, s in CASES:
        for k, v in trace(i, s).hits.items():
            assert k in hits, f"branch {k!r} is not listed in BRANCHES"
            hits[k] += v
    missing = [k for k, v in hits.items() if v == 0]
    assert not missing, f"branches never reached: {missing}"


def test_traces_signal_every_way():
    """Drop batches, CoDel drops, both marks and idle periods all occur."""
    total: Counter = Counter()
    for i, s in CASES:
        total += trace(i, s).stats
    for key in ("batch_drops", "codel_drops", "mark_codel", "mark_ce_threshold", "idle"):
        assert total[key] > 0, (key, total)


# ---------------------------------------------------------------------------
# hand-computed cases of the oracle
# ---------------------------------------------------------------------------


def enq(q, t, bucket, size=1500, ecn="not-ect"):
    return q.enqueue(t, bucket, size, ecn)["dropped"]


def sent(q, t):
    return q.dequeue(t)["sent"]


def test_round_half_away():
    assert [round_half_away(x) for x in (0.5, 1.5, 2.4999, -0.5, -1.5, 7.0)] == [1, 2, 2, -1, -2, 7]
    assert round_half_away(0.49999999999999994) == 0


def test_drr_alternates_buckets_with_quantum():
    # quantum 1514, 1500-byte packets: a new bucket starts with a deficit of
    # 1514, so it sends two packets (1514 - 1500 = 14 > 0 after the first);
    # then it gets 1514 per round and the buckets alternate
    q = FqCoDel({"flows": 8}, 1000)
    for _ in range(5):
        enq(q, 0, 1)  # ids 0..4
    for _ in range(5):
        enq(q, 0, 2)  # ids 5..9
    ids = [sent(q, 0) for _ in range(10)]
    assert ids == [0, 1, 5, 6, 2, 7, 3, 8, 4, 9]
    assert sent(q, 0) is None and q.hits["deq_idle"] == 1
    # bucket 1 got 5 quanta (the first and 4 refills, the last one on the
    # visit that found it empty) and sent 5 packets
    assert q.flows[1].deficit == 5 * 1514 - 5 * 1500 and q.flows[1].where is None
    # quantum 1500: one packet per bucket per round from the start
    q = FqCoDel({"flows": 8, "quantum": 1500}, 1000)
    for b in (1, 1, 1, 2, 2, 2):
        enq(q, 0, b)
    assert [sent(q, 0) for _ in range(6)] == [0, 3, 1, 4, 2, 5]
    assert q.hits["deficit_refill"] >= 4


def test_drr_quantum_allows_two_small_packets():
    # quantum 1514: bucket 0 (576-byte packets) sends while its deficit is
    # > 0: 1514 -> 938 -> 362 -> -214 (3 packets), then gets 1300;
    # bucket 1 (1500 bytes): 1514 -> 14 -> -1486 (2 packets), then gets 28
    q = FqCoDel({"flows": 4}, 1000)
    for _ in range(6):
        enq(q, 0, 0, size=576)  # ids 0..5
    for _ in range(3):
        enq(q, 0, 1, size=1500)  # ids 6..8
    ids = [sent(q, 0) for _ in range(9)]
    assert ids == [0, 1, 2, 6, 7, 3, 4, 5, 8]


def test_new_flow_served_before_old_flows():
    q = FqCoDel({"flows": 8}, 1000)
    for _ in range(4):
        enq(q, 0, 0)
    assert sent(q, 0) == 0  # bucket 0 from new_flows, deficit 1514 - 1500 = 14
    assert sent(q, 0) == 1  # still in new_flows with deficit 14 > 0
    assert sent(q, 0) == 2  # deficit <= 0: refill, to old_flows, served from there
    assert q.hits["serve_new"] == 2 and q.hits["serve_old"] == 1
    enq(q, 1, 5, size=64)  # a new bucket: served before bucket 0's backlog
    assert sent(q, 1) == 4
    assert sent(q, 1) == 3
    # bucket 5, found empty in new_flows with old_flows non-empty, went to old
    assert q.hits["empty_new_to_old"] == 1
    assert list(q.old_flows) == [0] and q.flows[5].where is None
    assert q.hits["empty_old_removed"] == 1


def test_empty_new_bucket_leaves_when_old_list_is_empty():
    q = FqCoDel({"flows": 8}, 1000)
    enq(q, 0, 3)
    assert sent(q, 0) == 0
    assert sent(q, 0) is None
    assert q.hits["empty_new_removed"] == 1 and q.flows[3].where is None
    enq(q, 10, 3)
    assert q.hits["enq_new_flow"] == 2 and q.flows[3].deficit == 1514


def test_drop_batch_drops_from_fattest_head():
    q = FqCoDel({"flows": 8}, 6)
    enq(q, 0, 2, size=1500)  # id 0
    enq(q, 0, 2, size=1500)  # id 1
    enq(q, 0, 2, size=1500)  # id 2
    enq(q, 0, 2, size=1500)  # id 3
    enq(q, 0, 5, size=1500)  # id 4
    enq(q, 0, 5, size=1500)  # id 5
    # 7 > 6 packets: bucket 2 (6000 bytes) is the fattest, threshold 3000:
    # its two head packets go (3000 >= 3000)
    assert enq(q, 0, 5, size=64) == [0, 1]
    assert q.backlog_of(2) == 3000 and q.packets == 5
    assert q.hits["batch_other_bucket"] == 1 and q.hits["batch_stop_threshold"] == 1
    # the arriving packet's own bucket when it is the fattest: 64-byte head goes
    # first, then until half of 3064 + 1500 = 4564 (2282) is reached
    enq(q, 0, 5, size=1500)  # id 7; bucket 5: 1500+1500+64+1500 = 4564
    # id 8: 7 > 6 packets, bucket 5 (6064) the fattest, threshold 3032:
    # 1500, 3000 < 3032, then the 64-byte id 6 (3064)
    assert enq(q, 0, 5, size=1500) == [4, 5, 6]
    assert q.hits["batch_own_bucket"] == 1


def test_drop_batch_count_limit_and_ties():
    q = FqCoDel({"flows": 4, "drop_batch": 2}, 4)
    for b in (3, 1, 3, 1):
        enq(q, 0, b, size=64)
    # a tie between buckets 1 and 3 (128 bytes each) and 0 (now 64)...
    # ... the lowest index among the largest wins: bucket 1; threshold 64:
    # one packet (64 >= 64)
    assert enq(q, 0, 0, size=64) == [1]
    assert q.hits["batch_tie_lowest"] == 1
    q2 = FqCoDel({"flows": 4, "drop_batch": 2}, 3)
    for _ in range(3):
        enq(q2, 0, 0, size=64)
    enq(q2, 0, 0, size=1500)  # 192 + 1500: threshold 846, but only 2 may go
    assert q2.hits["batch_stop_count"] == 1 and q2.packets == 2
    assert q2.flows[0].where == "new"


def test_codel_enters_after_interval_and_control_law():
    """One bucket, one packet dequeued per ms with sojourn 20 ms (target 5 ms,
    interval 100 ms): first_above is set at the first dequeue, the first drop
    comes 100 ms later, the next interval/sqrt(2) = 70.710678 ms later (rounded
    to the ns), then interval/sqrt(3) after that."""
    q = FqCoDel({"flows": 1, "mode": "drop"}, 10**6)
    t0 = 1000 * MS
    # 20 packets 1 ms apart wait; then every ms one dequeue and one enqueue:
    # the packet dequeued at t0 + j ms has waited 20 ms (less after drops)
    for k in range(20):
        enq(q, t0 - 20 * MS + k * MS, 0)
    drops: list[tuple[int, int]] = []
    for j in range(400):
        t = t0 + j * MS
        out = q.dequeue(t)
        drops += [(t, pid) for pid in out["dropped"]]
        enq(q, t, 0)
    times = [d[0] - t0 for d in drops]
    assert times[0] == 100 * MS
    # drop_next after the entry: t_e + round(100 ms / sqrt(1)) = t_e + 100 ms;
    # the first drop in the dropping state comes at the first dequeue at or
    # after it, count 2, then drop_next += round(1e8 / sqrt(2)) = 70710678 ns
    assert times[1] == 200 * MS
    nxt = 200 * MS + round_half_away(1e8 / math.sqrt(2))
    assert nxt == 200 * MS + 70_710_678
    assert times[2] == math.ceil(nxt / MS) * MS  # the dequeue grid is 1 ms
    nxt += round_half_away(1e8 / math.sqrt(3))
    assert times[3] == math.ceil(nxt / MS) * MS
    assert times[:4] == [100 * MS, 200 * MS, 271 * MS, 329 * MS]
    assert q.hits["enter_drop"] == 1 and q.hits["enter_count1"] == 1
    assert q.hits["loop_reschedule"] >= 2
    # the packet after the entering drop is sent (not checked against drop_next)
    assert q.flows[0].count == len(drops)


def test_codel_first_above_boundary_is_inclusive():
    """RFC 8289: ok_to_drop when now >= first_above_time."""
    q = FqCoDel({"flows": 1, "mode": "drop", "target": 0.005, "interval": 0.1}, 100)
    for _ in range(5):
        enq(q, 0, 0)
    assert q.dequeue(10 * MS) == {"dropped": [], "sent": 0, "mark": None}
    assert q.flows[0].first_above == 110 * MS
    assert q.dequeue(110 * MS - 1)["dropped"] == []
    out = q.dequeue(110 * MS)
    assert out["dropped"] == [2] and out["sent"] == 3  # 3 is sent unchecked
    assert q.flows[0].dropping and q.flows[0].drop_next == 210 * MS


def test_codel_marks_instead_of_dropping_in_mark_mode():
    q = FqCoDel({"flows": 1, "target": 0.005, "interval": 0.1}, 100)
    for ecn in ("ect0", "ect0", "not-ect", "ect1", "ce", "ect0", "ect0", "ect0"):
        enq(q, 0, 0, ecn=ecn)
    q.dequeue(10 * MS)  # id 0, first_above = 110 ms
    assert q.dequeue(110 * MS) == {"dropped": [], "sent": 1, "mark": "codel"}
    assert q.flows[0].count == 1 and q.flows[0].drop_next == 210 * MS
    assert q.dequeue(150 * MS) == {"dropped": [], "sent": 2, "mark": None}  # waiting
    # at drop_next: not-ECT would be dropped, but it is gone; ECT(1) marked,
    # count 2, drop_next += 100 ms / sqrt(2)
    assert q.dequeue(210 * MS) == {"dropped": [], "sent": 3, "mark": "codel"}
    assert q.flows[0].drop_next == 210 * MS + 70_710_678
    # far past drop_next: CE (ECN-capable) is marked, which ends the loop
    assert q.dequeue(400 * MS) == {"dropped": [], "sent": 4, "mark": "codel"}
    assert q.flows[0].count == 3
    assert q.flows[0].drop_next == 210 * MS + 70_710_678 + 57_735_027


def test_codel_drop_loop_drops_not_ect_then_marks():
    q = FqCoDel({"flows": 1, "target": 0.005, "interval": 0.1}, 100)
    for ecn in ("ect0", "ect0", "not-ect", "not-ect", "ect0", "ect0", "ect0"):
        enq(q, 0, 0, ecn=ecn)
    q.dequeue(10 * MS)
    q.dequeue(110 * MS)  # enter with a mark on id 1
    # far past drop_next: id 2 dropped (count 2), next ok, drop_next moves by
    # 70.7 ms, still <= now: id 3 dropped (count 3), then id 4 marked (count 4)
    out = q.dequeue(500 * MS)
    assert out == {"dropped": [2, 3], "sent": 4, "mark": "codel"}
    assert q.flows[0].count == 4
    assert q.hits["drop_not_ect_in_mark_mode"] == 2 and q.hits["loop_drop_again"] == 1


def test_codel_byte_check_uses_whole_qdisc_backlog():
    q = FqCoDel({"flows": 4, "mode": "drop", "target": 0.005, "interval": 0.1}, 100)
    enq(q, 0, 0)
    enq(q, 0, 0)
    # bucket 0's head waited 50 ms but only 1500 bytes remain: below mtu
    assert q.dequeue(50 * MS)["sent"] == 0 and q.hits["below_mtu"] == 1
    q2 = FqCoDel({"flows": 4, "mode": "drop", "target": 0.005, "interval": 0.1}, 100)
    enq(q2, 0, 0)
    enq(q2, 0, 0)
    enq(q2, 0, 1, size=64)  # another bucket's byte counts in the backlog
    assert q2.dequeue(50 * MS)["sent"] == 0
    assert q2.hits["first_above_set"] == 1 and q2.hits["below_mtu"] == 0


def test_codel_reentry_reuses_count():
    q = FqCoDel({"flows": 1, "mode": "drop", "target": 0.005, "interval": 0.1}, 10**6)
    f = q.flows[0]
    f.count, f.lastcount, f.drop_next = 10, 3, 1000 * MS  # a past dropping episode
    for _ in range(4):
        enq(q, 1000 * MS, 0)
    q.dequeue(1100 * MS)  # first_above = 1200 ms
    out = q.dequeue(1200 * MS)  # ok: enter; delta 7 > 1 and 200 ms < 1.6 s
    assert out["dropped"] == [1] and f.count == 7 and f.lastcount == 7
    assert f.drop_next == 1200 * MS + round_half_away(1e8 / math.sqrt(7))
    assert q.hits["enter_reuse"] == 1


def test_ce_threshold_rules():
    p = {"flows": 2, "mode": "drop", "ce_threshold": 0.001}
    q = FqCoDel(p, 100)
    for ecn in ("ect0", "not-ect", "ect1", "ce"):
        enq(q, 0, 0, ecn=ecn)
    assert q.dequeue(1 * MS) == {"dropped": [], "sent": 0, "mark": None}  # not > 1 ms
    assert q.dequeue(1 * MS + 1)["mark"] is None  # not ECN-capable
    assert q.dequeue(2 * MS)["mark"] == "ce_threshold"  # ECT(1)
    assert q.dequeue(2 * MS)["mark"] == "ce_threshold"  # CE
    q = FqCoDel({**p, "ce_threshold_ect1": True}, 100)
    for ecn in ("ect0", "ect1"):
        enq(q, 0, 0, ecn=ecn)
    assert q.dequeue(2 * MS)["mark"] is None
    assert q.dequeue(2 * MS)["mark"] == "ce_threshold"


def test_ce_threshold_and_codel_mark_reports_codel():
    q = FqCoDel({"flows": 1, "ce_threshold": 0.001, "target": 0.005, "interval": 0.1}, 100)
    for _ in range(4):
        enq(q, 0, 0, ecn="ect1")
    assert q.dequeue(10 * MS)["mark"] == "ce_threshold"
    assert q.dequeue(110 * MS)["mark"] == "codel"
    assert q.hits["ce_threshold_after_codel"] == 1


def test_parameters_and_spec_toml():
    with pytest.raises(ValueError):
        FqCoDel({"bogus": 1}, 10)
    with pytest.raises(ValueError):
        FqCoDel({"mode": "maybe"}, 10)
    q = FqCoDel({}, 10)
    assert (q.n_flows, q.quantum, q.target, q.interval, q.mtu, q.drop_batch) == (
        1024,
        1514,
        5 * MS,
        100 * MS,
        1500,
        64,
    )
    assert q.mark_mode and q.ce_threshold is None and not q.ce_ect1
    text = spec_toml(
        {
            "flows": 8,
            "target": 0.001,
            "ce_threshold": 0.0005,
            "ce_threshold_ect1": True,
            "mode": "drop",
        }
    )
    assert text == (
        'kind = "fq_codel"\nflows = 8\ntarget = "1000000 ns"\n'
        'ce_threshold = "500000 ns"\nce_threshold_ect1 = true\nmode = "drop"\n'
    )
    assert "ce_threshold" not in spec_toml({"ce_threshold": None})
    assert to_ns(0.0005) == 500 * US


# ---------------------------------------------------------------------------
# replay: the oracle against itself (open loop, through the TOML spec) and
# against satqm's queue discipline
# ---------------------------------------------------------------------------


def _tomllib():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    return tomllib


def _normalise(out: dict, op: dict) -> dict:
    if op["op"] == "enqueue":
        return {"dropped": [int(x) for x in out["dropped"]]}
    s = out["sent"]
    return {
        "dropped": [int(x) for x in out["dropped"]],
        "sent": None if s is None else int(s),
        "mark": out["mark"],
    }


def compare(tr: Trace, got: list) -> None:
    """Fail at the first operation whose output differs, with some context."""
    got = list(got)
    assert len(got) == len(tr.ops), f"{len(got)} outputs for {len(tr.ops)} operations"
    for idx, (op, want, have) in enumerate(zip(tr.ops, tr.outputs, got)):
        have_n = _normalise(have, op)
        if have_n != want:
            lo = max(0, idx - 4)
            ctx = "\n".join(
                f"  [{j}] {tr.ops[j]} -> oracle {tr.outputs[j]}" for j in range(lo, idx)
            )
            pytest.fail(
                f"fq_codel output differs at op {idx}: {op}\n"
                f"  oracle:    {want}\n  simulator: {have_n}\n"
                f"preceding operations:\n{ctx}"
            )


@pytest.mark.parametrize("i,seed", CASES[::2], ids=IDS[::2])
def test_open_loop_replay_of_oracle_reproduces_trace(i, seed):
    tr = trace(i, seed)
    params = params_from_toml(_tomllib().loads(spec_toml(tr.params)))
    outs, _ = replay(params, tr.limit_packets, tr.ops)
    compare(tr, outs)
    # and the comparison does catch a difference
    j = next(k for k, o in enumerate(outs) if o.get("sent") is not None)
    outs[j] = {**outs[j], "sent": outs[j]["sent"] + 1}
    with pytest.raises(pytest.fail.Exception, match="differs at op"):
        compare(tr, outs)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_traces_tell_documented_variants_apart(variant):
    """Each documented departure (RFC 8290 vs Linux, RFC 8289 vs codel_impl.h)
    changes the outputs of at least one trace: the replay comparison would
    notice an implementation that followed it."""
    for i, s in CASES:
        tr = trace(i, s)
        outs, _ = replay(tr.params, tr.limit_packets, tr.ops, frozenset([variant]))
        if outs != tr.outputs:
            return
    pytest.fail(f"no trace tells {variant!r} ({VARIANTS[variant]}) apart")


def _replay_fn():
    try:
        import satqm._core as core
    except ImportError as e:  # the package is not built
        pytest.skip(f"satqm._core not importable: {e}")
    if not hasattr(core, "qdisc_replay"):
        pytest.skip("satqm._core.qdisc_replay is not implemented yet")
    return core.qdisc_replay


@pytest.mark.parametrize("i,seed", CASES, ids=IDS)
def test_replay_matches_oracle(i, seed):
    qdisc_replay = _replay_fn()
    tr = trace(i, seed)
    got = qdisc_replay(spec_toml(tr.params), tr.limit_packets, tr.ops)
    compare(tr, got)
