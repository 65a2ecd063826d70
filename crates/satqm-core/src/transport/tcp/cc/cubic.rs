//! CUBIC (RFC 9438), as Linux runs it (`net/ipv4/tcp_cubic.c`).
//!
//! After a congestion event at window W_max the window follows the cubic
//!
//! ```text
//! W(t) = C (t - K)^3 + W_max,     K = cbrt(W_max (1 - beta) / C)
//! ```
//!
//! (segments, t in seconds since the first ACK after the event), concave
//! up to W_max and convex beyond it, so the window returns quickly to where
//! the last loss happened, lingers there and probes past it. Each ACK
//! aims at W(t + RTT_min): the window grows by (target - cwnd)/cwnd per
//! segment acknowledged, by at most one segment per two acknowledged
//! (Linux's `cnt >= 2`), and by one per 20 before the first loss. In the
//! Reno-friendly region the window is at least what Reno with
//! alpha = 3 (1 - beta) / (1 + beta) would have: W_est grows by alpha
//! segments per window of acknowledged segments. On a congestion signal
//! ssthresh = beta cwnd; with fast convergence a window that ended below
//! the previous W_max sets W_max to cwnd (1 + beta) / 2, releasing capacity
//! to newer flows. A timeout forgets W_max (Linux's `bictcp_reset()` on
//! entering the Loss state).
//!
//! beta = 0.7 and C = 0.4 (Linux: 717/1024 and 41·10/1024). The window is
//! counted in whole segments, as in Linux; the time is continuous (Linux
//! counts in jiffies). Slow start doubles per round trip, counting
//! acknowledged segments, and HyStart ([`HyStart`]) may end it before a
//! loss.

use super::hystartpp::{self, HyStartPp};
use super::reno::{linux_cong_avoid_ai, linux_slow_start, segments};
use super::{AckSample, CongestionControl, Signal, Window};
use crate::time::SimTime;
use crate::transport::tcp::config::CcRules;

/// CUBIC's parameters (`[tcp.cc]` with `kind = "cubic"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// Multiplicative decrease factor.
    pub beta: f64,
    /// Aggressiveness of the cubic, segments per second cubed.
    pub c: f64,
    /// Fast convergence (RFC 9438 section 4.7).
    pub fast_convergence: bool,
    /// How slow start ends before a loss.
    pub hystart: HyStartKind,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 0.7,
            c: 0.4,
            fast_convergence: true,
            hystart: HyStartKind::Linux { paced: false },
        }
    }
}

/// Which slow-start exit CUBIC uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStartKind {
    /// None: slow start until a loss or ssthresh.
    Off,
    /// Linux's HyStart (Ha & Rhee 2011, `hystart_update()` in
    /// `tcp_cubic.c`, on by default): leave slow start when an ACK train
    /// lasts half the smallest RTT (the whole of it if the sender paces,
    /// `paced`, plus the device's allowance) or when a round's smallest
    /// RTT rises above the smallest by an eighth of it (4 to 16 ms).
    Linux { paced: bool },
    /// HyStart++ (RFC 9406, [`HyStartPp`]) in the initial slow start;
    /// `paced`: the sender paces, so an ACK's growth is not limited.
    Rfc9406 { paced: bool },
}

#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// `Linux2009`: the window grows per ACK, not per segment acknowledged
    /// (kernels before 3.x counted ACKs in `tcp_slow_start()` and
    /// `tcp_cong_avoid_ai()`); otherwise per segment.
    rules: CcRules,
    /// W_max: the window at the last congestion event, segments (0: none).
    w_max: f64,
    /// When the current epoch started (the first ACK after an event).
    epoch: Option<SimTime>,
    /// K, seconds, and the window the cubic returns to (W_max, or cwnd if
    /// the epoch started above it).
    k: f64,
    origin: f64,
    /// The Reno-friendly window W_est, segments.
    w_est: f64,
    /// Segments acknowledged towards W_est's next increase.
    est_credit: f64,
    /// Segments acknowledged towards the next one-segment increase.
    credit: u64,
    /// The smallest RTT seen (Linux's `delay_min`).
    min_rtt: Option<SimTime>,
    hystart: HyStart,
    /// HyStart++'s state, with `hystart = "rfc9406"`.
    hystart_pp: Option<HyStartPp>,
}

