//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control), the window
//! logic of the L4S team's Linux module (`net/ipv4/tcp_prague.c` of
//! github.com/L4STeam/linux): DCTCP's scalable response, with
//!
//! * α, the smoothed marked fraction (g = 1/16, starting at 1), updated
//!   once per round trip, and only once a CE mark has shown that an AQM
//!   marks on the path (`saw_ce`); while the flow is RTT-independent (below)
//!   no more often than once per target RTT (`prague_target_rtt_elapsed()`);
//! * a CE mark fed back, at most once per window of data: the window ←
//!   cwnd (1 − α/2) (`prague_enter_cwr()`), kept as a real number of
//!   segments (Linux keeps `frac_cwnd` in units of 2^-20);
//! * additive increase on every ACK, during the reduction too, counting
//!   only the segments delivered unmarked: `ai · (acked − marked) / cwnd`
//!   segments (`prague_update_cwnd()`), so that the increase per round
//!   trip falls as the marking rises, (1 − p)/p per mark;
//! * RTT independence (`RTT_CONTROL_RATE`, the module's default): once the
//!   flow has spent `rtt_transition` rounds (500) out of slow start, a flow
//!   whose smoothed RTT is below the target (25 ms) scales `ai` by
//!   (RTT / target)², so that flows of any RTT below it grow at the same
//!   rate in packets per second as one at the target;
//! * a loss or timeout halves the window, as Reno (`prague_enter_loss()`),
//!   the classic fallback;
//! * with `classic_ecn_fallback` (the module's `prague_ecn_fallback = 1`,
//!   off by default), the detection of a classic ECN AQM
//!   (`prague_classic_ecn_detection()`, Briscoe & Ahmed, "TCP Prague
//!   Fall-back on Detection of a Classic ECN AQM", arXiv:1911.00710): a
//!   score that RTT variation and queue depth raise and a smooth,
//!   shallow queue lowers, above which a mark cuts as a classic flow
//!   would ([`ClassicEcn`]).
//!
//! Not modelled: the module's skipping of a second reduction within one
//! target RTT while RTT-independent (this sender cuts at most once per
//! window of data). Its TSO burst bound sizes the sender's bursts with
//! `tso_bursts` ([`CongestionControl::tso_segs`]). The sender paces Prague
//! as the module does ([`super::CongestionControl::pacing_ca_ratio`]).

use super::dctcp::MarkedFraction;
use super::reno::{linux_slow_start, reno_ssthresh, segments};
use super::{AckSample, CongestionControl, EcnSample, Signal, Window};
use crate::time::SimTime;
use crate::transport::tcp::config::CcRules;

/// The detector of a classic ECN AQM (`prague_classic_ecn_detection()`).
///
/// A slow EWMA of the RTT samples and of their mean deviation, gains
/// 2^-s and 2^-(s+1), where s = ⌊log2 ssthresh⌋ · 3/2 + 1 segments
/// (at most 18) is set at each congestion response, so that they average
/// over several rounds (`prague_rtt_estimator()`,
/// `prague_update_rtt_scaling()`). Once a round, after the first mark, the
/// score c moves by
///
/// ```text
/// c += ½ log2(mdev / 750 µs) + ½ max(0, log2((srtt − min_rtt) / 2 ms))
/// ```
///
/// clamped to [0, 17]: variation above the 750 µs an L4S queue keeps, and
/// a standing queue deeper than 2 ms, both point to a classic AQM; a flow
/// whose RTT barely varies drifts back to 0. Above 8 a mark's cut uses
/// max(α, 0.625 (min(c, 9) − 8)) for α, a classic-like cut of up to 31 %
/// from c = 9 on (`prague_classic_ecn_fallback()`). The module works with
/// fixed-point logarithms whose rounding it carries from round to round;
/// here they are real numbers.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClassicEcn {
    /// Paced-RTT EWMA and mean deviation, seconds.
    srtt: f64,
    mdev: f64,
    /// Gain exponents (`g_srtt_shift`; the deviation's is one more).
    shift: u32,
    min_rtt: f64,
    /// The score, 0 to [`C_STICKY`](Self::C_STICKY).
    pub score: f64,
}

