//! The ATSP sender: paces packets at `Theta / w` (eq. 3), reacts to each
//! SACK (eqs. 4 and 5, resending the reported losses without a rate cut)
//! and raises its window once per RTT cycle (eqs. 6 and 7).

use std::collections::VecDeque;

use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind};
use crate::time::SimTime;
use crate::transport::{Emit, RttStats};

use super::{increase, sack_rho, slowness, AtspConfig, Cut};

/// A packet waiting in the retransmission queue (its send time is then
/// meaningless).
const QUEUED: SimTime = SimTime(u64::MAX);

#[derive(Debug, Clone, Default)]
pub struct AtspStats {
    pub packets_sent: u64,
    pub retransmits: u64,
    pub sacks: u64,
    /// SACKs whose `rho` cut the window.
    pub cuts: u64,
    pub cycles: u64,
    pub rtt: RttStats,
}

#[derive(Debug, Clone)]
pub struct AtspSender {
    flow: FlowId,
    src: NodeId,
    dst: NodeId,
    pub cfg: AtspConfig,
    active: bool,
    /// The next new packet number.
    next_seq: u64,
    /// The lowest packet number not yet acknowledged in order.
    base: u64,
    /// Last transmission time of packets `base..next_seq`.
    sent_at: VecDeque<SimTime>,
    retx: VecDeque<u64>,
    /// Window `w`, packets per RTT.
    pub w: f64,
    /// Accumulated congestion `Lambda` of the current cycle.
    pub lambda: f64,
    /// The last measured RTT `Theta` (none before the first SACK).
    pub theta: Option<SimTime>,
    /// The current RTT cycle `k` and when it ends (none until the first
    /// RTT sample: cycle 0 ends at the first SACK).
    pub cycle: u64,
    cycle_end: Option<SimTime>,
    /// `rho` and cycle of the last SACK (for [`Cut::CycleBase`]).
    last_rho: f64,
    last_rho_cycle: u32,
    last_send: Option<SimTime>,
    next_send: SimTime,
    last_sack: SimTime,
    pub stats: AtspStats,
}

impl AtspSender {
    pub fn new(flow: FlowId, src: NodeId, dst: NodeId, cfg: AtspConfig) -> AtspSender {
        let w = (cfg.alpha as f64).min(cfg.w_max).max(cfg.w_min);
        AtspSender {
            flow,
            src,
            dst,
            cfg,
            active: false,
            next_seq: 0,
            base: 0,
            sent_at: VecDeque::new(),
            retx: VecDeque::new(),
            w,
            lambda: 0.0,
            theta: None,
            cycle: 0,
            cycle_end: None,
            last_rho: 0.0,
            last_rho_cycle: 0,
            last_send: None,
            next_send: SimTime::ZERO,
            last_sack: SimTime::ZERO,
            stats: AtspStats::default(),
        }
    }

    /// The application starts the transfer (unlimited data).
    pub fn start(&mut self, now: SimTime) {
        self.active = true;
        self.next_send = now;
        self.last_sack = now;
    }

    /// The application stops: nothing more is sent.
    pub fn stop(&mut self) {
        self.active = false;
    }

    /// Eq. 3: the spacing `s_k = Theta_k / w_k` (the initial RTT stands in
    /// for `Theta` until one is measured).
    pub fn spacing(&self) -> SimTime {
        let theta = self.theta.unwrap_or(self.cfg.initial_rtt);
        SimTime((theta.ns() as f64 / self.w).round().max(1.0) as u64)
    }

    pub fn next_wakeup(&self) -> Option<SimTime> {
        if !self.active {
            return None;
        }
        Some(match self.cycle_end {
            Some(e) => e.min(self.next_send),
            None => self.next_send,
        })
    }

    /// Packets sent and not yet acknowledged in order.
    pub fn outstanding(&self) -> u64 {
        self.next_seq - self.base
    }

    pub fn on_timer(&mut self, em: &mut Emit) {
        if !self.active {
            return;
        }
        let now = em.now;
        if self.cycle_end.is_some_and(|e| e <= now) {
            self.end_cycle(now);
        }
        if self.next_send <= now {
            self.send_one(em);
            self.next_send = now + self.spacing();
        }
    }

