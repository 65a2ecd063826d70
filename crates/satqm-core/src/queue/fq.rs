//! Flow queuing with an AQM on every flow queue: FQ-CoDel (RFC 8290), the
//! default queue discipline of most Linux distributions; FQ-PIE (Linux
//! `sch_fq_pie.c`, PIE of RFC 8033 on every queue); FQ-COBALT (CAKE's
//! COBALT, CoDel and BLUE, on every queue, as ns-3's
//! `FqCobaltQueueDisc`); and COBALT alone (one queue).
//!
//! Packets are hashed by flow into `flows` queues. A queue that becomes
//! active joins the list of new flows with a deficit of one `quantum`;
//! the scheduler serves new flows before old ones, by deficit round robin
//! (a queue whose deficit is spent gets another quantum and moves to the
//! tail of the old flows). A newly active queue goes to the new list only
//! if it is in neither list: a queue emptied by the scheduler stays in its
//! list until the scheduler next finds it empty (RFC 8290 §4.2).
//!
//! Each queue's AQM:
//! - **CoDel** (RFC 8289) decides at dequeue on the sojourn time of its
//!   packets, against the whole discipline's backlog for the "less than one
//!   MTU queued" test, as Linux's `sch_fq_codel.c` does.
//! - **PIE** (RFC 8033, `aqm/pie.rs`) decides at enqueue on its queue's
//!   backlog; its probability is updated every `t_update` for every queue
//!   (`fq_pie_timer()`), from the sojourn time of the queue's last departure.
//! - **COBALT** (`sch_cake.c`'s `cobalt_should_drop()`) decides at dequeue:
//!   CoDel with a fixed-point control law, and BLUE, whose drop
//!   probability rises by `p_inc` when its queue overflows (or a packet
//!   waited over `blue_threshold`, as ns-3) and falls by `p_dec` when its
//!   queue is found empty, at most once per `target`.
//!
//! Over the buffer limit, either the arriving packet is kept and packets
//! are dropped from the head of the queue with the largest backlog, up to
//! half of it or `drop_batch` packets (`fq_codel_drop()`; that queue's
//! CoDel count grows by as many), or the arriving packet is dropped
//! (`overflow = "tail"`, Linux's FQ-PIE and a single COBALT queue, whose
//! BLUE then rises).
//!
//! With ECN (`mode = "mark"`) the AQM marks an ECN-capable packet instead
//! of dropping it (PIE only while its probability is at most
//! `mark_ecn_threshold`; BLUE always drops); `ce_threshold` marks every
//! ECN-capable packet (or only ECT(1) ones: the L4S mode) whose sojourn
//! exceeds it, as Linux's and ns-3's `ce_threshold`.
//!
//! PIE's and BLUE's random draws come from the discipline's own SplitMix64
//! stream (seeded from the run's seed): one draw per arrival under PIE,
//! one per dequeued packet under COBALT while BLUE's probability is above
//! zero and the packet is not already dropped.

use std::collections::VecDeque;

use super::{BufferLimit, QueueView, Queued};
use crate::aqm::{Outcome, PacketMeta, Pie, PieParams, Probe};
use crate::packet::{flags, Packet};
use crate::time::SimTime;

/// The AQM on each flow queue, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowAqmParams {
    Codel { target: SimTime, interval: SimTime },
    Pie(PieParams),
    Cobalt(CobaltParams),
}

/// COBALT's parameters (defaults: ns-3's `CobaltQueueDisc`, which are
/// CAKE's but for `blue_threshold`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CobaltParams {
    pub target: SimTime,
    pub interval: SimTime,
    /// BLUE's probability step up (on overflow) and down (on an empty queue).
    pub p_inc: f64,
    pub p_dec: f64,
    /// BLUE also steps up when a packet leaves after waiting longer than this.
    pub blue_threshold: SimTime,
}

impl Default for CobaltParams {
    fn default() -> Self {
        CobaltParams {
            target: SimTime::from_ms(5),
            interval: SimTime::from_ms(100),
            p_inc: 1.0 / 256.0,
            p_dec: 1.0 / 4096.0,
            blue_threshold: SimTime::from_ms(400),
        }
    }
}

/// What the discipline does when the buffer is over its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Keep the arrival; drop a batch from the head of the fattest queue.
    Fattest,
    /// Drop the arrival.
    Tail,
}

