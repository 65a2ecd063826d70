//! RED+Tail: the parallel virtual queue structure of Jou, Tan and Baras, "A
//! Parallel Virtual Queue Structure for Active Queue Management" (CSHCN TR
//! 2003-18). Not a single AQM but a queue structure: a classifier, a
//! drop-tail virtual queue and an Adaptive RED virtual queue sharing one
//! physical buffer, and a bandwidth split between them.
//!
//! `params.rs` reads the parameters of the whole structure; this file holds
//! the classifier and the Adaptive RED of virtual queue 2 with the dynamic thresholds of
//! Section V. Storage, the split and the scheduler are in
//! `queue::parallel`; the port (`net/port.rs`) asks for the class of each
//! arriving packet, and for a RED verdict on packets of the RED class.
//!
//! Dynamic thresholds (Section V), every `interval` (after Adaptive RED's
//! own `max_p` update), with `D = maxth2 - minth2` kept constant:
//!
//! ```text
//! P_d_avg > P_U:  minth2 <- minth2 (1 + gamma),  maxth2 <- minth2 + D
//! P_d_avg < P_L:  minth2 <- minth2 (1 - gamma),  maxth2 <- minth2 + D
//! ```
//!
//! `P_d_avg` is an EWMA, over the arrivals to the RED queue, of the
//! probability RED applied to each (`p_a`: 0 below `minth2`, 1 in the
//! forced region): its expectation is RED's drop rate. `maxth2` never
//! exceeds the physical buffer.

mod params;
#[cfg(test)]
mod tests;

pub use params::{Classifier, RedTailParams, Thresholds};

use super::ared::Ared;
use super::{PacketMeta, Probe, QueueView, Verdict};
use crate::ids::{FlowId, FlowKind};
use crate::queue::BufferLimit;
use crate::queue::VqClass;
use crate::time::SimTime;

/// Per-flow classifier state, indexed by flow id (grown as flows appear).
#[derive(Clone, Debug)]
enum ClassifierState {
    /// Cached class per flow: 0 unknown, 1 drop-tail, 2 RED.
    Kind {
        droptail_kinds: Vec<FlowKind>,
        cache: Vec<u8>,
    },
    Age {
        packets: u64,
        timeout: SimTime,
        count: Vec<u64>,
        last: Vec<SimTime>,
    },
}

#[derive(Clone, Debug)]
pub struct RedTail {
    ared: Ared,
    thresholds: Thresholds,
    /// `D = maxth2 - minth2`, packets.
    gap: f64,
    /// Largest `maxth2`: the physical buffer, in packets.
    cap: f64,
    w_p: f64,
    pd_avg: f64,
    classifier: ClassifierState,
}

impl RedTail {
    /// For a link of `rate_bps` whose port buffer is `limit`.
    pub fn new(p: &RedTailParams, rate_bps: u64, limit: BufferLimit) -> RedTail {
        let ared = Ared::new(&p.ared, rate_bps);
        let red = &ared.red().p;
        let cap = match limit {
            BufferLimit::Packets(n) => n as f64,
            BufferLimit::Bytes(b) => b as f64 / red.mean_packet_size,
        };
        let gap = red.max_th - red.min_th;
        let w_p = p.w_p.unwrap_or(red.w_q);
        let classifier = match &p.classifier {
            Classifier::Kind { droptail_kinds } => ClassifierState::Kind {
                droptail_kinds: droptail_kinds.clone(),
                cache: Vec::new(),
            },
            Classifier::Age { packets, timeout } => ClassifierState::Age {
                packets: *packets,
                timeout: *timeout,
                count: Vec::new(),
                last: Vec::new(),
            },
        };
        RedTail {
            ared,
            thresholds: p.thresholds,
            gap,
            cap,
            w_p,
            pd_avg: 0.0,
            classifier,
        }
    }

    /// Its Adaptive RED's automatic `w_q` follows the link's rate (the
    /// two virtual queues keep the rates they were split at; `w_p` keeps
    /// its value).
    pub fn set_link_rate(&mut self, rate_bps: u64) {
        self.ared.set_link_rate(rate_bps);
    }

    pub fn interval(&self) -> SimTime {
        self.ared.interval()
    }

    /// The virtual queue of a packet of `flow`, made by traffic of `kind`,
    /// arriving at `now`.
    pub fn classify(&mut self, now: SimTime, flow: FlowId, kind: FlowKind) -> VqClass {
        let f = flow.idx();
        match &mut self.classifier {
            ClassifierState::Kind {
                droptail_kinds,
                cache,
            } => {
                if f >= cache.len() {
                    cache.resize(f + 1, 0);
                }
                if cache[f] == 0 {
                    cache[f] = if droptail_kinds.contains(&kind) { 1 } else { 2 };
                }
                if cache[f] == 1 {
                    VqClass::DropTail
                } else {
                    VqClass::Red
                }
            }
            ClassifierState::Age {
                packets,
                timeout,
                count,
                last,
            } => {
                if f >= count.len() {
                    count.resize(f + 1, 0);
                    last.resize(f + 1, SimTime::ZERO);
                }
                if count[f] > 0 && now.saturating_sub(last[f]) > *timeout {
                    count[f] = 0;
                }
                count[f] += 1;
                last[f] = now;
                if count[f] > *packets {
                    VqClass::Red
                } else {
                    VqClass::DropTail
                }
            }
        }
    }

    /// Adaptive RED's verdict on a packet joining the RED virtual queue,
    /// whose view (before the packet joins) is `q`.
    pub fn red_arrival(&mut self, now: SimTime, pkt: PacketMeta, q: &QueueView, u: f64) -> Verdict {
        let v = self.ared.on_arrival(now, pkt, q, u);
        let p_a = self.ared.prob();
        self.pd_avg = (1.0 - self.w_p) * self.pd_avg + self.w_p * p_a;
        v
    }

    /// Every `interval`: Adaptive RED's `max_p`, then the thresholds.
    pub fn on_timer(&mut self, now: SimTime, q: &QueueView) {
        self.ared.on_timer(now, q);
        let Thresholds::Dynamic {
            p_low,
            p_high,
            gamma,
        } = self.thresholds
        else {
            return;
        };
        let p = &mut self.ared.red_mut().p;
        let mut min_th = p.min_th;
        if self.pd_avg > p_high {
            min_th *= 1.0 + gamma;
            let highest = (self.cap - self.gap).max(p.min_th);
            min_th = min_th.min(highest);
        } else if self.pd_avg < p_low {
            min_th *= 1.0 - gamma;
        }
        p.min_th = min_th;
        p.max_th = min_th + self.gap;
    }

    /// Current `(minth2, maxth2)`, packets.
    pub fn thresholds(&self) -> (f64, f64) {
        let p = &self.ared.red().p;
        (p.min_th, p.max_th)
    }

    pub fn pd_avg(&self) -> f64 {
        self.pd_avg
    }

    pub fn w_q(&self) -> f64 {
        self.ared.w_q()
    }

    /// The RED queue's Adaptive RED, its current thresholds (packets) and
    /// its average drop probability.
    pub fn probe(&self, put: &mut Probe) {
        self.ared.probe(put);
        let (min_th, max_th) = self.thresholds();
        put("aqm_min_th", min_th);
        put("aqm_max_th", max_th);
        put("aqm_pd_avg", self.pd_avg);
    }
}
