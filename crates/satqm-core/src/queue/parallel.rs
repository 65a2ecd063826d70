//! Two virtual queues sharing one physical buffer and one transmitter, with
//! a dynamic bandwidth split: the RED+Tail structure of Jou, Tan and Baras,
//! "A Parallel Virtual Queue Structure for Active Queue Management" (CSHCN
//! TR 2003-18), Section III.
//!
//! Virtual queue 1 (drop-tail) holds short-lived and real-time traffic;
//! virtual queue 2 holds long-lived TCP traffic under Adaptive RED (the
//! verdicts come from `aqm::red_tail`; this file only stores and serves).
//! Both draw on one buffer: a packet of either class is lost to overflow
//! only when the whole buffer is full.
//!
//! Service rates (Section III), with `q1` the drop-tail queue in bytes and
//! `C` the link rate:
//!
//! ```text
//! q1 = 0:              C1 = 0
//! 0 < q1 < minth1:     C1 = C1min
//! minth1 <= q1:        C1 = min(C q1 / maxth1, C1max)
//! C2 = C - C1
//! ```
//!
//! The split is recomputed at every change of `q1` (continuous), or, with
//! an update interval `S`, at the times `k S` from the `q1` found then and
//! held until the next one.
//!
//! The scheduler is a credit (deficit) scheduler approximating the fluid
//! split to within about one packet: while a virtual queue is backlogged it
//! earns credit at its rate (in bits, at most [`CREDIT_CAP_BITS`]); the
//! transmitter serves the backlogged queue with the most credit left after
//! its head packet (the drop-tail queue on ties) and charges it the
//! packet's bits. It is work-conserving: a queue alone gets the whole link
//! and is not charged beyond one cap for it, and a queue that empties keeps
//! no saved credit, so a queue that comes back is not punished for the
//! other's excess, nor rewarded for its own idleness.

use std::collections::VecDeque;

use super::QueueView;
use super::Queued;
use crate::aqm::Probe;
use crate::time::{Rate, SimTime};

/// Largest credit a virtual queue can bank, and largest debt it can run
/// up while it has the link alone: two 1,500-byte packets.
pub const CREDIT_CAP_BITS: f64 = 2.0 * 1500.0 * 8.0;

/// Which virtual queue a packet joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum VqClass {
    /// Virtual queue 1: drop-tail, adaptive service rate (web, UDP,
    /// short-lived TCP).
    DropTail = 0,
    /// Virtual queue 2: Adaptive RED (long-lived TCP).
    Red = 1,
}

/// The drop-tail queue's rate rule and the update interval.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitParams {
    /// `minth1`, bytes.
    pub min_th1: f64,
    /// `maxth1`, bytes.
    pub max_th1: f64,
    /// `C1min`, bit/s.
    pub c1_min_bps: f64,
    /// `C1max`, bit/s (at most the link rate).
    pub c1_max_bps: f64,
    /// `S`: recompute the split every `S` (from time 0); `None`: at every
    /// change of `q1`.
    pub update_interval: Option<SimTime>,
}

impl SplitParams {
    /// `C1` for a drop-tail queue of `q1_bytes` on a link of `c_bps`
    /// (Section III's rule).
    pub fn droptail_rate(&self, q1_bytes: f64, c_bps: f64) -> f64 {
        if q1_bytes <= 0.0 {
            0.0
        } else if q1_bytes < self.min_th1 {
            self.c1_min_bps
        } else {
            (c_bps * q1_bytes / self.max_th1).min(self.c1_max_bps)
        }
    }
}

/// Whole-run figures of one virtual queue.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VqStats {
    /// Packets and bytes that joined the queue.
    pub enqueued_packets: u64,
    pub enqueued_bytes: u64,
    /// Packets and bytes that started serialization (including packets
    /// that found the port idle and went straight through).
    pub departed_packets: u64,
    pub departed_bytes: u64,
    /// Waiting times (arrival to start of serialization), seconds.
    pub delay_sum_s: f64,
    pub delay_max_s: f64,
    /// Most packets and bytes the queue held at once.
    pub peak_packets: usize,
    pub peak_bytes: u64,
}

