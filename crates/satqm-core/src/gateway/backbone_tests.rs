//! A gateway's transmit link driven by hand: a PEP's backbone packets held
//! back, ordered and paced (`held.rs`), framed (`net/framing.rs`).

use std::collections::BTreeMap;

use super::{Held, HeldOrder};
use crate::engine::Event;
use crate::ids::{FlowId, FlowKind, LinkId, NodeId};
use crate::net::DelayModel;
use crate::net::{DropReason, Framing, Link, Port, PortSink};
use crate::packet::{Packet, PacketKind};
use crate::queue::BufferLimit;
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

#[derive(Default)]
struct Events {
    /// TxDone times (several may share one).
    txdone: BTreeMap<(SimTime, u64), ()>,
    n: u64,
    /// When each held packet entered the port.
    entered: Vec<SimTime>,
}

impl PortSink for Events {
    fn log(&mut self, _: &Packet, _: u64, reason: DropReason) {
        panic!("nothing is dropped behind backpressure: {reason:?}");
    }
    fn held_in_host(&mut self, _: &Packet) {}
    fn left_host(&mut self, _: &Packet, now: SimTime) {
        self.entered.push(now);
    }
    fn flow_kind(&self, _: &Packet) -> FlowKind {
        FlowKind::Bulk
    }
    fn schedule(&mut self, t: SimTime, ev: Event) {
        if let Event::TxDone(_) = ev {
            self.txdone.insert((t, self.n), ());
            self.n += 1;
        }
    }
}

fn link(rate: u64, held: Held, framing: Framing) -> Link {
    let port = Port::new(BufferLimit::Packets(10), Some(Box::new(held)));
    let mut l = Link::new(
        "transmit".into(),
        (NodeId(0), NodeId(1)),
        Rate(rate),
        DelayModel::Fixed(SimTime::ZERO),
        0.0,
        port,
        Rng::stream(1, "link", 0),
        false,
    );
    l.set_framing(framing);
    l
}

/// Offer `n` backbone packets of two connections at time 0 (and a second
/// burst at 2 s); return each packet's (start of serialization, size).
fn run(l: &mut Link, n: u64) -> Vec<(SimTime, Packet)> {
    let mut ev = Events::default();
    let mut starts = Vec::new();
    let record = |l: &mut Link, out: &mut Vec<(SimTime, Packet)>| {
        while let Some((end, p)) = l.line.pop_front() {
            let wire = l.rate().tx_time(p.size); // start = end - own time
            out.push((end - wire, p));
        }
    };
    for burst in [SimTime::ZERO, SimTime::from_secs(2)] {
        for i in 0..n {
            let mut p = Packet::new(
                i,
                FlowId((i % 2) as u32),
                NodeId(0),
                NodeId(1),
                PacketKind::TcpData,
            );
            p.size = 500 + 1000 * (i % 2) as u32;
            l.enqueue(LinkId(0), burst, &mut p, &mut [], None, &mut ev);
            record(l, &mut starts);
        }
        while let Some(((t, _), ())) = ev.txdone.pop_first() {
            l.tx_done(LinkId(0), t, &mut [], &mut ev);
            record(l, &mut starts);
        }
    }
    starts
}

#[test]
fn the_paced_backbone_never_exceeds_its_rate_over_100_packets() {
    let pace = 4_000_000;
    let mut l = link(
        10_000_000,
        Held::new(HeldOrder::Drr { quantum: 1500 }, Some(Rate(pace))),
        Framing::default(),
    );
    let sent = run(&mut l, 1000);
    assert_eq!(sent.len(), 2000, "every held packet is sent");
    for w in sent.windows(100) {
        let bits: u64 = w[..99].iter().map(|(_, p)| 8 * p.size as u64).sum();
        let span = (w[99].0 - w[0].0).secs_f64();
        assert!(
            bits as f64 <= pace as f64 * span + 1e-6,
            "{bits} bits in {span} s"
        );
    }
    // The pacer, not the 10 Mbit/s link, sets the pace: 2 x 1 MB in ~4 s.
    let (first, last) = (sent[0].0, sent[1999].0);
    assert!((last - first).secs_f64() > 3.9);
    // Unpaced, the same packets leave at the link's rate.
    let mut fast = link(10_000_000, Held::default(), Framing::default());
    let sent = run(&mut fast, 1000);
    let bits: u64 = sent[..999].iter().map(|(_, p)| 8 * p.size as u64).sum();
    assert_eq!((sent[999].0 - sent[0].0).secs_f64(), bits as f64 / 1e7);
}

#[test]
fn framing_slows_the_link_by_its_overhead() {
    // 10 bytes per packet and 10 per 990-byte frame: 100 packets of 1,000
    // bytes back to back fill 101,000 / 990 -> 103 frames.
    let mut l = link(8_000_000, Held::default(), Framing::new(10, 990, 10));
    let mut ev = Events::default();
    for i in 0..100 {
        let mut p = Packet::new(i, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
        p.size = 1000;
        l.enqueue(LinkId(0), SimTime::ZERO, &mut p, &mut [], None, &mut ev);
    }
    while let Some(((t, _), ())) = ev.txdone.pop_first() {
        l.tx_done(LinkId(0), t, &mut [], &mut ev);
    }
    let (last, _) = *l.line.back().unwrap();
    assert_eq!(l.line.len(), 100);
    assert_eq!(last, SimTime::from_us(101_000 + 103 * 10)); // 1 byte/us
}

#[test]
fn a_backbone_paced_above_the_link_rate_fills_the_queue() {
    // 1,000 packets of 1,500 bytes offered at once; the pacer lets them in
    // at 12 Mbit/s, the 10 Mbit/s link drains them: the 10-packet buffer
    // fills while the transmitter is busy, and then stays full.
    let (pace, rate) = (12_000_000, 10_000_000);
    let mut l = link(
        rate,
        Held::new(HeldOrder::Fifo, Some(Rate(pace))),
        Framing::default(),
    );
    let mut ev = Events::default();
    for i in 0..1000 {
        let mut p = Packet::new(i, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
        p.size = 1500;
        l.enqueue(LinkId(0), SimTime::ZERO, &mut p, &mut [], None, &mut ev);
    }
    let mut longest = 0;
    let mut starts = Vec::new();
    while let Some(((t, _), ())) = ev.txdone.pop_first() {
        let before = l.line.len();
        l.tx_done(LinkId(0), t, &mut [], &mut ev);
        if l.line.len() > before {
            starts.push(t);
        }
        longest = longest.max(l.port.len());
    }
    assert_eq!(l.line.len(), 1000, "every packet is sent");
    assert_eq!(longest, 10, "the queue reaches its buffer");
    // The link never idles: each packet starts as the previous one ends.
    let tx = Rate(rate).tx_time(1500);
    assert!(starts.windows(2).all(|w| w[1] == w[0] + tx));
    // Entries: never faster than the pacer, and at its pace (1 ms apart)
    // while the buffer has room, transmitter busy or not.
    let gap = Rate(pace).tx_time(1500);
    assert!(ev.entered.windows(2).all(|w| w[1] >= w[0] + gap));
    assert_eq!(ev.entered.len(), 999, "the first goes straight through");
    for (k, &t) in ev.entered[..40].iter().enumerate() {
        assert_eq!(t, SimTime((k as u64 + 1) * gap.ns()), "entry {k}");
    }
}
