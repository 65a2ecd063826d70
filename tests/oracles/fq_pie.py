"""FQ-PIE (Linux ``net/sched/sch_fq_pie.c``) with one PIE (RFC 8033, satqm's
reading: ``pie.py``) per flow queue, as a queue discipline replayed through
``satqm._core.qdisc_replay`` (enqueue, dequeue and update operations).

This module also holds what the flow-queuing disciplines here share
(``cobalt.py`` builds on it): the packet, the SplitMix64 draws, and
:class:`FlowQueues`, the buckets with Linux's two-list deficit round robin
(as in ``fq_codel.py``) and the fattest-queue drop batch of
``fq_codel_drop()``.

The flow-queuing structure
==========================

``flows`` buckets, given explicitly by the replay (no hashing). A bucket in
no list joins the tail of the *new* list with a deficit of ``quantum`` when
a packet is added to it. A dequeue serves the head of the new list, else of
the old list: a bucket whose deficit is ``<= 0`` gets one more quantum and
moves to the tail of the old list, and the scheduler looks again; a bucket
found empty leaves its list, except that a bucket of the new list moves to
the tail of the old list when the old list is not empty. A sent packet
takes its size from its bucket's deficit.

Drop batch (``overflow = "fattest"``): after an arrival was added, while the
discipline holds more than ``limit_packets`` packets, the bucket with the
largest backlog in bytes (ties: the lowest index) loses packets from its
head until the bytes dropped reach half its backlog or ``drop_batch``
packets were dropped (at least one). FQ-PIE tells its PIE nothing of it.

Random draws: the discipline owns one SplitMix64 generator whose state
starts at 0 in the replay; a draw is ``state += 0x9E3779B97F4A7C15``, the
SplitMix64 output ``z`` of the new state, ``u = (z >> 11) * 2^-53``.

FQ-PIE
======

Parameters: ``flows`` (1024), ``quantum`` (1514), ``overflow`` (``"tail"``,
Linux's; or ``"fattest"``), ``drop_batch`` (64, only with ``"fattest"``),
PIE's ``target`` (15 ms), ``t_update`` (15 ms), ``alpha`` (0.125),
``beta`` (1.25), ``max_burst`` (150 ms), ``mean_packet_size`` (1500),
``mark_ecn_threshold`` (0.1); ``ce_threshold`` (off),
``ce_threshold_ect1`` (false); ``mode`` ``"drop"`` (default, as Linux's
``ecn`` off) or ``"mark"``.

* **Enqueue** of a packet for bucket ``b`` at ``t``. With ``overflow =
  "tail"``: when the discipline already holds ``limit_packets`` packets the
  arrival is dropped (no draw, no PIE). Otherwise exactly one uniform ``u``
  is drawn (for every arrival that gets this far, also when PIE's early
  tests pass it), and bucket ``b``'s PIE decides with ``b``'s own backlog
  (before the arrival) as its queue. A ``mark`` verdict CE-marks the
  packet if ``mode = "mark"`` and it is ECN-capable (ECT(0), ECT(1), CE);
  the packet is queued and the enqueue step reports ``mark = "pie"``.
  Otherwise a ``mark`` or a ``drop`` verdict drops the arrival. Admitted
  packets join bucket ``b``; with ``"fattest"``, the drop batch follows.
* **Dequeue** at ``t``: the scheduler's bucket gives its head packet;
  the bucket's PIE records the sojourn ``t - enqueue time`` (its
  ``on_departure``), 0 if the bucket is left empty. Then ``ce_threshold``: a packet whose sojourn is
  strictly above it and that is ECN-capable (with ``ce_threshold_ect1``:
  that carries ECT(1)) is CE-marked, ``mark = "ce_threshold"``. No drops at
  dequeue.
* **Update** (the replay's ``update``; every ``t_update`` in a run): every
  bucket's PIE runs its periodic update with that bucket's packets as the
  queue (``qdelay`` is 0 for an empty bucket, else the last sojourn).

Outputs (every operation): ``{"dropped": [ids], "sent": id | None, "mark":
label | None}``. Packet ids are the 0-based index of the enqueue among the
enqueue operations (a dropped arrival also has one).

An edge this module decides (the sources do not have it): with
``"fattest"``, a PIE-marked arrival that the same step's drop batch drops
(its bucket was the fattest and the batch reached it) is reported as dropped
and not as marked.

Where the sources differ (notes; :data:`VARIANTS` makes some selectable so
that a test can check the traces tell them apart)
-----------------------------------------------------------------------------

* ``pie_drop_early()`` (``net/sched/pie.c``) draws a random number only when
  the burst allowance, the low-delay test and the two-MTU test have all let
  the packet through to the random test, and de-randomises with
  ``accu_prob`` (never drop below 0.85 accumulated probability, always above
  8.5). satqm draws once for every admitted-to-PIE arrival and has no
  de-randomisation (``"draw_only_when_tested"`` draws only at the random
  test, without ``accu_prob``).
* ``pie_process_dequeue()`` sets the flow's ``qdelay`` to 0 when the
  departing packet leaves the flow's backlog empty, and so does satqm's
  PIE (and ns-3's ``PieQueueDisc``); reading 0 only if the bucket is empty
  at the update, else the last sojourn, is the variant
  ``"qdelay_zero_only_when_empty_at_update"``.
* Linux decrements the burst allowance at each dequeue by the time since the
  previous dequeue, and resets PIE (``pie_vars_init``) only when the
  departure-rate estimate is positive; satqm's PIE decrements and resets at
  the update (RFC 8033). Linux skips the probability update when ``qdelay``
  is 0 but the backlog is not. Linux's two-packet test is ``backlog < 2 *
  mtu``; satqm's ``q_bytes <= 2 * mean_packet_size``. These are ``pie.py``'s
  choices, used here unchanged.
* Linux's FQ-PIE has no ``ce_threshold`` and no ``"fattest"`` overflow (it
  drops the arrival when ``qlen >= limit``); both are satqm's additions.
  Linux also drops on ``memory_limit`` (32 MB of truesize), which satqm
  does not model.
* Linux's ``fq_pie_timer`` updates at most 2048 flows per timer run; with
  ``flows <= 2048`` that is all of them, as here.
* A reading no source takes: the burst allowance held in f64 seconds, where
  0.15 - 10 * 0.015 leaves 1.04e-17 s and the allowance lasts one update
  longer than ``max_burst / t_update`` (``"f64_burst_allowance"``; satqm
  holds it in whole nanoseconds).

``hits`` counts the branches taken (see :data:`BRANCHES`); the per-bucket
PIE's own branches (``pie.py``) are counted with the prefix ``pie_``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from . import qdisc_params_from_toml, qdisc_spec_toml, to_ns
from .pie import Pie

ECN_CODEPOINTS = ("not-ect", "ect0", "ect1", "ce")

MASK64 = (1 << 64) - 1

#: Every branch of the FQ-PIE oracle, for the coverage assertion.
BRANCHES = (
    # enqueue
    "enq_new_flow",  # the bucket was in no list: appended to new_flows
    "enq_active",  # the bucket was already in a list
    "tail_drop",  # overflow "tail": limit reached, arrival dropped, no draw
    "pie_marked",  # PIE's mark verdict, mode "mark", ECN-capable: CE, queued
    "pie_mark_dropped_not_ect",  # PIE's mark verdict, mode "mark", not-ECT
    "pie_mark_dropped_drop_mode",  # PIE's mark verdict, mode "drop"
    "pie_drop_dropped",  # PIE's drop verdict (p above mark_ecn_threshold)
    "overlimit",  # overflow "fattest": more than limit_packets, a batch
    "batch_own_bucket",  # the fattest bucket is the arriving packet's
    "batch_other_bucket",  # the fattest bucket is another one
    "batch_tie_lowest",  # several buckets share the largest backlog
    "batch_stop_threshold",  # stopped at half the bucket's backlog
    "batch_stop_count",  # stopped at drop_batch packets
    "batch_empties_bucket",  # the batch emptied the bucket (it stays listed)
    # scheduler
    "deq_idle",  # every list empty: nothing sent
    "deficit_refill",  # deficit <= 0: one more quantum, to the old tail
    "serve_new",  # a packet sent from the new list
    "serve_old",  # a packet sent from the old list
    "empty_new_to_old",  # new bucket found empty, old list not empty
    "empty_new_removed",  # new bucket found empty, old list empty
    "empty_old_removed",  # old bucket found empty
    # ce_threshold
    "ce_threshold_mark",  # sojourn > ce_threshold, eligible: CE
    "ce_threshold_not_capable",  # sojourn > ce_threshold, packet not eligible
    "ce_threshold_pie_marked",  # ... on a packet PIE marked at its enqueue
    # update
    "update_busy",  # a bucket with packets updated
    "update_empty",  # an empty bucket updated (qdelay 0)
    "update_at_rest",  # an empty bucket at rest: the update changed nothing
    # the per-bucket PIE (pie.py's branches)
    "pie_pass_burst",
    "pie_pass_low_delay",
    "pie_pass_two_packets",
    "pie_mark",
    "pie_drop",
    "pie_pass_random",
    "pie_scale_2048",
    "pie_scale_512",
    "pie_scale_128",
    "pie_scale_32",
    "pie_scale_8",
    "pie_scale_2",
    "pie_scale_1",
    "pie_cap_002",
    "pie_over_250ms",
    "pie_clamp_zero",
    "pie_clamp_one",
    "pie_decay",
    "pie_burst_reset",
    "pie_burst_decrement",
)

#: Branches the traces need not reach: ``update_at_rest_changed`` (an update
#: of an empty bucket at rest changed its state: would make satqm's skipping
#: of such buckets wrong; must never happen) and ``batch_drops_marked_arrival``
#: (see the module docstring's edge).
RARE_BRANCHES = ("update_at_rest_changed", "batch_drops_marked_arrival")

#: Documented departures from the semantics above (Linux's readings), selectable
#: for tests that check the traces tell them apart; never the reference.
VARIANTS = {
    # net/sched/pie.c, pie_drop_early(): prandom only at the random test
    "draw_only_when_tested": "a draw only when PIE reaches its random test",
    # RFC 8033's "0 if the queue is empty" read at the update only: a packet
    # that arrives at an emptied bucket before it brings the last sojourn back
    "qdelay_zero_only_when_empty_at_update": "a departure that empties the "
    "bucket records its sojourn (0 only for a bucket empty at the update)",
    # no source's reading: the
    # burst allowance held as f64 seconds, so that max_burst - 10 * t_update
    # (150 ms, 15 ms) leaves 1.04e-17 s instead of 0 and the allowance runs
    # out one update late; kept to show that this is the only difference
    "f64_burst_allowance": "the burst allowance in f64 seconds",
}


class SplitMix64:
    """The discipline's random draws (see the module docstring)."""

    def __init__(self, state: int = 0):
        self.state = state & MASK64
        self.draws = 0

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self) -> float:
        self.draws += 1
        return (self.next_u64() >> 11) * 2.0**-53


