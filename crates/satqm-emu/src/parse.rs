//! What the emulator reads of a real packet: its addresses, protocol,
//! ports, ECN codepoint and TCP sequence, through `etherparse`. A packet it
//! cannot carry is refused with a [`Reject`] reason, never a panic.

use std::net::Ipv4Addr;

use etherparse::{Ipv4Slice, TcpHeaderSlice, UdpHeaderSlice};
use satqm_core::packet::flags;

/// Why a packet read from a device is not carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reject {
    /// Shorter than an IPv4 header, or than its own total length says.
    Malformed,
    /// Not IPv4 (an IPv6 router solicitation, for one).
    NotIpv4,
    /// A fragment (the emulated hosts' path MTU is the device's).
    Fragment,
    /// Longer than the link's largest packet.
    Oversized,
    /// Addressed to no real host (or from an address not the device's).
    NoHost,
    /// The simulated network has no route between the two hosts.
    NoRoute,
}

impl Reject {
    pub const ALL: [Reject; 6] = [
        Reject::Malformed,
        Reject::NotIpv4,
        Reject::Fragment,
        Reject::Oversized,
        Reject::NoHost,
        Reject::NoRoute,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Reject::Malformed => "malformed",
            Reject::NotIpv4 => "not_ipv4",
            Reject::Fragment => "fragment",
            Reject::Oversized => "oversized",
            Reject::NoHost => "no_host",
            Reject::NoRoute => "no_route",
        }
    }
}

/// The connection a packet belongs to, the same both ways: the lower
/// (address, port) end first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnKey {
    pub proto: u8,
    pub a: (Ipv4Addr, u16),
    pub b: (Ipv4Addr, u16),
}

/// A real packet's fields the emulator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
    /// The ECN codepoint as satqm's packet flags.
    pub ecn: u8,
    /// Transport payload bytes (for TCP, after its header and options).
    pub payload: u32,
    /// TCP: the sequence number of the first payload byte (a SYN's own
    /// sequence number is not a byte's).
    pub seq: u32,
}

impl Parsed {
    pub fn key(&self) -> ConnKey {
        let (x, y) = ((self.src, self.sport), (self.dst, self.dport));
        let (a, b) = if x <= y { (x, y) } else { (y, x) };
        ConnKey {
            proto: self.proto,
            a,
            b,
        }
    }
}

/// Read `bytes` (one IP packet as a TUN device gives it), at most `max`
/// bytes long.
pub fn parse(bytes: &[u8], max: usize) -> Result<Parsed, Reject> {
    match bytes.first().map(|b| b >> 4) {
        None => return Err(Reject::Malformed),
        Some(4) => {}
        Some(_) => return Err(Reject::NotIpv4),
    }
    if bytes.len() > max {
        return Err(Reject::Oversized);
    }
    let ip = Ipv4Slice::from_slice(bytes).map_err(|_| Reject::Malformed)?;
    let h = ip.header();
    if h.total_len() as usize != bytes.len() {
        return Err(Reject::Malformed);
    }
    if ip.is_payload_fragmented() {
        return Err(Reject::Fragment);
    }
    let ecn = match h.ecn().value() {
        0b01 => flags::ECT1,
        0b10 => flags::ECT,
        0b11 => flags::ECT | flags::CE,
        _ => 0,
    };
    let proto = h.protocol().0;
    let body = ip.payload().payload;
    let mut p = Parsed {
        src: h.source_addr(),
        dst: h.destination_addr(),
        proto,
        sport: 0,
        dport: 0,
        ecn,
        payload: body.len() as u32,
        seq: 0,
    };
    match proto {
        6 => {
            let t = TcpHeaderSlice::from_slice(body).map_err(|_| Reject::Malformed)?;
            p.sport = t.source_port();
            p.dport = t.destination_port();
            p.payload = (body.len() - t.slice().len()) as u32;
            p.seq = t.sequence_number().wrapping_add(u32::from(t.syn()));
        }
        17 => {
            let u = UdpHeaderSlice::from_slice(body).map_err(|_| Reject::Malformed)?;
            p.sport = u.source_port();
            p.dport = u.destination_port();
            p.payload = body.len().saturating_sub(8) as u32;
        }
        _ => {}
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::PacketBuilder;
    use proptest::prelude::*;

    fn tcp_packet(payload: usize, syn: bool) -> Vec<u8> {
        let b =
            PacketBuilder::ipv4([10, 200, 0, 1], [10, 200, 0, 2], 64).tcp(5201, 40000, 1000, 65535);
        let b = if syn { b.syn() } else { b };
        let data = vec![7u8; payload];
        let mut out = Vec::new();
        b.write(&mut out, &data).unwrap();
        out
    }

    #[test]
    fn a_tcp_segment_gives_its_connection_and_payload() {
        let p = parse(&tcp_packet(100, false), 1500).unwrap();
        assert_eq!(
            (p.proto, p.sport, p.dport, p.payload, p.seq),
            (6, 5201, 40000, 100, 1000)
        );
        assert_eq!(p.ecn, 0);
        let back = Parsed {
            src: p.dst,
            dst: p.src,
            sport: p.dport,
            dport: p.sport,
            ..p
        };
        assert_eq!(p.key(), back.key(), "one key both ways");
        // A SYN's sequence number is its own, not a byte's.
        assert_eq!(parse(&tcp_packet(0, true), 1500).unwrap().seq, 1001);
    }

    #[test]
    fn the_ecn_codepoints_map_to_flags() {
        let mut b = tcp_packet(10, false);
        for (bits, want) in [
            (1, flags::ECT1),
            (2, flags::ECT),
            (3, flags::ECT | flags::CE),
        ] {
            b[1] = bits;
            assert_eq!(parse(&b, 1500).unwrap().ecn, want);
        }
    }

    #[test]
    fn packets_it_cannot_carry_are_refused_with_a_reason() {
        let good = tcp_packet(100, false);
        assert_eq!(parse(&[], 1500), Err(Reject::Malformed));
        assert_eq!(parse(&good[..30], 1500), Err(Reject::Malformed));
        let mut v6 = good.clone();
        v6[0] = 0x60;
        assert_eq!(parse(&v6, 1500), Err(Reject::NotIpv4));
        assert_eq!(parse(&good, 100), Err(Reject::Oversized));
        let mut frag = good.clone();
        frag[6] = 0x20; // more fragments
        assert_eq!(parse(&frag, 1500), Err(Reject::Fragment));
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(parse(&longer, 1500), Err(Reject::Malformed));
    }

    proptest! {
        /// Any bytes at all: a verdict, never a panic.
        #[test]
        fn any_bytes_parse_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse(&bytes, 1500);
        }

        /// A valid packet with its bytes changed: still a verdict.
        #[test]
        fn corrupted_packets_parse_or_are_refused(i in 0usize..140, v in any::<u8>(), n in 0usize..100) {
            let mut b = tcp_packet(n, false);
            let i = i % b.len();
            b[i] = v;
            let _ = parse(&b, 1500);
        }
    }
}
