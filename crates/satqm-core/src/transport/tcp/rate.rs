//! Delivery-rate estimation, as draft-cheng-iccrg-delivery-rate-estimation
//! describes it and Linux's `net/ipv4/tcp_rate.c` implements it.
//!
//! At every transmission of a segment the sender takes a snapshot of the
//! connection's delivery state ([`TxSnap`]): how many bytes had been
//! delivered (cumulatively acknowledged or SACKed), when the last of them
//! was, when the current flight's first segment was sent, and whether the
//! application was holding the sender back. When an ACK delivers
//! segments, the snapshot of the one sent last among them gives the rate
//! sample ([`RateSample`]): the bytes delivered since that snapshot over
//! the longer of the two elapsed times, the send phase (from the flight's
//! first transmission to this segment's) and the ACK phase (from the
//! snapshot's delivery to now). Taking the longer of the two keeps an ACK
//! compressed on the way back from claiming more than the bottleneck
//! carried.
//!
//! The estimator exists only for a congestion control that asks for it
//! ([`CongestionControl::wants_rate_sample`](super::cc::CongestionControl::wants_rate_sample)):
//! the snapshots ride in a queue of their own beside the retransmission
//! queue, by segment ordinal, so a connection without it pays nothing.
//!
//! Counted in bytes where Linux counts packets; with full-sized segments
//! the two agree up to the MSS factor.

use std::collections::VecDeque;

use crate::time::SimTime;

/// The delivery state when a segment was (last) sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxSnap {
    /// Bytes delivered when it was sent (`P.delivered`).
    pub delivered: u64,
    /// When the last of those bytes was delivered (`P.delivered_time`).
    pub delivered_time: SimTime,
    /// When the first segment of the flight it belongs to was sent
    /// (`P.first_sent_time`).
    pub first_tx_time: SimTime,
    /// The sender was application-limited when it was sent.
    pub app_limited: bool,
    /// Bytes in flight once it was sent (`P.tx_in_flight`).
    pub tx_in_flight: u64,
    /// Bytes deemed lost so far when it was sent (`P.lost`).
    pub lost: u64,
    /// Bytes delivered CE-marked when it was sent (`P.delivered_ce`).
    pub delivered_ce: u64,
}

/// What one ACK tells about the delivery rate (Linux's `struct
/// rate_sample`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Bytes delivered between the snapshot's send and this ACK; 0 if the
    /// ACK delivered no segment with a snapshot.
    pub delivered: u64,
    /// The longer of the send and the ACK phase.
    pub interval: SimTime,
    /// Whether `delivered / interval` is a rate: the ACK delivered a
    /// segment sent after a snapshot was taken, and the interval is at
    /// least the connection's minimum RTT (shorter ones are artefacts of
    /// ACK compression, `tcp_rate_gen()`).
    pub valid: bool,
    /// `P.delivered` of the segment that gave the sample.
    pub prior_delivered: u64,
    /// `P.delivered_time` of that segment.
    pub prior_time: SimTime,
    /// Send phase: that segment's send time less its flight's first.
    pub send_elapsed: SimTime,
    /// ACK phase: now less `prior_time`.
    pub ack_elapsed: SimTime,
    /// The RTT of the segment sent last among those this ACK delivered,
    /// unless it was retransmitted (Linux's `ca_rtt_us`).
    pub rtt: Option<SimTime>,
    /// The segment that gave the sample was sent while the application
    /// held the sender back: a low rate says nothing about the path.
    pub is_app_limited: bool,
    /// Bytes newly delivered (acknowledged or SACKed) by this ACK.
    pub acked_sacked: u64,
    /// Bytes newly deemed lost since the previous ACK.
    pub losses: u64,
    /// Bytes in flight before this ACK (`pipe`).
    pub prior_in_flight: u64,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// The ACK delivered a segment with a snapshot (the fields from
    /// `prior_delivered` on describe it).
    pub sampled: bool,
    /// Bytes in flight when that segment was sent (`RS.tx_in_flight`).
    pub tx_in_flight: u64,
    /// Bytes deemed lost between its sending and this ACK (`RS.lost`).
    pub lost: u64,
    /// Of `delivered`, bytes that arrived CE-marked (`RS.delivered_ce`),
    /// with DCTCP's or AccECN's feedback.
    pub delivered_ce: u64,
}

