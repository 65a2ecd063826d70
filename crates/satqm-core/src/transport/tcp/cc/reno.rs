//! Reno congestion control (RFC 5681 section 3.1).
//!
//! Slow start: `cwnd += min(acked, SMSS)` per ACK (eq. 2).
//! Congestion avoidance: `cwnd += SMSS * SMSS / cwnd` per ACK (eq. 3), about
//! one segment per round trip without delayed ACKs and half a segment with
//! them: the growth the Mathis et al. formula assumes.

use super::{CongestionControl, Window};
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn on_ack(
        &mut self,
        w: &mut Window,
        acked: u64,
        mss: u32,
        _rtt: Option<SimTime>,
        _now: SimTime,
    ) {
        let mss = mss as f64;
        if w.cwnd < w.ssthresh {
            w.cwnd += (acked as f64).min(mss);
        } else {
            w.cwnd += mss * mss / w.cwnd;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_linear() {
        let mut r = Reno;
        let mut w = Window {
            cwnd: 1000.0,
            ssthresh: 3000.0,
        };
        r.on_ack(&mut w, 2000, 1000, None, SimTime::ZERO);
        assert_eq!(w.cwnd, 2000.0); // limited to one SMSS per ACK
        r.on_ack(&mut w, 1000, 1000, None, SimTime::ZERO);
        assert_eq!(w.cwnd, 3000.0);
        r.on_ack(&mut w, 1000, 1000, None, SimTime::ZERO);
        assert!((w.cwnd - (3000.0 + 1000.0 / 3.0)).abs() < 1e-9);
    }
}
