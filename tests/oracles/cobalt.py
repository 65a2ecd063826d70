"""COBALT (CoDel + BLUE, CAKE's AQM) on one queue (``kind = "cobalt"``) and
on each flow queue of a flow-queuing scheduler (``kind = "fq_cobalt"``), as
queue disciplines replayed through ``satqm._core.qdisc_replay``.

Written from Linux ``net/sched/sch_cake.c`` (the ``cobalt_*`` functions,
``cake_drop``, ``cake_dequeue``) and ns-3's
``src/traffic-control/model/cobalt-queue-disc.cc`` /
``fq-cobalt-queue-disc.cc``. The flow-queuing structure (two lists, DRR,
the fattest-queue drop batch) and the SplitMix64 draws are those of
``fq_pie.py``.

Parameters
==========

``target`` (5 ms), ``interval`` (100 ms, below 2^32 ns), ``p_inc`` (1/256),
``p_dec`` (1/4096), ``blue_threshold`` (400 ms), ``ce_threshold`` (off),
``ce_threshold_ect1`` (false), ``mode`` (``"mark"``, as CAKE; ``"drop"``
turns ECN off). ``fq_cobalt`` also ``flows`` (1024), ``quantum`` (1514),
``overflow`` (``"fattest"``, or ``"tail"``), ``drop_batch`` (64, only with
``"fattest"``). ``cobalt`` is ``fq_cobalt`` with one flow and ``overflow =
"tail"`` (and takes none of those four keys).

Per-queue state
===============

``count`` (u32, 0), ``rec_inv_sqrt`` (u32, 0xFFFFFFFF), ``drop_next``
(signed ns, 0), ``dropping`` (false), ``p_drop`` (float, 0), ``blue_timer``
(signed ns, 0).

* Newton step (Q0.32): ``invsqrt2 = r*r >> 32``; ``val = (3 << 32) -
  count*invsqrt2`` (u64); ``val >>= 2``; ``r = (val*r mod 2^64) >> 31``,
  truncated to u32. A cache of 16: ``cache[0] = r = 0xFFFFFFFF``, then for
  count 1..15 four Newton steps with that count from the running ``r``.
  ``invsqrt()``: ``r = cache[count]`` below 16, else one Newton step.
* ``control(t) = t + (interval * r >> 32)``.
* ``queue_full(now)`` (an overflow): if ``now - blue_timer > target``:
  ``p_drop = min(p_drop + p_inc, 1)``, ``blue_timer = now``; then
  ``dropping = true``, ``drop_next = now``, ``count = max(count, 1)``.
* ``queue_empty(now)`` (the scheduler found the queue empty): if ``p_drop >
  0`` and ``now - blue_timer > target``: ``p_drop = max(p_drop - p_dec,
  0)``, ``blue_timer = now``; ``dropping = false``; if ``count > 0`` and
  ``now >= drop_next``: ``count -= 1``, ``invsqrt()``, ``drop_next =
  control(drop_next)``.
* ``should_drop(pkt, now)``: ns-3's ``CobaltShouldDrop`` (Linux's
  ``cobalt_should_drop`` with over_target = sojourn > target only):
  see :meth:`FqCobalt._should_drop`; the BLUE draw is taken only when
  ``p_drop > 0`` and the packet is not already being dropped (Linux).

Operations
==========

* **Enqueue**, ``overflow = "tail"`` (``cobalt`` always): with
  ``limit_packets`` packets already held, the arrival's bucket gets
  ``queue_full(now)`` and the arrival is dropped. Otherwise it is added.
  ``"fattest"``: added, then over the limit the drop batch of ``fq_pie.py``
  (``fq_codel_drop()``), which tells the fattest bucket's COBALT nothing
  (ns-3's ``FqCobaltQueueDisc::FqCobaltDrop``; satqm's reading since its
  commit a6d4a08, docs/aqm.md).
* **Dequeue**: the scheduler's bucket; loop: an empty bucket gets
  ``queue_empty(now)`` and is empty to the scheduler; else its head is
  popped and ``should_drop`` decides: dropped (reported in the step's
  ``dropped``), and the loop takes the next head; or sent, with ``mark =
  "cobalt"`` if CoDel CE-marked it. Then ``ce_threshold`` as in
  ``fq_pie.py`` on a packet not already marked (``"ce_threshold"``).
* **Update**: nothing (COBALT has no timer).

Where the sources differ (notes; :data:`VARIANTS` makes some selectable so
that a test can check the traces tell them apart)
-----------------------------------------------------------------------------

* Current Linux (``sch_cake.c``) uses a fixed table ``inv_sqrt_cache`` made
  with eight Newton steps: entries 2, 3 and 6 differ from the four-step cache
  of ns-3 and older Linux (``cobalt_cache_init``) used here, e.g. 3037000500
  against 3035289760 for count 2 (``"linux_isqrt_table"``).
* Linux's ``cobalt_vars_init`` zeroes the state, so ``rec_inv_sqrt`` starts
  at 0 and the very first dropping state of a queue schedules its first
  signal at once (``control(now)`` with ``r = 0`` is ``now``); ns-3 starts at
  0xFFFFFFFF, as here (``"linux_rec_inv_sqrt_zero"``).
* ns-3 draws BLUE's random number whenever ``p_drop > 0``, even for a
  packet CoDel already drops; Linux (``reason == SKB_NOT_DROPPED_YET &&
  get_random_u32() < p_drop``) and satqm only for a packet not yet dropped
  (``"ns3_draw_always"``).
* CAKE never drops the last packet of a flow queue at dequeue ("Last
  packet in queue may be marked, shouldn't be dropped"): it sends it
  unmarked; ns-3 and satqm drop it (``"cake_keep_last_packet"``).
* CAKE's ``cake_drop`` calls ``cobalt_queue_full`` on the queue it drops
  from (BLUE up, dropping, ``drop_next = now``); ns-3's
  ``FqCobaltQueueDisc::FqCobaltDrop`` does not, nor does satqm, nor this
  oracle (``"cake_queue_full_on_batch"``: ``queue_full(now)`` on the fattest
  bucket after the batch; at one ``now`` once is the same as per packet).
  CAKE also drops one packet at a time from the longest queue (a heap, by
  bytes) until under its byte limit, not ``fq_codel_drop()``'s batch.
* Linux's ``over_target`` also needs the sojourn above ``mtu_time * 4`` and
  ``mtu_time * bulk_flows * 2`` (time to send an MTU at the shaper rate);
  satqm and ns-3 use ``sojourn > target`` only. Linux's ``p_drop`` is a u32
  fraction, ns-3's and satqm's a float. CAKE has no ``blue_threshold``
  (ns-3's sojourn-based BLUE increase) and keeps an emptied queue with
  COBALT state in a third list (``decaying_flows``) until it is at rest;
  ns-3 and satqm drop it from the lists as FQ-CoDel does.
* ns-3 applies its ``CeThreshold`` only with ``UseEcn``, and its ``UseL4s``
  mode skips CoDel entirely for ECT(1)/CE packets; satqm's
  ``ce_threshold_ect1`` only restricts ``ce_threshold`` to ECT(1) packets,
  and ``ce_threshold`` applies in either mode (as in ``fq_codel.py``).
* ns-3's FQ-CoDel-style scheduler always moves an emptied new queue to the
  old list (RFC 8290); satqm and Linux only when the old list is not empty.

``hits`` counts the branches taken (see :data:`BRANCHES`).
"""

