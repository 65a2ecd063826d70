//! Per-packet records of chosen TCP connections, for time-sequence graphs
//! (the "tcptrace" view): every segment the sender sends or resends, every
//! ACK it receives with its window and SACK blocks, and every one of its
//! segments the network drops. Off unless `simulation.trace_seq` names the
//! flow.

use crate::ids::FlowId;
use crate::packet::{flags, Packet, PacketKind};
use crate::time::SimTime;

use super::{Column, ColumnValue};

/// What a row of the [`SeqTrace`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SeqEvent {
    /// New data sent: bytes `seq..end`.
    Sent = 0,
    /// Data sent again: bytes `seq..end`.
    Retransmitted = 1,
    /// An ACK reached the sender: `seq` is the cumulative ACK, `end` the
    /// right edge of the window it advertises (ACK + receive window).
    Acked = 2,
    /// A SACK block of that ACK: bytes `seq..end` arrived out of order.
    Sacked = 3,
    /// A segment was dropped in the network (or erased): bytes `seq..end`.
    Dropped = 4,
}

impl SeqEvent {
    /// The events' names, by code (the Python side's categories).
    pub const NAMES: [&'static str; 5] = ["sent", "retransmitted", "acked", "sacked", "dropped"];
}

columns! {
    /// One row per event of a traced connection (see [`SeqEvent`]).
    pub struct SeqTrace {
        pub time_ns: Vec<u64>,
        pub flow: Vec<u32>,
        /// [`SeqEvent`] code: 0 sent, 1 retransmitted, 2 acked, 3 sacked,
        /// 4 dropped.
        pub event: Vec<u8>,
        /// First byte (payload offset from the start of the connection).
        pub seq: Vec<u64>,
        /// One past the last byte.
        pub end: Vec<u64>,
    }
}

/// The traced flows and their records.
#[derive(Debug, Default)]
pub struct SeqTracer {
    /// Whether the scenario's flow k (in order of entries, then pairs) is
    /// traced; empty when none is.
    wanted: Vec<bool>,
    /// Whether each flow (by id) is traced. Ids differ from the scenario's
    /// numbering when PEPs split connections: relays have ids of their own.
    traced: Vec<bool>,
    pub log: SeqTrace,
}

impl SeqTracer {
    /// A tracer of the scenario's flows `flows` (numbered in order of
    /// entries, then pairs); each is traced once [`SeqTracer::flow_added`]
    /// gives its id.
    pub fn new(flows: &[u32]) -> SeqTracer {
        let mut wanted = Vec::new();
        mark(&mut wanted, flows.iter().map(|&f| f as usize));
        SeqTracer {
            wanted,
            traced: Vec::new(),
            log: SeqTrace::default(),
        }
    }

    /// The scenario's flow number `k` (every flow but the PEPs' relayed
    /// connections, in order of creation) was made with id `id`.
    pub fn flow_added(&mut self, k: usize, id: FlowId) {
        if self.wanted.get(k).copied().unwrap_or(false) {
            mark(&mut self.traced, [id.idx()]);
        }
    }

    /// Whether any flow is traced (the one test on the per-packet path).
    #[inline]
    pub fn on(&self) -> bool {
        !self.wanted.is_empty()
    }

    fn traces(&self, f: FlowId) -> bool {
        self.traced.get(f.idx()).copied().unwrap_or(false)
    }

    fn push(&mut self, now: SimTime, f: FlowId, ev: SeqEvent, seq: u64, end: u64) {
        let l = &mut self.log;
        l.time_ns.push(now.ns());
        l.flow.push(f.0);
        l.event.push(ev as u8);
        l.seq.push(seq);
        l.end.push(end);
    }

    /// An endpoint emitted `pkts`.
    #[inline(never)]
    pub fn sent(&mut self, now: SimTime, pkts: &[Packet]) {
        for pkt in pkts {
            if pkt.kind == PacketKind::TcpData && self.traces(pkt.flow) {
                let ev = if pkt.has(flags::RETX) {
                    SeqEvent::Retransmitted
                } else {
                    SeqEvent::Sent
                };
                self.push(now, pkt.flow, ev, pkt.seq, pkt.seq + pkt.len as u64);
            }
        }
    }

    /// `pkt` reached the sender of its flow.
    #[inline(never)]
    pub fn acked(&mut self, now: SimTime, pkt: &Packet) {
        if pkt.kind == PacketKind::TcpAck && self.traces(pkt.flow) {
            self.push(now, pkt.flow, SeqEvent::Acked, pkt.ack, pkt.ack + pkt.rwnd);
            for &(s, e) in pkt.sack_blocks().iter() {
                self.push(now, pkt.flow, SeqEvent::Sacked, s, e);
            }
        }
    }

    /// The network lost `pkt`.
    #[inline(never)]
    pub fn dropped(&mut self, now: SimTime, pkt: &Packet) {
        if pkt.kind == PacketKind::TcpData && self.traces(pkt.flow) {
            let end = pkt.seq + pkt.len as u64;
            self.push(now, pkt.flow, SeqEvent::Dropped, pkt.seq, end);
        }
    }
}

/// Set `flags[i]` for each of `ids`, growing `flags` as needed.
fn mark(flags: &mut Vec<bool>, ids: impl IntoIterator<Item = usize>) {
    for i in ids {
        if flags.len() <= i {
            flags.resize(i + 1, false);
        }
        flags[i] = true;
    }
}
