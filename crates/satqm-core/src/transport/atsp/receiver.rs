//! The ATSP receiver: counts CE marks per RTT cycle and returns a SACK
//! every `alpha` data packets with `rho` (eq. 2) and the missing ranges.

use crate::ids::{FlowId, NodeId};
use crate::packet::{flags, Packet, PacketKind, MAX_SACK_BLOCKS};

use super::{AtspConfig, SACK_SIZE};
use crate::transport::Emit;

#[derive(Debug, Clone)]
pub struct AtspReceiver {
    flow: FlowId,
    /// This end (the data's destination) and the sender's node.
    node: NodeId,
    peer: NodeId,
    alpha: u32,
    beta: f64,
    payload: u32,
    /// One past the highest packet number received.
    top: u64,
    /// Missing ranges `[a, b)` below `top`, ascending.
    holes: Vec<(u64, u64)>,
    /// Holes at or above this packet number are reported next (the report
    /// walks through the holes, three ranges per SACK, then wraps).
    cursor: u64,
    /// The sender's cycle the marks are counted for, and the marks so far.
    cycle: u64,
    marks: u64,
    /// Data packets since the last SACK.
    count: u32,
    /// The send time and cycle of the last data packet (echoed).
    last_sent_ns: u64,
    pub packets: u64,
    pub marked: u64,
    pub duplicates: u64,
    pub sacks: u64,
}

/// What one data packet did at the receiver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Arrival {
    /// Payload bytes received for the first time. ATSP counts data as it
    /// arrives, as the paper's throughput does; releasing it in order is
    /// the application's business, and counting only in-order bytes would
    /// show a resent hole as a stall of the whole flow.
    pub bytes: u64,
}

impl AtspReceiver {
    pub fn new(flow: FlowId, node: NodeId, peer: NodeId, cfg: &AtspConfig) -> AtspReceiver {
        AtspReceiver {
            flow,
            node,
            peer,
            alpha: cfg.alpha,
            beta: cfg.beta,
            payload: cfg.payload(),
            top: 0,
            holes: Vec::new(),
            cursor: 0,
            cycle: 0,
            marks: 0,
            count: 0,
            last_sent_ns: 0,
            packets: 0,
            marked: 0,
            duplicates: 0,
            sacks: 0,
        }
    }

    /// The next packet number expected in order.
    pub fn cumulative(&self) -> u64 {
        self.holes.first().map_or(self.top, |h| h.0)
    }

    /// The congestion rate of the current cycle, eq. 2 summed:
    /// `rho_{k,i} = beta * (marks so far in cycle k)`.
    pub fn rho(&self) -> f64 {
        self.marks as f64 * self.beta
    }

    /// A data packet arrives; every `alpha`-th one triggers a SACK.
    pub fn on_data(&mut self, pkt: &Packet, em: &mut Emit) -> Arrival {
        let fresh = self.record(pkt.seq);
        if !fresh {
            self.duplicates += 1;
        }
        self.packets += 1;
        // The cycle a packet was sent in travels with it: a later cycle
        // starts rho afresh (rho_{k,0} = 0); packets of an earlier cycle
        // (retransmissions, stragglers) count in the current one.
        if pkt.rwnd > self.cycle {
            self.cycle = pkt.rwnd;
            self.marks = 0;
        }
        if pkt.has(flags::CE) {
            self.marks += 1;
            self.marked += 1;
        }
        self.last_sent_ns = pkt.ack;
        self.count += 1;
        if self.count >= self.alpha {
            self.count = 0;
            self.send_sack(em);
        }
        Arrival {
            bytes: if fresh { self.payload as u64 } else { 0 },
        }
    }

    /// Note packet `seq`; false if it had arrived before.
    fn record(&mut self, seq: u64) -> bool {
        if seq >= self.top {
            if seq > self.top {
                self.holes.push((self.top, seq));
            }
            self.top = seq + 1;
            return true;
        }
        let Some(i) = self.holes.iter().position(|&(a, b)| a <= seq && seq < b) else {
            return false;
        };
        let (a, b) = self.holes[i];
        match (seq == a, seq + 1 == b) {
            (true, true) => {
                self.holes.remove(i);
            }
            (true, false) => self.holes[i].0 = seq + 1,
            (false, true) => self.holes[i].1 = seq,
            (false, false) => {
                self.holes[i].1 = seq;
                self.holes.insert(i + 1, (seq + 1, b));
            }
        }
        true
    }

    fn send_sack(&mut self, em: &mut Emit) {
        let mut p = em.packet(self.flow, self.node, self.peer, PacketKind::AtspSack);
        p.size = SACK_SIZE;
        p.seq = self.last_sent_ns;
        p.ack = self.cumulative();
        p.rwnd = self.rho().to_bits();
        p.len = self.cycle as u32;
        let start = self
            .holes
            .iter()
            .position(|h| h.0 >= self.cursor)
            .unwrap_or(0);
        let blocks = &self.holes[start..(start + MAX_SACK_BLOCKS).min(self.holes.len())];
        p.set_sack_blocks(blocks);
        if let Some(h) = blocks.last() {
            self.cursor = h.1;
        }
        if p.n_sack == 0 {
            self.cursor = 0;
        }
        self.sacks += 1;
        em.send(p);
    }

    pub fn holes(&self) -> &[(u64, u64)] {
        &self.holes
    }
}
