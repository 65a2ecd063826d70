"""DualPI2 (RFC 9332): an independent Python reference
(tests/oracles/dualpi2.py, whose docstring is the specification) checked on
its own (hand-computed cases, branch coverage of closed-loop traces, trace
invariants), then used to check satqm's queue discipline through
``satqm._core.qdisc_replay`` operation by operation.

The replay comparison skips while the core has no ``dualpi2`` kind.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from oracles import qdisc_spec_toml  # noqa: E402
from oracles.dualpi2 import (  # noqa: E402
    BRANCHES,
    ONE,
    PI2,
    RARE_BRANCHES,
    VARIANTS,
    DualPI2,
    params_from_toml,
    replay,
    spec_toml,
)
from oracles.dualpi2_traces import Source, Trace, check_trace, generate  # noqa: E402


def pi2_spec_toml(params: dict) -> str:
    return qdisc_spec_toml(PI2, params)


MS = 1_000_000
US = 1_000


def enq(t, ecn="not-ect", size=1500):
    return {"op": "enqueue", "t": t, "bucket": 0, "size": size, "ecn": ecn}


def deq(t):
    return {"op": "dequeue", "t": t}


def upd(t):
    return {"op": "update", "t": t}


# ---------------------------------------------------------------------------
# parameters
# ---------------------------------------------------------------------------


def test_rfc_defaults_and_fixed_point_gains():
    q = DualPI2({}, 100)
    # RFC 9332 A.1: Tupdate = min(15 ms, 100 ms / 3) = 15 ms,
    # alpha = 0.1 * 0.015 / 0.1^2 = 0.15 Hz, beta = 0.3 / 0.1 = 3 Hz
    assert q.tupdate == 15 * MS and q.target == 15 * MS
    assert q.p["alpha"] == pytest.approx(0.15) and q.p["beta"] == pytest.approx(3.0)
    # 0.15 * 2^48 / 1e9 = 42221.2..., 3 * 2^48 / 1e9 = 844424.93...
    assert (q.alpha_q, q.beta_q) == (42221, 844425)
    assert q.k_q == 2 << 16 and q.p_lmax_q == ONE
    assert (q.min_th, q.range, q.th_len, q.tshift) == (800 * US, 400 * US, 1, 50 * MS)
    # a longer rtt_max: Tupdate = target still (15 < 200/3)
    q2 = DualPI2({"rtt_max": 0.2}, 100)
    assert q2.p["alpha"] == pytest.approx(0.1 * 0.015 / 0.04)
    assert q2.p["beta"] == pytest.approx(1.5)
    # short rtt_max: Tupdate = rtt_max / 3
    assert DualPI2({"rtt_max": 0.03}, 100).tupdate == 10 * MS


def test_parameters_and_spec_toml():
    with pytest.raises(ValueError, match="unknown parameter"):
        DualPI2({"flows": 4}, 10)
    with pytest.raises(ValueError, match="scheduler"):
        DualPI2({"scheduler": "drr"}, 10)
    with pytest.raises(ValueError, match="variant"):
        DualPI2({}, 10, frozenset(["nope"]))
    params = {
        "target": 0.02,
        "tupdate": 0.016,
        "alpha": 0.16,
        "beta": 3.2,
        "k": 2.0,
        "scheduler": "wrr",
        "classic_protection": 10,
    }
    text = spec_toml(params)
    assert 'kind = "dualpi2"' in text and 'target = "20000000 ns"' in text
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    back = params_from_toml(tomllib.loads(text))
    assert DualPI2(back, 10).p == DualPI2(params, 10).p


# ---------------------------------------------------------------------------
# PI2 controller
# ---------------------------------------------------------------------------


def test_pi2_update_arithmetic():
    q = DualPI2({}, 100)
    q.apply(enq(0))  # one Classic packet, waiting from t = 0
    out = q.apply(upd(25 * MS))
    # curq = 25 ms, prevq = 0: delta = 42221 * 10e6 + 844425 * 25e6
    delta = 42221 * 10_000_000 + 844425 * 25_000_000
    assert delta == 21_532_835_000_000
    assert out == {"dropped": [], "p": delta // 65536} and out["p"] == 328_564_987
    # close to the real-valued PI: 0.15 * 0.010 + 3 * 0.025 = 0.0765
    assert out["p"] / ONE == pytest.approx(0.0765, rel=1e-5)
    p1 = out["p"]
    # second update 15 ms later, same packet: curq = 40 ms, prevq = 25 ms
    out = q.apply(upd(40 * MS))
    assert out["p"] == p1 + (42221 * 25_000_000 + 844425 * 15_000_000) // 65536
    # the queue empties: curq = 0 -> delta = 42221 * -15e6 + 844425 * -40e6 < 0,
    # truncated toward zero
    q.apply(deq(40 * MS))
    p2 = q.prob
    out = q.apply(upd(55 * MS))
    neg = 42221 * 15_000_000 + 844425 * 40_000_000
    assert out["p"] == max(0, p2 - neg // 65536)
    assert q.hits["update_c_empty"] == 1


def test_pi2_update_uses_the_larger_head_delay():
    q = DualPI2({}, 100)
    q.apply(enq(0, "ect1"))  # an L packet alone, waiting from t = 0
    out = q.apply(upd(15 * MS))  # curq = max(0, 15 ms): only the beta term
    assert out["p"] == 844425 * 15_000_000 // 65536
    q.apply(enq(15 * MS, "not-ect"))
    q.apply(upd(20 * MS))  # qL = 20 ms > qC = 5 ms
    assert q.prevq == 20 * MS
    a1 = DualPI2({}, 100, frozenset(["a1_classic_qdelay"]))
    a1.apply(enq(0, "ect1"))
    assert a1.apply(upd(15 * MS))["p"] == 0  # A.1: the C queue is empty


def test_pi2_clamps_to_zero_and_one():
    q = DualPI2({}, 100)
    assert q.apply(upd(15 * MS))["p"] == 0  # empty: would go negative
    assert q.hits["clamp_low"] == 1
    q.apply(enq(15 * MS))
    out = q.apply(upd(15 * MS + 10_000 * MS))  # 10 s of Classic delay
    assert out["p"] == ONE and q.hits["clamp_high"] == 1


def test_truncation_toward_zero_is_symmetric():
    q = DualPI2({"alpha": 1e-9, "beta": 1e-9}, 100)  # tiny gains
    q.prob = 1000
    assert q.alpha_q == round(1e-9 * 2**48 / 1e9)  # 0.28 -> 0
    q.apply(upd(15 * MS))  # delta = 0 * ... = 0
    assert q.prob == 1000
    q2 = DualPI2({"alpha": 0.15, "beta": 0.0}, 100)
    q2.prob = 1000
    q2.apply(enq(0))
    q2.apply(upd(15 * MS - 1))  # curq - target = -1 ns: delta = -42221 -> step 0
    assert q2.prob == 1000
    q2.apply(upd(15 * MS - 1))  # still 1 ns short (same instant, same packet)
    assert q2.prob == 1000


def test_coupled_and_classic_probabilities():
    q = DualPI2({}, 100)
    q.prob = ONE // 10  # p' = 0.1 (429496729)
    assert q.p_cl == 2 * (ONE // 10)  # p_CL = k p'
    assert q.p_c == (429496729 * 429496729) >> 32  # p_C = p'^2
    assert q.p_c / ONE == pytest.approx(0.01, rel=1e-7)
    q.prob = ONE
    assert q.p_c == ONE and q.p_cl == ONE  # p_CL capped at 1
    assert q.p_cmax_q == ONE // 4  # min(1 / k^2, 1)
    q3 = DualPI2({"k": 1.5}, 100)
    q3.prob = 1 << 31
    assert q3.k_q == 98304 and q3.p_cl == 3 << 30


# ---------------------------------------------------------------------------
# marking: recur, the L ramp, the Classic square
# ---------------------------------------------------------------------------


def test_recur_deterministic_pattern():
    q = DualPI2({}, 100)
    quarter = [q.recur("L", ONE // 4) for _ in range(13)]
    # count reaches exactly ONE at the 4th call (not > ONE): first true at the 5th
    assert [i + 1 for i, x in enumerate(quarter) if x] == [5, 9, 13]
    full = [q.recur("C", ONE) for _ in range(4)]
    assert full == [False, True, True, True]
    assert [q.recur("C", 0) for _ in range(3)] == [False] * 3
    # the two queues keep separate counters
    assert q.count["L"] == ONE // 4 and q.count["C"] == ONE


def test_laqm_ramp():
    q = DualPI2({}, 100)
    assert q.laqm(10 * MS, 1) == 0  # one packet (<= th_len): never
    assert q.laqm(800 * US, 2) == 0  # at min_th: not above
    assert q.laqm(900 * US, 2) == ONE // 4  # (900 - 800) / 400
    assert q.laqm(1000 * US, 2) == ONE // 2
    assert q.laqm(800 * US + 1, 2) == ONE // (400 * US)  # floor
    assert q.laqm(1200 * US, 2) == ONE  # at max_th
    assert q.laqm(5 * MS, 2) == ONE
    step = DualPI2({"range": 0.0}, 100)  # range 0: a step at min_th
    assert step.laqm(800 * US - 1, 2) == 0 and step.laqm(800 * US, 2) == ONE


def test_l_queue_ramp_marks():
    # three L packets at t = 0, dequeued at 1.0 ms: qdelay on the ramp at 1/2
    q = DualPI2({}, 100)
    ops = [enq(0, "ect1"), enq(0, "ect1"), enq(0, "ce")] + [deq(1 * MS)] * 3
    outs = [q.apply(op) for op in ops]
    # n_L = 3, 2, 1: p_L = 1/2, 1/2, 0 (th_len) -> count 1/2, 1, 1: no mark yet
    assert [o["mark"] for o in outs[3:]] == [None, None, None]
    assert [o["sent"] for o in outs[3:]] == [0, 1, 2]
    q2 = DualPI2({}, 100)
    ops = [enq(0, "ect1")] * 4 + [deq(1200 * US)] * 4
    outs = [q2.apply(op) for op in ops]
    # p_L = 1 for n_L = 4, 3, 2 -> count 1 (no), 2 -> 1 (mark), 2 -> 1 (mark); then n_L = 1
    assert [o["mark"] for o in outs[4:]] == [None, "l4s", "l4s", None]
    assert q2.hits["l_mark_native"] == 2 and q2.hits["ramp_short_queue"] == 1


def test_coupled_marking_of_l_queue():
    q = DualPI2({}, 100)
    q.prob = ONE // 4  # p_CL = 1/2, below saturation
    outs = [q.apply(op) for op in [enq(0, "ect1")] * 4 + [deq(100 * US)] * 4]
    # qdelay 100 us < min_th: p_L = p_CL = 1/2 -> marks at the 3rd and 5th, ...
    assert [o["mark"] for o in outs[4:]] == [None, None, "l4s", None]
    assert q.hits["l_mark_coupled"] == 1


def test_classic_square_marking_and_dropping():
    q = DualPI2({"k": 1.0}, 100)  # k = 1 keeps p_CL = 1/2 below saturation
    q.prob = ONE // 2  # p_C = 1/4, p_CL = 1/2
    ops = [enq(0, "ect0")] * 4 + [enq(0, "not-ect")] + [enq(0, "ect0")] * 3
    for op in ops:
        q.apply(op)
    outs = [q.apply(deq(1 * MS)) for _ in range(5)]
    # recur(C, 1/4): 5th call signals; packet 4 is not-ECT -> dropped, loop
    # continues with packet 5 (6th call: no signal)
    assert [o["sent"] for o in outs] == [0, 1, 2, 3, 5]
    assert outs[4]["dropped"] == [4] and outs[4]["mark"] is None
    # count is 2/4 after the 6th call: the 7th (3/4) and 8th (exactly 1) do not signal
    outs = [q.apply(deq(1 * MS)) for _ in range(3)]
    assert [o["sent"] for o in outs] == [6, 7, None]
    assert [o["mark"] for o in outs] == [None, None, None]
    assert q.hits["c_drop_not_ect"] == 1 and q.hits["c_mark"] == 0


def test_classic_mark_on_ninth_call():
    q = DualPI2({"k": 1.0}, 100)
    q.prob = ONE // 2  # p_C = 1/4
    for _ in range(9):
        q.apply(enq(0, "ect0"))
    marks = [q.apply(deq(1 * MS))["mark"] for _ in range(9)]
    assert [i + 1 for i, m in enumerate(marks) if m] == [5, 9]
    assert set(m for m in marks if m) == {"classic"}


def test_overload_saturation():
    # p' = 0.75, k = 2: p_CL = 1.5 >= 1 -> saturated; p_C = 0.5625
    q = DualPI2({}, 100)
    q.prob = 3 * ONE // 4
    assert q.overloaded() and q.p_c == 9 * ONE // 16
    for _ in range(4):
        q.apply(enq(0, "ect1"))
    outs = [q.apply(deq(10 * US)) for _ in range(2)]
    # pkt 0: recur(L, p_C = 9/16) no; recur(L, p_CL = 1): 25/16 -> mark (9/16 left)
    # pkt 1: 18/16 -> dropped (2/16); pkt 2: 11/16 no, then 27/16 -> mark (11/16)
    assert outs[0] == {"dropped": [], "sent": 0, "mark": "l4s_overload"}
    assert outs[1] == {"dropped": [1], "sent": 2, "mark": "l4s_overload"}
    # pkt 3: count 11/16 + 9/16 = 20/16 > 1, dropped; nothing left
    assert q.apply(deq(10 * US)) == {"dropped": [3], "sent": None, "mark": None}
    assert q.hits["l_overload_drop"] == 2 and q.hits["l_overload_mark"] == 2
    # Classic ECT(0) under overload: a signal drops it instead of marking
    q.apply(enq(20 * US, "ect0"))
    q.apply(enq(20 * US, "ect0"))
    q.count["C"] = ONE - q.p_c + 1  # the first call signals, the second not
    out = q.apply(deq(30 * US))
    assert out == {"dropped": [4], "sent": 5, "mark": None}
    assert q.hits["c_drop_overload"] == 1


def test_limit_drops_arrival():
    q = DualPI2({}, 2)
    outs = [q.apply(op) for op in [enq(0), enq(0, "ect1"), enq(0, "ect1"), deq(1), enq(2)]]
    assert [o["dropped"] for o in outs[:3]] == [[], [], [2]]
    assert outs[3]["sent"] == 1  # L served first (time shift)
    assert outs[4] == {"dropped": []}  # room again; ids keep counting
    assert q.next_id == 4 and q.hits["overlimit"] == 1


# ---------------------------------------------------------------------------
# scheduler
# ---------------------------------------------------------------------------


def test_time_shifted_fifo():
    q = DualPI2({"tshift": 0.010}, 100)
    q.apply(enq(0, "not-ect"))  # C head waits from 0
    q.apply(enq(10 * MS, "ect1"))  # L head from 10 ms
    # at 20 ms: L waited 10 + 10 shift = 20 == C's 20: a tie goes to C
    assert q.apply(deq(20 * MS))["sent"] == 0
    assert q.hits["sched_c_older"] == 1
    q.apply(enq(20 * MS, "not-ect"))  # C head from 20 ms, L head from 10 ms
    assert q.apply(deq(20 * MS))["sent"] == 1  # L: 10 + 10 > 0
    assert q.hits["sched_l_shifted"] == 1
    q.apply(enq(20 * MS + 1, "ect1"))  # L head at 20 ms + 1 ns: 9.999999 + 10 < ...
    q.apply(enq(40 * MS, "ect1"))
    # at 40 ms: C waited 20 ms, L waited 20 ms - 1 ns + 10 ms shift: L
    assert q.apply(deq(40 * MS))["sent"] == 3
    q2 = DualPI2({"tshift": 0.010}, 100)
    q2.apply(enq(0, "not-ect"))
    q2.apply(enq(10 * MS + 1, "ect1"))
    assert q2.apply(deq(30 * MS))["sent"] == 0  # L 19.999999 + 10 < C 30? no: 29.99.. < 30
    assert q2.apply(deq(30 * MS))["sent"] == 1  # only L left
    assert q2.hits["sched_l_only"] == 1
    assert q2.apply(deq(30 * MS)) == {"dropped": [], "sent": None, "mark": None}


def test_linux_wrr_scheduler():
    # wc = 10 %, mtu 1500: credit starts at 1500 * (10 - 90) = -120000 (L first);
    # each L packet sent while C waits adds 10 * size, each C packet (L waiting)
    # subtracts 90 * size
    q = DualPI2({"scheduler": "wrr", "classic_protection": 10, "mtu": 1500}, 100)
    assert q.credit == -120_000
    for _ in range(12):
        q.apply(enq(0, "ect1", 1000))
    for _ in range(3):
        q.apply(enq(0, "not-ect", 1000))
    order = ["L" if q.apply(deq(1))["sent"] < 12 else "C" for _ in range(15)]
    # -120000 + 10000 * n > 0 only after 12 L packets: L gets 12 then C's 3
    assert order == ["L"] * 12 + ["C"] * 3
    q = DualPI2({"scheduler": "wrr", "classic_protection": 50, "mtu": 1500}, 100)
    for _ in range(4):
        q.apply(enq(0, "ect1", 1000))
        q.apply(enq(0, "not-ect", 1000))
    order = ["L" if q.apply(deq(1))["sent"] % 2 == 0 else "C" for _ in range(8)]
    # credit 0: L (+50000), C (-50000 -> 0), L, C, ...
    assert order == ["L", "C"] * 4
    assert q.apply(deq(1))["sent"] is None and q.credit == 0


# ---------------------------------------------------------------------------
# closed-loop traces
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    params: dict
    limit_packets: int
    rate_bps: int
    sources: tuple
    duration: float


def _aimd(rate, t0, t1, **kw):
    return Source("aimd", 0, rate, t0, t1, **kw)


SCENARIOS = [
    # responsive L and Classic flows, an unresponsive Classic overload phase,
    # L bursts with small and large packets
    Scenario(
        "mix",
        {},
        400,
        20_000_000,
        (
            _aimd(15e6, 0.0, 2.5, ecn="ect1", increase=2e7, rtt=0.01),
            _aimd(8e6, 0.0, 2.5, ecn=("not-ect", "ect0"), increase=5e6, rtt=0.05),
            Source("cbr", 0, 30e6, 1.0, 1.5, sizes=1500, ecn="ect0"),
            Source(
                "onoff", 0, 10e6, 0.0, 2.5, sizes=(64, 1500), ecn=("ect1", "ce"), on=0.03, off=0.1
            ),
        ),
        2.5,
    ),
    # an unresponsive overload of both queues (p' to 1), then silence (p' to 0)
    Scenario(
        "overload",
        {"tshift": 0.010},
        200,
        10_000_000,
        (
            Source("cbr", 0, 12e6, 0.0, 1.2, sizes=1500, ecn="not-ect"),
            Source("poisson", 0, 6e6, 0.2, 1.0, sizes=(576, 1500), ecn="ect1"),
            Source("cbr", 0, 5e5, 0.0, 2.0, sizes=200, ecn="ect0"),
        ),
        2.0,
    ),
    # Linux-like parameters: period 16 ms, gains 0.16 / 3.2 Hz, WRR scheduler
    Scenario(
        "linux-params",
        {"tupdate": 0.016, "alpha": 0.16, "beta": 3.2, "scheduler": "wrr"},
        300,
        20_000_000,
        (
            _aimd(10e6, 0.0, 2.0, ecn="ect1", increase=2e7, rtt=0.01),
            _aimd(10e6, 0.0, 2.0, ecn="not-ect", increase=5e6, rtt=0.05),
            Source("cbr", 0, 25e6, 0.8, 1.2, sizes=1500, ecn="ect1"),
        ),
        2.0,
    ),
    # a slow link: one 1500-byte packet takes 60 ms, so the Classic head
    # always waits more than target and p' climbs to 1 (the clamp)
    Scenario(
        "slow-link",
        {},
        50,
        200_000,
        (
            Source("cbr", 0, 1e6, 0.0, 2.0, sizes=1500, ecn="not-ect"),
            Source("cbr", 0, 1e5, 0.0, 2.0, sizes=500, ecn="ect1"),
        ),
        2.0,
    ),
]
SEEDS = (1, 2)
CASES = [(i, s) for i in range(len(SCENARIOS)) for s in SEEDS]
IDS = [f"{SCENARIOS[i].name}-s{s}" for i, s in CASES]


@cache
def trace(i: int, seed: int) -> Trace:
    sc = SCENARIOS[i]
    return generate(sc.params, sc.limit_packets, sc.rate_bps, sc.sources, sc.duration, seed)


@pytest.mark.parametrize("i,seed", CASES, ids=IDS)
def test_trace_is_consistent(i, seed):
    check_trace(trace(i, seed))


def test_generation_is_deterministic():
    sc = SCENARIOS[0]
    a = generate(sc.params, sc.limit_packets, sc.rate_bps, sc.sources, 0.5, 7)
    b = generate(sc.params, sc.limit_packets, sc.rate_bps, sc.sources, 0.5, 7)
    assert a.ops == b.ops and a.outputs == b.outputs


def test_traces_cover_every_branch():
    hits = sum((trace(i, s).hits for i, s in CASES), start=type(trace(0, 1).hits)())
    missing = [b for b in BRANCHES if hits[b] == 0 and b not in RARE_BRANCHES]
    assert not missing, f"branches never taken: {missing}"
    assert set(hits) <= set(BRANCHES)


def test_traces_signal_every_way():
    stats = sum((trace(i, s).stats for i, s in CASES), start=type(trace(0, 1).stats)())
    for key in ("mark_l4s", "mark_l4s_overload", "mark_classic", "aqm_drops", "overlimit", "idle"):
        assert stats[key] > 0, key


def test_replay_of_ops_reproduces_trace():
    for i, s in CASES[::2]:
        tr = trace(i, s)
        outs, _ = replay(tr.params, tr.limit_packets, tr.ops)
        assert outs == tr.outputs


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_traces_tell_documented_variants_apart(variant):
    """Each documented departure toward Linux changes some trace's outputs."""
    for i, s in CASES:
        tr = trace(i, s)
        outs, _ = replay(tr.params, tr.limit_packets, tr.ops, frozenset([variant]))
        if outs != tr.outputs:
            return
    pytest.fail(f"no trace tells {variant!r} ({VARIANTS[variant]}) apart")


