"""The validation scenarios, each written once and turned into both simulators' inputs.

A scenario is a plain dict (see :func:`make`)::

    {"name": "red-n3", "flows": 3, "duration_s": 200.0, "warmup_s": 50.0,
     "bottleneck": {"rate_bps": 10e6, "delay_s": 0.29, "buffer_packets": 800, "loss": 0.0},
     "access": {"rate_bps": 100e6, "delays_s": [0.005, ...], "rx_delay_s": 0.005},
     "tcp": {"recovery": "newreno", "mss": 1460, ...},
     "aqm": {"kind": "red", "min_th": 30, "max_th": 90, ...},
     "starts_s": [0.0, 0.37, ...], "seed": 1, ...}

:func:`satqm_toml` writes the satqm scenario and :func:`ns3_params` the ns-3
program's parameters from the same dict, so the two cannot drift apart.
:func:`params_from_toml` and :func:`params_from_ns3` read each side back
into one canonical form; the tests check that both give the same.

Where ns-3's semantics differ, the translation compensates (every choice is
listed in ``docs/validation.md``):

- satqm's buffer limit counts packets waiting; ns-3's bottleneck holds the
  queue disc (``bufferPackets``) plus one packet in the device queue, so the
  queue disc gets ``buffer - 1``. The flow-queuing scenarios model that
  device queue on the satqm side too (``device_queue = 1``, the buffer
  ``buffer - 1``): a scheduler's choice, and a sojourn, end one packet
  before the transmission starts, as in ns-3.
- ns-3 RED defaults to ns-2's ``wait`` rule; satqm spreads drops with
  ``p_b / (1 - count p_b)``, which is ns-3's ``Wait = false``.
- ns-3's limited transmit (RFC 3042) is on by default; satqm has none.
- A step marker at K (satqm: RED with ``w_q = 1``, ``min_th = K - 1``,
  ``max_th = K``, ``max_p = 1``, marking) marks an arrival that finds K
  packets waiting; ns-3's RED counts its queue disc only, one packet short
  of that, so it gets ``MinTh = MaxTh = K - 1`` with ``UseEcn`` on and
  ``UseHardDrop`` off.
- ns-3's receiver acknowledges the first data segment of a connection at
  once; the congestion-control scenarios give satqm's receiver
  ``quickack = 1`` to match (the NewReno scenarios keep the difference,
  as measured before).

The congestion-control scenarios (:data:`CC_SCENARIOS`) run CUBIC, BBR
and DCTCP over a GEO and a terrestrial dumbbell; their parameters on the
satqm side are set to ns-3's (:data:`CC_PARAMS`, :data:`NS3_CC`).
"""

from __future__ import annotations

import copy
import math
import random
import sys
from typing import Any

from satqm._core import parse_quantity
from satqm.scenario import quantity_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MSS = 1460
PACKET = MSS + 40  # IP bytes of a full data segment (no TCP options)

#: The bottleneck AQMs, by name: satqm [[aqm]] parameters (ns-3 gets the same values);
#: a name ending in ``_s`` is a time in seconds, the key without it.
AQMS: dict[str, dict[str, Any]] = {
    "droptail": {"kind": "droptail"},
    # RED in packet mode; thresholds 50/150 packets (60/180 ms at 10 Mbit/s,
    # under the 500-packet BDP), buffer 800
    "red": {
        "kind": "red",
        "min_th": 50,
        "max_th": 150,
        "max_p": 0.1,
        "w_q": 0.002,
        "gentle": False,
        "mean_packet_size": PACKET,
    },
    "red-gentle": {
        "kind": "red",
        "min_th": 50,
        "max_th": 150,
        "max_p": 0.1,
        "w_q": 0.002,
        "gentle": True,
        "mean_packet_size": PACKET,
    },
    # Adaptive RED: w_q = 1 - exp(-1/C) (automatic on both), gentle, AIMD on max_p
    "ared": {
        "kind": "ared",
        "min_th": 50,
        "max_th": 150,
        "max_p": 0.1,
        "alpha": 0.01,
        "beta": 0.9,
        "interval_s": 0.5,
        "mean_packet_size": PACKET,
    },
    "pie": {
        "kind": "pie",
        "target_s": 0.015,
        "t_update_s": 0.015,
        "alpha": 0.125,
        "beta": 1.25,
        "max_burst_s": 0.150,
        "mean_packet_size": PACKET,
    },
    "codel": {"kind": "codel", "target_s": 0.005, "interval_s": 0.100, "mtu": PACKET},
    # ns-3's FqCoDelQueueDisc gets the same flows, quantum, target, interval,
    # drop batch and ECN setting; its per-queue CoDel MinBytes is the packet
    "fq_codel": {
        "kind": "fq_codel",
        "flows": 1024,
        "quantum": 1514,
        "target_s": 0.005,
        "interval_s": 0.100,
        "mtu": PACKET,
        "drop_batch": 64,
        "mode": "mark",
    },
    # ns-3's FqPieQueueDisc: a PieQueueDisc per flow queue (its A, B, target,
    # update period, burst allowance and mean packet size as satqm's PIE
    # above), drops from the fattest queue over the limit
    "fq_pie": {
        "kind": "fq_pie",
        "flows": 1024,
        "quantum": 1514,
        "target_s": 0.015,
        "t_update_s": 0.015,
        "alpha": 0.125,
        "beta": 1.25,
        "max_burst_s": 0.150,
        "mean_packet_size": PACKET,
        "overflow": "fattest",
        "drop_batch": 64,
        "mode": "mark",
    },
    # ns-3's FqCobaltQueueDisc: a CobaltQueueDisc per flow queue with ns-3's
    # BLUE steps and threshold (satqm's defaults)
    "fq_cobalt": {
        "kind": "fq_cobalt",
        "flows": 1024,
        "quantum": 1514,
        "target_s": 0.005,
        "interval_s": 0.100,
        "drop_batch": 64,
        "mode": "mark",
    },
}


