//! The simulation: entities, the event loop and dispatch.

use crate::aqm::{Aqm, AqmParams, PacketMeta, Reason, Verdict};
use crate::config::{AqmMode, Scenario, StartSpec, TrafficKind};
use crate::engine::{Event, EventQueue};
use crate::error::ConfigError;
use crate::error::{Error, Result};
use crate::ids::{AppId, FlowId, LinkId, NodeId};
use crate::net::{DropReason, Link, Queued, Routes};
use crate::packet::{flags, Packet, PacketKind};
use crate::probe::{jain_index, mean_std, CongestionLog, CwndTrace, DropLog, TimeSeries};
use crate::queue::{Buffer, ParallelQueues, VqClass};
use crate::rng::Rng;
use crate::time::SimTime;
use crate::topology::{self, Built, Topology};
use crate::traffic::{self, App};
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::udp::{CbrSource, UdpSink};
use crate::transport::Emit;

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
}

#[derive(Debug)]
pub struct Flow {
    pub id: FlowId,
    pub kind: &'static str,
    pub pair: u32,
    pub src: NodeId,
    pub dst: NodeId,
    pub app: AppId,
    pub start: SimTime,
    pub stop: Option<SimTime>,
    pub ends: Endpoints,
    /// Payload bytes delivered in order to the receiving application.
    pub delivered: u64,
    pub delivered_at_warmup: Option<u64>,
    /// When the receiver got the last byte of a finite transfer.
    pub completed: Option<SimTime>,
    sender_timer: Option<SimTime>,
    ack_timer: Option<SimTime>,
    /// The end-to-end flow this connection carries (itself unless it is a
    /// segment a PEP opened).
    pub origin: FlowId,
    /// Its receiver is the final destination: deliveries count for `origin`.
    pub last_hop: bool,
    /// The relay this connection's receiver feeds.
    relay_in: Option<u32>,
    /// The relay that feeds this connection's sender.
    relay_out: Option<u32>,
    /// The application to tell when the transfer has arrived.
    owner: Option<AppId>,
}

/// A PEP joining two TCP connections: data delivered on `up` is written
/// into `down` while the PEP's per-connection buffer (`up`'s unread bytes
/// plus `down`'s unacknowledged bytes) has room; `up`'s advertised window
/// is the free space.
#[derive(Debug, Clone)]
pub struct Relay {
    pub up: FlowId,
    pub down: FlowId,
    pub buffer: u64,
    up_closed: bool,
    down_closed: bool,
    /// Largest occupancy seen (checked against `buffer` in tests).
    pub peak: u64,
}

/// A node that splits TCP connections.
#[derive(Debug, Clone)]
struct Pep {
    node: NodeId,
    buffer: u64,
    tcp: TcpConfig,
}

