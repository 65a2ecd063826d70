//! RACK: loss detection by time (RFC 8985 section 6, as Linux runs it
//! beside RFC 6675's rules: `net/ipv4/tcp_recovery.c`).
//!
//! RFC 6675 deems a segment lost by the SACKed data above it: it needs
//! DupThresh segments delivered after a loss, and says nothing about a
//! retransmission, which, lost again, waits for the retransmission timer.
//! RACK deems a segment lost by time: once a segment sent *after* it has
//! been delivered (cumulatively acknowledged or SACKed), it should have been
//! delivered too, give or take a reordering window. A segment sent before
//! the most recently sent delivered one is lost when it has been out for
//! RACK.rtt plus the reordering window; until then a timer waits for it.
//! RACK.rtt is Linux's: the RTT of the last segment delivered, in the
//! order an ACK's SACK blocks and cumulative acknowledgement are read,
//! whether or not it was the most recently sent (`tcp_rack_advance()`;
//! RFC 8985 takes the most recently sent's). After a path's delay falls,
//! the overtaken segments' ACKs keep it at the old path's RTT, and the
//! rest of them are waited for.
//!
//! The reordering window is Linux's (`tcp_rack_reo_wnd()`,
//! `tcp_rack_update_reo_wnd()`): until the flow has seen reordering, none
//! in recovery or once DupThresh segments are SACKed, else a quarter of the
//! smallest RTT; once it has (a segment never resent delivered below one
//! delivered before it), a quarter of the smallest RTT times a step count,
//! at most SRTT. A D-SACK after reordering was seen (a resend the
//! reordering made unnecessary) adds a step, at most once a round trip;
//! the steps fall back to one after 16 recoveries that D-SACKs did not
//! undo.
//!
//! An ACK that may be for the original transmission of a retransmitted
//! segment (it comes sooner than the smallest RTT after the resend) does
//! not count as delivery of the resend (the RFC's Karn-like rule).
//!
//! Segments are examined in the order they were (last) sent: original
//! transmissions in sequence order from a cursor, retransmissions from a
//! queue kept in the order they were resent. Each scan stops at the first
//! segment not sent before the newest delivery, so an ACK costs O(1)
//! amortized.

use std::collections::VecDeque;

use crate::time::SimTime;
use crate::transport::tcp::segments::Segments;

#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent delivered
    /// segment (`None` before any delivery).
    newest: Option<(SimTime, u64)>,
    /// RACK.rtt as Linux keeps it: the RTT of the last delivery processed
    /// (`tcp_rack_advance()` sets it for every segment SACKed or
    /// cumulatively acknowledged, in sequence order, whether or not it was
    /// the most recently sent; RFC 8985 takes the most recently sent's).
    rtt: SimTime,
    /// The smallest RTT seen from a segment sent once.
    min_rtt: Option<SimTime>,
    /// Retransmissions not known to be delivered or lost, oldest first:
    /// (ordinal, when resent).
    resent: VecDeque<(u64, SimTime)>,
    /// An ordinal below which no original transmission is still a
    /// candidate (delivered, deemed lost or resent).
    originals: u64,
    /// The reordering timer: when the last segment waiting out the window
    /// is due.
    pub deadline: Option<SimTime>,
    /// Reordering was seen (`reord_seen`).
    pub reord_seen: bool,
    /// The window in quarters of the smallest RTT (`reo_wnd_steps`).
    steps: u32,
    /// Recoveries left before the steps fall back to one
    /// (`reo_wnd_persist`).
    persist: u32,
    /// A D-SACK since the last step (`rack.dsack_seen`).
    dsack_seen: bool,
    /// When the last step was added.
    stepped_at: Option<SimTime>,
    /// When the most recently sent segment the ACK being read delivered
    /// was sent (its rate sample's `prior_delivered`, as a time).
    ack_newest: Option<SimTime>,
}

/// `TCP_RACK_RECOVERY_THRESH`.
const RECOVERY_THRESH: u32 = 16;

/// Sent after: later, or at the same time and higher in sequence.
fn sent_after(t1: SimTime, end1: u64, t2: SimTime, end2: u64) -> bool {
    t1 > t2 || (t1 == t2 && end1 > end2)
}