def step_marker(k: int) -> dict[str, Any]:
    """satqm's step marker at ``k`` packets (docs/aqm.md, "Step marking"):
    RED on the instantaneous queue that marks every ECN-capable arrival
    finding ``k`` or more packets waiting."""
    return {
        "kind": "red",
        "min_th": k - 1,
        "max_th": k,
        "max_p": 1.0,
        "w_q": 1.0,
        "gentle": False,
        "mode": "mark",
        "mean_packet_size": PACKET,
    }


def is_step_marker(q: dict[str, Any]) -> bool:
    """Whether a RED description is a step marker (see :func:`step_marker`)."""
    return (
        q.get("kind") == "red"
        and q.get("w_q") == 1.0
        and q.get("max_p") == 1.0
        and q.get("max_th", 0) - q.get("min_th", 0) == 1
        and not q.get("gentle", False)
    )


TCP_DEFAULTS: dict[str, Any] = {
    "recovery": "newreno",  # or "sack"
    "mss": MSS,
    "initial_window": 2,
    "delayed_ack": True,
    "delayed_ack_timeout_s": 0.2,
    "min_rto_s": 1.0,
    "initial_rto_s": 1.0,
    "window_scaling": True,
    "receive_buffer": 16 * 1024 * 1024,
    "handshake": True,
    "cc": "reno",
    "cc_params": {},
    "ecn": False,
    "pacing": False,
    "cc_rules": "rfc",
    "quickack": 0,
}

#: The ns-3 congestion control (``ns3::Tcp<name>``) for each satqm ``cc``.
NS3_CC = {"reno": "NewReno", "cubic": "Cubic", "bbr": "Bbr", "dctcp": "Dctcp"}

#: satqm's ``[tcp.cc]`` parameters in the comparison with ns-3, set to ns-3's
#: where they differ from satqm's defaults: BBR's STARTUP gain is 2.89 in ns-3
#: (739/256 = 2.887 in satqm), ns-3's TcpBbr has no long-term (policer)
#: bandwidth sampling, and an RTT sample equal to its min_rtt estimate starts
#: the estimate's window again (as Linux before 5.10). CUBIC's (beta 0.7, C 0.4,
#: fast convergence, HyStart) and DCTCP's (g = 1/16, α from 1) are the same on
#: both sides.
CC_PARAMS: dict[str, dict[str, Any]] = {
    "reno": {},
    "cubic": {},
    "bbr": {"high_gain": 2.89, "long_term": False, "min_rtt_on_equal": True},
    "dctcp": {},
}

#: The dumbbells of the congestion-control scenarios: bottleneck rate,
#: one-way delay and buffer (packets); 5 ms access links on both sides;
#: the run and its warm-up; RED's thresholds and the step marker's K.
LINKS: dict[str, dict[str, Any]] = {
    # round trip 0.6 s, 500 packets in flight at full rate, buffer 1 BDP
    "geo": {
        "rate_bps": 10e6,
        "delay_s": 0.290,
        "buffer_packets": 500,
        "duration_s": 120.0,
        "warmup_s": 30.0,
        "red": (50, 150),
        "step_k": 80,
    },
    # round trip 60 ms, 100 packets in flight at full rate, buffer 1 BDP
    "terr": {
        "rate_bps": 20e6,
        "delay_s": 0.020,
        "buffer_packets": 100,
        "duration_s": 60.0,
        "warmup_s": 15.0,
        "red": (15, 45),
        "step_k": 20,
    },
}


def start_offsets(flows: int, spread_s: float, replicate: int) -> list[float]:
    """Start times of the flows: uniform in ``[0, spread_s)``, drawn from a
    generator seeded by ``replicate`` (the same list goes to both simulators),
    rounded to the microsecond. Flow 0 always starts at 0."""
    rng = random.Random(1000 + replicate)
    starts = [0.0] + [round(rng.uniform(0.0, spread_s), 6) for _ in range(flows - 1)]
    return starts


