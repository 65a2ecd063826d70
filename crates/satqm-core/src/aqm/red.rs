//! RED: Random Early Detection (Floyd & Jacobson, IEEE/ACM ToN 1993), as in
//! the pseudo-code of the AVQRED papers (`003_…` section 3.1), with the
//! *gentle* variant (Floyd 2000) and byte mode.
//!
//! ```text
//! busy queue:  avg <- (1 - w_q) avg + w_q q
//! idle queue:  avg <- (1 - w_q)^m avg,  m = idle time / typical transmission time
//! min_th <= avg < max_th:  count += 1; p_b = max_p (avg - min_th)/(max_th - min_th)
//!                          p_a = p_b / (1 - count p_b); signal with probability p_a
//! avg >= max_th:           signal (forced)
//! ```
//!
//! Gentle: between `max_th` and `2 max_th`, `p_b` rises linearly from
//! `max_p` to 1. Byte mode: queue sizes in bytes and
//! `p_b <- p_b * size / mean_packet_size`.

use super::params::ParamTable;
use super::{spread, PacketMeta, Probe, QueueView, Reason, Verdict};
use crate::error::ConfigError;
use crate::time::SimTime;

#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub byte_mode: bool,
    /// Bytes; sets the typical transmission time for idle decay and the
    /// byte-mode scaling.
    pub mean_packet_size: f64,
}

impl RedParams {
    /// Parse; `adaptive` (Adaptive RED) makes `w_q` optional and gentle the
    /// default.
    pub(crate) fn parse(t: &mut ParamTable, adaptive: bool) -> Result<RedParams, ConfigError> {
        let min_th = t.required_f64("min_th", 0.0, false, 1e9)?;
        let max_th = t.required_f64("max_th", 0.0, true, 1e9)?;
        if min_th >= max_th {
            return Err(ConfigError::new(
                t.key_path("min_th"),
                "must be less than max_th",
            ));
        }
        let max_p = t.f64_in("max_p", 0.1, 0.0, true, 1.0)?;
        let w_q = if adaptive && !t.has("w_q") {
            f64::NAN
        } else {
            t.f64_in("w_q", 0.002, 0.0, true, 1.0)?
        };
        Ok(RedParams {
            min_th,
            max_th,
            max_p,
            w_q,
            gentle: t.bool("gentle", adaptive)?,
            byte_mode: t.bool("byte_mode", false)?,
            mean_packet_size: t.f64_in("mean_packet_size", 1000.0, 0.0, true, 1e6)?,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Red {
    pub p: RedParams,
    pub avg: f64,
    count: i64,
    last_p: f64,
}

impl Red {
    pub fn new(p: RedParams) -> Red {
        Red {
            p,
            avg: 0.0,
            count: -1,
            last_p: 0.0,
        }
    }

    /// Update the average on an arrival.
    fn average(&mut self, now: SimTime, q: &QueueView) {
        let w = self.p.w_q;
        match q.idle_since {
            None => {
                let cur = if self.p.byte_mode {
                    q.q_bytes as f64
                } else {
                    q.q_packets as f64
                };
                self.avg = (1.0 - w) * self.avg + w * cur;
            }
            Some(since) => {
                let s = self.p.mean_packet_size * 8.0 / q.rate_bps as f64;
                let m = now.saturating_sub(since).secs_f64() / s;
                self.avg *= (1.0 - w).powf(m);
            }
        }
    }

    pub fn on_arrival(&mut self, now: SimTime, pkt: PacketMeta, q: &QueueView, u: f64) -> Verdict {
        self.average(now, q);
        let p = &self.p;
        let avg = self.avg;
        let p_b = if avg < p.min_th {
            self.count = -1;
            self.last_p = 0.0;
            return Verdict::Pass;
        } else if avg < p.max_th {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        } else if p.gentle && avg < 2.0 * p.max_th {
            p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
        } else {
            self.count = 0;
            self.last_p = 1.0;
            return Verdict::Mark(Reason::Forced);
        };
        let p_b = if p.byte_mode {
            p_b * pkt.size as f64 / p.mean_packet_size
        } else {
            p_b
        };
        self.count += 1;
        let p_a = spread(p_b, self.count);
        self.last_p = p_a;
        if u < p_a {
            self.count = 0;
            Verdict::Mark(Reason::Early)
        } else {
            Verdict::Pass
        }
    }

    /// The average queue, the last probability computed, the count
    /// since the last signal and `max_p` (which Adaptive RED moves).
    pub fn probe(&self, put: &mut Probe) {
        put("aqm_avg", self.avg);
        put("aqm_prob", self.last_p);
        put("aqm_count", self.count as f64);
        put("aqm_max_p", self.p.max_p);
    }

    /// The last drop (or mark) probability computed.
    pub fn prob(&self) -> f64 {
        self.last_p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(gentle: bool) -> Red {
        Red::new(RedParams {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 1.0, // avg = instantaneous queue: makes cases easy to state
            gentle,
            byte_mode: false,
            mean_packet_size: 1000.0,
        })
    }

    fn busy(q: u32) -> QueueView {
        QueueView {
            q_packets: q,
            q_bytes: q as u64 * 1000,
            idle_since: None,
            departed_bytes: 0,
            rate_bps: 8_000_000,
        }
    }

    const PKT: PacketMeta = PacketMeta {
        size: 1000,
        ecn_capable: false,
        ect1: false,
    };

    #[test]
    fn regions() {
        let mut r = red(false);
        assert_eq!(r.on_arrival(SimTime(0), PKT, &busy(3), 0.0), Verdict::Pass);
        assert_eq!(
            r.on_arrival(SimTime(0), PKT, &busy(15), 0.99),
            Verdict::Mark(Reason::Forced)
        );
        // avg 10: p_b = 0.05; count 0 -> p_a = 0.05
        assert_eq!(
            r.on_arrival(SimTime(0), PKT, &busy(10), 0.049),
            Verdict::Mark(Reason::Early)
        );
        // count 0 after the mark -> next: count 1, p_a = 0.05/(1-0.05)
        assert_eq!(
            r.on_arrival(SimTime(0), PKT, &busy(10), 0.052),
            Verdict::Mark(Reason::Early)
        );
        assert_eq!(
            r.on_arrival(SimTime(0), PKT, &busy(10), 0.053),
            Verdict::Pass
        );
        assert!((r.last_p - 0.05 / (1.0 - 0.05)).abs() < 1e-12);
        let mut g = red(true);
        // gentle: avg 22.5 -> p_b = 0.1 + 0.9 * 0.5 = 0.55
        assert_eq!(
            g.on_arrival(SimTime(0), PKT, &busy(22), 0.99),
            Verdict::Pass
        );
        assert_eq!(
            g.on_arrival(SimTime(0), PKT, &busy(30), 0.99),
            Verdict::Mark(Reason::Forced)
        );
    }

    #[test]
    fn idle_decay() {
        let mut r = red(false);
        r.p.w_q = 0.5;
        r.avg = 8.0;
        // 1000-byte packets at 8 Mbit/s: 1 ms each; 3 ms idle -> m = 3
        let v = QueueView {
            idle_since: Some(SimTime::from_ms(10)),
            ..busy(0)
        };
        r.on_arrival(SimTime::from_ms(13), PKT, &v, 0.9);
        assert!((r.avg - 1.0).abs() < 1e-12);
    }
}
