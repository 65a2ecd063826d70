//! The simulation: its entities, the run loop and event dispatch.
//!
//! One [`Simulation`] is one single-threaded, deterministic run. Its rooms:
//!
//! - `build.rs`: from a validated scenario to nodes, links, AQMs, PEPs,
//!   flows and applications;
//! - `apps.rs`: what each application does when its timers fire;
//! - `transport.rs`: the glue between transports and the network (packets
//!   an endpoint emits, its timers, deliveries, PEP relays);
//! - `network.rs`: a packet's hops (forwarding, ports, transmitters, delay
//!   lines), through `net/`;
//! - `measure.rs`: the periodic sampler and the warm-up snapshot;
//! - `report.rs`: the typed run and flow summaries;
//! - `budget.rs`: the up-front estimate of a run's memory, and its check
//!   as the run goes (`budget/guard.rs`).

mod apps;
mod budget;
mod build;
mod capture;
mod measure;
mod network;
mod outside;
mod report;
mod transport;

pub use budget::{Detail, Estimate, Host, Part};
pub use capture::Taps;
pub use outside::{Outgoing, Outside, OutsideEnds, OutsidePacket};
pub use report::{FlowSummary, PacketCounts, RunSummary, SummaryValue};

use crate::config::Scenario;
use crate::engine::{Event, EventQueue};
use crate::error::Result;
use crate::gateway::{Pep, Relay};
use crate::hint;
use crate::ids::{AppId, FlowId, FlowKind, LinkId, NodeId, RelayId};
use crate::net::{Link, PlacedAqm, Routes};
use crate::packet::Packet;
use crate::probe::{CongestionLog, CwndTrace, DropLog, LinkState, TimeSeries, TrafficTrace};
use crate::time::SimTime;
use crate::traffic::App;
use crate::transport::atsp::{AtspReceiver, AtspSender};
use crate::transport::tcp::{TcpReceiver, TcpSender};
use crate::transport::udp::UdpSink;

/// The two ends of a flow.
#[derive(Debug)]
pub enum Endpoints {
    Tcp {
        sender: Box<TcpSender>,
        receiver: Box<TcpReceiver>,
    },
    Udp {
        sink: UdpSink,
    },
    Atsp {
        sender: Box<AtspSender>,
        receiver: Box<AtspReceiver>,
    },
    /// A real connection between emulated hosts (`outside.rs`).
    Outside(Box<OutsideEnds>),
}

/// A flow (one connection, or one UDP or ATSP stream).
///
/// Laid out for the cache (`repr(C)`, one 64-byte line aligned): what every
/// packet delivered to the flow reads comes first (its endpoints, timers
/// and relays in the first line, its delivery count and origin in the
/// second), the description of the flow after them.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Flow {
    pub ends: Endpoints,
    sender_timer: Option<SimTime>,
    ack_timer: Option<SimTime>,
    /// The relay this connection's receiver feeds.
    relay_in: Option<RelayId>,
    /// The relay that feeds this connection's sender.
    relay_out: Option<RelayId>,
    /// Payload bytes delivered in order to the receiving application.
    pub delivered: u64,
    /// When the receiver got the last byte of a finite transfer.
    pub completed: Option<SimTime>,
    /// The application to tell when the transfer has arrived.
    owner: Option<AppId>,
    /// The end-to-end flow this connection carries (itself unless it is a
    /// segment a PEP opened).
    pub origin: FlowId,
    /// Its receiver is the final destination: deliveries count for `origin`.
    pub last_hop: bool,
    pub kind: FlowKind,
    pub id: FlowId,
    pub pair: u32,
    pub src: NodeId,
    pub dst: NodeId,
    /// The first link of the route from `src` to `dst` and of the one back
    /// (`None` if there is none): an endpoint's packets leave on it without
    /// a look at the routing table, whose entry for a host among 100,000
    /// is seldom in the caches when the flow is.
    hops: [Option<LinkId>; 2],
    /// The application that drives it (none for a PEP's connections).
    pub app: Option<AppId>,
    /// The traffic entry it belongs to (its index in `[[traffic]]`).
    pub entry: u32,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub delivered_at_warmup: Option<u64>,
    /// `delivered` when the flow's application stopped it (its `stop`).
    pub delivered_at_stop: Option<u64>,
}

impl Flow {
    fn new(
        id: FlowId,
        kind: FlowKind,
        pair: u32,
        (src, dst): (NodeId, NodeId),
        ends: Endpoints,
    ) -> Flow {
        Flow {
            id,
            kind,
            pair,
            src,
            dst,
            hops: [None, None],
            app: None,
            entry: 0,
            start: SimTime::ZERO,
            stop: None,
            ends,
            delivered: 0,
            delivered_at_warmup: None,
            delivered_at_stop: None,
            completed: None,
            sender_timer: None,
            ack_timer: None,
            origin: id,
            last_hop: true,
            relay_in: None,
            relay_out: None,
            owner: None,
        }
    }

