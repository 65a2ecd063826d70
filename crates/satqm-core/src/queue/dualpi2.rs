//! DualPI2: the dual-queue coupled AQM of L4S (RFC 9332), as a queue
//! discipline of its own.
//!
//! Packets marked ECT(1) or CE join the L queue, the others the C (classic)
//! queue. A PI2 controller updates a base probability p' every `tupdate`
//! from the larger head-of-queue delay of the two queues; the classic queue
//! drops (or marks) with p' squared, the L queue marks with k·p' or, if
//! larger, with its own ramp on its packets' sojourn (RFC 9332 Appendix A).
//! When k·p' saturates, L packets are dropped with p'² too and classic ECN
//! packets are dropped instead of marked (A.2's overload handling). The
//! signals are decided by the RFC's deterministic `recur()` per queue, and
//! the scheduler is a time-shifted FIFO (L is served when its head has
//! waited longer than the classic head minus `tshift`) or Linux
//! `sch_dualpi2.c`'s weighted round robin.
//!
//! With `single_queue` it is the single-queue coupled PI2 (De Schepper et
//! al., "PI2: A linearized AQM for both classic and scalable TCP", CoNEXT
//! 2016; RFC 9332 §2.4's PI2 "in a single queue"): every packet waits in
//! one FIFO under the same controller; a scalable packet (ECT(1) or CE) is
//! marked with k·p' (no ramp of its own), a classic one dropped or marked
//! with p'², as in the dual queue.
//!
//! Probabilities are fixed-point integers in units of 2^-32, so results do
//! not depend on floating-point rounding (the oracle,
//! `tests/oracles/dualpi2.py`, carries the full specification).

use std::collections::VecDeque;

use super::{BufferLimit, QdiscDrop, Queued};
use crate::aqm::Probe;
use crate::packet::flags;
use crate::time::SimTime;

/// Probability one.
const ONE: u64 = 1 << 32;

/// Which queue the scheduler serves next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DualScheduler {
    /// Time-shifted FIFO (RFC 9332): L when its head's sojourn plus
    /// `tshift` exceeds the classic head's.
    TimeShiftedFifo,
    /// Linux's weighted round robin by byte credit, `classic_protection`
    /// percent to the classic queue.
    Wrr,
}

/// DualPI2's parameters, defaults from RFC 9332 Appendix A.1.
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Params {
    pub target: SimTime,
    pub tupdate: SimTime,
    /// PI2 gains, Hz.
    pub alpha: f64,
    pub beta: f64,
    /// Coupling factor.
    pub k: f64,
    /// The L queue's ramp: from `min_th` over `range` of sojourn.
    pub min_th: SimTime,
    pub range: SimTime,
    /// No native L mark while the L queue holds at most this many packets.
    pub th_len: u32,
    pub p_lmax: f64,
    pub tshift: SimTime,
    pub scheduler: DualScheduler,
    /// `Wrr`: the classic queue's weight, percent.
    pub classic_protection: u32,
    /// `Wrr`: the credit unit, bytes.
    pub mtu: u32,
    /// One FIFO for all packets: the single-queue coupled PI2 (`kind =
    /// "pi2"`).
    pub single_queue: bool,
}

/// The DualPI2 discipline of one port.
#[derive(Debug)]
pub struct DualPi2 {
    l: VecDeque<Queued>,
    c: VecDeque<Queued>,
    packets: usize,
    bytes: u64,
    /// p', units of 2^-32.
    p: u64,
    prevq: u64,
    count_l: u64,
    count_c: u64,
    credit: i64,
    credit_init: i64,
    alpha_q: i128,
    beta_q: i128,
    k_q: u128,
    p_lmax_q: u64,
    p_cmax_q: u64,
    target: u64,
    min_th: u64,
    range: u64,
    th_len: usize,
    tshift: u64,
    wrr: bool,
    wc: i64,
    wl: i64,
    tupdate: SimTime,
    single_queue: bool,
    dropped: Vec<(Queued, QdiscDrop)>,
}

