//! RACK's detection of lost retransmissions (RFC 8985 section 6.2, as
//! Linux runs it beside RFC 6675's rules: `net/ipv4/tcp_recovery.c`).
//!
//! RFC 6675 deems a segment lost by the SACKed data above it, which says
//! nothing about a retransmission: once resent, a segment that is lost
//! again waits for the retransmission timer. RACK deems a segment lost by
//! time instead: when a segment sent *after* it has been delivered
//! (cumulatively acknowledged or SACKed), it should have been delivered
//! too, give or take a reordering window. satqm's links never reorder a
//! flow's packets, and Linux uses no reordering window in recovery until it
//! has seen reordering, so the rule here is: a retransmission sent before
//! the most recently sent delivered segment is lost.
//!
//! An ACK that may be for the original transmission of a retransmitted
//! segment (it arrives sooner than the smallest RTT after the resend) does
//! not count as delivery of the resend (the RFC's Karn-like rule).
//!
//! The retransmissions in flight are kept in the order they were sent, so
//! each ACK looks only at the oldest ones: the check stops at the first
//! that was sent after the newest delivery.

use std::collections::VecDeque;

use crate::time::SimTime;
use crate::transport::tcp::segments::Segments;

#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// RACK.xmit_ts: when the most recently sent delivered segment was
    /// (last) sent.
    xmit_ts: SimTime,
    /// The smallest RTT seen from a segment sent once.
    min_rtt: Option<SimTime>,
    /// Retransmissions not known to be delivered or lost, oldest first:
    /// (ordinal, when resent).
    resent: VecDeque<(u64, SimTime)>,
}

impl Rack {
    /// A segment last sent at `sent_at` was delivered at `now`
    /// (RACK_update).
    pub fn delivered(&mut self, sent_at: SimTime, ever_retx: bool, now: SimTime) {
        let rtt = now - sent_at;
        if ever_retx {
            if self.min_rtt.is_some_and(|m| rtt < m) {
                return; // likely the original's ACK
            }
        } else if self.min_rtt.is_none_or(|m| rtt < m) {
            self.min_rtt = Some(rtt);
        }
        if sent_at > self.xmit_ts {
            self.xmit_ts = sent_at;
        }
    }

    /// The segment with ordinal `ordinal` was resent at `now`.
    pub fn resent(&mut self, ordinal: u64, now: SimTime) {
        self.resent.push_back((ordinal, now));
    }

    /// Deem lost every retransmission sent before the newest delivery:
    /// `mark(i)` for each, with `i` its index in `segs`.
    pub fn detect(&mut self, segs: &Segments, mut mark: impl FnMut(usize)) {
        let first = segs.first_ordinal();
        while let Some(&(ord, at)) = self.resent.front() {
            if ord >= first {
                let i = (ord - first) as usize;
                let s = segs.get(i);
                // Still this resend, in flight and not SACKed?
                if s.rtx() && !s.sacked() && s.sent_at == at {
                    if at >= self.xmit_ts {
                        return;
                    }
                    mark(i);
                }
            }
            self.resent.pop_front();
        }
    }
}