/// The parameters of a flow-queuing discipline.
#[derive(Clone, Debug, PartialEq)]
pub struct FqParams {
    /// Flow queues (the hash's range).
    pub flows: u32,
    /// Bytes a queue may send per round.
    pub quantum: u32,
    /// CoDel does not drop while the discipline holds at most this many
    /// bytes.
    pub mtu: u64,
    /// At most this many packets dropped per overflow.
    pub drop_batch: u32,
    pub overflow: Overflow,
    /// The AQM marks ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Mark ECN-capable packets whose sojourn exceeds this.
    pub ce_threshold: Option<SimTime>,
    /// `ce_threshold` applies to ECT(1) packets only (L4S).
    pub ce_threshold_ect1: bool,
    pub aqm: FlowAqmParams,
}

impl Default for FqParams {
    /// FQ-CoDel's defaults (Linux's).
    fn default() -> Self {
        FqParams {
            flows: 1024,
            quantum: 1514,
            mtu: 1500,
            drop_batch: 64,
            overflow: Overflow::Fattest,
            ecn: false,
            ce_threshold: None,
            ce_threshold_ect1: false,
            aqm: FlowAqmParams::Codel {
                target: SimTime::from_ms(5),
                interval: SimTime::from_ms(100),
            },
        }
    }
}

impl FqParams {
    /// The scenario's name of this discipline.
    pub fn kind(&self) -> &'static str {
        match &self.aqm {
            FlowAqmParams::Codel { .. } => "fq_codel",
            FlowAqmParams::Pie(_) => "fq_pie",
            FlowAqmParams::Cobalt(_) if self.flows == 1 => "cobalt",
            FlowAqmParams::Cobalt(_) => "fq_cobalt",
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

/// COBALT's state for one flow queue (`struct cobalt_vars`); times are
/// signed nanoseconds, compared by difference as the kernel's are.
#[derive(Clone, Copy, Debug)]
struct CobaltVars {
    count: u32,
    /// 1/sqrt(count) in fixed point (2^32 = 1).
    rec_inv_sqrt: u32,
    drop_next: i64,
    dropping: bool,
    p_drop: f64,
    blue_timer: i64,
}

/// The AQM state of one flow queue besides CoDel's.
#[derive(Clone, Debug)]
enum FlowAqm {
    /// CoDel, whose state is the queue's `codel` (a plain field: FQ-CoDel's
    /// dequeue path reads it at every step).
    Codel,
    Pie(Box<Pie>),
    Cobalt(CobaltVars),
}

#[derive(Debug)]
struct FlowQueue {
    q: VecDeque<Queued>,
    backlog: u64,
    deficit: i64,
    list: List,
    /// CoDel's state (used with `FlowAqm::Codel` only).
    codel: CodelVars,
    aqm: FlowAqm,
}

impl FlowQueue {
    fn new(aqm: &FlowAqmParams) -> FlowQueue {
        let aqm = match aqm {
            FlowAqmParams::Codel { .. } => FlowAqm::Codel,
            FlowAqmParams::Pie(p) => FlowAqm::Pie(Box::new(Pie::new(p.clone()))),
            FlowAqmParams::Cobalt(_) => FlowAqm::Cobalt(CobaltVars {
                count: 0,
                rec_inv_sqrt: u32::MAX,
                drop_next: 0,
                dropping: false,
                p_drop: 0.0,
                blue_timer: 0,
            }),
        };
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
            aqm,
        }
    }

    fn cobalt(&mut self) -> &mut CobaltVars {
        match &mut self.aqm {
            FlowAqm::Cobalt(c) => c,
            _ => unreachable!("a COBALT step on a queue without COBALT"),
        }
    }
}

/// Why a queue discipline dropped a packet it held (the port logs it as
/// `overflow` or `early_drop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QdiscDrop {
    /// The buffer was over its limit.
    Overflow,
    /// The discipline's AQM signalled.
    Early,
}

/// How a packet was marked here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FqMark {
    Codel,
    Pie,
    Cobalt,
    CeThreshold,
}

impl FqMark {
    /// Its label in a replay.
    pub fn name(self) -> &'static str {
        match self {
            FqMark::Codel => "codel",
            FqMark::Pie => "pie",
            FqMark::Cobalt => "cobalt",
            FqMark::CeThreshold => "ce_threshold",
        }
    }
}