def make(
    name: str,
    *,
    flows: int,
    aqm: str = "droptail",
    recovery: str = "newreno",
    duration_s: float = 300.0,
    warmup_s: float = 20.0,
    buffer_packets: int = 800,
    loss: float = 0.0,
    access_delays_s: list[float] | None = None,
    start_spread_s: float = 1.0,
    replicate: int = 0,
    seed: int = 1,
    group: str = "",
    note: str = "",
    cc: str = "reno",
    rate_bps: float = 10e6,
    delay_s: float = 0.290,
    aqm_params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One scenario description (a dict; see the module docstring).

    ``cc``: satqm's congestion control (``reno``, ``cubic``, ``bbr``,
    ``dctcp``; ns-3 runs :data:`NS3_CC`'s); ``aqm_params`` replaces the
    named AQM's parameters (``aqm`` then only names it)."""
    if aqm_params is None and aqm not in AQMS:
        raise ValueError(f"unknown AQM {aqm!r} (known: {', '.join(AQMS)})")
    if cc not in NS3_CC:
        raise ValueError(f"unknown congestion control {cc!r} (known: {', '.join(NS3_CC)})")
    delays = list(access_delays_s) if access_delays_s else [0.005] * flows
    if len(delays) != flows:
        raise ValueError(f"{name}: {len(delays)} access delays for {flows} flows")
    tcp = dict(TCP_DEFAULTS)
    tcp["recovery"] = recovery
    tcp["cc"] = cc
    tcp["cc_params"] = dict(CC_PARAMS[cc])
    if cc == "bbr":
        if recovery != "sack":
            raise ValueError(f"{name}: BBR needs SACK")
        tcp["pacing"] = True
    if cc == "dctcp":
        # RFC 8257 feedback; growth as ns-3's TcpLinuxReno (segments acknowledged)
        tcp["ecn"] = "dctcp"
        tcp["cc_rules"] = "linux"
    if cc != "reno":
        # ns-3's receiver acknowledges the first data segment at once (the
        # NewReno scenarios leave this difference in, docs/validation.md)
        tcp["quickack"] = 1
    q = copy.deepcopy(aqm_params if aqm_params is not None else AQMS[aqm])
    return {
        "name": name,
        "group": group or name,
        "note": note,
        "flows": flows,
        "duration_s": float(duration_s),
        "warmup_s": float(warmup_s),
        "sample_interval_s": 0.1,
        "seed": seed,
        "replicate": replicate,
        "bottleneck": {
            "rate_bps": float(rate_bps),
            "delay_s": float(delay_s),
            "buffer_packets": buffer_packets,
            "loss": float(loss),
        },
        "access": {"rate_bps": 100e6, "delays_s": delays, "rx_delay_s": 0.005},
        "tcp": tcp,
        "aqm": q,
        "starts_s": start_offsets(flows, start_spread_s, replicate),
    }


def hetero_delays(flows: int, lo: float = 0.005, hi: float = 0.100) -> list[float]:
    """Access delays spread evenly over ``[lo, hi]`` (flow 0 the shortest)."""
    if flows == 1:
        return [lo]
    return [round(lo + (hi - lo) * i / (flows - 1), 6) for i in range(flows)]


def _replicated(base: dict[str, Any], replicates: int) -> list[dict[str, Any]]:
    """``replicates`` copies of a scenario that differ in their start offsets
    (and seed), named ``<name>/r<k>``; one run if ``replicates`` is 1."""
    if replicates <= 1:
        return [base]
    out = []
    for r in range(replicates):
        d = copy.deepcopy(base)
        d["name"] = f"{base['name']}/r{r}"
        d["replicate"] = r
        d["seed"] = base["seed"] + r
        d["starts_s"] = start_offsets(d["flows"], 1.0, r)
        out.append(d)
    return out


def _name(aqm: str, n: int, recovery: str) -> str:
    return f"{aqm}-n{n}" + ("-sack" if recovery == "sack" else "")


#: Simulated seconds of each run of the full set, and the warm-up its
#: figures leave out (they are measured over the rest).
FULL_DURATION_S, FULL_WARMUP_S = 300.0, 60.0
#: The same for the quick set (``satqm validate ns3 --quick``).
QUICK_DURATION_S, QUICK_WARMUP_S = 200.0, 50.0

#: The quick set: (aqm, flows, recovery, replicates).
_QUICK: list[tuple[str, int, str, int]] = [
    # 1: DropTail. NewReno without SACK (ns-3's own behaviour differs after a
    # timeout, see docs/validation.md) and with SACK; N = 3 is replicated
    # (the first overshoot decides a run), N = 10 and 50 reach steady state.
    ("droptail", 3, "newreno", 3),
    ("droptail", 3, "sack", 3),
    ("droptail", 10, "sack", 1),
    ("droptail", 50, "sack", 1),
    # 2: RED (gentle off and on), Adaptive RED, PIE, CoDel
    ("red", 10, "newreno", 1),
    ("red", 3, "sack", 3),
    ("red", 10, "sack", 2),
    ("red", 50, "sack", 1),
    ("red-gentle", 10, "sack", 1),
    ("ared", 10, "sack", 1),
    ("pie", 10, "sack", 1),
    ("codel", 10, "sack", 1),
]


#: The congestion-control scenarios of the full set: (link, AQM, flows, cc).
#: ``step`` is the step marker at the link's K, with ECN (DCTCP only).
CC_SCENARIOS: list[tuple[str, str, int, str]] = [
    (link, aqm, n, cc)
    for link in ("geo", "terr")
    for cc in ("cubic", "bbr")
    for aqm in ("droptail", "red", "codel")
    for n in (1, 5)
] + [(link, "step", n, "dctcp") for link in ("geo", "terr") for n in (1, 5)]

#: Runs of each multi-flow CUBIC and BBR scenario of the full set (start
#: times and seeds differ; a run is decided by a few loss events).
CC_REPLICATES = 3

#: The congestion-control scenarios of the quick set (one run each).
CC_QUICK: list[tuple[str, str, int, str]] = [
    ("geo", "droptail", 5, "cubic"),
    ("terr", "droptail", 5, "cubic"),
    ("geo", "droptail", 1, "bbr"),
    ("terr", "droptail", 1, "bbr"),
    ("geo", "step", 5, "dctcp"),
    ("terr", "step", 5, "dctcp"),
]


def cc_name(link: str, aqm: str, flows: int, cc: str) -> str:
    return f"{link}-{aqm}-n{flows}-{cc}"


def cc_scenario(link: str, aqm: str, flows: int, cc: str) -> dict[str, Any]:
    """One congestion-control scenario: ``flows`` bulk flows with SACK and
    ``cc`` over the ``link`` dumbbell (:data:`LINKS`) with ``aqm``
    (``droptail``, ``red`` with the link's thresholds, ``codel``, or
    ``step``, the step marker at the link's K)."""
    ln = LINKS[link]
    if aqm == "step":
        q = step_marker(ln["step_k"])
    elif aqm == "red":
        q = copy.deepcopy(AQMS["red"])
        q["min_th"], q["max_th"] = ln["red"]
    else:
        q = copy.deepcopy(AQMS[aqm])
    return make(
        cc_name(link, aqm, flows, cc),
        flows=flows,
        aqm=aqm,
        aqm_params=q,
        recovery="sack",
        cc=cc,
        rate_bps=ln["rate_bps"],
        delay_s=ln["delay_s"],
        buffer_packets=ln["buffer_packets"],
        duration_s=ln["duration_s"],
        warmup_s=ln["warmup_s"],
    )


#: The FQ-CoDel scenarios (set 6): (link, flows, variant). ``rtt``: the
#: flows' access delays spread over 5–100 ms; ``ecn``: ECN (RFC 3168) on
#: both sides, so that CoDel marks instead of dropping.
FQ_SCENARIOS: list[tuple[str, int, str]] = [
    (link, n, "") for link in ("geo", "terr") for n in (1, 5)
] + [("terr", 5, "rtt"), ("geo", 5, "ecn"), ("terr", 5, "ecn")]

#: Runs of each multi-flow flow-queuing scenario of the full set, by link.
#: Five GEO flows' goodput and mean queue (about one packet) are set by
#: where their slow starts end, which moves from run to run by more than
#: the bounds; ten runs bring the mean's spread inside them.
FQ_REPLICATES = {"geo": 10, "terr": 3}

#: The FQ-CoDel scenarios of the quick set (one run each).
FQ_QUICK: list[tuple[str, int, str]] = [("geo", 5, ""), ("terr", 5, "")]


#: The FQ-PIE and FQ-COBALT scenarios (set 6): (discipline, link, flows,
#: variant), as the FQ-CoDel ones.
FQ_OTHER_SCENARIOS: list[tuple[str, str, int, str]] = [
    (aqm, link, 5, variant)
    for aqm in ("fq_pie", "fq_cobalt")
    for link, variant in (("geo", ""), ("geo", "ecn"), ("terr", ""), ("terr", "ecn"))
]

#: Scenario-name prefix of each flow-queuing discipline.
FQ_PREFIX = {"fq_codel": "fq", "fq_pie": "fqpie", "fq_cobalt": "fqcobalt"}


def fq_name(link: str, flows: int, variant: str = "", aqm: str = "fq_codel") -> str:
    return f"{FQ_PREFIX[aqm]}-{link}-n{flows}" + (f"-{variant}" if variant else "")


def fq_scenario(link: str, flows: int, variant: str = "", aqm: str = "fq_codel") -> dict[str, Any]:
    """One flow-queuing scenario: ``flows`` NewReno flows with SACK over the
    ``link`` dumbbell (:data:`LINKS`) behind ``aqm`` (FQ-CoDel, FQ-PIE or
    FQ-COBALT, :data:`AQMS`), with the variant's access delays or ECN."""
    if variant not in ("", "rtt", "ecn"):
        raise ValueError(f"unknown FQ-CoDel variant {variant!r}")
    if aqm not in FQ_PREFIX:
        raise ValueError(f"unknown flow-queuing discipline {aqm!r}")
    ln = LINKS[link]
    d = make(
        fq_name(link, flows, variant, aqm),
        flows=flows,
        aqm=aqm,
        recovery="sack",
        rate_bps=ln["rate_bps"],
        delay_s=ln["delay_s"],
        buffer_packets=ln["buffer_packets"],
        duration_s=ln["duration_s"],
        warmup_s=ln["warmup_s"],
        access_delays_s=hetero_delays(flows) if variant == "rtt" else None,
    )
    if variant == "ecn":
        d["tcp"]["ecn"] = True
    # ns-3's one-packet device queue below its queue disc, modelled: the
    # scheduler chooses a packet one serialization before it is sent
    d["bottleneck"]["device_queue_packets"] = 1
    return d


def scenarios(quick: bool = False) -> list[dict[str, Any]]:
    """The validation set (``quick``: the subset ``satqm validate ns3 --quick``
    runs, with shorter runs). Names are unique; replicates of a group share
    their ``group`` and are averaged in the report."""
    out: list[dict[str, Any]] = []
    if quick:
        dur, warm = QUICK_DURATION_S, QUICK_WARMUP_S
        for aqm, n, rec, reps in _QUICK:
            name = _name(aqm, n, rec)
            base = make(name, flows=n, aqm=aqm, recovery=rec, duration_s=dur, warmup_s=warm)
            out += _replicated(base, reps)
        # 3: heterogeneous RTTs
        out.append(
            make(
                "hetero-n10-sack",
                flows=10,
                recovery="sack",
                access_delays_s=hetero_delays(10),
                duration_s=dur,
                warmup_s=warm,
            )
        )
        # 4: random erasures on the bottleneck
        for loss in (1e-3, 1e-2):
            base = make(
                f"erasure-{loss:g}-n3-sack",
                flows=3,
                loss=loss,
                recovery="sack",
                duration_s=dur,
                warmup_s=warm,
            )
            out += _replicated(base, 2)
        # 5: CUBIC, BBR and DCTCP
        out += [cc_scenario(*x) for x in CC_QUICK]
        # 6: FQ-CoDel
        out += [fq_scenario(*x) for x in FQ_QUICK]
        return out

    dur, warm = FULL_DURATION_S, FULL_WARMUP_S
    for aqm in ("droptail", "red", "red-gentle", "ared", "pie", "codel"):
        for n in (1, 3, 10, 50):
            for rec in ("newreno", "sack"):
                # replicates differ in start times and seed; with one flow
                # and DropTail nothing random is left to vary
                if aqm == "droptail":
                    reps = 5 if n == 3 else 1
                else:
                    reps = 3 if n <= 3 and aqm.startswith("red") else 1
                base = make(
                    _name(aqm, n, rec),
                    flows=n,
                    aqm=aqm,
                    recovery=rec,
                    duration_s=dur,
                    warmup_s=warm,
                )
                out += _replicated(base, reps)
    for aqm in ("droptail", "red"):
        for rec in ("newreno", "sack"):
            out.append(
                make(
                    _name(f"hetero-{aqm}", 10, rec),
                    flows=10,
                    aqm=aqm,
                    recovery=rec,
                    access_delays_s=hetero_delays(10),
                    duration_s=dur,
                    warmup_s=warm,
                )
            )
    for loss in (1e-3, 1e-2):
        for rec in ("newreno", "sack"):
            out.append(
                make(
                    _name(f"erasure-{loss:g}", 3, rec),
                    flows=3,
                    loss=loss,
                    recovery=rec,
                    duration_s=dur,
                    warmup_s=warm,
                )
            )
    for link, aqm, n, cc in CC_SCENARIOS:
        reps = CC_REPLICATES if n > 1 and cc in ("cubic", "bbr") else 1
        out += _replicated(cc_scenario(link, aqm, n, cc), reps)
    for link, n, variant in FQ_SCENARIOS:
        out += _replicated(fq_scenario(link, n, variant), FQ_REPLICATES[link] if n > 1 else 1)
    for aqm, link, n, variant in FQ_OTHER_SCENARIOS:
        out += _replicated(fq_scenario(link, n, variant, aqm), FQ_REPLICATES[link])
    return out


def select(items: list[dict[str, Any]], names: list[str] | None) -> list[dict[str, Any]]:
    """The scenarios whose name or group is in ``names`` (all if ``names`` is
    empty); a name ending in ``*`` is a prefix. Unknown names raise ValueError."""
    if not names:
        return items
    chosen = []
    for pat in names:
        if pat.endswith("*"):
            hit = [d for d in items if d["name"].startswith(pat[:-1])]
        else:
            hit = [d for d in items if pat in (d["name"], d["group"])]
        if not hit:
            known = sorted({d["group"] for d in items})
            raise ValueError(f"no scenario {pat!r} (known: {', '.join(known)})")
        chosen += [d for d in hit if d not in chosen]
    return [d for d in items if d in chosen]


# ----- satqm -------------------------------------------------------------------


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"not finite: {v}")
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _seconds(v: float) -> str:
    return _toml_value(quantity_text(v, "s"))