from __future__ import annotations

from typing import Any

from . import qdisc_params_from_toml, qdisc_spec_toml
from .fq_pie import Bucket, FlowQueues, Packet, _empty_out

U32 = (1 << 32) - 1
U64 = (1 << 64) - 1
REC_INV_SQRT_CACHE = 16

#: Every branch of the COBALT oracles, for the coverage assertion (over the
#: ``cobalt`` and ``fq_cobalt`` traces together).
BRANCHES = (
    # enqueue
    "enq_new_flow",  # the bucket was in no list: appended to new_flows
    "enq_active",  # the bucket was already in a list
    "tail_drop",  # overflow "tail": limit reached, queue_full, arrival dropped
    "overlimit",  # overflow "fattest": more than limit_packets, a batch
    "batch_own_bucket",  # the fattest bucket is the arriving packet's
    "batch_other_bucket",  # the fattest bucket is another one
    "batch_tie_lowest",  # several buckets share the largest backlog
    "batch_stop_threshold",  # stopped at half the bucket's backlog
    "batch_stop_count",  # stopped at drop_batch packets
    "batch_empties_bucket",  # the batch emptied the bucket (it stays listed)
    # queue_full / queue_empty
    "full_blue_up",  # queue_full: p_drop += p_inc
    "full_blue_wait",  # queue_full: within target of the last BLUE change
    "empty_blue_down",  # queue_empty: p_drop -= p_dec
    "empty_blue_wait",  # queue_empty: p_drop > 0, within target
    "empty_count_decay",  # queue_empty: count > 0, drop_next due: count -= 1
    "empty_count_keep",  # queue_empty: count > 0, drop_next not due
    # scheduler
    "deq_idle",  # every list empty: nothing sent
    "deficit_refill",  # deficit <= 0: one more quantum, to the old tail
    "serve_new",  # a packet sent from the new list
    "serve_old",  # a packet sent from the old list
    "empty_new_to_old",  # new bucket found empty, old list not empty
    "empty_new_removed",  # new bucket found empty, old list empty
    "empty_old_removed",  # old bucket found empty
    "loop_drop_next",  # a dropped packet, the loop takes the next head
    "loop_drop_empties",  # a dropped packet was the bucket's last
    # should_drop
    "enter_dropping",  # over target, not dropping: drop_next = control(now)
    "over_target_dropping",  # over target, already dropping
    "count_to_one",  # over target with count 0: count = 1
    "leave_dropping",  # not over target while dropping
    "signal_mark",  # due and dropping: ECN-capable packet CE-marked
    "signal_drop",  # due and dropping: packet dropped
    "drop_not_ect_in_mark_mode",  # mode "mark", not ECN-capable: dropped
    "decay_step",  # due, not dropping: count -= 1 (one loop pass)
    "decay_step_again",  # ... a second pass in one call
    "blue_threshold_up",  # sojourn > blue_threshold: p_drop += p_inc
    "blue_threshold_wait",  # sojourn > blue_threshold, within target
    "blue_draw_pass",  # p_drop > 0, u >= p_drop
    "blue_draw_drop",  # p_drop > 0, u < p_drop: dropped
    "blue_drops_marked",  # ... a packet CoDel had just CE-marked
    "timeout_count_zero",  # count == 0: drop_next = now + interval
    "timeout_reset",  # schedule > 0, not dropped: drop_next = now
    # invsqrt
    "invsqrt_cache",  # count < 16: the cache
    "invsqrt_newton",  # count >= 16: one Newton step
    # ce_threshold
    "ce_threshold_mark",  # sojourn > ce_threshold, eligible: CE
    "ce_threshold_not_capable",  # sojourn > ce_threshold, packet not eligible
    "ce_threshold_after_cobalt",  # both would apply: reported as "cobalt"
)

