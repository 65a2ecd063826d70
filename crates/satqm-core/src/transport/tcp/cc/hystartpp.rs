//! HyStart++ (RFC 9406): the initial slow start, left early when the RTT
//! rises and then continued cautiously.
//!
//! Each round (from the ACK that passes the end of the previous round's
//! data to the next) records its smallest RTT. Once a round has at least
//! eight samples and its smallest RTT exceeds the previous round's by
//! max(4 ms, min(previous / 8, 16 ms)), slow start ends and Conservative
//! Slow Start (CSS) begins: the window grows by a quarter of what slow start
//! would give it, for at most five rounds (the round where CSS begins
//! counts). If a CSS round's smallest RTT falls below the one that ended
//! slow start, the exit was spurious and slow start resumes; after the
//! fifth round ssthresh is set to cwnd and congestion avoidance begins. In
//! both phases an ACK counts for at most L segments: 8 for a sender that
//! does not pace, unbounded for one that does (section 4.3). A loss or an
//! ECN echo ends HyStart++ as it ends slow start; later slow starts (after
//! a timeout) are standard ones (section 4.2: HyStart++ only for the
//! initial slow start).

use super::reno::linux_slow_start;
use super::{AckSample, Window};
use crate::time::SimTime;

/// `MIN_RTT_THRESH`, `MAX_RTT_THRESH`, `MIN_RTT_DIVISOR`, `N_RTT_SAMPLE`,
/// `CSS_GROWTH_DIVISOR`, `CSS_ROUNDS` and the unpaced `L` of section 4.3.
const MIN_RTT_THRESH: SimTime = SimTime(4_000_000);
const MAX_RTT_THRESH: SimTime = SimTime(16_000_000);
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;
const L_UNPACED: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    /// Conservative Slow Start: the RTT that ended slow start and the
    /// rounds begun in CSS (the first counts the round CSS began in).
    Css {
        baseline: SimTime,
        rounds: u32,
    },
    /// The initial slow start is over: standard slow start from now on.
    Done,
}

/// What an ACK does in the initial slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Grow cwnd by this many segments (ssthresh unchanged).
    Grow(u64),
    /// CSS is over: set ssthresh to cwnd (congestion avoidance).
    Avoid,
    /// HyStart++ is over: standard slow start.
    Standard,
}

#[derive(Clone, Debug)]
pub struct HyStartPp {
    /// Pacing: no per-ACK limit on the growth.
    paced: bool,
    phase: Phase,
    /// The round ends when the cumulative ACK reaches this (`windowEnd`).
    window_end: Option<u64>,
    last_round_min: Option<SimTime>,
    round_min: Option<SimTime>,
    samples: u32,
    /// CSS growth in quarters of a segment not yet added to cwnd.
    css_quarters: u64,
}

impl HyStartPp {
    pub fn new(paced: bool) -> HyStartPp {
        HyStartPp {
            paced,
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min: None,
            round_min: None,
            samples: 0,
            css_quarters: 0,
        }
    }

    /// Slow start or CSS is over for good (a loss, an ECN echo, a timeout).
    pub fn finish(&mut self) {
        self.phase = Phase::Done;
    }

    /// In Conservative Slow Start.
    #[cfg(test)]
    pub fn in_css(&self) -> bool {
        matches!(self.phase, Phase::Css { .. })
    }

