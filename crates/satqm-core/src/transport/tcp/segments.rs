//! The retransmission queue: one record per segment in flight, covering
//! `[snd_una, snd_max)` in sequence order.
//!
//! The sender times segments from it (RTT samples under Karn's rule, the
//! wait in a backpressured host) and looks segments up to resend them. Each
//! record also carries the three per-segment bits of the RFC 6675
//! scoreboard (`sacked`, `lost`, `rtx`): they ride in the segment's own
//! record, as Linux keeps them in each queued buffer's control block, so
//! that a connection keeps one queue rather than two in step. Only
//! [`recovery::Sack`](super::recovery::Sack) decides them; it owns the
//! scoreboard's logic.
//!
//! The bits change only through this queue's methods, which keep two
//! tallies beside them: the bytes SACKed and the bytes deemed lost and
//! neither resent nor SACKed since. RFC 6675's `pipe` is FlightSize minus
//! the two, so the sender reads it without walking the queue. Each segment
//! also has an ordinal (its place counted from the connection's first
//! segment), which stays fixed as the queue's front is acknowledged away,
//! so that a recovery can keep its place in the queue between ACKs.

use std::collections::VecDeque;

use crate::time::SimTime;

/// One segment in flight.
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub start: u64,
    pub len: u32,
    /// Last (re)transmission time.
    pub sent_at: SimTime,
    /// Ever retransmitted: no RTT sample from it (Karn's rule).
    pub ever_retx: bool,
    /// SACKed by the receiver.
    sacked: bool,
    /// Deemed lost (RFC 6675 IsLost, or after a timeout).
    lost: bool,
    /// Retransmitted since it was last deemed lost.
    rtx: bool,
}

impl Seg {
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }

    /// SACKed by the receiver.
    #[inline]
    pub fn sacked(&self) -> bool {
        self.sacked
    }

    /// Deemed lost (RFC 6675 IsLost, or after a timeout).
    #[inline]
    pub fn lost(&self) -> bool {
        self.lost
    }

    /// Retransmitted since it was last deemed lost.
    #[inline]
    pub fn rtx(&self) -> bool {
        self.rtx
    }

    /// Deemed lost and neither resent nor SACKed since: to be resent
    /// (RFC 6675 NextSeg rule 1), and out of the `pipe`.
    #[inline]
    pub fn to_resend(&self) -> bool {
        self.lost && !self.rtx && !self.sacked
    }
}

/// What a cumulative ACK retired from the queue.
#[derive(Clone, Copy, Debug)]
pub struct Retired {
    /// The newest segment it covered whole, if any.
    pub newest: Option<Seg>,
    /// When the oldest segment it covered whole was (last) sent.
    pub oldest_sent: Option<SimTime>,
    /// Some covered segment was ever retransmitted.
    pub covers_retx: bool,
    /// The covered segment not SACKed before that was sent last, if any:
    /// when, where it ended, and whether it was a retransmission.
    pub latest: Option<(SimTime, u64, bool)>,
    /// The same of the highest covered segment not SACKed before.
    pub last: Option<(SimTime, u64, bool)>,
}

/// A segment an ACK delivered, for the delivery-rate sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub ordinal: u64,
    pub sent_at: SimTime,
    pub end: u64,
    pub ever_retx: bool,
}

impl Delivered {
    /// Sent after `o` (Linux's `tcp_skb_sent_after()`: later, or at the
    /// same time and further in sequence).
    #[inline]
    fn after(&self, o: &Delivered) -> bool {
        self.sent_at > o.sent_at || (self.sent_at == o.sent_at && self.end > o.end)
    }
}

/// The segments in flight, oldest first.
#[derive(Clone, Debug, Default)]
pub struct Segments {
    q: VecDeque<Seg>,
    /// The ordinal of the front segment: how many were retired before it.
    first: u64,
    /// Bytes of the SACKed segments.
    sacked_bytes: u64,
    /// Bytes of the segments to resend ([`Seg::to_resend`]).
    lost_bytes: u64,
    /// Bytes of the segments deemed lost and not SACKed, resent or not
    /// (Linux's `lost_out`).
    lost_out: u64,
    /// Bytes ever deemed lost (each marking counts, Linux's `tp->lost`).
    lost_total: u64,
    /// Track the segments each ACK delivers, for the delivery rate.
    rate_track: bool,
    /// With `rate_track`: the segment sent last among those SACKed since
    /// the last [`take_pick`](Self::take_pick), or acknowledged without
    /// having been SACKed before (a SACKed one was delivered then).
    pick: Option<Delivered>,
    /// With `rate_track`: the segments newly deemed lost, by ordinal and
    /// length, until [`drain_lost`](Self::drain_lost).
    lost_log: Vec<(u64, u32)>,
}