/// A segment newly deemed lost, with its snapshot (BBRv3's per-loss
/// step, `BBRHandleLostPacket()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LostSegment {
    pub size: u32,
    /// Bytes in flight once it was (last) sent.
    pub tx_in_flight: u64,
    /// Bytes deemed lost when it was sent, and now, this one included.
    pub lost_at_send: u64,
    pub lost_now: u64,
    pub is_app_limited: bool,
}

impl RateSample {
    /// The delivery rate, bytes per second, if the sample is valid.
    pub fn delivery_rate(&self) -> Option<f64> {
        (self.valid && self.interval > SimTime::ZERO)
            .then(|| self.delivered as f64 / self.interval.secs_f64())
    }
}

/// The segment that gives this ACK's sample, with its snapshot.
#[derive(Clone, Copy, Debug)]
struct Pick {
    sent_at: SimTime,
    end: u64,
    ever_retx: bool,
    snap: TxSnap,
}

/// A connection's delivery-rate estimator.
#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    /// The snapshots of the segments in flight, oldest first.
    snaps: VecDeque<TxSnap>,
    /// The ordinal of the front snapshot.
    first: u64,
    /// Bytes delivered so far (`C.delivered`).
    pub delivered: u64,
    /// Of those, bytes that arrived CE-marked (`C.delivered_ce`).
    pub delivered_ce: u64,
    /// When the last of them was delivered (`C.delivered_time`).
    pub delivered_time: SimTime,
    /// Send time of the segment that gave the last sample, or of the first
    /// segment sent after an empty pipe (`C.first_sent_time`).
    first_tx_time: SimTime,
    /// Non-zero while application-limited: the `delivered` count past which
    /// the limit is over (`C.app_limited`).
    app_limited: u64,
    /// Bytes deemed lost so far, as last seen.
    lost: u64,
    /// The smallest RTT sample so far.
    min_rtt: Option<SimTime>,
    pick: Option<Pick>,
    /// The last sample.
    pub last: RateSample,
    /// Bytes of the segments noted lost ([`note_lost`](Self::note_lost)).
    lost_noted: u64,
    /// Segments noted lost and not yet taken.
    pub lost_events: Vec<LostSegment>,
}

impl RateEstimator {
    /// Segment `ordinal` is (re)sent at `now`, leaving `inflight` bytes in
    /// flight, with `lost` bytes deemed lost so far; `pipe_empty`: nothing
    /// else is outstanding (`tcp_rate_skb_sent()`).
    pub fn on_send(
        &mut self,
        ordinal: u64,
        now: SimTime,
        pipe_empty: bool,
        inflight: u64,
        lost: u64,
    ) {
        if pipe_empty {
            self.first_tx_time = now;
            self.delivered_time = now;
        }
        let snap = TxSnap {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_tx_time: self.first_tx_time,
            app_limited: self.app_limited != 0,
            tx_in_flight: inflight,
            lost,
            delivered_ce: self.delivered_ce,
        };
        if self.snaps.is_empty() {
            self.first = ordinal;
        }
        let end = self.first + self.snaps.len() as u64;
        if ordinal == end {
            self.snaps.push_back(snap);
        } else if let Some(s) = ordinal
            .checked_sub(self.first)
            .and_then(|i| self.snaps.get_mut(i as usize))
        {
            *s = snap;
        }
    }

    /// Segment `ordinal`, sent at `sent_at` and ending at `end`, was
    /// delivered by the ACK being processed: it gives the sample if it was
    /// sent after every other so far (`tcp_rate_skb_delivered()`).
    pub fn on_delivered(&mut self, ordinal: u64, sent_at: SimTime, end: u64, ever_retx: bool) {
        let later = match &self.pick {
            None => true,
            Some(p) => sent_at > p.sent_at || (sent_at == p.sent_at && end > p.end),
        };
        if !later {
            return;
        }
        let Some(&snap) = ordinal
            .checked_sub(self.first)
            .and_then(|i| self.snaps.get(i as usize))
        else {
            return;
        };
        self.pick = Some(Pick {
            sent_at,
            end,
            ever_retx,
            snap,
        });
    }

