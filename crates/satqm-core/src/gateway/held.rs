//! The packets a gateway's PEP holds back while its transmit queue is full
//! (the port's [`Upstream`]), and the rule that lets them in.
//!
//! - **Order**: one FIFO across all connections, or deficit round robin by
//!   bytes across connections (Shreedhar & Varghese, "Efficient fair
//!   queuing using deficit round robin", SIGCOMM 1995), as a PEP serving
//!   each connection's buffer in turn.
//! - **Pacing**: optionally, the PEP's backbone sends at most at a
//!   contracted rate: a packet enters the port no earlier than its
//!   predecessor's entry plus its own size at that rate, so that over any
//!   run of packets the bytes admitted (but the last packet's) never exceed
//!   the rate times the elapsed time. Data then waits in the PEP's
//!   per-connection buffers rather than in the transmit queue.

use std::collections::{HashMap, VecDeque};

use crate::ids::FlowId;
use crate::net::Upstream;
use crate::packet::Packet;
use crate::time::{Rate, SimTime};

/// How held-back packets are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeldOrder {
    Fifo,
    /// Deficit round robin with this quantum, bytes.
    Drr {
        quantum: u32,
    },
}

/// Held-back packets with their arrival index at the port.
#[derive(Debug)]
pub struct Held {
    order: Order,
    pace: Option<Pacer>,
}

#[derive(Debug)]
enum Order {
    Fifo(VecDeque<(Packet, u64)>),
    Drr(Drr),
}

#[derive(Debug, Clone, Copy)]
struct Pacer {
    rate: Rate,
    /// The earliest time the next packet may enter the port.
    next: SimTime,
}

impl Default for Held {
    fn default() -> Held {
        Held::new(HeldOrder::Fifo, None)
    }
}

impl Held {
    pub fn new(order: HeldOrder, pace: Option<Rate>) -> Held {
        Held {
            order: match order {
                HeldOrder::Fifo => Order::Fifo(VecDeque::new()),
                HeldOrder::Drr { quantum } => Order::Drr(Drr::new(quantum)),
            },
            pace: pace.map(|rate| Pacer {
                rate,
                next: SimTime::ZERO,
            }),
        }
    }

    /// The packet to let in next.
    #[inline]
    pub fn front(&mut self) -> Option<Packet> {
        match &mut self.order {
            Order::Fifo(q) => q.front().map(|&(p, _)| p),
            Order::Drr(d) => d.front(),
        }
    }
}

impl Upstream for Held {
    #[inline]
    fn len(&self) -> usize {
        match &self.order {
            Order::Fifo(q) => q.len(),
            Order::Drr(d) => d.len,
        }
    }

    #[inline]
    fn push_back(&mut self, pkt: Packet, index: u64) {
        match &mut self.order {
            Order::Fifo(q) => q.push_back((pkt, index)),
            Order::Drr(d) => d.push(pkt, index),
        }
    }

    /// The size of the packet to let in next.
    #[inline]
    fn front_size(&mut self) -> Option<u32> {
        match &mut self.order {
            Order::Fifo(q) => q.front().map(|(p, _)| p.size),
            Order::Drr(d) => d.front().map(|p| p.size),
        }
    }

    #[inline]
    fn pop_front(&mut self) -> Option<(Packet, u64)> {
        match &mut self.order {
            Order::Fifo(q) => q.pop_front(),
            Order::Drr(d) => d.pop(),
        }
    }

    /// Is the backbone paced?
    #[inline]
    fn paced(&self) -> bool {
        self.pace.is_some()
    }

    /// May a local packet enter the port at `now` as far as pacing goes?
    #[inline]
    fn pace_ok(&self, now: SimTime) -> bool {
        self.pace.is_none_or(|p| now >= p.next)
    }

    /// A local packet of `size` bytes entered the port at `now`.
    #[inline]
    fn entered(&mut self, now: SimTime, size: u32) {
        if let Some(p) = &mut self.pace {
            p.next = p.next.max(now) + p.rate.tx_time(size);
        }
    }

    /// When a paced port must look again at its held packets (none if
    /// unpaced or nothing is held).
    fn next_release(&self) -> Option<SimTime> {
        self.pace.filter(|_| !self.is_empty()).map(|p| p.next)
    }
}

/// Deficit round robin over per-connection FIFOs. Each connection with
/// packets waiting is in `active`; the one at the front gets `quantum`
/// bytes of credit when its turn starts and sends while its head packet
/// fits in its credit, then goes to the back; an emptied connection leaves
/// the round with no credit.
#[derive(Debug)]
struct Drr {
    quantum: u64,
    /// Per-connection queues; slots of connections with nothing waiting
    /// are reused (with their allocation).
    slots: Vec<Slot>,
    free: Vec<usize>,
    of_flow: HashMap<FlowId, usize>,
    active: VecDeque<usize>,
    /// The connection at the front of `active` has had its quantum for
    /// this turn.
    credited: bool,
    len: usize,
}

#[derive(Debug, Default)]
struct Slot {
    q: VecDeque<(Packet, u64)>,
    deficit: u64,
}