/// Round half away from zero, to an integer.
fn round_q(x: f64) -> i128 {
    x.round() as i128
}

impl DualPi2 {
    pub fn new(p: &DualPi2Params) -> DualPi2 {
        let wc = p.classic_protection as i64;
        let wl = 100 - wc;
        let credit_init = p.mtu as i64 * (wc - wl);
        DualPi2 {
            l: VecDeque::new(),
            c: VecDeque::new(),
            packets: 0,
            bytes: 0,
            p: 0,
            prevq: 0,
            count_l: 0,
            count_c: 0,
            credit: credit_init,
            credit_init,
            alpha_q: round_q(p.alpha * (1u64 << 48) as f64 / 1e9),
            beta_q: round_q(p.beta * (1u64 << 48) as f64 / 1e9),
            k_q: round_q(p.k * 65536.0) as u128,
            p_lmax_q: round_q(p.p_lmax * ONE as f64) as u64,
            p_cmax_q: round_q((1.0 / (p.k * p.k)).min(1.0) * ONE as f64) as u64,
            target: p.target.ns(),
            min_th: p.min_th.ns(),
            range: p.range.ns(),
            th_len: p.th_len as usize,
            tshift: p.tshift.ns(),
            wrr: p.scheduler == DualScheduler::Wrr,
            wc,
            wl,
            tupdate: p.tupdate,
            single_queue: p.single_queue,
            dropped: Vec::new(),
        }
    }

    /// The controller's period.
    pub fn tupdate(&self) -> SimTime {
        self.tupdate
    }