def _rate(bps: float) -> str:
    """A rate in Mbit/s when that reads back as the same number of bit/s."""
    text = quantity_text(bps / 1e6, "Mbps")
    exact = parse_quantity(text, "rate") == float(bps)
    return _toml_value(text if exact else quantity_text(bps, "bps"))


def _aqm_line(key: str, v: Any) -> str:
    if key.endswith("_s"):
        return f"{key[:-2]} = {_seconds(v)}"
    return f"{key} = {_toml_value(v)}"


def satqm_toml(d: dict[str, Any]) -> str:
    """The satqm scenario (TOML text) of a description."""
    b, a, t, q = d["bottleneck"], d["access"], d["tcp"], d["aqm"]
    lines = [
        f"# satqm validate ns3: {d['name']} (generated by satqm.validation.scenarios)",
        f"name = {_toml_value(d['name'].replace('/', '-'))}",
        "",
        "[simulation]",
        f"duration = {_seconds(d['duration_s'])}",
        f"seed = {d['seed']}",
        f"sample_interval = {_seconds(d['sample_interval_s'])}",
        f"warmup = {_seconds(d['warmup_s'])}",
        "trace_cwnd = [0]",
        "",
        "[topology]",
        'kind = "dumbbell"',
        f"pairs = {d['flows']}",
        "",
        "[topology.access]",
        f"rate = {_rate(a['rate_bps'])}",
        f"delay = [{', '.join(_seconds(x) for x in a['delays_s'])}]",
        "buffer = 100000",
        "",
        "[topology.receiver_access]",
        f"rate = {_rate(a['rate_bps'])}",
        f"delay = {_seconds(a['rx_delay_s'])}",
        "buffer = 100000",
        "",
        "[topology.bottleneck]",
        f"rate = {_rate(b['rate_bps'])}",
        f"delay = {_seconds(b['delay_s'])}",
        # with a device queue below it, the buffer is the queue disc's
        f"buffer = {int(b['buffer_packets']) - b.get('device_queue_packets', 0)}",
        "reverse_buffer = 100000",
    ]
    if b.get("device_queue_packets", 0):
        lines.append(f"device_queue = {int(b['device_queue_packets'])}")
    if b["loss"] > 0:
        lines.append(f"loss = {_toml_value(b['loss'])}")
    lines += [
        "",
        "[tcp]",
        f"recovery = {_toml_value(t['recovery'])}",
        f"mss = {t['mss']}",
        f"initial_window = {t['initial_window']}",
        f"delayed_ack = {_toml_value(t['delayed_ack'])}",
        f"delayed_ack_timeout = {_seconds(t['delayed_ack_timeout_s'])}",
        f"min_rto = {_seconds(t['min_rto_s'])}",
        f"initial_rto = {_seconds(t['initial_rto_s'])}",
        f"window_scaling = {_toml_value(t['window_scaling'])}",
        f"receive_buffer = {_toml_value(quantity_text(t['receive_buffer'], 'B'))}",
        f"handshake = {_toml_value(t['handshake'])}",
    ]
    if t["ecn"]:
        lines.append(f"ecn = {_toml_value(t['ecn'])}")
    if t["pacing"]:
        lines.append("pacing = true")
    if t["quickack"]:
        lines.append(f"quickack = {t['quickack']}")
    if t["cc_rules"] != "rfc":
        lines.append(f"cc_rules = {_toml_value(t['cc_rules'])}")
    if t["cc"] != "reno":
        lines += ["", "[tcp.cc]", f"kind = {_toml_value(t['cc'])}"]
        lines += [f"{k} = {_toml_value(v)}" for k, v in t["cc_params"].items()]
    if q["kind"] != "droptail":
        lines += ["", "[[aqm]]", f"kind = {_toml_value(q['kind'])}", 'at = "bottleneck"']
        lines += [_aqm_line(k, v) for k, v in q.items() if k != "kind"]
    for i, st in enumerate(d["starts_s"]):
        lines += ["", "[[traffic]]", 'kind = "bulk"', f"pairs = {i}", f"start = {_seconds(st)}"]
    return "\n".join(lines) + "\n"