    /// Segment `ordinal` of `len` bytes was just deemed lost.
    pub fn note_lost(&mut self, ordinal: u64, len: u32) {
        self.lost_noted += len as u64;
        let snap = ordinal
            .checked_sub(self.first)
            .and_then(|i| self.snaps.get(i as usize))
            .copied()
            .unwrap_or_default();
        self.lost_events.push(LostSegment {
            size: len,
            tx_in_flight: snap.tx_in_flight,
            lost_at_send: snap.lost,
            lost_now: self.lost_noted,
            is_app_limited: snap.app_limited,
        });
    }

    /// The retransmission queue's front is now segment `first`: drop the
    /// snapshots of those acknowledged away.
    pub fn retire_to(&mut self, first: u64) {
        while self.first < first && self.snaps.pop_front().is_some() {
            self.first += 1;
        }
        if self.snaps.is_empty() {
            self.first = first;
        }
    }

    /// The sender has no data to fill the window with while `pipe` bytes
    /// are in flight: samples from now on are application-limited until
    /// what is in flight now is delivered (`tcp_rate_check_app_limited()`).
    pub fn mark_app_limited(&mut self, pipe: u64) {
        self.app_limited = (self.delivered + pipe).max(1);
    }

    /// Whether the sender is application-limited.
    pub fn app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// An RTT sample taken outside the rate sample (the handshake's).
    pub fn note_rtt(&mut self, rtt: SimTime) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// The smallest RTT sample so far.
    pub fn min_rtt(&self) -> Option<SimTime> {
        self.min_rtt
    }

    /// Add to the last sample the losses found since it was taken, `lost`
    /// bytes having been deemed lost in all.
    pub fn add_losses(&mut self, lost: u64) {
        let more = lost.saturating_sub(self.lost);
        self.last.losses += more;
        if self.last.sampled {
            self.last.lost += more;
        }
        self.lost = self.lost.max(lost);
    }

    /// The ACK just sampled reported `bytes` delivered CE-marked (read
    /// after the sample, as the losses of [`add_losses`](Self::add_losses)).
    pub fn add_ce(&mut self, bytes: u64) {
        self.delivered_ce += bytes;
        if self.last.sampled {
            self.last.delivered_ce += bytes;
        }
    }

    /// Losses counted so far are not this ACK's (a timeout's marks: Linux
    /// reports them through the loss state, not the rate sample).
    pub fn sync_lost(&mut self, lost: u64) {
        self.lost = lost;
    }

    /// The sample of the ACK just processed at `now`, after which
    /// `delivered` bytes have been delivered and `lost` deemed lost in all
    /// (`tcp_rate_gen()`).
    pub fn generate(
        &mut self,
        now: SimTime,
        delivered: u64,
        lost: u64,
        prior_in_flight: u64,
        ece: bool,
    ) -> &RateSample {
        let acked_sacked = delivered.saturating_sub(self.delivered);
        self.delivered = self.delivered.max(delivered);
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let losses = lost.saturating_sub(self.lost);
        self.lost = self.lost.max(lost);
        let mut rs = RateSample {
            acked_sacked,
            losses,
            prior_in_flight,
            ece,
            ..RateSample::default()
        };
        if let Some(p) = self.pick.take() {
            // tcp_rate_skb_delivered(): the flight now starts at the
            // segment that gave the sample.
            self.first_tx_time = p.sent_at;
            rs.sampled = true;
            rs.tx_in_flight = p.snap.tx_in_flight;
            rs.lost = lost.saturating_sub(p.snap.lost);
            rs.prior_delivered = p.snap.delivered;
            rs.prior_time = p.snap.delivered_time;
            rs.is_app_limited = p.snap.app_limited;
            rs.send_elapsed = p.sent_at.saturating_sub(p.snap.first_tx_time);
            rs.ack_elapsed = now.saturating_sub(p.snap.delivered_time);
            if !p.ever_retx {
                let rtt = now.saturating_sub(p.sent_at);
                rs.rtt = Some(rtt);
                self.note_rtt(rtt);
            }
            rs.delivered = self.delivered - p.snap.delivered;
            rs.delivered_ce = self.delivered_ce - p.snap.delivered_ce;
            rs.interval = rs.send_elapsed.max(rs.ack_elapsed);
            rs.valid = self.min_rtt.is_none_or(|m| rs.interval >= m);
        }
        self.last = rs;
        &self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime::from_ms(x)
    }