    pub fn len(&self) -> usize {
        self.packets
    }

    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }

    /// p', in units of 2^-32.
    pub fn base_probability(&self) -> u64 {
        self.p
    }

    /// The base probability p', the classic queue's drop or mark
    /// probability p'² and the coupled L4S probability k·p' (RFC 9332
    /// §2.4; the last two capped at 1), and each queue's length, packets.
    pub fn probe(&self, put: &mut Probe) {
        let frac = |p: u64| p as f64 / ONE as f64;
        put("aqm_prob", frac(self.p));
        put("aqm_p_c", frac(self.p_c()));
        put("aqm_p_cl", frac(self.p_cl()));
        put("aqm_l_packets", self.l.len() as f64);
        put("aqm_c_packets", self.c.len() as f64);
    }

    pub fn take_dropped(&mut self) -> std::vec::Drain<'_, (Queued, QdiscDrop)> {
        self.dropped.drain(..)
    }

    fn p_cl(&self) -> u64 {
        ((self.k_q * self.p as u128) >> 16).min(ONE as u128) as u64
    }

    fn p_c(&self) -> u64 {
        ((self.p as u128 * self.p as u128) >> 32) as u64
    }

    /// RFC 9332 `dualpi2_update`: the PI2 step from the larger head delay.
    pub fn update(&mut self, now: SimTime) {
        let head = |q: &VecDeque<Queued>| q.front().map_or(0, |h| (now - h.enqueued_at).ns());
        let curq = head(&self.c).max(head(&self.l));
        let delta = self.alpha_q * (curq as i128 - self.target as i128)
            + self.beta_q * (curq as i128 - self.prevq as i128);
        let step = delta / 65536;
        self.p = (self.p as i128 + step).clamp(0, ONE as i128) as u64;
        self.prevq = curq;
    }

    /// Add a packet to its queue by its ECN codepoint, unless the buffer is
    /// full (then it is dropped: see [`take_dropped`](Self::take_dropped)).
    pub fn enqueue(&mut self, q: Queued, limit: BufferLimit) {
        let full = match limit {
            BufferLimit::Packets(n) => self.packets >= n as usize,
            BufferLimit::Bytes(b) => self.bytes + q.pkt.size as u64 > b,
        };
        if full {
            self.dropped.push((q, QdiscDrop::Overflow));
            return;
        }
        self.packets += 1;
        self.bytes += q.pkt.size as u64;
        if !self.single_queue && Self::scalable(&q) {
            self.l.push_back(q);
        } else {
            self.c.push_back(q);
        }
    }

    /// Whether `q` is an L4S packet (ECT(1) or CE).
    fn scalable(q: &Queued) -> bool {
        q.pkt.has(flags::ECT1) || q.pkt.has(flags::CE)
    }

    /// `recur()`: a deterministic signal at `likelihood`.
    fn recur(count: &mut u64, likelihood: u64) -> bool {
        *count += likelihood;
        if *count > ONE {
            *count -= ONE;
            true
        } else {
            false
        }
    }

    /// The L queue's own ramp on a packet's sojourn, `n` packets queued.
    fn laqm(&self, qdelay: u64, n: usize) -> u64 {
        if n <= self.th_len {
            0
        } else if qdelay >= self.min_th + self.range {
            ONE
        } else if qdelay > self.min_th {
            ((qdelay - self.min_th) as u128 * ONE as u128 / self.range as u128) as u64
        } else {
            0
        }
    }

    /// The queue to serve (true: L) and, for `Wrr`, the credit change if
    /// the packet is sent.
    fn schedule(&self, now: SimTime) -> (bool, i64) {
        let (l, c) = (self.l.front(), self.c.front());
        if self.wrr {
            return match (l, c) {
                (Some(h), Some(_)) if self.credit <= 0 => (true, self.wc * h.pkt.size as i64),
                (Some(_), None) => (true, 0),
                (_, Some(h)) => (
                    false,
                    if l.is_some() {
                        -self.wl * h.pkt.size as i64
                    } else {
                        0
                    },
                ),
                (None, None) => unreachable!("schedule on an empty discipline"),
            };
        }
        match (l, c) {
            (Some(_), None) => (true, 0),
            (None, Some(_)) => (false, 0),
            (Some(lh), Some(ch)) => {
                let (ls, cs) = ((now - lh.enqueued_at).ns(), (now - ch.enqueued_at).ns());
                (ls + self.tshift > cs, 0)
            }
            (None, None) => unreachable!("schedule on an empty discipline"),
        }
    }

    /// The next packet for the transmitter at `now` and its mark label
    /// (`"l4s"`, `"l4s_overload"`, `"classic"`); drops on the way are in
    /// [`take_dropped`](Self::take_dropped).
    pub fn dequeue(&mut self, now: SimTime) -> Option<(Queued, Option<&'static str>)> {
        while self.packets > 0 {
            let (from_l, credit_change) = self.schedule(now);
            let n = if from_l { self.l.len() } else { self.c.len() };
            let mut q = if from_l {
                self.l.pop_front()
            } else {
                self.c.pop_front()
            }
            .expect("the scheduler picks a non-empty queue");
            self.packets -= 1;
            self.bytes -= q.pkt.size as u64;
            let qdelay = (now - q.enqueued_at).ns();
            let (p_cl, p_c) = (self.p_cl(), self.p_c());
            let mut mark = None;
            // In the single queue, a scalable packet is judged as the L
            // queue's, with no ramp of its own.
            if from_l || (self.single_queue && Self::scalable(&q)) {
                if p_cl >= self.p_lmax_q {
                    if Self::recur(&mut self.count_l, p_c) {
                        self.dropped.push((q, QdiscDrop::Early));
                        continue;
                    }
                    if Self::recur(&mut self.count_l, p_cl) {
                        mark = Some("l4s_overload");
                    }
                } else {
                    let ramp = if from_l { self.laqm(qdelay, n) } else { 0 };
                    let p_l = ramp.max(p_cl);
                    if Self::recur(&mut self.count_l, p_l) {
                        mark = Some("l4s");
                    }
                }
            } else if Self::recur(&mut self.count_c, p_c) {
                if !q.pkt.ecn_capable() || p_c >= self.p_cmax_q {
                    self.dropped.push((q, QdiscDrop::Early));
                    continue;
                }
                mark = Some("classic");
            }
            if mark.is_some() {
                q.pkt.flags |= flags::CE;
            }
            self.credit += credit_change;
            return Some((q, mark));
        }
        self.credit = self.credit_init;
        None
    }
}
