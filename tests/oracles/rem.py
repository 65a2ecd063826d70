"""REM (Athuraliya, Low, Li, Yin 2001), as in docs/aqm.md.

Every ``interval`` (timer), with ``x`` the bytes that arrived at the port in
the interval and ``c = rate * interval / 8`` the bytes it can serve, both in
packets of ``mean_packet_size``, and ``q`` the queue in packets:
``price <- max(price + gamma (alpha (q - q_ref) + x - c), 0)``.
On arrival: mark if ``u < 1 - phi^(-price)``.

``x`` counts every packet that reached ``on_arrival`` (also those then marked,
dropped or lost to overflow): "the bytes that arrived at the at port".

Branches: ``price_up``, ``price_down`` (decrease, still > 0), ``price_floor``
(clamped at 0), ``mark``, ``pass``.
"""

from __future__ import annotations

from . import Oracle, secs


class Rem(Oracle):
    kind = "rem"
    defaults = {
        "gamma": 0.001,
        "alpha": 0.1,
        "phi": 1.001,
        "q_ref": 20,
        "interval": 0.002,
        "mean_packet_size": 1000,
    }
    time_params = ("interval",)
    spec_probes = ("price", "prob")

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        p = self.p
        self.gamma = float(p["gamma"])
        self.alpha = float(p["alpha"])
        self.phi = float(p["phi"])
        self.q_ref = float(p["q_ref"])
        self.interval = p["interval"]  # ns
        self.mps = float(p["mean_packet_size"])
        self.price = 0.0
        self.arrived_bytes = 0

    def timer_interval_ns(self) -> int:
        return self.interval

    def _prob(self) -> float:
        return 1.0 - self.phi ** (-self.price)

    def on_timer(self, ev: dict) -> None:
        q = float(ev["q_packets"])
        x = self.arrived_bytes / self.mps
        c = self.rate_bps * secs(self.interval) / 8.0 / self.mps
        new = self.price + self.gamma * (self.alpha * (q - self.q_ref) + x - c)
        if new <= 0.0:
            self.hit("price_floor" if new < 0.0 else "price_down")
            new = 0.0
        elif new > self.price:
            self.hit("price_up")
        else:
            self.hit("price_down")
        self.price = new
        self.arrived_bytes = 0

    def on_arrival(self, ev: dict) -> str:
        self.arrived_bytes += ev["size"]
        if ev["u"] < self._prob():
            self.hit("mark")
            return "mark:early"
        self.hit("pass")
        return "pass"

    def probe(self) -> dict:
        return {"price": self.price, "prob": self._prob()}