    /// The first link from `from` towards `to` if they are this flow's two
    /// ends (either way round), as the routing table holds it.
    #[inline]
    fn first_hop(&self, from: NodeId, to: NodeId) -> Option<LinkId> {
        if (from, to) == (self.src, self.dst) {
            self.hops[0]
        } else if (from, to) == (self.dst, self.src) {
            self.hops[1]
        } else {
            None
        }
    }
}

pub struct Simulation {
    now: SimTime,
    end: SimTime,
    warmup: SimTime,
    sample_interval: SimTime,
    queue: EventQueue,
    pub node_names: Vec<String>,
    pub links: Vec<Link>,
    routes: Routes,
    pub flows: Vec<Flow>,
    apps: Vec<App>,
    /// The traffic entry of each application.
    app_entry: Vec<u32>,
    /// Packets the endpoint being handled has just emitted.
    out: Vec<Packet>,
    next_uid: u64,
    delivered_packets: u64,
    /// Drops counted for the conservation check (and, without the drop
    /// log, the summary's counts).
    losses: network::Losses,
    pub timeseries: TimeSeries,
    pub drops: DropLog,
    pub cwnd: CwndTrace,
    /// Every window cut of every TCP sender.
    pub congestion: CongestionLog,
    /// The traced flows, by their place in `end_to_end`.
    trace_cwnd: Vec<FlowId>,
    /// Every flow but the PEPs' relayed connections, in order of creation:
    /// the flow ids a scenario names (in order of entries, then pairs),
    /// which are the flows' own ids when no PEP splits a connection.
    end_to_end: Vec<FlowId>,
    /// Each traffic entry's delivered bytes over time, if the scenario asks
    /// (`simulation.trace_traffic`).
    pub traffic: TrafficTrace,
    /// The state of the links that play a schedule, over time.
    pub link_state: LinkState,
    /// Those links.
    scheduled: Vec<LinkId>,
    /// When routers move traffic from one path to another.
    route_changes: Vec<crate::topology::RouteChange>,
    /// The running sums of the traffic trace, one per entry (empty when it
    /// is off).
    entry_bytes: Vec<u64>,
    /// The link whose figures the summary reports.
    pub bottleneck: LinkId,
    /// (sender, receiver) node of each host pair.
    pairs: Vec<(NodeId, NodeId)>,
    /// Distinct senders and receivers of the pairs (web traffic's servers
    /// and clients).
    servers: Vec<NodeId>,
    clients: Vec<NodeId>,
    /// Links the sampler records.
    monitored: Vec<LinkId>,
    /// The end of the warm-up has not been reached yet.
    warmup_pending: bool,
    /// The run loop prefetches from this many links on
    /// ([`PREFETCH_MIN_LINKS`]; tests change it).
    prefetch_min_links: usize,
    pub aqms: Vec<PlacedAqm>,
    peps: Vec<Pep>,
    pub relays: Vec<Relay>,
    pub seed: u64,
    /// Packet captures and sequence records, if the scenario asks.
    pub taps: Taps,
    /// The memory limit, checked as the run goes.
    guard: budget::guard::Guard,
    /// Real packets' bytes, in an emulation (`outside.rs`).
    outside: Outside,
}

/// From this many links on, the run loop prefetches what the next events
/// read ([`Simulation::prefetch_ahead`]). Below it the state mostly fits in
/// the caches and the prefetches cost more than they save. On the scale
/// bench's dumbbell (four links per flow) they cost 13 % of CPU at 300
/// flows and 6 % at 1,000 (100 Mbit/s), nothing measurable at 3,000, and
/// save 8 % at 10,000 and 21 % at 30,000 (1 Gbit/s).
const PREFETCH_MIN_LINKS: usize = 16_384;

