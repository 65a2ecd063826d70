//! Reno congestion control, by RFC 5681's rules or by Linux's.
//!
//! RFC 5681 section 3.1 ([`CcRules::Rfc`]): slow start adds
//! `min(acked, SMSS)` per ACK (eq. 2), congestion avoidance `SMSS²/cwnd`
//! (eq. 3): about one segment per round trip without delayed ACKs and half
//! a segment with them, the growth the Mathis et al. formula assumes;
//! ssthresh is half the FlightSize (eq. 4).
//!
//! Linux ([`CcRules::Linux`], `tcp_reno_cong_avoid()`, `tcp_slow_start()`,
//! `tcp_cong_avoid_ai()` and `tcp_reno_ssthresh()` in
//! `net/ipv4/tcp_cong.c`): the window is a whole number of segments. Slow
//! start adds one segment per segment acknowledged, up to ssthresh, and the
//! rest of the ACK goes to congestion avoidance, which credits each
//! acknowledged segment and adds a segment per window of credits: with
//! delayed ACKs, slow start still doubles per round trip and congestion
//! avoidance adds one segment. ssthresh is half of cwnd, at least two
//! segments.
//!
//! With `hystart = "rfc9406"` the initial slow start is HyStart++'s
//! ([`super::hystartpp`]), under either rules: RFC 9406 section 4.2 grows
//! the window by `min(N, L·SMSS)` per ACK, a quarter of that in
//! Conservative Slow Start.

use super::hystartpp::{self, HyStartPp, Step};
use super::{AckSample, CongestionControl, HyStartKind, Signal, Window};
use crate::transport::tcp::config::CcRules;

/// Reno's parameters (`[tcp.cc] kind = "reno"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenoParams {
    /// The slow-start exit: none ([`HyStartKind::Off`], RFC 5681) or
    /// HyStart++ ([`HyStartKind::Rfc9406`]); Linux's HyStart is CUBIC's.
    pub hystart: HyStartKind,
}

impl RenoParams {
    /// RFC 5681's slow start, to a loss or ssthresh.
    pub const STANDARD: RenoParams = RenoParams {
        hystart: HyStartKind::Off,
    };
}

impl Default for RenoParams {
    fn default() -> Self {
        RenoParams::STANDARD
    }
}

#[derive(Clone, Debug)]
pub struct Reno {
    pub rules: CcRules,
    /// Linux: segments acknowledged in congestion avoidance and not yet
    /// turned into window (`snd_cwnd_cnt`).
    credit: u64,
    /// HyStart++'s state, with `hystart = "rfc9406"`.
    hystart_pp: Option<Box<HyStartPp>>,
}

impl Reno {
    pub fn new(rules: CcRules) -> Reno {
        Reno::with(RenoParams::STANDARD, rules)
    }

    pub fn with(p: RenoParams, rules: CcRules) -> Reno {
        Reno {
            rules,
            credit: 0,
            hystart_pp: match p.hystart {
                HyStartKind::Rfc9406 { paced } => Some(Box::new(HyStartPp::new(paced))),
                _ => None,
            },
        }
    }
}

/// Segments counted for `acked` bytes, as Linux counts whole packets.
pub(super) fn segments(acked: u64, mss: u32) -> u64 {
    acked.div_ceil(mss as u64)
}

/// ssthresh after a congestion signal under `rules`, bytes: RFC 5681's
/// half the FlightSize, or Linux's half of cwnd.
pub(super) fn reno_ssthresh(rules: CcRules, w: &Window, flight: u64, mss: u32) -> f64 {
    match rules {
        // RFC 5681 eq. (4)
        CcRules::Rfc => (flight as f64 / 2.0).max(2.0 * mss as f64),
        CcRules::Linux | CcRules::Linux2009 => linux_ssthresh(w, mss),
    }
}

/// Linux's `tcp_slow_start()`, in segments: cwnd grows by the `acked`
/// segments up to ssthresh; returns those left for congestion avoidance.
pub(super) fn linux_slow_start(cwnd: &mut u64, acked: u64, ssthresh: f64) -> u64 {
    let to = (*cwnd + acked).min(ssthresh.floor() as u64).max(*cwnd);
    let left = acked - (to - *cwnd);
    *cwnd = to;
    left
}

/// Linux's `tcp_cong_avoid_ai()`, in segments: one segment more per `w`
/// segments acknowledged, `credit` carrying the count between ACKs.
pub(super) fn linux_cong_avoid_ai(cwnd: &mut u64, credit: &mut u64, w: u64, acked: u64) {
    // Credit gathered at a larger w is applied gently now.
    if *credit >= w {
        *credit = 0;
        *cwnd += 1;
    }
    *credit += acked;
    if *credit >= w {
        let delta = *credit / w;
        *credit -= delta * w;
        *cwnd += delta;
    }
}

