"""CoDel (RFC 8289) as specified in docs/aqm.md: decides at dequeue, one call
per packet leaving the queue, with ``q_bytes`` the bytes still waiting.

A signal is returned as ``"mark:early"`` (a congestion signal: dropped unless
``mode = "mark"`` and the packet is ECN-capable). When it is a drop, the port
dequeues the next packet at once, at the same instant; that packet's check
follows (the RFC's loop), except after the first drop of a dropping state,
where RFC 8289's ``dequeue()`` returns the next packet after ``dodequeue()``
(which still updates ``first_above_time``) without the drop logic. The state
machine sees no mode, so it recognises that packet as the next departure at
the same instant as the entering signal (a marked packet is sent, so the
next departure comes at least one transmission time later).

Branches: ``first_above_reset``, ``first_above_set``, ``above_waiting``
(above target, first_above not reached), ``ok``; ``enter``,
``enter_count1``, ``enter_reuse`` (count re-use: delta > 1 within 16
intervals), ``after_enter_unchecked``; ``leave``, ``control_law`` (signal in
the dropping state), ``dropping_wait`` (dropping, now < drop_next);
``idle_reset`` (arrival to an idle port).
"""

from __future__ import annotations

import math

from . import Oracle, secs


class CoDel(Oracle):
    kind = "codel"
    defaults = {"target": 0.005, "interval": 0.100, "mtu": 1500}
    time_params = ("target", "interval")
    spec_probes = ("count", "qdelay")

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        self.target = self.p["target"]  # ns
        self.interval = self.p["interval"]  # ns
        self.mtu = int(self.p["mtu"])
        self.first_above = 0  # ns; 0 = not set
        self.dropping = False
        self.drop_next = 0.0  # ns (real: interval / sqrt(count) is not rounded)
        self.count = 0
        self.lastcount = 0
        self.last_sojourn = 0  # ns
        self.entered_at: int | None = None  # time of the entering signal

    def _ok_to_drop(self, now: int, d: int, q_bytes: int) -> bool:
        if d < self.target or q_bytes <= self.mtu:
            self.first_above = 0
            self.hit("first_above_reset")
            return False
        if self.first_above == 0:
            self.first_above = now + self.interval
            self.hit("first_above_set")
            return False
        if now >= self.first_above:
            self.hit("ok")
            return True
        self.hit("above_waiting")
        return False

    def _control_law(self, t: float) -> float:
        return t + self.interval / math.sqrt(self.count)

    def on_arrival(self, ev: dict) -> str:
        # "When the queue empties, first_above = 0": an arrival to an idle port
        # (a departure that empties the queue has already reset it, since
        # then q_bytes = 0 <= mtu).
        if ev["idle_since"] is not None:
            self.first_above = 0
            self.hit("idle_reset")
        return "pass"

    def on_departure(self, ev: dict) -> str:
        now = ev["t"]
        d = ev["sojourn"]
        self.last_sojourn = d
        entered_at, self.entered_at = self.entered_at, None
        ok = self._ok_to_drop(now, d, ev["q_bytes"])
        if entered_at is not None and entered_at == now:
            # The packet dequeued right after the drop that entered the
            # dropping state: returned without the drop logic (RFC 8289).
            self.hit("after_enter_unchecked")
            return "pass"
        if self.dropping:
            if not ok:
                self.dropping = False
                self.hit("leave")
                return "pass"
            if now >= self.drop_next:
                self.count += 1
                # docs/aqm.md advances drop_next at the signal; RFC 8289 does it
                # only once the next packet is found ok_to_drop.
                self.drop_next = self._control_law(self.drop_next)
                self.hit("control_law")
                return "mark:early"
            self.hit("dropping_wait")
            return "pass"
        if ok:
            self.dropping = True
            delta = self.count - self.lastcount
            if delta > 1 and now - self.drop_next < 16 * self.interval:
                self.count = delta
                self.hit("enter_reuse")
            else:
                self.count = 1
                self.hit("enter_count1")
            self.drop_next = self._control_law(float(now))
            self.lastcount = self.count
            self.entered_at = now
            self.hit("enter")
            return "mark:early"
        return "pass"

    def probe(self) -> dict:
        return {"count": float(self.count), "qdelay": secs(self.last_sojourn)}