# ----- ns-3 --------------------------------------------------------------------


def _ns3_pie(q: dict[str, Any], cls: str) -> dict[str, Any]:
    """PIE's program parameters (``cls``: the ns-3 queue disc whose A and B
    the ``attrs`` set)."""
    return {
        "pieTarget": q["target_s"],
        "pieTupdate": q["t_update_s"],
        "pieMaxBurst": q["max_burst_s"],
        "pieDqRate": False,
        "attrs": f"ns3::{cls}::A={q['alpha']};ns3::{cls}::B={q['beta']}",
    }


def ns3_params(d: dict[str, Any]) -> dict[str, Any]:
    """The ns-3 dumbbell program's parameters (``satqm.validation.ns3.run.PARAMS``
    names) for a description."""
    b, a, t, q = d["bottleneck"], d["access"], d["tcp"], d["aqm"]
    if t["recovery"] not in ("newreno", "sack"):
        raise ValueError(f"ns-3 comparison supports newreno and sack, not {t['recovery']!r}")
    if t["cc_params"] != CC_PARAMS[t["cc"]]:
        raise ValueError(f"{t['cc']}: ns-3 runs with {CC_PARAMS[t['cc']]}, not {t['cc_params']}")
    if not t["handshake"]:
        raise ValueError("ns-3 always does the SYN exchange: handshake must be true")
    p: dict[str, Any] = {
        "nFlows": d["flows"],
        "bottleneckRate": b["rate_bps"],
        "bottleneckDelay": b["delay_s"],
        "accessRate": a["rate_bps"],
        "accessDelays": [float(x) for x in a["delays_s"]],
        "accessDelayRx": float(a["rx_delay_s"]),
        # satqm counts waiting packets; ns-3 holds queue disc + 1 device packet
        "bufferPackets": int(b["buffer_packets"]) - 1,
        "deviceQueuePackets": 1,
        "queueDisc": q["kind"],
        "tcp": NS3_CC[t["cc"]],
        "recovery": "classic",
        "sack": t["recovery"] == "sack",
        "mss": t["mss"],
        "initialCwnd": t["initial_window"],
        "delAckCount": 2 if t["delayed_ack"] else 1,
        "delAckTimeout": t["delayed_ack_timeout_s"],
        "minRto": t["min_rto_s"],
        "initialRto": t["initial_rto_s"],
        "clockGranularity": 0.001,
        "windowScaling": t["window_scaling"],
        "timestamps": False,
        "limitedTransmit": False,
        "pacing": bool(t["pacing"]),
        "ecn": bool(t["ecn"]),
        "rcvBuf": t["receive_buffer"],
        "sndBuf": t["receive_buffer"],
        "errorRate": b["loss"],
        "duration": d["duration_s"],
        "sampleInterval": d["sample_interval_s"],
        "warmup": d["warmup_s"],
        "startTimes": list(d["starts_s"]),
        "seed": d["seed"],
        "run": 1,
        "cwndLog": False,
    }
    kind = q["kind"]
    if kind in ("red", "ared"):
        p.update(
            minTh=q["min_th"],
            maxTh=q["max_th"],
            maxP=q["max_p"],
            packetMode=True,
            wait=False,
            meanPktSize=q["mean_packet_size"],
        )
        if q.get("mode") == "mark":
            p.update(redUseEcn=True, redHardDrop=False)
        if is_step_marker(q):
            # ns-3 counts its queue disc, one packet short of satqm's waiting
            # packets: K - 1 there is K here
            p.update(minTh=q["min_th"], maxTh=q["min_th"])
        if kind == "red":
            p.update(qW=q["w_q"], gentle=q["gentle"])
        else:
            p.update(
                qW=q.get("w_q", 0.0),  # 0: ns-3's 1 - exp(-1/C), as satqm's ared default
                gentle=True,
                aredAuto=False,
                aredAdaptMaxP=True,
                aredInterval=q["interval_s"],
                aredAlpha=q["alpha"],
                aredBeta=q["beta"],
                aredTop=0.5,
                aredBottom=0.01,
            )
    elif kind == "pie":
        p.update(_ns3_pie(q, "PieQueueDisc"))
    elif kind == "codel":
        p.update(codelTarget=q["target_s"], codelInterval=q["interval_s"])
    elif kind == "fq_codel":
        if q.get("ce_threshold_s") is not None:
            raise ValueError("the ns-3 comparison runs FQ-CoDel without ce_threshold")
        p.update(
            codelTarget=q["target_s"],
            codelInterval=q["interval_s"],
            fqFlows=q["flows"],
            fqQuantum=q["quantum"],
            fqDropBatch=q["drop_batch"],
            fqMinBytes=q["mtu"],
            fqUseEcn=q.get("mode", "mark") == "mark",
        )
    elif kind in ("fq_pie", "fq_cobalt"):
        if q.get("ce_threshold_s") is not None:
            raise ValueError(f"the ns-3 comparison runs {kind} without ce_threshold")
        if kind == "fq_pie" and q.get("overflow") != "fattest":
            raise ValueError("ns-3's FqPieQueueDisc drops from the fattest queue")
        p.update(
            fqFlows=q["flows"],
            fqQuantum=q["quantum"],
            fqDropBatch=q["drop_batch"],
            fqUseEcn=q.get("mode", "mark") == "mark",
        )
        if kind == "fq_pie":
            p.update(_ns3_pie(q, "FqPieQueueDisc"))
        else:
            p.update(codelTarget=q["target_s"], codelInterval=q["interval_s"])
    # experiments only: ns-3 settings toggled on one side (docs/validation.md)
    p.update(d.get("ns3_extra", {}))
    return p


