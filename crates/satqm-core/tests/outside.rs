//! The seam for real packets (emulation), without an OS: packets handed in
//! as bytes cross the simulated network and come out as bytes, each one
//! delivered, dropped with a logged reason, or still in flight.

use satqm_core::capture::headers::set_ce;
use satqm_core::packet::flags;
use satqm_core::sim::OutsidePacket;
use satqm_core::{SimTime, Simulation};

const BASE: &str = r#"
[simulation]
duration = "30 s"
[topology]
kind = "dumbbell"
pairs = 2
[topology.access]
rate = "100 Mbps"
delay = "1 ms"
[topology.bottleneck]
rate = "10 Mbps"
delay = "250 ms"
buffer = 50
[emulation]
"#;

/// An IPv4/UDP packet of `len` bytes in all, with ECN field `ecn`.
fn ipv4(len: usize, ecn: u8, id: u16) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[0] = 0x45;
    b[1] = ecn;
    b[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    b[4..6].copy_from_slice(&id.to_be_bytes());
    b[8] = 64;
    b[9] = 17;
    b[12..16].copy_from_slice(&[10, 200, 0, 1]);
    b[16..20].copy_from_slice(&[10, 200, 0, 2]);
    let c = checksum(&b[..20]);
    b[10..12].copy_from_slice(&c.to_be_bytes());
    b
}

fn checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

struct Out {
    at: SimTime,
    uid: u64,
    ce: bool,
    bytes: Vec<u8>,
}

/// Hand `n` packets of 1,500 bytes to `sim` every `gap`, from the first
/// real host to the second; return their ids and entry times, and what
/// came out.
fn drive(sim: &mut Simulation, n: u64, gap: SimTime, ecn: u8) -> (Vec<(u64, SimTime)>, Vec<Out>) {
    let (hosts, _) = sim.real_hosts();
    let (a, b) = (hosts[0].0, hosts[1].0);
    let flow = sim.open_outside_flow(a, b).unwrap();
    let (mut sent, mut out) = (Vec::new(), Vec::new());
    for i in 0..n {
        let t = SimTime::from_ns(gap.ns() * i);
        sim.run_until(t).unwrap();
        let bytes = ipv4(1500, ecn, i as u16);
        let uid = sim
            .inject(&OutsidePacket {
                flow,
                from: a,
                to: b,
                ecn: [0, flags::ECT1, flags::ECT, flags::ECT | flags::CE][ecn as usize],
                payload: 1472,
                seq: 0,
                bytes: &bytes,
            })
            .unwrap();
        sent.push((uid, t));
        sim.drain_outgoing(|o| {
            out.push(Out {
                at: o.at,
                uid: o.uid,
                ce: o.ce,
                bytes: o.bytes.to_vec(),
            })
        });
    }
    sim.run_until(SimTime::from_secs(20)).unwrap();
    sim.drain_outgoing(|o| {
        out.push(Out {
            at: o.at,
            uid: o.uid,
            ce: o.ce,
            bytes: o.bytes.to_vec(),
        })
    });
    (sent, out)
}

#[test]
fn every_real_packet_is_delivered_dropped_or_in_flight() {
    let mut sim = Simulation::from_toml(BASE).unwrap();
    // 2,000 packets at 20 Mbit/s into a 10 Mbit/s link with 50 packets of
    // buffer: about half are dropped.
    let (sent, out) = drive(&mut sim, 2000, SimTime::from_ns(600_000), 0);
    let counts = sim.packet_counts();
    assert_eq!(counts.created, 2000);
    assert_eq!(counts.delivered, out.len() as u64);
    assert_eq!(
        counts.created,
        counts.delivered + counts.dropped + counts.in_flight
    );
    assert!(counts.dropped > 800 && counts.dropped < 1200, "{counts:?}");
    assert_eq!(
        sim.drops.flow.len() as u64,
        counts.dropped,
        "each drop logged"
    );
    assert_eq!(sim.outside_held(), 0, "every slot freed");
    // In order, unchanged, and no earlier than the links' delays allow:
    // two access links (1 ms) and the bottleneck (250 ms), and the
    // serialisation at each.
    let entered: std::collections::HashMap<u64, SimTime> = sent.into_iter().collect();
    let floor = 252_000_000 + 1_200_000 + 2 * 120_000;
    let mut last = 0;
    for o in &out {
        assert!(o.uid > last || last == 0, "in order");
        last = o.uid;
        let delay = o.at.ns() - entered[&o.uid].ns();
        assert!(delay >= floor, "{delay} ns");
        // At most the floor plus a full buffer's wait (50 x 1.2 ms).
        assert!(delay <= floor + 51 * 1_200_000, "{delay} ns");
        assert_eq!(o.bytes, ipv4(1500, 0, (o.uid) as u16), "bytes unchanged");
        assert!(!o.ce);
    }
    let flows = sim.flow_summaries();
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0].kind.name(), "real");
    assert_eq!(flows[0].bytes_delivered, 1472 * out.len() as u64);
}