impl ClassicEcn {
    /// Pure L4S below this score (`L_STICKY`).
    pub const L_STICKY: f64 = 8.0;
    /// Pure classic above this (`CLASSIC_ECN`).
    pub const CLASSIC: f64 = 9.0;
    /// The score's ceiling (`C_STICKY`).
    pub const C_STICKY: f64 = 17.0;
    /// The reference RTT deviation and queue depth (`V0_LG`, `D0_LG`).
    const V0: f64 = 750e-6;
    const D0: f64 = 2e-3;
    const MAX_SHIFT: u32 = 18;

    fn new() -> ClassicEcn {
        ClassicEcn {
            shift: Self::MAX_SHIFT,
            min_rtt: f64::INFINITY,
            ..ClassicEcn::default()
        }
    }

    /// An RTT sample; the first starts the EWMA, its deviation at 1 µs
    /// (`prague_init()` starts from the handshake's SRTT).
    fn on_rtt(&mut self, rtt: f64) {
        self.min_rtt = self.min_rtt.min(rtt);
        if self.srtt == 0.0 {
            self.srtt = rtt;
            self.mdev = 1e-6;
            return;
        }
        let err = rtt - self.srtt;
        self.srtt += err / (1u64 << self.shift) as f64;
        self.mdev += (err.abs() - self.mdev) / (1u64 << (self.shift + 1)) as f64;
    }

    /// A congestion response with `ssthresh` segments before it (the
    /// module's `prague_ssthresh()` reads the old value).
    fn on_response(&mut self, ssthresh: f64) {
        let l = if ssthresh.is_finite() && ssthresh >= 1.0 {
            ssthresh.log2().floor() as u32
        } else {
            // TCP_INFINITE_SSTHRESH: 2^31 - 1.
            30
        };
        self.shift = (l + l / 2 + 1).min(Self::MAX_SHIFT);
    }

    /// The once-a-round update.
    fn update(&mut self) {
        if self.srtt == 0.0 {
            return;
        }
        let lg = |x: f64| (x * 1e6).log2().max(0.0);
        let mut c = self.score + 0.5 * (lg(self.mdev) - lg(Self::V0));
        if self.srtt > self.min_rtt {
            let depth = lg(self.srtt - self.min_rtt) - lg(Self::D0);
            if depth > 0.0 {
                c += 0.5 * depth;
            }
        }
        self.score = c.clamp(0.0, Self::C_STICKY);
    }

    /// The α a mark's cut uses.
    fn alpha_for_cut(&self, alpha: f64) -> f64 {
        if self.score > Self::L_STICKY {
            alpha.max(0.625 * (self.score.min(Self::CLASSIC) - Self::L_STICKY))
        } else {
            alpha
        }
    }
}

/// TCP Prague's parameters (`[tcp.cc]` with `kind = "prague"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PragueParams {
    /// The EWMA gain of α.
    pub g: f64,
    /// α before the first update.
    pub alpha_init: f64,
    /// RTT independence's target RTT (`prague_rtt_target`); zero turns RTT
    /// independence off.
    pub rtt_target: SimTime,
    /// Rounds out of slow start before the flow becomes RTT-independent
    /// (`prague_rtt_transition`).
    pub rtt_transition: u32,
    /// Detect a classic ECN AQM and cut as a classic flow behind one
    /// (`prague_ecn_fallback = 1`; off by default, as in the module).
    pub classic_ecn_fallback: bool,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            rtt_target: SimTime::from_ms(25),
            rtt_transition: 500,
            classic_ecn_fallback: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Prague {
    p: PragueParams,
    rules: CcRules,
    pub marked: MarkedFraction,
    /// A CE mark has been fed back.
    saw_ce: bool,
    /// Rounds ended out of slow start.
    rounds: u32,
    last_alpha_update: SimTime,
    /// Segments the ACK being processed acknowledged, with the window
    /// limiting the sender (set by `on_ack`, used by `on_ecn`).
    pending: u64,
    srtt: Option<SimTime>,
    /// The classic-ECN detector, with `classic_ecn_fallback`.
    classic: Option<ClassicEcn>,
}

