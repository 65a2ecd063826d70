//! FQ-CoDel (RFC 8290): flow queuing with CoDel on every queue, the
//! default queue discipline of most Linux distributions.
//!
//! Packets are hashed by flow into `flows` queues. A queue that becomes
//! active joins the list of new flows with a deficit of one `quantum`;
//! the scheduler serves new flows before old ones, by deficit round robin
//! (a queue whose deficit is spent gets another quantum and moves to the
//! tail of the old flows). Each queue runs its own CoDel (RFC 8289) on
//! the sojourn time of its packets, against the whole discipline's
//! backlog for the "less than one MTU queued" test, as Linux's
//! `sch_fq_codel.c` does. When the buffer is over its limit the arriving
//! packet is kept and packets are dropped from the head of the queue with
//! the largest backlog, up to half of it or `drop_batch` packets, and that
//! queue's CoDel count grows by as many (`fq_codel_drop()`).
//!
//! With ECN (`mode = "mark"`), CoDel marks an ECN-capable packet instead
//! of dropping it, as Linux's `ecn` option; `ce_threshold` marks every
//! ECN-capable packet (or only ECT(1) ones: the L4S mode) whose sojourn
//! exceeds it, as Linux's and ns-3's `ce_threshold`.
//!
//! A newly active queue goes to the new list only if it is in neither
//! list: a queue emptied by the scheduler stays in its list until the
//! scheduler next finds it empty (RFC 8290 §4.2).

use std::collections::VecDeque;

use super::{BufferLimit, Queued};
use crate::packet::{flags, Packet};
use crate::time::SimTime;

/// FQ-CoDel's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelParams {
    /// Flow queues (the hash's range).
    pub flows: u32,
    /// Bytes a queue may send per round.
    pub quantum: u32,
    pub target: SimTime,
    pub interval: SimTime,
    /// CoDel does not drop while the discipline holds at most this many
    /// bytes.
    pub mtu: u64,
    /// At most this many packets dropped per overflow.
    pub drop_batch: u32,
    /// CoDel marks ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Mark ECN-capable packets whose sojourn exceeds this.
    pub ce_threshold: Option<SimTime>,
    /// `ce_threshold` applies to ECT(1) packets only (L4S).
    pub ce_threshold_ect1: bool,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            flows: 1024,
            quantum: 1514,
            target: SimTime::from_ms(5),
            interval: SimTime::from_ms(100),
            mtu: 1500,
            drop_batch: 64,
            ecn: false,
            ce_threshold: None,
            ce_threshold_ect1: false,
        }
    }
}

/// Which list a flow queue is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// CoDel's state for one flow queue (RFC 8289 §5).
#[derive(Clone, Copy, Debug)]
struct CodelVars {
    first_above: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

#[derive(Debug)]
struct FlowQueue {
    q: VecDeque<Queued>,
    backlog: u64,
    deficit: i64,
    list: List,
    codel: CodelVars,
}

impl FlowQueue {
    fn new() -> FlowQueue {
        FlowQueue {
            q: VecDeque::new(),
            backlog: 0,
            deficit: 0,
            list: List::None,
            codel: CodelVars {
                first_above: None,
                drop_next: SimTime::ZERO,
                count: 0,
                lastcount: 0,
                dropping: false,
            },
        }
    }
}

/// Why a queue discipline dropped a packet it held (the port logs it as
/// `overflow` or `early_drop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QdiscDrop {
    /// The buffer was over its limit.
    Overflow,
    /// The discipline's AQM signalled (FQ-CoDel: a queue's CoDel).
    Early,
}

/// How a packet handed to the transmitter was marked here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqMark {
    Codel,
    CeThreshold,
}

impl FqMark {
    /// Its label in a replay.
    pub fn name(self) -> &'static str {
        match self {
            FqMark::Codel => "codel",
            FqMark::CeThreshold => "ce_threshold",
        }
    }
}

/// The FQ-CoDel discipline of one port.
#[derive(Debug)]
pub struct FqCodel {
    p: FqCodelParams,
    /// The hash's perturbation (from the run's seed).
    perturb: u64,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    packets: usize,
    bytes: u64,
    /// Packets dropped by the last enqueue or dequeue, in order.
    dropped: Vec<(Queued, QdiscDrop)>,
}

impl FqCodel {
    pub fn new(p: FqCodelParams, perturb: u64) -> FqCodel {
        let queues = (0..p.flows).map(|_| FlowQueue::new()).collect();
        FqCodel {
            p,
            perturb,
            queues,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            dropped: Vec::new(),
        }
    }

    pub fn params(&self) -> &FqCodelParams {
        &self.p
    }