# ---------------------------------------------------------------------------
# satqm's implementation
# ---------------------------------------------------------------------------


def _replay_fn():
    try:
        import satqm._core as core
    except ImportError as e:
        pytest.skip(f"satqm._core not importable: {e}")
    if not hasattr(core, "qdisc_replay"):
        pytest.skip("satqm._core.qdisc_replay is not implemented yet")
    try:
        core.qdisc_replay(spec_toml({}), 10, [])
    except core.ConfigError as e:
        if "unknown AQM" in str(e) or "not a queue discipline" in str(e):
            pytest.skip(f"satqm._core has no dualpi2 queue discipline yet ({e})")
        raise
    return core.qdisc_replay


def _normalise(out, op) -> dict:
    if isinstance(out, dict):
        d = dict(out)
    else:  # a (dropped, sent, mark[, p]) tuple
        d = {"dropped": list(out[0]), "sent": out[1], "mark": out[2]}
        if len(out) > 3:
            d["p"] = out[3]
    d["dropped"] = list(d.get("dropped", []))
    if op["op"] == "enqueue":
        return {"dropped": d["dropped"]}
    if op["op"] == "update":
        return {"dropped": d["dropped"], "p": d.get("p")}
    return {"dropped": d["dropped"], "sent": d.get("sent"), "mark": d.get("mark")}


