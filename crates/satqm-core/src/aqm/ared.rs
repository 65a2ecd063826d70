//! Adaptive RED (Floyd, Gummadi, Shenker 2001): gentle RED whose `max_p`
//! is adapted by AIMD every `interval` toward a target band of the
//! average queue, with `w_q` set from the link rate.
//!
//! ```text
//! target = [min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)]
//! avg > high and max_p <= 0.5:  max_p += min(alpha, max_p / 4)
//! avg < low  and max_p >= 0.01: max_p *= beta
//! w_q = 1 - exp(-1 / C),  C = link rate in packets per second
//! ```
//! Defaults alpha = 0.01, beta = 0.9 (the parallel-VQ paper's Table II).

use super::params::ParamTable;
use super::red::{Red, RedParams};
use super::{PacketMeta, Probe, QueueView, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct AredParams {
    pub red: RedParams,
    pub alpha: f64,
    pub beta: f64,
    pub interval: SimTime,
}

impl AredParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<AredParams, ConfigError> {
        Ok(AredParams {
            red: RedParams::parse(t, true)?,
            alpha: t.f64_in("alpha", 0.01, 0.0, true, 1.0)?,
            beta: t.f64_in("beta", 0.9, 0.0, true, 1.0)?,
            interval: t.time("interval", SimTime::from_ms(500))?,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Ared {
    red: Red,
    alpha: f64,
    beta: f64,
    interval: SimTime,
    /// `w_q` follows the link rate (it was not given).
    auto_w: bool,
}

/// Floyd et al. (2001)'s automatic `w_q`: a time constant of one second's
/// worth of packets, `1 - exp(-1 / C)` with `C` in packets per second.
fn auto_w_q(rate_bps: u64, mean_packet_size: f64) -> f64 {
    let pkts_per_s = rate_bps as f64 / (8.0 * mean_packet_size);
    1.0 - (-1.0 / pkts_per_s).exp()
}

impl Ared {
    pub fn new(p: &AredParams, rate_bps: u64) -> Ared {
        let mut red = p.red.clone();
        let auto_w = red.w_q.is_nan();
        if auto_w {
            red.w_q = auto_w_q(rate_bps, red.mean_packet_size);
        }
        Ared {
            red: Red::new(red),
            alpha: p.alpha,
            beta: p.beta,
            interval: p.interval,
            auto_w,
        }
    }

    /// The automatic `w_q` follows the link's rate.
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        if self.auto_w {
            self.red.p.w_q = auto_w_q(rate_bps, self.red.p.mean_packet_size);
        }
    }

    pub fn interval(&self) -> SimTime {
        self.interval
    }

    pub fn on_arrival(&mut self, now: SimTime, pkt: PacketMeta, q: &QueueView, u: f64) -> Verdict {
        self.red.on_arrival(now, pkt, q, u)
    }

    pub fn on_timer(&mut self, _now: SimTime, _q: &QueueView) {
        let p = &mut self.red.p;
        let span = p.max_th - p.min_th;
        let (low, high) = (p.min_th + 0.4 * span, p.min_th + 0.6 * span);
        let avg = self.red.avg;
        if avg > high && p.max_p <= 0.5 {
            p.max_p += self.alpha.min(p.max_p / 4.0);
        } else if avg < low && p.max_p >= 0.01 {
            p.max_p *= self.beta;
        }
    }

    /// The RED state underneath (RED+Tail moves its thresholds).
    pub(crate) fn red(&self) -> &Red {
        &self.red
    }

    pub(crate) fn red_mut(&mut self) -> &mut Red {
        &mut self.red
    }

    pub fn w_q(&self) -> f64 {
        self.red.p.w_q
    }

    pub fn probe(&self, put: &mut Probe) {
        self.red.probe(put)
    }

    /// The last drop (or mark) probability computed.
    pub fn prob(&self) -> f64 {
        self.red.prob()
    }
}
