//! SACK-based loss recovery (RFC 6675).
//!
//! Owns the scoreboard: which segments in flight the receiver has SACKed,
//! which are deemed lost and which of those were resent since. The three
//! bits sit in each segment's record
//! ([`Seg`](crate::transport::tcp::segments::Seg)); apart from a resend
//! setting `rtx`, this file alone sets them.
//!
//! * `IsLost`: a segment with more than `(DupThresh - 1) * SMSS` SACKed
//!   bytes above it is lost (section 4).
//! * Recovery starts on the DupThresh-th duplicate ACK (an ACK that SACKs
//!   new data, section 2, whether or not it also moves the cumulative
//!   ACK; a cumulative ACK resets the count first, section 5) or when the
//!   first unacknowledged segment is deemed lost (section 5 steps
//!   4.1-4.4): the window is set to the new ssthresh and that segment goes
//!   out at once, whatever the pipe, so a long path does not wait for the
//!   pipe to drain below cwnd (and time out meanwhile). It ends when the
//!   cumulative ACK reaches `recover`.
//! * Sending is governed by `pipe` (bytes thought in the network: neither
//!   SACKed nor lost, or lost and resent) and `NextSeg()` rule 1 (the first
//!   lost segment not yet resent) ahead of new data (rule 2).
//! * After a timeout, every segment not SACKed is deemed lost (section 5.1).
//!
//! Each of the three costs O(1) per segment sent (amortized), whatever the window,
//! so that an episode costs time linear in the window:
//!
//! * `pipe` is FlightSize less the bytes SACKed and the bytes lost and not
//!   resent, two tallies the segment queue keeps as the bits change.
//! * IsLost holds below an edge that only moves up: the SACKed bytes above
//!   a segment only grow while it is in flight (SACKs are never taken
//!   back), so once a segment has more than the threshold above it, so do
//!   all below it, for good. The edge and the SACKed bytes at and above it
//!   are kept; new SACKs move the edge up over the segments that newly
//!   qualify, and only those are visited.
//! * NextSeg's first lost segment not yet resent is found from a cursor
//!   below which there is none. Resends and SACKs only remove such
//!   segments, so the cursor moves up past each segment once; a segment
//!   newly deemed lost below it moves it back down, which happens for the
//!   segments at the edge (above every earlier one) and after a timeout.

use super::rack::Rack;
use super::{AfterTimeout, Conn, DupAck, Episode, LossRecovery, NewAck};
use crate::time::SimTime;
use crate::transport::tcp::segments::Segments;

#[derive(Clone, Debug)]
pub struct Sack {
    ep: Episode,
    /// `(DupThresh - 1) * SMSS`, bytes: IsLost's threshold.
    lost_limit: u64,
    /// IsLost's edge, an ordinal in the segment queue: every segment below
    /// it has more than `lost_limit` SACKed bytes above it and is SACKed or
    /// deemed lost; the segment at the edge has not (yet).
    edge: u64,
    /// SACKed bytes of the segments at and above `edge`.
    sacked_above: u64,
    /// An ordinal below which no segment is to be resent.
    cursor: u64,
    /// RACK's loss detection, if enabled.
    rack: Option<Box<Rack>>,
    /// When the oldest segment the last SACK blocks newly SACKed was sent,
    /// if it was sent once (an RTT sample Linux takes).
    sack_timing: Option<SimTime>,
    /// The end of the highest segment SACKed (`tcp_highest_sack_seq()`),
    /// while any is.
    highest_sacked: u64,
}

impl Sack {
    pub(super) fn new(ep: Episode, mss: u32, rack: bool) -> Sack {
        Sack {
            lost_limit: (ep.dupthresh.saturating_sub(1) as u64) * mss as u64,
            edge: 0,
            sacked_above: 0,
            cursor: 0,
            rack: rack.then(Box::default),
            sack_timing: None,
            highest_sacked: 0,
            ep,
        }
    }