impl Segments {
    /// Track the segments each ACK delivers ([`take_pick`](Self::take_pick)).
    pub fn track_delivery(&mut self) {
        self.rate_track = true;
    }

    /// A new segment `[start, start + len)` sent at `now`, after all others.
    pub fn push(&mut self, start: u64, len: u32, now: SimTime) {
        self.q.push_back(Seg {
            start,
            len,
            sent_at: now,
            ever_retx: false,
            sacked: false,
            lost: false,
            rtx: false,
        });
    }

    /// With [`track_delivery`](Self::track_delivery): note the segments
    /// the cumulative ACK `ack` delivers (those below it not SACKed
    /// before), before [`retire`](Self::retire) drops them.
    pub fn note_acked(&mut self, ack: u64) {
        for (i, s) in self.q.iter().enumerate() {
            if s.end() > ack {
                break;
            }
            if s.sacked {
                continue;
            }
            let d = Delivered {
                ordinal: self.first + i as u64,
                sent_at: s.sent_at,
                end: s.end(),
                ever_retx: s.ever_retx,
            };
            if self.pick.is_none_or(|p| d.after(&p)) {
                self.pick = Some(d);
            }
        }
    }

    /// Bytes below `ack` already SACKed (delivered before this ACK).
    pub fn sacked_below(&self, ack: u64) -> u64 {
        if self.sacked_bytes == 0 {
            return 0;
        }
        let mut n = 0;
        for s in self.q.iter() {
            if s.start >= ack {
                break;
            }
            if s.sacked {
                n += s.end().min(ack) - s.start;
            }
        }
        n
    }

    /// Drop the segments below the cumulative ACK `ack`, trimming one that
    /// it covers in part; `latest`: also find the one sent last (RACK).
    #[inline]
    pub fn retire(&mut self, ack: u64, latest: bool) -> Retired {
        let track = latest;
        let mut newest = None;
        let mut covers_retx = false;
        let mut latest: Option<(SimTime, u64, bool)> = None;
        let mut last = None;
        let oldest_sent = self.q.front().filter(|s| s.end() <= ack).map(|s| s.sent_at);
        while let Some(s) = self.q.front_mut() {
            if s.end() <= ack {
                covers_retx |= s.ever_retx;
                if track && !s.sacked {
                    let d = (s.sent_at, s.end(), s.ever_retx);
                    if latest.is_none_or(|l| s.sent_at >= l.0) {
                        latest = Some(d);
                    }
                    last = Some(d);
                }
                if self.sacked_bytes | self.lost_out != 0 {
                    let (sacked, lost, to_resend, len) =
                        (s.sacked, s.lost, s.to_resend(), s.len as u64);
                    self.untally(sacked, lost, to_resend, len);
                }
                newest = self.q.pop_front();
                self.first += 1;
            } else {
                if s.start < ack {
                    let cut = ack - s.start;
                    let (sacked, lost, to_resend) = (s.sacked, s.lost, s.to_resend());
                    s.len -= cut as u32;
                    s.start = ack;
                    self.untally(sacked, lost, to_resend, cut);
                }
                break;
            }
        }
        Retired {
            newest,
            oldest_sent,
            covers_retx,
            latest,
            last,
        }
    }

    /// The segment sent last among those delivered (SACKed, or
    /// acknowledged without a SACK before) since the last call (with
    /// [`track_delivery`](Self::track_delivery)).
    #[inline]
    pub fn take_pick(&mut self) -> Option<Delivered> {
        self.pick.take()
    }

