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