@dataclass
class Packet:
    id: int
    size: int
    t: int  # enqueue time, ns
    capable: bool  # ECT(0), ECT(1) or CE
    ect1: bool  # carries ECT(1)
    ce: bool = False
    marked: str | None = None  # the label of a mark at enqueue

    @classmethod
    def of(cls, pid: int, size: int, t: int, ecn: str) -> Packet:
        if ecn not in ECN_CODEPOINTS:
            raise ValueError(f"unknown ECN codepoint {ecn!r}")
        return cls(pid, int(size), int(t), ecn != "not-ect", ecn == "ect1", ecn == "ce")


@dataclass
class Bucket:
    """One flow queue: its FIFO, its DRR state and its AQM (set by the
    discipline)."""

    q: deque = field(default_factory=deque)
    backlog: int = 0  # bytes
    deficit: int = 0
    where: str | None = None  # "new", "old" or None
    aqm: Any = None


def _empty_out() -> dict:
    return {"dropped": [], "sent": None, "mark": None}


class FlowQueues(ABC):
    """The buckets, the two lists and DRR; subclasses give the AQM."""

    kind = ""
    defaults: dict[str, Any] = {}
    time_params: tuple[str, ...] = ()
    variant_names: dict[str, str] = {}
    #: the mode when the table gives none
    default_mode = "drop"

    def __init__(self, params: dict, limit_packets: int, variants: frozenset = frozenset()):
        unknown_v = sorted(set(variants) - set(self.variant_names))
        if unknown_v:
            raise ValueError(f"{self.kind}: unknown variant(s) {unknown_v}")
        self.variants = frozenset(variants)
        params = dict(params)
        params.pop("kind", None)
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"{self.kind}: unknown parameter(s) {unknown}")
        self.given = dict(params)
        merged = {**self.defaults, **params}
        if merged.get("mode") is None:
            merged["mode"] = self.default_mode
        if merged["mode"] not in ("mark", "drop"):
            raise ValueError(f"{self.kind}: mode must be 'mark' or 'drop', not {merged['mode']!r}")
        overflow = merged.get("overflow", "tail")
        if overflow not in ("tail", "fattest"):
            raise ValueError(f"{self.kind}: overflow must be 'tail' or 'fattest'")
        if overflow == "tail" and "drop_batch" in params:
            # satqm reads drop_batch only with "fattest" (else an unknown key)
            raise ValueError(f"{self.kind}: drop_batch needs overflow = 'fattest'")
        self.seconds = dict(merged)  # as given, times in seconds
        p = dict(merged)
        for k in self.time_params:
            if p.get(k) is not None:
                p[k] = to_ns(p[k])
        self.p = p
        self.n_flows = int(p.get("flows", 1))
        self.quantum = int(p.get("quantum", 1514))
        self.overflow = overflow
        self.drop_batch = int(p.get("drop_batch", 64))
        self.mark_mode = p["mode"] == "mark"
        self.ce_threshold: int | None = p.get("ce_threshold")
        self.ce_ect1 = bool(p.get("ce_threshold_ect1", False))
        self.limit = int(limit_packets)
        self.hits: Counter[str] = Counter()
        self.flows = [Bucket() for _ in range(self.n_flows)]
        for f in self.flows:
            f.aqm = self._new_aqm()
        self.new_flows: deque[int] = deque()
        self.old_flows: deque[int] = deque()
        self.packets = 0
        self.next_id = 0
        self.now = 0
        self.rng = SplitMix64(0)

    def hit(self, branch: str) -> None:
        self.hits[branch] += 1

    # -- given by each discipline (FqPie, cobalt.FqCobalt) ---------------------
    @abstractmethod
    def _new_aqm(self) -> Any: ...

    @abstractmethod
    def _serve(self, f: Bucket, b: int, now: int, dropped: list[int]):
        """The bucket's next packet and its mark label, or ``None`` when the
        bucket is (or became) empty; drops go to ``dropped``."""

    @abstractmethod
    def enqueue(self, t: int, bucket: int, size: int, ecn: str) -> dict: ...

    def update(self, t: int) -> dict:
        self._advance(t)
        return _empty_out()

    # -- the replay interface -------------------------------------------
    def apply(self, op: dict) -> dict:
        if op["op"] == "enqueue":
            return self.enqueue(op["t"], op["bucket"], op["size"], op["ecn"])
        if op["op"] == "dequeue":
            return self.dequeue(op["t"])
        if op["op"] == "update":
            return self.update(op["t"])
        raise ValueError(f"unknown op {op!r}")

    # -- shared pieces ---------------------------------------------------
    def _advance(self, t: int) -> None:
        if t < self.now:
            raise ValueError("operations out of time order")
        self.now = t

    def _arrival(self, t: int, bucket: int, size: int, ecn: str) -> Packet:
        self._advance(t)
        if not 0 <= bucket < self.n_flows:
            raise ValueError(f"bucket {bucket} outside 0..{self.n_flows - 1}")
        pkt = Packet.of(self.next_id, size, t, ecn)
        self.next_id += 1
        return pkt

    def _add(self, b: int, pkt: Packet) -> None:
        f = self.flows[b]
        f.q.append(pkt)
        f.backlog += pkt.size
        self.packets += 1
        if f.where is None:
            f.where = "new"
            f.deficit = self.quantum
            self.new_flows.append(b)
            self.hit("enq_new_flow")
        else:
            self.hit("enq_active")

    def _pop(self, f: Bucket) -> Packet:
        pkt = f.q.popleft()
        f.backlog -= pkt.size
        self.packets -= 1
        return pkt

    def _drop_batch(self, arriving: int) -> tuple[int, list[int]]:
        """``fq_codel_drop()``: the fattest bucket and the ids dropped."""
        self.hit("overlimit")
        fat, most = 0, 0
        for i, f in enumerate(self.flows):
            if f.backlog > most:
                fat, most = i, f.backlog
        if sum(1 for f in self.flows if f.backlog == most) > 1:
            self.hit("batch_tie_lowest")
        self.hit("batch_own_bucket" if fat == arriving else "batch_other_bucket")
        threshold = most >> 1
        f = self.flows[fat]
        dropped: list[int] = []
        length = 0
        while True:
            pkt = self._pop(f)
            length += pkt.size
            dropped.append(pkt.id)
            if len(dropped) >= self.drop_batch:
                self.hit("batch_stop_count")
                break
            if length >= threshold:
                self.hit("batch_stop_threshold")
                break
        if not f.q:
            self.hit("batch_empties_bucket")
        return fat, dropped

    def _ce_threshold(self, pkt: Packet, now: int, mark: str | None) -> str | None:
        """The ``ce_threshold`` mark on a packet leaving at ``now``."""
        if self.ce_threshold is None or now - pkt.t <= self.ce_threshold:
            return mark
        eligible = pkt.ect1 if self.ce_ect1 else pkt.capable
        if not eligible:
            self.hit("ce_threshold_not_capable")
            return mark
        if mark is not None:
            self.hit("ce_threshold_after_" + mark)
            return mark
        if pkt.marked is not None:
            self.hit("ce_threshold_" + pkt.marked + "_marked")
        pkt.ce = True
        self.hit("ce_threshold_mark")
        return "ce_threshold"

    def dequeue(self, t: int) -> dict:
        self._advance(t)
        dropped: list[int] = []
        while True:
            if self.new_flows:
                lst, name = self.new_flows, "new"
            elif self.old_flows:
                lst, name = self.old_flows, "old"
            else:
                self.hit("deq_idle")
                return {"dropped": dropped, "sent": None, "mark": None}
            b = lst[0]
            f = self.flows[b]
            if f.deficit <= 0:
                f.deficit += self.quantum
                lst.popleft()
                self.old_flows.append(b)
                f.where = "old"
                self.hit("deficit_refill")
                continue
            got = self._serve(f, b, t, dropped)
            if got is None:
                lst.popleft()
                if name == "new" and self.old_flows:
                    self.old_flows.append(b)
                    f.where = "old"
                    self.hit("empty_new_to_old")
                else:
                    f.where = None
                    self.hit("empty_new_removed" if name == "new" else "empty_old_removed")
                continue
            pkt, mark = got
            f.deficit -= pkt.size
            self.hit("serve_new" if name == "new" else "serve_old")
            return {"dropped": dropped, "sent": pkt.id, "mark": mark}

    # -- inspection --------------------------------------------------------
    def backlog_of(self, bucket: int) -> int:
        return self.flows[bucket].backlog