# ----- reading both back (for the consistency test and the report) -------------------


def _time(q: Any) -> float:
    return parse_quantity(q, "time")


def _toml_pie(aqm: dict[str, Any]) -> dict[str, Any]:
    """PIE's compared parameters from an ``[[aqm]]`` table (satqm's defaults
    where a key is absent)."""
    return {
        "target_s": _time(aqm.get("target", "15ms")),
        "t_update_s": _time(aqm.get("t_update", "15ms")),
        "alpha": float(aqm.get("alpha", 0.125)),
        "beta": float(aqm.get("beta", 1.25)),
        "max_burst_s": _time(aqm.get("max_burst", "150ms")),
        "mean_packet_size": int(aqm.get("mean_packet_size", 1500)),
    }


def _toml_fq(aqm: dict[str, Any], overflow: str, mode: str) -> dict[str, Any]:
    """FQ-PIE's and FQ-COBALT's flow-queuing parameters from an ``[[aqm]]``
    table (satqm's defaults where a key is absent: ``overflow`` and ``mode``
    differ between the two)."""
    return {
        "flows": int(aqm.get("flows", 1024)),
        "quantum": int(aqm.get("quantum", 1514)),
        "overflow": aqm.get("overflow", overflow),
        "drop_batch": int(aqm.get("drop_batch", 64)),
        "ecn_marks": aqm.get("mode", mode) == "mark",
    }


