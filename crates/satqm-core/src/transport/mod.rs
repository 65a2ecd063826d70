//! Transport endpoints: TCP (one sender/receiver state machine with
//! pluggable loss recovery and congestion control), UDP, and ATSP (a
//! rate-based transport driven by router marks).
//!
//! Endpoints never touch the network directly: each transition takes an
//! [`Emit`] to which it hands the packets it sends, and reports timer
//! deadlines through `next_wakeup()`. The simulation routes the packets and
//! schedules the timers.

pub mod atsp;
pub mod tcp;
pub mod udp;

use crate::ids::{FlowId, NodeId};
use crate::packet::{Packet, PacketKind};
use crate::time::SimTime;

/// The round-trip times a sender measured: count, sum, least and greatest
/// (the flows table's `rtt_*` columns).
#[derive(Clone, Debug, Default)]
pub struct RttStats {
    pub samples: u64,
    pub sum_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl RttStats {
    pub fn record(&mut self, rtt: SimTime) {
        let ns = rtt.ns();
        if self.samples == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.samples += 1;
        self.sum_ns += ns as f64;
    }

    /// Least, mean and greatest, seconds (zeros before the first sample).
    pub fn seconds(&self) -> (f64, f64, f64) {
        if self.samples == 0 {
            return (0.0, 0.0, 0.0);
        }
        (
            self.min_ns as f64 * 1e-9,
            self.sum_ns / self.samples as f64 * 1e-9,
            self.max_ns as f64 * 1e-9,
        )
    }
}

/// Where an endpoint puts the packets it sends during one transition.
pub struct Emit<'a> {
    pub now: SimTime,
    pub out: &'a mut Vec<Packet>,
    pub next_uid: &'a mut u64,
}

impl Emit<'_> {
    /// A fresh packet with the next unique id.
    pub fn packet(&mut self, flow: FlowId, src: NodeId, dst: NodeId, kind: PacketKind) -> Packet {
        let uid = *self.next_uid;
        *self.next_uid += 1;
        Packet::new(uid, flow, src, dst, kind)
    }

    pub fn send(&mut self, pkt: Packet) {
        self.out.push(pkt);
    }
}
