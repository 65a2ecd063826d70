//! SACK-based loss recovery (RFC 6675).
//!
//! Owns the scoreboard: which segments in flight the receiver has SACKed,
//! which are deemed lost and which of those were resent since. The three
//! bits sit in each segment's record
//! ([`Seg`](crate::transport::tcp::segments::Seg)); apart from a resend
//! setting `rtx`, this file alone sets them. It also keeps whether the
//! scoreboard holds anything at all (`active`: without SACKed or lost
//! segments, `pipe` is FlightSize and nothing need be walked).
//!
//! * `IsLost`: a segment with more than `(DupThresh - 1) * SMSS` SACKed
//!   bytes above it is lost (section 4).
//! * Recovery starts on the DupThresh-th duplicate ACK or when the first
//!   unacknowledged segment is deemed lost (section 5 steps 4.1-4.4): the
//!   window is set to the new ssthresh and that segment goes out at once,
//!   whatever the pipe, so a long path does not wait for the pipe to drain
//!   below cwnd (and time out meanwhile). It ends when the cumulative ACK
//!   reaches `recover`.
//! * Sending is governed by `pipe` (bytes thought in the network: neither
//!   SACKed nor lost, or lost and resent) and `NextSeg()` rule 1 (the first
//!   lost segment not yet resent) ahead of new data (rule 2).
//! * After a timeout, every segment not SACKed is deemed lost (section 5.1).

use super::{AfterTimeout, Conn, DupAck, Episode, LossRecovery, NewAck};
use crate::transport::tcp::segments::Segments;

#[derive(Clone, Debug)]
pub struct Sack {
    ep: Episode,
    /// The scoreboard holds SACKed or lost segments (the slow path).
    active: bool,
    /// `(DupThresh - 1) * SMSS`, bytes: IsLost's threshold.
    lost_limit: u64,
}

impl Sack {
    pub(super) fn new(ep: Episode, mss: u32) -> Sack {
        Sack {
            active: false,
            lost_limit: (ep.dupthresh.saturating_sub(1) as u64) * mss as u64,
            ep,
        }
    }

    /// RFC 6675 IsLost over the whole scoreboard.
    fn mark_lost(&self, segs: &mut Segments) {
        let mut above = 0u64;
        for s in segs.iter_mut().rev() {
            if s.sacked {
                above += s.len as u64;
            } else if above > self.lost_limit && !s.lost {
                s.mark_lost();
            }
        }
    }
}

impl LossRecovery for Sack {
    fn episode(&self) -> &Episode {
        &self.ep
    }

    fn on_sack_blocks(&mut self, segs: &mut Segments, blocks: &[(u64, u64)], snd_una: u64) {
        let mut changed = false;
        for &(s, e) in blocks {
            if e <= snd_una {
                continue;
            }
            for seg in segs.from_seq_mut(s) {
                if seg.end() > e {
                    break;
                }
                if !seg.sacked {
                    seg.sacked = true;
                    changed = true;
                }
            }
        }
        if changed {
            self.active = true;
            self.mark_lost(segs);
        }
    }

    fn on_new_ack(&mut self, c: &mut Conn, _acked: u64) -> NewAck {
        self.ep.dupacks = 0;
        let d = if self.ep.in_recovery {
            if c.snd_una >= self.ep.recover {
                self.ep.in_recovery = false;
            }
            NewAck::Recovering {
                resend_head: false,
                restart_timer: true,
            }
        } else {
            NewAck::Grow
        };
        if self.active && c.segs.iter().all(|s| !s.sacked && !s.lost) {
            self.active = false;
        }
        d
    }

    fn on_dupack(&mut self, c: &mut Conn) -> DupAck {
        let ep = &mut self.ep;
        ep.dupacks += 1;
        let lost_head = c.segs.front().is_some_and(|s| s.lost);
        if ep.in_recovery || !(ep.dupacks >= ep.dupthresh || lost_head) || !ep.may_start(c) {
            return DupAck::Wait;
        }
        ep.enter(c, true);
        c.win.cwnd = c.win.ssthresh;
        if let Some(s) = c.segs.front_mut() {
            if !s.lost {
                s.mark_lost();
            }
        }
        self.active = true;
        DupAck::FastRetransmit
    }

    fn on_timeout(&mut self, c: &mut Conn) -> AfterTimeout {
        self.ep.on_timeout(c.snd_max);
        for s in c.segs.iter_mut().filter(|s| !s.sacked) {
            s.mark_lost();
        }
        self.active = true;
        AfterTimeout::Scoreboard
    }

    #[inline]
    fn next_lost(&self, segs: &Segments) -> Option<usize> {
        if !self.active {
            return None;
        }
        segs.iter().position(|s| s.lost && !s.rtx && !s.sacked)
    }

    #[inline]
    fn pipe(&self, segs: &Segments, snd_una: u64, snd_max: u64) -> u64 {
        if !self.active {
            return snd_max - snd_una;
        }
        scoreboard_pipe(segs)
    }
}

/// RFC 6675 `pipe` from the scoreboard: the segments neither SACKed nor
/// lost, and the lost ones resent.
fn scoreboard_pipe(segs: &Segments) -> u64 {
    segs.iter()
        .filter(|s| !s.sacked && (!s.lost || s.rtx))
        .map(|s| s.len as u64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    /// Five segments of 1000 bytes in flight, DupThresh 3.
    fn five() -> (Sack, Segments) {
        let mut segs = Segments::default();
        for k in 0..5 {
            segs.push(k * 1000, 1000, SimTime::ZERO);
        }
        (Sack::new(Episode::new(3), 1000), segs)
    }

    #[test]
    fn is_lost_needs_more_than_dupthresh_minus_one_segments_above() {
        // Two segments SACKed above: (DupThresh - 1) * SMSS, not more.
        let (mut s, mut segs) = five();
        s.on_sack_blocks(&mut segs, &[(3000, 5000)], 0);
        assert_eq!(s.next_lost(&segs), None);
        assert_eq!(s.pipe(&segs, 0, 5000), 3000);
        // Three above: the two holes below are lost and leave the pipe.
        let (mut s, mut segs) = five();
        s.on_sack_blocks(&mut segs, &[(2000, 5000)], 0);
        assert_eq!(s.next_lost(&segs), Some(0));
        assert_eq!(s.pipe(&segs, 0, 5000), 0);
        // Resent, the first counts in the pipe again and NextSeg moves on.
        segs.resend(0, SimTime::ZERO);
        assert_eq!(s.next_lost(&segs), Some(1));
        assert_eq!(s.pipe(&segs, 0, 5000), 1000);
    }
}