#: Documented departures (see the module docstring), selectable for tests that
#: check the traces tell them apart; never the reference.
VARIANTS = {
    "linux_isqrt_table": "current Linux's eight-step inv_sqrt_cache table",
    "linux_rec_inv_sqrt_zero": "rec_inv_sqrt starts at 0 (Linux's memset)",
    "ns3_draw_always": "BLUE draws whenever p_drop > 0 (ns-3)",
    "cake_keep_last_packet": "a drop verdict on a queue's last packet sends it (CAKE)",
    "cake_queue_full_on_batch": "the drop batch ends with queue_full on the fattest queue (CAKE)",
}

#: sch_cake.c (current Linux): ``inv_sqrt_cache``
LINUX_INV_SQRT_CACHE = (
    0xFFFFFFFF,
    0xFFFFFFFF,
    3037000500,
    2479700525,
    2147483647,
    1920767767,
    1753413056,
    1623345051,
    1518500250,
    1431655765,
    1358187914,
    1294981364,
    1239850263,
    1191209601,
    1147878294,
    1108955788,
)


def newton_step(r: int, count: int) -> int:
    """One Newton step of ``1/sqrt(count)`` in Q0.32 from ``r`` (u64
    arithmetic wrapping as in C; the result truncated to u32)."""
    invsqrt2 = (r * r) >> 32
    val = ((3 << 32) - count * invsqrt2) & U64
    val >>= 2
    return (((val * r) & U64) >> 31) & U32


def isqrt_cache() -> tuple[int, ...]:
    """ns-3's ``CacheInit`` / older Linux's ``cobalt_cache_init``."""
    r = U32
    cache = [r]
    for count in range(1, REC_INV_SQRT_CACHE):
        for _ in range(4):
            r = newton_step(r, count)
        cache.append(r)
    return tuple(cache)


INV_SQRT_CACHE = isqrt_cache()


class CobaltVars:
    __slots__ = ("count", "rec_inv_sqrt", "drop_next", "dropping", "p_drop", "blue_timer")

    def __init__(self, rec_inv_sqrt: int = U32):
        self.count = 0
        self.rec_inv_sqrt = rec_inv_sqrt
        self.drop_next = 0
        self.dropping = False
        self.p_drop = 0.0
        self.blue_timer = 0