impl Cubic {
    pub fn new(p: CubicParams, rules: CcRules) -> Cubic {
        Cubic {
            p,
            rules,
            w_max: 0.0,
            epoch: None,
            k: 0.0,
            origin: 0.0,
            w_est: 0.0,
            est_credit: 0.0,
            credit: 0,
            min_rtt: None,
            hystart: HyStart::default(),
            hystart_pp: match p.hystart {
                HyStartKind::Rfc9406 { paced } => Some(HyStartPp::new(paced)),
                _ => None,
            },
        }
    }

    /// W(t) for the current epoch, segments.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.p.c * (t - self.k).powi(3) + self.origin
    }

    /// K for a window of `cwnd` segments after an event at `w_max`.
    pub fn k_for(&self, w_max: f64, cwnd: f64) -> f64 {
        ((w_max - cwnd).max(0.0) / self.p.c).cbrt()
    }

    /// Congestion avoidance: `acked` segments at window `cwnd`; returns
    /// the new window (Linux's `bictcp_update()` and `tcp_cong_avoid_ai()`).
    fn avoid(&mut self, cwnd: u64, acked: u64, segs: u64, now: SimTime) -> u64 {
        let w = cwnd as f64;
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // A new epoch: the cubic and W_est start from here.
                self.epoch = Some(now);
                self.w_est = w;
                self.est_credit = 0.0;
                if self.w_max <= w {
                    self.k = 0.0;
                    self.origin = w;
                } else {
                    self.k = self.k_for(self.w_max, w);
                    self.origin = self.w_max;
                }
                now
            }
        };
        let rtt = self.min_rtt.map_or(0.0, |r| r.secs_f64());
        let t = (now - epoch).secs_f64() + rtt;
        let target = self.w_cubic(t);
        // Segments to acknowledge per one-segment increase.
        let mut cnt = if target > w {
            (w / (target - w)).floor()
        } else {
            100.0 * w
        };
        if self.w_max == 0.0 && cnt > 20.0 {
            cnt = 20.0;
        }
        // Reno-friendly region: W_est += alpha per window of ACKs.
        let beta = self.p.beta;
        let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
        self.est_credit += segs as f64;
        let per_segment = w / alpha;
        while self.est_credit > per_segment {
            self.est_credit -= per_segment;
            self.w_est += 1.0;
        }
        if self.w_est > w {
            let max_cnt = (w / (self.w_est - w)).floor();
            cnt = cnt.min(max_cnt);
        }
        // A whole number of segments, at least two (saturating if huge).
        let cnt = cnt.max(2.0) as u64;
        let mut cwnd = cwnd;
        linux_cong_avoid_ai(&mut cwnd, &mut self.credit, cnt, acked);
        cwnd
    }

    fn reset(&mut self) {
        self.w_max = 0.0;
        self.epoch = None;
        self.k = 0.0;
        self.origin = 0.0;
        self.w_est = 0.0;
        self.est_credit = 0.0;
        self.credit = 0;
        self.hystart = HyStart::default();
        if let Some(h) = &mut self.hystart_pp {
            h.finish();
        }
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) {
        let m = s.mss as f64;
        if let Some(r) = s.rtt {
            // Linux discards delay samples in the second after an event.
            let settled = self
                .epoch
                .is_none_or(|e| s.now - e >= SimTime::from_secs(1));
            if settled && self.min_rtt.is_none_or(|min| r < min) {
                self.min_rtt = Some(r);
            }
            let in_slow_start = w.cwnd < w.ssthresh;
            if let (true, true, HyStartKind::Linux { paced }) =
                (settled, in_slow_start, self.p.hystart)
            {
                // Rounds are counted on every ACK of slow start, the tests
                // run from 16 segments on (hystart_update() since Linux
                // 6.13: a round counted only from 16 segments on starts in
                // the middle of a train of ACKs, whose first samples carry
                // the queue the previous round's burst built).
                self.hystart.next_round(s);
                if let (true, Some(min)) = (w.cwnd / m >= 16.0, self.min_rtt) {
                    // Before 5.7 (the linux-2009 rules' kernels) the train
                    // was half the smallest RTT, paced or not.
                    let train = if self.rules == CcRules::Linux2009 {
                        SimTime(min.ns() / 2)
                    } else {
                        train_threshold(min, paced, w.cwnd, s.srtt)
                    };
                    if self.hystart.update(r, min, train, s) {
                        w.ssthresh = w.cwnd;
                    }
                }
            }
        }
        let mut cwnd = (w.cwnd / m).round() as u64;
        let per_ack = self.rules == CcRules::Linux2009;
        let mut acked = if per_ack { 1 } else { segments(s.acked, s.mss) };
        let ssthresh = w.ssthresh / m;
        if per_ack && cwnd as f64 <= ssthresh {
            // 2.6.2x: one segment per ACK while cwnd <= ssthresh.
            w.cwnd = (cwnd + 1) as f64 * m;
            return;
        }
        if hystartpp::linux_step(self.hystart_pp.as_mut(), w, &mut cwnd, acked, s) {
            return;
        }
        let ssthresh = w.ssthresh / m;
        if (cwnd as f64) < ssthresh {
            acked = linux_slow_start(&mut cwnd, acked, ssthresh);
            if acked == 0 {
                w.cwnd = cwnd as f64 * m;
                return;
            }
        }
        // The Reno-friendly estimate counts segments in both (2.6.2x scaled
        // its ACK count by the measured delayed-ACK ratio).
        let segs = segments(s.acked, s.mss);
        cwnd = self.avoid(cwnd, acked, segs, s.now);
        w.cwnd = cwnd as f64 * m;
    }

    fn ssthresh_after(&mut self, w: &Window, _signal: Signal, _flight: u64, mss: u32) -> f64 {
        // cubictcp_recalc_ssthresh(): a new epoch starts at the next ACK;
        // tcp_init_cwnd_reduction(): the count towards the next segment
        // starts again.
        let cwnd = (w.cwnd / mss as f64).round();
        self.epoch = None;
        self.credit = 0;
        if let Some(h) = &mut self.hystart_pp {
            h.finish();
        }
        self.w_max = if cwnd < self.w_max && self.p.fast_convergence {
            cwnd * (1.0 + self.p.beta) / 2.0
        } else {
            cwnd
        };
        (cwnd * self.p.beta).floor().max(2.0) * mss as f64
    }

    fn on_timeout(&mut self) {
        self.reset();
    }
}

