//! AVQRED, Adaptive Virtual Queue RED (Byun & Baras; `000_…` and `003_…`
//! section 5): a virtual queue drained at the measured and smoothed output
//! rate, clamped to `[min_capacity, max_capacity]`, whose length in packets
//! of `packet_bytes` drives RED's decision directly (no EWMA, no `max_p`).
//!
//! Errata handled (see DESIGN.md and docs/aqm.md): `p_a = p_b / (1 - count
//! p_b)` (the printed `p_a / …` is a typo), and `last_measure` moves only when
//! the virtual queue is drained, so that with packets less than
//! `measure_interval` apart (as at 20 Mbit/s) it still drains. A packet
//! joins the virtual queue unless the verdict drops it: the virtual queue
//! stands for what will be transmitted, and a dropped packet never is (the
//! printed pseudo-code adds `b` after the decision with an indentation that
//! cannot be read either way; counting drops would make the virtual queue
//! track offered load, and retransmissions of dropped packets would lock a
//! dropping port into forced drops).

use super::params::ParamTable;
use super::vq::VirtualQueue;
use super::{spread, Outcome, PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct AvqRedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub packet_bytes: f64,
    pub alpha: f64,
    pub min_capacity: Option<u64>,
    pub max_capacity: Option<u64>,
    pub measure_interval: SimTime,
}

impl AvqRedParams {
    pub(crate) fn parse(t: &mut ParamTable) -> Result<AvqRedParams, ConfigError> {
        let min_th = t.required_f64("min_th", 0.0, false, 1e9)?;
        let max_th = t.required_f64("max_th", 0.0, true, 1e9)?;
        if min_th >= max_th {
            return Err(ConfigError::new(
                t.key_path("min_th"),
                "must be less than max_th",
            ));
        }
        let p = AvqRedParams {
            min_th,
            max_th,
            packet_bytes: t.f64_in("packet_bytes", 1500.0, 0.0, true, 1e6)?,
            alpha: t.f64_in("alpha", 0.5, 0.0, false, 1.0)?,
            min_capacity: t.opt_rate("min_capacity")?,
            max_capacity: t.opt_rate("max_capacity")?,
            measure_interval: t.time("measure_interval", SimTime::from_ms(1))?,
        };
        if let (Some(lo), Some(hi)) = (p.min_capacity, p.max_capacity) {
            if lo > hi {
                return Err(ConfigError::new(
                    t.key_path("min_capacity"),
                    "must be <= max_capacity",
                ));
            }
        }
        Ok(p)
    }
}

#[derive(Clone, Debug)]
pub struct AvqRed {
    p: AvqRedParams,
    min_cap: f64,
    max_cap: f64,
    vq: VirtualQueue,
    v_capacity: f64,
    prev_tx_bytes: u64,
    count: i64,
    last_p: f64,
}

impl AvqRed {
    pub fn new(p: &AvqRedParams, rate_bps: u64) -> AvqRed {
        let max_cap = p.max_capacity.unwrap_or(rate_bps) as f64;
        let min_cap = p
            .min_capacity
            .map(|c| c as f64)
            .unwrap_or(max_cap)
            .min(max_cap);
        AvqRed {
            p: p.clone(),
            min_cap,
            max_cap,
            vq: VirtualQueue::default(),
            v_capacity: max_cap,
            prev_tx_bytes: 0,
            count: -1,
            last_p: 0.0,
        }
    }

    /// The bounds of the estimated capacity follow the link's rate where
    /// no parameter fixed them (the estimate itself is measured).
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        self.max_cap = self.p.max_capacity.unwrap_or(rate_bps) as f64;
        self.min_cap = self
            .p
            .min_capacity
            .map(|c| c as f64)
            .unwrap_or(self.max_cap)
            .min(self.max_cap);
        self.v_capacity = self.v_capacity.clamp(self.min_cap, self.max_cap);
    }

    /// The verdict on an arrival; the port then reports what it did with
    /// it ([`on_outcome`](Self::on_outcome)).
    pub fn on_arrival(&mut self, now: SimTime, _pkt: PacketMeta, q: &QueueView, u: f64) -> Verdict {
        let delta = now.saturating_sub(self.vq.last);
        if delta > self.p.measure_interval {
            let dt = delta.secs_f64();
            let output_rate = q.departed_bytes.saturating_sub(self.prev_tx_bytes) as f64 * 8.0 / dt;
            self.prev_tx_bytes = q.departed_bytes;
            let smoothed = self.p.alpha * output_rate + (1.0 - self.p.alpha) * self.v_capacity;
            self.v_capacity = smoothed.min(self.max_cap).max(self.min_cap);
            self.vq.drain(now, self.v_capacity);
        }
        let q_size = self.vq.bytes / self.p.packet_bytes;
        if self.p.min_th < q_size && q_size < self.p.max_th {
            self.count += 1;
            let p_b = (q_size - self.p.min_th) / (self.p.max_th - self.p.min_th);
            let p_a = spread(p_b, self.count);
            self.last_p = p_a;
            if u < p_a {
                self.count = 0;
                Verdict::Mark(Reason::Early)
            } else {
                Verdict::Pass
            }
        } else if q_size >= self.p.max_th {
            self.count = 0;
            self.last_p = 1.0;
            Verdict::Mark(Reason::Forced)
        } else {
            self.count = -1;
            self.last_p = 0.0;
            Verdict::Pass
        }
    }

    /// The virtual queue counts the packets the port admitted (passed or
    /// marked), not those it dropped.
    pub fn on_outcome(&mut self, pkt: PacketMeta, outcome: Outcome) {
        if outcome.admitted() {
            self.vq.bytes += pkt.size as f64;
        }
    }

    /// The virtual queue (bytes), the virtual capacity (bit/s), the last
    /// drop probability and RED's count since the last drop.
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_vq_bytes", self.vq.bytes);
        put("aqm_vcap_bps", self.v_capacity);
        put("aqm_prob", self.last_p);
        put("aqm_count", self.count as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_only_after_the_measure_interval() {
        let p = AvqRedParams {
            min_th: 10.0,
            max_th: 20.0,
            packet_bytes: 1500.0,
            alpha: 1.0,
            min_capacity: Some(12_000_000),
            max_capacity: Some(12_000_000),
            measure_interval: SimTime::from_ms(1),
        };
        let mut a = AvqRed::new(&p, 20_000_000);
        let q = QueueView::default();
        let pkt = PacketMeta {
            size: 1500,
            ecn_capable: false,
            ect1: false,
        };
        // Packets 0.6 ms apart (1500 B at 20 Mbit/s): no drain until > 1 ms
        // has passed since the last drain.
        let v = a.on_arrival(SimTime::from_us(600), pkt, &q, 0.9);
        a.on_outcome(pkt, Outcome::of(v, false, false)); // 0.6 ms > 1 ms? no
        assert_eq!(a.vq.bytes, 1500.0);
        let v = a.on_arrival(SimTime::from_us(1200), pkt, &q, 0.9);
        a.on_outcome(pkt, Outcome::of(v, false, false)); // 1.2 ms: drain 1.2 ms at 12 Mbit/s = 1800 B
        assert_eq!(a.vq.bytes, 1500.0);
        assert_eq!(a.vq.last, SimTime::from_us(1200));
        let v = a.on_arrival(SimTime::from_us(1800), pkt, &q, 0.9);
        a.on_outcome(pkt, Outcome::of(v, false, false)); // 0.6 ms since: no drain
        assert_eq!(a.vq.bytes, 3000.0);
    }
}
