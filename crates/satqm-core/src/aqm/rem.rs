//! REM, Random Exponential Marking (Athuraliya, Low, Li & Yin, "REM: active
//! queue management", IEEE Network 2001). A link price grows with the
//! backlog mismatch and the rate mismatch; marks follow an exponential of
//! the price.
//!
//! ```text
//! every interval:  price <- max(price + gamma (alpha (q - q_ref) + x - c), 0)
//! on arrival:      signal with probability 1 - phi^(-price)
//! ```
//! `x` is what arrived during the interval and `c` what the link could
//! serve in it, both in packets of `mean_packet_size`.

use super::params::ParamTable;
use super::{PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct RemParams {
    pub gamma: f64,
    pub alpha: f64,
    pub phi: f64,
    pub q_ref: f64,
    pub interval: SimTime,
    pub mean_packet_size: f64,
}

impl RemParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<RemParams, ConfigError> {
        Ok(RemParams {
            gamma: t.f64_in("gamma", 0.001, 0.0, true, 1e3)?,
            alpha: t.f64_in("alpha", 0.1, 0.0, false, 1e3)?,
            phi: t.f64_in("phi", 1.001, 1.0, true, 1e3)?,
            q_ref: t.f64_in("q_ref", 20.0, 0.0, false, 1e9)?,
            interval: t.time("interval", SimTime::from_ms(2))?,
            mean_packet_size: t.f64_in("mean_packet_size", 1000.0, 0.0, true, 1e6)?,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Rem {
    p: RemParams,
    price: f64,
    prob: f64,
    arrived_bytes: u64,
    /// Packets the link serves per interval.
    capacity_pkts: f64,
}

impl Rem {
    pub fn new(p: RemParams, rate_bps: u64) -> Rem {
        let capacity_pkts = rate_bps as f64 * p.interval.secs_f64() / 8.0 / p.mean_packet_size;
        Rem {
            p,
            price: 0.0,
            prob: 0.0,
            arrived_bytes: 0,
            capacity_pkts,
        }
    }

    pub fn interval(&self) -> SimTime {
        self.p.interval
    }

    /// The price's target, the packets the link serves per interval,
    /// follows the link's rate.
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        self.capacity_pkts =
            rate_bps as f64 * self.p.interval.secs_f64() / 8.0 / self.p.mean_packet_size;
    }

    pub fn on_timer(&mut self, q: &QueueView) {
        let x = self.arrived_bytes as f64 / self.p.mean_packet_size;
        self.arrived_bytes = 0;
        let backlog = q.q_packets as f64 - self.p.q_ref;
        self.price = (self.price
            + self.p.gamma * (self.p.alpha * backlog + x - self.capacity_pkts))
            .max(0.0);
        self.prob = 1.0 - self.p.phi.powf(-self.price);
    }

    pub fn on_arrival(
        &mut self,
        _now: SimTime,
        pkt: PacketMeta,
        _q: &QueueView,
        u: f64,
    ) -> Verdict {
        self.arrived_bytes += pkt.size as u64;
        if u < self.prob {
            Verdict::Mark(Reason::Early)
        } else {
            Verdict::Pass
        }
    }

    /// The link price and the marking probability.
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_price", self.price);
        put("aqm_prob", self.prob);
    }
}
