//! The packet as it moves through the simulator: a plain `Copy` struct.
//!
//! Payload bytes are never materialised; a packet carries its wire size and
//! the header fields the transports read. TCP sequence numbers are 64-bit
//! byte offsets from the start of the connection and never wrap.

use crate::ids::{FlowId, NodeId};

/// What a packet is, as far as the receiving endpoint is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// TCP connection request.
    Syn,
    /// TCP connection accept.
    SynAck,
    /// TCP segment carrying data (possibly zero bytes for a FIN alone).
    TcpData,
    /// Pure TCP acknowledgement.
    TcpAck,
    /// UDP datagram.
    Udp,
    /// ATSP data packet.
    AtspData,
    /// ATSP selective acknowledgement with the congestion rate.
    AtspSack,
}

/// IP ECN field and TCP ECN flags (RFC 3168), packed.
pub mod flags {
    /// ECN-capable transport (ECT(0)) set in the IP header.
    pub const ECT: u8 = 1;
    /// Congestion experienced, set by a router.
    pub const CE: u8 = 1 << 1;
    /// TCP ECN-Echo, receiver to sender.
    pub const ECE: u8 = 1 << 2;
    /// TCP Congestion Window Reduced, sender to receiver.
    pub const CWR: u8 = 1 << 3;
    /// TCP FIN: the sender has no more data after this segment.
    pub const FIN: u8 = 1 << 4;
    /// The segment is a retransmission (bookkeeping only, not on the wire).
    pub const RETX: u8 = 1 << 5;
}

/// Up to three SACK blocks (RFC 2018), as half-open byte ranges.
pub const MAX_SACK_BLOCKS: usize = 3;

/// IPv4 + TCP header bytes without options.
pub const TCP_IP_HEADER: u32 = 40;
/// IPv4 + UDP header bytes.
pub const UDP_IP_HEADER: u32 = 28;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique id within a run, in creation order.
    pub uid: u64,
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Bytes on the wire (headers included): what queues and links count.
    pub size: u32,
    pub kind: PacketKind,
    pub flags: u8,
    /// First payload byte (TCP data) or datagram number (UDP).
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Cumulative acknowledgement: next byte expected.
    pub ack: u64,
    /// Advertised receive window in bytes (already scaled).
    pub rwnd: u64,
    pub n_sack: u8,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn new(uid: u64, flow: FlowId, src: NodeId, dst: NodeId, kind: PacketKind) -> Packet {
        Packet {
            uid,
            flow,
            src,
            dst,
            size: 0,
            kind,
            flags: 0,
            seq: 0,
            len: 0,
            ack: 0,
            rwnd: 0,
            n_sack: 0,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.n_sack as usize]
    }

    /// Data packets can be ECN-marked only if they carry ECT.
    pub fn ecn_capable(&self) -> bool {
        self.has(flags::ECT)
    }
}
