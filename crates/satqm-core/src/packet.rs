//! The packet as it moves through the simulator: a plain `Copy` struct.
//!
//! Payload bytes are never materialised (but for real packets in an
//! emulation, whose bytes the simulation keeps aside); a packet carries its wire size and
//! the header fields the transports read. TCP sequence numbers are 64-bit
//! byte offsets from the start of the connection and never wrap.

use crate::ids::{FlowId, NodeId};
use crate::time::SimTime;

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
    /// A real IP packet from outside the simulator (emulation): its bytes
    /// are kept by the simulation (`rwnd` holds their slot), `len` is its
    /// transport payload and `seq` its TCP sequence number, if any.
    Outside,
    /// The place of packets an outage took off a link's line
    /// (`net/link.rs`): it keeps the link's arrival event in step and is
    /// never delivered.
    Lost,
}

/// IP ECN field and TCP ECN flags (RFC 3168, RFC 9768), packed.
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
    /// ECN-capable transport with the ECT(1) codepoint (RFC 3168; the L4S
    /// identifier of RFC 9331) set in the IP header.
    pub const ECT1: u8 = 1 << 6;
    /// TCP AE flag (RFC 9768, formerly NS): with ECE and CWR, the most
    /// significant bit of AccECN's 3-bit ACE counter.
    pub const AE: u8 = 1 << 7;

    /// The ACE field of an AccECN ACK (RFC 9768 section 3.2.2): AE, CWR
    /// and ECE as a 3-bit number, AE the most significant.
    #[inline]
    pub fn ace(f: u8) -> u8 {
        (f & AE != 0) as u8 * 4 + (f & CWR != 0) as u8 * 2 + (f & ECE != 0) as u8
    }

    /// The flags that carry `ace` (its low three bits) in an ACK.
    #[inline]
    pub fn ace_flags(ace: u8) -> u8 {
        (if ace & 4 != 0 { AE } else { 0 })
            | (if ace & 2 != 0 { CWR } else { 0 })
            | (if ace & 1 != 0 { ECE } else { 0 })
    }
}

/// Up to three SACK blocks (RFC 2018), as half-open byte ranges.
pub const MAX_SACK_BLOCKS: usize = 3;

/// IPv4 + TCP header bytes without options.
pub const TCP_IP_HEADER: u32 = 40;
/// Bytes the TCP timestamps option (RFC 7323) adds to every segment once
/// negotiated: its 10 bytes and two NOPs that align it, as Linux sends it
/// (`TCPOLEN_TSTAMP_ALIGNED` in `include/net/tcp.h`).
pub const TCP_TIMESTAMPS_OPTION: u32 = 12;
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
    /// First payload byte (TCP data) or datagram number (UDP). A pure TCP
    /// ACK or SYN-ACK, which sends no data, carries its timestamp value
    /// here instead ([`ts_val`](Self::ts_val)).
    pub seq: u64,
    /// Payload bytes. A pure TCP ACK carries its timestamp echo here
    /// instead ([`ts_ecr`](Self::ts_ecr)).
    pub len: u32,
    /// Cumulative acknowledgement: next byte expected. A TCP data segment,
    /// which acknowledges no data in satqm (its flows are one-way), carries
    /// its timestamp echo here instead ([`ts_ecr`](Self::ts_ecr)), an ATSP
    /// data packet the time it was sent.
    pub ack: u64,
    /// Advertised receive window in bytes (already scaled). A TCP data
    /// segment carries its timestamp value here instead
    /// ([`ts_val`](Self::ts_val)).
    pub rwnd: u64,
    pub n_sack: u8,
    /// The SACK blocks, each end as a signed 32-bit offset from `ack`
    /// (written by [`set_sack_blocks`](Self::set_sack_blocks), read by
    /// [`sack_blocks`](Self::sack_blocks)): 24 bytes instead of 48, in a
    /// packet that the delay lines and buffers copy on every hop.
    ///
    /// Every block fits. A TCP receiver reports only segments it holds
    /// above `ack` (its next expected byte) and below `ack` plus its
    /// advertised window, since the sender never sends past that window;
    /// the window is at most the receive buffer, which is at most 1 GiB
    /// (2^30, RFC 7323's limit, checked in `config/tcp.rs`), or 65,535
    /// bytes without window scaling. An ATSP receiver's blocks are holes in
    /// the packet numbers it has seen, above its cumulative point (`ack`),
    /// whose distance is bounded by the packets in flight. Either is far
    /// below 2^31; [`set_sack_blocks`](Self::set_sack_blocks) asserts it in
    /// debug builds.
    sack: [[i32; 2]; MAX_SACK_BLOCKS],
}

/// A packet's SACK blocks, decoded: a small array and its length, usable
/// as a slice of `(start, end)` byte ranges.
#[derive(Clone, Copy, Debug)]
pub struct SackBlocks {
    n: usize,
    blocks: [(u64, u64); MAX_SACK_BLOCKS],
}

impl<const N: usize> PartialEq<&[(u64, u64); N]> for SackBlocks {
    fn eq(&self, other: &&[(u64, u64); N]) -> bool {
        **self == other[..]
    }
}

impl std::ops::Deref for SackBlocks {
    type Target = [(u64, u64)];
    fn deref(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n]
    }
}

