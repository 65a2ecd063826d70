//! A link that plays a schedule, driven by hand with a small event loop:
//! when each packet reaches the far end, and what an outage drops.

use std::collections::BTreeMap;

use super::schedule::{InFlight, Order, Outage, Piece, Queued, Schedule, ScheduleSpec};
use super::{DelayModel, DropReason, Link, Port, PortSink};
use crate::engine::Event;
use crate::ids::{FlowId, FlowKind, LinkId, NodeId};
use crate::packet::{Packet, PacketKind};
use crate::queue::BufferLimit;
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

const L: LinkId = LinkId(0);

#[derive(Default)]
struct Loop {
    now: SimTime,
    events: BTreeMap<(SimTime, u64), Event>,
    n: u64,
    /// (time, uid, reason) of every drop.
    drops: Vec<(SimTime, u64, DropReason)>,
}

impl PortSink for Loop {
    fn log(&mut self, pkt: &Packet, _: u64, reason: DropReason) {
        self.drops.push((self.now, pkt.uid, reason));
    }
    fn held_in_host(&mut self, _: &Packet) {}
    fn left_host(&mut self, _: &Packet, _: SimTime) {}
    fn flow_kind(&self, _: &Packet) -> FlowKind {
        FlowKind::Bulk
    }
    fn schedule(&mut self, t: SimTime, ev: Event) {
        assert!(t >= self.now, "{ev:?} scheduled in the past");
        self.events.insert((t, self.n), ev);
        self.n += 1;
    }
}

fn piece(start_us: u64, rate: u64, delay_us: u64, up: bool) -> Piece {
    Piece {
        start: SimTime::from_us(start_us),
        rate: (Rate(rate), Rate(rate)),
        delay: (SimTime::from_us(delay_us), SimTime::from_us(delay_us)),
        loss: (0.0, 0.0),
        up,
    }
}

fn link(pieces: Vec<Piece>, order: Order, outage: Outage) -> Link {
    let p0 = pieces[0];
    let mut l = Link::new(
        "sat".into(),
        (NodeId(0), NodeId(1)),
        p0.rate.0,
        DelayModel::Fixed(p0.delay.0),
        0.0,
        Port::new(BufferLimit::Packets(100), None),
        Rng::stream(1, "link", 0),
        false,
    );
    let spec = ScheduleSpec {
        pieces,
        order,
        outage,
        opportunities: None,
    };
    l.set_schedule(Schedule::new(&spec, false));
    l
}

fn packet(uid: u64) -> Packet {
    let mut p = Packet::new(uid, FlowId(0), NodeId(0), NodeId(1), PacketKind::TcpData);
    p.size = 1500;
    p
}

/// Offer each `(time, uid)` packet to the link; return the (arrival time,
/// uid) of every packet that reached the far end, in arrival order, and
/// the drops.
type Outcome = (Vec<(SimTime, u64)>, Vec<(SimTime, u64, DropReason)>);

fn drive(l: &mut Link, offered: &[(SimTime, u64)]) -> Outcome {
    drive_until(l, offered, SimTime::from_secs(10))
}

