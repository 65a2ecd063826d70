"""Gibbens & Kelly's fixed virtual queue (GKVQ), as in docs/aqm.md: a virtual
queue of ``vq_limit`` bytes drained at ``gamma * C``. With ``busy_period``
an overflow starts a marking period that ends when an arrival finds the
virtual queue empty; arrivals in it that fit join the queue and are marked.

Branches: ``drain_partial`` (VQ > 0 after draining), ``drain_zero`` (drained
empty from a non-empty VQ), ``vq_empty`` (VQ already 0), ``overflow`` (mark,
VQ unchanged), ``accept``, ``busy_mark`` (fits, marked in a marking period),
``busy_end`` (a marking period ends on an empty VQ).
"""

from __future__ import annotations

from . import Oracle, secs


class Gkvq(Oracle):
    kind = "gkvq"
    defaults = {"gamma": 0.98, "vq_limit": None, "busy_period": False}
    # The spec lists no probe for GKVQ; vq_bytes is compared only if both
    # sides report it.
    spec_probes = ()

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        self.gamma = float(self.p["gamma"])
        vq_limit = self.p["vq_limit"]
        # default: the physical buffer in bytes
        self.vq_limit = float(limit_bytes if vq_limit is None else vq_limit)
        self.vq = 0.0
        self.busy_period = bool(self.p.get("busy_period", False))
        self.marking = False
        # previous arrival time; taken as 0 before the first arrival
        # (docs/aqm.md does not say; it is irrelevant here since VQ starts at 0)
        self.s = 0

    def _drain(self, t: int, rate: float) -> None:
        drained = rate * secs(t - self.s) / 8.0
        if self.vq == 0.0:
            self.hit("vq_empty")
        elif self.vq - drained > 0.0:
            self.hit("drain_partial")
        else:
            self.hit("drain_zero")
        self.vq = max(self.vq - drained, 0.0)

    def _admit(self, b: int) -> str:
        if self.vq == 0.0 and self.marking:
            self.hit("busy_end")
            self.marking = False
        if self.vq + b > self.vq_limit:
            self.hit("overflow")
            self.marking = self.busy_period
            return "mark:early"
        self.vq += b
        if self.marking:
            self.hit("busy_mark")
            return "mark:early"
        self.hit("accept")
        return "pass"

    def on_arrival(self, ev: dict) -> str:
        t = ev["t"]
        self._drain(t, self.gamma * self.rate_bps)
        verdict = self._admit(ev["size"])
        self.s = t
        return verdict

    def probe(self) -> dict:
        return {"vq_bytes": self.vq}