/// Linux's `tcp_reno_ssthresh()`: half of cwnd in whole segments, at least
/// two, in bytes.
pub(super) fn linux_ssthresh(w: &Window, mss: u32) -> f64 {
    let cwnd = (w.cwnd / mss as f64).round() as u64;
    ((cwnd / 2).max(2) * mss as u64) as f64
}

impl Reno {
    /// Linux 2.6.2x: ACKs counted, not segments.
    #[inline(never)]
    fn linux_2009_ack(&mut self, w: &mut Window, mss: u32) {
        let m = mss as f64;
        let mut cwnd = (w.cwnd / m).round() as u64;
        if cwnd as f64 <= w.ssthresh / m {
            cwnd += 1;
        } else if self.credit >= cwnd {
            cwnd += 1;
            self.credit = 0;
        } else {
            self.credit += 1;
        }
        w.cwnd = cwnd as f64 * m;
    }

    #[inline(never)]
    fn linux_ack(&mut self, w: &mut Window, s: &AckSample) {
        let m = s.mss as f64;
        let mut cwnd = (w.cwnd / m).round() as u64;
        let mut acked = segments(s.acked, s.mss);
        if hystartpp::linux_step(self.hystart_pp.as_deref_mut(), w, &mut cwnd, acked, s) {
            return;
        }
        let ssthresh = w.ssthresh / m;
        if (cwnd as f64) < ssthresh {
            acked = linux_slow_start(&mut cwnd, acked, ssthresh);
        }
        if acked > 0 {
            let w_ai = cwnd;
            linux_cong_avoid_ai(&mut cwnd, &mut self.credit, w_ai, acked);
        }
        w.cwnd = cwnd as f64 * m;
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        let (acked, mss) = (s.acked, s.mss);
        match self.rules {
            CcRules::Linux => return self.linux_ack(w, s),
            CcRules::Linux2009 => return self.linux_2009_ack(w, mss),
            CcRules::Rfc => {}
        }
        let mss = mss as f64;
        if let (true, Some(h)) = (w.cwnd < w.ssthresh, self.hystart_pp.as_deref_mut()) {
            match h.on_ack(segments(acked, s.mss), s) {
                Step::Grow(g) => {
                    // RFC 9406: min(N, L·SMSS) bytes (a quarter of it in
                    // CSS, counted in whole segments).
                    w.cwnd += (g as f64 * mss).min(acked as f64);
                    return;
                }
                Step::Avoid => w.ssthresh = w.cwnd,
                Step::Standard => {}
            }
        }
        if w.cwnd < w.ssthresh {
            w.cwnd += (acked as f64).min(mss);
        } else {
            w.cwnd += mss * mss / w.cwnd;
        }
    }

    fn ssthresh_after(&mut self, w: &Window, _signal: Signal, flight: u64, mss: u32) -> f64 {
        // tcp_init_cwnd_reduction(), tcp_enter_loss(): the count towards
        // the next segment starts again with the reduced window.
        self.credit = 0;
        if let Some(h) = &mut self.hystart_pp {
            h.finish();
        }
        reno_ssthresh(self.rules, w, flight, mss)
    }