fn drive_until(l: &mut Link, offered: &[(SimTime, u64)], end: SimTime) -> Outcome {
    let mut ev = Loop::default();
    l.begin(&mut ev);
    if let Some(t) = l.schedule().and_then(|s| s.next_start()) {
        ev.schedule(t, Event::LinkChange(L));
    }
    let mut offered = offered.iter().copied().peekable();
    let mut arrived = Vec::new();
    loop {
        let next_ev = ev.events.keys().next().map(|k| k.0).filter(|&t| t <= end);
        let next_offer = offered.peek().map(|o| o.0);
        match (next_offer, next_ev) {
            (Some(t), e) if e.is_none_or(|e| t <= e) => {
                ev.now = t;
                let (_, uid) = offered.next().expect("peeked");
                let mut p = packet(uid);
                l.enqueue(L, t, &mut p, &mut [], None, &mut ev);
            }
            (_, Some(_)) => {
                let ((t, _), e) = ev.events.pop_first().expect("an event");
                ev.now = t;
                match e {
                    Event::TxDone(_) => l.tx_done(L, t, &mut [], &mut ev),
                    Event::Arrive(_) => {
                        // As the simulation's `arrive`: the first packet,
                        // then the next one's event.
                        let p = l.line.take_front();
                        if let Some(&(next, _)) = l.line.front() {
                            ev.schedule(next, Event::Arrive(L));
                        }
                        if p.kind != PacketKind::Lost {
                            arrived.push((t, p.uid));
                        }
                    }
                    Event::ArriveOnSchedule(_) => {
                        if !l.claim(t) {
                            continue;
                        }
                        while let Some(p) = l.take_due(t) {
                            arrived.push((t, p.uid));
                        }
                        if let Some(at) = l.rearm() {
                            ev.schedule(at, Event::ArriveOnSchedule(L));
                        }
                    }
                    Event::LinkChange(_) => {
                        if let Some(next) = l.apply_change(L, t, &mut ev) {
                            ev.schedule(next, Event::LinkChange(L));
                        }
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            _ => break,
        }
    }
    (arrived, ev.drops)
}

fn burst(n: u64) -> Vec<(SimTime, u64)> {
    (0..n).map(|i| (SimTime::ZERO, i)).collect()
}

fn us(x: u64) -> SimTime {
    SimTime::from_us(x)
}

/// 10 Mbit/s until 10 ms, then 5 Mbit/s: a 1,500-byte packet takes 1.2 ms
/// before the step and 2.4 ms after; the one that spans it sends 4,000
/// bits before (0.4 ms) and 8,000 after (1.6 ms).
#[test]
fn a_rate_step_halves_the_service_rate_at_its_time() {
    let mut l = link(
        vec![
            piece(0, 10_000_000, 0, true),
            piece(10_000, 5_000_000, 0, true),
        ],
        Order::InOrder,
        Outage::default(),
    );
    let (arrived, drops) = drive(&mut l, &burst(12));
    assert!(drops.is_empty());
    let mut want: Vec<SimTime> = (1..=8).map(|k| us(1200 * k)).collect();
    want.push(us(11_600));
    for k in 1..=3 {
        want.push(us(11_600 + 2400 * k));
    }
    let got: Vec<SimTime> = arrived.iter().map(|a| a.0).collect();
    assert_eq!(got, want);
}

/// A delay ramp from 20 ms to 30 ms over 1 s: a packet gets the delay of
/// the instant its serialization ends, to the nanosecond.
#[test]
fn a_delay_ramp_delivers_packets_at_their_computed_times() {
    let mut p = piece(0, 10_000_000, 20_000, true);
    p.delay.1 = SimTime::from_ms(30);
    let mut l = link(
        vec![p, piece(1_000_000, 10_000_000, 30_000, true)],
        Order::InOrder,
        Outage::default(),
    );
    let offered: Vec<(SimTime, u64)> = (0..12).map(|k| (SimTime::from_ms(100 * k), k)).collect();
    let (arrived, _) = drive(&mut l, &offered);
    assert_eq!(arrived.len(), 12);
    for (k, &(t, uid)) in arrived.iter().enumerate() {
        assert_eq!(uid, k as u64);
        let end = SimTime::from_ms(100 * k as u64) + us(1200);
        // 20 ms + 10 ms x end / 1 s, in ns (exact here), then 30 ms.
        let d = if end.ns() < 1_000_000_000 {
            20_000_000 + end.ns() / 100
        } else {
            30_000_000
        };
        assert_eq!(t, end + SimTime(d), "packet {k}");
    }
}

/// The delay falls from 50 ms to 10 ms at 5 ms: in order, the packets
/// sent after the fall wait for those before; with reordering they
/// overtake them.
#[test]
fn a_falling_delay_keeps_order_or_reorders_as_stated() {
    let pieces = vec![
        piece(0, 10_000_000, 50_000, true),
        piece(5_000, 10_000_000, 10_000, true),
    ];
    let mut in_order = link(pieces.clone(), Order::InOrder, Outage::default());
    let (arrived, _) = drive(&mut in_order, &burst(8));
    let uids: Vec<u64> = arrived.iter().map(|a| a.1).collect();
    assert_eq!(uids, (0..8).collect::<Vec<_>>());
    // The first four end by 4.8 ms and take 50 ms; the rest end at 6 ms
    // and on, take 10 ms, and wait for the fourth (54.8 ms).
    assert_eq!(arrived[3].0, us(54_800));
    assert!(arrived[4..].iter().all(|a| a.0 == us(54_800)));

    let mut reorder = link(pieces, Order::Reorder, Outage::default());
    let (arrived, _) = drive(&mut reorder, &burst(8));
    let uids: Vec<u64> = arrived.iter().map(|a| a.1).collect();
    assert_eq!(uids, vec![4, 5, 6, 7, 0, 1, 2, 3]);
    assert_eq!(arrived[0].0, us(6_000 + 10_000));
    assert_eq!(arrived[4].0, us(1_200 + 50_000));
}

fn outage_link(queued: Queued, in_flight: InFlight) -> Link {
    // 10 Mbit/s, 10 ms; down from 5 ms to 25 ms.
    link(
        vec![
            piece(0, 10_000_000, 10_000, true),
            piece(5_000, 10_000_000, 10_000, false),
            piece(25_000, 10_000_000, 10_000, true),
        ],
        Order::InOrder,
        Outage { queued, in_flight },
    )
}

/// At 5 ms four packets are on their way (ended 1.2 to 4.8 ms) and the
/// fifth is being serialized (4.8 to 6 ms); 15 wait.
#[test]
fn an_outage_loses_what_is_in_flight_and_keeps_the_queue() {
    let mut l = outage_link(Queued::Keep, InFlight::Drop);
    let (arrived, drops) = drive(&mut l, &burst(20));
    let lost: Vec<u64> = drops.iter().map(|d| d.1).collect();
    assert_eq!(lost, vec![0, 1, 2, 3, 4]);
    assert!(drops
        .iter()
        .all(|d| d.0 == us(5_000) && d.2 == DropReason::Outage));
    // The sixth starts when the link is back: ends 26.2 ms, arrives 36.2.
    assert_eq!(arrived[0], (us(36_200), 5));
    assert_eq!(arrived.len(), 15);
    assert_eq!(arrived[14], (us(25_000 + 15 * 1_200 + 10_000), 19));
}

#[test]
fn an_outage_can_deliver_what_is_in_flight() {
    let mut l = outage_link(Queued::Keep, InFlight::Deliver);
    let (arrived, drops) = drive(&mut l, &burst(20));
    assert!(drops.is_empty());
    let first: Vec<(SimTime, u64)> = (0..5).map(|k| (us(11_200 + 1_200 * k), k)).collect();
    assert_eq!(arrived[..5], first[..]);
    assert_eq!(arrived[5], (us(36_200), 5));
    assert_eq!(arrived.len(), 20);
}

#[test]
fn an_outage_can_delay_what_is_in_flight_by_its_length() {
    let mut l = outage_link(Queued::Keep, InFlight::Delay);
    let mut held = outage_link(Queued::Keep, InFlight::Delay);
    // Before the first packet arrives, the line holds the five and the
    // place of the first one's pending arrival, which is not a packet.
    drive_until(&mut held, &burst(20), us(6_000));
    assert_eq!(held.line.len(), 6);
    assert_eq!(held.in_flight(), 20);
    let (arrived, drops) = drive(&mut l, &burst(20));
    assert!(drops.is_empty());
    let first: Vec<(SimTime, u64)> = (0..5)
        .map(|k| (us(11_200 + 1_200 * k + 20_000), k))
        .collect();
    assert_eq!(arrived[..5], first[..]);
    assert_eq!(arrived[5], (us(36_200), 5));
    assert_eq!(arrived.len(), 20);
}

/// With `queued = "drop"` the waiting packets go when the link does, and
/// so does a packet offered while it is down; one offered after it is
/// back goes through.
#[test]
fn an_outage_can_drop_the_queue_and_refuse_arrivals() {
    let mut l = outage_link(Queued::Drop, InFlight::Drop);
    let mut offered = burst(20);
    offered.push((us(10_000), 100));
    offered.push((us(30_000), 101));
    let (arrived, drops) = drive(&mut l, &offered);
    assert_eq!(drops.len(), 21);
    assert!(drops.iter().all(|d| d.2 == DropReason::Outage));
    assert_eq!(drops[20], (us(10_000), 100, DropReason::Outage));
    assert_eq!(arrived, vec![(us(30_000 + 1_200 + 10_000), 101)]);
}

/// A link that goes down for good drops what it is sending, and what
/// waits stays queued to the end.
#[test]
fn a_link_that_never_returns_holds_its_queue() {
    let mut l = link(
        vec![
            piece(0, 10_000_000, 10_000, true),
            piece(5_000, 10_000_000, 10_000, false),
        ],
        Order::InOrder,
        Outage {
            queued: Queued::Keep,
            in_flight: InFlight::Delay,
        },
    );
    let (arrived, drops) = drive(&mut l, &burst(20));
    assert!(arrived.is_empty());
    assert_eq!(drops.len(), 5); // delaying is dropping when it never returns
    assert_eq!(l.port.len(), 15);
    assert_eq!(l.in_flight(), 15);
}

/// A schedule that starts down: nothing leaves before the link is up.
#[test]
fn a_link_can_start_down() {
    let mut l = link(
        vec![
            piece(0, 10_000_000, 10_000, false),
            piece(5_000, 10_000_000, 10_000, true),
        ],
        Order::InOrder,
        Outage::default(),
    );
    let (arrived, drops) = drive(&mut l, &burst(3));
    assert!(drops.is_empty());
    assert_eq!(arrived[0], (us(5_000 + 1_200 + 10_000), 0));
    assert_eq!(arrived.len(), 3);
}