#[test]
fn an_aqm_marks_ecn_capable_real_packets_and_drops_the_others() {
    let marking = format!(
        "{BASE}\n[[aqm]]\nkind = \"red\"\nmode = \"mark\"\nmin_th = 5\nmax_th = 15\nmax_p = 0.5\nw_q = 0.02\n"
    );
    for (ecn, capable) in [(0u8, false), (1, true), (2, true)] {
        let mut sim = Simulation::from_toml(&marking).unwrap();
        let (_, out) = drive(&mut sim, 1000, SimTime::from_ns(1_000_000), ecn);
        let marked = out.iter().filter(|o| o.ce).count();
        if capable {
            assert!(marked > 10, "ECT({}) packets marked", 2 - ecn);
            for o in out.iter().filter(|o| o.ce) {
                let mut b = o.bytes.clone();
                set_ce(&mut b);
                assert_eq!(b[1] & 0b11, 0b11);
                assert_eq!(checksum(&b[..20]), 0, "the header checksum still holds");
            }
        } else {
            assert_eq!(marked, 0);
            assert!(sim.packet_counts().dropped > 10, "not ECN-capable: dropped");
        }
    }
}

#[test]
fn a_real_flow_needs_a_route_both_ways_and_its_own_hosts() {
    let mut sim = Simulation::from_toml(BASE).unwrap();
    let (hosts, prefix) = sim.real_hosts();
    assert_eq!(prefix, 24);
    assert_eq!(hosts[0].1.to_string(), "10.200.0.1");
    assert_eq!(hosts[1].1.to_string(), "10.200.0.2");
    let (a, b) = (hosts[0].0, hosts[1].0);
    let other = sim.node("sender[1]").unwrap();
    let f = sim.open_outside_flow(a, b).unwrap();
    let bytes = ipv4(100, 0, 0);
    let p = OutsidePacket {
        flow: f,
        from: other,
        to: b,
        ecn: 0,
        payload: 72,
        seq: 0,
        bytes: &bytes,
    };
    assert!(
        sim.inject(&p).is_err(),
        "a packet from a host not the flow's"
    );
}

#[test]
fn the_emulation_section_names_existing_nodes() {
    let bad = BASE.replace(
        "[emulation]",
        "[emulation]\nhosts = [\"sender[0]\", \"moon\"]",
    );
    let Err(err) = Simulation::from_toml(&bad) else {
        panic!("a host that is no node was accepted");
    };
    let err = err.to_string();
    assert!(
        err.contains("emulation.hosts[1]") && err.contains("moon"),
        "{err}"
    );
}

/// A real TCP segment from host `from` (10.200.0.1 or .2) to the other.
fn tcp(
    from: u8,
    seq: u32,
    ack: u32,
    payload: usize,
    build: impl FnOnce(
        etherparse::PacketBuilderStep<etherparse::TcpHeader>,
    ) -> etherparse::PacketBuilderStep<etherparse::TcpHeader>,
) -> Vec<u8> {
    let to = 3 - from;
    let b = etherparse::PacketBuilder::ipv4([10, 200, 0, from], [10, 200, 0, to], 64).tcp(
        40000 + from as u16,
        5201,
        seq,
        1000,
    );
    let b = build(b.ack(ack));
    let mut out = Vec::new();
    b.write(&mut out, &vec![1u8; payload]).unwrap();
    out
}

