//! DCTCP (RFC 8257; Linux's `net/ipv4/tcp_dctcp.c`): a window cut in
//! proportion to the extent of congestion rather than by half.
//!
//! The sender keeps α, the smoothed fraction of its segments that arrived
//! CE-marked, updated once per window of data (RFC 8257 section 3.3):
//!
//! ```text
//! F = segments delivered CE-marked / segments delivered   (in the window just ended)
//! α <- (1 - g) α + g F,      g = 1/16
//! ```
//!
//! and at most once per window of data, when a CE mark is fed back, sets
//! ssthresh and cwnd to `cwnd (1 - α/2)`, at least two segments (section
//! 3.4). Growth is Reno's; a loss or timeout cuts as Reno does (Linux's
//! `dctcp_react_to_loss()` halves cwnd). α starts at 1 (Linux's
//! `dctcp_alpha_on_init = 1024`, of 1024): a new flow's first marks halve
//! its window.
//!
//! α is a real number here, where Linux keeps it in units of 1/1024 and its
//! decay `α -= max(α >> 4, ...)` takes a small α to exactly 0; the fraction
//! counts segments (Linux's `delivered_ce / delivered`), RFC 8257 writes
//! bytes: with full-sized segments they agree. Under `cc_rules = "rfc"`
//! the cut is computed in bytes (as ns-3's `TcpDctcp`), under the Linux
//! rules in whole segments, `cwnd - ⌊cwnd α / 2⌋` (`dctcp_ssthresh()`).

use super::reno::{reno_ssthresh, Reno};
use super::{AckSample, CongestionControl, EcnSample, Signal, Window};
use crate::transport::tcp::config::CcRules;

/// DCTCP's parameters (`[tcp.cc]` with `kind = "dctcp"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// The EWMA gain of α.
    pub g: f64,
    /// α before the first update.
    pub alpha_init: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            g: 1.0 / 16.0,
            alpha_init: 1.0,
        }
    }
}

/// The per-window estimate of the marked fraction, α (RFC 8257 section
/// 3.3), shared by the scalable controls.
#[derive(Clone, Copy, Debug)]
pub struct MarkedFraction {
    pub g: f64,
    pub alpha: f64,
    /// The window of data ends when `snd_una` reaches this.
    window_end: u64,
    delivered: u64,
    delivered_ce: u64,
}

impl MarkedFraction {
    pub fn new(g: f64, alpha: f64) -> MarkedFraction {
        MarkedFraction {
            g,
            alpha,
            window_end: 0,
            delivered: 0,
            delivered_ce: 0,
        }
    }

    /// Count an ACK's feedback; at the end of a window of data fold its
    /// marked fraction into α and start the next window at `snd_max`
    /// (Linux's `dctcp_update_alpha()`). Returns true if α was updated.
    pub fn on_ack(&mut self, s: &EcnSample) -> bool {
        self.count(s);
        if !self.window_ended(s) {
            return false;
        }
        self.fold(s);
        true
    }

    /// Add an ACK's delivered and marked segments to the window's.
    pub fn count(&mut self, s: &EcnSample) {
        self.delivered += s.delivered;
        self.delivered_ce += s.delivered_ce;
    }

    /// The cumulative ACK has passed the end of the window of data.
    pub fn window_ended(&self, s: &EcnSample) -> bool {
        s.snd_una >= self.window_end
    }

    /// α ← (1 − g)·α + g·F with the window's marked fraction F; the next
    /// window ends at `snd_max`.
    pub fn fold(&mut self, s: &EcnSample) {
        let f = if self.delivered_ce == 0 {
            0.0
        } else {
            (self.delivered_ce as f64 / self.delivered.max(1) as f64).min(1.0)
        };
        self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
        self.restart(s);
    }

    /// Start the next window at `snd_max` without touching α.
    pub fn restart(&mut self, s: &EcnSample) {
        self.window_end = s.snd_max;
        self.delivered = 0;
        self.delivered_ce = 0;
    }