/// Linux's HyStart state for one round of slow start.
#[derive(Clone, Copy, Debug, Default)]
pub struct HyStart {
    /// The round ends when the cumulative ACK passes this.
    round_end: u64,
    round_start: SimTime,
    last_ack: SimTime,
    /// The smallest RTT of this round's first samples.
    round_min: Option<SimTime>,
    samples: u32,
    started: bool,
}

/// ACKs closer than this form a train (`hystart_ack_delta_us`).
const ACK_DELTA: SimTime = SimTime(2_000_000);

/// How long an ACK train must last to end slow start (`hystart_update()`
/// since Linux 5.7): the smallest RTT plus the device's allowance, halved
/// unless the sender paces (pacing spreads a round's segments over up to
/// half a round trip), with a window of `cwnd` bytes.
fn train_threshold(min: SimTime, paced: bool, cwnd: f64, srtt: Option<SimTime>) -> SimTime {
    let t = min + ack_delay(cwnd, srtt);
    if paced {
        t
    } else {
        SimTime(t.ns() / 2)
    }
}

/// `hystart_ack_delay()`: what the ACK train's threshold allows for the
/// sender's device, the time four bursts of `sk_gso_max_size` (64 KB)
/// take at the pacing rate, at most 1 ms. Linux keeps a pacing rate
/// whether or not it paces, twice cwnd per SRTT in slow start
/// (`tcp_update_pacing_rate()`, `tcp_pacing_ss_ratio` = 200 %); below
/// 2.1 Gbit/s the allowance is the whole 1 ms.
fn ack_delay(cwnd: f64, srtt: Option<SimTime>) -> SimTime {
    const GSO_BURSTS: f64 = 4.0 * 65_536.0;
    let cap = SimTime::from_ms(1);
    match srtt {
        Some(srtt) if cwnd > 0.0 => {
            let rate = 2.0 * cwnd / srtt.secs_f64();
            SimTime::from_secs_f64(GSO_BURSTS / rate).min(cap)
        }
        // No rate yet: Linux's sk_pacing_rate is then unbounded.
        _ => SimTime::ZERO,
    }
}
/// Samples per round for the delay test (`HYSTART_MIN_SAMPLES`).
const MIN_SAMPLES: u32 = 8;

impl HyStart {
    /// An ACK in slow start: a new round begins once the cumulative ACK
    /// passes the end of the last (bictcp_hystart_reset()).
    fn next_round(&mut self, s: &AckSample) {
        if !self.started || s.snd_una > self.round_end {
            self.started = true;
            self.round_end = s.snd_max;
            self.round_start = s.now;
            self.last_ack = s.now;
            self.round_min = None;
            self.samples = 0;
        }
    }

