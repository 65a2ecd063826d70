//! Synthetic but consistent wire headers for a satqm packet: Ethernet,
//! IPv4 (RFC 791) with its ECN field (RFC 3168), then TCP (RFC 9293) with
//! its options or UDP (RFC 768).
//!
//! satqm never materialises headers; these are built from the packet's
//! fields so that Wireshark and tshark can follow each connection:
//!
//! - each node has an address (`10.a.b.c` from its index, and a locally
//!   administered MAC); a frame's Ethernet addresses are the link's two
//!   ends, its IP addresses the packet's source and destination hosts;
//! - each flow has its own port pair: the sender's port is `1024 + flow`
//!   (wrapping below 65,536), the receiver's is [`SERVER_PORT`];
//! - sequence numbers start from an initial sequence number of zero on both
//!   sides: the SYN has sequence number 0, so satqm's byte offset `s` is
//!   wire sequence number `s + 1` (modulo 2^32), and acknowledgement numbers
//!   likewise;
//! - the SYN and SYN-ACK carry the MSS, SACK-permitted (when the connection
//!   uses SACK) and window-scale options; later segments carry the
//!   advertised window shifted by that scale, and ACKs their SACK blocks;
//!   the sender, which receives no data, advertises its whole buffer;
//! - a connection with `timestamps` carries the timestamps option (RFC
//!   7323, after two NOPs, as Linux aligns it) on every segment: an ACK's
//!   TSval is when it left the receiver and a data segment's TSecr the
//!   newest TSval its sender had received, in milliseconds; the sender's
//!   own clock is not kept (data segments' TSval and ACKs' TSecr are 0);
//! - ATSP has no registered wire format: its packets are UDP datagrams
//!   whose payload begins with the fields ATSP carries ([`atsp`]).
//!
//! A real packet of an emulation (kind `Outside`) is written as it is, its
//! IP header's ECN field set to CE where an AQM marked it ([`set_ce`]).
//!
//! The TCP header grows with its options. satqm's packet sizes count the
//! timestamps option and an ACK's SACK blocks, so a frame's IP length is
//! the size queued but for the SYN and SYN-ACK, whose other options make
//! them a few bytes longer: the IP total length is the one of the headers
//! written.

use crate::packet::{flags, Packet, PacketKind};

/// The receiving end's port of every flow (unassigned by IANA, and no
/// dissector of Wireshark's claims it).
pub const SERVER_PORT: u16 = 47001;

/// Ethernet header bytes.
pub const ETHERNET: usize = 14;

/// What the wire headers need to know of a flow beyond its packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowWire {
    /// The sender's port.
    pub port: u16,
    /// Window scale shift (RFC 7323) the receiver announces, if any.
    pub wscale: Option<u8>,
    /// The connection uses SACK (RFC 2018).
    pub sack: bool,
    /// Its segments carry the timestamps option (RFC 7323).
    pub timestamps: bool,
    pub mss: u16,
    /// The window the sender advertises (bytes): it receives no data, so
    /// its whole buffer.
    pub window: u64,
}

impl FlowWire {
    /// A flow's wire settings: `flow`'s port, the receive window the
    /// receiver can advertise at most (`None` without window scaling), SACK
    /// and MSS.
    pub fn new(flow: u32, max_window: Option<u64>, sack: bool, mss: u32) -> FlowWire {
        let window = max_window.unwrap_or(65_535);
        let wscale = max_window.map(|w| {
            let mut s = 0u8;
            while s < 14 && (w >> s) > 65_535 {
                s += 1;
            }
            s
        });
        FlowWire {
            port: (1024 + flow % 64_512) as u16,
            wscale,
            sack,
            timestamps: false,
            mss: mss.min(65_535) as u16,
            window,
        }
    }
}

/// IPv4 address of node `n`.
pub fn ip(n: u32) -> [u8; 4] {
    let a = n + 1;
    [10, (a >> 16) as u8, (a >> 8) as u8, a as u8]
}