class _F64BurstPie(Pie):
    """``pie.py`` with the burst allowance kept in f64 seconds (variant
    ``"f64_burst_allowance"``): the arrival test and the at-rest test read
    that one."""

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        self.burst_s = self.max_burst / 1e9

    def on_timer(self, ev: dict) -> None:
        before = self.burst_allowance
        super().on_timer(ev)
        decremented = max(before - self.t_update, 0)
        if self.burst_allowance == self.max_burst and decremented != self.max_burst:
            self.burst_s = self.max_burst / 1e9  # the reset
        else:
            self.burst_s = max(self.burst_s - self.t_update / 1e9, 0.0)

    def on_arrival(self, ev: dict) -> str:
        held = self.burst_allowance
        self.burst_allowance = 1 if self.burst_s > 0 else 0
        try:
            return super().on_arrival(ev)
        finally:
            self.burst_allowance = held


class _PrefixedHits:
    """Lets every bucket's ``Pie`` count into the discipline's ``hits``
    under ``pie_<branch>``."""

    def __init__(self, hits: Counter):
        self._hits = hits

    def __getitem__(self, k: str) -> int:
        return self._hits["pie_" + k]

    def __setitem__(self, k: str, v: int) -> None:
        self._hits["pie_" + k] = v


PIE_KEYS = (
    "target",
    "t_update",
    "alpha",
    "beta",
    "max_burst",
    "mean_packet_size",
    "mark_ecn_threshold",
)


