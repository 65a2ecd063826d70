//! The seam to the world outside the simulator, for emulation: real IP
//! packets that enter the network at a host and leave it at another, and
//! the flows that carry them.
//!
//! The core makes no OS call here. An emulator (the `satqm-emu` crate)
//! reads packets from its devices, finds or opens their flow
//! ([`Simulation::open_outside_flow`]), hands them in at the current time
//! ([`Simulation::inject`]), advances the simulation with its clock
//! ([`Simulation::run_until`], [`Simulation::next_event_time`]) and writes
//! out what the network delivered ([`Simulation::drain_outgoing`]).
//!
//! A real packet crosses ports, AQMs and links as a simulated one does: it
//! is a [`Packet`] of kind [`PacketKind::Outside`] whose bytes wait in a
//! slot of [`Outside`] until it is delivered or dropped.

use super::{Endpoints, Flow, Simulation};
use std::net::Ipv4Addr;

use crate::config::Scenario;
use crate::error::{ConfigError, Error, Result};
use crate::ids::{FlowId, FlowKind, NodeId};
use crate::packet::{flags, Packet, PacketKind};
use crate::time::SimTime;

/// The two ends of a real connection: what the flows table reports of it.
#[derive(Debug, Default)]
pub struct OutsideEnds {
    /// The TCP sequence number one past the highest payload byte delivered,
    /// each way (index 0: from the flow's `src`), once one was.
    next_seq: [Option<u32>; 2],
    /// Packets delivered each way.
    pub packets: [u64; 2],
    /// IP bytes delivered each way.
    pub bytes: [u64; 2],
}

impl OutsideEnds {
    /// New payload bytes a delivered packet brings, one way: for TCP, how
    /// far it moves the highest sequence number delivered (so
    /// retransmissions count once); for other protocols its payload.
    fn new_bytes(&mut self, way: usize, pkt: &Packet, tcp: bool) -> u64 {
        if !tcp {
            return pkt.len as u64;
        }
        let end = (pkt.seq as u32).wrapping_add(pkt.len);
        match self.next_seq[way] {
            // The first segment seen (a SYN, or data of a connection under
            // way): its payload.
            None => {
                self.next_seq[way] = Some(end);
                pkt.len as u64
            }
            Some(top) => {
                // Ahead of `top` by less than half the sequence space.
                let ahead = end.wrapping_sub(top);
                if ahead != 0 && ahead < 1 << 31 {
                    self.next_seq[way] = Some(end);
                    ahead as u64
                } else {
                    0
                }
            }
        }
    }
}

/// A real packet handed to the simulation.
#[derive(Debug)]
pub struct OutsidePacket<'a> {
    pub flow: FlowId,
    /// The host it enters at and the host it is addressed to.
    pub from: NodeId,
    pub to: NodeId,
    /// Its ECN codepoint as [`flags`] (`ECT`, `ECT1`, or `ECT | CE`).
    pub ecn: u8,
    /// Transport payload bytes and, for TCP, the sequence number.
    pub payload: u32,
    pub seq: u32,
    /// The whole IP packet.
    pub bytes: &'a [u8],
}

/// A real packet the network delivered to a host.
#[derive(Debug)]
pub struct Outgoing<'a> {
    /// When it reached the host.
    pub at: SimTime,
    /// Its packet id, as [`Simulation::inject`] returned it.
    pub uid: u64,
    pub node: NodeId,
    pub flow: FlowId,
    /// An AQM marked it Congestion Experienced on the way.
    pub ce: bool,
    /// The IP packet as it entered.
    pub bytes: &'a mut [u8],
}

/// The bytes of real packets inside the network, each in a slot reused
/// once its packet is delivered or dropped; and the deliveries not yet
/// written out.
#[derive(Debug, Default)]
pub struct Outside {
    slots: Vec<Vec<u8>>,
    free: Vec<u32>,
    /// Delivered: (time, packet).
    delivered: Vec<(SimTime, Packet)>,
    /// The real hosts (`[emulation]`) and their addresses.
    hosts: Vec<(NodeId, Ipv4Addr)>,
    prefix: u8,
}

impl Outside {
    fn store(&mut self, bytes: &[u8]) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Vec::new());
                (self.slots.len() - 1) as u32
            }
        };
        let buf = &mut self.slots[slot as usize];
        buf.clear();
        buf.extend_from_slice(bytes);
        slot
    }

    /// A real packet was dropped: its slot is free again.
    pub(super) fn dropped(&mut self, pkt: &Packet) {
        self.free.push(pkt.rwnd as u32);
    }

    /// Packets whose bytes are held (in the network or delivered and not
    /// yet written out).
    pub fn held(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The bytes of packet `pkt`, while it is held.
    pub fn bytes(&self, pkt: &Packet) -> &[u8] {
        &self.slots[pkt.rwnd as usize]
    }
}

