//! Loss recovery from duplicate ACKs alone: NewReno (RFC 6582) and the two
//! older variants it extends, Reno (RFC 5681 section 3.2) and Tahoe.
//!
//! * **Tahoe**: after DupThresh duplicate ACKs, slow-start from one
//!   segment and resend everything after the loss (go-back-N).
//! * **Reno**: fast retransmit and fast recovery; the window is set to
//!   `ssthresh + DupThresh * SMSS` and inflated by one SMSS for each further
//!   duplicate ACK (each segment that left the network); any new ACK ends
//!   recovery with `cwnd = ssthresh`.
//! * **NewReno**: recovery lasts until the data outstanding when it began
//!   (`recover`) is acknowledged (section 3.2 step 3, option 2 on the full
//!   ACK); each partial ACK retransmits the next hole, deflates the window
//!   by the data acknowledged and adds back one SMSS if that was at least
//!   one SMSS (step 4). Only the first partial ACK restarts the
//!   retransmission timer: the "Impatient" variant that section 4
//!   recommends and ns-3 implements. When a window holds more holes than
//!   round trips fit in one RTO (a slow-start overshoot on a GEO path), the
//!   timer fires and go-back-N repairs the rest far sooner than one hole
//!   per round trip.
//!
//! All three own only the shared [`Episode`] state (NewReno also whether
//! the next partial ACK is the episode's first); after a timeout all three
//! go back to the first unacknowledged segment.

use super::{AfterTimeout, Conn, DupAck, Episode, LossRecovery, NewAck};
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct Tahoe {
    pub(super) ep: Episode,
}

#[derive(Clone, Debug)]
pub struct Reno {
    pub(super) ep: Episode,
}

#[derive(Clone, Debug)]
pub struct NewReno {
    ep: Episode,
    /// The next partial ACK is the first of this episode.
    first_partial_ack: bool,
}

impl NewReno {
    pub(super) fn new(ep: Episode) -> NewReno {
        NewReno {
            ep,
            first_partial_ack: false,
        }
    }
}

/// Reno's and NewReno's duplicate ACK: inflate in recovery, else fast
/// retransmit on the DupThresh-th.
fn fast_retransmit_or_inflate(ep: &mut Episode, c: &mut Conn) -> DupAck {
    ep.dupacks += 1;
    if ep.in_recovery {
        // Window inflation for each segment that left.
        c.win.cwnd += c.mss as f64;
        DupAck::Wait
    } else if ep.dupacks == ep.dupthresh && ep.may_start(c) {
        ep.enter(c, true);
        c.win.cwnd = c.win.ssthresh + (ep.dupthresh * c.mss) as f64;
        DupAck::FastRetransmit
    } else {
        DupAck::Wait
    }
}

/// After a timeout: start over from the first unacknowledged segment.
fn go_back(ep: &mut Episode, c: &Conn) -> AfterTimeout {
    ep.on_timeout(c.snd_max);
    AfterTimeout::GoBackN
}

impl LossRecovery for Tahoe {
    fn episode(&self) -> &Episode {
        &self.ep
    }

    fn on_new_ack(&mut self, _c: &mut Conn, _acked: u64) -> NewAck {
        self.ep.dupacks = 0;
        // Tahoe never enters fast recovery.
        debug_assert!(!self.ep.in_recovery);
        NewAck::Grow
    }

    fn on_dupack(&mut self, c: &mut Conn) -> DupAck {
        let ep = &mut self.ep;
        ep.dupacks += 1;
        if ep.dupacks == ep.dupthresh && ep.may_start(c) {
            ep.enter(c, false);
            // Slow start from one segment, resending from the hole.
            c.win.cwnd = c.cc.loss_window(c.win, c.mss);
            DupAck::GoBackN
        } else {
            DupAck::Wait
        }
    }

    fn on_timeout(&mut self, c: &mut Conn, _now: SimTime) -> AfterTimeout {
        go_back(&mut self.ep, c)
    }
}

impl LossRecovery for Reno {
    fn episode(&self) -> &Episode {
        &self.ep
    }

    fn on_new_ack(&mut self, c: &mut Conn, _acked: u64) -> NewAck {
        self.ep.dupacks = 0;
        if !self.ep.in_recovery {
            return NewAck::Grow;
        }
        self.ep.in_recovery = false;
        c.win.cwnd = c.win.ssthresh;
        NewAck::Recovering {
            resend_head: false,
            restart_timer: true,
        }
    }

    fn on_dupack(&mut self, c: &mut Conn) -> DupAck {
        fast_retransmit_or_inflate(&mut self.ep, c)
    }

    fn on_timeout(&mut self, c: &mut Conn, _now: SimTime) -> AfterTimeout {
        go_back(&mut self.ep, c)
    }
}

impl LossRecovery for NewReno {
    fn episode(&self) -> &Episode {
        &self.ep
    }

    fn on_new_ack(&mut self, c: &mut Conn, acked: u64) -> NewAck {
        self.ep.dupacks = 0;
        if !self.ep.in_recovery {
            return NewAck::Grow;
        }
        if c.snd_una >= self.ep.recover {
            // Full ACK.
            self.ep.in_recovery = false;
            c.win.cwnd = c.win.ssthresh;
            return NewAck::Recovering {
                resend_head: false,
                restart_timer: true,
            };
        }
        // Partial ACK: resend the next hole, deflate.
        let mss = c.mss as f64;
        c.win.cwnd = (c.win.cwnd - acked as f64).max(mss);
        if acked >= c.mss as u64 {
            c.win.cwnd += mss;
        }
        let restart_timer = self.first_partial_ack;
        self.first_partial_ack = false;
        NewAck::Recovering {
            resend_head: true,
            restart_timer,
        }
    }

    fn on_dupack(&mut self, c: &mut Conn) -> DupAck {
        let d = fast_retransmit_or_inflate(&mut self.ep, c);
        if d == DupAck::FastRetransmit {
            self.first_partial_ack = true;
        }
        d
    }

    fn on_timeout(&mut self, c: &mut Conn, _now: SimTime) -> AfterTimeout {
        go_back(&mut self.ep, c)
    }
}