/// Counts for the conservation check: every packet created is delivered,
/// dropped, or still inside a link.
#[derive(Debug, Default, Clone, Copy)]
pub struct PacketCounts {
    pub created: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

/// An AQM with its placement.
#[derive(Debug)]
pub struct AqmSlot {
    pub aqm: Aqm,
    pub at: LinkId,
    pub monitor: LinkId,
    pub mode: AqmMode,
    rng: Rng,
    /// Timer ticks so far (the k-th update is at k * interval).
    ticks: u64,
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
    out: Vec<Packet>,
    next_uid: u64,
    delivered_packets: u64,
    dropped_packets: u64,
    pub timeseries: TimeSeries,
    pub drops: DropLog,
    pub cwnd: CwndTrace,
    /// Every window cut of every TCP sender.
    pub congestion: CongestionLog,
    trace_cwnd: Vec<FlowId>,
    /// The link whose figures the summary reports.
    pub bottleneck: LinkId,
    /// (sender, receiver) node of each host pair.
    pairs: Vec<(NodeId, NodeId)>,
    /// Distinct senders and receivers of the pairs (web traffic's servers
    /// and clients).
    servers: Vec<NodeId>,
    clients: Vec<NodeId>,
    /// Links the sampler records (only their interval counters are reset).
    monitored: Vec<LinkId>,
    warmup_snapshot_taken: bool,
    pub aqms: Vec<AqmSlot>,
    peps: Vec<Pep>,
    pub relays: Vec<Relay>,
    pub seed: u64,
}

fn distinct(nodes: impl Iterator<Item = NodeId>) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::new();
    for n in nodes {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

fn emit<'a>(now: SimTime, out: &'a mut Vec<Packet>, next_uid: &'a mut u64) -> Emit<'a> {
    Emit { now, out, next_uid }
}

impl Simulation {
    /// Build the network and traffic of a validated scenario.
    pub fn new(scenario: &Scenario) -> Result<Simulation> {
        let seed = scenario.seed;
        let built: Built = match &scenario.topology {
            Topology::Dumbbell(db) => topology::dumbbell::build(db, seed),
            Topology::Ipos(t) => topology::ipos::build(t, seed),
        };
        let endpoints: Vec<_> = built.links.iter().map(|l| (l.from, l.to)).collect();
        let routes = Routes::build(built.n_nodes, &endpoints);
        let bottleneck = built
            .links
            .iter()
            .position(|l| l.name == built.bottleneck)
            .map(|i| LinkId(i as u32))
            .unwrap_or(LinkId(0));

        let mut sim = Simulation {
            now: SimTime::ZERO,
            end: scenario.duration,
            warmup: scenario.warmup,
            sample_interval: scenario.sample_interval,
            queue: EventQueue::new(),
            node_names: built.node_names,
            links: built.links,
            routes,
            flows: Vec::new(),
            apps: Vec::new(),
            out: Vec::with_capacity(64),
            next_uid: 0,
            delivered_packets: 0,
            dropped_packets: 0,
            timeseries: TimeSeries::default(),
            drops: DropLog::default(),
            cwnd: CwndTrace::default(),
            congestion: CongestionLog::default(),
            trace_cwnd: scenario.trace_cwnd.iter().map(|&f| FlowId(f)).collect(),
            bottleneck,
            monitored: Vec::new(),
            pairs: built.pairs.clone(),
            servers: distinct(built.pairs.iter().map(|p| p.0)),
            clients: distinct(built.pairs.iter().map(|p| p.1)),
            warmup_snapshot_taken: false,
            aqms: Vec::new(),
            peps: Vec::new(),
            relays: Vec::new(),
            seed,
        };
        sim.place_aqms(scenario)?;
        for (i, p) in scenario.pep.iter().enumerate() {
            let node = sim
                .node_names
                .iter()
                .position(|n| *n == p.at)
                .ok_or_else(|| {
                    ConfigError::new(format!("pep[{i}].at"), format!("no node named {:?}", p.at))
                })?;
            sim.peps.push(Pep {
                node: NodeId(node as u32),
                buffer: p.buffer,
                tcp: p.tcp.clone(),
            });
        }
        sim.monitored = (0..sim.links.len())
            .filter(|&i| sim.links[i].monitored)
            .map(|i| LinkId(i as u32))
            .collect();

        let mut start_rng = Rng::stream(seed, "start", 0);
        for (entry, t) in scenario.traffic.iter().enumerate() {
            if let TrafficKind::Web {
                connections,
                ramp_step,
                ramp_interval,
                page_min,
                page_max,
                think_time,
                tcp,
            } = &t.kind
            {
                for slot in 0..*connections {
                    let app = AppId(sim.apps.len() as u32);
                    sim.apps.push(App::WebSlot {
                        page_min: *page_min,
                        page_max: *page_max,
                        think: *think_time,
                        tcp: tcp.clone(),
                        rng: Rng::stream(seed, "web", ((entry as u64) << 32) | slot as u64),
                    });
                    let at = SimTime(ramp_interval.ns() * (slot / ramp_step) as u64);
                    if at <= sim.end {
                        sim.queue.schedule(at, Event::App(app, traffic::START));
                    }
                }
                continue;
            }
            if let TrafficKind::WebMice {
                sessions,
                scale,
                shape,
                max,
                think_mean,
                tcp,
            } = &t.kind
            {
                for j in 0..*sessions {
                    let pair = t.pairs[j as usize % t.pairs.len()];
                    let rng = Rng::stream(seed, "web-mice", ((entry as u64) << 32) | j as u64);
                    let mut m = traffic::WebMouse::new(
                        pair,
                        *scale,
                        *shape,
                        *max,
                        *think_mean,
                        tcp.clone(),
                        t.stop,
                        rng,
                    );
                    let start = match t.start {
                        StartSpec::At(s) => s,
                        StartSpec::Uniform(lo, hi) => m.uniform_time(lo, hi),
                    };
                    let app = AppId(sim.apps.len() as u32);
                    sim.apps.push(App::WebMouse(Box::new(m)));
                    if start <= sim.end {
                        sim.queue.schedule(start, Event::App(app, traffic::START));
                    }
                }
                continue;
            }
            if let TrafficKind::Short {
                size,
                arrival_rate,
                tcp,
            } = &t.kind
            {
                let app = AppId(sim.apps.len() as u32);
                let start = match t.start {
                    StartSpec::At(s) => s,
                    StartSpec::Uniform(lo, _) => lo,
                };
                sim.apps.push(App::Arrivals {
                    pairs: t.pairs.clone(),
                    size: *size,
                    mean_gap: 1.0 / arrival_rate,
                    tcp: tcp.clone(),
                    stop: t.stop,
                    rng: Rng::stream(seed, "arrivals", entry as u64),
                });
                sim.queue.schedule(start, Event::App(app, traffic::START));
                continue;
            }
            for &pair in &t.pairs {
                let start = match t.start {
                    StartSpec::At(s) => s,
                    StartSpec::Uniform(lo, hi) => SimTime(start_rng.uniform_u64(lo.ns(), hi.ns())),
                };
                match &t.kind {
                    TrafficKind::Bulk { size, tcp } => {
                        sim.add_tcp_flow("bulk", pair, tcp, *size, start, t.stop);
                    }
                    TrafficKind::Cbr { rate, packet_size } => {
                        let (src, dst) = sim.pairs[pair as usize];
                        let id = FlowId(sim.flows.len() as u32);
                        let source = CbrSource::new(id, src, dst, *rate, *packet_size);
                        let app = App::Cbr {
                            source,
                            stop: t.stop,
                            active: false,
                        };
                        sim.add_flow(
                            "cbr",
                            pair,
                            (src, dst),
                            Endpoints::Udp {
                                sink: UdpSink::default(),
                            },
                            app,
                            start,
                            t.stop,
                        );
                    }
                    TrafficKind::Short { .. }
                    | TrafficKind::Web { .. }
                    | TrafficKind::WebMice { .. } => {
                        unreachable!("handled above")
                    }
                }
            }
        }
        if sim.sample_interval <= sim.end {
            sim.queue.schedule(sim.sample_interval, Event::Sample);
        }
        Ok(sim)
    }

    /// A TCP transfer from `pair`'s sender to its receiver, started by a
    /// bulk application at `start`. Where its path crosses PEPs, it becomes
    /// a chain of connections joined by relays; the returned flow is the
    /// first, which carries the end-to-end figures.
    fn add_tcp_flow(
        &mut self,
        kind: &'static str,
        pair: u32,
        tcp: &TcpConfig,
        size: Option<u64>,
        start: SimTime,
        stop: Option<SimTime>,
    ) -> FlowId {
        let (src, dst) = self.pairs[pair as usize];
        self.add_tcp_flow_between(kind, pair, (src, dst), tcp, size, start, stop)
    }

    #[allow(clippy::too_many_arguments)]
    fn add_tcp_flow_between(
        &mut self,
        kind: &'static str,
        pair: u32,
        (src, dst): (NodeId, NodeId),
        tcp: &TcpConfig,
        size: Option<u64>,
        start: SimTime,
        stop: Option<SimTime>,
    ) -> FlowId {
        let hops = self.peps_on_path(src, dst);
        let id = FlowId(self.flows.len() as u32);
        let mut nodes = vec![src];
        nodes.extend(hops.iter().map(|&p| self.peps[p].node));
        nodes.push(dst);
        let mut prev: Option<FlowId> = None;
        for seg in 0..nodes.len() - 1 {
            let (a, b) = (nodes[seg], nodes[seg + 1]);
            // The first connection is the application's; the others are
            // opened by the PEP at their start.
            let mut cfg = if seg == 0 {
                tcp.clone()
            } else {
                self.peps[hops[seg - 1]].tcp.clone()
            };
            if seg + 1 < nodes.len() - 1 {
                // Ends at a PEP: its window is the PEP's buffer.
                let pep = &self.peps[hops[seg]];
                cfg.receive_buffer = pep.buffer;
                if !cfg.window_scaling {
                    cfg.receive_buffer = cfg.receive_buffer.min(65_535);
                }
            }
            let this = FlowId(self.flows.len() as u32);
            let mut receiver = TcpReceiver::new(this, b, a, &cfg);
            let last_hop = seg == nodes.len() - 2;
            receiver.auto_read = last_hop;
            let ends = Endpoints::Tcp {
                sender: Box::new(TcpSender::new(this, a, b, cfg)),
                receiver: Box::new(receiver),
            };
            if seg == 0 {
                self.add_flow(
                    kind,
                    pair,
                    (a, b),
                    ends,
                    App::Bulk {
                        flow: this,
                        size,
                        stop,
                    },
                    start,
                    stop,
                );
            } else {
                self.flows.push(Flow {
                    id: this,
                    kind: "relay",
                    pair,
                    src: a,
                    dst: b,
                    app: AppId(u32::MAX),
                    start,
                    stop: None,
                    ends,
                    delivered: 0,
                    delivered_at_warmup: None,
                    completed: None,
                    sender_timer: None,
                    ack_timer: None,
                    origin: id,
                    last_hop,
                    relay_in: None,
                    relay_out: None,
                    owner: None,
                });
            }
            self.flows[this.idx()].origin = id;
            self.flows[this.idx()].last_hop = last_hop;
            if let Some(up) = prev {
                let r = self.relays.len() as u32;
                self.relays.push(Relay {
                    up,
                    down: this,
                    buffer: self.peps[hops[seg - 1]].buffer,
                    up_closed: false,
                    down_closed: false,
                    peak: 0,
                });
                self.flows[up.idx()].relay_in = Some(r);
                self.flows[this.idx()].relay_out = Some(r);
            }
            prev = Some(this);
        }
        id
    }

    /// Indices of the PEPs a packet from `src` to `dst` passes, in order.
    fn peps_on_path(&self, src: NodeId, dst: NodeId) -> Vec<usize> {
        let mut out = Vec::new();
        if self.peps.is_empty() {
            return out;
        }
        let mut at = src;
        while let Some(l) = self.routes.next_hop(at, dst) {
            at = self.links[l.idx()].to;
            if at == dst {
                break;
            }
            if let Some(p) = self.peps.iter().position(|p| p.node == at) {
                out.push(p);
            }
        }
        out
    }

    /// Move data across relay `r` while its buffer has room; open the
    /// downstream connection once the upstream one has started, close it
    /// when the upstream transfer has ended and everything is forwarded.
    fn pump(&mut self, r: u32) {
        let now = self.now;
        let relay = &mut self.relays[r as usize];
        let (ui, di) = (relay.up.idx(), relay.down.idx());
        let (up, down) = if ui < di {
            let (x, y) = self.flows.split_at_mut(di);
            (&mut x[ui], &mut y[0])
        } else {
            let (x, y) = self.flows.split_at_mut(ui);
            (&mut y[0], &mut x[di])
        };
        let (Endpoints::Tcp { receiver: rcv, .. }, Endpoints::Tcp { sender: snd, .. }) =
            (&mut up.ends, &mut down.ends)
        else {
            return;
        };
        let mut em = emit(now, &mut self.out, &mut self.next_uid);
        if snd.state == crate::transport::tcp::sender::SenderState::Closed {
            if !rcv.started() {
                return;
            }
            snd.open(&mut em);
        }
        let room = relay.buffer.saturating_sub(snd.unacked_bytes());
        let n = rcv.unread().min(room);
        let last = relay.up_closed && !relay.down_closed && n == rcv.unread();
        rcv.take(n);
        if last {
            snd.write_last(n, &mut em);
            relay.down_closed = true;
        } else if n > 0 {
            snd.write(n, &mut em);
        }
        let held = snd.unacked_bytes();
        relay.peak = relay.peak.max(held + rcv.unread());
        rcv.set_held(held, &mut em);
    }

    #[allow(clippy::too_many_arguments)]
    fn add_flow(
        &mut self,
        kind: &'static str,
        pair: u32,
        (src, dst): (NodeId, NodeId),
        ends: Endpoints,
        app: App,
        start: SimTime,
        stop: Option<SimTime>,
    ) -> FlowId {
        let id = FlowId(self.flows.len() as u32);
        let app_id = AppId(self.apps.len() as u32);
        self.flows.push(Flow {
            id,
            kind,
            pair,
            src,
            dst,
            app: app_id,
            start,
            stop,
            ends,
            delivered: 0,
            delivered_at_warmup: None,
            completed: None,
            sender_timer: None,
            ack_timer: None,
            origin: id,
            last_hop: true,
            relay_in: None,
            relay_out: None,
            owner: None,
        });
        self.apps.push(app);
        self.queue
            .schedule(start, Event::App(app_id, traffic::START));
        if let Some(stop) = stop {
            self.queue.schedule(stop, Event::App(app_id, traffic::STOP));
        }
        id
    }

    fn link_named(&self, name: &str, path: &str) -> Result<LinkId, ConfigError> {
        self.links
            .iter()
            .position(|l| l.name == name)
            .map(|i| LinkId(i as u32))
            .ok_or_else(|| {
                let some: Vec<&str> = self.links.iter().take(6).map(|l| l.name.as_str()).collect();
                ConfigError::new(
                    path,
                    format!(
                        "no link named {name:?} (links include: {}, ...)",
                        some.join(", ")
                    ),
                )
            })
    }

    fn place_aqms(&mut self, scenario: &Scenario) -> Result<()> {
        for (i, a) in scenario.aqm.iter().enumerate() {
            let at = self.link_named(&a.at, &format!("aqm[{i}].at"))?;
            let monitor = self.link_named(&a.monitor, &format!("aqm[{i}].monitor"))?;
            let idx = self.aqms.len() as u32;
            if self.links[at.idx()].port.aqm.is_some() {
                return Err(ConfigError::new(
                    format!("aqm[{i}].at"),
                    format!("link {:?} already has an AQM", a.at),
                )
                .into());
            }
            let aqm = a.params.build(
                self.links[monitor.idx()].rate.bps(),
                self.links[at.idx()].port.limit,
                a.mode == AqmMode::Mark,
            );
            if let AqmParams::RedTail(p) = &a.params {
                // The port's buffer becomes two virtual queues.
                let link = &mut self.links[at.idx()];
                if link.port.backpressure {
                    return Err(ConfigError::new(
                        format!("aqm[{i}].at"),
                        format!(
                            "link {:?} has backpressure, which red_tail does not support",
                            a.at
                        ),
                    )
                    .into());
                }
                let split = p.split(link.rate.bps(), &format!("aqm[{i}]"))?;
                link.port.queue = Buffer::parallel_queues(ParallelQueues::new(split, link.rate));
            }
            if let Some(iv) = aqm.timer_interval() {
                self.queue.schedule(iv, Event::AqmTimer(idx));
            }
            self.links[at.idx()].port.aqm = Some(idx);
            if aqm.needs_departures() {
                self.links[monitor.idx()].port.watchers.push(idx);
            }
            for l in [at, monitor] {
                if !self.monitored.contains(&l) {
                    self.monitored.push(l);
                    self.links[l.idx()].monitored = true;
                }
            }
            self.aqms.push(AqmSlot {
                aqm,
                at,
                monitor,
                mode: a.mode,
                rng: Rng::stream(self.seed, "aqm", i as u64),
                ticks: 0,
            });
        }
        Ok(())
    }

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
        while let Some(tn) = self.queue.peek_time() {
            if tn > limit {
                break;
            }
            if n == max_events {
                return Ok(false);
            }
            let (time, ev) = self.queue.pop().expect("peeked");
            self.now = time;
            self.dispatch(ev)?;
            n += 1;
        }
        self.now = self.now.max(limit);
        Ok(true)
    }

    pub fn run(&mut self) -> Result<()> {
        self.run_until(self.end)
    }

    fn dispatch(&mut self, ev: Event) -> Result<()> {
        match ev {
            Event::TxDone(l) => self.tx_done(l),
            Event::Arrive(l) => return self.arrive(l),
            Event::SenderTimer(f) => {
                let now = self.now;
                let flow = &mut self.flows[f.idx()];
                if flow.sender_timer == Some(now) {
                    flow.sender_timer = None;
                }
                if let Endpoints::Tcp { sender, .. } = &mut flow.ends {
                    sender.on_timer(&mut emit(now, &mut self.out, &mut self.next_uid));
                }
                return self.after_endpoint(f);
            }
            Event::AckTimer(f) => {
                let now = self.now;
                let flow = &mut self.flows[f.idx()];
                if flow.ack_timer == Some(now) {
                    flow.ack_timer = None;
                }
                if let Endpoints::Tcp { receiver, .. } = &mut flow.ends {
                    receiver.on_timer(&mut emit(now, &mut self.out, &mut self.next_uid));
                }
                return self.after_endpoint(f);
            }
            Event::App(a, token) => return self.app_event(a, token),
            Event::Sample => self.sample(),
            Event::AqmTimer(a) => {
                let now = self.now;
                let slot = &mut self.aqms[a as usize];
                let m = &self.links[slot.monitor.idx()];
                let view = m.port.view(now, m.rate);
                slot.aqm.on_timer(now, &view);
                slot.ticks += 1;
                if let Some(iv) = slot.aqm.timer_interval() {
                    let next = SimTime(iv.ns() * (slot.ticks + 1));
                    if next <= self.end {
                        self.queue.schedule(next, Event::AqmTimer(a));
                    }
                }
            }
        }
        Ok(())
    }

    // ----- applications -----------------------------------------------------

    fn app_event(&mut self, a: AppId, token: u32) -> Result<()> {
        let now = self.now;
        let flow_id = match &mut self.apps[a.idx()] {
            App::Bulk { flow, size, .. } => {
                let f = *flow;
                let size = *size;
                if let Endpoints::Tcp { sender, .. } = &mut self.flows[f.idx()].ends {
                    let mut em = emit(now, &mut self.out, &mut self.next_uid);
                    match token {
                        traffic::START => {
                            sender.write(size.unwrap_or(u64::MAX), &mut em);
                            if size.is_some() {
                                sender.close();
                            }
                            sender.open(&mut em);
                        }
                        traffic::STOP => sender.stop(),
                        _ => {}
                    }
                }
                f
            }
            App::Cbr {
                source,
                stop,
                active,
            } => {
                let f = source.flow;
                match token {
                    traffic::START | traffic::TICK => {
                        if token == traffic::START {
                            *active = true;
                        }
                        if *active {
                            let next =
                                source.tick(&mut emit(now, &mut self.out, &mut self.next_uid));
                            if stop.is_none_or(|s| next < s) && next <= self.end {
                                self.queue.schedule(next, Event::App(a, traffic::TICK));
                            }
                        }
                    }
                    traffic::STOP => *active = false,
                    _ => {}
                }
                f
            }
            App::WebSlot {
                page_min,
                page_max,
                tcp,
                rng,
                ..
            } => {
                // START (the ramp) and TICK (think time over): a new page.
                let size = rng.uniform_u64(*page_min, *page_max);
                let s = rng.uniform_u64(0, self.servers.len() as u64 - 1) as usize;
                let c = rng.uniform_u64(0, self.clients.len() as u64 - 1) as usize;
                let tcp = tcp.clone();
                let (src, dst) = (self.servers[s], self.clients[c]);
                let f = self.add_tcp_flow_between(
                    "web",
                    c as u32,
                    (src, dst),
                    &tcp,
                    Some(size),
                    now,
                    None,
                );
                self.flows[f.idx()].owner = Some(a);
                return Ok(());
            }
            App::WebMouse(m) => {
                // START (the session begins) and TICK (think time over): a
                // new file, unless the entry has stopped.
                if m.stop.is_some_and(|s| now >= s) {
                    return Ok(());
                }
                let size = m.file_size();
                let (pair, tcp) = (m.pair, m.tcp.clone());
                let f = self.add_tcp_flow("web_mice", pair, &tcp, Some(size), now, None);
                self.flows[f.idx()].owner = Some(a);
                return Ok(());
            }
            App::Arrivals {
                pairs,
                size,
                mean_gap,
                tcp,
                stop,
                rng,
            } => {
                // START begins the process; each TICK is an arrival.
                let gap = SimTime::from_secs_f64(rng.exponential(*mean_gap));
                let next = now + gap;
                if stop.is_none_or(|s| next < s) && next <= self.end {
                    self.queue.schedule(next, Event::App(a, traffic::TICK));
                }
                if token != traffic::TICK {
                    return Ok(());
                }
                let pair = pairs[rng.uniform_u64(0, pairs.len() as u64 - 1) as usize];
                let (size, tcp) = (*size, tcp.clone());
                self.add_tcp_flow("short", pair, &tcp, Some(size), now, None);
                return Ok(());
            }
        };
        self.after_endpoint(flow_id)
    }

    // ----- network ----------------------------------------------------------

    /// Route the packets an endpoint just emitted and re-arm its timers.
    fn after_endpoint(&mut self, f: FlowId) -> Result<()> {
        let flow = &mut self.flows[f.idx()];
        if let Endpoints::Tcp { sender, receiver } = &mut flow.ends {
            if !sender.cuts.is_empty() {
                let log = &mut self.congestion;
                for c in sender.cuts.drain(..) {
                    log.time_ns.push(c.time.ns());
                    log.flow.push(f.0);
                    log.origin.push(flow.origin.0);
                    log.kind.push(c.kind as u8);
                    log.cwnd_before.push(c.cwnd_before);
                    log.cwnd_after.push(c.cwnd_after);
                    log.ssthresh.push(c.ssthresh);
                    log.srtt_s.push(c.srtt.map_or(f64::NAN, |t| t.secs_f64()));
                }
            }
            if let Some(t) = sender.next_wakeup() {
                if flow.sender_timer.is_none_or(|s| t < s) {
                    flow.sender_timer = Some(t);
                    self.queue.schedule(t.max(self.now), Event::SenderTimer(f));
                }
            }
            if let Some(t) = receiver.next_wakeup() {
                if flow.ack_timer.is_none_or(|s| t < s) {
                    flow.ack_timer = Some(t);
                    self.queue.schedule(t.max(self.now), Event::AckTimer(f));
                }
            }
        }
        if self.out.is_empty() {
            return Ok(());
        }
        let mut out = std::mem::take(&mut self.out);
        let mut result = Ok(());
        for pkt in out.drain(..) {
            if let Err(e) = self.forward(pkt.src, pkt) {
                result = Err(e);
            }
        }
        self.out = out;
        result
    }

    fn forward(&mut self, at: NodeId, pkt: Packet) -> Result<()> {
        let Some(l) = self.routes.next_hop(at, pkt.dst) else {
            return Err(Error::Simulation(format!(
                "no route from {} to {}",
                self.node_names[at.idx()],
                self.node_names[pkt.dst.idx()]
            )));
        };
        self.enqueue(l, pkt);
        Ok(())
    }

    fn enqueue(&mut self, l: LinkId, mut pkt: Packet) {
        let now = self.now;
        let port = &mut self.links[l.idx()].port;
        let index = port.arrivals;
        port.arrivals += 1;
        // The virtual queue the packet joins (None: a FIFO port's only one).
        let mut class = None;
        if let Some(a) = port.aqm {
            let slot = &mut self.aqms[a as usize];
            let u = slot.rng.uniform();
            let meta = PacketMeta {
                size: pkt.size,
                ecn_capable: pkt.ecn_capable(),
            };
            let mode = slot.mode;
            let verdict = if matches!(slot.aqm, Aqm::RedTail(_)) {
                let (c, v) = self.red_tail_arrival(l, a, &pkt, meta, u);
                class = Some(c);
                v
            } else {
                let m = &self.links[slot.monitor.idx()];
                let view = m.port.view(now, m.rate);
                slot.aqm.on_arrival(now, meta, &view, u)
            };
            if !self.apply_verdict(l, &mut pkt, index, verdict, mode) {
                return;
            }
        }
        let link = &mut self.links[l.idx()];
        let local = link.port.backpressure && pkt.src == link.from;
        let port = &mut link.port;
        if local && !port.held.is_empty() {
            // Behind others already held back: keep their order.
            port.held.push_back((pkt, index));
            self.note_held(&pkt);
            return;
        }
        if port.idle(now) {
            // Straight through: it joins and leaves the queue at once.
            let (verdict, mode) = self.notify_departure(l, SimTime::ZERO);
            if self.apply_verdict(l, &mut pkt, index, verdict, mode) {
                if let Some(c) = class {
                    self.links[l.idx()]
                        .port
                        .queue
                        .parallel_mut()
                        .expect("a red_tail port has parallel queues")
                        .served_directly(c, now, pkt.size);
                }
                self.transmit(l, pkt, index);
            }
            return;
        }
        if !port.fits(&pkt) {
            if local {
                port.held.push_back((pkt, index));
                self.note_held(&pkt);
            } else {
                self.record_drop(l, &pkt, index, DropReason::Overflow);
            }
            return;
        }
        port.bytes += pkt.size as u64;
        port.queue.push(
            class.unwrap_or(VqClass::DropTail),
            now,
            Queued {
                pkt,
                index,
                enqueued_at: now,
            },
        );
        if !port.txdone_pending {
            port.txdone_pending = true;
            self.queue.schedule(port.busy_until, Event::TxDone(l));
        }
    }

    /// RED+Tail at port `l` (AQM slot `a`): classify the packet, count it
    /// in its virtual queue, and let RED judge packets of its class on the
    /// RED queue's own view. Out of line so that the FIFO path stays small.
    #[cold]
    #[inline(never)]
    fn red_tail_arrival(
        &mut self,
        l: LinkId,
        a: u32,
        pkt: &Packet,
        meta: PacketMeta,
        u: f64,
    ) -> (VqClass, Verdict) {
        let now = self.now;
        let Aqm::RedTail(rt) = &mut self.aqms[a as usize].aqm else {
            unreachable!("red_tail_arrival on another AQM")
        };
        let origin = self.flows[pkt.flow.idx()].origin;
        let class = rt.classify(now, pkt.flow, self.flows[origin.idx()].kind);
        let vqs = self.links[l.idx()]
            .port
            .queue
            .parallel_mut()
            .expect("a red_tail port has parallel queues");
        vqs.count_arrival(class, pkt.size);
        let verdict = match class {
            VqClass::DropTail => Verdict::Pass,
            VqClass::Red => rt.red_arrival(now, meta, &vqs.view(VqClass::Red, now), u),
        };
        (class, verdict)
    }

    /// Carry out an AQM verdict on `pkt` at port `l`; false if the packet
    /// was dropped.
    fn apply_verdict(
        &mut self,
        l: LinkId,
        pkt: &mut Packet,
        index: u64,
        verdict: Verdict,
        mode: AqmMode,
    ) -> bool {
        let (reason, force_drop) = match verdict {
            Verdict::Pass => return true,
            Verdict::Mark(r) => (r, false),
            Verdict::Drop(r) => (r, true),
        };
        if !force_drop && mode == AqmMode::Mark && pkt.ecn_capable() {
            pkt.flags |= flags::CE;
            let why = match reason {
                Reason::Early => DropReason::EarlyMark,
                Reason::Forced => DropReason::ForcedMark,
            };
            self.record_drop(l, pkt, index, why);
            return true;
        }
        let why = match reason {
            Reason::Early => DropReason::EarlyDrop,
            Reason::Forced => DropReason::ForcedDrop,
        };
        self.record_drop(l, pkt, index, why);
        false
    }

    /// Tell the AQMs watching port `l` that a packet left it after
    /// `sojourn`; returns the verdict of an AQM deciding at dequeue here.
    fn notify_departure(&mut self, l: LinkId, sojourn: SimTime) -> (Verdict, AqmMode) {
        let now = self.now;
        let link = &self.links[l.idx()];
        if link.port.watchers.is_empty() {
            return (Verdict::Pass, AqmMode::Drop);
        }
        let view = link.port.view(now, link.rate);
        let mut out = (Verdict::Pass, AqmMode::Drop);
        for &a in &link.port.watchers {
            let slot = &mut self.aqms[a as usize];
            let v = slot.aqm.on_departure(now, sojourn, &view);
            if slot.at == l && v != Verdict::Pass {
                out = (v, slot.mode);
            }
        }
        out
    }

    /// Start serializing `pkt` now; it goes on the delay line at once with
    /// its arrival time (serialization end + propagation delay).
    fn transmit(&mut self, l: LinkId, pkt: Packet, index: u64) {
        let now = self.now;
        let link = &mut self.links[l.idx()];
        let port = &mut link.port;
        let tx = link.rate.tx_time(pkt.size);
        let end = now + tx;
        port.busy_until = end;
        port.busy_ns += tx.ns();
        port.tx_bytes += pkt.size as u64;
        port.tx_bytes_total += pkt.size as u64;
        port.tx_packets_total += 1;
        if link.loss > 0.0 && link.rng.chance(link.loss) {
            // Erased on the link.
            self.record_drop(l, &pkt, index, DropReason::Erasure);
            return;
        }
        let t = link.arrival_time(end);
        link.line.push_back((t, pkt));
        if link.line.len() == 1 {
            self.queue.schedule(t, Event::Arrive(l));
        }
    }

    /// A packet of a local sender waits in its host (a full `backpressure`
    /// link): its sender's retransmission timer must not count that time.
    fn note_held(&mut self, pkt: &Packet) {
        if matches!(pkt.kind, PacketKind::TcpData | PacketKind::Syn) {
            if let Endpoints::Tcp { sender, .. } = &mut self.flows[pkt.flow.idx()].ends {
                sender.held_in_host += 1;
            }
        }
    }

    /// The transmitter is free: start the next waiting packet (after any
    /// drops an AQM deciding at dequeue makes).
    fn tx_done(&mut self, l: LinkId) {
        let now = self.now;
        self.links[l.idx()].port.txdone_pending = false;
        loop {
            let port = &mut self.links[l.idx()].port;
            let Some(mut q) = port.queue.pop(now) else {
                return;
            };
            port.bytes -= q.pkt.size as u64;
            // Room again: let held-back packets in, in order; their senders
            // learn that they have left the host.
            while let Some(&(p, _)) = port.held.front() {
                if !port.fits(&p) {
                    break;
                }
                let (p, index) = port.held.pop_front().expect("front");
                port.bytes += p.size as u64;
                // Backpressure ports are FIFOs (red_tail refuses them).
                port.queue.push(
                    VqClass::DropTail,
                    now,
                    Queued {
                        pkt: p,
                        index,
                        enqueued_at: now,
                    },
                );
                if matches!(p.kind, PacketKind::TcpData | PacketKind::Syn) {
                    if let Endpoints::Tcp { sender, .. } = &mut self.flows[p.flow.idx()].ends {
                        sender.on_left_host(p.seq, now);
                    }
                    // The deadline only moves later: the pending timer
                    // event finds it not due and schedules the new one.
                }
            }
            let (verdict, mode) = self.notify_departure(l, now - q.enqueued_at);
            if self.apply_verdict(l, &mut q.pkt, q.index, verdict, mode) {
                self.transmit(l, q.pkt, q.index);
                break;
            }
            if self.links[l.idx()].port.queue.is_empty() {
                if let Some(a) = self.links[l.idx()].port.aqm {
                    self.aqms[a as usize].aqm.on_empty_after_drop();
                }
                return;
            }
        }
        let port = &mut self.links[l.idx()].port;
        if !port.queue.is_empty() {
            port.txdone_pending = true;
            self.queue.schedule(port.busy_until, Event::TxDone(l));
        }
    }

    fn arrive(&mut self, l: LinkId) -> Result<()> {
        let link = &mut self.links[l.idx()];
        let (_, pkt) = link.line.pop_front().expect("Arrive without a packet");
        let to = link.to;
        if let Some(&(t, _)) = link.line.front() {
            self.queue.schedule(t, Event::Arrive(l));
        }
        if pkt.dst == to {
            self.deliver(pkt)
        } else {
            self.forward(to, pkt)
        }
    }

    fn deliver(&mut self, pkt: Packet) -> Result<()> {
        let now = self.now;
        self.delivered_packets += 1;
        let f = pkt.flow;
        let flow = &mut self.flows[f.idx()];
        let mut em = emit(now, &mut self.out, &mut self.next_uid);
        match (&mut flow.ends, pkt.kind) {
            (Endpoints::Tcp { receiver, .. }, PacketKind::Syn | PacketKind::TcpData) => {
                let d = receiver.on_segment(&pkt, &mut em);
                let (origin, last_hop, relay) = (flow.origin, flow.last_hop, flow.relay_in);
                if last_hop {
                    let o = &mut self.flows[origin.idx()];
                    o.delivered += d.bytes;
                    if d.closed && o.completed.is_none() {
                        o.completed = Some(now);
                        if let Some(owner) = o.owner {
                            match &mut self.apps[owner.idx()] {
                                App::WebSlot { think, .. } => {
                                    self.queue
                                        .schedule(now + *think, Event::App(owner, traffic::TICK));
                                }
                                App::WebMouse(m) => {
                                    let t = now + m.think();
                                    self.queue.schedule(t, Event::App(owner, traffic::TICK));
                                }
                                _ => {}
                            }
                        }
                    }
                }
                if let Some(r) = relay {
                    if d.closed {
                        self.relays[r as usize].up_closed = true;
                    }
                    self.pump(r);
                    self.after_endpoint(self.relays[r as usize].down)?;
                }
            }
            (Endpoints::Tcp { sender, .. }, PacketKind::SynAck | PacketKind::TcpAck) => {
                sender.on_ack(&pkt, &mut em);
                if let Some(r) = flow.relay_out {
                    self.pump(r);
                    self.after_endpoint(self.relays[r as usize].up)?;
                }
            }
            (Endpoints::Udp { sink }, PacketKind::Udp) => {
                sink.packets += 1;
                sink.bytes += pkt.len as u64;
                flow.delivered += pkt.len as u64;
            }
            _ => {
                return Err(Error::Simulation(format!(
                    "flow {} received a {:?} packet it cannot handle",
                    f.0, pkt.kind
                )))
            }
        }
        self.after_endpoint(f)
    }

    /// Log a drop or an ECN mark.
    fn record_drop(&mut self, l: LinkId, pkt: &Packet, index: u64, reason: DropReason) {
        let port = &mut self.links[l.idx()].port;
        if reason.is_mark() {
            port.marks_total += 1;
            port.marks_since_sample += 1;
        } else {
            self.dropped_packets += 1;
            port.drops_total += 1;
            port.drops_since_sample += 1;
        }
        let d = &mut self.drops;
        d.time_ns.push(self.now.ns());
        d.link.push(l.0);
        d.flow.push(pkt.flow.0);
        d.index.push(index);
        d.reason.push(reason as u8);
        d.data
            .push(matches!(pkt.kind, PacketKind::TcpData | PacketKind::Udp));
        d.size.push(pkt.size);
    }

    // ----- measurement ------------------------------------------------------

    fn sample(&mut self) {
        let now = self.now;
        let interval = self.sample_interval;
        let secs = interval.secs_f64();
        for &l in &self.monitored {
            let link = &mut self.links[l.idx()];
            let port = &mut link.port;
            // Serialization running past this sample belongs to the next.
            let carry = port.busy_until.saturating_sub(now).ns().min(port.busy_ns);
            let ts = &mut self.timeseries;
            ts.time_ns.push(now.ns());
            ts.link.push(l.0);
            ts.utilization
                .push((port.busy_ns - carry) as f64 / interval.ns() as f64);
            ts.throughput_bps.push(port.tx_bytes as f64 * 8.0 / secs);
            ts.queue_packets.push(port.queue.len() as u32);
            ts.queue_bytes.push(port.bytes);
            ts.drops.push(port.drops_since_sample);
            ts.arrivals.push(port.arrivals - port.arrivals_at_sample);
            ts.marks.push(port.marks_since_sample);
            port.arrivals_at_sample = port.arrivals;
            port.marks_since_sample = 0;
            let probe = port
                .aqm
                .map(|a| self.aqms[a as usize].aqm.probe())
                .unwrap_or_default();
            ts.aqm_avg.push(probe.avg);
            ts.aqm_prob.push(probe.prob);
            ts.aqm_vq_bytes.push(probe.vq_bytes);
            ts.aqm_vcap_bps.push(probe.vcap_bps);
            ts.aqm_price.push(probe.price);
            ts.aqm_max_p.push(probe.max_p);
            ts.aqm_qdelay.push(probe.qdelay);
            ts.aqm_min_th.push(probe.min_th);
            ts.aqm_max_th.push(probe.max_th);
            ts.aqm_pd_avg.push(probe.pd_avg);
            let vq = port.queue.parallel_mut().map(|p| p.take_probe(now));
            let col = |f: &dyn Fn(&crate::queue::VqProbe) -> f64| vq.as_ref().map_or(f64::NAN, f);
            ts.aqm_vq1_packets.push(col(&|v| v.q_packets[0] as f64));
            ts.aqm_vq2_packets.push(col(&|v| v.q_packets[1] as f64));
            ts.aqm_vq1_bytes.push(col(&|v| v.q_bytes[0] as f64));
            ts.aqm_vq2_bytes.push(col(&|v| v.q_bytes[1] as f64));
            ts.aqm_vq1_rate_bps.push(col(&|v| v.rate_bps[0]));
            ts.aqm_vq2_rate_bps.push(col(&|v| v.rate_bps[1]));
            ts.aqm_vq1_arrived_bytes
                .push(col(&|v| v.arrived_bytes[0] as f64));
            ts.aqm_vq2_arrived_bytes
                .push(col(&|v| v.arrived_bytes[1] as f64));
            ts.aqm_vq1_delay_s.push(col(&|v| v.delay_mean_s[0]));
            ts.aqm_vq2_delay_s.push(col(&|v| v.delay_mean_s[1]));
            port.busy_ns = carry;
            port.tx_bytes = 0;
            port.drops_since_sample = 0;
        }
        for &f in &self.trace_cwnd {
            // Flows made as traffic arrives (short, web, web_mice) may not
            // exist yet.
            let Some(flow) = self.flows.get(f.idx()) else {
                continue;
            };
            if let Endpoints::Tcp { sender, .. } = &flow.ends {
                self.cwnd.time_ns.push(now.ns());
                self.cwnd.flow.push(f.0);
                self.cwnd.cwnd_bytes.push(sender.win.cwnd);
                self.cwnd.ssthresh_bytes.push(sender.win.ssthresh);
                self.cwnd.delivered_bytes.push(flow.delivered);
            }
        }
        if now >= self.warmup && !self.warmup_snapshot_taken {
            self.warmup_snapshot_taken = true;
            for flow in &mut self.flows {
                flow.delivered_at_warmup = Some(flow.delivered);
            }
        }
        let next = now + interval;
        if next <= self.end {
            self.queue.schedule(next, Event::Sample);
        }
    }

    /// Packet accounting for the conservation invariant.
    pub fn packet_counts(&self) -> PacketCounts {
        PacketCounts {
            created: self.next_uid,
            delivered: self.delivered_packets,
            dropped: self.dropped_packets,
            in_flight: self.links.iter().map(|l| l.in_flight() as u64).sum(),
        }
    }

    /// Per-flow figures over the measurement window.
    pub fn flow_summaries(&self) -> Vec<FlowSummary> {
        self.flows.iter().map(|f| self.flow_summary(f)).collect()
    }

    fn flow_summary(&self, f: &Flow) -> FlowSummary {
        let begin = f.start.max(self.warmup);
        let mut end = self.now.min(f.stop.unwrap_or(SimTime::MAX));
        if let Some(c) = f.completed {
            end = end.min(c);
        }
        let base = if f.start >= self.warmup {
            0
        } else {
            f.delivered_at_warmup.unwrap_or(0)
        };
        let bytes = f.delivered - base.min(f.delivered);
        let span = end.saturating_sub(begin).secs_f64();
        let goodput_bps = if span > 0.0 {
            bytes as f64 * 8.0 / span
        } else {
            0.0
        };
        let mut s = FlowSummary {
            flow: f.id.0,
            kind: f.kind,
            pair: f.pair,
            start_s: f.start.secs_f64(),
            completion_s: f.completed.map(|c| c.secs_f64()).unwrap_or(f64::NAN),
            bytes_delivered: f.delivered,
            bytes_in_window: bytes,
            goodput_bps,
            ..FlowSummary::default()
        };
        if let Endpoints::Tcp { sender, .. } = &f.ends {
            let st = &sender.stats;
            s.segments_sent = st.segments_sent;
            s.retransmits = st.retransmits;
            s.fast_retransmits = st.fast_retransmits;
            s.timeouts = st.timeouts;
            s.ecn_reductions = st.ecn_reductions;
            s.rtt_samples = st.rtt_samples;
            if st.rtt_samples > 0 {
                s.rtt_min_s = st.rtt_min_ns as f64 * 1e-9;
                s.rtt_mean_s = st.rtt_sum_ns / st.rtt_samples as f64 * 1e-9;
                s.rtt_max_s = st.rtt_max_ns as f64 * 1e-9;
            }
            s.cwnd_bytes = sender.win.cwnd;
        }
        s
    }

    /// Run-level figures over the measurement window (samples after
    /// `warmup`), for the bottleneck link.
    pub fn summary(&self) -> Vec<(&'static str, f64)> {
        let ts = &self.timeseries;
        let b = self.bottleneck.0;
        let warm = self.warmup.ns();
        let rows =
            || (0..ts.time_ns.len()).filter(move |&i| ts.link[i] == b && ts.time_ns[i] > warm);
        let (u_mean, u_std) = mean_std(rows().map(|i| ts.utilization[i]));
        let (t_mean, t_std) = mean_std(rows().map(|i| ts.throughput_bps[i]));
        let (q_mean, q_std) = mean_std(rows().map(|i| ts.queue_packets[i] as f64));
        let (qb_mean, _) = mean_std(rows().map(|i| ts.queue_bytes[i] as f64));
        let flows = self.flow_summaries();
        let window = self.now.saturating_sub(self.warmup).secs_f64();
        // Fairness among the long-lived flows (bulk, else all but short).
        let long: Vec<f64> = flows
            .iter()
            .filter(|f| f.kind == "bulk")
            .map(|f| f.goodput_bps)
            .collect();
        let goodputs: Vec<f64> = if long.is_empty() {
            flows
                .iter()
                .filter(|f| f.kind != "short")
                .map(|f| f.goodput_bps)
                .collect()
        } else {
            long
        };
        let short: Vec<&FlowSummary> = flows.iter().filter(|f| f.kind == "short").collect();
        let web = self.flows.iter().filter(|f| f.kind == "web");
        let web_births = web.clone().filter(|f| f.start >= self.warmup).count();
        let web_deaths = web
            .filter(|f| f.completed.is_some_and(|c| c >= self.warmup))
            .count();
        let short_done: Vec<f64> = short
            .iter()
            .filter(|f| f.completion_s.is_finite())
            .map(|f| f.completion_s - f.start_s)
            .collect();
        let d = &self.drops;
        let after = |i: &usize| d.time_ns[*i] >= warm;
        let is_mark = |i: &usize| DropReason::ALL[d.reason[*i] as usize].is_mark();
        let n = d.time_ns.len();
        let dropped_after_warmup = (0..n).filter(after).filter(|i| !is_mark(i)).count();
        let marks_after_warmup = (0..n).filter(after).filter(is_mark).count();
        let bottleneck_drops = (0..n)
            .filter(after)
            .filter(|i| !is_mark(i) && d.link[*i] == b)
            .count();
        let by_reason = |r: DropReason| {
            (0..n)
                .filter(after)
                .filter(|&i| d.reason[i] == r as u8)
                .count() as f64
        };
        let counts = self.packet_counts();
        let bl = &self.links[self.bottleneck.idx()];
        vec![
            ("duration_s", self.now.secs_f64()),
            ("warmup_s", self.warmup.secs_f64()),
            ("seed", self.seed as f64),
            ("utilization_mean", u_mean),
            ("utilization_std", u_std),
            ("throughput_mean_bps", t_mean),
            ("throughput_std_bps", t_std),
            ("queue_mean_packets", q_mean),
            ("queue_std_packets", q_std),
            ("queue_mean_bytes", qb_mean),
            ("drops_total", dropped_after_warmup as f64),
            ("drops_bottleneck", bottleneck_drops as f64),
            ("drops_overflow", by_reason(DropReason::Overflow)),
            ("drops_early", by_reason(DropReason::EarlyDrop)),
            ("drops_forced", by_reason(DropReason::ForcedDrop)),
            ("drops_erasure", by_reason(DropReason::Erasure)),
            ("marks_total", marks_after_warmup as f64),
            (
                "goodput_total_bps",
                flows.iter().map(|f| f.bytes_in_window as f64).sum::<f64>() * 8.0 / window,
            ),
            ("jain_index", jain_index(&goodputs)),
            ("flows", flows.len() as f64),
            ("short_flows", short.len() as f64),
            ("short_flows_completed", short_done.len() as f64),
            (
                "short_flow_time_mean_s",
                mean_std(short_done.iter().copied()).0,
            ),
            ("web_connections_opened", web_births as f64),
            ("web_pages_completed", web_deaths as f64),
            ("web_births_per_s", web_births as f64 / window),
            (
                "retransmits_total",
                flows.iter().map(|f| f.retransmits as f64).sum(),
            ),
            (
                "timeouts_total",
                flows.iter().map(|f| f.timeouts as f64).sum(),
            ),
            ("bottleneck_packets", bl.port.tx_packets_total as f64),
            ("bottleneck_rate_bps", bl.rate.bps() as f64),
            ("packets_created", counts.created as f64),
            ("events", self.events_processed() as f64),
        ]
    }
}

/// Figures for one flow.
#[derive(Debug, Clone, Default)]
pub struct FlowSummary {
    pub flow: u32,
    pub kind: &'static str,
    pub pair: u32,
    pub start_s: f64,
    pub completion_s: f64,
    pub bytes_delivered: u64,
    /// Bytes delivered after the warm-up.
    pub bytes_in_window: u64,
    pub goodput_bps: f64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub ecn_reductions: u64,
    pub rtt_samples: u64,
    pub rtt_min_s: f64,
    pub rtt_mean_s: f64,
    pub rtt_max_s: f64,
    pub cwnd_bytes: f64,
}