impl Simulation {
    /// Parse, validate and build in one step.
    pub fn from_toml(text: &str) -> Result<Simulation> {
        Simulation::new(&Scenario::from_toml(text)?)
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn end(&self) -> SimTime {
        self.end
    }

    pub fn finished(&self) -> bool {
        self.now >= self.end
    }

    pub fn events_processed(&self) -> u64 {
        self.queue.processed()
    }

    /// Process every event up to and including time `t` (at most the end
    /// of the run).
    pub fn run_until(&mut self, t: SimTime) -> Result<()> {
        self.run_until_budget(t, u64::MAX).map(|_| ())
    }

    /// Like [`run_until`](Self::run_until) but stops after `max_events`
    /// events; returns whether time `t` (or the end) was reached. Callers
    /// that must stay responsive (Ctrl-C, progress bars) loop on this.
    pub fn run_until_budget(&mut self, t: SimTime, max_events: u64) -> Result<bool> {
        let limit = t.min(self.end);
        let mut n = 0;
        if self.warmup_pending {
            // Up to the end of the warm-up first: its snapshot follows every
            // event at that instant (and the loop below needs no check).
            if !self.run_events(limit.min(self.warmup), max_events, &mut n)? {
                return Ok(false);
            }
            if limit >= self.warmup {
                self.end_warmup();
            }
        }
        if !self.run_events(limit, max_events, &mut n)? {
            return Ok(false);
        }
        self.now = self.now.max(limit);
        Ok(true)
    }

    /// Process events up to and including `limit` while fewer than
    /// `max_events` have been processed (`n` counts them); false if the
    /// budget ran out first.
    fn run_events(&mut self, limit: SimTime, max_events: u64, n: &mut u64) -> Result<bool> {
        // In stretches that end where the memory check is due (see
        // `budget::guard`), so that the loop itself tests nothing more.
        loop {
            let due = self.guard.next.saturating_sub(self.queue.processed());
            let stretch = max_events.min(n.saturating_add(due));
            if self.run_stretch(limit, stretch, n)? {
                return Ok(true);
            }
            if *n >= max_events {
                return Ok(false);
            }
            self.check_growth()?;
        }
    }

    /// [`run_events`](Self::run_events) up to `max_events`, with no check.
    fn run_stretch(&mut self, limit: SimTime, max_events: u64, n: &mut u64) -> Result<bool> {
        let ahead = self.links.len() >= self.prefetch_min_links;
        // A popped event leaves its place in a heap for the next one
        // scheduled (fewer instructions: 8 % on the gateway), except where
        // the loop prefetches: on a heap far larger than the caches, the
        // refill at once measured faster (see `engine`).
        while *n < max_events {
            let Some((time, ev)) = self.queue.pop_until(limit, !ahead) else {
                return Ok(true);
            };
            if ahead {
                self.prefetch_ahead();
            }
            self.now = time;
            self.dispatch(ev)?;
            *n += 1;
        }
        // The budget ran out: done only if nothing else is due by `limit`.
        Ok(self.queue.peek_time().is_none_or(|t| t > limit))
    }

    /// Ask the processor for what the next events will read, while this
    /// one is handled: with many flows the state is far larger than the
    /// caches and a packet's cost is mostly waiting for memory. In stages,
    /// each reading only what the one before asked for an event earlier:
    /// the link of an arrival three events ahead (its first two cache
    /// lines: the delay line's inline packet and the far end); for the
    /// arrival two ahead, what its packet reads next (the flow it is
    /// delivered to, or the routing entry that forwards it; or, if the
    /// packet is in the line's ring, the packet); for the next arrival,
    /// what its handling reads after that (the endpoint the flow hands the
    /// packet to and the link its answer leaves on, or the link the routing
    /// entry names). Where the third event is not known (a heap), the
    /// stages start one event later and the last is left out. And the flow
    /// of the next timer. Hints only: they change no result. (Not inlined:
    /// in the run loop it would change what the compiler inlines there, at
    /// a cost to small networks.)
    #[inline(never)]
    fn prefetch_ahead(&self) {
        let [next, after, third] = self.queue.peek_network();
        let (link_at, packet_at, answer_at) = match third {
            Some(_) => (third, after, next),
            None => (after, next, None),
        };
        if let Some(Event::Arrive(l)) = link_at {
            if let Some(link) = self.links.get(l.idx()) {
                hint::prefetch(link, 2);
            }
        }
        if let Some(Event::Arrive(l)) = packet_at {
            if let Some(link) = self.links.get(l.idx()) {
                if let Some((_, p)) = link.line.inline_front() {
                    if p.dst == link.to {
                        if let Some(flow) = self.flows.get(p.flow.idx()) {
                            hint::prefetch(flow, 2);
                        }
                    } else if let Some(e) = self.routes.entry(link.to, p.dst) {
                        hint::prefetch(e, 1);
                    }
                } else if let Some(first) = link.line.ring_front() {
                    hint::prefetch(first, 2);
                }
            }
        }
        if let Some(Event::Arrive(l)) = answer_at {
            self.prefetch_answer(l);
        }
        if let Some(Event::SenderTimer(f) | Event::AckTimer(f)) = self.queue.peek_timer() {
            if let Some(flow) = self.flows.get(f.idx()) {
                hint::prefetch(flow, 2);
            }
        }
    }

    /// The last stage of [`prefetch_ahead`](Self::prefetch_ahead) for the
    /// next arrival, on link `l`: if its packet is delivered, the endpoint
    /// that takes it and the link the answer leaves on; if forwarded, the
    /// link it goes on.
    #[inline(always)]
    fn prefetch_answer(&self, l: LinkId) {
        let Some(link) = self.links.get(l.idx()) else {
            return;
        };
        let Some((_, p)) = link.line.inline_front() else {
            return;
        };
        let out = if p.dst == link.to {
            let Some(flow) = self.flows.get(p.flow.idx()) else {
                return;
            };
            if let Endpoints::Tcp { sender, receiver } = &flow.ends {
                if p.dst == flow.dst {
                    hint::prefetch(&**receiver, 4);
                } else {
                    hint::prefetch(&**sender, 4);
                }
            }
            flow.first_hop(p.dst, p.src)
        } else {
            self.routes.next_hop(link.to, p.dst)
        };
        if let Some(link) = out.and_then(|o| self.links.get(o.idx())) {
            hint::prefetch(link, 5);
        }
    }

    pub fn run(&mut self) -> Result<()> {
        self.run_until(self.end)
    }

    /// Handle one event. (Always inlined into the run loop: the events of
    /// links that change over time and of route changes go to handlers
    /// out of line, and without the hint their arms tip the inliner into
    /// keeping this a call, at a cost to every fixed link's packet.)
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) -> Result<()> {
        match ev {
            Event::TxDone(l) => self.tx_done(l),
            Event::Arrive(l) => return self.arrive(l),
            Event::SenderTimer(f) => return self.sender_timer(f),
            Event::AckTimer(f) => return self.ack_timer(f),
            Event::App(a, timer) => return self.app_event(a, timer),
            Event::Sample => self.sample(),
            Event::LinkChange(l) => self.link_change(l),
            Event::ArriveOnSchedule(l) => return self.arrive_on_schedule(l),
            Event::RouteChange(i) => self.route_change(i as usize),
            Event::AqmTimer(a) => {
                let now = self.now;
                let slot = &mut self.aqms[a.idx()];
                let view = self.links[slot.monitor.idx()].view(now);
                if matches!(slot.aqm, crate::aqm::Aqm::Scheduler(_)) {
                    // The port's own discipline updates (DualPI2's PI2).
                    self.links[slot.at.idx()].port.sched_update(now);
                }
                if let Some(next) = slot.on_timer(now, &view) {
                    if next <= self.end {
                        self.queue.schedule(next, Event::AqmTimer(a));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod layout_tests {
    use super::Flow;
    use std::mem::{offset_of, size_of};

    /// A delivery reads the first line (endpoints, timers, relays) and the
    /// start of the second.
    #[test]
    fn a_flow_keeps_its_per_packet_fields_in_front() {
        assert_eq!(size_of::<Flow>(), 256);
        assert_eq!(offset_of!(Flow, relay_out), 64);
        assert!(offset_of!(Flow, last_hop) < 128);
    }
}

#[cfg(test)]
mod prefetch_tests {
    use super::Simulation;

    /// Prefetching is a hint: a run with it gives what a run without it
    /// gives, event for event (a network too small to turn it on by itself,
    /// run both ways; busy enough that its network events are in a
    /// calendar, where the prefetch looks three events ahead).
    #[test]
    fn prefetching_changes_no_result() {
        let text = r#"
[simulation]
duration = "8 s"
seed = 3
[topology]
kind = "dumbbell"
pairs = 100
[topology.access]
rate = "1000 Mbps"
delay = "20 ms"
[topology.bottleneck]
rate = "1000 Mbps"
delay = "20 ms"
buffer = 100
[tcp]
recovery = "sack"
[[traffic]]
kind = "bulk"
pairs = "all"
start = { uniform = ["0 s", "1 s"] }
"#;
        let run = |ahead: bool| {
            let mut sim = Simulation::from_toml(text).unwrap();
            let (end, mut n) = (sim.end, 0);
            sim.prefetch_min_links = if ahead { 0 } else { usize::MAX };
            assert!(sim.run_events(end, u64::MAX, &mut n).unwrap());
            assert!(sim.queue.network_in_calendar());
            let flows: Vec<u64> = sim.flows.iter().map(|f| f.delivered).collect();
            (n, sim.queue.processed(), flows, sim.delivered_packets)
        };
        let (with, without) = (run(true), run(false));
        assert!(with.0 > 100_000, "a run long enough to matter");
        assert_eq!(with, without);
    }
}
