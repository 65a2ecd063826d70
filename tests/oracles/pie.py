"""PIE (RFC 8033) as specified in docs/aqm.md: the timestamp method (the
queue delay is the sojourn time of the last packet that left, 0 when that
packet left the queue empty, as Linux's ``pie_process_dequeue()`` and ns-3's
``PieQueueDisc::DoDequeue()`` record it, and 0 when the queue is empty at
the update), no departure-rate estimator, no de-randomisation, no byte
mode; with the "cap drop adjustment" (RFC 8033 section 5.5), ECN threshold
(section 5.1) and the 250 ms rule.

Branches: ``scale_2048``, ``scale_512``, ``scale_128``, ``scale_32``,
``scale_8``, ``scale_2``, ``scale_1`` (the auto-tuning of p_delta by the
current p), ``cap_002`` (p >= 0.1 and p_delta > 0.02), ``over_250ms``,
``clamp_zero``, ``clamp_one``, ``decay`` (qdelay == qdelay_old == 0, p > 0),
``burst_reset``, ``burst_decrement`` (allowance > 0 reduced);
on arrival: ``pass_burst``, ``pass_low_delay``, ``pass_two_packets``,
``mark`` (signal, p <= threshold), ``drop`` (signal, p > threshold),
``pass_random`` (u >= p).
"""

from __future__ import annotations

from . import Oracle, secs


class Pie(Oracle):
    kind = "pie"
    defaults = {
        "target": 0.015,
        "t_update": 0.015,
        "alpha": 0.125,
        "beta": 1.25,
        "max_burst": 0.150,
        "mean_packet_size": 1500,
        "mark_ecn_threshold": 0.1,
    }
    time_params = ("target", "t_update", "max_burst")
    spec_probes = ("prob", "qdelay")

    def __init__(self, params: dict, rate_bps: int, limit_bytes: int):
        super().__init__(params, rate_bps, limit_bytes)
        p = self.p
        self.target = p["target"]  # ns
        self.t_update = p["t_update"]  # ns
        self.max_burst = p["max_burst"]  # ns
        self.alpha = float(p["alpha"])  # per second
        self.beta = float(p["beta"])  # per second
        self.mps = float(p["mean_packet_size"])
        self.ecn_th = float(p["mark_ecn_threshold"])
        self.prob = 0.0
        self.qdelay_old = 0  # ns
        self.burst_allowance = self.max_burst  # ns
        self.last_sojourn = 0  # ns, sojourn of the last packet that left

    def timer_interval_ns(self) -> int:
        return self.t_update

    def on_departure(self, ev: dict) -> str:
        # ev["q_packets"]: what the departure left behind
        self.last_sojourn = ev["sojourn"] if ev["q_packets"] > 0 else 0
        return "pass"

    def on_timer(self, ev: dict) -> None:
        # "or 0 if the queue is empty": read as no packet waiting (q_packets).
        qdelay = self.last_sojourn if ev["q_packets"] > 0 else 0
        p = self.prob
        d = self.alpha * secs(qdelay - self.target) + self.beta * secs(qdelay - self.qdelay_old)
        if p < 1e-6:
            d /= 2048.0
            self.hit("scale_2048")
        elif p < 1e-5:
            d /= 512.0
            self.hit("scale_512")
        elif p < 1e-4:
            d /= 128.0
            self.hit("scale_128")
        elif p < 1e-3:
            d /= 32.0
            self.hit("scale_32")
        elif p < 1e-2:
            d /= 8.0
            self.hit("scale_8")
        elif p < 1e-1:
            d /= 2.0
            self.hit("scale_2")
        else:
            self.hit("scale_1")
        if p >= 0.1 and d > 0.02:
            d = 0.02
            self.hit("cap_002")
        # docs/aqm.md. As far as I can tell RFC 8033 has no 250 ms rule (Linux
        # sch_pie.c adds 2 % when qdelay > 250 ms).
        if qdelay > 250_000_000:
            d += 0.02
            self.hit("over_250ms")
        p = p + d
        if p < 0.0:
            p = 0.0
            self.hit("clamp_zero")
        elif p > 1.0:
            p = 1.0
            self.hit("clamp_one")
        # docs/aqm.md clamps, then decays; RFC 8033 decays, then bounds. The
        # same result: the decay needs qdelay = 0, so p + p_delta < p <= 1.
        if qdelay == 0 and self.qdelay_old == 0:
            if p > 0.0:
                self.hit("decay")
            p = 0.98 * p
        self.prob = p
        # docs/aqm.md: decrement, then reset, both here. RFC 8033 section 4.4
        # puts the reset test with the per-packet decision (enqueue) and the
        # decrement in the periodic update.
        if self.burst_allowance > 0:
            self.hit("burst_decrement")
        self.burst_allowance = max(self.burst_allowance - self.t_update, 0)
        half = self.target / 2.0
        if p == 0.0 and qdelay < half and self.qdelay_old < half:
            self.burst_allowance = self.max_burst
            self.hit("burst_reset")
        self.qdelay_old = qdelay

    def on_arrival(self, ev: dict) -> str:
        if self.burst_allowance > 0:
            self.hit("pass_burst")
            return "pass"
        if self.qdelay_old < self.target / 2.0 and self.prob < 0.2:
            self.hit("pass_low_delay")
            return "pass"
        if ev["q_bytes"] <= 2.0 * self.mps:
            self.hit("pass_two_packets")
            return "pass"
        if ev["u"] < self.prob:
            if self.prob <= self.ecn_th:
                self.hit("mark")
                return "mark:early"
            self.hit("drop")
            return "drop:early"
        self.hit("pass_random")
        return "pass"

    def probe(self) -> dict:
        # qdelay: the value used by the last update (qdelay_old), in seconds.
        return {"prob": self.prob, "qdelay": secs(self.qdelay_old)}
