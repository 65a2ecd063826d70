//! The retransmission queue: one record per segment in flight, covering
//! `[snd_una, snd_max)` in sequence order.
//!
//! The sender times segments from it (RTT samples under Karn's rule, the
//! wait in a backpressured host) and looks segments up to resend them. Each
//! record also carries the three per-segment bits of the RFC 6675
//! scoreboard (`sacked`, `lost`, `rtx`): they ride in the segment's own
//! record, as Linux keeps them in each queued buffer's control block, so
//! that a connection keeps one queue rather than two in step. Only
//! [`recovery::Sack`](super::recovery::Sack) reads them; it owns the
//! scoreboard's logic and state.

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
    pub sacked: bool,
    /// Deemed lost (RFC 6675 IsLost, or after a timeout).
    pub lost: bool,
    /// Retransmitted since it was last deemed lost.
    pub rtx: bool,
}

impl Seg {
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }

    /// Deem the segment lost (again): it is to be resent.
    pub fn mark_lost(&mut self) {
        self.lost = true;
        self.rtx = false;
    }
}

/// What a cumulative ACK retired from the queue.
#[derive(Clone, Copy, Debug)]
pub struct Retired {
    /// The newest segment it covered whole, if any.
    pub newest: Option<Seg>,
    /// Some covered segment was ever retransmitted.
    pub covers_retx: bool,
}

/// The segments in flight, oldest first.
#[derive(Clone, Debug, Default)]
pub struct Segments {
    q: VecDeque<Seg>,
}

impl Segments {
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

    /// Drop the segments below the cumulative ACK `ack`, trimming one that
    /// it covers in part.
    pub fn retire(&mut self, ack: u64) -> Retired {
        let mut newest = None;
        let mut covers_retx = false;
        while let Some(s) = self.q.front_mut() {
            if s.end() <= ack {
                covers_retx |= s.ever_retx;
                newest = self.q.pop_front();
            } else {
                if s.start < ack {
                    s.len -= (ack - s.start) as u32;
                    s.start = ack;
                }
                break;
            }
        }
        Retired {
            newest,
            covers_retx,
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

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut Seg {
        &mut self.q[i]
    }

    /// Record that segment `i` is resent at `now`; returns its range.
    #[inline]
    pub fn resend(&mut self, i: usize, now: SimTime) -> (u64, u32) {
        let s = &mut self.q[i];
        s.sent_at = now;
        s.ever_retx = true;
        s.rtx = true;
        (s.start, s.len)
    }

    #[inline]
    pub fn front(&self) -> Option<&Seg> {
        self.q.front()
    }

    #[inline]
    pub fn front_mut(&mut self) -> Option<&mut Seg> {
        self.q.front_mut()
    }

    #[inline]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Seg> {
        self.q.iter()
    }

    #[inline]
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Seg> {
        self.q.iter_mut()
    }

    /// The segments starting at `seq` or later, oldest first.
    #[inline]
    pub fn from_seq_mut(&mut self, seq: u64) -> impl Iterator<Item = &mut Seg> {
        let first = self.q.partition_point(|x| x.start < seq);
        self.q.range_mut(first..)
    }
}