#[derive(Debug)]
pub struct ParallelQueues {
    vq: [VecDeque<Queued>; 2],
    bytes: [u64; 2],
    link: Rate,
    p: SplitParams,
    /// Current `C1`, bit/s.
    c1_bps: f64,
    credit_bits: [f64; 2],
    /// Time up to which credit has been earned.
    last: SimTime,
    /// Next split update (with an update interval).
    next_update: SimTime,
    /// End of the last serialization of each queue's packets.
    busy_until: [SimTime; 2],
    departed_bytes: [u64; 2],
    pub stats: [VqStats; 2],
    // Interval counters, reset by `take_probe`.
    arrived_interval: [u64; 2],
    /// The class of the last arrival classified ([`Self::count_arrival`]):
    /// where it goes if it is admitted.
    arrival: VqClass,
    delay_sum_interval: [f64; 2],
    departed_interval: [u64; 2],
}

impl ParallelQueues {
    /// Virtual queues for a link of rate `link`; `p` must hold
    /// `0 <= c1_min <= c1_max <= link` (checked where the scenario is read).
    pub fn new(p: SplitParams, link: Rate) -> ParallelQueues {
        let next_update = p.update_interval.unwrap_or(SimTime::MAX);
        ParallelQueues {
            vq: [VecDeque::new(), VecDeque::new()],
            bytes: [0; 2],
            link,
            c1_bps: p.droptail_rate(0.0, link.bps() as f64),
            p,
            credit_bits: [0.0; 2],
            last: SimTime::ZERO,
            next_update,
            busy_until: [SimTime::ZERO; 2],
            departed_bytes: [0; 2],
            stats: [VqStats::default(); 2],
            arrived_interval: [0; 2],
            arrival: VqClass::DropTail,
            delay_sum_interval: [0.0; 2],
            departed_interval: [0; 2],
        }
    }