    /// One paced packet: the oldest reported loss first, else new data.
    fn send_one(&mut self, em: &mut Emit) {
        let mut seq = self.next_seq;
        let mut retx = false;
        while let Some(s) = self.retx.pop_front() {
            if s >= self.base {
                seq = s;
                retx = true;
                break;
            }
        }
        let mut p = em.packet(self.flow, self.src, self.dst, PacketKind::AtspData);
        p.size = self.cfg.packet_size;
        p.len = self.cfg.payload();
        p.seq = seq;
        p.ack = em.now.ns();
        p.rwnd = self.cycle;
        p.flags = flags::ECT;
        if retx {
            p.flags |= flags::RETX;
            self.stats.retransmits += 1;
            self.sent_at[(seq - self.base) as usize] = em.now;
        } else {
            self.next_seq += 1;
            self.sent_at.push_back(em.now);
        }
        self.stats.packets_sent += 1;
        self.last_send = Some(em.now);
        em.send(p);
    }

    /// A SACK: measure `Theta`, apply eqs. 4 and 5, queue the reported
    /// losses for resending (no rate cut), and end cycle 0 at the first
    /// one.
    pub fn on_sack(&mut self, pkt: &Packet, now: SimTime) {
        self.stats.sacks += 1;
        self.last_sack = now;
        let echo = SimTime(pkt.seq);
        let rtt = now - echo;
        self.theta = Some(rtt);
        self.note_rtt(rtt);
        self.acknowledge(pkt.ack);
        for &(a, b) in pkt.sack_blocks().iter() {
            self.queue_losses(a, b, echo);
        }
        let rho = sack_rho(pkt);
        self.lambda += rho;
        self.cut(rho, pkt.len);
        if self.cycle_end.is_none() && self.active {
            self.end_cycle(now);
        }
        // The new spacing applies from the last packet sent (not before
        // now).
        if let Some(t) = self.last_send {
            self.next_send = (t + self.spacing()).max(now);
        }
    }

    /// Eq. 5 under the configured reading of the cumulative `rho`.
    fn cut(&mut self, rho: f64, cycle: u32) {
        let factor = match self.cfg.cut {
            Cut::Compound => 1.0 - rho,
            Cut::CycleBase => {
                let prev = if cycle == self.last_rho_cycle {
                    self.last_rho
                } else {
                    0.0
                };
                self.last_rho = rho;
                self.last_rho_cycle = cycle;
                if prev >= 1.0 {
                    1.0 - rho
                } else {
                    (1.0 - rho) / (1.0 - prev)
                }
            }
        };
        if factor < 1.0 {
            self.stats.cuts += 1;
            self.w = (self.w * factor.max(0.0)).max(self.cfg.w_min);
        }
    }

    /// Everything below `ack` has arrived.
    fn acknowledge(&mut self, ack: u64) {
        let ack = ack.min(self.next_seq);
        while self.base < ack {
            self.sent_at.pop_front();
            self.base += 1;
        }
    }

    /// Packets `[a, b)` were missing when the SACK left: those last sent
    /// before the packet it echoes are lost (paths keep FIFO order) and
    /// are queued once.
    fn queue_losses(&mut self, a: u64, b: u64, echo: SimTime) {
        let (a, b) = (a.max(self.base), b.min(self.next_seq));
        for s in a..b {
            let t = &mut self.sent_at[(s - self.base) as usize];
            if *t != QUEUED && *t < echo {
                *t = QUEUED;
                self.retx.push_back(s);
            }
        }
    }

    /// End of RTT cycle `k`: eqs. 7 and 6, then `Lambda = 0` and the next
    /// cycle lasts the last measured RTT. Without any SACK for two
    /// expected SACK intervals the increase is skipped and the window
    /// falls back to at most `alpha`.
    fn end_cycle(&mut self, now: SimTime) {
        let c = &self.cfg;
        let theta = self.theta.unwrap_or(c.initial_rtt);
        let expected = theta + SimTime(self.spacing().ns() * c.alpha as u64);
        if now > self.last_sack + SimTime(2 * expected.ns()) {
            self.w = self.w.min(c.alpha as f64).max(c.w_min);
        } else {
            let n = slowness(c.i, c.h, self.lambda);
            self.w = increase(self.w, c.w_max, self.lambda, n).max(c.w_min);
        }
        self.lambda = 0.0;
        self.cycle += 1;
        self.stats.cycles += 1;
        self.cycle_end = Some(now + theta);
    }

    fn note_rtt(&mut self, rtt: SimTime) {
        self.stats.rtt.record(rtt);
    }

    /// Retransmissions waiting for a pacing slot.
    pub fn pending_losses(&self) -> usize {
        self.retx.len()
    }
}
