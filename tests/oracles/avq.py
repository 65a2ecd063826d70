"""Adaptive Virtual Queue (Kunniyur & Srikant 2001, 002_* section 2; the
token-bucket form of the AVQRED papers, 000_*/003_* section 3.2), with the
units of docs/aqm.md: rates in bit/s, sizes in bytes, times in seconds.

Branches (besides GKVQ's drain/admit ones): ``cap_c`` (C' + alpha*gamma*C*dt
capped at C), ``floor_zero`` (C' would go negative), ``vcap_update``.
"""

from __future__ import annotations

from . import secs
from .gkvq import Gkvq


class Avq(Gkvq):
    kind = "avq"
    defaults = {"gamma": 0.98, "alpha": 0.15, "vq_limit": None}
    spec_probes = ("vq_bytes", "vcap_bps")

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        self.alpha = float(self.p["alpha"])
        self.c = float(self.rate_bps)
        # C' starts at gamma*C (docs/aqm.md); the paper gives no initial value.
        self.vcap = self.gamma * self.c

    def on_arrival(self, ev: dict) -> str:
        t = ev["t"]
        b = ev["size"]
        # The papers write VQ - C'(t - s) with VQ in bytes and C' a rate; the
        # spec makes the units explicit: C' in bit/s, hence the /8.
        self._drain(t, self.vcap)
        verdict = self._admit(b)  # "If VQ + b > B: mark" (B = vq_limit)
        dt = secs(t - self.s)
        grown = self.vcap + self.alpha * self.gamma * self.c * dt
        if grown > self.c:
            grown = self.c
            self.hit("cap_c")
        # The papers subtract alpha*b with b in bytes; the spec uses bits.
        new = grown - self.alpha * b * 8.0
        if new < 0.0:
            new = 0.0
            self.hit("floor_zero")
        self.vcap = new
        self.hit("vcap_update")
        self.s = t
        return verdict

    def probe(self) -> dict:
        return {"vq_bytes": self.vq, "vcap_bps": self.vcap}