    /// The draft's example: a flight of segments sent back to back from an
    /// empty pipe, ACKs arriving an RTT later at the bottleneck's spacing.
    #[test]
    fn rate_of_a_flight_sent_from_an_empty_pipe() {
        let mut r = RateEstimator::default();
        // Ten 1000-byte segments sent 1 ms apart from t = 0.
        for i in 0..10u64 {
            r.on_send(i, ms(i), i == 0, 0, 0);
        }
        // Each is acknowledged 100 ms after it was sent, 1 ms apart too.
        for i in 0..10u64 {
            let now = ms(100 + i);
            r.on_delivered(i, ms(i), (i + 1) * 1000, false);
            r.retire_to(i + 1);
            let rs = *r.generate(now, (i + 1) * 1000, 0, 0, false);
            assert_eq!(rs.prior_delivered, 0);
            assert_eq!(rs.prior_time, ms(0));
            assert_eq!(rs.send_elapsed, ms(i));
            // ACK phase: from the snapshot's delivered_time (the flight's
            // start, t = 0) to now.
            assert_eq!(rs.ack_elapsed, ms(100 + i));
            assert_eq!(rs.interval, ms(100 + i));
            assert_eq!(rs.delivered, (i + 1) * 1000);
            assert_eq!(rs.rtt, Some(ms(100)));
            assert!(rs.valid);
            let rate = rs.delivery_rate().unwrap();
            assert!((rate - (i + 1) as f64 * 1000.0 / ((100 + i) as f64 / 1000.0)).abs() < 1e-6);
        }
    }

    /// In steady state a segment's sample covers one round trip: the
    /// bytes delivered while it was in flight over the ACK phase.
    #[test]
    fn steady_state_sample_is_one_round_of_delivery() {
        let mut r = RateEstimator::default();
        // Segments of 1000 bytes every 1 ms; RTT 50 ms; each ACK delivers
        // one segment.
        let mut delivered = 0;
        let mut next_ack = 0u64;
        let mut last = RateSample::default();
        for t in 0..400u64 {
            if t >= 50 {
                let i = next_ack;
                r.on_delivered(i, ms(i), (i + 1) * 1000, false);
                r.retire_to(i + 1);
                delivered += 1000;
                last = *r.generate(ms(t), delivered, 0, 0, false);
                next_ack += 1;
            }
            r.on_send(t, ms(t), t == 0, 0, 0);
        }
        // Segment 349 was sent at 349 ms when 300 segments were delivered
        // (the last at 349 ms), its flight's first segment being 299 (the
        // last sample's); ACKed at 399 ms with 350 delivered: 50 kB over
        // max(send 50 ms, ACK 50 ms) = 1 MB/s.
        assert_eq!(last.prior_delivered, 300_000);
        assert_eq!(last.delivered, 50_000);
        assert_eq!(last.interval, ms(50));
        assert!((last.delivery_rate().unwrap() - 1e6).abs() < 1e-6);
    }

