"""RED (Floyd & Jacobson 1993) as pseudo-coded in the AVQRED papers
(000_* section 3.1, 003_* section 3.1) and specified in docs/aqm.md.

Branches counted in ``hits``:

``avg_busy`` / ``avg_idle``  the two averaging rules (idle: ``(1-w_q)^m``)
``below``                    ``avg < min_th``: ``count = -1``
``between``                  ``min_th <= avg < max_th``
``gentle``                   gentle and ``max_th <= avg < 2 max_th``
``forced``                   ``avg >= max_th`` (``2 max_th`` when gentle)
``count_growth``             a probabilistic decision with ``count >= 1``
``cap``                      ``count * p_b >= 1`` so ``p_a = 1``
``early_mark`` / ``early_pass``  outcome of ``u < p_a``
``byte_scale``               ``p_b`` scaled by ``size / mean_packet_size``
"""

from __future__ import annotations

from . import Oracle, secs


class Red(Oracle):
    kind = "red"
    required = ("min_th", "max_th")
    defaults = {
        "max_p": 0.1,
        "w_q": 0.002,
        "gentle": False,
        "byte_mode": False,
        "mean_packet_size": 1000,
    }
    spec_probes = ("avg", "prob")

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        p = self.p
        self.min_th = float(p["min_th"])
        self.max_th = float(p["max_th"])
        self.max_p = float(p["max_p"])
        self.gentle = bool(p.get("gentle", True))
        self.byte_mode = bool(p["byte_mode"])
        self.mean_packet_size = float(p["mean_packet_size"])
        self.w_q = self._w_q()
        # typical transmission time of a packet, in seconds ("real, not rounded")
        self.s = self.mean_packet_size * 8.0 / self.rate_bps
        self.avg = 0.0
        self.count = -1
        self.prob = 0.0

    def _w_q(self) -> float:
        return float(self.p["w_q"])

    # -- step 1: the average ---------------------------------------------
    def _average(self, ev: dict) -> None:
        # docs/aqm.md: busy = idle_since is none (transmitter busy or packets
        # waiting). The papers' pseudo-code says "if the queue is nonempty",
        # so an empty queue with the transmitter still busy would take the idle
        # rule there; here it takes the busy rule with q = 0.
        if ev["idle_since"] is None:
            q = ev["q_bytes"] if self.byte_mode else ev["q_packets"]
            self.avg = (1.0 - self.w_q) * self.avg + self.w_q * q
            self.hit("avg_busy")
        else:
            # The papers' m = f(time - q_time): the number of typical packets
            # that could have been sent while the queue was idle.
            m = secs(ev["t"] - ev["idle_since"]) / self.s
            self.avg = (1.0 - self.w_q) ** m * self.avg
            self.hit("avg_idle")

    # -- step 2: the decision ----------------------------------------------
    def _decide(self, ev: dict) -> str:
        avg = self.avg
        forced_at = 2.0 * self.max_th if self.gentle else self.max_th
        if avg < self.min_th:
            self.count = -1
            self.prob = 0.0
            self.hit("below")
            return "pass"
        if avg >= forced_at:
            self.count = 0
            self.prob = 1.0
            self.hit("forced")
            return "mark:forced"
        if avg < self.max_th:
            p_b = self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
            self.hit("between")
        else:  # gentle and max_th <= avg < 2 max_th
            p_b = self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
            self.hit("gentle")
        if self.byte_mode:
            p_b = p_b * ev["size"] / self.mean_packet_size
            self.hit("byte_scale")
        self.count += 1
        if self.count >= 1:
            self.hit("count_growth")
        if self.count * p_b >= 1.0:
            # docs/aqm.md; the papers' pseudo-code has only p_b / (1 - count p_b)
            p_a = 1.0
            self.hit("cap")
        else:
            # A probability: at most 1 (docs/aqm.md), which matters when
            # 1 - p_b < count*p_b < 1.
            p_a = min(p_b / (1.0 - self.count * p_b), 1.0)
        self.prob = p_a
        if ev["u"] < p_a:
            self.count = 0
            self.hit("early_mark")
            return "mark:early"
        self.hit("early_pass")
        return "pass"

    def on_arrival(self, ev: dict) -> str:
        self._average(ev)
        return self._decide(ev)

    def probe(self) -> dict:
        return {"avg": self.avg, "prob": self.prob}

