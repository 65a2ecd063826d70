"""DualPI2: the coupled dual-queue AQM of RFC 9332 (L4S), as a queue
discipline replayed through ``satqm._core.qdisc_replay``.

This docstring is the specification satqm's implementation follows; the code
below is an independent reference of it.

Replay interface
================

Operations (times ``t`` are integer ns, never decreasing)::

    {"op": "enqueue", "t": ns, "bucket": 0, "size": bytes, "ecn": codepoint}
    {"op": "dequeue", "t": ns}
    {"op": "update",  "t": ns}

``bucket`` is accepted and ignored (classification is by ECN only). ``ecn``
is one of ``"not-ect"``, ``"ect0"``, ``"ect1"``, ``"ce"``. Outputs:

* enqueue: ``{"dropped": [id]}`` if the arrival was refused, else
  ``{"dropped": []}``;
* dequeue: ``{"dropped": [ids], "sent": id | None, "mark": None | label}``
  with labels ``"l4s"`` (L-queue mark), ``"l4s_overload"`` (L-queue mark
  while saturated) and ``"classic"`` (Classic-queue mark);
* update: ``{"dropped": [], "p": p_int}``, the base probability p' after the
  update, as an integer in units of 2^-32 (see below).

Packet ids are the 0-based index of the enqueue among the enqueue operations
(a refused arrival also consumes an id). At one instant a trace lists the
update first, then the dequeue, then enqueues; the oracle just applies the
operations in the order given. The replay is explicit about time: p' changes
only at ``update`` operations (the PI2 timer, every ``tupdate``), never
implicitly.

Parameters (TOML table ``kind = "dualpi2"``)
============================================

Times are given in seconds and held as integer ns (rounded half away from
zero; in TOML written as ``"<ns> ns"``). Defaults follow RFC 9332 Appendix A.1
(``dualpi2_params_init``, Figure 2) except ``tshift``, which A.1 leaves open
("scheduler-dependent weight or equivalent parameter, not shown"):

=================== ============== ============================================
name                default        meaning / source
=================== ============== ============================================
target              0.015 s        PI2 Classic queue-delay target (A.1; Linux
                                   tc-dualpi2 also 15 ms)
rtt_max             0.100 s        worst-case RTT, only used to derive the
                                   three defaults below (A.1)
tupdate             min(target,    PI2 update period (A.1: 15 ms; Linux 16 ms).
                    rtt_max/3)     The replay does not enforce it; it tells the
                                   trace generator where to put ``update`` ops
alpha               0.1*tupdate/   integral gain, Hz (A.1: 0.15 Hz; Linux
                    rtt_max^2      ``41/256`` = 0.16 Hz)
beta                0.3/rtt_max    proportional gain, Hz (A.1: 3 Hz; Linux
                                   ``819/256`` = 3.2 Hz)
k                   2              coupling factor (A.1 and Linux), > 0
min_th              800e-6 s       L ramp start, time units (A.1)
range               400e-6 s       L ramp width (A.1); 0 gives a step at
                                   min_th (Linux's default native L AQM is a
                                   step at 1 ms, see below)
th_len              1              L ramp: no native mark while the L queue
                                   holds <= th_len packets (A.1 ``Th_len``)
p_lmax              1.0            saturation of the L marking (A.1)
tshift              0.050 s        time-shifted FIFO bias toward L; 50 ms is the
                                   value of the ns-3 model of the RFC's
                                   pseudocode (``DualQCoupledPi2QueueDisc``,
                                   attribute ``Tshift``)
scheduler           "tsfifo"       ``"tsfifo"`` (RFC 9332) or ``"wrr"`` (Linux)
classic_protection  10             ``wrr`` only: Classic weight wc in %, L gets
                                   100 - wc (Linux default 10)
mtu                 1500           ``wrr`` only: credit unit (Linux psched_mtu)
=================== ============== ============================================

Why RFC defaults: the RFC is the normative description and derives every
gain from two physical quantities (target, rtt_max) with the same tupdate that
enters alpha; Linux's 16 ms / 0.16 / 3.2 are the same design rounded to its
netlink units (1/256 Hz) and a power-of-two-ish period. The Linux values are
the documented alternative: ``tupdate = 0.016, alpha = 0.16, beta = 3.2,
min_th = 0.001, range = 0`` (with the step's strictness caveat below),
``scheduler = "wrr", classic_protection = 10``.

Fixed-point arithmetic (exact; the Rust side must do the same)
==============================================================

Probabilities are unsigned integers in units of 2^-32: ``ONE = 2**32`` is
probability 1 (so u64, with u128 intermediates where noted).

* Gains: ``alpha_q = round_half_away(alpha * 2**48 / 1e9)`` and the same for
  ``beta_q`` (f64 arithmetic ``alpha * 281474976710656.0 / 1e9``, then rounded
  half away from zero): units of 2^-48 probability per ns of delay. RFC
  defaults give ``alpha_q = 42221``, ``beta_q = 844425``.
* Coupling: ``k_q = round_half_away(k * 65536)``; ``p_CL = min((k_q * p')
  >> 16, ONE)`` (u128 product; capped at 1 as the ns-3 model and the RFC
  port in picoquic's ``dualq_aqm.c`` do, so that recur() never gets a
  likelihood above 1). With k = 2, p_CL = min(2 p', 1) exactly.
* Classic: ``p_C = (p' * p') >> 32`` (u128 product; p' = ONE gives ONE).
* Saturation level: ``p_Lmax_q = round_half_away(p_lmax * ONE)``; Classic
  ECN limit ``p_Cmax_q = round_half_away(min(1 / k**2, 1) * ONE)`` (f64;
  A.1 ``p_Cmax``; k = 2 gives ONE / 4).
* Ramp: ``(qdelay - min_th) * ONE // range`` (floor; u128 product).

State
=====

* two FIFOs, L and C, of packets (id, size, enqueue time, ecn);
* ``p`` (p', 0..ONE, initially 0), ``prevq`` (ns, initially 0);
* ``count_L``, ``count_C``: the recur() accumulators (0.. ONE + p, initially
  0; u64);
* ``wrr`` only: ``credit`` (signed), initially ``mtu * (wc - (100 - wc))``.

update(t)
=========

RFC 9332 A.1 Figure 6 (``dualpi2_update``), with p' kept within [0, 1] as
the RFC's pseudocode notes (the ns-3 model of the draft pseudocode,
``DualQCoupledPi2QueueDisc::DualPi2Update``, clamps the same way; Linux
clamps to [0, 2^32 - 1]):

1. ``curq = max(qC, qL)`` where ``qC = t - C.head.enqueue_time`` (0 if C is
   empty) and ``qL`` likewise for L: the full pseudocode's (A.2) use of both
   queues, so that unresponsive L traffic alone also raises p' and reaches
   overload saturation (Linux ``calculate_probability`` and picoquic's port
   do the same; A.1 Figure 6 and the ns-3 model use qC only: variant
   ``a1_classic_qdelay``);
2. ``delta = alpha_q * (curq - target) + beta_q * (curq - prevq)`` (signed,
   i128);
3. ``step = delta / 2**16`` truncated toward zero (as Linux's
   ``__scale_delta`` on the magnitude);
4. ``p = clamp(p + step, 0, ONE)``; ``prevq = curq``.

enqueue(t, size, ecn)
=====================

1. id = next id; if the qdisc already holds ``limit_packets`` packets (both
   queues), the arrival is dropped: ``{"dropped": [id]}`` (satqm's rule: the
   queue never holds more than ``limit_packets``);
2. else stamp it with t and append it to L if ecn is ``ect1`` or ``ce``
   (RFC 9332 section 2.3 / A.1 Figure 3, ``ecn modulo 2 == 1``), else to C.

dequeue(t)
==========

Loop (A.1 Figure 4 / A.2 ``dualpi2_dequeue``; a drop continues the loop):

1. both queues empty: return ``sent = None`` (``wrr``: reset credit);
2. choose a queue:

   * ``tsfifo``: L if L is not empty and (C is empty or
     ``(t - L.head.t) + tshift > (t - C.head.t)``), else C. Strict ``>``
     (ns-3 model); a tie goes to C.
   * ``wrr`` (Linux ``dequeue_packet``): L if L is not empty and (C is empty
     or ``credit <= 0``), else C; the credit change of the choice is
     ``+wc * size`` (L chosen, C not empty), ``-(100 - wc) * size`` (C
     chosen, L not empty), else 0; it is applied only if the packet is sent
     (not if it is dropped).

3. pop the head packet; ``qdelay = t - pkt.t``;
4. L packet (``n_L`` = L packets before the pop, counting this one):

   * if ``p_CL >= p_Lmax_q`` (overload saturation, A.2): if
     ``recur(L, p_C)``: drop, continue ("revert to Classic drop"); else if
     ``recur(L, p_CL)``: mark ``"l4s_overload"``; else send unmarked;
   * else ``pL_native = laqm(qdelay, n_L)``, ``p_L = max(pL_native, p_CL)``
     (A.1 combining function); if ``recur(L, p_L)``: mark ``"l4s"``.

   ``laqm``: 0 if ``n_L <= th_len``; else ONE if ``qdelay >= min_th +
   range``; else ``(qdelay - min_th) * ONE // range`` if ``qdelay >
   min_th``; else 0.
5. C packet: if ``recur(C, p_C)``: if the packet is not-ECT or ``p_C >=
   p_Cmax_q`` (overload disables ECN for Classic, A.2; Linux
   ``dualpi2_classic_marking`` drops under its overload, k p' > 1), drop and
   continue; else mark ``"classic"``.
6. return the packet.

``recur(q, x)`` (A.2, deterministic marking instead of a random draw):
``count_q += x``; if ``count_q > ONE``: ``count_q -= ONE``, true; else false.
With x = ONE the first call is false (count reaches exactly ONE) and every
later one true; with x = ONE/4 the 5th, 9th, 13th ... calls are true.

Every packet of the L queue is ECN-capable by construction (ect1 or ce), so an
L signal outside overload is always a mark; a ``ce`` packet is reported as
marked like the others.

RFC 9332 versus Linux (``net/sched/sch_dualpi2.c``)
===================================================

1. Update's delay: both use the larger head sojourn of the two queues (A.2;
   Linux ``calculate_probability``); A.1 Figure 6 shows the Classic head's
   only. (Variant ``a1_classic_qdelay``.)
2. Gains and period: RFC 15 ms / 0.15 Hz / 3 Hz; Linux 16 ms /
   41/256 Hz / 819/256 Hz (``dualpi2_reset_default``), internal fixed point
   2^-32 per 64 ns steps (``dualpi2_scale_alpha_beta``, ``__scale_delta``).
3. Marking decisions: RFC A.2 ``recur()`` (deterministic; A.1 uses
   ``rand()``); Linux ``dualpi2_roll`` (random u32 <= prob), two rolls for
   p^2. satqm: recur per queue.
4. Native L AQM: RFC A.1 Figure 5 ramp (min_th 800 us, range 400 us, Th_len
   1 packet), combined as ``max(p'_L, p_CL)``; Linux ``do_step_aqm`` is a
   step (sojourn ``> step_thresh`` = 1 ms, or a packet count), applied
   *after* and independently of the coupled roll, so the two signals OR
   rather than max, and ``min_qlen_step`` (default 0) replaces Th_len.
   (Variant ``linux_step`` with ``step_thresh = min_th``: strict ``>``,
   no Th_len, OR of coupled and step.)
5. Scheduler: RFC 9332 describes a time-shifted FIFO (tshift) or a WRR with a
   small Classic weight; Linux uses a byte-credit WRR with
   ``classic_protection`` = 10 % (``dequeue_packet``,
   ``dualpi2_calculate_c_protection``). (``scheduler = "wrr"``.)
6. Small-queue guard: Linux ``must_drop`` never signals (neither queue) while
   the qdisc backlog, after the pop, is below 2 MTU; the RFC pseudocode has no
   such guard (ns-3's model has it for the Classic queue). (Variant
   ``linux_two_mtu``.)
7. Overload: both saturate L at k p' >= 1 and then drop L packets with p_C
   (Linux: two rolls of p') and mark the rest (Linux: all of them; A.2: with
   recur(p_CL), which at p_CL = 1 is all but rare cases); Linux's
   ``drop_overload = 0`` instead caps p' at 1/k and keeps marking. Classic
   ECN packets: A.2 drops them once p_C >= p_Cmax; Linux once k p' > 1
   (the same point for k = 2 up to the >= / > boundary).
8. Limit: RFC A.1 Figure 3 refuses an arrival when ``bytes + MTU > limit``
   (bytes); Linux when ``qlen >= limit`` packets (default 10000) or the
   memory estimate would exceed ``memory_limit``; satqm counts packets.
9. Drop position: both drop at dequeue by default (Linux ``drop_early = 0``).
10. Classification: RFC by ECN (ECT(1) and CE to L); Linux adds an
    ``ecn_mask`` option, tc filters and skb priority classes, including a
    "no AQM" L class.

Points this specification decides where the sources leave room
================================================================

* ``th_len`` counts the L packets *including* the one being dequeued; the
  ramp is the only place it acts (the coupled signal ignores it). (picoquic's
  port of the RFC pseudocode instead requires more than th_len packets left
  *after* the pop.)
* The L queue's native signal is computed from the dequeued packet's own
  sojourn time (Linux ``do_step_aqm`` and the ns-3 model do the same), not
  from the next head's (picoquic's port reads the next head).
* recur() counters start at 0 and are never reset (not by an idle queue nor
  by an update).
* TS-FIFO ties go to C (strict ``>``, as the ns-3 model); with the L queue
  non-empty and C empty, L is served whatever tshift.
* A refused arrival is reported at the enqueue and never enters a queue; the
  limit counts packets of both queues, not bytes.
* Variant ``linux_two_mtu`` suppresses every signal (L and C) on the packet
  while the backlog left after the pop is below 2 ``mtu``; Linux would still
  apply its step to L packets.

``hits`` counts the branches taken (see :data:`BRANCHES`).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

from . import qdisc_params_from_toml, qdisc_spec_toml, to_ns
from .fq_codel import ECN_CODEPOINTS, round_half_away

ONE = 1 << 32
GAIN_SHIFT = 16
K_SHIFT = 16

#: Every branch of the oracle with the default (RFC) semantics.
BRANCHES = (
    "enq_l",  # ECT(1)/CE: to the L queue
    "enq_c",  # not-ECT/ECT(0): to the C queue
    "overlimit",  # the qdisc was full: arrival dropped
    "update_c_empty",  # update with the C queue empty (curq = 0)
    "update_up",  # p' grew
    "update_down",  # p' shrank
    "clamp_high",  # p' clamped at 1
    "clamp_low",  # p' clamped at 0
    "deq_idle",  # both queues empty
    "sched_l_only",  # only L has packets
    "sched_c_only",  # only C has packets
    "sched_l_shifted",  # both non-empty, L chosen by the time shift
    "sched_c_older",  # both non-empty, C chosen
    "ramp_short_queue",  # n_L <= th_len: no native signal
    "ramp_below",  # qdelay <= min_th
    "ramp_linear",  # on the ramp
    "ramp_full",  # qdelay >= min_th + range
    "l_mark_native",  # L marked, the ramp drove p_L
    "l_mark_coupled",  # L marked, p_CL drove p_L
    "l_pass",  # L not marked
    "l_overload_drop",  # saturated: L dropped with p_C
    "l_overload_mark",  # saturated: L marked
    "l_overload_pass",  # saturated, neither (recur(p_CL = 1) false: count was 0)
    "c_pass",  # C not signalled
    "c_mark",  # C ECN packet marked
    "c_drop_not_ect",  # C not-ECT packet dropped
    "c_drop_overload",  # C ECN packet dropped under overload
)

#: Branches that closed-loop traces need not reach.
RARE_BRANCHES = ("l_overload_pass",)

#: Documented departures (see the docstring), selectable for tests that check
#: the traces tell them apart:
VARIANTS = {
    "a1_classic_qdelay": "update uses the C head's sojourn only (RFC 9332 A.1, ns-3)",
    "linux_step": "native L AQM is a step qdelay > min_th, ORed with the coupled signal",
    "linux_two_mtu": "no signal while the backlog after the pop is below 2 mtu",
}


@dataclass
class Packet:
    id: int
    size: int
    t: int
    ecn: str


class DualPI2:
    kind = "dualpi2"
    defaults: dict[str, Any] = {
        "target": 0.015,
        "rtt_max": 0.100,
        "tupdate": None,
        "alpha": None,
        "beta": None,
        "k": 2.0,
        "min_th": 800e-6,
        "range": 400e-6,
        "th_len": 1,
        "p_lmax": 1.0,
        "tshift": 0.050,
        "scheduler": "tsfifo",
        "classic_protection": 10,
        "mtu": 1500,
    }
    time_params = ("target", "rtt_max", "tupdate", "min_th", "range", "tshift")

    def __init__(self, params: dict, limit_packets: int, variants: frozenset = frozenset()):
        unknown_v = sorted(set(variants) - set(VARIANTS))
        if unknown_v:
            raise ValueError(f"dualpi2: unknown variant(s) {unknown_v}")
        self.variants = frozenset(variants)
        params = dict(params)
        params.pop("kind", None)
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"dualpi2: unknown parameter(s) {unknown}")
        p = {**DualPI2.defaults, **params}
        # derived defaults (RFC 9332 A.1, in seconds)
        if p["tupdate"] is None:
            p["tupdate"] = min(p["target"], p["rtt_max"] / 3)
        if p["alpha"] is None:
            p["alpha"] = 0.1 * p["tupdate"] / p["rtt_max"] ** 2
        if p["beta"] is None:
            p["beta"] = 0.3 / p["rtt_max"]
        for k in DualPI2.time_params:
            p[k] = to_ns(p[k])
        if p["scheduler"] not in ("tsfifo", "wrr"):
            raise ValueError(
                f"dualpi2: scheduler must be 'tsfifo' or 'wrr', not {p['scheduler']!r}"
            )
        if not p["k"] > 0:
            raise ValueError("dualpi2: k must be > 0")
        if not 0 <= int(p["classic_protection"]) <= 100:
            raise ValueError("dualpi2: classic_protection must be in 0..100")
        self.p = p
        self.target = p["target"]
        self.tupdate = p["tupdate"]
        self.alpha_q = round_half_away(float(p["alpha"]) * float(1 << 48) / 1e9)
        self.beta_q = round_half_away(float(p["beta"]) * float(1 << 48) / 1e9)
        self.k_q = round_half_away(float(p["k"]) * float(1 << K_SHIFT))
        self.min_th = p["min_th"]
        self.range = p["range"]
        self.th_len = int(p["th_len"])
        self.p_lmax_q = round_half_away(float(p["p_lmax"]) * ONE)
        self.p_cmax_q = round_half_away(min(1.0 / float(p["k"]) ** 2, 1.0) * ONE)
        self.tshift = p["tshift"]
        self.wrr = p["scheduler"] == "wrr"
        self.wc = int(p["classic_protection"])
        self.wl = 100 - self.wc
        self.mtu = int(p["mtu"])
        self.credit_init = self.mtu * (self.wc - self.wl)
        self.credit = self.credit_init
        self.limit = int(limit_packets)
        self.lq: deque[Packet] = deque()
        self.cq: deque[Packet] = deque()
        self.bytes = 0
        self.prob = 0  # p', units of 2^-32
        self.prevq = 0
        self.count = {"L": 0, "C": 0}
        self.next_id = 0
        self.now = 0
        self.hits: Counter[str] = Counter()
        self.single = False

    def hit(self, branch: str) -> None:
        self.hits[branch] += 1

    # -- derived probabilities -------------------------------------------
    @property
    def p_cl(self) -> int:
        return min((self.k_q * self.prob) >> K_SHIFT, ONE)

    @property
    def p_c(self) -> int:
        return (self.prob * self.prob) >> 32

    def overloaded(self) -> bool:
        return self.p_cl >= self.p_lmax_q

    # -- the replay interface --------------------------------------------
    def apply(self, op: dict) -> dict:
        kind = op["op"]
        t = op["t"]
        if t < self.now:
            raise ValueError("operations out of time order")
        self.now = t
        if kind == "enqueue":
            return self.enqueue(t, op["size"], op["ecn"])
        if kind == "dequeue":
            return self.dequeue(t)
        if kind == "update":
            return self.update(t)
        raise ValueError(f"unknown op {op!r}")

    def enqueue(self, t: int, size: int, ecn: str) -> dict:
        if ecn not in ECN_CODEPOINTS:
            raise ValueError(f"unknown ECN codepoint {ecn!r}")
        pid = self.next_id
        self.next_id += 1
        if len(self.lq) + len(self.cq) >= self.limit:
            self.hit("overlimit")
            return {"dropped": [pid]}
        pkt = Packet(pid, int(size), t, ecn)
        if ecn in ("ect1", "ce") and not self.single:
            self.lq.append(pkt)
            self.hit("enq_l")
        else:
            self.cq.append(pkt)
            self.hit("enq_c")
        self.bytes += pkt.size
        return {"dropped": []}

    def update(self, t: int) -> dict:
        curq = t - self.cq[0].t if self.cq else 0
        if not self.cq:
            self.hit("update_c_empty")
        if "a1_classic_qdelay" not in self.variants and self.lq:
            curq = max(curq, t - self.lq[0].t)
        delta = self.alpha_q * (curq - self.target) + self.beta_q * (curq - self.prevq)
        step = delta >> GAIN_SHIFT if delta >= 0 else -((-delta) >> GAIN_SHIFT)
        new = self.prob + step
        if new > ONE:
            new = ONE
            self.hit("clamp_high")
        elif new < 0:
            new = 0
            self.hit("clamp_low")
        if new > self.prob:
            self.hit("update_up")
        elif new < self.prob:
            self.hit("update_down")
        self.prob = new
        self.prevq = curq
        return {"dropped": [], "p": self.prob}

    def recur(self, q: str, likelihood: int) -> bool:
        self.count[q] += likelihood
        if self.count[q] > ONE:
            self.count[q] -= ONE
            return True
        return False

    def laqm(self, qdelay: int, n_l: int) -> int:
        if n_l <= self.th_len:
            self.hit("ramp_short_queue")
            return 0
        if qdelay >= self.min_th + self.range:
            self.hit("ramp_full")
            return ONE
        if qdelay > self.min_th:
            self.hit("ramp_linear")
            return (qdelay - self.min_th) * ONE // self.range
        self.hit("ramp_below")
        return 0

    def _schedule(self, t: int) -> tuple[str, int]:
        """The queue to serve and (wrr) the credit change if the packet is sent."""
        lq, cq = self.lq, self.cq
        if self.wrr:
            if lq and (not cq or self.credit <= 0):
                return "L", (self.wc * lq[0].size if cq else 0)
            return "C", (-self.wl * cq[0].size if lq else 0)
        if lq and not cq:
            self.hit("sched_l_only")
            return "L", 0
        if cq and not lq:
            self.hit("sched_c_only")
            return "C", 0
        if (t - lq[0].t) + self.tshift > (t - cq[0].t):
            self.hit("sched_l_shifted")
            return "L", 0
        self.hit("sched_c_older")
        return "C", 0

    def dequeue(self, t: int) -> dict:
        dropped: list[int] = []
        while self.lq or self.cq:
            which, credit_change = self._schedule(t)
            q = self.lq if which == "L" else self.cq
            n_before = len(q)
            pkt = q.popleft()
            self.bytes -= pkt.size
            qdelay = t - pkt.t
            guard = "linux_two_mtu" in self.variants and self.bytes < 2 * self.mtu
            mark: str | None = None
            if which == "L" or (self.single and pkt.ecn in ("ect1", "ce")):
                if guard:
                    self.hit("l_pass")
                elif self.overloaded():
                    if self.recur("L", self.p_c):
                        self.hit("l_overload_drop")
                        dropped.append(pkt.id)
                        continue
                    if self.recur("L", self.p_cl):
                        self.hit("l_overload_mark")
                        mark = "l4s_overload"
                    else:
                        self.hit("l_overload_pass")
                elif "linux_step" in self.variants:
                    if self.recur("L", self.p_cl) or qdelay > self.min_th:
                        mark = "l4s"
                        self.hit("l_mark_coupled")
                    else:
                        self.hit("l_pass")
                else:
                    native = self.laqm(qdelay, n_before) if which == "L" else 0
                    p_l = max(native, self.p_cl)
                    if self.recur("L", p_l):
                        mark = "l4s"
                        self.hit("l_mark_native" if native > self.p_cl else "l_mark_coupled")
                    else:
                        self.hit("l_pass")
            else:
                if not guard and self.recur("C", self.p_c):
                    if pkt.ecn == "not-ect" or self.p_c >= self.p_cmax_q:
                        self.hit("c_drop_not_ect" if pkt.ecn == "not-ect" else "c_drop_overload")
                        dropped.append(pkt.id)
                        continue
                    mark = "classic"
                    self.hit("c_mark")
                else:
                    self.hit("c_pass")
            self.credit += credit_change
            return {"dropped": dropped, "sent": pkt.id, "mark": mark}
        self.credit = self.credit_init
        self.hit("deq_idle")
        return {"dropped": dropped, "sent": None, "mark": None}


class PI2(DualPI2):
    """The single-queue coupled PI2 (``kind = "pi2"``; De Schepper et al.,
    CoNEXT 2016, and RFC 9332 §2.4): DualPI2's controller over one FIFO. A
    scalable packet (ECT(1) or CE) is judged as an L packet whose native
    ramp is 0 (``p_L = p_CL``, with the overload rules), a classic one as
    in the C queue. It has none of the L queue's parameters."""

    kind = "pi2"
    defaults: dict[str, Any] = {
        k: DualPI2.defaults[k]
        for k in ("target", "rtt_max", "tupdate", "alpha", "beta", "k", "p_lmax")
    }
    time_params = ("target", "rtt_max", "tupdate")

    def __init__(self, params: dict, limit_packets: int, variants: frozenset = frozenset()):
        params = dict(params)
        params.pop("kind", None)
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(f"pi2: unknown parameter(s) {unknown}")
        super().__init__(params, limit_packets, variants)
        self.single = True


def replay(
    params: dict,
    limit_packets: int,
    ops: list[dict],
    variants: frozenset = frozenset(),
    cls: type = DualPI2,
) -> tuple[list[dict], DualPI2]:
    """Run ``ops`` through a fresh oracle (``cls``: DualPI2 or PI2): the
    outputs, and the oracle."""
    q = cls(params, limit_packets, variants)
    return [q.apply(op) for op in ops], q


def spec_toml(params: dict) -> str:
    """The qdisc table as TOML (see :func:`qdisc_spec_toml`)."""
    return qdisc_spec_toml(DualPI2, params)


def params_from_toml(table: dict) -> dict:
    """The inverse of :func:`spec_toml`."""
    return qdisc_params_from_toml(DualPI2, table)