/// MAC address of node `n` (locally administered, unicast).
pub fn mac(n: u32) -> [u8; 6] {
    let a = n + 1;
    [
        0x02,
        0,
        (a >> 24) as u8,
        (a >> 16) as u8,
        (a >> 8) as u8,
        a as u8,
    ]
}

/// One's-complement sum of `data` as big-endian 16-bit words, added to
/// `sum`.
fn sum16(mut sum: u32, data: &[u8]) -> u32 {
    for c in data.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        sum += w as u32;
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The transport header and its payload length, for one packet.
struct Transport {
    proto: u8,
    /// Header bytes (written into `buf` after the IP header).
    header_len: usize,
    payload: u32,
}

/// Set an IPv4 header's ECN field to Congestion Experienced (RFC 3168
/// §5) and update its checksum incrementally (RFC 1624 eq. 3). `ip` starts
/// with the header; a header too short to hold the field is left alone.
pub fn set_ce(ip: &mut [u8]) {
    if ip.len() < 20 || ip[1] & 0b11 == 0b11 {
        return;
    }
    let old = u16::from_be_bytes([ip[0], ip[1]]);
    ip[1] |= 0b11;
    let new = u16::from_be_bytes([ip[0], ip[1]]);
    let check = u16::from_be_bytes([ip[10], ip[11]]);
    // HC' = ~(~HC + ~m + m')
    let mut sum = (!check) as u32 + (!old) as u32 + new as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Write the frame of `pkt`, sent from node `from` to node `to` on a link,
/// into `buf` (headers only, unless `real` gives a real packet's bytes;
/// the payload of a simulated packet is not written). Returns the frame's
/// full length (headers and payload) on the wire.
pub fn frame(
    buf: &mut Vec<u8>,
    pkt: &Packet,
    (from, to): (u32, u32),
    wire: &FlowWire,
    real: Option<&[u8]>,
) -> usize {
    buf.clear();
    buf.extend_from_slice(&mac(to));
    buf.extend_from_slice(&mac(from));
    buf.extend_from_slice(&[0x08, 0x00]);
    if let Some(bytes) = real {
        buf.extend_from_slice(bytes);
        if pkt.has(flags::CE) {
            set_ce(&mut buf[ETHERNET..]);
        }
        return buf.len();
    }
    let ip_at = buf.len();
    buf.resize(ip_at + 20, 0);
    // One arm per kind of packet: a new transport adds its own.
    let t = match pkt.kind {
        PacketKind::Syn | PacketKind::SynAck | PacketKind::TcpData | PacketKind::TcpAck => {
            tcp(buf, pkt, wire)
        }
        PacketKind::Udp => udp(buf, pkt, wire),
        PacketKind::AtspData | PacketKind::AtspSack => atsp(buf, pkt, wire),
        // Written from its bytes above; without them, an IP header alone.
        // (An outage's place on a line is never sent, so never captured.)
        PacketKind::Outside | PacketKind::Lost => Transport {
            proto: 0xfd,
            header_len: 0,
            payload: pkt.size.saturating_sub(20),
        },
    };
    let total = 20 + t.header_len + t.payload as usize;
    // RFC 3168 section 5: ECT(1) is 01, ECT(0) 10, CE 11.
    let ecn = if pkt.has(flags::CE) {
        0b11
    } else if pkt.has(flags::ECT) {
        0b10
    } else if pkt.has(flags::ECT1) {
        0b01
    } else {
        0
    };
    let (src, dst) = (ip(pkt.src.0), ip(pkt.dst.0));
    let h = &mut buf[ip_at..ip_at + 20];
    h[0] = 0x45;
    h[1] = ecn;
    h[2..4].copy_from_slice(&(total.min(65_535) as u16).to_be_bytes());
    h[4..6].copy_from_slice(&(pkt.uid as u16).to_be_bytes());
    h[6] = 0x40; // don't fragment
    h[8] = 64;
    h[9] = t.proto;
    h[12..16].copy_from_slice(&src);
    h[16..20].copy_from_slice(&dst);
    let c = fold(sum16(0, h));
    h[10..12].copy_from_slice(&c.to_be_bytes());
    // Transport checksum over the pseudo-header and the header; the payload
    // (zeros) adds nothing to it.
    let seg_len = t.header_len as u32 + t.payload;
    let mut s = sum16(0, &src);
    s = sum16(s, &dst);
    s += t.proto as u32 + seg_len;
    let th = ip_at + 20;
    let sum_at = th + if t.proto == 6 { 16 } else { 6 };
    let mut c = fold(sum16(s, &buf[th..th + t.header_len]));
    if t.proto == 17 && c == 0 {
        c = 0xffff;
    }
    buf[sum_at..sum_at + 2].copy_from_slice(&c.to_be_bytes());
    ETHERNET + total
}

fn udp(buf: &mut Vec<u8>, pkt: &Packet, wire: &FlowWire) -> Transport {
    let payload = pkt.size.saturating_sub(crate::packet::UDP_IP_HEADER);
    buf.extend_from_slice(&wire.port.to_be_bytes());
    buf.extend_from_slice(&SERVER_PORT.to_be_bytes());
    buf.extend_from_slice(&((8 + payload).min(65_535) as u16).to_be_bytes());
    buf.extend_from_slice(&[0, 0]);
    Transport {
        proto: 17,
        header_len: 8,
        payload,
    }
}

/// An ATSP packet as a UDP datagram (see `transport/atsp/mod.rs` for what
/// each field of the packet holds). The payload begins with a big-endian
/// ATSP header:
///
/// - data: type 1, three zero bytes, the sender's cycle (u32), the packet
///   number (u64) and its send time in ns (u64);
/// - SACK: type 2, the number of missing ranges (u8), two zero bytes, the
///   echoed cycle (u32), `rho` (IEEE-754 f64), the next packet expected in
///   order (u64), the echoed send time in ns (u64), then each missing range
///   of packet numbers as two u64.
///
/// A SACK's header can be longer than the bytes satqm counts for it
/// (`SACK_SIZE`); the frame is then that much longer.
fn atsp(buf: &mut Vec<u8>, pkt: &Packet, wire: &FlowWire) -> Transport {
    let data = pkt.kind == PacketKind::AtspData;
    let (sport, dport) = if data {
        (wire.port, SERVER_PORT)
    } else {
        (SERVER_PORT, wire.port)
    };
    let at = buf.len();
    buf.extend_from_slice(&sport.to_be_bytes());
    buf.extend_from_slice(&dport.to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // length (below), checksum
    if data {
        buf.extend_from_slice(&[1, 0, 0, 0]);
        buf.extend_from_slice(&(pkt.rwnd as u32).to_be_bytes());
        buf.extend_from_slice(&pkt.seq.to_be_bytes());
        buf.extend_from_slice(&pkt.ack.to_be_bytes());
    } else {
        buf.extend_from_slice(&[2, pkt.n_sack, 0, 0]);
        buf.extend_from_slice(&pkt.len.to_be_bytes());
        buf.extend_from_slice(&pkt.rwnd.to_be_bytes());
        buf.extend_from_slice(&pkt.ack.to_be_bytes());
        buf.extend_from_slice(&pkt.seq.to_be_bytes());
        for &(l, r) in pkt.sack_blocks().iter() {
            buf.extend_from_slice(&l.to_be_bytes());
            buf.extend_from_slice(&r.to_be_bytes());
        }
    }
    let header_len = buf.len() - at;
    let payload = pkt
        .size
        .saturating_sub(crate::packet::UDP_IP_HEADER)
        .saturating_sub((header_len - 8) as u32);
    let udp_len = (header_len as u32 + payload).min(65_535) as u16;
    buf[at + 4..at + 6].copy_from_slice(&udp_len.to_be_bytes());
    Transport {
        proto: 17,
        header_len,
        payload,
    }
}

const TCP_FIN: u8 = 0x01;
const TCP_SYN: u8 = 0x02;
const TCP_ACK: u8 = 0x10;
const TCP_ECE: u8 = 0x40;
const TCP_CWR: u8 = 0x80;

fn tcp(buf: &mut Vec<u8>, pkt: &Packet, wire: &FlowWire) -> Transport {
    let from_sender = matches!(pkt.kind, PacketKind::Syn | PacketKind::TcpData);
    let (sport, dport) = if from_sender {
        (wire.port, SERVER_PORT)
    } else {
        (SERVER_PORT, wire.port)
    };
    let syn = matches!(pkt.kind, PacketKind::Syn | PacketKind::SynAck);
    let (seq, ack, mut bits) = match pkt.kind {
        PacketKind::Syn => (0, 0, TCP_SYN),
        PacketKind::SynAck => (0, 1, TCP_SYN | TCP_ACK),
        PacketKind::TcpData => (pkt.seq + 1, 1, TCP_ACK),
        _ => (1, pkt.ack + 1, TCP_ACK),
    };
    if pkt.has(flags::FIN) {
        bits |= TCP_FIN;
    }
    if pkt.has(flags::ECE) {
        bits |= TCP_ECE;
    }
    if pkt.has(flags::CWR) {
        bits |= TCP_CWR;
    }
    let rwnd = if from_sender { wire.window } else { pkt.rwnd };
    let window = if syn {
        rwnd.min(65_535)
    } else {
        (rwnd >> wire.wscale.unwrap_or(0)).min(65_535)
    };
    let at = buf.len();
    buf.extend_from_slice(&sport.to_be_bytes());
    buf.extend_from_slice(&dport.to_be_bytes());
    buf.extend_from_slice(&(seq as u32).to_be_bytes());
    buf.extend_from_slice(&(ack as u32).to_be_bytes());
    buf.extend_from_slice(&[0, bits]);
    buf.extend_from_slice(&(window as u16).to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    if syn {
        buf.extend_from_slice(&[2, 4]);
        buf.extend_from_slice(&wire.mss.to_be_bytes());
        if wire.sack {
            buf.extend_from_slice(&[1, 1, 4, 2]);
        }
        if let Some(s) = wire.wscale {
            buf.extend_from_slice(&[1, 3, 3, s]);
        }
    } else if pkt.n_sack > 0 {
        buf.extend_from_slice(&[1, 1, 5, 2 + 8 * pkt.n_sack]);
        for &(l, r) in pkt.sack_blocks().iter() {
            buf.extend_from_slice(&((l + 1) as u32).to_be_bytes());
            buf.extend_from_slice(&((r + 1) as u32).to_be_bytes());
        }
    }
    if wire.timestamps {
        // NOP, NOP, kind 8, length 10, TSval, TSecr: each end's clock in
        // milliseconds, and the peer's it echoes.
        let ms = |ns: u64| ((ns / 1_000_000) as u32).to_be_bytes();
        let (val, ecr) = match pkt.kind {
            PacketKind::TcpData | PacketKind::TcpAck => (ms(pkt.ts_val()), ms(pkt.ts_ecr())),
            PacketKind::SynAck => (ms(pkt.ts_val()), [0; 4]),
            _ => ([0; 4], [0; 4]),
        };
        buf.extend_from_slice(&[1, 1, 8, 10]);
        buf.extend_from_slice(&val);
        buf.extend_from_slice(&ecr);
    }
    let header_len = buf.len() - at;
    // AE (RFC 9768) is the lowest bit of the data-offset byte.
    buf[at + 12] = ((header_len / 4) as u8) << 4 | pkt.has(flags::AE) as u8;
    Transport {
        proto: 6,
        header_len,
        payload: if pkt.kind == PacketKind::TcpData {
            pkt.len
        } else {
            0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{FlowId, NodeId};
    use crate::time::SimTime;

    fn data(seq: u64, len: u32) -> Packet {
        let mut p = Packet::new(7, FlowId(3), NodeId(0), NodeId(5), PacketKind::TcpData);
        p.seq = seq;
        p.len = len;
        p.size = len + 40;
        p
    }

    #[test]
    fn tcp_data_frame_has_valid_checksums_and_fields() {
        let wire = FlowWire::new(3, Some(16 << 20), true, 1460);
        assert_eq!(wire.wscale, Some(9));
        let mut buf = Vec::new();
        let mut p = data(1000, 1460);
        p.flags |= flags::ECT | flags::CE;
        let n = frame(&mut buf, &p, (0, 1), &wire, None);
        assert_eq!(n, 14 + 20 + 20 + 1460);
        assert_eq!(buf.len(), 54);
        let ip = &buf[14..34];
        assert_eq!(ip[1] & 3, 3, "CE");
        assert_eq!(fold(sum16(0, ip)), 0, "IP checksum verifies");
        assert_eq!(&ip[12..16], &[10, 0, 0, 1]);
        assert_eq!(&ip[16..20], &[10, 0, 0, 6]);
        let tcp = &buf[34..];
        assert_eq!(u16::from_be_bytes([tcp[0], tcp[1]]), 1027);
        assert_eq!(u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]), 1001);
        // The pseudo-header sum over the header verifies the checksum.
        let mut s = sum16(0, &ip[12..20]);
        s += 6 + 20 + 1460;
        assert_eq!(fold(sum16(s, tcp)), 0);
    }

    #[test]
    fn timestamps_give_the_52_bytes_satqm_counts() {
        let mut wire = FlowWire::new(3, Some(16 << 20), true, 1448);
        wire.timestamps = true;
        let mut buf = Vec::new();
        let mut p = data(0, 1448);
        p.size = 1448 + 52;
        p.set_ts_val(SimTime::from_ms(65_000));
        p.set_ts_ecr(SimTime::from_ms(70_000).ns() + 999_999);
        assert_eq!(
            frame(&mut buf, &p, (0, 1), &wire, None),
            14 + p.size as usize
        );
        let tcp = &buf[34..];
        assert_eq!(tcp[12] >> 4, 8, "a 32-byte TCP header");
        assert_eq!(&tcp[20..24], &[1, 1, 8, 10]);
        // TSval 65,000 ms (the sender's clock), TSecr 70,000 ms.
        assert_eq!(&tcp[24..28], &65_000u32.to_be_bytes());
        assert_eq!(&tcp[28..32], &70_000u32.to_be_bytes());
        let ip = &buf[14..34];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1500);
        let mut s = sum16(0, &ip[12..20]);
        s += 6 + 32 + 1448;
        assert_eq!(fold(sum16(s, tcp)), 0, "the checksum covers the option");
        // A pure ACK: 52 bytes.
        let mut a = Packet::new(1, FlowId(3), NodeId(5), NodeId(0), PacketKind::TcpAck);
        a.set_ts_val(SimTime::from_ms(1_234));
        a.set_ts_ecr(SimTime::from_ms(65_000).ns());
        assert_eq!(frame(&mut buf, &a, (1, 0), &wire, None), 14 + 52);
        // Its TSval and TSecr in milliseconds.
        assert_eq!(&buf[14 + 20 + 24..14 + 20 + 28], &1_234u32.to_be_bytes());
        assert_eq!(&buf[14 + 20 + 28..14 + 20 + 32], &65_000u32.to_be_bytes());
        assert_eq!(a.len, 65_000, "an ACK's TSecr, in its payload length");
    }

    #[test]
    fn ect1_and_the_ace_field_are_written() {
        let wire = FlowWire::new(3, Some(16 << 20), true, 1460);
        let mut buf = Vec::new();
        let mut p = data(0, 1460);
        p.flags |= flags::ECT1;
        frame(&mut buf, &p, (0, 1), &wire, None);
        assert_eq!(buf[14 + 1] & 3, 0b01, "ECT(1)");
        p.flags |= flags::CE;
        frame(&mut buf, &p, (0, 1), &wire, None);
        assert_eq!(buf[14 + 1] & 3, 0b11, "CE");
        let mut a = Packet::new(1, FlowId(3), NodeId(5), NodeId(0), PacketKind::TcpAck);
        a.flags = flags::ace_flags(0b101);
        frame(&mut buf, &a, (1, 0), &wire, None);
        let tcp = &buf[34..];
        assert_eq!(tcp[12] & 1, 1, "AE");
        assert_eq!(tcp[13] & 0xc0, 0x40, "ECE without CWR");
        assert_eq!(tcp[12] >> 4, 5, "data offset unchanged");
    }

    #[test]
    fn sack_blocks_and_scaled_window_on_acks() {
        let wire = FlowWire::new(0, Some(1 << 20), true, 1460);
        let mut p = Packet::new(1, FlowId(0), NodeId(5), NodeId(0), PacketKind::TcpAck);
        p.ack = 100;
        p.rwnd = 1 << 20;
        p.set_sack_blocks(&[(200, 300), (400, 500)]);
        let mut buf = Vec::new();
        frame(&mut buf, &p, (5, 4), &wire, None);
        let tcp = &buf[34..];
        assert_eq!(tcp[12] >> 4, 10, "20 + 2 NOPs + 2 + 16 bytes");
        assert_eq!(
            u16::from_be_bytes([tcp[14], tcp[15]]),
            (1 << 20 >> 5) as u16
        );
        assert_eq!(&tcp[20..24], &[1, 1, 5, 18]);
        assert_eq!(
            u32::from_be_bytes([tcp[24], tcp[25], tcp[26], tcp[27]]),
            201
        );
        assert_eq!(
            u32::from_be_bytes([tcp[36], tcp[37], tcp[38], tcp[39]]),
            501
        );
    }

    #[test]
    fn syn_announces_window_scale_and_sack() {
        let wire = FlowWire::new(0, Some(1 << 20), true, 1000);
        let p = Packet::new(1, FlowId(0), NodeId(0), NodeId(1), PacketKind::Syn);
        let mut buf = Vec::new();
        frame(&mut buf, &p, (0, 1), &wire, None);
        let tcp = &buf[34..];
        assert_eq!(tcp[13], TCP_SYN);
        assert_eq!(&tcp[20..32], &[2, 4, 3, 232, 1, 1, 4, 2, 1, 3, 3, 5]);
    }

    #[test]
    fn atsp_packets_are_udp_datagrams_with_their_fields() {
        let wire = FlowWire::new(2, None, false, 0);
        let mut d = Packet::new(1, FlowId(2), NodeId(0), NodeId(5), PacketKind::AtspData);
        d.seq = 77;
        d.ack = 123_456_789;
        d.rwnd = 4;
        d.len = 1460;
        d.size = 1500;
        let mut buf = Vec::new();
        assert_eq!(frame(&mut buf, &d, (0, 1), &wire, None), 14 + 1500);
        let ip = &buf[14..34];
        assert_eq!(ip[9], 17);
        let udp = &buf[34..];
        assert_eq!(u16::from_be_bytes([udp[0], udp[1]]), 1026);
        assert_eq!(u16::from_be_bytes([udp[4], udp[5]]), 1480);
        assert_eq!(udp[8], 1);
        assert_eq!(u32::from_be_bytes(udp[12..16].try_into().unwrap()), 4);
        assert_eq!(u64::from_be_bytes(udp[16..24].try_into().unwrap()), 77);
        assert_eq!(
            u64::from_be_bytes(udp[24..32].try_into().unwrap()),
            123_456_789
        );
        let mut s = sum16(0, &ip[12..20]);
        s += 17 + 1480;
        assert_eq!(fold(sum16(s, udp)), 0, "UDP checksum verifies");

        let mut k = Packet::new(2, FlowId(2), NodeId(5), NodeId(0), PacketKind::AtspSack);
        k.size = 64;
        k.rwnd = 0.25f64.to_bits();
        k.ack = 70;
        k.set_sack_blocks(&[(71, 73)]);
        frame(&mut buf, &k, (5, 4), &wire, None);
        let udp = &buf[34..];
        assert_eq!(u16::from_be_bytes([udp[2], udp[3]]), 1026, "to the sender");
        assert_eq!(&udp[8..10], &[2, 1]);
        let rho = f64::from_bits(u64::from_be_bytes(udp[16..24].try_into().unwrap()));
        assert_eq!(rho, 0.25);
        assert_eq!(u64::from_be_bytes(udp[24..32].try_into().unwrap()), 70);
        assert_eq!(u64::from_be_bytes(udp[40..48].try_into().unwrap()), 71);
        assert_eq!(u64::from_be_bytes(udp[48..56].try_into().unwrap()), 73);
    }
}