impl Prague {
    pub fn new(p: PragueParams, rules: CcRules) -> Prague {
        Prague {
            p,
            rules,
            marked: MarkedFraction::new(p.g, p.alpha_init),
            saw_ce: false,
            rounds: 0,
            last_alpha_update: SimTime::ZERO,
            pending: 0,
            srtt: None,
            classic: p.classic_ecn_fallback.then(ClassicEcn::new),
        }
    }

    /// The classic-ECN detector's score, with `classic_ecn_fallback`.
    pub fn classic_ecn_score(&self) -> Option<f64> {
        self.classic.map(|c| c.score)
    }

    pub fn alpha(&self) -> f64 {
        self.marked.alpha
    }

    fn rtt_independent(&self, w: &Window) -> bool {
        self.p.rtt_target > SimTime::ZERO
            && w.cwnd >= w.ssthresh
            && self.rounds >= self.p.rtt_transition
    }

    /// The additive increase per round trip, segments
    /// (`prague_rate_scaled_ai_ack_increase()`).
    fn ai(&self) -> f64 {
        match self.srtt {
            Some(rtt)
                if self.p.rtt_target > SimTime::ZERO
                    && self.rounds >= self.p.rtt_transition
                    && rtt < self.p.rtt_target =>
            {
                (rtt.secs_f64() / self.p.rtt_target.secs_f64()).powi(2)
            }
            _ => 1.0,
        }
    }
}

impl CongestionControl for Prague {
    fn on_ack(&mut self, _w: &mut Window, s: &AckSample) {
        self.pending = segments(s.acked, s.mss);
        self.srtt = s.srtt;
    }

    fn on_ecn(&mut self, w: &mut Window, s: &EcnSample) {
        if s.delivered_ce > 0 {
            self.saw_ce = true;
        }
        if let (Some(c), Some(rtt)) = (&mut self.classic, s.rtt) {
            // prague_pkts_acked(): every RTT sample.
            c.on_rtt(rtt.secs_f64());
        }
        // Growth: the unmarked segments of a window-limited ACK.
        let mut acked = std::mem::take(&mut self.pending).saturating_sub(s.delivered_ce);
        if acked > 0 {
            let m = s.mss as f64;
            if w.cwnd < w.ssthresh {
                let mut cwnd = (w.cwnd / m).round() as u64;
                acked = linux_slow_start(&mut cwnd, acked, w.ssthresh / m);
                w.cwnd = cwnd as f64 * m;
            }
            if acked > 0 {
                w.cwnd += self.ai() * acked as f64 * m * m / w.cwnd;
            }
        }
        // α, once per round (and per target RTT while RTT-independent).
        self.marked.count(s);
        if self.marked.window_ended(s) {
            let waits = self.rtt_independent(w)
                && s.now.saturating_sub(self.last_alpha_update) < self.p.rtt_target;
            if !self.saw_ce {
                self.marked.restart(s);
            } else if !waits {
                if let Some(c) = &mut self.classic {
                    c.update();
                }
                self.marked.fold(s);
                self.last_alpha_update = s.now;
            }
            if w.cwnd >= w.ssthresh {
                self.rounds = self.rounds.saturating_add(1);
            }
        }
    }

    fn ssthresh_after(&mut self, w: &Window, signal: Signal, flight: u64, mss: u32) -> f64 {
        let mut alpha = self.marked.alpha;
        if let Some(c) = &mut self.classic {
            c.on_response(w.ssthresh / mss as f64);
            alpha = c.alpha_for_cut(alpha);
        }
        match signal {
            Signal::Ecn => (w.cwnd * (1.0 - alpha / 2.0)).max(2.0 * mss as f64),
            Signal::Loss | Signal::Timeout => reno_ssthresh(self.rules, w, flight, mss),
        }
    }

    fn scalable(&self) -> bool {
        true
    }

    fn grows_through_cwr(&self) -> bool {
        true
    }

    /// `prague_update_pacing_rate()`: cwnd per SRTT out of slow start,
    /// without Linux's default 20 % headroom.
    fn pacing_ca_ratio(&self) -> f64 {
        1.0
    }

    /// `prague_tso_segs()`: the packets of 2^-12 s at the pacing rate
    /// (`prague_burst_shift`), at least `tcp_min_tso_segs` = 2.
    fn tso_segs(&self, pacing_rate: f64, mss: u32) -> u32 {
        (pacing_rate / mss as f64 / 4096.0).max(2.0) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: f64 = 1000.0;

    fn ack_sample(segs: u64, srtt_ms: u64) -> AckSample<'static> {
        AckSample::of(segs * 1000, 1000, Some(SimTime::from_ms(srtt_ms)))
    }

