//! Loss recovery: when duplicate ACKs (or SACK information) mean a segment
//! was lost, which segments to resend and how the window behaves until the
//! losses are repaired. Congestion control ([`super::cc`]) decides how far
//! the window falls on a congestion signal; a recovery decides when that
//! signal is raised and drives the window through the episode. A new
//! variant is one file implementing [`LossRecovery`] plus one arm in
//! [`AnyRecovery`].
//!
//! The sender keeps the connection state machine, the send sequence
//! variables, the RTT estimator and the timers; at each ACK and timeout it
//! calls a hook here and acts on the decision it gets back: retransmit the
//! first unacknowledged segment, go back to it and resend everything
//! (go-back-N), restart the retransmission timer or not.
//!
//! To avoid several window reductions for losses of one window (RFC 6582
//! section 3.2 step 2, and the default of ns-2's TCP agents), no variant
//! starts a new fast retransmit before the cumulative ACK has passed the
//! `recover` point set by the previous one or by a timeout.

mod newreno;
mod rack;
mod sack;

pub use newreno::{NewReno, Reno, Tahoe};
pub use sack::Sack;

use super::config::Recovery;

use super::cc::{Cc, Signal, Window};
use super::clock::TimerClock;
use super::segments::Segments;
use crate::time::SimTime;

/// The part of the sender a recovery hook reads and moves.
pub struct Conn<'a> {
    pub win: &'a mut Window,
    pub cc: &'a mut Cc,
    pub segs: &'a mut Segments,
    /// Oldest unacknowledged byte (after this ACK, for a new ACK).
    pub snd_una: u64,
    /// One past the highest byte sent.
    pub snd_max: u64,
    pub mss: u32,
    /// The window is already coming down after an ECN echo (Linux's CWR
    /// state with PRR): a recovery starting now keeps that reduction's
    /// ssthresh (`tcp_enter_recovery()`).
    pub reducing: bool,
    /// This ACK's SACK blocks covered data not SACKed before (RFC 6675
    /// section 2: what makes an ACK a duplicate one under SACK).
    pub newly_sacked: bool,
    /// When RACK's reordering timer fires ([`TimerClock`]).
    pub clock: TimerClock,
    /// What RACK's reordering timer waits beyond the time a segment is
    /// due (Linux's `TCP_TIMEOUT_MIN_US`, 2 ms, in `tcp_rack_mark_lost()`).
    pub reo_min: SimTime,
}

impl Conn<'_> {
    /// FlightSize (RFC 5681): bytes sent and not cumulatively acknowledged.
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }
}

/// The state every variant keeps.
#[derive(Clone, Copy, Debug)]
pub struct Episode {
    /// DupThresh (RFC 5681 section 3.2), three by default.
    pub dupthresh: u32,
    /// Duplicate ACKs since the last new ACK.
    pub dupacks: u32,
    /// In fast recovery.
    pub in_recovery: bool,
    /// `recover` (RFC 6582): `snd_max` when the last episode began.
    pub recover: u64,
}

impl Episode {
    fn new(dupthresh: u32) -> Episode {
        Episode {
            dupthresh,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
        }
    }

    /// No loss episode is in the way of a new one: the cumulative ACK has
    /// passed the previous `recover` point.
    fn may_start(&self, c: &Conn) -> bool {
        c.snd_una >= self.recover
    }

    /// Start a loss episode: ssthresh from congestion control, `recover`
    /// at the highest byte sent; `fast` for fast recovery (not Tahoe).
    fn enter(&mut self, c: &mut Conn, fast: bool) {
        if !c.reducing {
            let flight = c.flight();
            c.win.ssthresh = c.cc.ssthresh_after(c.win, Signal::Loss, flight, c.mss);
        }
        self.recover = c.snd_max;
        self.in_recovery = fast;
    }

    /// A retransmission timeout ends any episode and starts a new one at
    /// `snd_max`.
    fn on_timeout(&mut self, snd_max: u64) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = snd_max;
    }
}

/// What to do on a new cumulative ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewAck {
    /// Outside recovery: congestion control grows the window.
    Grow,
    /// In (or just out of) recovery: the recovery set the window.
    Recovering {
        /// Resend the first unacknowledged segment now (a partial ACK).
        resend_head: bool,
        /// Restart the retransmission timer.
        restart_timer: bool,
    },
}

/// What to do on a duplicate ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DupAck {
    /// Nothing beyond what the window allows.
    Wait,
    /// Fast retransmit: an episode began, the window is cut; resend the
    /// first unacknowledged segment now, whatever the window.
    FastRetransmit,
    /// An episode began, the window is cut, and the first unacknowledged
    /// segment, deemed lost in the episode before, is already resent and
    /// in flight: nothing is resent now (with RACK, which finds a lost
    /// resend by time, as Linux's scoreboard keeps it).
    Recovery,
    /// An episode began without fast recovery (Tahoe): the window is cut;
    /// resend everything from the first unacknowledged segment.
    GoBackN,
}