def params_from_toml(text: str) -> dict[str, Any]:
    """The compared parameters, read from a generated satqm scenario."""
    doc = tomllib.loads(text)
    sim, topo, tcp = doc["simulation"], doc["topology"], doc["tcp"]
    b = topo["bottleneck"]
    aqm = (doc.get("aqm") or [{"kind": "droptail"}])[0]
    flows = int(topo["pairs"])
    delays = topo["access"]["delay"]
    starts = [0.0] * flows
    for tr in doc["traffic"]:
        starts[int(tr["pairs"])] = _time(tr["start"])
    out: dict[str, Any] = {
        "flows": flows,
        "duration_s": _time(sim["duration"]),
        "warmup_s": _time(sim["warmup"]),
        "sample_interval_s": _time(sim["sample_interval"]),
        "bottleneck_rate_bps": parse_quantity(b["rate"], "rate"),
        "bottleneck_delay_s": _time(b["delay"]),
        "buffer_waiting_packets": int(b["buffer"]) + int(b.get("device_queue", 0)),
        "loss": float(b.get("loss", 0.0)),
        "access_rate_bps": parse_quantity(topo["access"]["rate"], "rate"),
        "access_delays_s": [_time(x) for x in delays],
        "rx_delay_s": _time(topo["receiver_access"]["delay"]),
        "sack": tcp["recovery"] == "sack",
        "mss": int(tcp["mss"]),
        "initial_window": int(tcp["initial_window"]),
        "delayed_ack": bool(tcp["delayed_ack"]),
        "delayed_ack_timeout_s": _time(tcp["delayed_ack_timeout"]),
        "min_rto_s": _time(tcp["min_rto"]),
        "initial_rto_s": _time(tcp["initial_rto"]),
        "window_scaling": bool(tcp["window_scaling"]),
        "receive_buffer": int(parse_quantity(tcp["receive_buffer"], "bytes")),
        "starts_s": starts,
        "aqm": aqm["kind"],
    }
    cc = tcp.get("cc", "reno")
    cc = cc if isinstance(cc, dict) else {"kind": cc}
    ecn = tcp.get("ecn", False)
    out.update(
        cc=cc["kind"],
        cc_params={k: v for k, v in cc.items() if k != "kind"},
        ecn=ecn is not False and ecn != "off",
        pacing=bool(tcp.get("pacing", cc["kind"] == "bbr")),
    )
    kind = aqm["kind"]
    if kind in ("red", "ared"):
        out.update(
            ecn_marks=aqm.get("mode", "drop") == "mark",
            min_th=float(aqm["min_th"]),
            max_th=float(aqm["max_th"]),
            max_p=float(aqm["max_p"]),
            w_q=float(aqm["w_q"]) if "w_q" in aqm else "auto",
            gentle=bool(aqm.get("gentle", kind == "ared")),
            mean_packet_size=int(aqm["mean_packet_size"]),
            count_spread="p/(1-count p)",
        )
        if kind == "ared":
            out.update(
                alpha=float(aqm["alpha"]),
                beta=float(aqm["beta"]),
                interval_s=_time(aqm["interval"]),
            )
    elif kind == "pie":
        out.update(_toml_pie(aqm))
    elif kind == "codel":
        out.update(
            target_s=_time(aqm["target"]),
            interval_s=_time(aqm["interval"]),
            mtu=int(aqm["mtu"]),
        )
    elif kind == "fq_codel":
        out.update(
            target_s=_time(aqm.get("target", "5ms")),
            interval_s=_time(aqm.get("interval", "100ms")),
            mtu=int(aqm.get("mtu", 1500)),
            flows=int(aqm.get("flows", 1024)),
            quantum=int(aqm.get("quantum", 1514)),
            drop_batch=int(aqm.get("drop_batch", 64)),
            ecn_marks=aqm.get("mode", "mark") == "mark",
        )
    elif kind == "fq_pie":
        out.update(_toml_fq(aqm, "tail", "drop"), **_toml_pie(aqm))
    elif kind == "fq_cobalt":
        out.update(
            _toml_fq(aqm, "fattest", "mark"),
            target_s=_time(aqm.get("target", "5ms")),
            interval_s=_time(aqm.get("interval", "100ms")),
            p_inc=float(aqm.get("p_inc", 1 / 256)),
            p_dec=float(aqm.get("p_dec", 1 / 4096)),
            blue_threshold_s=_time(aqm.get("blue_threshold", "400ms")),
        )
    return out


#: ns-3's congestion-control parameters that satqm's ``[tcp.cc]`` sets, in
#: satqm's names (TcpBbr: ``HighGain`` 2.89, no long-term sampling, an equal
#: RTT sample refreshes min_rtt; TcpCubic and TcpDctcp: satqm's defaults).
NS3_CC_DEFAULTS: dict[str, dict[str, Any]] = {
    "NewReno": {},
    "Cubic": {},
    "Bbr": {"high_gain": 2.89, "long_term": False, "min_rtt_on_equal": True},
    "Dctcp": {},
}