/// SplitMix64's finaliser: the hash's mixing and the random draws'.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Entries of COBALT's table of 1/sqrt(count) (`REC_INV_SQRT_CACHE`).
const INV_SQRT_CACHE: usize = 16;

/// One Newton step towards 1/sqrt(count) in 2^32 fixed point
/// (`cobalt_newton_step()`).
fn newton_step(rec_inv_sqrt: u32, count: u32) -> u32 {
    let invsqrt = rec_inv_sqrt as u64;
    let invsqrt2 = (invsqrt * invsqrt) >> 32;
    let mut val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2);
    val >>= 2;
    ((val * invsqrt) >> (32 - 2 + 1)) as u32
}

/// The first [`INV_SQRT_CACHE`] values, four Newton steps each from the
/// previous (`cobalt_cache_init()`).
fn inv_sqrt_cache() -> [u32; INV_SQRT_CACHE] {
    let mut cache = [u32::MAX; INV_SQRT_CACHE];
    let mut r = u32::MAX;
    for (count, c) in cache.iter_mut().enumerate().skip(1) {
        for _ in 0..4 {
            r = newton_step(r, count as u32);
        }
        *c = r;
    }
    cache
}

/// A flow-queuing discipline of one port.
#[derive(Debug)]
pub struct Fq {
    p: FqParams,
    /// The hash's perturbation (from the run's seed).
    perturb: u64,
    /// SplitMix64 state of the random draws.
    draws: u64,
    inv_sqrt: [u32; INV_SQRT_CACHE],
    /// CoDel's target and interval (zero without CoDel).
    codel_target: SimTime,
    codel_interval: SimTime,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    packets: usize,
    bytes: u64,
    /// Packets dropped by the last enqueue or dequeue, in order.
    dropped: Vec<(Queued, QdiscDrop)>,
}

impl Fq {
    /// An empty discipline; `perturb` salts the hash, `seed` starts the
    /// random draws.
    pub fn new(p: FqParams, perturb: u64, seed: u64) -> Fq {
        let queues = (0..p.flows).map(|_| FlowQueue::new(&p.aqm)).collect();
        let (codel_target, codel_interval) = match p.aqm {
            FlowAqmParams::Codel { target, interval } => (target, interval),
            _ => (SimTime::ZERO, SimTime::ZERO),
        };
        Fq {
            p,
            perturb,
            draws: seed,
            inv_sqrt: inv_sqrt_cache(),
            codel_target,
            codel_interval,
            queues,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            dropped: Vec::new(),
        }
    }

    pub fn params(&self) -> &FqParams {
        &self.p
    }

    /// The lengths of the new and old flow lists (as Linux's `tc -s`
    /// gives them); with one queue (`cobalt`, or `flows = 1`), that
    /// queue's AQM instead: CoDel's and COBALT's drop count of the current
    /// dropping state, BLUE's probability, PIE's probability and delay.
    pub fn probe(&self, put: &mut Probe) {
        if self.queues.len() != 1 {
            put("aqm_new_flows", self.new_flows.len() as f64);
            put("aqm_old_flows", self.old_flows.len() as f64);
            return;
        }
        let q = &self.queues[0];
        match &q.aqm {
            FlowAqm::Codel => put("aqm_count", q.codel.count as f64),
            FlowAqm::Pie(pie) => pie.probe(put),
            FlowAqm::Cobalt(c) => {
                put("aqm_count", c.count as f64);
                put("aqm_prob", c.p_drop);
            }
        }
    }

