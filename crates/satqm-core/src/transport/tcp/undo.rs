//! Undoing a window reduction that turned out unnecessary, as Linux does
//! from D-SACKs (RFC 2883; RFC 3708's detection): `undo_marker`,
//! `undo_retrans`, `tcp_check_dsack()`, `tcp_dsack_seen()`,
//! `tcp_sacktag_one()`, `tcp_try_undo_dsack()`, `tcp_try_undo_recovery()`,
//! `tcp_try_undo_loss()` and `tcp_undo_cwnd_reduction()` in
//! `net/ipv4/tcp_input.c`.
//!
//! A loss episode (a recovery, or a timeout that starts one) notes where it
//! began and the window and threshold before it, and counts the segments it
//! resends. Each D-SACK for one of those resends shows that the receiver
//! had the segment already: the resend was not needed. When every resend
//! of the episode is accounted for so, the losses were not losses
//! (reordering, or a delay the timer did not wait out), and the episode's
//! reduction is undone: cwnd back to at least what it was, ssthresh back to
//! what it would have been without the episode. An ECN echo during the
//! episode keeps the reduction (the network did signal congestion).
//!
//! With timestamps, an ACK that echoes a TSval from before the episode's
//! first resend was sent for an original transmission (Eifel detection,
//! RFC 3522; `tcp_packet_delayed()`): the original was delayed, not lost,
//! and the sender undoes at once rather than waiting for the D-SACKs.

use crate::time::SimTime;

/// The undo state of one connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct Undo {
    /// `undo_marker`: `snd_una` when the episode began; `None`: nothing
    /// to undo.
    marker: Option<u64>,
    /// `undo_retrans`: the episode's resends not yet D-SACKed; -1 before
    /// the first.
    retrans: i64,
    /// cwnd before the episode, bytes.
    prior_cwnd: f64,
    /// ssthresh to restore, bytes (`tcp_current_ssthresh()` when the
    /// episode began); 0: the reduction stays (it followed an ECN echo, or
    /// one came since).
    prior_ssthresh: f64,
    /// Segments D-SACKed and segments resent over the connection
    /// (`dsack_dups`, `total_retrans`): a D-SACK that would report more
    /// duplicates than were ever sent is not believed.
    dsack_dups: u64,
    total_retrans: u64,
    /// When the first resend not yet acknowledged went out
    /// (`retrans_stamp`), and the end of the highest resent segment.
    retrans_stamp: Option<SimTime>,
    resent_high: u64,
}

/// An ACK echoing `ts_ecr` (nanoseconds, 0 for none) was sent for a segment
/// that left before `at`, compared in the option's whole milliseconds
/// (`tcp_tsopt_ecr_before()`).
pub fn echoes_before(ts_ecr: u64, at: SimTime) -> bool {
    const MS: u64 = 1_000_000;
    ts_ecr / MS > 0 && ts_ecr / MS < at.ns() / MS
}

/// What an ACK's first SACK block said, if it was a D-SACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dsack {
    pub start: u64,
    pub end: u64,
    /// Segments it reports.
    pub segs: u64,
}

impl Undo {
    /// The first SACK block of an ACK for `ack` reports a duplicate: it
    /// lies below `ack`, or within the second block (RFC 2883 section 4).
    /// `None` otherwise, or if it reports more than was ever resent
    /// (`tcp_dsack_seen()`).
    pub fn read(&mut self, blocks: &[(u64, u64)], ack: u64, mss: u32) -> Option<Dsack> {
        let &(start, end) = blocks.first()?;
        let below = start < ack;
        let inside = blocks
            .get(1)
            .is_some_and(|&(s1, e1)| start >= s1 && end <= e1);
        if !(below || inside) || start >= end {
            return None;
        }
        let segs = (end - start).div_ceil(mss as u64).max(1);
        self.dsack_dups += segs;
        if self.dsack_dups > self.total_retrans {
            return None;
        }
        Some(Dsack { start, end, segs })
    }

