"""PI controller (Hollot, Misra, Towsley, Gong 2001), as in docs/aqm.md.

Every ``1/sample_rate`` s (timer):
``p <- a (q - q_ref) - b (q_old - q_ref) + p``, clamped to [0, 1]; ``q_old <- q``.
Either ``a``, ``b`` or ``kp``, ``ki`` (bilinear transform:
``a = kp + ki/(2 fs)``, ``b = kp - ki/(2 fs)``).

Branches: ``clamp_zero``, ``clamp_one``, ``in_range`` (timer);
``mark`` / ``pass`` (arrival).
"""

from __future__ import annotations

from . import Oracle


class Pi(Oracle):
    kind = "pi"
    required = ("q_ref", "sample_rate")
    defaults = {"a": None, "b": None, "kp": None, "ki": None}
    spec_probes = ("prob",)

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        p = self.p
        self.sample_rate = float(p["sample_rate"])
        given = {k: p[k] is not None for k in ("a", "b", "kp", "ki")}
        have_ab = given["a"] and given["b"] and not (given["kp"] or given["ki"])
        have_k = given["kp"] and given["ki"] and not (given["a"] or given["b"])
        if not (have_ab or have_k):
            raise ValueError("pi: give either a and b, or kp and ki")
        if have_ab:
            self.a = float(p["a"])
            self.b = float(p["b"])
        else:
            half = float(p["ki"]) / (2.0 * self.sample_rate)
            self.a = float(p["kp"]) + half
            self.b = float(p["kp"]) - half
        self.q_ref = float(p["q_ref"])
        self.prob = 0.0
        self.q_old = 0.0  # initial q_old: docs/aqm.md does not say; 0 (empty queue)

    def timer_interval_ns(self) -> int:
        return int(round(1e9 / self.sample_rate))

    def on_timer(self, ev: dict) -> None:
        q = float(ev["q_packets"])
        p = self.a * (q - self.q_ref) - self.b * (self.q_old - self.q_ref) + self.prob
        if p < 0.0:
            p = 0.0
            self.hit("clamp_zero")
        elif p > 1.0:
            p = 1.0
            self.hit("clamp_one")
        else:
            self.hit("in_range")
        self.prob = p
        self.q_old = q

    def on_arrival(self, ev: dict) -> str:
        if ev["u"] < self.prob:
            self.hit("mark")
            return "mark:early"
        self.hit("pass")
        return "pass"

    def probe(self) -> dict:
        return {"prob": self.prob}