    /// The flow queue `pkt` hashes to: its flow and direction, mixed with
    /// the perturbation (SplitMix64's finaliser), scaled to `flows` as
    /// Linux's `reciprocal_scale()`.
    pub fn bucket_of(&self, pkt: &Packet) -> u32 {
        let key = (pkt.flow.0 as u64) << 32 ^ (pkt.src.0 as u64) << 16 ^ pkt.dst.0 as u64;
        let mut z = key ^ self.perturb;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (((z >> 32) * self.p.flows as u64) >> 32) as u32
    }

    /// Packets and bytes queued.
    pub fn len(&self) -> usize {
        self.packets
    }

    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The packets the last call dropped, taken out.
    pub fn take_dropped(&mut self) -> std::vec::Drain<'_, (Queued, QdiscDrop)> {
        self.dropped.drain(..)
    }

    /// Add `q` to flow queue `bucket`; over `limit`, drop from the fattest
    /// queue (see [`take_dropped`](Self::take_dropped)).
    pub fn enqueue(&mut self, bucket: u32, q: Queued, limit: BufferLimit) {
        let fq = &mut self.queues[bucket as usize];
        fq.backlog += q.pkt.size as u64;
        fq.q.push_back(q);
        if fq.list == List::None {
            fq.list = List::New;
            fq.deficit = self.p.quantum as i64;
            self.new_flows.push_back(bucket);
        }
        self.packets += 1;
        self.bytes += q.pkt.size as u64;
        let over = match limit {
            BufferLimit::Packets(n) => self.packets > n as usize,
            BufferLimit::Bytes(b) => self.bytes > b,
        };
        if over {
            self.drop_from_fattest();
        }
    }

    /// `fq_codel_drop()`: from the head of the queue with the largest
    /// backlog (the first such), until half of its backlog or `drop_batch`
    /// packets are gone.
    fn drop_from_fattest(&mut self) {
        let mut fattest = 0;
        let mut max = 0;
        for (i, fq) in self.queues.iter().enumerate() {
            if fq.backlog > max {
                max = fq.backlog;
                fattest = i;
            }
        }
        let threshold = max >> 1;
        let (mut len, mut n) = (0u64, 0u32);
        while let Some(q) = self.pop(fattest) {
            len += q.pkt.size as u64;
            n += 1;
            self.dropped.push((q, QdiscDrop::Overflow));
            if n >= self.p.drop_batch || len >= threshold {
                break;
            }
        }
        // As Linux: the queue's CoDel signals harder too.
        let c = &mut self.queues[fattest].codel;
        c.count = c.count.wrapping_add(n);
    }

    fn pop(&mut self, bucket: usize) -> Option<Queued> {
        let fq = &mut self.queues[bucket];
        let q = fq.q.pop_front()?;
        fq.backlog -= q.pkt.size as u64;
        self.packets -= 1;
        self.bytes -= q.pkt.size as u64;
        Some(q)
    }

    /// The next packet for the transmitter at `now` (RFC 8290 §4.2), with
    /// how it was marked; CoDel's drops on the way are in
    /// [`take_dropped`](Self::take_dropped).
    pub fn dequeue(&mut self, now: SimTime) -> Option<(Queued, Option<FqMark>)> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let b = if from_new {
                self.new_flows[0]
            } else {
                *self.old_flows.front()?
            };
            let fq = &mut self.queues[b as usize];
            if fq.deficit <= 0 {
                fq.deficit += self.p.quantum as i64;
                self.move_to_old(b, from_new);
                continue;
            }
            match self.codel_dequeue(b as usize, now) {
                Some((q, mark)) => {
                    self.queues[b as usize].deficit -= q.pkt.size as i64;
                    return Some((q, mark));
                }
                None => {
                    if from_new && !self.old_flows.is_empty() {
                        self.move_to_old(b, true);
                    } else {
                        if from_new {
                            self.new_flows.pop_front();
                        } else {
                            self.old_flows.pop_front();
                        }
                        self.queues[b as usize].list = List::None;
                    }
                }
            }
        }
    }

    /// Move the head of the new (or old) list to the tail of the old one.
    fn move_to_old(&mut self, b: u32, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
        self.old_flows.push_back(b);
        self.queues[b as usize].list = List::Old;
    }

    /// RFC 8289 `dodequeue()` on queue `b`: its head, and whether CoDel may
    /// drop it.
    fn dodequeue(&mut self, b: usize, now: SimTime) -> Option<(Queued, bool)> {
        let Some(q) = self.pop(b) else {
            self.queues[b].codel.first_above = None;
            return None;
        };
        let (target, interval, mtu, bytes) =
            (self.p.target, self.p.interval, self.p.mtu, self.bytes);
        let c = &mut self.queues[b].codel;
        let sojourn = now - q.enqueued_at;
        let mut ok = false;
        if sojourn < target || bytes <= mtu {
            c.first_above = None;
        } else {
            match c.first_above {
                None => c.first_above = Some(now + interval),
                Some(t) => ok = now >= t,
            }
        }
        Some((q, ok))
    }

    /// `t + interval / sqrt(count)`, to the nearest nanosecond.
    fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let step = self.p.interval.ns() as f64 / (count.max(1) as f64).sqrt();
        t + SimTime::from_ns_f64(step)
    }

    /// A signal on `q`: a mark if ECN is on and it can carry one, else a
    /// drop. Returns whether it was marked.
    fn signal(&mut self, q: &mut Queued) -> bool {
        if self.p.ecn && q.pkt.ecn_capable() {
            q.pkt.flags |= flags::CE;
            true
        } else {
            self.dropped.push((*q, QdiscDrop::Early));
            false
        }
    }

    /// RFC 8289 `dequeue()` on queue `b`, with Linux's ECN marking
    /// (`codel_dequeue()`), then the `ce_threshold` mark.
    fn codel_dequeue(&mut self, b: usize, now: SimTime) -> Option<(Queued, Option<FqMark>)> {
        let Some((mut q, ok)) = self.dodequeue(b, now) else {
            self.queues[b].codel.dropping = false;
            return None;
        };
        let mut marked = false;
        let interval = self.p.interval;
        if self.queues[b].codel.dropping {
            if !ok {
                self.queues[b].codel.dropping = false;
            }
            while self.queues[b].codel.dropping && now >= self.queues[b].codel.drop_next {
                let c = &mut self.queues[b].codel;
                c.count += 1;
                let (count, next) = (c.count, c.drop_next);
                if self.signal(&mut q) {
                    marked = true;
                    self.queues[b].codel.drop_next = self.control_law(next, count);
                    break;
                }
                match self.dodequeue(b, now) {
                    None => {
                        self.queues[b].codel.dropping = false;
                        return None;
                    }
                    Some((next_q, next_ok)) => {
                        q = next_q;
                        if next_ok {
                            self.queues[b].codel.drop_next = self.control_law(next, count);
                        } else {
                            self.queues[b].codel.dropping = false;
                        }
                    }
                }
            }
        } else if ok {
            let mut gone = false;
            if self.signal(&mut q) {
                marked = true;
            } else {
                // The next packet goes out unchecked (RFC 8289).
                match self.dodequeue(b, now) {
                    Some((next_q, _)) => q = next_q,
                    None => gone = true,
                }
            }
            let c = &mut self.queues[b].codel;
            c.dropping = true;
            let delta = c.count.wrapping_sub(c.lastcount);
            c.count = if delta > 1 && now.saturating_sub(c.drop_next) < SimTime(16 * interval.ns())
            {
                delta
            } else {
                1
            };
            c.lastcount = c.count;
            let count = c.count;
            self.queues[b].codel.drop_next = self.control_law(now, count);
            if gone {
                return None;
            }
        }
        if marked {
            return Some((q, Some(FqMark::Codel)));
        }
        if let Some(th) = self.p.ce_threshold {
            let eligible = if self.p.ce_threshold_ect1 {
                q.pkt.has(flags::ECT1)
            } else {
                q.pkt.ecn_capable()
            };
            if eligible && now - q.enqueued_at > th {
                q.pkt.flags |= flags::CE;
                return Some((q, Some(FqMark::CeThreshold)));
            }
        }
        Some((q, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::packet::PacketKind;

    fn pkt(flow: u32, size: u32) -> Queued {
        let mut p = Packet::new(0, FlowId(flow), NodeId(0), NodeId(1), PacketKind::Udp);
        p.size = size;
        Queued {
            pkt: p,
            index: flow as u64,
            enqueued_at: SimTime::ZERO,
        }
    }

    #[test]
    fn the_hash_spreads_flows_and_follows_the_perturbation() {
        let fq = FqCodel::new(FqCodelParams::default(), 1);
        let other = FqCodel::new(FqCodelParams::default(), 2);
        let mut used = std::collections::HashSet::new();
        let mut moved = 0;
        for f in 0..4096 {
            let b = fq.bucket_of(&pkt(f, 100).pkt);
            assert!(b < 1024);
            used.insert(b);
            moved += usize::from(b != other.bucket_of(&pkt(f, 100).pkt));
        }
        // 4,096 flows into 1,024 queues leave about 1024/e^4 (19) empty.
        assert!(used.len() > 980, "{}", used.len());
        assert!(moved > 4000, "{moved}");
        // Each direction of a flow hashes on its own.
        let apart = (0..64)
            .filter(|&f| {
                let forward = pkt(f, 100).pkt;
                let mut back = forward;
                back.src = NodeId(1);
                back.dst = NodeId(0);
                fq.bucket_of(&forward) != fq.bucket_of(&back)
            })
            .count();
        assert!(apart > 60, "{apart}");
    }

    #[test]
    fn a_new_flow_is_served_before_a_backlogged_one() {
        let mut fq = FqCodel::new(FqCodelParams::default(), 0);
        let limit = BufferLimit::Packets(100);
        for _ in 0..5 {
            fq.enqueue(3, pkt(3, 1500), limit);
        }
        // Queue 3 sends until its quantum is spent and goes to the old list.
        assert_eq!(fq.dequeue(SimTime::ZERO).unwrap().0.index, 3);
        assert_eq!(fq.dequeue(SimTime::ZERO).unwrap().0.index, 3);
        fq.enqueue(9, pkt(9, 1500), limit);
        assert_eq!(fq.dequeue(SimTime::ZERO).unwrap().0.index, 9);
        assert_eq!(fq.dequeue(SimTime::ZERO).unwrap().0.index, 3);
        assert_eq!(fq.len(), 2);
    }

    #[test]
    fn an_overflow_drops_from_the_fattest_queue_head() {
        let mut fq = FqCodel::new(FqCodelParams::default(), 0);
        let limit = BufferLimit::Packets(10);
        for i in 0..8 {
            let mut q = pkt(1, 1000);
            q.index = i;
            fq.enqueue(1, q, limit);
        }
        fq.enqueue(2, pkt(2, 1500), limit);
        fq.enqueue(2, pkt(2, 1500), limit);
        assert_eq!(fq.take_dropped().count(), 0);
        fq.enqueue(2, pkt(2, 1500), limit);
        // Queue 1 (8,000 bytes) loses its head until 4,000 bytes are gone.
        let gone: Vec<u64> = fq.take_dropped().map(|(q, _)| q.index).collect();
        assert_eq!(gone, vec![0, 1, 2, 3]);
        assert_eq!(fq.len(), 7);
        assert_eq!(fq.queues[1].codel.count, 4);
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::packet::PacketKind;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the operations, every packet handed in is sent, dropped
        /// or still queued, once; the counts agree with the queues; and
        /// no flow queue's packets leave out of order.
        #[test]
        fn every_packet_is_sent_dropped_or_queued_once(
            ops in prop::collection::vec((any::<bool>(), 0u32..6, 40u32..1600, 0u8..4, 0u64..3_000_000), 1..600),
            limit in 1u32..40,
            ecn in any::<bool>(),
        ) {
            let p = FqCodelParams {
                flows: 8,
                target: SimTime::from_ms(1),
                interval: SimTime::from_ms(10),
                ecn,
                ce_threshold: Some(SimTime::from_ms(2)),
                ..FqCodelParams::default()
            };
            let mut fq = FqCodel::new(p, 7);
            let mut now = SimTime::ZERO;
            let mut seen = vec![0u8; ops.len()];
            let mut last_sent = [None::<u64>; 8];
            let (mut sent, mut dropped) = (0usize, 0usize);
            for (i, &(enq, bucket, size, codepoint, gap)) in ops.iter().enumerate() {
                now += SimTime(gap);
                if enq {
                    let mut pkt = Packet::new(i as u64, FlowId(bucket), NodeId(0), NodeId(1), PacketKind::Udp);
                    pkt.size = size;
                    pkt.flags = [0, flags::ECT, flags::ECT1, flags::ECT | flags::CE][codepoint as usize];
                    let q = Queued { pkt, index: i as u64, enqueued_at: now };
                    fq.enqueue(bucket, q, BufferLimit::Packets(limit));
                } else if let Some((q, _)) = fq.dequeue(now) {
                    seen[q.index as usize] += 1;
                    sent += 1;
                    let b = q.pkt.flow.0 as usize;
                    prop_assert!(last_sent[b].is_none_or(|l| l < q.index), "out of order");
                    last_sent[b] = Some(q.index);
                }
                for (q, _) in fq.take_dropped() {
                    seen[q.index as usize] += 1;
                    dropped += 1;
                }
                prop_assert!(fq.len() <= limit as usize);
                let held: usize = fq.queues.iter().map(|f| f.q.len()).sum();
                let bytes: u64 = fq.queues.iter().map(|f| f.backlog).sum();
                prop_assert_eq!(held, fq.len());
                prop_assert_eq!(bytes, fq.bytes());
            }
            let enqueued = ops.iter().filter(|o| o.0).count();
            prop_assert_eq!(sent + dropped + fq.len(), enqueued);
            prop_assert!(seen.iter().all(|&n| n <= 1));
        }
    }
}