@pytest.mark.parametrize("i,seed", CASES, ids=IDS)
def test_replay_matches_oracle(i, seed):
    qdisc_replay = _replay_fn()
    tr = trace(i, seed)
    got = list(qdisc_replay(spec_toml(tr.params), tr.limit_packets, tr.ops))
    assert len(got) == len(tr.ops)
    for idx, (op, want, have) in enumerate(zip(tr.ops, tr.outputs, got)):
        have_n = _normalise(have, op)
        if have_n != want:
            pytest.fail(
                f"dualpi2 output differs at op {idx}: {op}\n"
                f"  oracle:    {want}\n  simulator: {have_n}"
            )


# ---------------------------------------------------------------------------
# the single-queue coupled PI2 (kind = "pi2")
# ---------------------------------------------------------------------------

PI2_CASES = [(0, 1), (0, 2), (1, 1), (3, 1)]  # mix, overload, slow-link


@cache
def pi2_trace(i: int, seed: int) -> Trace:
    sc = SCENARIOS[i]
    return generate({}, sc.limit_packets, sc.rate_bps, sc.sources, sc.duration, seed, cls=PI2)


def test_pi2_keeps_one_fifo_and_marks_scalable_packets_with_k_p():
    q = PI2({}, 100)
    codepoints = ("ect1", "not-ect", "ect1", "ect1", "ect0")
    for t, ecn in enumerate(codepoints):
        q.apply(enq(t, ecn))
    assert not q.lq and [p.id for p in q.cq] == [0, 1, 2, 3, 4]
    q.prob = 1 << 30  # p' = 1/4: p_CL = k p' = 1/2, p_C = p'^2 = 1/16
    sent = [q.apply(deq(10 * MS)) for _ in codepoints]
    assert [s["sent"] for s in sent] == [0, 1, 2, 3, 4]
    # recur() per class: the scalable packets accumulate 1/2 each and the
    # third goes over one; the classic ones 1/16 each
    assert [s["mark"] for s in sent] == [None, None, None, "l4s", None]
    with pytest.raises(ValueError, match="unknown parameter"):
        PI2({"tshift": 0.01}, 10)


PI2_IDS = [f"pi2-{SCENARIOS[i].name}-s{s}" for i, s in PI2_CASES]


@pytest.mark.parametrize("i,seed", PI2_CASES, ids=PI2_IDS)
def test_pi2_replay_matches_oracle(i, seed):
    qdisc_replay = _replay_fn()
    tr = pi2_trace(i, seed)
    marks = Counter(o.get("mark") for o in tr.outputs if o.get("mark"))
    assert marks["l4s"] > 0 or i == 3
    got = list(qdisc_replay(pi2_spec_toml({}), tr.limit_packets, tr.ops))
    for idx, (op, want, have) in enumerate(zip(tr.ops, tr.outputs, got)):
        have_n = _normalise(have, op)
        if have_n != want:
            pytest.fail(
                f"pi2 output differs at op {idx}: {op}\n  oracle:    {want}\n  simulator: {have_n}"
            )
