"""Adaptive RED (Floyd, Gummadi, Shenker 2001), parameters of the parallel-VQ
paper's Table II (004_*), as specified in docs/aqm.md: gentle RED plus an
AIMD adaptation of ``max_p`` every ``interval`` on the timer.

Branches (in addition to RED's): ``maxp_up``, ``maxp_up_alpha`` (step
``alpha``), ``maxp_up_quarter`` (step ``max_p/4``), ``maxp_down``,
``maxp_in_band`` (avg inside the target band), ``maxp_high_blocked``
(avg above the band but ``max_p > 0.5``), ``maxp_low_blocked`` (below the
band but ``max_p < 0.01``).
"""

from __future__ import annotations

import math

from .red import Red


class AdaptiveRed(Red):
    kind = "ared"
    required = ("min_th", "max_th")
    defaults = {
        "max_p": 0.1,
        "w_q": None,  # automatic: 1 - exp(-1/C), C in packets/s
        "byte_mode": False,
        "mean_packet_size": 1000,
        "interval": 0.5,
        "alpha": 0.01,
        "beta": 0.9,
    }
    time_params = ("interval",)
    spec_probes = ("avg", "prob", "max_p")

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        self.gentle = True
        self.alpha = float(self.p["alpha"])
        self.beta = float(self.p["beta"])
        span = self.max_th - self.min_th
        self.low = self.min_th + 0.4 * span
        self.high = self.min_th + 0.6 * span

    def _w_q(self) -> float:
        if self.p["w_q"] is not None:
            return float(self.p["w_q"])
        c = self.rate_bps / (8.0 * float(self.p["mean_packet_size"]))
        return 1.0 - math.exp(-1.0 / c)

    def timer_interval_ns(self) -> int:
        return self.p["interval"]

    def on_timer(self, ev: dict) -> None:
        # Uses the average as last updated on an arrival (the timer does not
        # sample the queue itself).
        avg = self.avg
        if avg > self.high and self.max_p <= 0.5:
            a = min(self.alpha, self.max_p / 4.0)
            self.hit("maxp_up_alpha" if a == self.alpha else "maxp_up_quarter")
            self.max_p = self.max_p + a
            self.hit("maxp_up")
        elif avg < self.low and self.max_p >= 0.01:
            self.max_p = self.max_p * self.beta
            self.hit("maxp_down")
        elif avg > self.high:
            self.hit("maxp_high_blocked")
        elif avg < self.low:
            self.hit("maxp_low_blocked")
        else:
            self.hit("maxp_in_band")

    def probe(self) -> dict:
        return {"avg": self.avg, "prob": self.prob, "max_p": self.max_p}