    /// One RTT sample `rtt` in slow start, after
    /// [`next_round`](Self::next_round), the path's smallest being `min`
    /// and an ACK train ending slow start once it lasts `train`; true if
    /// slow start should end now.
    fn update(&mut self, rtt: SimTime, min: SimTime, train: SimTime, s: &AckSample) -> bool {
        // ACK train: ACKs closely spaced for `train`.
        if s.now - self.last_ack <= ACK_DELTA {
            self.last_ack = s.now;
            if s.now - self.round_start > train {
                return true;
            }
        }
        // Delay increase: this round's smallest RTT above the path's by an
        // eighth of it, clamped to 4..16 ms.
        self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else {
            let thresh = SimTime(min.ns() / 8)
                .max(SimTime::from_ms(4))
                .min(SimTime::from_ms(16));
            if self.round_min.is_some_and(|r| r > min + thresh) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(acked_segments: u64, now: SimTime, rtt: Option<SimTime>) -> AckSample<'static> {
        AckSample {
            now,
            acked: acked_segments * 1000,
            mss: 1000,
            rtt,
            srtt: rtt,
            snd_una: 0,
            snd_max: 0,
            rate: None,
        }
    }

    /// One round trip of ACKs, one per segment of the window, spread over
    /// `rtt` from `now`; returns the time of the last.
    fn round_trip(c: &mut Cubic, w: &mut Window, mut now: SimTime, rtt: SimTime) -> SimTime {
        let n = (w.cwnd / 1000.0) as u64;
        let step = SimTime(rtt.ns() / n);
        for _ in 0..n {
            now += step;
            c.on_ack(w, &sample(1, now, Some(rtt)));
        }
        now
    }

    /// CUBIC without HyStart at a steady `rtt`, just cut from `segs`
    /// segments of 1000 bytes (to 70 % of them).
    fn after_loss_at(segs: f64, rtt: SimTime) -> (Cubic, Window) {
        let mut c = Cubic::new(
            CubicParams {
                hystart: HyStartKind::Off,
                ..CubicParams::default()
            },
            CcRules::Linux,
        );
        c.min_rtt = Some(rtt);
        let mut w = Window {
            cwnd: segs * 1000.0,
            ssthresh: 1e12,
        };
        w.ssthresh = c.ssthresh_after(&w, Signal::Loss, 0, 1000);
        w.cwnd = w.ssthresh;
        (c, w)
    }

    #[test]
    fn k_and_the_cubic_from_rfc_9438() {
        // RFC 9438 eq. (2): K = cbrt(W_max (1 - beta) / C); after a loss at
        // W_max = 100 segments cwnd = 70 and K = cbrt(30 / 0.4) = 4.217 s.
        let mut c = Cubic::new(CubicParams::default(), CcRules::Linux);
        let w = Window {
            cwnd: 100_000.0,
            ssthresh: 1e12,
        };
        let ssthresh = c.ssthresh_after(&w, Signal::Loss, 100_000, 1000);
        assert_eq!(ssthresh, 70_000.0);
        assert_eq!(c.w_max, 100.0);
        let k = c.k_for(100.0, 70.0);
        assert!((k - 75f64.cbrt()).abs() < 1e-12, "K {k}");
        assert!((k - 4.2172).abs() < 1e-4);
        // W(0) = W_max - C K^3 = cwnd; W(K) = W_max.
        c.k = k;
        c.origin = 100.0;
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(k) - 100.0).abs() < 1e-12);
        assert!((c.w_cubic(k + 2.0) - (100.0 + 0.4 * 8.0)).abs() < 1e-9);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_shrinks() {
        let mut c = Cubic::new(CubicParams::default(), CcRules::Linux);
        let at = |cwnd: f64| Window {
            cwnd: cwnd * 1000.0,
            ssthresh: 1e12,
        };
        c.ssthresh_after(&at(100.0), Signal::Loss, 0, 1000);
        assert_eq!(c.w_max, 100.0);
        // The next event comes at 80 < 100: W_max = 80 (1 + 0.7) / 2 = 68.
        c.ssthresh_after(&at(80.0), Signal::Loss, 0, 1000);
        assert!((c.w_max - 68.0).abs() < 1e-12);
        let mut off = Cubic::new(
            CubicParams {
                fast_convergence: false,
                ..CubicParams::default()
            },
            CcRules::Linux,
        );
        off.ssthresh_after(&at(100.0), Signal::Loss, 0, 1000);
        off.ssthresh_after(&at(80.0), Signal::Loss, 0, 1000);
        assert_eq!(off.w_max, 80.0);
    }