    /// D-SACKed resends of this episode: below the cumulative ACK before
    /// this one (`una_before`), the block's segments as reported; above it,
    /// `resent_above` of them (the block's segments that were resent,
    /// `tcp_sacktag_one()`).
    pub fn on_dsack(&mut self, d: &Dsack, una_before: u64, resent_above: u64) {
        let Some(marker) = self.marker else {
            return;
        };
        if self.retrans <= 0 || d.end <= marker {
            return;
        }
        let n = if d.end <= una_before {
            d.segs
        } else {
            resent_above
        };
        self.retrans = (self.retrans - n as i64).max(0);
    }

    /// A loss episode begins (`tcp_init_undo()`): `resent_in_flight`
    /// resends of an earlier episode are still out (`retrans_out`);
    /// `prior_ssthresh` 0 if the reduction is not to be undone.
    pub fn begin(
        &mut self,
        snd_una: u64,
        resent_in_flight: u64,
        prior_cwnd: f64,
        prior_ssthresh: f64,
    ) {
        self.marker = Some(snd_una);
        self.retrans = if resent_in_flight > 0 {
            resent_in_flight as i64
        } else {
            -1
        };
        self.prior_cwnd = prior_cwnd;
        self.prior_ssthresh = prior_ssthresh;
    }

    /// The segment ending at `end` was resent at `now`; `counted`: by loss
    /// recovery or the timer (a tail loss probe's resend is not,
    /// `tcp_retransmit_skb()`).
    pub fn on_resend(&mut self, counted: bool, end: u64, now: SimTime) {
        self.total_retrans += 1;
        if counted {
            self.retrans = self.retrans.max(0) + 1;
            self.retrans_stamp.get_or_insert(now);
            self.resent_high = self.resent_high.max(end);
        }
    }

    /// No loss episode is under way and `snd_una` passed every resend:
    /// the next resend starts a new stamp.
    pub fn on_open(&mut self, snd_una: u64) {
        if snd_una >= self.resent_high {
            self.retrans_stamp = None;
        }
    }

    /// An ACK echoing `ts_ecr` (nanoseconds, 0 for none) was sent for a
    /// segment that left before the first resend still outstanding
    /// (`tcp_packet_delayed()`, compared in the option's milliseconds).
    pub fn delayed(&self, ts_ecr: u64) -> bool {
        self.retrans_stamp.is_some_and(|t| echoes_before(ts_ecr, t))
    }

    /// An ECN echo: the reduction under way, if any, stays
    /// (`tcp_fastretrans_alert()` clears `prior_ssthresh`).
    pub fn keep_reduction(&mut self) {
        self.prior_ssthresh = 0.0;
    }

    /// A window reduction for an ECN echo begins (`tcp_enter_cwr()`):
    /// there is nothing to undo.
    pub fn forget(&mut self) {
        self.marker = None;
        self.prior_ssthresh = 0.0;
    }

    /// Every resend of the episode was D-SACKed.
    pub fn possible(&self) -> bool {
        self.marker.is_some() && self.retrans == 0
    }

    /// An episode is under way that may be undone.
    pub fn pending(&self) -> bool {
        self.marker.is_some()
    }