    /// The segments deemed lost since the last call (with
    /// [`track_delivery`](Self::track_delivery)), by ordinal and length.
    pub fn drain_lost(&mut self) -> std::vec::Drain<'_, (u64, u32)> {
        self.lost_log.drain(..)
    }

    /// Bytes ever deemed lost, each marking counted.
    #[inline]
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }

    /// Take `len` bytes of a segment with these bits off the tallies.
    #[inline]
    fn untally(&mut self, sacked: bool, lost: bool, to_resend: bool, len: u64) {
        if sacked {
            self.sacked_bytes -= len;
        } else if lost {
            self.lost_out -= len;
        }
        if to_resend {
            self.lost_bytes -= len;
        }
    }

    /// The index of the segment starting at `seq`.
    pub fn index(&self, seq: u64) -> Option<usize> {
        self.q.binary_search_by(|s| s.start.cmp(&seq)).ok()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &Seg {
        &self.q[i]
    }

    /// Time segment `i` from `now` (it has only now left its host).
    #[inline]
    pub fn retime(&mut self, i: usize, now: SimTime) {
        self.q[i].sent_at = now;
    }

    /// Record that segment `i` is resent at `now`; returns its range.
    #[inline]
    pub fn resend(&mut self, i: usize, now: SimTime) -> (u64, u32) {
        let s = &mut self.q[i];
        if s.to_resend() {
            self.lost_bytes -= s.len as u64;
        }
        s.sent_at = now;
        s.ever_retx = true;
        s.rtx = true;
        (s.start, s.len)
    }

    #[inline]
    pub fn front(&self) -> Option<&Seg> {
        self.q.front()
    }

    /// Mark segment `i` SACKed; false if it already was.
    #[inline]
    pub fn sack(&mut self, i: usize) -> bool {
        let s = &mut self.q[i];
        if s.sacked {
            return false;
        }
        let len = s.len as u64;
        if s.to_resend() {
            self.lost_bytes -= len;
        }
        if s.lost {
            self.lost_out -= len;
        }
        s.sacked = true;
        self.sacked_bytes += len;
        if self.rate_track {
            let d = Delivered {
                ordinal: self.first + i as u64,
                sent_at: s.sent_at,
                end: s.end(),
                ever_retx: s.ever_retx,
            };
            if self.pick.is_none_or(|p| d.after(&p)) {
                self.pick = Some(d);
            }
        }
        true
    }

    /// Deem segment `i` lost (again): it is to be resent unless SACKed.
    #[inline]
    pub fn mark_lost(&mut self, i: usize) {
        let s = &mut self.q[i];
        if !s.lost && !s.sacked {
            self.lost_out += s.len as u64;
        }
        if !s.to_resend() && !s.sacked {
            self.lost_bytes += s.len as u64;
            self.lost_total += s.len as u64;
            if self.rate_track {
                self.lost_log.push((self.first + i as u64, s.len));
            }
        }
        s.lost = true;
        s.rtx = false;
    }

    /// No segment is deemed lost any more (those resent stay resent).
    pub fn clear_lost(&mut self) {
        for s in self.q.iter_mut() {
            s.lost = false;
        }
        self.lost_bytes = 0;
        self.lost_out = 0;
    }

    /// Bytes of the SACKed segments.
    #[inline]
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }

    /// Bytes of the segments deemed lost and neither resent nor SACKed.
    #[inline]
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    /// Bytes of the segments deemed lost and not SACKed, whether resent
    /// or not (Linux's `lost_out`: a resent segment stays lost until it is
    /// acknowledged or SACKed).
    #[inline]
    pub fn lost_out(&self) -> u64 {
        self.lost_out
    }

    /// The ordinal of the front segment (of segment 0).
    #[inline]
    pub fn first_ordinal(&self) -> u64 {
        self.first
    }

    /// One past the ordinal of the newest segment.
    #[inline]
    pub fn end_ordinal(&self) -> u64 {
        self.first + self.q.len() as u64
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    #[inline]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Seg> {
        self.q.iter()
    }

    /// The index of the first segment starting at `seq` or later.
    #[inline]
    pub fn first_from(&self, seq: u64) -> usize {
        self.q.partition_point(|x| x.start < seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The tallies, counted again from the segments.
    fn recount(s: &Segments) -> (u64, u64, u64) {
        let (mut sacked, mut to_resend, mut lost_out) = (0, 0, 0);
        for x in s.iter() {
            let len = x.len as u64;
            if x.sacked() {
                sacked += len;
            }
            if x.to_resend() {
                to_resend += len;
            }
            if x.lost() && !x.sacked() {
                lost_out += len;
            }
        }
        (sacked, to_resend, lost_out)
    }

    #[test]
    fn the_tallies_follow_every_change_of_the_segments() {
        // Random sends, SACKs, losses, resends, cumulative ACKs (whole and
        // partial) and forgotten losses: the SACKed, to-resend and
        // lost-out tallies always equal a recount.
        let mut rng = Rng::stream(7, "segments", 0);
        let mut s = Segments::default();
        let (mut next, mut una) = (0u64, 0u64);
        for step in 0..20_000 {
            match rng.uniform_u64(0, 6) {
                0 | 1 => {
                    s.push(next, 1000, SimTime::from_ms(step));
                    next += 1000;
                }
                2 if !s.is_empty() => {
                    let i = rng.uniform_u64(0, s.len() as u64 - 1) as usize;
                    s.sack(i);
                }
                3 if !s.is_empty() => {
                    let i = rng.uniform_u64(0, s.len() as u64 - 1) as usize;
                    s.mark_lost(i);
                }
                4 if !s.is_empty() => {
                    let i = rng.uniform_u64(0, s.len() as u64 - 1) as usize;
                    s.resend(i, SimTime::from_ms(step));
                }
                5 if una < next => {
                    // Up to three segments and a half: cuts one in part.
                    una = (una + rng.uniform_u64(1, 3500)).min(next);
                    s.retire(una, rng.chance(0.5));
                }
                6 if rng.chance(0.05) => s.clear_lost(),
                _ => {}
            }
            assert_eq!(
                recount(&s),
                (s.sacked_bytes(), s.lost_bytes(), s.lost_out()),
                "step {step}"
            );
        }
    }
}
