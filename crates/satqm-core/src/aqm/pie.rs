//! PIE, Proportional Integral controller Enhanced (RFC 8033). The queueing
//! delay is the sojourn time of the last departing packet (the timestamp
//! method of RFC 8033 section 5.1), zero once a departure empties the
//! queue; see docs/aqm.md for the update rule.

use super::params::ParamTable;
use super::{PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    pub target: SimTime,
    pub t_update: SimTime,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: SimTime,
    pub mean_packet_size: f64,
    pub mark_ecn_threshold: f64,
}

impl PieParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<PieParams, ConfigError> {
        Ok(PieParams {
            target: t.time("target", SimTime::from_ms(15))?,
            t_update: t.time("t_update", SimTime::from_ms(15))?,
            alpha: t.f64_in("alpha", 0.125, 0.0, false, 1e3)?,
            beta: t.f64_in("beta", 1.25, 0.0, false, 1e3)?,
            max_burst: t.time("max_burst", SimTime::from_ms(150))?,
            mean_packet_size: t.f64_in("mean_packet_size", 1500.0, 0.0, true, 1e6)?,
            mark_ecn_threshold: t.f64_in("mark_ecn_threshold", 0.1, 0.0, false, 1.0)?,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Pie {
    p: PieParams,
    prob: f64,
    qdelay_old: f64,
    last_sojourn: f64,
    qdelay: f64,
    /// Kept in whole nanoseconds, so that `max_burst` runs out after exactly
    /// `max_burst / t_update` updates.
    burst_allowance: SimTime,
}

impl Pie {
    pub fn new(p: PieParams) -> Pie {
        let burst = p.max_burst;
        Pie {
            p,
            prob: 0.0,
            qdelay_old: 0.0,
            last_sojourn: 0.0,
            qdelay: 0.0,
            burst_allowance: burst,
        }
    }

    pub fn interval(&self) -> SimTime {
        self.p.t_update
    }

    /// Whether an update on an empty queue leaves the state as it is:
    /// probability and delays zero, burst allowance full.
    pub fn at_rest(&self) -> bool {
        self.prob == 0.0
            && self.p.target > SimTime::ZERO
            && self.qdelay_old == 0.0
            && self.qdelay == 0.0
            && self.burst_allowance == self.p.max_burst
    }

    /// A packet left after `sojourn`; `q` is the queue it left behind. A
    /// departure that empties the queue records no delay (Linux's
    /// `pie_process_dequeue()`, ns-3's `PieQueueDisc::DoDequeue()`): a
    /// packet that arrives at the empty queue before the next update does
    /// not bring the last sojourn back.
    pub fn on_departure(&mut self, sojourn: SimTime, q: &QueueView) {
        self.last_sojourn = if q.q_packets == 0 {
            0.0
        } else {
            sojourn.secs_f64()
        };
    }

    pub fn on_timer(&mut self, q: &QueueView) {
        let target = self.p.target.secs_f64();
        let qdelay = if q.q_packets == 0 {
            0.0
        } else {
            self.last_sojourn
        };
        let mut delta = self.p.alpha * (qdelay - target) + self.p.beta * (qdelay - self.qdelay_old);
        let p = self.prob;
        // RFC 8033 section 4.2: smaller steps while the probability is small.
        delta /= if p < 1e-6 {
            2048.0
        } else if p < 1e-5 {
            512.0
        } else if p < 1e-4 {
            128.0
        } else if p < 1e-3 {
            32.0
        } else if p < 1e-2 {
            8.0
        } else if p < 1e-1 {
            2.0
        } else {
            1.0
        };
        if p >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        // Not in RFC 8033's text: Linux's sch_pie adds 2 % per update while
        // the delay exceeds 250 ms, to bring very large delays down fast.
        if qdelay > 0.25 {
            delta += 0.02;
        }
        self.prob = (p + delta).clamp(0.0, 1.0);
        if qdelay == 0.0 && self.qdelay_old == 0.0 {
            self.prob *= 0.98;
        }
        self.burst_allowance = self.burst_allowance.saturating_sub(self.p.t_update);
        if self.prob == 0.0 && qdelay < target / 2.0 && self.qdelay_old < target / 2.0 {
            self.burst_allowance = self.p.max_burst;
        }
        self.qdelay_old = qdelay;
        self.qdelay = qdelay;
    }

    pub fn on_arrival(
        &mut self,
        _now: SimTime,
        _pkt: PacketMeta,
        q: &QueueView,
        u: f64,
    ) -> Verdict {
        if self.burst_allowance > SimTime::ZERO
            || (self.qdelay_old < self.p.target.secs_f64() / 2.0 && self.prob < 0.2)
            || q.q_bytes as f64 <= 2.0 * self.p.mean_packet_size
        {
            return Verdict::Pass;
        }
        if u < self.prob {
            if self.prob <= self.p.mark_ecn_threshold {
                Verdict::Mark(Reason::Early)
            } else {
                Verdict::Drop(Reason::Early)
            }
        } else {
            Verdict::Pass
        }
    }

    /// The drop probability and the queueing delay estimate (s).
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_prob", self.prob);
        put("aqm_qdelay", self.qdelay);
    }
}