    /// Undo (`tcp_undo_cwnd_reduction()`): the window and threshold to
    /// restore, if the reduction is to be undone (cwnd the larger of the
    /// current and `prior_cwnd`, ssthresh the larger of the current and
    /// `prior_ssthresh`); the episode is over either way.
    pub fn take(&mut self) -> Option<(f64, f64)> {
        self.marker = None;
        (self.prior_ssthresh > 0.0).then_some((self.prior_cwnd, self.prior_ssthresh))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn resends(u: &mut Undo, n: u64) {
        for _ in 0..n {
            u.on_resend(true, 0, SimTime::ZERO);
        }
    }

    #[test]
    fn a_dsack_is_a_first_block_below_the_ack_or_inside_the_second() {
        let mut u = Undo::default();
        resends(&mut u, 10);
        assert_eq!(
            u.read(&[(3000, 4000)], 5000, MSS),
            Some(Dsack {
                start: 3000,
                end: 4000,
                segs: 1
            })
        );
        assert_eq!(
            u.read(&[(7000, 8000), (6000, 9000)], 5000, MSS),
            Some(Dsack {
                start: 7000,
                end: 8000,
                segs: 1
            })
        );
        // An ordinary first block, above the ACK and not inside the next.
        assert_eq!(u.read(&[(7000, 8000), (9000, 10000)], 5000, MSS), None);
        assert_eq!(u.read(&[(7000, 8000)], 5000, MSS), None);
        // Two segments' worth.
        assert_eq!(u.read(&[(1000, 3000)], 5000, MSS).map(|d| d.segs), Some(2));
    }

    #[test]
    fn dsacks_for_more_than_was_ever_resent_are_not_believed() {
        let mut u = Undo::default();
        resends(&mut u, 2);
        assert!(u.read(&[(0, 1000)], 5000, MSS).is_some());
        assert!(u.read(&[(1000, 2000)], 5000, MSS).is_some());
        assert!(u.read(&[(2000, 3000)], 5000, MSS).is_none());
    }

    #[test]
    fn the_reduction_is_undone_when_every_resend_of_the_episode_is_dsacked() {
        let mut u = Undo::default();
        u.begin(10_000, 0, 20_000.0, 15_000.0);
        assert!(!u.possible(), "no resend yet: nothing shown unnecessary");
        resends(&mut u, 2);
        let d = u.read(&[(10_000, 11_000)], 13_000, MSS).unwrap();
        u.on_dsack(&d, 12_000, 0);
        assert!(!u.possible());
        // The second resend, D-SACKed while its segment is still above the
        // cumulative ACK: counted from the scoreboard.
        let d = u
            .read(&[(14_000, 15_000), (14_000, 16_000)], 13_000, MSS)
            .unwrap();
        u.on_dsack(&d, 13_000, 1);
        assert!(u.possible());
        assert_eq!(u.take(), Some((20_000.0, 15_000.0)));
        assert!(!u.possible(), "undone once");
    }

    #[test]
    fn dsacks_from_before_the_episode_or_an_ecn_echo_keep_the_reduction() {
        let mut u = Undo::default();
        resends(&mut u, 3);
        u.begin(10_000, 1, 20_000.0, 15_000.0);
        // A resend of the earlier episode still in flight counts.
        let d = u.read(&[(5_000, 6_000)], 12_000, MSS).unwrap();
        u.on_dsack(&d, 12_000, 0);
        assert!(!u.possible(), "ends below the marker: not this episode's");
        let d = u.read(&[(10_000, 11_000)], 12_000, MSS).unwrap();
        u.on_dsack(&d, 12_000, 0);
        assert!(u.possible());
        u.keep_reduction();
        assert_eq!(u.take(), None, "an echo came: nothing restored");
        u.begin(20_000, 0, 1.0, 1.0);
        u.forget();
        assert!(!u.possible());
    }

    #[test]
    fn an_echo_from_before_the_first_resend_shows_a_delayed_original() {
        let mut u = Undo::default();
        assert!(!u.delayed(5_000_000), "nothing resent");
        u.begin(10_000, 0, 20_000.0, 15_000.0);
        u.on_resend(true, 11_000, SimTime::from_ms(300));
        u.on_resend(true, 12_000, SimTime::from_ms(310));
        // Whole milliseconds, strictly before; no echo is no evidence.
        assert!(u.delayed(SimTime::from_ms(299).ns() + 999_999));
        assert!(!u.delayed(SimTime::from_ms(300).ns()));
        assert!(!u.delayed(0));
        // The stamp stays while a resend is unacknowledged.
        u.on_open(11_500);
        assert!(u.delayed(SimTime::from_ms(200).ns()));
        u.on_open(12_000);
        assert!(!u.delayed(SimTime::from_ms(200).ns()));
    }
}