impl Rack {
    /// A segment ending at `end`, last sent at `sent_at`, was delivered at
    /// `now` (RACK_update).
    pub fn delivered(&mut self, sent_at: SimTime, end: u64, ever_retx: bool, now: SimTime) {
        self.ack_newest = Some(self.ack_newest.map_or(sent_at, |t| t.max(sent_at)));
        let rtt = now - sent_at;
        if ever_retx {
            if self.min_rtt.is_some_and(|m| rtt < m) {
                return; // likely the original's ACK
            }
        } else if self.min_rtt.is_none_or(|m| rtt < m) {
            self.min_rtt = Some(rtt);
        }
        self.rtt = rtt;
        if self
            .newest
            .is_none_or(|(t, e)| sent_after(sent_at, end, t, e))
        {
            self.newest = Some((sent_at, end));
        }
    }

    /// The segment with ordinal `ordinal` was resent at `now`.
    pub fn resent(&mut self, ordinal: u64, now: SimTime) {
        self.resent.push_back((ordinal, now));
    }

    /// Linux's reordering window: none if `eager` and no reordering was
    /// seen, else a quarter of the smallest RTT per step, at most `srtt`.
    pub fn reo_wnd(&self, eager: bool, srtt: Option<SimTime>) -> SimTime {
        match (eager && !self.reord_seen, self.min_rtt) {
            (false, Some(m)) => {
                let w = SimTime(m.ns() / 4 * u64::from(self.steps.max(1)));
                srtt.map_or(w, |s| w.min(s))
            }
            _ => SimTime::ZERO,
        }
    }

    /// A D-SACK arrived (`tcp_dsack_seen()`); `probe`: it reports a tail
    /// loss probe's resend, which says nothing about reordering.
    pub fn on_dsack(&mut self, probe: bool) {
        if self.reord_seen && !probe {
            self.dsack_seen = true;
        }
    }

    /// After each ACK (`tcp_rack_update_reo_wnd()`): a D-SACK adds a step
    /// unless the segment sent last among those this ACK delivered was
    /// sent before the last step (less than a round trip ago); an ACK that
    /// delivered nothing leaves a D-SACK pending. Without one, the steps
    /// fall back to one once the recoveries it persists for are spent.
    pub fn update_reo_wnd(&mut self, now: SimTime) {
        let Some(newest_sent) = self.ack_newest.take() else {
            return;
        };
        if self.stepped_at.is_some_and(|t| newest_sent < t) {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.steps = (self.steps.max(1) + 1).min(255);
            self.dsack_seen = false;
            self.stepped_at = Some(now);
            self.persist = RECOVERY_THRESH;
        } else if self.persist == 0 {
            self.steps = 1;
        }
    }

    /// A recovery ended: undone by D-SACKs (the window persists one
    /// recovery more, `tcp_try_undo_dsack()`) or not (one fewer,
    /// `tcp_try_undo_recovery()`).
    pub fn on_recovery_end(&mut self, undone: bool) {
        self.persist = if undone {
            (self.persist + 1).min(RECOVERY_THRESH)
        } else {
            self.persist.saturating_sub(1)
        };
    }

    /// Deem lost (`mark(i)`, `i` its index in `segs`) every segment sent
    /// before the newest delivery that has been out for RACK.rtt +
    /// `reo_wnd`; sets [`deadline`](Self::deadline) for the last of those
    /// that have not yet (RFC 8985 section 6.2's `RACK_detect_loss()`,
    /// Linux's `tcp_rack_detect_loss()`: the timeout is the largest
    /// remaining wait), so that one timer marks them all.
    pub fn detect(
        &mut self,
        segs: &Segments,
        now: SimTime,
        reo_wnd: SimTime,
        mut mark: impl FnMut(usize),
    ) {
        self.deadline = None;
        let Some((xmit_ts, end_seq)) = self.newest else {
            return;
        };
        let first = segs.first_ordinal();
        let due = |at: SimTime| at + self.rtt + reo_wnd;
        let mut pending: Option<SimTime> = None;

        // Original transmissions, in sequence order.
        self.originals = self.originals.max(first);
        let mut i = (self.originals - first) as usize;
        let mut at_cursor = true;
        while i < segs.len() {
            let s = segs.get(i);
            if s.ever_retx || s.sacked() || s.lost() {
                if at_cursor {
                    self.originals += 1;
                }
                i += 1;
                continue;
            }
            if !sent_after(xmit_ts, end_seq, s.sent_at, s.end()) {
                break;
            }
            if due(s.sent_at) <= now {
                mark(i);
                if at_cursor {
                    self.originals += 1;
                }
            } else {
                pending = Some(pending.map_or(due(s.sent_at), |p| p.max(due(s.sent_at))));
                at_cursor = false;
            }
            i += 1;
        }

        // Retransmissions, in the order they were resent. `candidate`:
        // `Some(Some(i))` for a resend still in flight and not SACKed, sent
        // before the newest delivery (index `i`); `Some(None)` for an entry
        // no longer current (skip it); `None` once resends are sent after
        // the newest delivery (stop).
        let candidate = |ord: u64, at: SimTime| -> Option<Option<usize>> {
            if ord < first {
                return Some(None);
            }
            let i = (ord - first) as usize;
            let s = segs.get(i);
            if !(s.rtx() && !s.sacked() && s.sent_at == at) {
                return Some(None);
            }
            sent_after(xmit_ts, end_seq, at, s.end()).then_some(Some(i))
        };
        while let Some(&(ord, at)) = self.resent.front() {
            let Some(found) = candidate(ord, at) else {
                break;
            };
            if let Some(i) = found {
                if due(at) > now {
                    pending = Some(pending.map_or(due(at), |p| p.max(due(at))));
                    break;
                }
                mark(i);
            }
            self.resent.pop_front();
        }
        // The resends after the first one still waiting were sent later:
        // none is due yet, and the timer waits for the last of them.
        for &(ord, at) in self.resent.iter().skip(1) {
            match candidate(ord, at) {
                None => break,
                Some(Some(_)) => pending = Some(pending.map_or(due(at), |p| p.max(due(at)))),
                Some(None) => {}
            }
        }
        self.deadline = pending;
    }