    /// The window after a cut by α/2 (`cwnd (1 - α/2)`, at least two
    /// segments), in bytes or, under Linux's rules, whole segments.
    pub fn cut(&self, rules: CcRules, w: &Window, mss: u32) -> f64 {
        let m = mss as f64;
        match rules {
            CcRules::Rfc => (w.cwnd * (1.0 - self.alpha / 2.0)).max(2.0 * m),
            CcRules::Linux | CcRules::Linux2009 => {
                let cwnd = (w.cwnd / m).round();
                (cwnd - (cwnd * self.alpha / 2.0).floor()).max(2.0) * m
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: Reno,
    pub marked: MarkedFraction,
}

impl Dctcp {
    pub fn new(p: DctcpParams, rules: CcRules) -> Dctcp {
        Dctcp {
            reno: Reno::new(rules),
            marked: MarkedFraction::new(p.g, p.alpha_init),
        }
    }

    pub fn alpha(&self) -> f64 {
        self.marked.alpha
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        self.reno.on_ack(w, s);
    }

    fn ssthresh_after(&mut self, w: &Window, signal: Signal, flight: u64, mss: u32) -> f64 {
        match signal {
            Signal::Ecn => self.marked.cut(self.reno.rules, w, mss),
            Signal::Loss | Signal::Timeout => reno_ssthresh(self.reno.rules, w, flight, mss),
        }
    }

    fn on_ecn(&mut self, _w: &mut Window, s: &EcnSample) {
        self.marked.on_ack(s);
    }

    fn scalable(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(delivered: u64, delivered_ce: u64, snd_una: u64, snd_max: u64) -> EcnSample {
        EcnSample {
            now: crate::time::SimTime::ZERO,
            mss: 1000,
            delivered,
            delivered_ce,
            rtt: None,
            snd_una,
            snd_max,
        }
    }

    /// α by hand: g = 1/16 from α = 1. Window 1 (ending at the first ACK,
    /// as Linux's state starts with next_seq = snd_nxt): 2 of 2 marked,
    /// α = 15/16 + 1/16 = 1. Window 2: 10 segments, 5 marked: α =
    /// 15/16 + 1/32 = 0.96875. Window 3: none marked: α = 0.96875 · 15/16.
    /// Window 4: all marked: α = α3 · 15/16 + 1/16.
    #[test]
    fn alpha_follows_the_marked_fraction_once_per_window() {
        let mut d = Dctcp::new(DctcpParams::default(), CcRules::Rfc);
        assert_eq!(d.alpha(), 1.0);
        assert!(d.marked.on_ack(&sample(2, 2, 2000, 10_000)));
        assert_eq!(d.alpha(), 1.0);
        // Window 2 ends when snd_una reaches 10,000; ACKs before it only count.
        for i in 1..=4 {
            assert!(!d.marked.on_ack(&sample(2, 1, 2000 * i, 20_000)));
            assert_eq!(d.alpha(), 1.0);
        }
        assert!(d.marked.on_ack(&sample(2, 1, 10_000, 20_000)));
        assert_eq!(d.alpha(), 0.96875);
        assert!(d.marked.on_ack(&sample(8, 0, 20_000, 30_000)));
        let a3 = 0.96875 * 15.0 / 16.0;
        assert_eq!(d.alpha(), a3);
        assert!(d.marked.on_ack(&sample(10, 10, 30_000, 40_000)));
        assert!((d.alpha() - (a3 * 15.0 / 16.0 + 1.0 / 16.0)).abs() < 1e-15);
    }

    /// A sustained marked fraction F: α converges to F.
    #[test]
    fn alpha_converges_to_a_steady_fraction() {
        let mut d = Dctcp::new(DctcpParams::default(), CcRules::Rfc);
        for k in 0..200u64 {
            d.marked.on_ack(&sample(20, 3, k * 100, (k + 1) * 100));
        }
        assert!((d.alpha() - 0.15).abs() < 1e-4, "{}", d.alpha());
    }

    /// The cut: cwnd (1 - α/2), at least two segments; loss halves as Reno.
    #[test]
    fn ecn_cuts_by_half_alpha_and_loss_by_half() {
        let mut d = Dctcp::new(
            DctcpParams {
                alpha_init: 0.25,
                ..DctcpParams::default()
            },
            CcRules::Rfc,
        );
        let w = Window {
            cwnd: 100_000.0,
            ssthresh: 1e9,
        };
        assert_eq!(d.ssthresh_after(&w, Signal::Ecn, 100_000, 1000), 87_500.0);
        assert_eq!(d.ssthresh_after(&w, Signal::Loss, 100_000, 1000), 50_000.0);
        assert_eq!(
            d.ssthresh_after(&w, Signal::Timeout, 60_000, 1000),
            30_000.0
        );
        let small = Window {
            cwnd: 2_500.0,
            ssthresh: 1e9,
        };
        d.marked.alpha = 1.0;
        assert_eq!(d.ssthresh_after(&small, Signal::Ecn, 2_500, 1000), 2_000.0);
        // Linux: whole segments, 37 - ⌊37 · 0.3 / 2⌋ = 37 - 5 = 32.
        let mut l = Dctcp::new(
            DctcpParams {
                alpha_init: 0.3,
                ..DctcpParams::default()
            },
            CcRules::Linux,
        );
        let w = Window {
            cwnd: 37_000.0,
            ssthresh: 1e9,
        };
        assert_eq!(l.ssthresh_after(&w, Signal::Ecn, 37_000, 1000), 32_000.0);
        assert_eq!(l.ssthresh_after(&w, Signal::Loss, 37_000, 1000), 18_000.0);
    }
}
