//! Per-packet records of chosen TCP connections, for time-sequence graphs
//! (the "tcptrace" view): every segment the sender sends or resends, every
//! ACK it receives with its window and SACK blocks, and every one of its
//! segments the network drops. Off unless `simulation.trace_seq` names the
//! flow, or `emulation.trace_seq` asks for every real TCP connection.
//!
//! A real connection (an emulation's, entering at `sim/outside.rs`) is traced
//! from its packets' own headers, each way apart: the sequence numbers are
//! offsets from the way's first payload byte (its SYN's sequence number
//! plus one, or the first segment seen of a connection already under way),
//! unwrapped past 2^32, and the ACKs and SACK blocks a way's sender
//! receives are offsets in the same numbering.

use etherparse::{Ipv4Slice, TcpHeaderSlice, TcpOptionElement};

use crate::ids::{FlowId, NodeId};
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
        /// Which way's data the row is about: 0 from the flow's source
        /// (always, for a simulated connection), 1 from its destination (a
        /// real connection's other way).
        pub way: Vec<u8>,
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
    /// Whether every real TCP connection is traced (`emulation.trace_seq`).
    real: bool,
    /// Each traced real connection's numbering, by flow id.
    conns: Vec<Option<Box<RealConn>>>,
    pub log: SeqTrace,
}

/// A traced real connection: the host that sent its first packet (way 0
/// starts there) and each way's numbering.
#[derive(Debug)]
struct RealConn {
    src: NodeId,
    ways: [Way; 2],
}

/// One way of a real connection.
#[derive(Clone, Copy, Debug, Default)]
struct Way {
    /// The sequence number of the way's first payload byte, once known.
    base: Option<u32>,
    /// One past the highest byte sent, as an offset from `base`.
    top: u64,
    /// The window scale its sender's SYN announced (RFC 7323 §2.2).
    wscale: Option<u8>,
}

impl Way {
    /// The offset of sequence number `seq`: the one nearest `top` (so
    /// numbers past 2^32 bytes unwrap), and never below 0.
    fn offset(&self, seq: u32) -> Option<u64> {
        let base = self.base?;
        let near = base.wrapping_add(self.top as u32);
        let d = seq.wrapping_sub(near) as i32 as i64;
        Some((self.top as i64 + d).max(0) as u64)
    }
}

/// The TCP header of real packet `bytes`, if it is a TCP segment.
fn tcp_header(bytes: &[u8]) -> Option<TcpHeaderSlice<'_>> {
    let ip = Ipv4Slice::from_slice(bytes).ok()?;
    if ip.header().protocol().0 != 6 {
        return None;
    }
    TcpHeaderSlice::from_slice(ip.payload().payload).ok()
}

impl SeqTracer {
    /// A tracer of the scenario's flows `flows` (numbered in order of
    /// entries, then pairs); each is traced once [`SeqTracer::flow_added`]
    /// gives its id; and every real TCP connection if `real`.
    pub fn new(flows: &[u32], real: bool) -> SeqTracer {
        let mut wanted = Vec::new();
        mark(&mut wanted, flows.iter().map(|&f| f as usize));
        SeqTracer {
            wanted,
            traced: Vec::new(),
            real,
            conns: Vec::new(),
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
        !self.wanted.is_empty() || self.real
    }

    fn traces(&self, f: FlowId) -> bool {
        self.traced.get(f.idx()).copied().unwrap_or(false)
    }

    fn push(&mut self, now: SimTime, f: FlowId, ev: SeqEvent, seq: u64, end: u64) {
        self.push_way(now, f, 0, ev, seq, end);
    }

    fn push_way(&mut self, now: SimTime, f: FlowId, way: u8, ev: SeqEvent, seq: u64, end: u64) {
        let l = &mut self.log;
        l.time_ns.push(now.ns());
        l.flow.push(f.0);
        l.event.push(ev as u8);
        l.way.push(way);
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
        } else if pkt.kind == PacketKind::Outside && pkt.len > 0 {
            // A real TCP segment's `seq` is its first payload byte's
            // sequence number (`OutsidePacket::seq`).
            let Some(c) = self.conn(pkt.flow) else { return };
            let way = usize::from(pkt.src != c.src);
            if let Some(s) = c.ways[way].offset(pkt.seq as u32) {
                let end = s + pkt.len as u64;
                self.push_way(now, pkt.flow, way as u8, SeqEvent::Dropped, s, end);
            }
        }
    }