    /// On a timeout at `now`: segments last sent after the returned time
    /// have been out for less than RACK.rtt and are not deemed lost yet
    /// (RFC 8985 section 6.3 with no reordering window, as Linux's
    /// `tcp_rack_skb_timeout(tp, skb, 0)`); `None` before any delivery
    /// (RACK.rtt is then zero: every segment is due).
    pub fn recent_after(&self, now: SimTime) -> Option<SimTime> {
        self.newest.map(|_| now.saturating_sub(self.rtt))
    }

    /// Segments deemed lost from ordinal `first` on are no longer: the
    /// scan of original transmissions starts again there.
    pub fn rescan(&mut self, first: u64) {
        self.originals = first;
    }

    /// After a timeout: the segments it deemed lost are skipped by the
    /// scans (they are lost, or resent anew); those it left stay
    /// candidates, each waiting for a later delivery.
    pub fn on_timeout(&mut self) {
        self.deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rack_rtt_is_the_last_deliverys_as_linux_keeps_it() {
        // A segment sent at 100 ms delivered at 150 ms, then one sent at
        // 60 ms (overtaken) delivered at 160 ms: RACK's reference stays the
        // most recently sent, its RTT becomes the last delivery's (100 ms),
        // so segments sent just before the reference wait that long.
        let ms = SimTime::from_ms;
        let mut r = Rack::default();
        r.delivered(ms(100), 2000, false, ms(150));
        assert_eq!((r.newest, r.rtt), (Some((ms(100), 2000)), ms(50)));
        r.delivered(ms(60), 1000, false, ms(160));
        assert_eq!((r.newest, r.rtt), (Some((ms(100), 2000)), ms(100)));
        // A resend acknowledged sooner than the smallest RTT is the
        // original's ACK: nothing changes.
        r.delivered(ms(140), 1500, true, ms(160));
        assert_eq!((r.newest, r.rtt), (Some((ms(100), 2000)), ms(100)));
    }

    #[test]
    fn the_timer_waits_for_the_last_segment_still_in_its_window() {
        // Segments sent at 0, 10 and 20 ms, and one at 30 ms delivered at
        // 130 ms (RACK.rtt 100 ms); a 25 ms window. At 130 ms the first has
        // been out 125 ms and is lost; the other two are due at 135 and
        // 145 ms, and the timer is set for the later (RFC 8985's
        // RACK_detect_loss(), Linux's tcp_rack_detect_loss()), which then
        // finds both lost at once.
        let ms = SimTime::from_ms;
        let mut segs = Segments::default();
        for k in 0..4u64 {
            segs.push(k * 1000, 1000, ms(10 * k));
        }
        let mut r = Rack::default();
        assert!(segs.sack(3));
        r.delivered(ms(30), 4000, false, ms(130));
        let mut lost = Vec::new();
        r.detect(&segs, ms(130), ms(25), |i| lost.push(i));
        assert_eq!(lost, vec![0]);
        assert_eq!(r.deadline, Some(ms(145)));
        r.detect(&segs, ms(145), ms(25), |i| lost.push(i));
        assert_eq!(lost, vec![0, 1, 2]);
        assert_eq!(r.deadline, None);
    }
}