    #[test]
    fn regrowth_follows_the_cubic_within_one_segment() {
        // After a loss at 100 segments, ACKs of one segment each at a
        // steady 100 ms RTT: the window tracks W(t + RTT) from below.
        let rtt = SimTime::from_ms(100);
        let (mut c, mut w) = after_loss_at(100.0, rtt);
        let mut now = SimTime::from_secs(10);
        let start = now;
        let k = c.k_for(100.0, 70.0);
        while now - start < SimTime::from_secs(8) {
            now = round_trip(&mut c, &mut w, now, rtt);
            // Each ACK aims at W(t + RTT), so the window stays between
            // W(t) and W(t + RTT), to within a segment.
            let t = (now - start).secs_f64();
            let lo = 0.4 * (t - k).powi(3) + 100.0;
            let hi = 0.4 * (t + 0.1 - k).powi(3) + 100.0;
            let cwnd = w.cwnd / 1000.0;
            assert!(
                cwnd <= hi + 1.0 && cwnd >= lo - 1.0,
                "t {t:.2}: cwnd {cwnd} against W(t) {lo:.2} .. W(t + RTT) {hi:.2}"
            );
        }
    }

    #[test]
    fn reno_friendly_region_on_a_short_path() {
        // At a 1 ms RTT the cubic barely moves in a few hundred round
        // trips; the window follows Reno with alpha = 3 (1 - beta)/(1 + beta)
        // = 0.53 segments per window of ACKs instead.
        let rtt = SimTime::from_ms(1);
        let (mut c, mut w) = after_loss_at(20.0, rtt);
        let mut now = SimTime::from_secs(1);
        let rounds = 100;
        for _ in 0..rounds {
            now = round_trip(&mut c, &mut w, now, rtt);
        }
        let cwnd = w.cwnd / 1000.0;
        let reno = 14.0 + 0.529 * rounds as f64;
        assert!((cwnd - reno).abs() <= 3.0, "cwnd {cwnd} against {reno:.1}");
        // The cubic alone, 0.1 s in: W(0.1) - 14 is under one segment.
        assert!(c.w_cubic(0.1 + 0.001) - 14.0 < 1.0);
    }

    #[test]
    fn hystart_ends_slow_start_when_the_delay_rises() {
        let mut h = HyStart::default();
        let min = SimTime::from_ms(100);
        let mut s = sample(2, SimTime::from_secs(1), None);
        s.snd_una = 1;
        s.snd_max = 1000;
        // Eight samples at the path's RTT, spaced beyond the ACK train.
        for i in 0..8 {
            s.now = SimTime::from_secs(1) + SimTime::from_ms(5 * i);
            h.next_round(&s);
            assert!(!h.update(min, min, SimTime(min.ns() / 2), &s));
        }
        // A new round whose samples are 20 ms above: more than the 12.5 ms
        // threshold (100/8).
        s.snd_una = 2000;
        s.snd_max = 4000;
        let mut ended = false;
        for i in 0..9 {
            s.now = SimTime::from_secs(2) + SimTime::from_ms(5 * i);
            h.next_round(&s);
            ended |= h.update(min + SimTime::from_ms(20), min, SimTime(min.ns() / 2), &s);
        }
        assert!(ended);
    }