    /// Real connection `f` was opened, its first packet from host `src`.
    pub fn real_opened(&mut self, f: FlowId, src: NodeId) {
        if self.real {
            if self.conns.len() <= f.idx() {
                self.conns.resize_with(f.idx() + 1, || None);
            }
            self.conns[f.idx()] = Some(Box::new(RealConn {
                src,
                ways: [Way::default(); 2],
            }));
        }
    }

    fn conn(&self, f: FlowId) -> Option<&RealConn> {
        self.conns.get(f.idx())?.as_deref()
    }

    /// Real packet `pkt` (whose IP packet is `bytes`) left its host.
    #[inline(never)]
    pub fn real_sent(&mut self, now: SimTime, pkt: &Packet, bytes: &[u8]) {
        let Some(Some(c)) = self.conns.get_mut(pkt.flow.idx()) else {
            return;
        };
        let Some(t) = tcp_header(bytes) else { return };
        let way = usize::from(pkt.src != c.src);
        let w = &mut c.ways[way];
        if t.syn() {
            // The SYN's own sequence number is not a byte's: the
            // packet's `seq` is the first payload byte's.
            w.base = Some(pkt.seq as u32);
            w.wscale = t.options_iterator().find_map(|o| match o {
                Ok(TcpOptionElement::WindowScale(s)) => Some(s.min(14)),
                _ => None,
            });
        }
        if pkt.len == 0 {
            return;
        }
        if w.base.is_none() {
            w.base = Some(pkt.seq as u32);
        }
        let Some(s) = w.offset(pkt.seq as u32) else {
            return;
        };
        let end = s + pkt.len as u64;
        let ev = if end <= w.top {
            SeqEvent::Retransmitted
        } else {
            w.top = end;
            SeqEvent::Sent
        };
        self.push_way(now, pkt.flow, way as u8, ev, s, end);
    }

    /// Real packet `pkt` reached its host: an ACK of the other way's data,
    /// once that way has sent some.
    #[inline(never)]
    pub fn real_delivered(&mut self, now: SimTime, pkt: &Packet, bytes: &[u8]) {
        let Some(c) = self.conn(pkt.flow) else { return };
        let Some(t) = tcp_header(bytes) else { return };
        let way = usize::from(pkt.src != c.src);
        let (mine, data) = (c.ways[way], c.ways[1 - way]);
        if !t.ack() || data.top == 0 {
            return;
        }
        let Some(ack) = data.offset(t.acknowledgment_number()) else {
            return;
        };
        // Windows are scaled once both SYNs announced a scale, and never
        // in a SYN.
        let shift = match (mine.wscale, data.wscale) {
            (Some(s), Some(_)) if !t.syn() => s,
            _ => 0,
        };
        let window = (t.window_size() as u64) << shift;
        let data_way = (1 - way) as u8;
        self.push_way(now, pkt.flow, data_way, SeqEvent::Acked, ack, ack + window);
        for o in t.options_iterator() {
            if let Ok(TcpOptionElement::SelectiveAcknowledgement(first, rest)) = o {
                for (s, e) in std::iter::once(first).chain(rest.into_iter().flatten()) {
                    if let (Some(s), Some(e)) = (data.offset(s), data.offset(e)) {
                        self.push_way(now, pkt.flow, data_way, SeqEvent::Sacked, s, e);
                    }
                }
            }
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