    pub(super) fn on_delivered(
        &mut self,
        sent_at: SimTime,
        end: u64,
        ever_retx: bool,
        now: SimTime,
    ) {
        if let Some(r) = &mut self.rack {
            r.delivered(sent_at, end, ever_retx, now);
        }
    }

    pub(super) fn on_resent(&mut self, segs: &Segments, i: usize, now: SimTime) {
        if let Some(r) = &mut self.rack {
            r.resent(segs.first_ordinal() + i as u64, now);
        }
    }

    pub(super) fn take_sack_timing(&mut self) -> Option<SimTime> {
        self.sack_timing.take()
    }

    /// Reordering was seen (with RACK).
    fn reord_seen(&self) -> bool {
        self.rack.as_ref().is_some_and(|r| r.reord_seen)
    }

    /// The highest SACKed byte, or `snd_una` with nothing SACKed.
    pub(super) fn highest_sacked(&self, segs: &Segments, snd_una: u64) -> u64 {
        if segs.sacked_bytes() > 0 {
            self.highest_sacked.max(snd_una)
        } else {
            snd_una
        }
    }

    /// Before a cumulative ACK up to `ack` retires segments: one never
    /// resent nor SACKed below `prior_fack`, the highest byte SACKed before
    /// this ACK, was delivered after data sent later, i.e. reordered
    /// (`tcp_clean_rtx_queue()`, `tcp_check_sack_reordering()`).
    pub(super) fn before_cum_ack(
        &mut self,
        segs: &Segments,
        snd_una: u64,
        ack: u64,
        prior_fack: u64,
    ) {
        if self.rack.is_none() || self.reord_seen() || prior_fack <= snd_una {
            return;
        }
        let reordered = segs
            .iter()
            .take_while(|s| s.end() <= ack)
            .any(|s| !s.sacked() && !s.ever_retx && s.start < prior_fack);
        if reordered {
            self.note_reordering();
        }
    }

    pub(super) fn note_reordering(&mut self) {
        if let Some(r) = &mut self.rack {
            r.reord_seen = true;
        }
    }

    pub(super) fn on_dsack(&mut self, probe: bool) {
        if let Some(r) = &mut self.rack {
            r.on_dsack(probe);
        }
    }

    pub(super) fn update_reo_wnd(&mut self, now: SimTime) {
        if let Some(r) = &mut self.rack {
            r.update_reo_wnd(now);
        }
    }

    pub(super) fn on_recovery_end(&mut self, undone: bool) {
        if let Some(r) = &mut self.rack {
            r.on_recovery_end(undone);
        }
    }

    pub(super) fn reorder_deadline(&self) -> Option<SimTime> {
        self.rack.as_ref().and_then(|r| r.deadline)
    }

    /// RACK after an ACK or at its reordering timer: deem lost what it
    /// finds lost; `Some` if that starts a recovery (the window is cut),
    /// holding whether the first unacknowledged segment is to be resent.
    pub(super) fn rack_detect(
        &mut self,
        c: &mut Conn,
        now: SimTime,
        srtt: Option<SimTime>,
    ) -> Option<bool> {
        let r = self.rack.as_mut()?;
        let sacked_segments = c.segs.sacked_bytes() / c.mss as u64;
        // RACK's window ignores this once reordering was seen.
        let eager = self.ep.in_recovery || sacked_segments >= self.ep.dupthresh as u64;
        let reo_wnd = r.reo_wnd(eager, srtt);
        let mut lost = Vec::new();
        r.detect(c.segs, now, reo_wnd, |i| lost.push(i));
        // The timer for the last segment still waiting.
        r.deadline = r
            .deadline
            .map(|due| c.clock.fires(now, due.saturating_sub(now) + c.reo_min));
        for i in lost {
            self.mark_lost(c.segs, i);
        }
        // As Linux's tcp_time_to_recover(): a segment deemed lost starts a
        // recovery, resent or not (`lost_out`): an ACK that ends one while
        // segments sent after it began are still deemed lost starts the
        // next at once, so a congestion control that sets cwnd itself sees
        // one recovery, not an exit and an entry.
        if self.ep.in_recovery || c.segs.lost_out() == 0 || !self.ep.may_start(c) {
            return None;
        }
        self.ep.enter(c, true);
        c.win.cwnd = c.win.ssthresh;
        Some(c.segs.front().is_some_and(|s| s.to_resend()))
    }