    #[test]
    fn a_paced_senders_ack_train_must_last_the_whole_smallest_rtt() {
        // hystart_update() since Linux 5.7: the smallest RTT plus
        // hystart_ack_delay() (1 ms below 2.1 Gbit/s), halved unless the
        // sender paces.
        let min = SimTime::from_ms(600);
        let (cwnd, srtt) = (500.0 * 1448.0, Some(SimTime::from_ms(600)));
        assert_eq!(
            train_threshold(min, false, cwnd, srtt),
            SimTime::from_us(300_500)
        );
        assert_eq!(
            train_threshold(min, true, cwnd, srtt),
            SimTime::from_ms(601)
        );
        // 10 MB per 1 ms at twice the window: four 64 KB bursts take 13.1 us.
        let fast = train_threshold(SimTime::from_ms(1), true, 10e6, Some(SimTime::from_ms(1)));
        assert_eq!(fast, SimTime::from_ms(1) + SimTime::from_ns(13_107));
        // One round of 450 ACKs 1 ms apart after eight at the path's RTT: a
        // 450 ms train ends an unpaced sender's slow start, not a paced
        // one's; under the linux-2009 rules (2.6.29's half RTT) it does.
        for (paced, rules, exits) in [
            (false, CcRules::Linux, true),
            (true, CcRules::Linux, false),
            (true, CcRules::Linux2009, true),
        ] {
            let p = CubicParams {
                hystart: HyStartKind::Linux { paced },
                ..CubicParams::default()
            };
            let mut c = Cubic::new(p, rules);
            let mut w = Window {
                cwnd: 100_000.0,
                ssthresh: f64::INFINITY,
            };
            let mut ended = false;
            for i in 0..450u64 {
                let now = SimTime::from_secs(2) + SimTime::from_ms(i);
                let mut s = sample(0, now, Some(min));
                s.srtt = srtt;
                s.snd_una = 1;
                s.snd_max = 1_000_000;
                c.on_ack(&mut w, &s);
                ended |= w.ssthresh.is_finite();
            }
            assert_eq!(ended, exits, "paced {paced}, {rules:?}");
        }
    }

    #[test]
    fn hystart_rounds_follow_the_trains_of_acks_from_the_first() {
        // Slow start from 10 segments, one ACK per segment, each releasing
        // two: round k's segments leave as one burst at twice the
        // bottleneck's rate, so the queue, and the RTT, grow through it
        // (here by 0.5 ms a segment) and its first segments see none.
        // Counted from the connection's first ACK, a round's first eight
        // samples are a burst's first eight, at the path's RTT: HyStart's
        // delay test does not fire however long the bursts get. Counted
        // only from 16 segments on, rounds would start in the middle of a
        // train and their first samples carry its queue.
        let mut c = Cubic::new(CubicParams::default(), CcRules::Linux);
        let mut w = Window {
            cwnd: 10_000.0,
            ssthresh: f64::INFINITY,
        };
        let min = SimTime::from_ms(100);
        let (mut una, mut max) = (0u64, 10u64);
        let mut burst_start = 0u64;
        let mut now = SimTime::from_secs(1);
        while w.cwnd < 600_000.0 {
            let burst_end = max;
            // The ACKs of the burst [burst_start, burst_end).
            while una < burst_end {
                let pos = una - burst_start;
                una += 1;
                // Beyond hystart_ack_delta_us apart: no ACK train.
                now += SimTime::from_ms(3);
                let rtt = min + SimTime::from_us(500 * pos);
                let mut s = sample(1, now, Some(rtt));
                s.snd_una = una * 1000;
                s.snd_max = max * 1000;
                c.on_ack(&mut w, &s);
                assert_eq!(
                    w.ssthresh,
                    f64::INFINITY,
                    "exit at {} segments",
                    w.cwnd / 1000.0
                );
                max += 2;
            }
            burst_start = burst_end;
            now += min;
        }
    }

    #[test]
    fn a_reduction_starts_the_segment_count_again() {
        // tcp_init_cwnd_reduction() zeroes snd_cwnd_cnt, the count of
        // segments towards the next increase: what was counted against the
        // old window does not carry over to the reduced one.
        let rtt = SimTime::from_ms(100);
        let (mut c, mut w) = after_loss_at(100.0, rtt);
        let mut now = SimTime::from_secs(10);
        for _ in 0..3 {
            now = round_trip(&mut c, &mut w, now, rtt);
        }
        assert!(c.credit > 0);
        let ssthresh = c.ssthresh_after(&w, Signal::Loss, 0, 1000);
        assert!(ssthresh < w.cwnd);
        assert_eq!(c.credit, 0);
    }

    #[test]
    fn linux_2009_counts_acks_not_segments() {
        // Kernels of 2009 grew slow start by one segment per ACK, whatever
        // it acknowledged; today's count the segments.
        let mut w09 = Window {
            cwnd: 10_000.0,
            ssthresh: 1e12,
        };
        let mut now_ = w09;
        let mut old = Cubic::new(CubicParams::default(), CcRules::Linux2009);
        let mut new = Cubic::new(CubicParams::default(), CcRules::Linux);
        for i in 0..5 {
            let t = SimTime::from_ms(i);
            old.on_ack(&mut w09, &sample(2, t, None));
            new.on_ack(&mut now_, &sample(2, t, None));
        }
        assert_eq!(w09.cwnd, 15_000.0);
        assert_eq!(now_.cwnd, 20_000.0);
    }
}