    /// An ACK of `segs` segments while cwnd is below ssthresh.
    pub fn on_ack(&mut self, segs: u64, s: &AckSample) -> Step {
        if self.phase == Phase::Done {
            return Step::Standard;
        }
        if self.window_end.is_none_or(|end| s.snd_una >= end) {
            // A new round.
            self.window_end = Some(s.snd_max);
            self.last_round_min = self.round_min.take();
            self.samples = 0;
            if let Phase::Css { rounds, .. } = &mut self.phase {
                if *rounds >= CSS_ROUNDS {
                    self.phase = Phase::Done;
                    return Step::Avoid;
                }
                *rounds += 1;
            }
        }
        if let Some(rtt) = s.rtt {
            self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples += 1;
        }
        let n = if self.paced {
            segs
        } else {
            segs.min(L_UNPACED)
        };
        match self.phase {
            Phase::SlowStart => {
                if let (true, Some(cur), Some(last)) = (
                    self.samples >= N_RTT_SAMPLE,
                    self.round_min,
                    self.last_round_min,
                ) {
                    let thresh =
                        SimTime(last.ns() / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if cur >= last + thresh {
                        self.phase = Phase::Css {
                            baseline: cur,
                            rounds: 1,
                        };
                        self.css_quarters = 0;
                    }
                }
                Step::Grow(n)
            }
            Phase::Css { baseline, .. } => {
                if self.samples >= N_RTT_SAMPLE && self.round_min.is_some_and(|cur| cur < baseline)
                {
                    // The exit was spurious: slow start again.
                    self.phase = Phase::SlowStart;
                    return Step::Grow(n);
                }
                self.css_quarters += n;
                let grow = self.css_quarters / CSS_GROWTH_DIVISOR;
                self.css_quarters -= grow * CSS_GROWTH_DIVISOR;
                Step::Grow(grow)
            }
            Phase::Done => Step::Standard,
        }
    }
}

/// HyStart++'s part of an ACK of `acked` segments under Linux's
/// whole-segment slow start (CUBIC's and Reno's), `cwnd` in segments:
/// true if it set the window, the ACK then spent; when CSS is over,
/// ssthresh becomes cwnd and the ACK goes on to congestion avoidance.
pub fn linux_step(
    h: Option<&mut HyStartPp>,
    w: &mut Window,
    cwnd: &mut u64,
    acked: u64,
    s: &AckSample,
) -> bool {
    let m = s.mss as f64;
    let ssthresh = w.ssthresh / m;
    let Some(h) = h.filter(|_| (*cwnd as f64) < ssthresh) else {
        return false;
    };
    match h.on_ack(acked, s) {
        Step::Grow(g) => {
            linux_slow_start(cwnd, g, ssthresh);
            w.cwnd = *cwnd as f64 * m;
            true
        }
        // CSS is over: congestion avoidance from this ACK on.
        Step::Avoid => {
            w.ssthresh = *cwnd as f64 * m;
            false
        }
        Step::Standard => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ACK of `segs` segments at `now` with RTT `rtt_ms`, the cumulative
    /// ACK at `una` and `max` sent.
    fn ack(una: u64, max: u64, rtt_ms: u64) -> AckSample<'static> {
        AckSample {
            now: SimTime::ZERO,
            acked: 1000,
            mss: 1000,
            rtt: Some(SimTime::from_ms(rtt_ms)),
            srtt: None,
            snd_una: una,
            snd_max: max,
            rate: None,
        }
    }

    /// One round of `n` ACKs of one segment each, all with RTT `rtt_ms`:
    /// the round's data runs from `start` to `start + n`; what each ACK
    /// grew by.
    fn round(h: &mut HyStartPp, start: u64, n: u64, rtt_ms: u64) -> Vec<Step> {
        (0..n)
            .map(|i| h.on_ack(1, &ack(start + i, start + n + i, rtt_ms)))
            .collect()
    }

    #[test]
    fn the_delay_threshold_is_an_eighth_of_the_last_round_clamped() {
        // Last round's smallest RTT 100 ms: threshold 12.5 ms. A round at
        // 112 ms stays in slow start; one at 113 ms enters CSS at its
        // eighth sample.
        let mut h = HyStartPp::new(false);
        round(&mut h, 0, 10, 100);
        let steps = round(&mut h, 10, 10, 112);
        assert!(steps.iter().all(|s| *s == Step::Grow(1)));
        assert!(!h.in_css());
        let mut h = HyStartPp::new(false);
        round(&mut h, 0, 10, 100);
        let steps = round(&mut h, 10, 10, 113);
        assert!(h.in_css());
        // Seven full-rate ACKs, then the eighth sample enters CSS (its own
        // growth still slow start's); after it a quarter per segment.
        assert_eq!(&steps[..8], &[Step::Grow(1); 8]);
        assert_eq!(&steps[8..], &[Step::Grow(0), Step::Grow(0)]);
        // 20 ms rounds: the threshold is clamped to 4 ms; 300 ms: to 16 ms.
        for (base, over, enters) in [
            (20, 3, false),
            (20, 4, true),
            (300, 15, false),
            (300, 16, true),
        ] {
            let mut h = HyStartPp::new(false);
            round(&mut h, 0, 10, base);
            round(&mut h, 10, 10, base + over);
            assert_eq!(h.in_css(), enters, "base {base} ms, +{over} ms");
        }
    }

    #[test]
    fn css_grows_a_quarter_for_five_rounds_then_avoids() {
        let mut h = HyStartPp::new(false);
        round(&mut h, 0, 10, 100);
        round(&mut h, 10, 10, 120); // CSS from its eighth ACK: round 1
        let mut start = 20;
        for r in 2..=CSS_ROUNDS {
            // Rounds 2..5 at the same RTT: a quarter segment per segment.
            let grown: u64 = round(&mut h, start, 40, 120)
                .iter()
                .map(|s| match s {
                    Step::Grow(g) => *g,
                    other => panic!("round {r}: {other:?}"),
                })
                .sum();
            assert_eq!(grown, 10, "round {r}");
            start += 40;
        }
        // The next round's first ACK ends CSS; HyStart++ is over.
        assert_eq!(h.on_ack(1, &ack(start, start + 40, 120)), Step::Avoid);
        assert_eq!(
            h.on_ack(1, &ack(start + 1, start + 41, 120)),
            Step::Standard
        );
    }

    #[test]
    fn a_css_round_below_the_baseline_resumes_slow_start() {
        let mut h = HyStartPp::new(false);
        round(&mut h, 0, 10, 100);
        round(&mut h, 10, 10, 120);
        assert!(h.in_css());
        // The next round's RTT falls back to 110 ms (< 120): after eight
        // samples slow start resumes at full rate.
        let steps = round(&mut h, 20, 12, 110);
        assert!(!h.in_css());
        assert_eq!(&steps[8..], &[Step::Grow(1); 4]);
    }

    #[test]
    fn an_ack_counts_at_most_eight_segments_unless_paced() {
        let s = ack(0, 100, 100);
        assert_eq!(HyStartPp::new(false).on_ack(20, &s), Step::Grow(8));
        assert_eq!(HyStartPp::new(true).on_ack(20, &s), Step::Grow(20));
    }

    #[test]
    fn after_finish_slow_start_is_standard() {
        let mut h = HyStartPp::new(false);
        round(&mut h, 0, 10, 100);
        h.finish();
        assert_eq!(h.on_ack(1, &ack(10, 20, 200)), Step::Standard);
    }
}