impl Drr {
    fn new(quantum: u32) -> Drr {
        Drr {
            quantum: quantum.max(1) as u64,
            slots: Vec::new(),
            free: Vec::new(),
            of_flow: HashMap::new(),
            active: VecDeque::new(),
            credited: false,
            len: 0,
        }
    }

    fn push(&mut self, pkt: Packet, index: u64) {
        let s = match self.of_flow.get(&pkt.flow) {
            Some(&s) => s,
            None => {
                let s = self.free.pop().unwrap_or_else(|| {
                    self.slots.push(Slot::default());
                    self.slots.len() - 1
                });
                self.of_flow.insert(pkt.flow, s);
                self.active.push_back(s);
                s
            }
        };
        self.slots[s].q.push_back((pkt, index));
        self.len += 1;
    }

    /// Advance the round to the connection whose head packet goes next.
    fn front(&mut self) -> Option<Packet> {
        loop {
            let &s = self.active.front()?;
            let slot = &mut self.slots[s];
            if !self.credited {
                slot.deficit += self.quantum;
                self.credited = true;
            }
            let &(p, _) = slot.q.front().expect("an active connection has packets");
            if p.size as u64 <= slot.deficit {
                return Some(p);
            }
            self.active.rotate_left(1);
            self.credited = false;
        }
    }

    fn pop(&mut self) -> Option<(Packet, u64)> {
        self.front()?;
        let s = *self.active.front().expect("front found one");
        let slot = &mut self.slots[s];
        let (p, index) = slot.q.pop_front().expect("front found one");
        slot.deficit -= p.size as u64;
        self.len -= 1;
        if slot.q.is_empty() {
            slot.deficit = 0;
            self.active.pop_front();
            self.of_flow.remove(&p.flow);
            self.free.push(s);
            self.credited = false;
        }
        Some((p, index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::NodeId;
    use crate::packet::PacketKind;

    fn pkt(flow: u32, size: u32) -> Packet {
        let mut p = Packet::new(0, FlowId(flow), NodeId(0), NodeId(1), PacketKind::TcpData);
        p.size = size;
        p
    }

    #[test]
    fn drr_serves_two_backlogged_connections_equally_within_one_packet() {
        let mut h = Held::new(HeldOrder::Drr { quantum: 1500 }, None);
        // Connection 0 sends 1,500-byte packets, connection 1 520-byte ones,
        // all queued before connection 1's first.
        for i in 0..400 {
            h.push_back(pkt(0, 1500), i);
        }
        for i in 0..1000 {
            h.push_back(pkt(1, 520), 400 + i);
        }
        let mut bytes = [0u64; 2];
        let mut rounds = 0;
        let mut prev = 0;
        for n in 0..600 {
            let (p, _) = h.pop_front().unwrap();
            let f = p.flow.idx();
            if f == 0 && prev == 1 {
                // A round has ended: equal within one packet.
                rounds += 1;
                let gap = bytes[0].abs_diff(bytes[1]);
                assert!(gap < 1500, "after round {rounds}: {bytes:?}");
            }
            bytes[f] += p.size as u64;
            prev = f;
            // Within a round: at most a quantum and a packet apart.
            assert!(bytes[0].abs_diff(bytes[1]) <= 3000, "after {n} packets");
        }
        assert!(rounds > 100);
        assert_eq!(h.len(), 800);
        // FIFO serves connection 0 first.
        let mut f = Held::default();
        f.push_back(pkt(0, 1500), 0);
        f.push_back(pkt(0, 1500), 1);
        f.push_back(pkt(1, 520), 2);
        let order: Vec<u32> = (0..3).map(|_| f.pop_front().unwrap().0.flow.0).collect();
        assert_eq!(order, [0, 0, 1]);
    }

    #[test]
    fn drr_keeps_each_connections_order_and_loses_nothing() {
        let mut h = Held::new(HeldOrder::Drr { quantum: 1000 }, None);
        for i in 0..30u64 {
            h.push_back(pkt((i % 3) as u32, 400 + 300 * (i % 4) as u32), i);
        }
        let mut last = [None::<u64>; 3];
        let mut n = 0;
        while let Some((p, index)) = h.pop_front() {
            let l = &mut last[p.flow.idx()];
            assert!(l.is_none_or(|x| x < index));
            *l = Some(index);
            n += 1;
        }
        assert_eq!((n, h.len()), (30, 0));
    }

    #[test]
    fn pacing_spaces_entries_by_size_at_the_rate() {
        let mut h = Held::new(HeldOrder::Fifo, Some(Rate(8_000_000)));
        assert!(h.pace_ok(SimTime::ZERO));
        h.entered(SimTime::ZERO, 1000); // 1 ms at 8 Mbit/s
        assert!(!h.pace_ok(SimTime::from_us(999)));
        assert!(h.pace_ok(SimTime::from_ms(1)));
        // No credit builds up while idle.
        h.entered(SimTime::from_ms(5), 500);
        assert!(!h.pace_ok(SimTime::from_us(5499)));
        assert_eq!(h.next_release(), None, "nothing held");
        h.push_back(pkt(0, 100), 0);
        assert_eq!(h.next_release(), Some(SimTime::from_us(5500)));
    }
}