    /// See [`AnyRecovery::end_episode`](super::AnyRecovery::end_episode).
    pub(super) fn end_episode(&mut self, segs: &mut Segments, snd_una: u64, forget_lost: bool) {
        self.ep.in_recovery = false;
        self.ep.recover = self.ep.recover.min(snd_una);
        if forget_lost {
            segs.clear_lost();
            // IsLost's edge, the resend cursor and RACK's scan start again
            // from the front: nothing below them is lost any more.
            let first = segs.first_ordinal();
            self.edge = first;
            self.sacked_above = segs.sacked_bytes();
            self.cursor = first;
            if let Some(r) = &mut self.rack {
                r.rescan(first);
            }
        }
    }

    /// Deem segment `i` lost, moving the cursor down to it.
    fn mark_lost(&mut self, segs: &mut Segments, i: usize) {
        segs.mark_lost(i);
        self.cursor = self.cursor.min(segs.first_ordinal() + i as u64);
    }

    /// RFC 6675 IsLost: move the edge up over the segments that now have
    /// more than `lost_limit` SACKed bytes above them, deeming those not
    /// SACKed lost.
    fn advance_edge(&mut self, segs: &mut Segments) {
        // Once reordering was seen, only RACK deems segments lost (Linux
        // with RACK has no DupThresh rule, `tcp_time_to_recover()`; before,
        // RACK's zero window past DupThresh SACKed segments does what this
        // rule does).
        let mark = !self.reord_seen();
        let first = segs.first_ordinal();
        let end = segs.end_ordinal();
        while self.edge < end {
            let i = (self.edge - first) as usize;
            let s = segs.get(i);
            let own = if s.sacked() { s.len as u64 } else { 0 };
            if self.sacked_above - own <= self.lost_limit {
                break;
            }
            if mark && !s.sacked() && !s.lost() {
                self.mark_lost(segs, i);
            }
            self.sacked_above -= own;
            self.edge += 1;
        }
    }

    /// After the front of the queue was acknowledged away: an edge below
    /// the new front moves up to it (the front has no more SACKed bytes
    /// above it than the segment at the old edge had).
    fn follow_front(&mut self, segs: &Segments) {
        let first = segs.first_ordinal();
        if self.edge <= first {
            self.edge = first;
            self.sacked_above = segs.sacked_bytes();
        }
    }
}

impl LossRecovery for Sack {
    fn episode(&self) -> &Episode {
        &self.ep
    }

    fn on_sack_blocks(
        &mut self,
        segs: &mut Segments,
        blocks: &[(u64, u64)],
        snd_una: u64,
        now: SimTime,
    ) {
        let mut changed = false;
        let first = segs.first_ordinal();
        let prior_highest = self.highest_sacked(segs, snd_una);
        let mut highest = prior_highest;
        let mut reordered = false;
        for &(s, e) in blocks {
            if e <= snd_una {
                continue;
            }
            for i in segs.first_from(s)..segs.len() {
                let seg = segs.get(i);
                if seg.end() > e {
                    break;
                }
                let len = seg.len as u64;
                let (sent_at, seg_end, ever_retx) = (seg.sent_at, seg.end(), seg.ever_retx);
                if segs.sack(i) {
                    changed = true;
                    // Delivered below data SACKed before, never resent:
                    // reordering (tcp_sacktag_one(), which walks the blocks
                    // in sequence order, so that data SACKed by this ACK
                    // below a segment does not count).
                    reordered |= !ever_retx && seg_end - len < prior_highest;
                    highest = highest.max(seg_end);
                    if !ever_retx && self.sack_timing.is_none_or(|t| sent_at < t) {
                        self.sack_timing = Some(sent_at);
                    }
                    if let Some(r) = &mut self.rack {
                        r.delivered(sent_at, seg_end, ever_retx, now);
                    }
                    if first + i as u64 >= self.edge {
                        self.sacked_above += len;
                    }
                }
            }
        }
        self.highest_sacked = highest;
        if reordered {
            self.note_reordering();
        }
        if changed {
            self.advance_edge(segs);
        }
    }

