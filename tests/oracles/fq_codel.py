"""FQ-CoDel (RFC 8290) with one CoDel instance per flow queue (RFC 8289), as a
queue discipline: it holds the packets, and the replay drives it with
``enqueue`` and ``dequeue`` operations (``satqm._core.qdisc_replay``).

Where RFC 8290 is loose, the details follow Linux's ``net/sched/sch_fq_codel.c``
and ``include/net/codel_impl.h``:

* the drop batch (``fq_codel_drop``): when the qdisc holds more than
  ``limit_packets`` packets after an enqueue, the bucket with the largest
  backlog in bytes (ties: the lowest index, a strict ``>`` scan) loses
  packets from its head until the bytes dropped reach half its backlog or
  ``drop_batch`` packets were dropped (at least one); the bucket keeps its
  place in its list even if emptied, and its CoDel ``count`` grows by the
  packets dropped ("tell codel to increase its signal strength also");
* a bucket whose deficit is ``<= 0`` gets a quantum and goes to the tail of
  the old list;
* a bucket of the new list that CoDel finds empty goes to the tail of the
  old list only if the old list is not empty, else it leaves the lists;
* CoDel's byte check compares the *whole qdisc's* backlog (after removing the
  packet at hand) with ``mtu``;
* ECN (``mode = "mark"``): a congestion signal on an ECN-capable packet
  (ECT(0), ECT(1) or CE) marks it instead of dropping it, and a mark ends the
  drop loop (the marked packet is sent);
* ``ce_threshold``: a packet leaving with a sojourn time strictly above the
  threshold is CE-marked if ECN-capable (with ``ce_threshold_ect1``: only
  ECT(1), the L4S selector).

CoDel follows RFC 8289's pseudocode where Linux differs: ``ok_to_drop`` once
``now >= first_above_time``, and every ``dodequeue`` that finds the flow
queue empty resets ``first_above_time``. :data:`VARIANTS` names these and the
other documented departures between RFC 8290 and Linux; they exist only so
that a test can check the traces tell them apart.

Times are integer nanoseconds; the control law rounds ``interval /
sqrt(count)`` to the nearest ns, half away from zero. Packet ids are the
0-based index of the enqueue among the enqueue operations.

``hits`` counts the branches taken (see :data:`BRANCHES`).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from . import qdisc_params_from_toml, qdisc_spec_toml, to_ns

ECN_CODEPOINTS = ("not-ect", "ect0", "ect1", "ce")

#: Every branch of the oracle, for the coverage assertion.
BRANCHES = (
    # enqueue
    "enq_new_flow",  # the bucket was in no list: appended to new_flows
    "enq_active",  # the bucket was already in a list
    "overlimit",  # more than limit_packets: a drop batch
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
    # CoDel's dodequeue
    "dodequeue_empty",  # the flow queue is empty: first_above reset
    "below_target",  # sojourn < target: first_above reset
    "below_mtu",  # sojourn >= target but qdisc backlog <= mtu: reset
    "first_above_set",  # first time above: first_above = now + interval
    "above_waiting",  # above, now < first_above
    "ok_to_drop",  # above for at least interval
    # CoDel's dequeue
    "codel_empty",  # no packet at all: dropping = False
    "leave",  # dropping, the packet is not ok to drop
    "dropping_wait",  # dropping, ok, now < drop_next
    "loop_mark",  # drop loop: ECN-capable packet marked, loop ends
    "loop_drop",  # drop loop: packet dropped
    "loop_drop_again",  # a second signal within one dequeue's loop
    "loop_leave",  # after a loop drop the next packet is not ok: leave
    "loop_leave_empty",  # ... because the flow queue emptied
    "loop_reschedule",  # after a loop drop: drop_next = control_law(drop_next)
    "enter_mark",  # entering the dropping state with a mark
    "enter_drop",  # entering the dropping state with a drop
    "enter_drop_empty",  # ... which emptied the flow queue
    "enter_count1",  # entering: count = 1
    "enter_reuse",  # entering: count = delta (re-entry within 16 intervals)
    "drop_not_ect_in_mark_mode",  # mode = "mark", packet not ECN-capable: dropped
    # ce_threshold
    "ce_threshold_mark",  # sojourn > ce_threshold, ECN-capable: CE
    "ce_threshold_not_capable",  # sojourn > ce_threshold, packet not eligible
    "ce_threshold_after_codel",  # both would apply: reported as "codel"
)


#: Documented departures from the semantics above, selectable for tests that
#: check the traces tell them apart (never used for the reference outputs):
VARIANTS = {
    # RFC 8290 says nothing of CoDel's count on a drop batch; sch_fq_codel.c's
    # fq_codel_drop() adds the packets it dropped to it (the default here)
    "batch_keeps_count": "the drop batch leaves the bucket's CoDel count alone",
    # RFC 8290 section 4.2: an empty bucket taken from the new list always goes to
    # the old list (Linux: only if the old list is not empty)
    "rfc_new_to_old": "an empty new bucket always moves to the old list",
    # RFC 8290 section 4.2: a bucket with a "negative" deficit gets a quantum
    # (Linux, fq_codel_dequeue: deficit <= 0)
    "rfc_negative_deficit": "a quantum is added only when the deficit is < 0",
    # codel_impl.h, codel_should_drop(): codel_time_after(now, first_above_time)
    "strict_first_above": "ok to drop only when now > first_above",
    # codel_impl.h, codel_dequeue(): an empty queue at the first dequeue_func()
    # clears only dropping, not first_above_time
    "keep_first_above_when_empty": "an empty flow queue keeps first_above",
}


def round_half_away(x: float) -> int:
    """Round to the nearest integer, half away from zero (Rust's ``f64::round``)."""
    if x < 0:
        return -round_half_away(-x)
    r = math.floor(x)
    return int(r) + (1 if x - r >= 0.5 else 0)


@dataclass
class Packet:
    id: int
    size: int
    t: int  # enqueue time, ns
    ecn: str
    bucket: int


@dataclass
class Flow:
    """One bucket: its FIFO, DRR deficit and CoDel variables."""

    q: deque = field(default_factory=deque)
    backlog: int = 0  # bytes
    deficit: int = 0
    first_above: int | None = None  # ns
    drop_next: int = 0  # ns
    count: int = 0
    lastcount: int = 0
    dropping: bool = False
    where: str | None = None  # "new", "old" or None


class FqCoDel:
    kind = "fq_codel"
    defaults: dict[str, Any] = {
        "flows": 1024,
        "quantum": 1514,
        "target": 0.005,
        "interval": 0.100,
        "mtu": 1500,
        "drop_batch": 64,
        "mode": "mark",
        "ce_threshold": None,
        "ce_threshold_ect1": False,
    }
    #: parameters given in seconds, held as integer ns
    time_params = ("target", "interval", "ce_threshold")

    def __init__(self, params: dict, limit_packets: int, variants: frozenset = frozenset()):
        unknown_v = sorted(set(variants) - set(VARIANTS))
        if unknown_v:
            raise ValueError(f"fq_codel: unknown variant(s) {unknown_v}")
        self.variants = frozenset(variants)
        params = dict(params)
        params.pop("kind", None)
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"fq_codel: unknown parameter(s) {unknown}")
        self.given = dict(params)
        p = {**self.defaults, **params}
        for k in self.time_params:
            if p[k] is not None:
                p[k] = to_ns(p[k])
        if p["mode"] not in ("mark", "drop"):
            raise ValueError(f"fq_codel: mode must be 'mark' or 'drop', not {p['mode']!r}")
        self.p = p
        self.n_flows = int(p["flows"])
        self.quantum = int(p["quantum"])
        self.target = int(p["target"])
        self.interval = int(p["interval"])
        self.mtu = int(p["mtu"])
        self.drop_batch = int(p["drop_batch"])
        self.mark_mode = p["mode"] == "mark"
        self.ce_threshold: int | None = p["ce_threshold"]
        self.ce_ect1 = bool(p["ce_threshold_ect1"])
        self.limit = int(limit_packets)
        self.flows = [Flow() for _ in range(self.n_flows)]
        self.new_flows: deque[int] = deque()
        self.old_flows: deque[int] = deque()
        self.packets = 0  # total queued
        self.bytes = 0
        self.next_id = 0
        self.now = 0
        self.hits: Counter[str] = Counter()

    def hit(self, branch: str) -> None:
        self.hits[branch] += 1

    # -- the replay interface -------------------------------------------
    def apply(self, op: dict) -> dict:
        if op["op"] == "enqueue":
            return self.enqueue(op["t"], op["bucket"], op["size"], op["ecn"])
        if op["op"] == "dequeue":
            return self.dequeue(op["t"])
        raise ValueError(f"unknown op {op!r}")

    def enqueue(self, t: int, bucket: int, size: int, ecn: str) -> dict:
        if t < self.now:
            raise ValueError("operations out of time order")
        if not 0 <= bucket < self.n_flows:
            raise ValueError(f"bucket {bucket} outside 0..{self.n_flows - 1}")
        if ecn not in ECN_CODEPOINTS:
            raise ValueError(f"unknown ECN codepoint {ecn!r}")
        self.now = t
        pkt = Packet(self.next_id, int(size), t, ecn, bucket)
        self.next_id += 1
        f = self.flows[bucket]
        f.q.append(pkt)
        f.backlog += pkt.size
        self.packets += 1
        self.bytes += pkt.size
        if f.where is None:
            f.where = "new"
            f.deficit = self.quantum
            self.new_flows.append(bucket)
            self.hit("enq_new_flow")
        else:
            self.hit("enq_active")
        dropped: list[int] = []
        if self.packets > self.limit:
            self.hit("overlimit")
            dropped = self._drop_batch(bucket)
        return {"dropped": dropped}

    def _drop_batch(self, arriving: int) -> list[int]:
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
            pkt = f.q.popleft()
            f.backlog -= pkt.size
            self.packets -= 1
            self.bytes -= pkt.size
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
        if "batch_keeps_count" not in self.variants:
            f.count += len(dropped)
        return dropped

    def dequeue(self, t: int) -> dict:
        if t < self.now:
            raise ValueError("operations out of time order")
        self.now = t
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
            if f.deficit < 0 if "rfc_negative_deficit" in self.variants else f.deficit <= 0:
                f.deficit += self.quantum
                lst.popleft()
                self.old_flows.append(b)
                f.where = "old"
                self.hit("deficit_refill")
                continue
            pkt, mark = self._codel_dequeue(f, t, dropped)
            if pkt is None:
                lst.popleft()
                if name == "new" and (self.old_flows or "rfc_new_to_old" in self.variants):
                    self.old_flows.append(b)
                    f.where = "old"
                    self.hit("empty_new_to_old")
                else:
                    f.where = None
                    self.hit("empty_new_removed" if name == "new" else "empty_old_removed")
                continue
            f.deficit -= pkt.size
            self.hit("serve_new" if name == "new" else "serve_old")
            return {"dropped": dropped, "sent": pkt.id, "mark": mark}

    # -- CoDel (RFC 8289 section 5) ---------------------------------------
    def _control_law(self, t: int, count: int) -> int:
        return t + round_half_away(self.interval / math.sqrt(count))

    def _ecn_capable(self, pkt: Packet) -> bool:
        return pkt.ecn != "not-ect"

    def _dodequeue(self, f: Flow, now: int) -> tuple[Packet | None, bool]:
        if not f.q:
            f.first_above = None
            self.hit("dodequeue_empty")
            return None, False
        pkt = f.q.popleft()
        f.backlog -= pkt.size
        self.packets -= 1
        self.bytes -= pkt.size
        sojourn = now - pkt.t
        if sojourn < self.target:
            f.first_above = None
            self.hit("below_target")
            return pkt, False
        if self.bytes <= self.mtu:
            f.first_above = None
            self.hit("below_mtu")
            return pkt, False
        if f.first_above is None:
            f.first_above = now + self.interval
            self.hit("first_above_set")
            return pkt, False
        if now > f.first_above if "strict_first_above" in self.variants else now >= f.first_above:
            self.hit("ok_to_drop")
            return pkt, True
        self.hit("above_waiting")
        return pkt, False

    def _signal_marks(self, pkt: Packet) -> bool:
        """Whether CoDel's signal on ``pkt`` is a mark (else a drop)."""
        if self.mark_mode and self._ecn_capable(pkt):
            return True
        if self.mark_mode:
            self.hit("drop_not_ect_in_mark_mode")
        return False

    def _codel_dequeue(
        self, f: Flow, now: int, dropped: list[int]
    ) -> tuple[Packet | None, str | None]:
        if not f.q and "keep_first_above_when_empty" in self.variants:
            f.dropping = False
            return None, None
        pkt, ok = self._dodequeue(f, now)
        if pkt is None:
            f.dropping = False
            self.hit("codel_empty")
            return None, None
        mark: str | None = None
        if f.dropping:
            if not ok:
                f.dropping = False
                self.hit("leave")
            elif now < f.drop_next:
                self.hit("dropping_wait")
            else:
                signals = 0
                while f.dropping and now >= f.drop_next:
                    f.count += 1
                    signals += 1
                    if signals == 2:
                        self.hit("loop_drop_again")
                    if self._signal_marks(pkt):
                        mark = "codel"
                        f.drop_next = self._control_law(f.drop_next, f.count)
                        self.hit("loop_mark")
                        break
                    dropped.append(pkt.id)
                    self.hit("loop_drop")
                    pkt, ok = self._dodequeue(f, now)
                    if not ok:
                        f.dropping = False
                        self.hit("loop_leave_empty" if pkt is None else "loop_leave")
                    else:
                        f.drop_next = self._control_law(f.drop_next, f.count)
                        self.hit("loop_reschedule")
        elif ok:
            if self._signal_marks(pkt):
                mark = "codel"
                self.hit("enter_mark")
            else:
                dropped.append(pkt.id)
                self.hit("enter_drop")
                pkt, _ = self._dodequeue(f, now)
                if pkt is None:
                    self.hit("enter_drop_empty")
            f.dropping = True
            delta = f.count - f.lastcount
            if delta > 1 and now - f.drop_next < 16 * self.interval:
                f.count = delta
                self.hit("enter_reuse")
            else:
                f.count = 1
                self.hit("enter_count1")
            f.drop_next = self._control_law(now, f.count)
            f.lastcount = f.count
        if pkt is None:
            return None, None
        if self.ce_threshold is not None and now - pkt.t > self.ce_threshold:
            eligible = pkt.ecn == "ect1" if self.ce_ect1 else self._ecn_capable(pkt)
            if not eligible:
                self.hit("ce_threshold_not_capable")
            elif mark == "codel":
                self.hit("ce_threshold_after_codel")
            else:
                mark = "ce_threshold"
                self.hit("ce_threshold_mark")
        return pkt, mark

    # -- inspection --------------------------------------------------------
    def backlog_of(self, bucket: int) -> int:
        return self.flows[bucket].backlog


def replay(
    params: dict, limit_packets: int, ops: list[dict], variants: frozenset = frozenset()
) -> tuple[list[dict], FqCoDel]:
    """Run ``ops`` through a fresh oracle: the outputs, and the oracle."""
    q = FqCoDel(params, limit_packets, variants)
    return [q.apply(op) for op in ops], q


def spec_toml(params: dict) -> str:
    """The qdisc table as TOML (see :func:`qdisc_spec_toml`)."""
    return qdisc_spec_toml(FqCoDel, params)


def params_from_toml(table: dict) -> dict:
    """The inverse of :func:`spec_toml`."""
    return qdisc_params_from_toml(FqCoDel, table)