class FqPie(FlowQueues):
    kind = "fq_pie"
    defaults: dict[str, Any] = {
        "flows": 1024,
        "quantum": 1514,
        "overflow": "tail",
        "drop_batch": 64,
        **Pie.defaults,
        "ce_threshold": None,
        "ce_threshold_ect1": False,
        "mode": None,  # "drop"
    }
    time_params = ("target", "t_update", "max_burst", "ce_threshold")
    variant_names = VARIANTS
    default_mode = "drop"

    def __init__(self, params: dict, limit_packets: int, variants: frozenset = frozenset()):
        self._pie_hits: _PrefixedHits | None = None
        super().__init__(params, limit_packets, variants)
        self.t_update = int(self.p["t_update"])

    def _new_aqm(self) -> Pie:
        if self._pie_hits is None:
            self._pie_hits = _PrefixedHits(self.hits)
        cls = _F64BurstPie if "f64_burst_allowance" in self.variants else Pie
        pie = cls({k: self.seconds[k] for k in PIE_KEYS}, 0, 0)
        pie.hits = self._pie_hits  # type: ignore[assignment]
        return pie

    def update_interval_ns(self) -> int:
        return self.t_update

    # -- enqueue -----------------------------------------------------------
    def _pie_verdict(self, f: Bucket) -> str:
        pie: Pie = f.aqm
        ev = {"q_packets": len(f.q), "q_bytes": f.backlog}
        if "draw_only_when_tested" in self.variants:
            # the early passes of pie.py's on_arrival, without a draw
            if (
                pie.burst_allowance > 0
                or (pie.qdelay_old < pie.target / 2.0 and pie.prob < 0.2)
                or f.backlog <= 2.0 * pie.mps
            ):
                ev["u"] = 1.0  # never used
                return pie.on_arrival(ev)
        ev["u"] = self.rng.uniform()
        return pie.on_arrival(ev)

    def enqueue(self, t: int, bucket: int, size: int, ecn: str) -> dict:
        pkt = self._arrival(t, bucket, size, ecn)
        f = self.flows[bucket]
        if self.overflow == "tail" and self.packets >= self.limit:
            self.hit("tail_drop")
            return {"dropped": [pkt.id], "sent": None, "mark": None}
        verdict = self._pie_verdict(f)
        mark: str | None = None
        if verdict == "mark:early":
            if self.mark_mode and pkt.capable:
                pkt.ce = True
                pkt.marked = mark = "pie"
                self.hit("pie_marked")
            else:
                self.hit(
                    "pie_mark_dropped_not_ect" if self.mark_mode else "pie_mark_dropped_drop_mode"
                )
                return {"dropped": [pkt.id], "sent": None, "mark": None}
        elif verdict == "drop:early":
            self.hit("pie_drop_dropped")
            return {"dropped": [pkt.id], "sent": None, "mark": None}
        elif verdict != "pass":
            raise AssertionError(verdict)
        self._add(bucket, pkt)
        dropped: list[int] = []
        if self.overflow == "fattest" and self.packets > self.limit:
            _, dropped = self._drop_batch(bucket)
            if pkt.id in dropped and mark is not None:
                self.hit("batch_drops_marked_arrival")
                mark = None
        return {"dropped": dropped, "sent": None, "mark": mark}

    # -- dequeue -----------------------------------------------------------
    def _serve(self, f: Bucket, b: int, now: int, dropped: list[int]):
        if not f.q:
            return None
        pkt = self._pop(f)
        sojourn = now - pkt.t
        left = len(f.q)  # what the departure leaves: none, and PIE records 0
        if "qdelay_zero_only_when_empty_at_update" in self.variants:
            left = max(left, 1)  # the sojourn recorded all the same
        f.aqm.on_departure({"sojourn": sojourn, "q_packets": left})
        return pkt, self._ce_threshold(pkt, now, None)

    # -- update ------------------------------------------------------------
    @staticmethod
    def _at_rest(pie: Pie) -> bool:
        full = (
            pie.burst_s == pie.max_burst / 1e9
            if isinstance(pie, _F64BurstPie)
            else pie.burst_allowance == pie.max_burst
        )
        return pie.prob == 0.0 and pie.target > 0 and pie.qdelay_old == 0 and full

    def update(self, t: int) -> dict:
        self._advance(t)
        for f in self.flows:
            pie: Pie = f.aqm
            if f.q:
                self.hit("update_busy")
                pie.on_timer({"q_packets": len(f.q), "q_bytes": f.backlog})
                continue
            self.hit("update_empty")
            if self._at_rest(pie):
                before = (pie.prob, pie.qdelay_old, pie.burst_allowance, pie.last_sojourn)
                before += (getattr(pie, "burst_s", None),)
                pie.on_timer({"q_packets": 0, "q_bytes": 0})
                after = (pie.prob, pie.qdelay_old, pie.burst_allowance, pie.last_sojourn)
                after += (getattr(pie, "burst_s", None),)
                # satqm skips such buckets: that must change nothing
                self.hit("update_at_rest" if after == before else "update_at_rest_changed")
            else:
                pie.on_timer({"q_packets": 0, "q_bytes": 0})
        return _empty_out()


def replay(
    params: dict, limit_packets: int, ops: list[dict], variants: frozenset = frozenset()
) -> tuple[list[dict], FqPie]:
    """Run ``ops`` through a fresh oracle: the outputs, and the oracle."""
    q = FqPie(params, limit_packets, variants)
    return [q.apply(op) for op in ops], q


def spec_toml(params: dict) -> str:
    """The qdisc table as TOML (see :func:`qdisc_spec_toml`)."""
    return qdisc_spec_toml(FqPie, params)


def params_from_toml(table: dict) -> dict:
    """The inverse of :func:`spec_toml`."""
    return qdisc_params_from_toml(FqPie, table)