    /// The next uniform draw in [0, 1): SplitMix64, its top 53 bits.
    fn draw(&mut self) -> f64 {
        self.draws = self.draws.wrapping_add(0x9e37_79b9_7f4a_7c15);
        (mix64(self.draws) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The flow queue `pkt` hashes to: its flow and direction, mixed with
    /// the perturbation (SplitMix64's finaliser), scaled to `flows` as
    /// Linux's `reciprocal_scale()`.
    pub fn bucket_of(&self, pkt: &Packet) -> u32 {
        let key = (pkt.flow.0 as u64) << 32 ^ (pkt.src.0 as u64) << 16 ^ pkt.dst.0 as u64;
        let z = mix64(key ^ self.perturb);
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

    /// The period of the AQM's updates, if it has any (PIE).
    pub fn update_interval(&self) -> Option<SimTime> {
        match &self.p.aqm {
            FlowAqmParams::Pie(p) => Some(p.t_update),
            _ => None,
        }
    }

    /// PIE's periodic update on every queue (`fq_pie_timer()`), with the
    /// queue's own backlog; a queue at rest (empty, probability and delays
    /// zero, burst allowance full) stays so and is skipped.
    pub fn update(&mut self) {
        for fq in &mut self.queues {
            if let FlowAqm::Pie(pie) = &mut fq.aqm {
                if fq.q.is_empty() && pie.at_rest() {
                    continue;
                }
                let view = QueueView {
                    q_packets: fq.q.len() as u32,
                    q_bytes: fq.backlog,
                    ..QueueView::default()
                };
                pie.on_timer(&view);
            }
        }
    }

    /// Add `q` to flow queue `bucket` (see [`take_dropped`](Self::take_dropped)
    /// for what this drops, the arrival or others); returns how the arrival
    /// was marked, if it was.
    pub fn enqueue(&mut self, bucket: u32, mut q: Queued, limit: BufferLimit) -> Option<FqMark> {
        let now = q.enqueued_at;
        if self.p.overflow == Overflow::Tail {
            let full = match limit {
                BufferLimit::Packets(n) => self.packets >= n as usize,
                BufferLimit::Bytes(b) => self.bytes + q.pkt.size as u64 > b,
            };
            if full {
                if let FlowAqm::Cobalt(_) = self.queues[bucket as usize].aqm {
                    self.cobalt_queue_full(bucket as usize, now);
                }
                self.dropped.push((q, QdiscDrop::Overflow));
                return None;
            }
        }
        let mut mark = None;
        if let FlowAqm::Pie(_) = self.queues[bucket as usize].aqm {
            let u = self.draw();
            let fq = &mut self.queues[bucket as usize];
            let FlowAqm::Pie(pie) = &mut fq.aqm else {
                unreachable!()
            };
            let view = QueueView {
                q_packets: fq.q.len() as u32,
                q_bytes: fq.backlog,
                ..QueueView::default()
            };
            let meta = PacketMeta::of(&q.pkt);
            match Outcome::of(
                pie.on_arrival(now, meta, &view, u),
                self.p.ecn,
                meta.ecn_capable,
            ) {
                Outcome::Passed => {}
                Outcome::Marked(_) => {
                    q.pkt.flags |= flags::CE;
                    mark = Some(FqMark::Pie);
                }
                Outcome::Dropped(_) => {
                    self.dropped.push((q, QdiscDrop::Early));
                    return None;
                }
            }
        }
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
            // A marked arrival that the batch took is a drop, not a mark.
            if mark.is_some() && self.dropped.iter().any(|(d, _)| d.index == q.index) {
                mark = None;
            }
        }
        mark
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
        // As Linux's FQ-CoDel: the queue's CoDel signals harder too. (ns-3's
        // FQ-COBALT tells its COBALT nothing of a batch drop; nor does
        // FQ-PIE.)
        let fq = &mut self.queues[fattest];
        if let FlowAqm::Codel = fq.aqm {
            fq.codel.count = fq.codel.count.wrapping_add(n);
        }
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
    /// how it was marked; the AQM's drops on the way are in
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
            match self.flow_dequeue(b as usize, now) {
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

    /// Queue `b`'s next packet under its AQM, then the `ce_threshold` mark.
    fn flow_dequeue(&mut self, b: usize, now: SimTime) -> Option<(Queued, Option<FqMark>)> {
        let (mut q, mark) = match self.queues[b].aqm {
            FlowAqm::Codel => self.codel_dequeue(b, now)?,
            FlowAqm::Cobalt(_) => self.cobalt_dequeue(b, now)?,
            FlowAqm::Pie(_) => {
                let q = self.pop(b)?;
                let fq = &mut self.queues[b];
                let view = QueueView {
                    q_packets: fq.q.len() as u32,
                    q_bytes: fq.backlog,
                    ..QueueView::default()
                };
                if let FlowAqm::Pie(pie) = &mut fq.aqm {
                    pie.on_departure(now - q.enqueued_at, &view);
                }
                (q, None)
            }
        };
        if mark.is_some() {
            return Some((q, mark));
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

    fn codel_params(&self) -> (SimTime, SimTime) {
        (self.codel_target, self.codel_interval)
    }

    /// RFC 8289 `dodequeue()` on queue `b`: its head, and whether CoDel may
    /// drop it. (Inlined: FQ-CoDel's dequeue calls it for every packet.)
    #[inline(always)]
    fn dodequeue(&mut self, b: usize, now: SimTime) -> Option<(Queued, bool)> {
        let Some(q) = self.pop(b) else {
            self.queues[b].codel.first_above = None;
            return None;
        };
        let (target, interval) = self.codel_params();
        let (mtu, bytes) = (self.p.mtu, self.bytes);
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
        let (_, interval) = self.codel_params();
        let step = interval.ns() as f64 / (count.max(1) as f64).sqrt();
        t + SimTime::from_ns_f64(step)
    }

    /// RFC 8289 `dequeue()` on queue `b`, with Linux's ECN marking
    /// (`codel_dequeue()`).
    fn codel_dequeue(&mut self, b: usize, now: SimTime) -> Option<(Queued, Option<FqMark>)> {
        let Some((mut q, ok)) = self.dodequeue(b, now) else {
            self.queues[b].codel.dropping = false;
            return None;
        };
        let mut marked = false;
        let (_, interval) = self.codel_params();
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
        Some((q, marked.then_some(FqMark::Codel)))
    }

    fn cobalt_params(&self) -> &CobaltParams {
        match &self.p.aqm {
            FlowAqmParams::Cobalt(p) => p,
            _ => unreachable!("COBALT's parameters of a queue without COBALT"),
        }
    }

    /// 1/sqrt(count) for queue `b`'s COBALT (`cobalt_invsqrt()`).
    fn cobalt_invsqrt(&mut self, b: usize) {
        let cache = self.inv_sqrt;
        let c = self.queues[b].cobalt();
        c.rec_inv_sqrt = match cache.get(c.count as usize) {
            Some(&r) => r,
            None => newton_step(c.rec_inv_sqrt, c.count),
        };
    }

    /// `t + interval / sqrt(count)` in fixed point (`cobalt_control()`).
    fn cobalt_control(&self, t: i64, rec_inv_sqrt: u32) -> i64 {
        let interval = self.cobalt_params().interval.ns() as u128;
        t + ((interval * rec_inv_sqrt as u128) >> 32) as i64
    }

    /// A step of COBALT's drop-next schedule on queue `b`: 1/sqrt(count)
    /// anew, and `drop_next` moved on by the control law.
    fn cobalt_advance(&mut self, b: usize) {
        self.cobalt_invsqrt(b);
        let c = *self.queues[b].cobalt();
        self.queues[b].cobalt().drop_next = self.cobalt_control(c.drop_next, c.rec_inv_sqrt);
    }

    /// Queue `b` overflowed (`cobalt_queue_full()`).
    fn cobalt_queue_full(&mut self, b: usize, now: SimTime) {
        let now = now.ns() as i64;
        let (target, p_inc) = {
            let p = self.cobalt_params();
            (p.target.ns() as i64, p.p_inc)
        };
        let c = self.queues[b].cobalt();
        if now - c.blue_timer > target {
            c.p_drop = (c.p_drop + p_inc).min(1.0);
            c.blue_timer = now;
        }
        c.dropping = true;
        c.drop_next = now;
        if c.count == 0 {
            c.count = 1;
        }
    }

    /// Queue `b` was found empty (`cobalt_queue_empty()`).
    fn cobalt_queue_empty(&mut self, b: usize, now: SimTime) {
        let now = now.ns() as i64;
        let (target, p_dec) = {
            let p = self.cobalt_params();
            (p.target.ns() as i64, p.p_dec)
        };
        let c = self.queues[b].cobalt();
        if c.p_drop > 0.0 && now - c.blue_timer > target {
            c.p_drop = (c.p_drop - p_dec).max(0.0);
            c.blue_timer = now;
        }
        c.dropping = false;
        if c.count > 0 && now - c.drop_next >= 0 {
            c.count -= 1;
            self.cobalt_advance(b);
        }
    }

    /// COBALT's verdict on `q`, just taken from queue `b`
    /// (`cobalt_should_drop()`): whether to drop it; a CoDel signal on an
    /// ECN-capable packet with ECN on marks it instead (and says so).
    fn cobalt_should_drop(&mut self, b: usize, q: &mut Queued, now: SimTime) -> (bool, bool) {
        let p = *self.cobalt_params();
        let sojourn = (now - q.enqueued_at).ns() as i64;
        let now = now.ns() as i64;
        let c = *self.queues[b].cobalt();
        let mut schedule = now - c.drop_next;
        let over_target = sojourn > p.target.ns() as i64;
        let mut next_due = c.count > 0 && schedule >= 0;
        let (mut drop, mut marked) = (false, false);
        if over_target {
            if !c.dropping {
                let next = self.cobalt_control(now, c.rec_inv_sqrt);
                let c = self.queues[b].cobalt();
                c.dropping = true;
                c.drop_next = next;
            }
            let c = self.queues[b].cobalt();
            if c.count == 0 {
                c.count = 1;
            }
        } else {
            self.queues[b].cobalt().dropping = false;
        }
        if next_due && self.queues[b].cobalt().dropping {
            if self.p.ecn && q.pkt.ecn_capable() {
                q.pkt.flags |= flags::CE;
                marked = true;
            } else {
                drop = true;
            }
            let c = self.queues[b].cobalt();
            c.count = c.count.saturating_add(1);
            self.cobalt_advance(b);
            schedule = now - self.queues[b].cobalt().drop_next;
        } else {
            while next_due {
                self.queues[b].cobalt().count -= 1;
                self.cobalt_advance(b);
                let c = self.queues[b].cobalt();
                schedule = now - c.drop_next;
                next_due = c.count > 0 && schedule >= 0;
            }
        }
        let c = self.queues[b].cobalt();
        if sojourn > p.blue_threshold.ns() as i64 && now - c.blue_timer > p.target.ns() as i64 {
            c.p_drop = (c.p_drop + p.p_inc).min(1.0);
            c.blue_timer = now;
        }
        if c.p_drop > 0.0 && !drop {
            let p_drop = c.p_drop;
            drop = self.draw() < p_drop;
        }
        // `drop_next` doubles as an activity timeout.
        let c = self.queues[b].cobalt();
        if c.count == 0 {
            c.drop_next = now + p.interval.ns() as i64;
        } else if schedule > 0 && !drop {
            c.drop_next = now;
        }
        (drop, marked && !drop)
    }

    /// Queue `b`'s next packet under COBALT; what it drops on the way is
    /// in [`take_dropped`](Self::take_dropped).
    fn cobalt_dequeue(&mut self, b: usize, now: SimTime) -> Option<(Queued, Option<FqMark>)> {
        loop {
            let Some(mut q) = self.pop(b) else {
                self.cobalt_queue_empty(b, now);
                return None;
            };
            let (drop, marked) = self.cobalt_should_drop(b, &mut q, now);
            if drop {
                self.dropped.push((q, QdiscDrop::Early));
                continue;
            }
            return Some((q, marked.then_some(FqMark::Cobalt)));
        }
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
        let fq = Fq::new(FqParams::default(), 1, 0);
        let other = Fq::new(FqParams::default(), 2, 0);
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
        let mut fq = Fq::new(FqParams::default(), 0, 0);
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

    fn cobalt(flows: u32, overflow: Overflow, ecn: bool) -> Fq {
        let p = FqParams {
            flows,
            overflow,
            ecn,
            aqm: FlowAqmParams::Cobalt(CobaltParams::default()),
            ..FqParams::default()
        };
        Fq::new(p, 0, 0)
    }

    #[test]
    fn cobalts_fixed_point_inverse_square_roots_are_close() {
        let cache = inv_sqrt_cache();
        assert_eq!(cache[0], u32::MAX);
        for (count, &r) in cache.iter().enumerate().skip(1) {
            let exact = 1.0 / (count as f64).sqrt();
            let got = r as f64 / 4_294_967_296.0;
            // Four Newton steps from the previous entry: within 0.1 %.
            assert!(
                (got - exact).abs() < 1e-3 * exact,
                "{count}: {got} vs {exact}"
            );
        }
        // Past the table, one Newton step a count keeps it close.
        let mut r = cache[15];
        for count in 16..200u32 {
            r = newton_step(r, count);
            let exact = 1.0 / (count as f64).sqrt();
            assert!(
                (r as f64 / 4_294_967_296.0 - exact).abs() < 1e-2 * exact,
                "{count}"
            );
        }
    }

    /// Serve one packet of queue 0 every `gap` from `t`, each having waited
    /// `wait`, topping the queue up first: the times of COBALT's drops.
    fn cobalt_drop_times(
        fq: &mut Fq,
        t: &mut SimTime,
        wait: SimTime,
        gap: SimTime,
        n: usize,
    ) -> Vec<SimTime> {
        let mut drops = Vec::new();
        let limit = BufferLimit::Packets(1000);
        for i in 0..n {
            while fq.len() < 4 {
                let mut q = pkt(0, 1500);
                q.index = i as u64;
                q.enqueued_at = *t - wait;
                fq.enqueue(0, q, limit);
            }
            fq.dequeue(*t);
            drops.extend(fq.take_dropped().map(|_| *t));
            *t += gap;
        }
        drops
    }

    #[test]
    fn cobalt_drops_an_interval_after_the_delay_stays_above_target_then_faster() {
        let mut fq = cobalt(1, Overflow::Tail, false);
        let gap = SimTime::from_ms(1);
        let mut t = SimTime::from_ms(500);
        // Below target: no drops (and `drop_next` an interval ahead).
        assert!(cobalt_drop_times(&mut fq, &mut t, SimTime::from_ms(1), gap, 500).is_empty());
        let drops = cobalt_drop_times(&mut fq, &mut t, SimTime::from_ms(20), gap, 400);
        // The first an interval (100 ms) after the first late packet left
        // (at 1,003 ms, behind three early ones); the next ones at
        // interval/sqrt(count).
        assert_eq!(drops[0], SimTime::from_ms(1103));
        let steps: Vec<u64> = drops
            .windows(2)
            .map(|w| (w[1] - w[0]).ns() / 1_000_000)
            .collect();
        assert_eq!(&steps[..4], &[71, 58, 50, 45]);
        // Below target, no drops, and the count winds down.
        let calm = cobalt_drop_times(&mut fq, &mut t, SimTime::from_ms(1), gap, 2000);
        assert!(calm.is_empty());
        let FlowAqm::Cobalt(c) = fq.queues[0].aqm else {
            unreachable!()
        };
        assert_eq!(c.count, 0);
    }

    #[test]
    fn cobalt_marks_ecn_capable_packets_instead() {
        let mut fq = cobalt(1, Overflow::Tail, true);
        let limit = BufferLimit::Packets(1000);
        let mut t = SimTime::from_ms(500);
        let mut marks = 0;
        for i in 0..900 {
            let mut q = pkt(0, 1500);
            q.index = i;
            q.pkt.flags = flags::ECT;
            let wait = if i < 500 { 1 } else { 20 };
            q.enqueued_at = t - SimTime::from_ms(wait);
            fq.enqueue(0, q, limit);
            let (q, mark) = fq.dequeue(t).unwrap();
            if mark == Some(FqMark::Cobalt) {
                assert!(q.pkt.has(flags::CE));
                marks += 1;
            }
            t += SimTime::from_ms(1);
        }
        assert_eq!(fq.take_dropped().count(), 0);
        // The same schedule as the drops above: 1,100, 1,171, 1,229, 1,279,
        // 1,324 and 1,365 ms.
        assert_eq!(marks, 6);
    }

    #[test]
    fn blue_rises_on_overflow_at_most_once_a_target_and_falls_when_empty() {
        let mut fq = cobalt(1, Overflow::Tail, false);
        let limit = BufferLimit::Packets(2);
        let p_drop = |fq: &Fq| match fq.queues[0].aqm {
            FlowAqm::Cobalt(c) => c.p_drop,
            _ => unreachable!(),
        };
        let t0 = SimTime::from_ms(100);
        for i in 0..5u64 {
            let mut q = pkt(0, 1500);
            q.enqueued_at = t0 + SimTime::from_ms(i);
            fq.enqueue(0, q, limit);
        }
        // Three overflows within 5 ms: one step up.
        assert_eq!(fq.take_dropped().count(), 3);
        assert_eq!(p_drop(&fq), 1.0 / 256.0);
        let mut q = pkt(0, 1500);
        q.enqueued_at = t0 + SimTime::from_ms(20);
        fq.enqueue(0, q, limit);
        assert_eq!(p_drop(&fq), 2.0 / 256.0);
        // Served until found empty, over `target` after the last step up:
        // one step down.
        while fq.dequeue(t0 + SimTime::from_ms(30)).is_some() {}
        assert_eq!(p_drop(&fq), 2.0 / 256.0 - 1.0 / 4096.0);
    }

    #[test]
    fn fq_pie_drops_early_only_in_a_backlogged_queue_and_drops_arrivals_when_full() {
        let pie = PieParams {
            target: SimTime::from_ms(15),
            t_update: SimTime::from_ms(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: SimTime::ZERO,
            mean_packet_size: 1500.0,
            mark_ecn_threshold: 0.1,
        };
        let p = FqParams {
            flows: 4,
            overflow: Overflow::Tail,
            aqm: FlowAqmParams::Pie(pie),
            ..FqParams::default()
        };
        let mut fq = Fq::new(p, 0, 3);
        assert_eq!(fq.update_interval(), Some(SimTime::from_ms(15)));
        let limit = BufferLimit::Packets(1000);
        let mut t = SimTime::ZERO;
        let (mut early_fat, mut early_thin, mut full) = (0, 0, 0);
        for i in 0..4000u64 {
            // Queue 1 gets two packets per departure, queue 2 one every
            // other departure: queue 1 grows, queue 2 stays short.
            for b in [1, 1, 2] {
                if b == 2 && i % 2 == 1 {
                    continue;
                }
                let mut q = pkt(b, 1500);
                q.index = i;
                q.enqueued_at = t;
                fq.enqueue(b, q, limit);
                for (q, why) in fq.take_dropped() {
                    match (why, q.pkt.flow.0) {
                        (QdiscDrop::Overflow, _) => full += 1,
                        (QdiscDrop::Early, 1) => early_fat += 1,
                        (QdiscDrop::Early, _) => early_thin += 1,
                    }
                }
            }
            fq.dequeue(t);
            t += SimTime::from_ms(1);
            if i % 15 == 14 {
                fq.update();
            }
        }
        assert!(early_fat > 500, "{early_fat}");
        assert_eq!(early_thin, 0);
        // PIE keeps queue 1 near its target, well below the limit.
        assert_eq!(full, 0);
        // Over the limit, the arrival is dropped (Linux's FQ-PIE).
        let mut fq = Fq::new(
            FqParams {
                flows: 2,
                ..fq.p.clone()
            },
            0,
            3,
        );
        for i in 0..3 {
            let mut q = pkt(0, 1500);
            q.index = i;
            fq.enqueue(0, q, BufferLimit::Packets(2));
        }
        let gone: Vec<u64> = fq.take_dropped().map(|(q, _)| q.index).collect();
        assert_eq!(gone, vec![2]);
    }

    #[test]
    fn an_overflow_drops_from_the_fattest_queue_head() {
        let mut fq = Fq::new(FqParams::default(), 0, 0);
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
            which in 0u8..3,
            tail in any::<bool>(),
        ) {
            let (target, interval) = (SimTime::from_ms(1), SimTime::from_ms(10));
            let aqm = match which {
                0 => FlowAqmParams::Codel { target, interval },
                1 => FlowAqmParams::Pie(PieParams {
                    target,
                    t_update: SimTime::from_ms(1),
                    alpha: 0.125,
                    beta: 1.25,
                    max_burst: SimTime::from_ms(2),
                    mean_packet_size: 500.0,
                    mark_ecn_threshold: 0.1,
                }),
                _ => FlowAqmParams::Cobalt(CobaltParams {
                    target,
                    interval,
                    p_inc: 0.1,
                    blue_threshold: SimTime::from_ms(3),
                    ..CobaltParams::default()
                }),
            };
            let p = FqParams {
                flows: 8,
                aqm,
                overflow: if tail { Overflow::Tail } else { Overflow::Fattest },
                ecn,
                ce_threshold: Some(SimTime::from_ms(2)),
                ..FqParams::default()
            };
            let mut fq = Fq::new(p, 7, 0);
            let mut next_update = SimTime::ZERO;
            let mut now = SimTime::ZERO;
            let mut seen = vec![0u8; ops.len()];
            let mut last_sent = [None::<u64>; 8];
            let (mut sent, mut dropped) = (0usize, 0usize);
            for (i, &(enq, bucket, size, codepoint, gap)) in ops.iter().enumerate() {
                now += SimTime(gap);
                while next_update <= now {
                    fq.update();
                    next_update += SimTime::from_ms(1);
                }
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