class FqCobalt(FlowQueues):
    kind = "fq_cobalt"
    defaults: dict[str, Any] = {
        "flows": 1024,
        "quantum": 1514,
        "overflow": "fattest",
        "drop_batch": 64,
        "target": 0.005,
        "interval": 0.100,
        "p_inc": 1.0 / 256,
        "p_dec": 1.0 / 4096,
        "blue_threshold": 0.400,
        "ce_threshold": None,
        "ce_threshold_ect1": False,
        "mode": None,  # "mark"
    }
    time_params = ("target", "interval", "blue_threshold", "ce_threshold")
    variant_names = VARIANTS
    default_mode = "mark"

    def __init__(self, params: dict, limit_packets: int, variants: frozenset = frozenset()):
        self.cache = LINUX_INV_SQRT_CACHE if "linux_isqrt_table" in variants else INV_SQRT_CACHE
        self._r0 = 0 if "linux_rec_inv_sqrt_zero" in variants else U32
        # (FlowQueues takes "overflow" from the defaults: "fattest" here, and
        # "tail" for Cobalt, whose table has no such key)
        super().__init__(params, limit_packets, variants)
        self.target = int(self.p["target"])
        self.interval = int(self.p["interval"])
        if not 0 < self.interval < 1 << 32:
            raise ValueError(f"{self.kind}: interval must be below 2^32 ns")
        self.blue_threshold = int(self.p["blue_threshold"])
        self.p_inc = float(self.p["p_inc"])
        self.p_dec = float(self.p["p_dec"])

    def _new_aqm(self) -> CobaltVars:
        return CobaltVars(self._r0)

    # -- COBALT's pieces -----------------------------------------------------
    def _invsqrt(self, v: CobaltVars) -> None:
        if v.count < REC_INV_SQRT_CACHE:
            v.rec_inv_sqrt = self.cache[v.count]
            self.hit("invsqrt_cache")
        else:
            v.rec_inv_sqrt = newton_step(v.rec_inv_sqrt, v.count)
            self.hit("invsqrt_newton")

    def _control(self, t: int, r: int) -> int:
        return t + ((self.interval * r) >> 32)

    def _queue_full(self, v: CobaltVars, now: int) -> None:
        if now - v.blue_timer > self.target:
            v.p_drop = min(v.p_drop + self.p_inc, 1.0)
            v.blue_timer = now
            self.hit("full_blue_up")
        else:
            self.hit("full_blue_wait")
        v.dropping = True
        v.drop_next = now
        if v.count == 0:
            v.count = 1

    def _queue_empty(self, v: CobaltVars, now: int) -> None:
        if v.p_drop > 0:
            if now - v.blue_timer > self.target:
                v.p_drop = max(v.p_drop - self.p_dec, 0.0)
                v.blue_timer = now
                self.hit("empty_blue_down")
            else:
                self.hit("empty_blue_wait")
        v.dropping = False
        if v.count > 0:
            if now - v.drop_next >= 0:
                v.count -= 1
                self._invsqrt(v)
                v.drop_next = self._control(v.drop_next, v.rec_inv_sqrt)
                self.hit("empty_count_decay")
            else:
                self.hit("empty_count_keep")

    def _should_drop(self, v: CobaltVars, pkt: Packet, now: int) -> tuple[bool, bool]:
        """Whether to drop ``pkt`` leaving at ``now``, and whether CoDel
        CE-marked it."""
        sojourn = now - pkt.t
        schedule = now - v.drop_next
        over_target = sojourn > self.target
        next_due = v.count > 0 and schedule >= 0
        if over_target:
            if not v.dropping:
                v.dropping = True
                v.drop_next = self._control(now, v.rec_inv_sqrt)
                self.hit("enter_dropping")
            else:
                self.hit("over_target_dropping")
            if v.count == 0:
                v.count = 1
                self.hit("count_to_one")
        elif v.dropping:
            v.dropping = False
            self.hit("leave_dropping")
        drop = marked = False
        if next_due and v.dropping:
            if self.mark_mode and pkt.capable:
                pkt.ce = marked = True
                self.hit("signal_mark")
            else:
                drop = True
                self.hit("signal_drop")
                if self.mark_mode:
                    self.hit("drop_not_ect_in_mark_mode")
            v.count = min(v.count + 1, U32)
            self._invsqrt(v)
            v.drop_next = self._control(v.drop_next, v.rec_inv_sqrt)
            schedule = now - v.drop_next
        else:
            passes = 0
            while next_due:
                v.count -= 1
                self._invsqrt(v)
                v.drop_next = self._control(v.drop_next, v.rec_inv_sqrt)
                schedule = now - v.drop_next
                next_due = v.count > 0 and schedule >= 0
                passes += 1
                self.hit("decay_step" if passes == 1 else "decay_step_again")
        # ns-3's BLUE enhancement: a very long sojourn raises p_drop
        if sojourn > self.blue_threshold:
            if now - v.blue_timer > self.target:
                v.p_drop = min(v.p_drop + self.p_inc, 1.0)
                v.blue_timer = now
                self.hit("blue_threshold_up")
            else:
                self.hit("blue_threshold_wait")
        if v.p_drop > 0 and (not drop or "ns3_draw_always" in self.variants):
            u = self.rng.uniform()
            if u < v.p_drop and not drop:
                drop = True
                self.hit("blue_draw_drop")
                if marked:
                    self.hit("blue_drops_marked")
            elif not drop:
                self.hit("blue_draw_pass")
        if v.count == 0:
            v.drop_next = now + self.interval
            self.hit("timeout_count_zero")
        elif schedule > 0 and not drop:
            v.drop_next = now
            self.hit("timeout_reset")
        return drop, marked and not drop

    # -- the discipline ------------------------------------------------------
    def enqueue(self, t: int, bucket: int, size: int, ecn: str) -> dict:
        pkt = self._arrival(t, bucket, size, ecn)
        if self.overflow == "tail" and self.packets >= self.limit:
            self.hit("tail_drop")
            self._queue_full(self.flows[bucket].aqm, t)
            return {"dropped": [pkt.id], "sent": None, "mark": None}
        self._add(bucket, pkt)
        dropped: list[int] = []
        if self.overflow == "fattest" and self.packets > self.limit:
            fat, dropped = self._drop_batch(bucket)
            if "cake_queue_full_on_batch" in self.variants:
                self._queue_full(self.flows[fat].aqm, t)
        return {"dropped": dropped, "sent": None, "mark": None}

    def _serve(self, f: Bucket, b: int, now: int, dropped: list[int]):
        v: CobaltVars = f.aqm
        while True:
            if not f.q:
                self._queue_empty(v, now)
                return None
            pkt = self._pop(f)
            drop, marked = self._should_drop(v, pkt, now)
            if drop and "cake_keep_last_packet" in self.variants and not f.q:
                drop = False
            if drop:
                dropped.append(pkt.id)
                self.hit("loop_drop_empties" if not f.q else "loop_drop_next")
                continue
            return pkt, self._ce_threshold(pkt, now, "cobalt" if marked else None)

    def update(self, t: int) -> dict:
        self._advance(t)
        return _empty_out()