    fn ecn(now_ms: u64, delivered: u64, ce: u64, snd_una: u64, snd_max: u64) -> EcnSample {
        EcnSample {
            now: SimTime::from_ms(now_ms),
            mss: 1000,
            delivered,
            delivered_ce: ce,
            rtt: None,
            snd_una,
            snd_max,
        }
    }

    fn ca(w: &Window) -> Window {
        Window {
            cwnd: w.cwnd,
            ssthresh: w.ssthresh,
        }
    }

    /// Additive increase counts only unmarked segments: an ACK of 2 with 1
    /// marked adds 1/cwnd; with both marked, nothing.
    #[test]
    fn increase_counts_unmarked_segments() {
        let mut p = Prague::new(PragueParams::default(), CcRules::Linux);
        let mut w = Window {
            cwnd: 10.0 * M,
            ssthresh: 5.0 * M,
        };
        p.on_ack(&mut ca(&w), &ack_sample(2, 50));
        p.on_ecn(&mut w, &ecn(0, 2, 0, 2000, 20_000));
        assert!((w.cwnd - 10.2 * M).abs() < 1e-9);
        let before = w.cwnd;
        p.on_ack(&mut ca(&w), &ack_sample(2, 50));
        p.on_ecn(&mut w, &ecn(1, 2, 1, 4000, 20_000));
        assert!((w.cwnd - (before + M * M / before)).abs() < 1e-9);
        let before = w.cwnd;
        p.on_ack(&mut ca(&w), &ack_sample(2, 50));
        p.on_ecn(&mut w, &ecn(2, 2, 2, 6000, 20_000));
        assert_eq!(w.cwnd, before);
        // No growth without on_ack (the window did not limit the sender).
        p.on_ecn(&mut w, &ecn(3, 2, 0, 8000, 20_000));
        assert_eq!(w.cwnd, before);
    }

    /// α stays at its initial value until a mark shows an AQM on the path,
    /// then moves once per round; the cut is cwnd (1 − α/2), loss halves.
    #[test]
    fn alpha_waits_for_the_first_mark_and_the_cut_follows_it() {
        let mut p = Prague::new(PragueParams::default(), CcRules::Linux);
        let mut w = Window {
            cwnd: 40.0 * M,
            ssthresh: 20.0 * M,
        };
        // Rounds without marks: α stays 1.
        for k in 1..=3u64 {
            p.on_ecn(&mut w, &ecn(k, 20, 0, 20_000 * k, 20_000 * (k + 1)));
        }
        assert_eq!(p.alpha(), 1.0);
        // A round with 4 of 20 marked: α = 15/16 + 0.2/16.
        p.on_ecn(&mut w, &ecn(4, 16, 0, 70_000, 100_000));
        p.on_ecn(&mut w, &ecn(5, 4, 4, 80_000, 100_000));
        assert!((p.alpha() - (15.0 / 16.0 + 0.2 / 16.0)).abs() < 1e-12);
        p.marked.alpha = 0.5;
        assert_eq!(p.ssthresh_after(&w, Signal::Ecn, 40_000, 1000), 30.0 * M);
        assert_eq!(p.ssthresh_after(&w, Signal::Loss, 40_000, 1000), 20.0 * M);
    }

