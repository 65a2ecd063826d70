//! TCP Hybla (Caini & Firrincieli, "TCP Hybla: a TCP enhancement for
//! heterogeneous networks", Int. J. Satellite Communications and
//! Networking 22(5), 2004): a connection with round-trip time RTT grows its
//! window as a reference connection with RTT0 (25 ms) would, so long-delay
//! satellite flows are not penalised by their RTT.
//!
//! With `rho = max(RTT / RTT0, 1)`, per ACK:
//! ```text
//! slow start:            cwnd += (2^rho - 1) * MSS
//! congestion avoidance:  cwnd += rho^2 * MSS^2 / cwnd
//! ```
//! RTT is the smallest smoothed RTT (RFC 6298) seen so far: as in Linux's
//! `tcp_hybla`, rho is recomputed only when the smoothed RTT reaches a new
//! minimum, so a queue building up does not raise it (which would make the
//! flow more aggressive the fuller the queue); before a first sample
//! `rho = 1` (Reno). As in Linux, the slow-start exponent is
//! capped at 16 and slow start does not overshoot ssthresh. Loss response
//! is Reno's. The paper pairs Hybla with SACK and pacing; without pacing
//! (satqm's `rate_cap` aside) its slow start sends large bursts.

use super::reno::reno_ssthresh;
use super::{AckSample, CongestionControl, Signal, Window};
use crate::time::SimTime;
use crate::transport::tcp::config::CcRules;

#[derive(Clone, Copy, Debug)]
pub struct Hybla {
    pub rtt0: SimTime,
    pub rules: CcRules,
    /// The smallest smoothed RTT seen so far.
    min_srtt: Option<SimTime>,
}

impl Hybla {
    pub fn new(rtt0: SimTime, rules: CcRules) -> Hybla {
        Hybla {
            rtt0,
            rules,
            min_srtt: None,
        }
    }

    /// rho for a smoothed RTT of `srtt`.
    pub fn rho(&self, srtt: Option<SimTime>) -> f64 {
        match srtt {
            Some(r) => (r.ns() as f64 / self.rtt0.ns() as f64).max(1.0),
            None => 1.0,
        }
    }
}

impl CongestionControl for Hybla {
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        let mss = s.mss;
        if let Some(r) = s.srtt {
            if self.min_srtt.is_none_or(|m| r < m) {
                self.min_srtt = Some(r);
            }
        }
        let rho = self.rho(self.min_srtt);
        let mss = mss as f64;
        if w.cwnd < w.ssthresh {
            // As Linux's tcp_hybla: the exponent is capped at 16 and slow
            // start stops at ssthresh.
            let inc = (rho.min(16.0).exp2() - 1.0) * mss;
            w.cwnd = (w.cwnd + inc).min(w.ssthresh.max(w.cwnd + mss));
        } else {
            w.cwnd += rho * rho * mss * mss / w.cwnd;
        }
    }

    fn ssthresh_after(&mut self, w: &Window, _signal: Signal, flight: u64, mss: u32) -> f64 {
        reno_ssthresh(self.rules, w, flight, mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_like_a_25_ms_connection() {
        let mut h = Hybla::new(SimTime::from_ms(25), CcRules::Rfc);
        let srtt = Some(SimTime::from_ms(600)); // GEO: rho = 24
        assert_eq!(h.rho(srtt), 24.0);
        assert_eq!(h.rho(Some(SimTime::from_ms(10))), 1.0);
        // Congestion avoidance: rho^2 segments per window of ACKs.
        let mut w = Window {
            cwnd: 100_000.0,
            ssthresh: 50_000.0,
        };
        h.on_ack(&mut w, &AckSample::of(1000, 1000, srtt));
        assert!((w.cwnd - (100_000.0 + 576.0 * 1e6 / 100_000.0)).abs() < 1e-6);
        // Slow start with rho = 2: three segments per ACK.
        let mut w = Window {
            cwnd: 2000.0,
            ssthresh: 1e9,
        };
        h.on_ack(
            &mut w,
            &AckSample::of(1000, 1000, Some(SimTime::from_ms(50))),
        );
        assert_eq!(w.cwnd, 5000.0);
    }

    #[test]
    fn rho_follows_the_smallest_smoothed_rtt_not_the_queue() {
        // A path of 300 ms base RTT whose queue adds 300 ms: rho stays at
        // 12, it does not climb to 24 with the queue.
        let mut h = Hybla::new(SimTime::from_ms(25), CcRules::Rfc);
        let mut w = Window {
            cwnd: 100_000.0,
            ssthresh: 50_000.0,
        };
        h.on_ack(
            &mut w,
            &AckSample::of(1000, 1000, Some(SimTime::from_ms(300))),
        );
        let before = w.cwnd;
        h.on_ack(
            &mut w,
            &AckSample::of(1000, 1000, Some(SimTime::from_ms(600))),
        );
        let step = w.cwnd - before;
        assert!((step - 144.0 * 1e6 / before).abs() < 1e-6, "step {step}");
        // A new minimum lowers it.
        let before = w.cwnd;
        h.on_ack(
            &mut w,
            &AckSample::of(1000, 1000, Some(SimTime::from_ms(250))),
        );
        let step = w.cwnd - before;
        assert!((step - 100.0 * 1e6 / before).abs() < 1e-6, "step {step}");
    }
}