#[test]
fn real_tcp_connections_get_sequence_records_in_their_own_numbering() {
    let toml = BASE.replace("[emulation]", "[emulation]\ntrace_seq = true");
    let mut sim = Simulation::from_toml(&toml).unwrap();
    let (hosts, _) = sim.real_hosts();
    let (a, b) = (hosts[0].0, hosts[1].0);
    let flow = sim.open_outside_flow(a, b).unwrap();
    // An initial sequence number 30 segments below 2^32: the numbering
    // must unwrap.
    let isn = u32::MAX - 30 * 1448;
    let send = |sim: &mut Simulation, from, seq: u32, payload: usize, bytes: &[u8]| {
        let (x, y) = if from == 1 { (a, b) } else { (b, a) };
        sim.inject(&OutsidePacket {
            flow,
            from: x,
            to: y,
            ecn: 0,
            payload: payload as u32,
            seq,
            bytes,
        })
        .unwrap();
    };
    let syn = tcp(1, isn, 0, 0, |b| {
        b.syn()
            .options(&[etherparse::TcpOptionElement::WindowScale(7)])
            .unwrap()
    });
    send(&mut sim, 1, isn.wrapping_add(1), 0, &syn);
    let synack = tcp(2, 9, isn.wrapping_add(1), 0, |b| {
        b.syn()
            .options(&[etherparse::TcpOptionElement::WindowScale(5)])
            .unwrap()
    });
    send(&mut sim, 2, 10, 0, &synack);
    // 100 segments of 1,448 bytes every 0.5 ms (24 Mbit/s into 10 Mbit/s
    // with 50 packets of buffer): the tail of the burst is dropped.
    for i in 0..100u32 {
        sim.run_until(SimTime::from_ns(1_000_000 + 500_000 * i as u64))
            .unwrap();
        let seq = isn.wrapping_add(1).wrapping_add(1448 * i);
        send(&mut sim, 1, seq, 1448, &tcp(1, seq, 10, 1448, |b| b));
    }
    sim.run_until(SimTime::from_secs(1)).unwrap();
    // The receiver acknowledges the first segment, with a SACK block for
    // the third; then the sender resends the second.
    let ack = tcp(2, 10, isn.wrapping_add(1 + 1448), 0, |b| {
        b.options(&[etherparse::TcpOptionElement::SelectiveAcknowledgement(
            (
                isn.wrapping_add(1 + 2 * 1448),
                isn.wrapping_add(1 + 3 * 1448),
            ),
            [None, None, None],
        )])
        .unwrap()
    });
    send(&mut sim, 2, 10, 0, &ack);
    let seq = isn.wrapping_add(1 + 1448);
    send(&mut sim, 1, seq, 1448, &tcp(1, seq, 10, 1448, |b| b));
    sim.run_until(SimTime::from_secs(3)).unwrap();

    let log = &sim.taps.seq.log;
    let rows: Vec<(u8, u8, u64, u64)> = (0..log.event.len())
        .map(|i| (log.event[i], log.way[i], log.seq[i], log.end[i]))
        .collect();
    assert!(log.flow.iter().all(|&f| f == flow.0));
    assert!(rows.iter().all(|r| r.1 == 0), "only way 0 carried data");
    let sent: Vec<u64> = rows.iter().filter(|r| r.0 == 0).map(|r| r.2).collect();
    assert_eq!(sent, (0..100).map(|i| 1448 * i).collect::<Vec<_>>());
    // Each drop is logged with its segment's offset, and the drop log
    // agrees.
    let dropped: Vec<u64> = rows.iter().filter(|r| r.0 == 4).map(|r| r.2).collect();
    assert_eq!(dropped.len(), sim.drops.flow.len());
    assert!(!dropped.is_empty() && dropped.iter().all(|s| s % 1448 == 0 && *s > 0));
    // The ACK: cumulative ACK at 1,448, its window scaled by the receiver's
    // announced 2^5; the SACK block; and the resent segment.
    assert!(rows.contains(&(2, 0, 1448, 1448 + 1000 * 32)), "{rows:?}");
    assert!(rows.contains(&(3, 0, 2 * 1448, 3 * 1448)));
    assert!(rows.contains(&(1, 0, 1448, 2 * 1448)));
}