    /// The classic-ECN score: RTT samples that barely vary take it to 0;
    /// samples alternating 20/40 ms (a deviation of ~10 ms, ~10 ms of
    /// standing queue) add ½ log2(10/0.75) + ½ log2(10/2) ≈ 3 a round, so
    /// the third round passes 9; the gains follow ssthresh (20 segments:
    /// 2^-7 and 2^-8); above 8 a mark's cut uses at least 0.625 (c − 8).
    #[test]
    fn classic_ecn_score_and_fallback() {
        let mut c = ClassicEcn::new();
        c.on_response(f64::INFINITY);
        assert_eq!(c.shift, 18);
        c.on_response(20.0);
        assert_eq!(c.shift, 7);
        for _ in 0..4000 {
            c.on_rtt(0.020);
        }
        // A deviation under 1 µs counts as 1 µs: ½ log2(1/750) ≈ −4.8 a
        // round.
        c.score = 5.0;
        c.update();
        assert!((c.score - (5.0 - 0.5 * 750f64.log2())).abs() < 1e-9);
        c.update();
        assert_eq!(c.score, 0.0, "an L4S queue's smooth RTT");
        let mut rounds = 0;
        while c.score <= ClassicEcn::CLASSIC {
            for i in 0..1000 {
                c.on_rtt(if i % 2 == 0 { 0.020 } else { 0.040 });
            }
            c.update();
            rounds += 1;
        }
        assert!((c.mdev - 0.010).abs() < 0.001, "{}", c.mdev);
        assert!((c.srtt - 0.030).abs() < 0.001, "{}", c.srtt);
        assert_eq!(rounds, 3);
        let per_round = 0.5 * (10.0f64 / 0.75).log2() + 0.5 * (10.0f64 / 2.0).log2();
        assert!(
            (c.score - (3.0 * per_round).min(17.0)).abs() < 0.2,
            "{}",
            c.score
        );
        // The cut: α at least 0.625 above 9, 0.3125 at 8.5, α itself below 8.
        assert_eq!(c.alpha_for_cut(0.1), 0.625);
        c.score = 8.5;
        assert_eq!(c.alpha_for_cut(0.1), 0.3125);
        assert_eq!(c.alpha_for_cut(0.5), 0.5);
        c.score = 7.9;
        assert_eq!(c.alpha_for_cut(0.1), 0.1);
        // Through Prague: off by default; on, a mark's cut uses it.
        let mut p = Prague::new(PragueParams::default(), CcRules::Linux);
        assert_eq!(p.classic_ecn_score(), None);
        p.marked.alpha = 0.1;
        let w = Window {
            cwnd: 100.0 * M,
            ssthresh: 50.0 * M,
        };
        assert_eq!(p.ssthresh_after(&w, Signal::Ecn, 0, 1000), 95.0 * M);
        let mut p = Prague::new(
            PragueParams {
                classic_ecn_fallback: true,
                ..PragueParams::default()
            },
            CcRules::Linux,
        );
        p.marked.alpha = 0.1;
        p.classic.as_mut().unwrap().score = 12.0;
        assert_eq!(p.ssthresh_after(&w, Signal::Ecn, 0, 1000), 68.75 * M);
        // ssthresh 50 segments: log2 = 5, shift 5 + 2 + 1.
        assert_eq!(p.classic.unwrap().shift, 8);
    }

    /// After `rtt_transition` rounds out of slow start, a flow below the
    /// 25 ms target grows (RTT/target)² segments per round trip.
    #[test]
    fn rtt_independence_scales_the_increase_below_the_target() {
        let params = PragueParams {
            rtt_transition: 3,
            ..PragueParams::default()
        };
        let mut p = Prague::new(params, CcRules::Linux);
        let mut w = Window {
            cwnd: 10.0 * M,
            ssthresh: 5.0 * M,
        };
        let grow = |p: &mut Prague, w: &mut Window, una: u64| {
            let before = w.cwnd;
            p.on_ack(&mut ca(w), &ack_sample(1, 5));
            p.on_ecn(w, &ecn(una, 1, 0, una, una + 100));
            (w.cwnd - before) * before / (M * M)
        };
        // Each ACK here ends a round (snd_una passes the last snd_max).
        assert!((grow(&mut p, &mut w, 1_000) - 1.0).abs() < 0.01);
        grow(&mut p, &mut w, 2_000);
        grow(&mut p, &mut w, 3_000);
        // Three rounds done: 5 ms against 25 ms scales by 1/25.
        let g = grow(&mut p, &mut w, 4_000);
        assert!((g - 0.04).abs() < 0.001, "{g}");
        // Above the target, unscaled.
        let before = w.cwnd;
        p.on_ack(&mut ca(&w), &ack_sample(1, 30));
        p.on_ecn(&mut w, &ecn(5_000, 1, 0, 5_000, 5_100));
        assert!(((w.cwnd - before) - M * M / before).abs() < 1e-9);
    }
}
