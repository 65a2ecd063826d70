//! UDP datagrams: a constant-bit-rate source and a counting sink.

use crate::ids::{FlowId, NodeId};
use crate::packet::{PacketKind, UDP_IP_HEADER};
use crate::time::{Rate, SimTime};

use super::Emit;

/// A CBR source: datagrams of `size` bytes on the wire, evenly spaced so the
/// on-wire rate is `rate`.
#[derive(Debug, Clone)]
pub struct CbrSource {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub size: u32,
    pub interval: SimTime,
    pub next_seq: u64,
    pub sent_bytes: u64,
}

impl CbrSource {
    pub fn new(flow: FlowId, src: NodeId, dst: NodeId, rate: Rate, size: u32) -> Self {
        CbrSource {
            flow,
            src,
            dst,
            size,
            interval: rate.tx_time(size),
            next_seq: 0,
            sent_bytes: 0,
        }
    }

    /// Send one datagram; returns when the next one is due.
    pub fn tick(&mut self, em: &mut Emit) -> SimTime {
        let mut p = em.packet(self.flow, self.src, self.dst, PacketKind::Udp);
        p.size = self.size;
        p.len = self.size.saturating_sub(UDP_IP_HEADER);
        p.seq = self.next_seq;
        self.next_seq += 1;
        self.sent_bytes += p.len as u64;
        em.send(p);
        em.now + self.interval
    }
}

/// Counts what arrives.
#[derive(Debug, Clone, Default)]
pub struct UdpSink {
    pub packets: u64,
    pub bytes: u64,
}