    fn on_timeout(&mut self) {
        self.credit = 0;
        if let Some(h) = &mut self.hystart_pp {
            h.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_linear() {
        let mut r = Reno::new(CcRules::Rfc);
        let mut w = Window {
            cwnd: 1000.0,
            ssthresh: 3000.0,
        };
        r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        assert_eq!(w.cwnd, 2000.0); // limited to one SMSS per ACK
        r.on_ack(&mut w, &AckSample::of(1000, 1000, None));
        assert_eq!(w.cwnd, 3000.0);
        r.on_ack(&mut w, &AckSample::of(1000, 1000, None));
        assert!((w.cwnd - (3000.0 + 1000.0 / 3.0)).abs() < 1e-9);
    }

    /// With HyStart++ the RFC rules grow by RFC 9406's min(N, L·SMSS) in
    /// slow start (two segments for an ACK of two, where RFC 5681 gives
    /// one); a loss ends it for good.
    #[test]
    fn hystart_pp_grows_by_rfc_9406s_rule_until_a_loss() {
        let p = RenoParams {
            hystart: HyStartKind::Rfc9406 { paced: false },
        };
        let mut r = Reno::with(p, CcRules::Rfc);
        let mut w = Window {
            cwnd: 10_000.0,
            ssthresh: f64::INFINITY,
        };
        r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        assert_eq!(w.cwnd, 12_000.0);
        w.ssthresh = r.ssthresh_after(&w, Signal::Loss, 12_000, 1000);
        w.cwnd = 1000.0;
        r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        assert_eq!(w.cwnd, 2000.0, "standard slow start after the loss");
    }

    #[test]
    fn linux_counts_acknowledged_segments() {
        let mut r = Reno::new(CcRules::Linux);
        // Slow start with delayed ACKs: each ACK of two segments adds two,
        // so a window of 10 becomes 20 in one round trip.
        let mut w = Window {
            cwnd: 10_000.0,
            ssthresh: f64::INFINITY,
        };
        for _ in 0..5 {
            r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        }
        assert_eq!(w.cwnd, 20_000.0);
        // Slow start stops at ssthresh; the rest of the ACK is credit.
        let mut w = Window {
            cwnd: 9_000.0,
            ssthresh: 10_000.0,
        };
        r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        assert_eq!(w.cwnd, 10_000.0);
        assert_eq!(r.credit, 1);
        // Congestion avoidance: one segment per window of acknowledged
        // segments, whatever the ACKs' size: 5 ACKs of 2 at cwnd = 10.
        let mut r = Reno::new(CcRules::Linux);
        for _ in 0..4 {
            r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
            assert_eq!(w.cwnd, 10_000.0);
        }
        r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        assert_eq!(w.cwnd, 11_000.0);
        assert_eq!(r.credit, 0);
        // ssthresh: half of cwnd in whole segments, at least two.
        assert_eq!(r.ssthresh_after(&w, Signal::Loss, 50_000, 1000), 5_000.0);
        let one = Window {
            cwnd: 1000.0,
            ssthresh: 1e9,
        };
        assert_eq!(r.ssthresh_after(&one, Signal::Loss, 50_000, 1000), 2_000.0);
    }

    #[test]
    fn a_reduction_starts_the_segment_count_again() {
        // Linux's tcp_init_cwnd_reduction() (and tcp_enter_loss()) zero
        // snd_cwnd_cnt: 8 segments counted at cwnd = 10 do not carry over
        // to the halved window, which needs 5 new ones for its next segment.
        for rules in [CcRules::Linux, CcRules::Linux2009] {
            for signal in [Signal::Loss, Signal::Ecn, Signal::Timeout] {
                let mut r = Reno::new(rules);
                let mut w = Window {
                    cwnd: 10_000.0,
                    ssthresh: 9_000.0,
                };
                for _ in 0..8 {
                    r.on_ack(&mut w, &AckSample::of(1000, 1000, None));
                }
                assert_eq!((w.cwnd, r.credit), (10_000.0, 8));
                w.ssthresh = r.ssthresh_after(&w, signal, 10_000, 1000);
                assert_eq!(w.ssthresh, 5_000.0);
                // In congestion avoidance at 5 segments (2.6.2x's slow
                // start would take cwnd = ssthresh).
                (w.cwnd, w.ssthresh) = (5_000.0, 4_000.0);
                if signal == Signal::Timeout {
                    r.on_timeout();
                }
                assert_eq!(r.credit, 0);
                let per_step = if rules == CcRules::Linux { 5 } else { 6 };
                for _ in 0..per_step - 1 {
                    r.on_ack(&mut w, &AckSample::of(1000, 1000, None));
                    assert_eq!(w.cwnd, 5_000.0, "{rules:?} {signal:?}");
                }
                r.on_ack(&mut w, &AckSample::of(1000, 1000, None));
                assert_eq!(w.cwnd, 6_000.0, "{rules:?} {signal:?}");
            }
        }
    }

    #[test]
    fn linux_2009_counts_acks() {
        let mut r = Reno::new(CcRules::Linux2009);
        // Slow start: one segment per ACK whatever it covers, up to one
        // above ssthresh.
        let mut w = Window {
            cwnd: 10_000.0,
            ssthresh: 12_000.0,
        };
        for _ in 0..3 {
            r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        }
        assert_eq!(w.cwnd, 13_000.0);
        // Congestion avoidance: one segment per cwnd + 1 ACKs.
        for _ in 0..13 {
            r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
            assert_eq!(w.cwnd, 13_000.0);
        }
        r.on_ack(&mut w, &AckSample::of(2000, 1000, None));
        assert_eq!(w.cwnd, 14_000.0);
    }
}
