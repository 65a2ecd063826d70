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
//! RTT is the smoothed RTT (RFC 6298), as in Linux's `tcp_hybla`; before a
//! first sample `rho = 1` (Reno). As in Linux, the slow-start exponent is
//! capped at 16 and slow start does not overshoot ssthresh. Loss response
//! is Reno's. The paper pairs Hybla with SACK and pacing; without pacing
//! (satqm's `rate_cap` aside) its slow start sends large bursts.

use super::{CongestionControl, Window};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
pub struct Hybla {
    pub rtt0: SimTime,
}

impl Hybla {
    pub fn rho(&self, srtt: Option<SimTime>) -> f64 {
        match srtt {
            Some(r) => (r.ns() as f64 / self.rtt0.ns() as f64).max(1.0),
            None => 1.0,
        }
    }
}

impl CongestionControl for Hybla {
    fn on_ack(
        &mut self,
        w: &mut Window,
        _acked: u64,
        mss: u32,
        srtt: Option<SimTime>,
        _now: SimTime,
    ) {
        let rho = self.rho(srtt);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_like_a_25_ms_connection() {
        let mut h = Hybla {
            rtt0: SimTime::from_ms(25),
        };
        let srtt = Some(SimTime::from_ms(600)); // GEO: rho = 24
        assert_eq!(h.rho(srtt), 24.0);
        assert_eq!(h.rho(Some(SimTime::from_ms(10))), 1.0);
        // Congestion avoidance: rho^2 segments per window of ACKs.
        let mut w = Window {
            cwnd: 100_000.0,
            ssthresh: 50_000.0,
        };
        h.on_ack(&mut w, 1000, 1000, srtt, SimTime::ZERO);
        assert!((w.cwnd - (100_000.0 + 576.0 * 1e6 / 100_000.0)).abs() < 1e-6);
        // Slow start with rho = 2: three segments per ACK.
        let mut w = Window {
            cwnd: 2000.0,
            ssthresh: 1e9,
        };
        h.on_ack(
            &mut w,
            1000,
            1000,
            Some(SimTime::from_ms(50)),
            SimTime::ZERO,
        );
        assert_eq!(w.cwnd, 5000.0);
    }
}
