//! AVQ, the Adaptive Virtual Queue (Kunniyur & Srikant, SIGCOMM 2001), in
//! the token-bucket form given in the AVQRED papers (`003_…` section 3.2):
//! a virtual queue drained at a virtual capacity `C'` that grows at
//! `alpha * gamma * C` and shrinks by `alpha` times each arrival, so the
//! link settles at utilization `gamma`.
//!
//! ```text
//! VQ <- max(VQ - C'(t - s), 0)
//! VQ + b > B: signal            else VQ <- VQ + b
//! C' <- max(min(C' + alpha gamma C (t - s), C) - alpha b, 0)
//! ```
//! Rates in bit/s, `b` converted to bits in the capacity update.
//!
//! In the pseudocode every arrival depletes `C'`, including the ones the
//! virtual queue rejects (dropped or marked), so under heavy overload the
//! offered rate, not the carried rate, settles at `gamma C` and the link
//! carries about `gamma C (1 - p)`. `count_rejected = false` depletes `C'`
//! only by the arrivals the virtual queue accepts: the carried rate then
//! settles at `gamma C`. The two agree when the signalled fraction is
//! small, as in the AVQ paper's marking experiments.

use super::gkvq::GkvqParams;
use super::params::ParamTable;
use super::vq::VirtualQueue;
use super::{PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::queue::BufferLimit;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct AvqParams {
    pub vq: GkvqParams,
    pub alpha: f64,
    /// Whether arrivals the virtual queue rejects deplete `C'` (the
    /// pseudocode: true).
    pub count_rejected: bool,
}

impl AvqParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<AvqParams, ConfigError> {
        Ok(AvqParams {
            vq: GkvqParams::parse_vq(t)?,
            alpha: t.f64_in("alpha", 0.15, 0.0, true, 10.0)?,
            count_rejected: t.bool("count_rejected", true)?,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Avq {
    vq: VirtualQueue,
    /// Virtual capacity C', bit/s.
    vcap: f64,
    capacity: f64,
    gamma: f64,
    alpha: f64,
    count_rejected: bool,
    limit: f64,
    /// Whether `capacity` was given (else the link's rate is `C`).
    capacity_given: bool,
}

impl Avq {
    pub fn new(p: &AvqParams, rate_bps: u64, limit: BufferLimit) -> Avq {
        let c = p.vq.capacity_bps(rate_bps);
        Avq {
            vq: VirtualQueue::default(),
            vcap: p.vq.gamma * c,
            capacity: c,
            gamma: p.vq.gamma,
            alpha: p.alpha,
            count_rejected: p.count_rejected,
            limit: p.vq.limit_bytes(limit),
            capacity_given: p.vq.capacity.is_some(),
        }
    }

    /// The link's capacity `C` follows its rate, unless `capacity` fixed
    /// it; the virtual capacity, which never exceeds `C`, is held below the
    /// new one and adapts from there by its own law.
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        if !self.capacity_given {
            self.capacity = rate_bps as f64;
            self.vcap = self.vcap.min(self.capacity);
        }
    }

    pub fn on_arrival(
        &mut self,
        now: SimTime,
        pkt: PacketMeta,
        _q: &QueueView,
        _u: f64,
    ) -> Verdict {
        let dt = self.vq.drain(now, self.vcap);
        let b = pkt.size as f64;
        let v = if self.vq.bytes + b > self.limit {
            Verdict::Mark(Reason::Early)
        } else {
            self.vq.bytes += b;
            Verdict::Pass
        };
        let grown = (self.vcap + self.alpha * self.gamma * self.capacity * dt).min(self.capacity);
        let counted = if v == Verdict::Pass || self.count_rejected {
            b
        } else {
            0.0
        };
        self.vcap = (grown - self.alpha * counted * 8.0).max(0.0);
        v
    }

    /// The virtual queue (bytes) and the virtual capacity (bit/s).
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_vq_bytes", self.vq.bytes);
        put("aqm_vcap_bps", self.vcap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_update_by_hand() {
        let p = AvqParams {
            vq: GkvqParams {
                gamma: 0.98,
                vq_limit: Some(3000.0),
                mean_packet_size: 1000.0,
                capacity: None,
                busy_period: false,
            },
            alpha: 0.15,
            count_rejected: true,
        };
        let mut a = Avq::new(&p, 10_000_000, BufferLimit::Packets(100));
        let q = QueueView::default();
        let pkt = PacketMeta {
            size: 1000,
            ecn_capable: false,
            ect1: false,
        };
        // t = 1 ms: VQ drains from 0; C' = min(9.8e6 + 0.15*0.98*1e7*1e-3, 1e7) - 0.15*8000
        a.on_arrival(SimTime::from_ms(1), pkt, &q, 0.5);
        let expect = (9.8e6 + 0.15 * 0.98 * 1e7 * 1e-3f64).min(1e7) - 1200.0;
        assert!((a.vcap - expect).abs() < 1e-6);
        assert_eq!(a.vq.bytes, 1000.0);
        // Three packets at the same instant: the third overflows 3000 bytes? 1000+1000+1000 = 3000 fits, the fourth does not.
        assert_eq!(
            a.on_arrival(SimTime::from_ms(1), pkt, &q, 0.5),
            Verdict::Pass
        );
        assert_eq!(
            a.on_arrival(SimTime::from_ms(1), pkt, &q, 0.5),
            Verdict::Pass
        );
        assert_eq!(
            a.on_arrival(SimTime::from_ms(1), pkt, &q, 0.5),
            Verdict::Mark(Reason::Early)
        );
    }

    #[test]
    fn capacity_overrides_the_link_rate() {
        // At a gateway's receive queue (100 Mbit/s) the real capacity is the
        // 20 Mbit/s space link: C' starts at gamma * 20 Mbit/s and never
        // grows above it.
        let p = AvqParams {
            vq: GkvqParams {
                gamma: 1.0,
                vq_limit: Some(123_750.0),
                mean_packet_size: 1500.0,
                capacity: Some(20_000_000),
                busy_period: false,
            },
            alpha: 0.15,
            count_rejected: true,
        };
        let mut a = Avq::new(&p, 100_000_000, BufferLimit::Packets(1000));
        assert_eq!(a.vcap, 20e6);
        let pkt = PacketMeta {
            size: 1500,
            ecn_capable: false,
            ect1: false,
        };
        a.on_arrival(SimTime::from_secs(10), pkt, &QueueView::default(), 0.5);
        assert_eq!(a.vcap, 20e6 - 0.15 * 1500.0 * 8.0);
    }

    #[test]
    fn rejected_arrivals_deplete_the_capacity_only_when_counted() {
        let params = |count_rejected| AvqParams {
            vq: GkvqParams {
                gamma: 1.0,
                vq_limit: Some(1000.0),
                mean_packet_size: 1000.0,
                capacity: None,
                busy_period: false,
            },
            alpha: 0.5,
            count_rejected,
        };
        let pkt = PacketMeta {
            size: 1000,
            ecn_capable: false,
            ect1: false,
        };
        let q = QueueView::default();
        let t = SimTime::from_ms(1);
        for count in [true, false] {
            let mut a = Avq::new(&params(count), 10_000_000, BufferLimit::Packets(100));
            assert_eq!(a.on_arrival(t, pkt, &q, 0.0), Verdict::Pass);
            let after_pass = a.vcap;
            assert_eq!(a.vcap, 1e7 - 0.5 * 8000.0);
            // Same instant: the virtual queue is full, the packet is rejected.
            assert_eq!(a.on_arrival(t, pkt, &q, 0.0), Verdict::Mark(Reason::Early));
            let expect = if count {
                after_pass - 0.5 * 8000.0
            } else {
                after_pass
            };
            assert_eq!(a.vcap, expect, "count_rejected = {count}");
        }
    }
}