def params_from_ns3(args: list[str]) -> dict[str, Any]:
    """The compared parameters, read from the ns-3 program's command line
    (``--name=value`` items, as :func:`satqm.validation.ns3.run.command_line`
    writes them)."""
    kv: dict[str, str] = {}
    for a in args:
        if not a.startswith("--") or "=" not in a:
            raise ValueError(f"not a --name=value argument: {a!r}")
        k, v = a[2:].split("=", 1)
        kv[k] = v

    def f(k: str) -> float:
        return float(kv[k])

    def i(k: str) -> int:
        return int(kv[k])

    def b(k: str) -> bool:
        return kv[k] == "true"

    def fl(k: str) -> list[float]:
        return [float(x) for x in kv[k].split(",")]

    def pie(cls: str) -> dict[str, Any]:
        """PIE's parameters; ``cls`` names the queue disc of A and B."""
        attrs = dict(x.split("=", 1) for x in kv.get("attrs", "").split(";") if x)
        if b("pieDqRate"):
            raise ValueError("expected PIE with timestamps (no dequeue-rate estimator)")
        return {
            "target_s": f("pieTarget"),
            "t_update_s": f("pieTupdate"),
            "alpha": float(attrs[f"ns3::{cls}::A"]),
            "beta": float(attrs[f"ns3::{cls}::B"]),
            "max_burst_s": f("pieMaxBurst"),
            # the program sets MeanPktSize to the full data packet
            "mean_packet_size": i("mss") + 40,
        }

    ccs = {v: k for k, v in NS3_CC.items()}
    if kv["tcp"] not in ccs or kv["recovery"] != "classic":
        raise ValueError(f"expected one of {', '.join(ccs)} with classic recovery")
    if b("timestamps") or b("limitedTransmit") or i("deviceQueuePackets") != 1:
        raise ValueError("expected timestamps and limited transmit off, a 1-packet device queue")
    flows = i("nFlows")
    if i("delAckCount") not in (1, 2) or f("clockGranularity") != 0.001:
        raise ValueError("unexpected delayed-ACK count or clock granularity")
    if i("rcvBuf") != i("sndBuf"):
        raise ValueError("send and receive buffers differ")
    out: dict[str, Any] = {
        "flows": flows,
        "duration_s": f("duration"),
        "warmup_s": f("warmup"),
        "sample_interval_s": f("sampleInterval"),
        "bottleneck_rate_bps": f("bottleneckRate"),
        "bottleneck_delay_s": f("bottleneckDelay"),
        "buffer_waiting_packets": i("bufferPackets") + i("deviceQueuePackets"),
        "loss": f("errorRate"),
        "access_rate_bps": f("accessRate"),
        "access_delays_s": fl("accessDelays"),
        "rx_delay_s": f("accessDelayRx"),
        "sack": b("sack"),
        "mss": i("mss"),
        "initial_window": i("initialCwnd"),
        "delayed_ack": i("delAckCount") == 2,
        "delayed_ack_timeout_s": f("delAckTimeout"),
        "min_rto_s": f("minRto"),
        "initial_rto_s": f("initialRto"),
        "window_scaling": b("windowScaling"),
        "receive_buffer": i("rcvBuf"),
        "starts_s": fl("startTimes"),
        "aqm": kv["queueDisc"],
        "cc": ccs[kv["tcp"]],
        # ns-3's defaults, in satqm's names (scenarios.CC_PARAMS)
        "cc_params": NS3_CC_DEFAULTS[kv["tcp"]],
        # TcpDctcp turns ECN on itself, TcpBbr pacing
        "ecn": b("ecn") or kv["tcp"] == "Dctcp",
        "pacing": b("pacing") or kv["tcp"] == "Bbr",
    }
    kind = kv["queueDisc"]
    if kind in ("red", "ared"):
        if not b("packetMode"):
            raise ValueError("expected RED in packet mode")
        use_ecn = kv.get("redUseEcn") == "true"
        marks = use_ecn and kv.get("redHardDrop") == "false"
        if use_ecn != marks:
            raise ValueError("expected RED with ECN to mark in the forced region too")
        step = f("minTh") == f("maxTh") and f("qW") == 1.0 and f("maxP") == 1.0
        out.update(
            ecn_marks=marks,
            min_th=f("minTh"),
            # a step marker: ns-3's K - 1 queue-disc packets are K waiting
            max_th=f("maxTh") + 1 if step else f("maxTh"),
            max_p=f("maxP"),
            w_q=f("qW") if f("qW") > 0 else "auto",
            gentle=b("gentle"),
            mean_packet_size=i("meanPktSize"),
            count_spread="p/(1-count p)" if not b("wait") else "wait",
        )
        if kind == "ared":
            if b("aredAuto") or not b("aredAdaptMaxP"):
                raise ValueError("expected ARED with the given thresholds and AdaptMaxP")
            out.update(
                alpha=f("aredAlpha"),
                beta=f("aredBeta"),
                interval_s=f("aredInterval"),
            )
    elif kind == "pie":
        out.update(pie("PieQueueDisc"))
    elif kind == "codel":
        out.update(
            target_s=f("codelTarget"),
            interval_s=f("codelInterval"),
            mtu=i("mss") + 40,  # the program sets MinBytes to the full data packet
        )
    elif kind == "fq_codel":
        out.update(
            target_s=f("codelTarget"),
            interval_s=f("codelInterval"),
            mtu=i("fqMinBytes"),
            flows=i("fqFlows"),
            # 0: the device's MTU, 1500 bytes (the program never fragments)
            quantum=i("fqQuantum") or 1500,
            drop_batch=i("fqDropBatch"),
            ecn_marks=b("fqUseEcn"),
        )
    elif kind in ("fq_pie", "fq_cobalt"):
        out.update(
            flows=i("fqFlows"),
            quantum=i("fqQuantum") or 1500,
            overflow="fattest",  # FqPieDrop / FqCobaltDrop
            drop_batch=i("fqDropBatch"),
            ecn_marks=b("fqUseEcn"),
        )
        if kind == "fq_pie":
            out.update(pie("FqPieQueueDisc"))
        else:
            out.update(
                target_s=f("codelTarget"),
                interval_s=f("codelInterval"),
                # CobaltQueueDisc's defaults, which FqCobaltQueueDisc keeps
                p_inc=1 / 256,
                p_dec=1 / 4096,
                blue_threshold_s=0.4,
            )
    return out