class Cobalt(FqCobalt):
    """One COBALT queue: ``fq_cobalt`` with one flow and a tail drop."""

    kind = "cobalt"
    defaults: dict[str, Any] = {
        k: v
        for k, v in FqCobalt.defaults.items()
        if k not in ("flows", "quantum", "overflow", "drop_batch")
    }

    def __init__(self, params: dict, limit_packets: int, variants: frozenset = frozenset()):
        super().__init__(params, limit_packets, variants)
        assert self.n_flows == 1 and self.overflow == "tail"


CLASSES: dict[str, type[FqCobalt]] = {"cobalt": Cobalt, "fq_cobalt": FqCobalt}


def make(
    kind: str, params: dict, limit_packets: int, variants: frozenset = frozenset()
) -> FqCobalt:
    return CLASSES[kind](params, limit_packets, variants)


def replay(
    kind: str,
    params: dict,
    limit_packets: int,
    ops: list[dict],
    variants: frozenset = frozenset(),
) -> tuple[list[dict], FqCobalt]:
    """Run ``ops`` through a fresh oracle: the outputs, and the oracle."""
    q = make(kind, params, limit_packets, variants)
    return [q.apply(op) for op in ops], q


def spec_toml(kind: str, params: dict) -> str:
    """The qdisc table as TOML (see :func:`qdisc_spec_toml`)."""
    return qdisc_spec_toml(CLASSES[kind], params)


def params_from_toml(table: dict) -> dict:
    """The inverse of :func:`spec_toml` (the kind is the table's)."""
    return qdisc_params_from_toml(CLASSES[table["kind"]], table)