    /// An ACK that covers segments sent earlier than the last sample's
    /// source gives no later pick; a compressed ACK burst is capped by the
    /// send phase; an interval below the minimum RTT is no sample.
    #[test]
    fn send_phase_bounds_compressed_acks_and_short_intervals_are_invalid() {
        let mut r = RateEstimator::default();
        r.note_rtt(ms(20));
        for i in 0..4u64 {
            r.on_send(i, ms(10 * i), i == 0, 0, 0);
        }
        // All four ACKed at once at 40 ms: the pick is segment 3, sent at
        // 30 ms; send phase 30 ms, ACK phase 40 ms.
        for i in 0..4u64 {
            r.on_delivered(i, ms(10 * i), (i + 1) * 1000, false);
        }
        r.retire_to(4);
        let rs = *r.generate(ms(40), 4000, 0, 0, false);
        assert_eq!((rs.send_elapsed, rs.ack_elapsed), (ms(30), ms(40)));
        assert_eq!(rs.interval, ms(40));
        assert_eq!(rs.rtt, Some(ms(10)));
        // min_rtt is now 10 ms. A segment resent at 45 ms (pipe empty)
        // whose original's ACK comes at 50 ms spans 5 ms < 10 ms: not a
        // valid sample (and no RTT: it was retransmitted).
        r.on_send(4, ms(45), true, 0, 0);
        r.on_delivered(4, ms(45), 5000, true);
        r.retire_to(5);
        let rs = *r.generate(ms(50), 5000, 0, 0, false);
        assert!(!rs.valid);
        assert_eq!(rs.rtt, None);
        assert_eq!(rs.interval, ms(5));
        assert_eq!(rs.delivery_rate(), None);
        assert_eq!(rs.acked_sacked, 1000);
    }

    /// Application-limited marking lasts until what was in flight when it
    /// was set is delivered; losses are the increase since the last ACK;
    /// a retransmitted segment gives no RTT.
    #[test]
    fn app_limited_losses_and_retransmissions() {
        let mut r = RateEstimator::default();
        r.on_send(0, ms(0), true, 0, 0);
        r.on_send(1, ms(1), false, 0, 0);
        r.mark_app_limited(2000);
        assert!(r.app_limited());
        r.on_send(2, ms(2), false, 0, 0);
        r.on_delivered(0, ms(0), 1000, false);
        r.retire_to(1);
        let rs = *r.generate(ms(50), 1000, 1000, 0, false);
        assert!(!rs.is_app_limited);
        assert_eq!(rs.losses, 1000);
        assert!(r.app_limited());
        // Segment 1 resent at 60 ms (after it was deemed lost).
        r.on_send(1, ms(60), false, 0, 0);
        r.on_delivered(1, ms(60), 2000, true);
        r.retire_to(2);
        let rs = *r.generate(ms(110), 2000, 1000, 0, false);
        assert_eq!(rs.losses, 0);
        assert_eq!(rs.rtt, None);
        // The mark (2000) is not passed yet.
        assert!(r.app_limited());
        r.on_delivered(2, ms(2), 3000, false);
        r.retire_to(3);
        let rs = *r.generate(ms(120), 3000, 1000, 0, false);
        assert!(rs.is_app_limited);
        assert!(!r.app_limited());
    }

    /// BBRv3's per-packet state: what was in flight and lost when the
    /// sampled segment left (`RS.tx_in_flight`, `RS.lost = C.lost −
    /// P.lost`), and a lost segment's own snapshot.
    #[test]
    fn flight_and_losses_at_transmission() {
        let mut r = RateEstimator::default();
        r.on_send(0, ms(0), true, 1000, 0);
        r.on_send(1, ms(1), false, 2000, 0);
        r.on_send(2, ms(2), false, 3000, 500);
        // Segment 1 deemed lost: 1,000 more bytes lost in all.
        r.note_lost(1, 1000);
        assert_eq!(
            r.lost_events,
            vec![LostSegment {
                size: 1000,
                tx_in_flight: 2000,
                lost_at_send: 0,
                lost_now: 1000,
                is_app_limited: false,
            }]
        );
        r.on_delivered(2, ms(2), 3000, false);
        let rs = *r.generate(ms(50), 1000, 1500, 0, false);
        assert!(rs.sampled);
        assert_eq!((rs.tx_in_flight, rs.lost), (3000, 1000));
        // Losses found later in the same ACK count too.
        r.add_losses(2500);
        assert_eq!((r.last.losses, r.last.lost), (2500, 2000));
    }
}