    pub fn params(&self) -> &SplitParams {
        &self.p
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.vq[0].len() + self.vq[1].len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Packets and bytes waiting in virtual queue `class`.
    pub fn queue(&self, class: VqClass) -> (usize, u64) {
        let i = class as usize;
        (self.vq[i].len(), self.bytes[i])
    }

    /// Current service rates `(C1, C2)`, bit/s (as of the last event).
    pub fn rates_bps(&self) -> (f64, f64) {
        (self.c1_bps, self.link.bps() as f64 - self.c1_bps)
    }

    /// What an AQM sees of virtual queue `class` at `now`: its own length,
    /// its own idle time (empty and none of its packets being serialized),
    /// its departures; the rate is the link's.
    pub fn view(&self, class: VqClass, now: SimTime) -> QueueView {
        let i = class as usize;
        let idle = self.vq[i].is_empty() && now >= self.busy_until[i];
        QueueView {
            q_packets: self.vq[i].len() as u32,
            q_bytes: self.bytes[i],
            idle_since: idle.then_some(self.busy_until[i]),
            departed_bytes: self.departed_bytes[i],
            rate_bps: self.link.bps(),
        }
    }

    /// Count an arrival of `class` (before any verdict); if admitted, it
    /// joins that queue ([`Buffer::push`](super::Buffer::push)).
    pub fn count_arrival(&mut self, class: VqClass, size: u32) {
        self.arrived_interval[class as usize] += size as u64;
        self.arrival = class;
    }

    /// The class of the last arrival counted.
    pub fn arrival_class(&self) -> VqClass {
        self.arrival
    }

    fn rate(&self, i: usize) -> f64 {
        if i == 0 {
            self.c1_bps
        } else {
            self.link.bps() as f64 - self.c1_bps
        }
    }

    /// Earn credit up to `t` at the current rates (backlogged queues only).
    fn accrue(&mut self, t: SimTime) {
        if t <= self.last {
            return;
        }
        let dt = (t - self.last).secs_f64();
        for i in 0..2 {
            if !self.vq[i].is_empty() {
                self.credit_bits[i] =
                    (self.credit_bits[i] + self.rate(i) * dt).min(CREDIT_CAP_BITS);
            }
        }
        self.last = t;
    }

    fn resplit(&mut self) {
        self.c1_bps = self
            .p
            .droptail_rate(self.bytes[0] as f64, self.link.bps() as f64);
    }

    /// Bring credits and (with an update interval) the split up to `now`.
    /// `q1` only changes at events, so every update time between the last
    /// event and `now` finds the same `q1`: one update at the first of them
    /// is exact.
    fn advance(&mut self, now: SimTime) {
        if let Some(s) = self.p.update_interval {
            if self.next_update <= now {
                let first = self.next_update;
                self.accrue(first);
                self.resplit();
                let k = (now - first).ns() / s.ns();
                self.next_update = SimTime(first.ns() + (k + 1) * s.ns());
            }
        }
        self.accrue(now);
    }

    /// After `q1` changed: a continuous split follows it at once.
    fn q1_changed(&mut self) {
        if self.p.update_interval.is_none() {
            self.resplit();
        }
    }

    // Cold and out of line: keeps the FIFO arm of `Buffer` small where it
    // is inlined.
    #[cold]
    #[inline(never)]
    pub(crate) fn push(&mut self, class: VqClass, now: SimTime, q: Queued) {
        self.advance(now);
        let i = class as usize;
        let size = q.pkt.size as u64;
        self.vq[i].push_back(q);
        self.bytes[i] += size;
        let st = &mut self.stats[i];
        st.enqueued_packets += 1;
        st.enqueued_bytes += size;
        st.peak_packets = st.peak_packets.max(self.vq[i].len());
        st.peak_bytes = st.peak_bytes.max(self.bytes[i]);
        if i == 0 {
            self.q1_changed();
        }
    }

    /// The virtual queue to serve next, if any.
    fn choose(&self) -> Option<usize> {
        match (self.vq[0].front(), self.vq[1].front()) {
            (None, None) => None,
            (Some(_), None) => Some(0),
            (None, Some(_)) => Some(1),
            (Some(a), Some(b)) => {
                let s0 = self.credit_bits[0] - a.pkt.size as f64 * 8.0;
                let s1 = self.credit_bits[1] - b.pkt.size as f64 * 8.0;
                Some(if s0 >= s1 { 0 } else { 1 })
            }
        }
    }

    /// Take the next packet to serialize at `now`.
    // Cold and out of line: keeps the FIFO arm of `Buffer` small where it
    // is inlined.
    #[cold]
    #[inline(never)]
    pub(crate) fn pop(&mut self, now: SimTime) -> Option<Queued> {
        self.advance(now);
        let i = self.choose()?;
        let q = self.vq[i].pop_front().expect("chosen queue is not empty");
        let size = q.pkt.size as u64;
        self.bytes[i] -= size;
        let c = &mut self.credit_bits[i];
        *c = (*c - size as f64 * 8.0).max(-CREDIT_CAP_BITS);
        if self.vq[i].is_empty() {
            *c = c.min(0.0);
        }
        self.started(i, now, size, now.saturating_sub(q.enqueued_at));
        if i == 0 {
            self.q1_changed();
        }
        Some(q)
    }

    /// A packet of `class` found the port idle and started serialization
    /// at once, without joining its queue.
    // Cold and out of line: keeps the FIFO arm of `Buffer` small where it
    // is inlined.
    #[cold]
    #[inline(never)]
    pub fn served_directly(&mut self, class: VqClass, now: SimTime, size: u32) {
        self.advance(now);
        let i = class as usize;
        let st = &mut self.stats[i];
        st.enqueued_packets += 1;
        st.enqueued_bytes += size as u64;
        self.started(i, now, size as u64, SimTime::ZERO);
    }

    fn started(&mut self, i: usize, now: SimTime, size: u64, wait: SimTime) {
        self.busy_until[i] = now + self.link.tx_time(size as u32);
        self.departed_bytes[i] += size;
        let w = wait.secs_f64();
        let st = &mut self.stats[i];
        st.departed_packets += 1;
        st.departed_bytes += size;
        st.delay_sum_s += w;
        st.delay_max_s = st.delay_max_s.max(w);
        self.delay_sum_interval[i] += w;
        self.departed_interval[i] += 1;
    }

    /// The sample at `now`, for the time series; starts the next
    /// interval. Per virtual queue (1: drop-tail, 2: RED): its length at
    /// `now`, packets and bytes; the service rate in force (bit/s); the
    /// bytes that arrived in the interval, dropped ones included; and the
    /// mean wait (s) of the packets that started service in it (NaN if
    /// none did).
    pub fn probe(&mut self, now: SimTime, put: &mut Probe) {
        self.advance(now);
        let mean = |i: usize| match self.departed_interval[i] {
            0 => f64::NAN,
            n => self.delay_sum_interval[i] / n as f64,
        };
        put("aqm_vq1_packets", self.vq[0].len() as f64);
        put("aqm_vq2_packets", self.vq[1].len() as f64);
        put("aqm_vq1_bytes", self.bytes[0] as f64);
        put("aqm_vq2_bytes", self.bytes[1] as f64);
        put("aqm_vq1_rate_bps", self.rate(0));
        put("aqm_vq2_rate_bps", self.rate(1));
        put("aqm_vq1_arrived_bytes", self.arrived_interval[0] as f64);
        put("aqm_vq2_arrived_bytes", self.arrived_interval[1] as f64);
        put("aqm_vq1_delay_s", mean(0));
        put("aqm_vq2_delay_s", mean(1));
        self.arrived_interval = [0; 2];
        self.delay_sum_interval = [0.0; 2];
        self.departed_interval = [0; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::packet::{Packet, PacketKind};

    const C: u64 = 8_000_000; // 1000-byte packets take 1 ms

    fn params(s: Option<SimTime>) -> SplitParams {
        SplitParams {
            min_th1: 2000.0,
            max_th1: 10_000.0,
            c1_min_bps: 1_000_000.0,
            c1_max_bps: 6_000_000.0,
            update_interval: s,
        }
    }

    fn pkt(uid: u64, size: u32, at: SimTime) -> Queued {
        let mut p = Packet::new(uid, FlowId(0), NodeId(0), NodeId(1), PacketKind::Udp);
        p.size = size;
        Queued {
            pkt: p,
            index: uid,
            enqueued_at: at,
        }
    }

    #[test]
    fn section_iii_rule() {
        let p = params(None);
        let c = C as f64;
        assert_eq!(p.droptail_rate(0.0, c), 0.0);
        assert_eq!(p.droptail_rate(1000.0, c), 1e6);
        // minth1 <= q1: C q1 / maxth1 = 8e6 * 0.2 = 1.6e6
        assert_eq!(p.droptail_rate(2000.0, c), 1.6e6);
        assert_eq!(p.droptail_rate(5000.0, c), 4e6);
        // capped at C1max
        assert_eq!(p.droptail_rate(9000.0, c), 6e6);
    }

    /// Serve both queues, always backlogged, for `n` packets; returns the
    /// bytes each got.
    fn serve_backlogged(pq: &mut ParallelQueues, n: usize, q1_target: usize) -> [u64; 2] {
        let mut now = SimTime::ZERO;
        let mut uid = 0;
        let mut refill = |pq: &mut ParallelQueues, now: SimTime| {
            while pq.queue(VqClass::DropTail).0 < q1_target {
                pq.push(VqClass::DropTail, now, pkt(uid, 1000, now));
                uid += 1;
            }
            while pq.queue(VqClass::Red).0 < 20 {
                pq.push(VqClass::Red, now, pkt(uid, 1000, now));
                uid += 1;
            }
        };
        refill(pq, now);
        for _ in 0..n {
            // Refilled at once, so q1 (and the split) is the same all the time.
            assert!(pq.pop(now).is_some());
            refill(pq, now);
            now += Rate(C).tx_time(1000);
        }
        [pq.stats[0].departed_bytes, pq.stats[1].departed_bytes]
    }

    #[test]
    fn backlogged_queues_share_the_link_as_the_split_says() {
        // q1 held at 5 packets = 5000 bytes: C1 = 4 Mbit/s, half the link.
        let mut pq = ParallelQueues::new(params(None), Rate(C));
        let got = serve_backlogged(&mut pq, 10_000, 5);
        let share = got[0] as f64 / (got[0] + got[1]) as f64;
        assert!((share - 0.5).abs() < 0.01, "drop-tail share {share}");
        // q1 held at 1 packet (below minth1): C1min = 1 Mbit/s, 1/8.
        let mut pq = ParallelQueues::new(params(None), Rate(C));
        let got = serve_backlogged(&mut pq, 10_000, 1);
        let share = got[0] as f64 / (got[0] + got[1]) as f64;
        assert!((share - 0.125).abs() < 0.01, "drop-tail share {share}");
        // q1 held at 9 packets: C1max = 6 Mbit/s, 3/4.
        let mut pq = ParallelQueues::new(params(None), Rate(C));
        let got = serve_backlogged(&mut pq, 10_000, 9);
        let share = got[0] as f64 / (got[0] + got[1]) as f64;
        assert!((share - 0.75).abs() < 0.01, "drop-tail share {share}");
    }

    #[test]
    fn a_queue_alone_gets_the_whole_link() {
        let mut pq = ParallelQueues::new(params(None), Rate(C));
        let t0 = SimTime::ZERO;
        for uid in 0..10 {
            pq.push(VqClass::Red, t0, pkt(uid, 1000, t0));
        }
        let mut now = t0;
        for _ in 0..10 {
            assert!(pq.pop(now).is_some());
            now += SimTime::from_ms(1);
        }
        assert!(pq.pop(now).is_none());
        // No debt beyond the cap: a drop-tail packet arriving now is served
        // before the next RED packet.
        pq.push(VqClass::Red, now, pkt(100, 1000, now));
        pq.push(VqClass::Red, now, pkt(101, 1000, now));
        pq.push(VqClass::DropTail, now, pkt(102, 1000, now));
        let first = pq.pop(now).unwrap();
        assert_eq!(first.pkt.uid, 102);
    }

    #[test]
    fn update_interval_holds_the_split_until_the_next_update() {
        let s = SimTime::from_ms(100);
        let mut pq = ParallelQueues::new(params(Some(s)), Rate(C));
        let t = SimTime::from_ms(10);
        for uid in 0..5 {
            pq.push(VqClass::DropTail, t, pkt(uid, 1000, t));
        }
        // q1 = 5000 bytes, but the split was last set at time 0 (q1 = 0).
        assert_eq!(pq.rates_bps(), (0.0, C as f64));
        // The update at 100 ms sees q1 = 5000 bytes even if nothing happens
        // until 250 ms; the next update is at 300 ms.
        let mut rates = Vec::new();
        pq.probe(SimTime::from_ms(250), &mut |n, v| {
            if n.ends_with("rate_bps") {
                rates.push(v)
            }
        });
        assert_eq!(rates, [4e6, 4e6]);
        assert_eq!(pq.next_update, SimTime::from_ms(300));
        // A continuous split follows q1 at once.
        let mut pq = ParallelQueues::new(params(None), Rate(C));
        for uid in 0..5 {
            pq.push(VqClass::DropTail, t, pkt(uid, 1000, t));
        }
        assert_eq!(pq.rates_bps(), (4e6, 4e6));
        pq.pop(t);
        assert_eq!(pq.rates_bps(), (3.2e6, 4.8e6));
    }

    #[test]
    fn views_are_per_queue() {
        let mut pq = ParallelQueues::new(params(None), Rate(C));
        let t = SimTime::from_ms(5);
        pq.push(VqClass::DropTail, t, pkt(0, 1000, t));
        let v2 = pq.view(VqClass::Red, t);
        assert_eq!(v2.q_packets, 0);
        assert_eq!(v2.idle_since, Some(SimTime::ZERO));
        pq.push(VqClass::Red, t, pkt(1, 500, t));
        pq.push(VqClass::Red, t, pkt(2, 500, t));
        let v2 = pq.view(VqClass::Red, t);
        assert_eq!((v2.q_packets, v2.q_bytes, v2.idle_since), (2, 1000, None));
        assert_eq!(pq.len(), 3);
    }
}