impl Simulation {
    /// Find the real hosts `[emulation]` names (a build step).
    pub(super) fn place_real_hosts(&mut self, scenario: &Scenario) -> Result<()> {
        let Some(spec) = &scenario.emulation else {
            return Ok(());
        };
        let hosts: Vec<(NodeId, String)> = match &spec.hosts {
            Some(names) => names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let node = self.node(name).ok_or_else(|| {
                        ConfigError::new(
                            format!("emulation.hosts[{i}]"),
                            format!("no node named {name:?}"),
                        )
                    })?;
                    Ok((node, name.clone()))
                })
                .collect::<Result<_>>()?,
            None => {
                let &(a, b) = self.pairs.first().ok_or_else(|| {
                    ConfigError::new("emulation.hosts", "the topology has no host pair")
                })?;
                [a, b].map(|n| (n, self.node_names[n.idx()].clone())).into()
            }
        };
        self.outside.hosts = hosts
            .iter()
            .enumerate()
            .map(|(i, &(n, _))| (n, spec.address(i)))
            .collect();
        self.outside.prefix = spec.prefix;
        Ok(())
    }

    /// The real hosts of an emulation with their addresses, and the
    /// subnet's prefix length (none unless the scenario has `[emulation]`).
    pub fn real_hosts(&self) -> (&[(NodeId, Ipv4Addr)], u8) {
        (&self.outside.hosts, self.outside.prefix)
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.node_names
            .iter()
            .position(|n| n == name)
            .map(|i| NodeId(i as u32))
    }

    /// When the next event is due, if any is (at most the end of the run).
    pub fn next_event_time(&mut self) -> Option<SimTime> {
        self.queue.peek_time().filter(|&t| t <= self.end)
    }

    /// Open a flow for a real connection from host `src` to host `dst`
    /// (both directions of one 5-tuple), starting now. Fails if either
    /// way has no route.
    pub fn open_outside_flow(&mut self, src: NodeId, dst: NodeId) -> Result<FlowId> {
        let hops = [self.route_from(src, dst)?, self.route_from(dst, src)?];
        let id = FlowId(self.flows.len() as u32);
        let pair = self.pairs.len() as u32;
        let ends = Endpoints::Outside(Box::default());
        let mut flow = Flow::new(id, FlowKind::Real, pair, (src, dst), ends);
        flow.hops = hops.map(Some);
        flow.start = self.now;
        flow.entry = u32::MAX;
        self.flows.push(flow);
        self.end_to_end.push(id);
        self.taps.seq.real_opened(id, src);
        Ok(id)
    }

    /// The first link from `src` towards `dst`, after checking that the
    /// routes reach `dst`.
    fn route_from(&self, src: NodeId, dst: NodeId) -> Result<crate::ids::LinkId> {
        let unreachable = || {
            Error::Simulation(format!(
                "no route from {} to {}",
                self.node_names[src.idx()],
                self.node_names[dst.idx()]
            ))
        };
        let first = self.routes.next_hop(src, dst).ok_or_else(unreachable)?;
        let mut hop = first;
        for _ in 0..self.links.len() {
            let at = self.links[hop.idx()].to;
            if at == dst {
                return Ok(first);
            }
            hop = self.routes.next_hop(at, dst).ok_or_else(unreachable)?;
        }
        Err(unreachable())
    }

    /// Hand real packet `p` to the network at its host, now; returns its
    /// packet id.
    pub fn inject(&mut self, p: &OutsidePacket) -> Result<u64> {
        let flow = self
            .flows
            .get(p.flow.idx())
            .filter(|f| matches!(f.ends, Endpoints::Outside(_)))
            .ok_or_else(|| Error::Simulation(format!("flow {} is not a real one", p.flow.0)))?;
        let hop = flow.first_hop(p.from, p.to).ok_or_else(|| {
            Error::Simulation(format!("flow {} does not join those hosts", p.flow.0))
        })?;
        let mut pkt = Packet::new(self.next_uid, p.flow, p.from, p.to, PacketKind::Outside);
        self.next_uid += 1;
        pkt.size = p.bytes.len() as u32;
        pkt.len = p.payload;
        pkt.seq = p.seq as u64;
        pkt.flags = p.ecn & (flags::ECT | flags::ECT1 | flags::CE);
        pkt.rwnd = self.outside.store(p.bytes) as u64;
        if self.taps.seq.on() {
            self.taps.seq.real_sent(self.now, &pkt, p.bytes);
        }
        self.forward(p.from, &mut pkt, Some(hop))?;
        Ok(pkt.uid)
    }

    /// A real packet reached its host (from `deliver`). Kept out of line:
    /// simulations never call it.
    #[cold]
    #[inline(never)]
    pub(super) fn deliver_outside(&mut self, pkt: Packet) {
        let flow = &mut self.flows[pkt.flow.idx()];
        if let Endpoints::Outside(ends) = &mut flow.ends {
            let way = usize::from(pkt.src != flow.src);
            let tcp = self.outside.bytes(&pkt).get(9) == Some(&6);
            let new = ends.new_bytes(way, &pkt, tcp);
            ends.packets[way] += 1;
            ends.bytes[way] += pkt.size as u64;
            flow.delivered += new;
        }
        if self.taps.seq.on() {
            let bytes = self.outside.bytes(&pkt);
            self.taps.seq.real_delivered(self.now, &pkt, bytes);
        }
        self.outside.delivered.push((self.now, pkt));
    }

    /// Give each real packet delivered since the last call to `write`, in
    /// order of delivery, then free its bytes.
    pub fn drain_outgoing(&mut self, mut write: impl FnMut(Outgoing<'_>)) {
        let Outside {
            slots,
            free,
            delivered,
            ..
        } = &mut self.outside;
        for (at, pkt) in delivered.drain(..) {
            let slot = pkt.rwnd as u32;
            write(Outgoing {
                at,
                uid: pkt.uid,
                node: pkt.dst,
                flow: pkt.flow,
                ce: pkt.has(flags::CE),
                bytes: &mut slots[slot as usize],
            });
            free.push(slot);
        }
    }

    /// Real packets whose bytes the simulation holds.
    pub fn outside_held(&self) -> usize {
        self.outside.held()
    }
}