/// What to resend after a retransmission timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterTimeout {
    /// Everything from the first unacknowledged segment.
    GoBackN,
    /// What the scoreboard now deems lost (all that is not SACKed).
    Scoreboard,
}

pub trait LossRecovery {
    fn episode(&self) -> &Episode;

    /// SACK blocks arrived at `now`, before the ACK carrying them is
    /// processed; `snd_una` is still the value before it.
    fn on_sack_blocks(
        &mut self,
        _segs: &mut Segments,
        _blocks: &[(u64, u64)],
        _snd_una: u64,
        _now: SimTime,
    ) {
    }

    /// New data was cumulatively acknowledged: `acked` bytes, already
    /// retired from `c.segs` and counted into `c.snd_una`.
    fn on_new_ack(&mut self, c: &mut Conn, acked: u64) -> NewAck;

    /// A duplicate ACK.
    fn on_dupack(&mut self, c: &mut Conn) -> DupAck;

    /// The retransmission timer fired at `now`; congestion control
    /// already cut the window.
    fn on_timeout(&mut self, c: &mut Conn, now: SimTime) -> AfterTimeout;

    /// A segment deemed lost and not yet resent, to send before new data
    /// (RFC 6675 NextSeg rule 1): its index in `segs`. Takes `&mut self`
    /// so that a recovery may keep its place in the queue between calls.
    fn next_lost(&mut self, _segs: &Segments) -> Option<usize> {
        None
    }

    /// Bytes thought to be in the network, against which the window is
    /// compared: FlightSize, or RFC 6675's `pipe`.
    fn pipe(&self, _segs: &Segments, snd_una: u64, snd_max: u64) -> u64 {
        snd_max - snd_una
    }
}

/// Enum dispatch over the loss recoveries.
#[derive(Clone, Debug)]
pub enum AnyRecovery {
    Tahoe(Tahoe),
    Reno(Reno),
    NewReno(NewReno),
    Sack(Sack),
}

/// Call `$call` on the variant inside `$self`, bound to `$r` (a `match`,
/// so every call is static).
macro_rules! dispatch {
    ($self:expr, $r:ident => $call:expr) => {
        match $self {
            AnyRecovery::Tahoe($r) => $call,
            AnyRecovery::Reno($r) => $call,
            AnyRecovery::NewReno($r) => $call,
            AnyRecovery::Sack($r) => $call,
        }
    };
}

impl AnyRecovery {
    /// `rack`: SACK recovery also detects lost retransmissions by time
    /// (RFC 8985); the other variants have no scoreboard for it.
    pub fn new(kind: Recovery, dupthresh: u32, mss: u32, rack: bool) -> AnyRecovery {
        let ep = Episode::new(dupthresh);
        match kind {
            Recovery::Tahoe => AnyRecovery::Tahoe(Tahoe { ep }),
            Recovery::Reno => AnyRecovery::Reno(Reno { ep }),
            Recovery::NewReno => AnyRecovery::NewReno(NewReno::new(ep)),
            Recovery::Sack => AnyRecovery::Sack(Sack::new(ep, mss, rack)),
        }
    }

    #[inline]
    pub fn in_recovery(&self) -> bool {
        dispatch!(self, r => r.episode().in_recovery)
    }

    #[inline]
    pub fn on_sack_blocks(
        &mut self,
        segs: &mut Segments,
        blocks: &[(u64, u64)],
        snd_una: u64,
        now: SimTime,
    ) {
        dispatch!(self, r => r.on_sack_blocks(segs, blocks, snd_una, now))
    }

    // RACK's hooks: only SACK recovery keeps its state.

    /// The cumulative ACK delivered a segment ending at `end`, last sent
    /// at `sent_at`.
    #[inline]
    pub fn on_delivered(&mut self, sent_at: SimTime, end: u64, ever_retx: bool, now: SimTime) {
        if let AnyRecovery::Sack(r) = self {
            r.on_delivered(sent_at, end, ever_retx, now);
        }
    }

    /// Segment `i` was just resent at `now`.
    #[inline]
    pub fn on_resent(&mut self, segs: &Segments, i: usize, now: SimTime) {
        if let AnyRecovery::Sack(r) = self {
            r.on_resent(segs, i, now);
        }
    }

    /// RACK's loss detection, after an ACK or at its reordering timer:
    /// `Some` if it starts a recovery (the window is cut), holding whether
    /// the first unacknowledged segment is to be resent now.
    #[inline]
    pub fn rack_detect(
        &mut self,
        c: &mut Conn,
        now: SimTime,
        srtt: Option<SimTime>,
    ) -> Option<bool> {
        match self {
            AnyRecovery::Sack(r) => r.rack_detect(c, now, srtt),
            _ => None,
        }
    }