impl Packet {
    /// The TCP timestamps option's TSval (RFC 7323): when the packet left
    /// its endpoint, in nanoseconds of simulated time (each endpoint's
    /// clock; the option itself counts milliseconds). An ACK or SYN-ACK,
    /// which sends no data, carries it in `seq`; a data segment, which
    /// advertises no window in satqm (its flows are one-way), in `rwnd`.
    #[inline]
    pub fn ts_val(&self) -> u64 {
        if self.kind == PacketKind::TcpData {
            self.rwnd
        } else {
            self.seq
        }
    }

    #[inline]
    pub fn set_ts_val(&mut self, at: SimTime) {
        if self.kind == PacketKind::TcpData {
            self.rwnd = at.ns();
        } else {
            self.seq = at.ns();
        }
    }

    /// The TCP timestamps option's TSecr: the TSval of the peer's packet it
    /// echoes ([`ts_val`](Self::ts_val)), 0 for none. A data segment, which
    /// acknowledges no data in satqm, carries it in `ack`, to the
    /// nanosecond; a pure ACK, which carries no payload, in `len`, in whole
    /// milliseconds as the option does (its nanoseconds are dropped).
    #[inline]
    pub fn ts_ecr(&self) -> u64 {
        if self.kind == PacketKind::TcpData {
            self.ack
        } else {
            u64::from(self.len) * 1_000_000
        }
    }

    #[inline]
    pub fn set_ts_ecr(&mut self, ts_val: u64) {
        if self.kind == PacketKind::TcpData {
            self.ack = ts_val;
        } else {
            self.len = (ts_val / 1_000_000) as u32;
        }
    }

    /// The place of this packet on a link's line once an outage took it
    /// off: of kind `Lost`, ending at `at` (the link's far end).
    pub fn lost_at(&self, at: NodeId) -> Packet {
        Packet {
            kind: PacketKind::Lost,
            dst: at,
            ..*self
        }
    }

    pub fn new(uid: u64, flow: FlowId, src: NodeId, dst: NodeId, kind: PacketKind) -> Packet {
        Packet {
            uid,
            flow,
            src,
            dst,
            kind,
            ..Packet::BLANK
        }
    }

    /// A packet with nothing in it, for a place a packet is written into
    /// later (a port's next packet to send).
    pub const BLANK: Packet = Packet {
        uid: 0,
        flow: FlowId(0),
        src: NodeId(0),
        dst: NodeId(0),
        size: 0,
        kind: PacketKind::TcpData,
        flags: 0,
        seq: 0,
        len: 0,
        ack: 0,
        rwnd: 0,
        n_sack: 0,
        sack: [[0; 2]; MAX_SACK_BLOCKS],
    };

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// The SACK blocks (none unless [`set_sack_blocks`](Self::set_sack_blocks)
    /// wrote some).
    #[inline]
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut blocks = [(0, 0); MAX_SACK_BLOCKS];
        for (b, &[s, e]) in blocks.iter_mut().zip(&self.sack) {
            *b = (from_offset(self.ack, s), from_offset(self.ack, e));
        }
        SackBlocks {
            n: self.n_sack as usize,
            blocks,
        }
    }

    /// Write `blocks` (at most [`MAX_SACK_BLOCKS`]) as this packet's SACK
    /// blocks and set `n_sack`; `ack` must be set first (the blocks are
    /// stored relative to it).
    pub fn set_sack_blocks(&mut self, blocks: &[(u64, u64)]) {
        debug_assert!(blocks.len() <= MAX_SACK_BLOCKS);
        for (slot, &(s, e)) in self.sack.iter_mut().zip(blocks) {
            *slot = [to_offset(self.ack, s), to_offset(self.ack, e)];
        }
        self.n_sack = blocks.len() as u8;
    }

    /// Packets can be ECN-marked only if they carry ECT(0) or ECT(1).
    pub fn ecn_capable(&self) -> bool {
        self.has(flags::ECT | flags::ECT1)
    }
}

/// `x` as a signed 32-bit offset from `ack` (see [`Packet`]'s `sack`).
#[inline]
fn to_offset(ack: u64, x: u64) -> i32 {
    let off = x.wrapping_sub(ack) as i64;
    debug_assert!(
        i32::try_from(off).is_ok(),
        "a SACK block end {x} more than 2^31 from the ACK {ack}"
    );
    off as i32
}

/// The inverse of [`to_offset`].
#[inline]
fn from_offset(ack: u64, off: i32) -> u64 {
    ack.wrapping_add(off as i64 as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};

    #[test]
    fn sack_blocks_round_trip_around_the_ack() {
        let mut p = Packet::new(0, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpAck);
        p.ack = (1 << 40) + 7;
        let blocks = [
            (p.ack + 1, p.ack + (1 << 30)),
            (p.ack - 5, p.ack),
            (p.ack + (1 << 31) - 2, p.ack + (1 << 31) - 1),
        ];
        p.set_sack_blocks(&blocks);
        assert_eq!(p.n_sack, 3);
        assert_eq!(&*p.sack_blocks(), &blocks[..]);
        p.set_sack_blocks(&blocks[..1]);
        assert_eq!(&*p.sack_blocks(), &blocks[..1]);
    }

    #[test]
    fn ace_field_round_trips_and_ect1_is_ecn_capable() {
        for ace in 0..8u8 {
            assert_eq!(flags::ace(flags::ace_flags(ace)), ace);
        }
        assert_eq!(flags::ace(flags::AE | flags::ECE), 5);
        let mut p = Packet::new(0, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
        assert!(!p.ecn_capable());
        p.flags |= flags::ECT1;
        assert!(p.ecn_capable());
    }

    /// The packet copied through delay lines and buffers on every hop.
    #[test]
    fn a_packet_is_80_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 80);
    }
}