    fn on_new_ack(&mut self, c: &mut Conn, _acked: u64) -> NewAck {
        // RFC 6675 section 5: a cumulative ACK resets the count; if it also
        // SACKs new data it is a duplicate ACK as well, which the sender
        // counts next (one).
        self.ep.dupacks = 0;
        self.follow_front(c.segs);
        if !self.ep.in_recovery {
            return NewAck::Grow;
        }
        if c.snd_una >= self.ep.recover {
            self.ep.in_recovery = false;
        }
        NewAck::Recovering {
            resend_head: false,
            restart_timer: true,
        }
    }

    fn on_dupack(&mut self, c: &mut Conn) -> DupAck {
        // RFC 6675 section 2: under SACK an ACK is a duplicate only if it
        // SACKs data not SACKed before (so do ns-3, `isDupack`, and Linux,
        // which counts SACKed segments); one repeating what the sender
        // knows, as a resent segment's original arriving late gives, is not.
        if !c.newly_sacked {
            return DupAck::Wait;
        }
        let reord_seen = self.reord_seen();
        let ep = &mut self.ep;
        ep.dupacks += 1;
        let lost_head = c.segs.front().is_some_and(|s| s.lost());
        let by_count = ep.dupacks >= ep.dupthresh && !reord_seen;
        if ep.in_recovery || !(by_count || lost_head) || !ep.may_start(c) {
            return DupAck::Wait;
        }
        ep.enter(c, true);
        c.win.cwnd = c.win.ssthresh;
        match c.segs.front() {
            Some(s) if !s.lost() => self.mark_lost(c.segs, 0),
            // A head resent in the episode that just ended, its resend
            // still in flight: Linux starts the new recovery (lost_out is
            // not zero, tcp_time_to_recover()) but resends only what is
            // lost and not yet resent (tcp_xmit_retransmit_queue()); RACK
            // finds the resend lost if it is.
            Some(s) if self.rack.is_some() && !s.to_resend() => return DupAck::Recovery,
            _ => {}
        }
        DupAck::FastRetransmit
    }

    fn on_timeout(&mut self, c: &mut Conn, now: SimTime) -> AfterTimeout {
        self.ep.on_timeout(c.snd_max);
        // RFC 6675 deems every segment not SACKed lost. RACK (RFC 8985
        // section 6.3, Linux's tcp_timeout_mark_lost()) deems so only the
        // first and those out for RACK.rtt: one sent more recently may
        // still be delivered, and RACK finds it lost later if it is not.
        let recent = self.rack.as_ref().and_then(|r| r.recent_after(now));
        for i in 0..c.segs.len() {
            let s = c.segs.get(i);
            if s.sacked() || (i > 0 && recent.is_some_and(|t| s.sent_at > t)) {
                continue;
            }
            self.mark_lost(c.segs, i);
        }
        if let Some(r) = &mut self.rack {
            r.on_timeout();
        }
        AfterTimeout::Scoreboard
    }

    #[inline]
    fn next_lost(&mut self, segs: &Segments) -> Option<usize> {
        if segs.lost_bytes() == 0 {
            return None;
        }
        // There is one, at or above the cursor: move the cursor up to it.
        let first = segs.first_ordinal();
        let mut i = self.cursor.saturating_sub(first) as usize;
        while !segs.get(i).to_resend() {
            i += 1;
        }
        self.cursor = first + i as u64;
        Some(i)
    }

    #[inline]
    fn pipe(&self, segs: &Segments, snd_una: u64, snd_max: u64) -> u64 {
        snd_max - snd_una - segs.sacked_bytes() - segs.lost_bytes()
    }
}

#[cfg(test)]
#[path = "sack_tests.rs"]
mod tests;