    /// When the oldest segment newly SACKed by the last ACK was sent, if
    /// it was sent once; cleared by the call.
    #[inline]
    pub fn take_sack_timing(&mut self) -> Option<SimTime> {
        match self {
            AnyRecovery::Sack(r) => r.take_sack_timing(),
            _ => None,
        }
    }

    /// The highest SACKed byte, or `snd_una` with nothing SACKed
    /// (`tcp_highest_sack_seq()`).
    #[inline]
    pub fn highest_sacked(&self, segs: &Segments, snd_una: u64) -> u64 {
        match self {
            AnyRecovery::Sack(r) => r.highest_sacked(segs, snd_una),
            _ => snd_una,
        }
    }

    /// Before a cumulative ACK up to `ack` retires segments, with
    /// `prior_fack` the highest byte SACKed before this ACK (RACK's
    /// reordering detection).
    #[inline]
    pub fn before_cum_ack(&mut self, segs: &Segments, snd_una: u64, ack: u64, prior_fack: u64) {
        if let AnyRecovery::Sack(r) = self {
            r.before_cum_ack(segs, snd_una, ack, prior_fack);
        }
    }

    /// Reordering was seen by other means (an ACK echoing the timestamp of
    /// a segment deemed lost, `tcp_try_undo_partial()`).
    pub fn note_reordering(&mut self) {
        if let AnyRecovery::Sack(r) = self {
            r.note_reordering();
        }
    }

    /// A D-SACK arrived (`probe`: for a tail loss probe's resend).
    pub fn on_dsack(&mut self, probe: bool) {
        if let AnyRecovery::Sack(r) = self {
            r.on_dsack(probe);
        }
    }

    /// After each ACK: RACK's reordering window follows the D-SACKs.
    #[inline]
    pub fn update_reo_wnd(&mut self, now: SimTime) {
        if let AnyRecovery::Sack(r) = self {
            r.update_reo_wnd(now);
        }
    }

    /// A recovery ended, `undone` by D-SACKs or not.
    pub fn on_recovery_end(&mut self, undone: bool) {
        if let AnyRecovery::Sack(r) = self {
            r.on_recovery_end(undone);
        }
    }

    /// When RACK's reordering timer is due.
    #[inline]
    pub fn reorder_deadline(&self) -> Option<SimTime> {
        match self {
            AnyRecovery::Sack(r) => r.reorder_deadline(),
            _ => None,
        }
    }

    /// An undone loss episode ends (the sender is back in Linux's Open
    /// state): a new one may start at once; `forget_lost`: what the
    /// episode deemed lost is no longer, and not resent
    /// (`tcp_undo_cwnd_reduction()` after a timeout).
    pub fn end_episode(&mut self, segs: &mut Segments, snd_una: u64, forget_lost: bool) {
        if let AnyRecovery::Sack(r) = self {
            r.end_episode(segs, snd_una, forget_lost);
        }
    }

    /// No loss episode is under way (Linux's Open state): not in fast
    /// recovery, and not repairing a timeout's losses.
    #[inline]
    pub fn is_open(&self, snd_una: u64) -> bool {
        dispatch!(self, r => {
            let ep = r.episode();
            !ep.in_recovery && snd_una >= ep.recover
        })
    }

    #[inline]
    pub fn on_new_ack(&mut self, c: &mut Conn, acked: u64) -> NewAck {
        dispatch!(self, r => r.on_new_ack(c, acked))
    }

    #[inline]
    pub fn on_dupack(&mut self, c: &mut Conn) -> DupAck {
        dispatch!(self, r => r.on_dupack(c))
    }

    #[inline]
    pub fn on_timeout(&mut self, c: &mut Conn, now: SimTime) -> AfterTimeout {
        dispatch!(self, r => r.on_timeout(c, now))
    }

    // The two queries of the send loop: only SACK has a scoreboard, and
    // the other variants keep the trait's defaults, which one arm spells
    // out so that the loop tests a single tag.

    #[inline]
    pub fn next_lost(&mut self, segs: &Segments) -> Option<usize> {
        match self {
            AnyRecovery::Sack(r) => r.next_lost(segs),
            AnyRecovery::Tahoe(_) | AnyRecovery::Reno(_) | AnyRecovery::NewReno(_) => None,
        }
    }

    #[inline]
    pub fn pipe(&self, segs: &Segments, snd_una: u64, snd_max: u64) -> u64 {
        match self {
            AnyRecovery::Sack(r) => r.pipe(segs, snd_una, snd_max),
            AnyRecovery::Tahoe(_) | AnyRecovery::Reno(_) | AnyRecovery::NewReno(_) => {
                snd_max - snd_una
            }
        }
    }
}
