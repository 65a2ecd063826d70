//! From a validated scenario to a runnable simulation: the topology's nodes
//! and links, the AQMs on their ports, the PEPs, and each traffic entry's
//! applications and flows.

use super::budget::guard::Guard;
use super::budget::Host;
use super::network::Losses;
use super::{Endpoints, Flow, Simulation, Taps};
use crate::aqm::AqmParams;
use crate::capture::Captures;
use crate::config::{AqmMode, Backbone, Scenario, StartSpec, Traffic, TrafficKind};
use crate::engine::{AppTimer, Event, EventQueue};
use crate::error::{ConfigError, Result};
use crate::gateway::Held;
use crate::gateway::{self, Pep, Relay};
use crate::ids::{AppId, AqmId, FlowId, FlowKind, LinkId, NodeId, RelayId};
use crate::net::{Framing, PlacedAqm, Routes};
use crate::probe::{
    CongestionLog, CwndTrace, DropLog, LinkState, SeqTracer, TimeSeries, TrafficTrace,
};
use crate::queue::{Buffer, DualPi2, Fq, FqParams, ParallelQueues};
use crate::rng::Rng;
use crate::time::{Rate, SimTime};
use crate::topology::{self, Built, Topology};
use crate::traffic::{self, App};
use crate::transport::atsp::{AtspConfig, AtspReceiver, AtspSender};
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::udp::{CbrSource, UdpSink};

/// The nodes in order of first appearance, each once (in linear time: a
/// dumbbell of 100,000 pairs has 100,000 senders).
fn distinct(nodes: impl Iterator<Item = NodeId>) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::new();
    let mut seen: Vec<bool> = Vec::new();
    for n in nodes {
        if seen.len() <= n.idx() {
            seen.resize(n.idx() + 1, false);
        }
        if !std::mem::replace(&mut seen[n.idx()], true) {
            out.push(n);
        }
    }
    out
}

impl Simulation {
    /// Build the network and traffic of a validated scenario, for a Rust
    /// program that reads the results in place.
    pub fn new(scenario: &Scenario) -> Result<Simulation> {
        Simulation::new_in(scenario, Host::Rust)
    }

    /// Build the network and traffic of a validated scenario, in a process
    /// of kind `host` (which the memory estimate and its check count).
    pub fn new_in(scenario: &Scenario, host: Host) -> Result<Simulation> {
        // Before anything grows: a scenario too large is refused here, not
        // by an allocation failure during the run.
        let estimate = Simulation::check_memory(scenario, host)?;
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

        let horizon = built.links.iter().map(|l| l.max_delay()).max();
        let mut sim = Simulation {
            now: SimTime::ZERO,
            end: scenario.duration,
            warmup: scenario.warmup,
            sample_interval: scenario.sample_interval,
            queue: EventQueue::new(horizon.unwrap_or(SimTime::ZERO)),
            node_names: built.node_names,
            links: built.links,
            routes,
            flows: Vec::new(),
            apps: Vec::new(),
            app_entry: Vec::new(),
            out: Vec::with_capacity(64),
            next_uid: 0,
            delivered_packets: 0,
            losses: Losses::new(scenario.drop_log_rows, scenario.warmup, bottleneck),
            timeseries: TimeSeries::default(),
            drops: DropLog::default(),
            cwnd: CwndTrace::default(),
            congestion: CongestionLog::default(),
            trace_cwnd: scenario.trace_cwnd.iter().map(|&f| FlowId(f)).collect(),
            end_to_end: Vec::new(),
            traffic: TrafficTrace::default(),
            link_state: LinkState::default(),
            scheduled: Vec::new(),
            route_changes: built.route_changes.clone(),
            entry_bytes: if scenario.trace_traffic {
                vec![0; scenario.traffic.len()]
            } else {
                Vec::new()
            },
            bottleneck,
            monitored: Vec::new(),
            pairs: built.pairs.clone(),
            servers: distinct(built.pairs.iter().map(|p| p.0)),
            clients: distinct(built.pairs.iter().map(|p| p.1)),
            warmup_pending: true,
            prefetch_min_links: super::PREFETCH_MIN_LINKS,
            aqms: Vec::new(),
            peps: Vec::new(),
            relays: Vec::new(),
            seed,
            taps: Taps {
                captures: Captures::none(),
                seq: SeqTracer::new(
                    &scenario.trace_seq,
                    scenario.emulation.as_ref().is_some_and(|e| e.trace_seq),
                ),
            },
            guard: Guard::new(estimate, scenario.max_memory, host),
            outside: Default::default(),
        };
        sim.place_aqms(scenario)?;
        sim.place_peps(scenario)?;
        sim.place_real_hosts(scenario)?;
        let backpressure = (0..sim.links.len())
            .filter(|&i| sim.links[i].port.backpressure())
            .map(|i| LinkId(i as u32))
            .collect();
        sim.guard.watch(backpressure);
        sim.monitored = (0..sim.links.len())
            .filter(|&i| sim.links[i].monitored)
            .map(|i| LinkId(i as u32))
            .collect();
        for &l in &sim.monitored {
            sim.links[l.idx()].port.measure_sojourns(sim.warmup);
        }
        let mut start_rng = Rng::stream(seed, "start", 0);
        for (entry, t) in scenario.traffic.iter().enumerate() {
            sim.add_traffic(entry, t, &mut start_rng);
        }
        if let Some(spec) = &scenario.capture {
            sim.start_captures(spec)?;
        }
        if sim.sample_interval <= sim.end {
            sim.queue.schedule(sim.sample_interval, Event::Sample);
        }
        sim.start_schedules();
        for i in 0..sim.route_changes.len() {
            let at = sim.route_changes[i].at;
            if at <= sim.end {
                sim.queue.schedule(at, Event::RouteChange(i as u32));
            }
        }
        Ok(sim)
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

    /// Put each `[[aqm]]` on the port it acts at, watching the one it
    /// monitors.
    fn place_aqms(&mut self, scenario: &Scenario) -> Result<()> {
        for (i, a) in scenario.aqm.iter().enumerate() {
            let at = self.link_named(&a.at, &format!("aqm[{i}].at"))?;
            let monitor = self.link_named(&a.monitor, &format!("aqm[{i}].monitor"))?;
            let id = AqmId(self.aqms.len() as u32);
            if self.links[at.idx()].port.aqm().is_some() {
                return Err(ConfigError::new(
                    format!("aqm[{i}].at"),
                    format!("link {:?} already has an AQM", a.at),
                )
                .into());
            }
            let aqm = a.params.build(
                self.links[monitor.idx()].rate().bps(),
                self.links[at.idx()].port.limit(),
            );
            if matches!(a.params, AqmParams::RedTail(_)) && self.links[at.idx()].port.backpressure()
            {
                return Err(ConfigError::new(
                    format!("aqm[{i}].at"),
                    format!(
                        "link {:?} has backpressure, which {} does not support",
                        a.at, "red_tail"
                    ),
                )
                .into());
            }
            let link = &mut self.links[at.idx()];
            match &a.params {
                AqmParams::RedTail(p) => {
                    // The port's buffer becomes two virtual queues.
                    let split = p.split(link.rate().bps(), &format!("aqm[{i}]"))?;
                    let vqs = ParallelQueues::new(split, link.rate());
                    link.port.set_buffer(Buffer::parallel_queues(vqs));
                }
                AqmParams::Fq(p) => {
                    let p = FqParams {
                        ecn: a.mode == AqmMode::Mark,
                        ..p.clone()
                    };
                    // The hash's perturbation and the random draws, from
                    // the run's seed.
                    let mut rng = Rng::stream(self.seed, "fq_codel", i as u64);
                    let perturb = rng.uniform_u64(0, u64::MAX);
                    let draws = rng.uniform_u64(0, u64::MAX);
                    link.port.set_buffer(Buffer::fq(Fq::new(p, perturb, draws)));
                }
                AqmParams::DualPi2(p) => {
                    link.port.set_buffer(Buffer::dualpi2(DualPi2::new(p)));
                }
                _ => {}
            }
            if let Some(iv) = aqm.timer_interval() {
                self.queue.schedule(iv, Event::AqmTimer(id));
            }
            self.links[at.idx()].port.set_aqm(id);
            if aqm.needs_departures() {
                self.links[monitor.idx()].port.add_watcher(id);
            }
            for l in [at, monitor] {
                if !self.monitored.contains(&l) {
                    self.monitored.push(l);
                    self.links[l.idx()].monitored = true;
                }
            }
            let rng = Rng::stream(self.seed, "aqm", i as u64);
            let ecn = a.mode == AqmMode::Mark;
            self.aqms.push(PlacedAqm::new(aqm, at, monitor, ecn, rng));
        }
        Ok(())
    }

    fn place_peps(&mut self, scenario: &Scenario) -> Result<()> {
        for (i, p) in scenario.pep.iter().enumerate() {
            let node = self
                .node_names
                .iter()
                .position(|n| *n == p.at)
                .ok_or_else(|| {
                    ConfigError::new(format!("pep[{i}].at"), format!("no node named {:?}", p.at))
                })?;
            self.peps.push(Pep {
                node: NodeId(node as u32),
                buffer: p.buffer,
                tcp: p.tcp.clone(),
            });
            if !p.backbone.is_plain() {
                self.attach_backbone(i, NodeId(node as u32), &p.backbone)?;
            }
        }
        Ok(())
    }

    /// Order, pace and framing of PEP `i`'s backbone, on the one link out
    /// of its node that holds the PEP's packets back (`backpressure`).
    fn attach_backbone(&mut self, i: usize, node: NodeId, b: &Backbone) -> Result<()> {
        let mut out = self
            .links
            .iter_mut()
            .filter(|l| l.from == node && l.port.backpressure());
        let (Some(link), None) = (out.next(), out.next()) else {
            return Err(ConfigError::new(
                format!("pep[{i}]"),
                "scheduling, pace_rate and framing need exactly one link with \
                 backpressure = true leaving the PEP's node",
            )
            .into());
        };
        if b.pace_rate.is_some() && link.port.buffer().is_scheduler() {
            return Err(ConfigError::new(
                format!("pep[{i}].pace_rate"),
                "a paced backbone needs a FIFO or AQM buffer at its link: a queue \
                 discipline there (flow queuing, DualPI2) takes packets unpaced",
            )
            .into());
        }
        link.port
            .set_upstream(Box::new(Held::new(b.order, b.pace_rate.map(Rate))));
        link.set_framing(Framing::new(
            b.packet_overhead,
            b.frame_size,
            b.frame_overhead,
        ));
        Ok(())
    }

    /// The applications (and, for bulk and CBR, the flows) of traffic
    /// entry number `entry`.
    fn add_traffic(&mut self, entry: usize, t: &Traffic, start_rng: &mut Rng) {
        let entry = entry as u32;
        match &t.kind {
            TrafficKind::Web { .. } => self.add_web(entry, t),
            TrafficKind::WebMice { .. } => self.add_web_mice(entry, t),
            TrafficKind::Short {
                size,
                arrival_rate,
                tcp,
            } => {
                let start = match t.start {
                    StartSpec::At(s) => s,
                    StartSpec::Uniform(lo, _) => lo,
                };
                let app = App::Arrivals {
                    pairs: t.pairs.clone(),
                    size: *size,
                    mean_gap: 1.0 / arrival_rate,
                    tcp: tcp.clone(),
                    stop: t.stop,
                    rng: Rng::stream(self.seed, "arrivals", entry as u64),
                };
                let app = self.add_app(app, entry);
                self.queue.schedule(start, Event::App(app, AppTimer::Start));
            }
            TrafficKind::Bulk { size, tcp } => {
                for &pair in &t.pairs {
                    let start = self.start_time(t.start, start_rng);
                    let ends = self.pairs[pair as usize];
                    let kind = (FlowKind::Bulk, entry);
                    self.add_tcp_flow(kind, pair, ends, tcp, *size, start, t.stop);
                }
            }
            TrafficKind::Atsp(cfg) => {
                for &pair in &t.pairs {
                    let start = self.start_time(t.start, start_rng);
                    self.add_atsp_flow(pair, entry, cfg, start, t.stop);
                }
            }
            TrafficKind::Cbr { rate, packet_size } => {
                for &pair in &t.pairs {
                    let start = self.start_time(t.start, start_rng);
                    let (src, dst) = self.pairs[pair as usize];
                    let id = FlowId(self.flows.len() as u32);
                    let source = CbrSource::new(id, src, dst, *rate, *packet_size);
                    let app = App::Cbr {
                        source,
                        stop: t.stop,
                        active: false,
                    };
                    let sink = Endpoints::Udp {
                        sink: UdpSink::default(),
                    };
                    let mut flow = Flow::new(id, FlowKind::Cbr, pair, (src, dst), sink);
                    flow.entry = entry;
                    self.add_flow(flow, app, start, t.stop);
                }
            }
        }
    }

    /// Web traffic: `connections` slots opened `ramp_step` at a time every
    /// `ramp_interval`, each fetching pages from random servers.
    fn add_web(&mut self, entry: u32, t: &Traffic) {
        let TrafficKind::Web {
            connections,
            ramp_step,
            ramp_interval,
            page_min,
            page_max,
            think_time,
            tcp,
        } = &t.kind
        else {
            unreachable!("add_web on another kind")
        };
        for slot in 0..*connections {
            let rng = Rng::stream(self.seed, "web", ((entry as u64) << 32) | slot as u64);
            let app = App::WebSlot {
                page_min: *page_min,
                page_max: *page_max,
                think: *think_time,
                tcp: tcp.clone(),
                rng,
            };
            let app = self.add_app(app, entry);
            let at = SimTime(ramp_interval.ns() * (slot / ramp_step) as u64);
            if at <= self.end {
                self.queue.schedule(at, Event::App(app, AppTimer::Start));
            }
        }
    }

    /// Web mice: `sessions` users over the entry's pairs, each fetching
    /// Pareto-sized files with exponential think times.
    fn add_web_mice(&mut self, entry: u32, t: &Traffic) {
        let TrafficKind::WebMice {
            sessions,
            scale,
            shape,
            max,
            think_mean,
            tcp,
        } = &t.kind
        else {
            unreachable!("add_web_mice on another kind")
        };
        for j in 0..*sessions {
            let pair = t.pairs[j as usize % t.pairs.len()];
            let rng = Rng::stream(self.seed, "web-mice", ((entry as u64) << 32) | j as u64);
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
            let app = self.add_app(App::WebMouse(Box::new(m)), entry);
            if start <= self.end {
                self.queue.schedule(start, Event::App(app, AppTimer::Start));
            }
        }
    }

    /// A flow's start: fixed, or drawn from the entry's start window.
    fn start_time(&self, spec: StartSpec, rng: &mut Rng) -> SimTime {
        match spec {
            StartSpec::At(s) => s,
            StartSpec::Uniform(lo, hi) => SimTime(rng.uniform_u64(lo.ns(), hi.ns())),
        }
    }

    /// Add an application of traffic entry `entry`.
    fn add_app(&mut self, app: App, entry: u32) -> AppId {
        self.apps.push(app);
        self.app_entry.push(entry);
        AppId(self.apps.len() as u32 - 1)
    }

    /// A TCP transfer of `size` bytes (or without end) from `src` to `dst`,
    /// started by a bulk application at `start`. Where its path crosses
    /// PEPs, it becomes a chain of connections joined by relays; the
    /// returned flow is the first, which carries the end-to-end figures.
    /// `kind` is the flow's kind and the traffic entry it belongs to.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add_tcp_flow(
        &mut self,
        (kind, entry): (FlowKind, u32),
        pair: u32,
        (src, dst): (NodeId, NodeId),
        tcp: &TcpConfig,
        size: Option<u64>,
        start: SimTime,
        stop: Option<SimTime>,
    ) -> FlowId {
        let segments = gateway::chain(&self.peps, &self.routes, &self.links, (src, dst), tcp);
        let id = FlowId(self.flows.len() as u32);
        let mut prev: Option<FlowId> = None;
        let n = segments.len();
        for (seg, s) in segments.into_iter().enumerate() {
            let this = FlowId(self.flows.len() as u32);
            let last_hop = seg == n - 1;
            let mut receiver = TcpReceiver::new(this, s.to, s.from, &s.tcp);
            receiver.auto_read = last_hop;
            let mut sender = Box::new(TcpSender::new(this, s.from, s.to, s.tcp));
            // The congestion control's own stream (BBR's gain-cycle start).
            sender.seed_cc(Rng::stream(self.seed, "tcp-cc", this.0 as u64));
            let ends = Endpoints::Tcp {
                sender,
                receiver: Box::new(receiver),
            };
            if seg == 0 {
                let app = App::Bulk {
                    flow: this,
                    size,
                    stop,
                };
                let mut flow = Flow::new(this, kind, pair, (s.from, s.to), ends);
                flow.entry = entry;
                self.add_flow(flow, app, start, stop);
            } else {
                let mut flow = Flow::new(this, FlowKind::Relay, pair, (s.from, s.to), ends);
                flow.start = start;
                self.push_flow(flow);
            }
            let f = &mut self.flows[this.idx()];
            f.entry = entry;
            f.origin = id;
            f.last_hop = last_hop;
            if let (Some(up), Some(buffer)) = (prev, s.relay_buffer) {
                let r = RelayId(self.relays.len() as u32);
                self.relays.push(Relay::new(up, this, buffer));
                self.flows[up.idx()].relay_in = Some(r);
                self.flows[this.idx()].relay_out = Some(r);
            }
            prev = Some(this);
        }
        id
    }

    /// An unlimited ATSP transfer on host pair `pair` (end to end: a PEP
    /// splits TCP connections only).
    fn add_atsp_flow(
        &mut self,
        pair: u32,
        entry: u32,
        cfg: &AtspConfig,
        start: SimTime,
        stop: Option<SimTime>,
    ) {
        let (src, dst) = self.pairs[pair as usize];
        let id = FlowId(self.flows.len() as u32);
        let ends = Endpoints::Atsp {
            sender: Box::new(AtspSender::new(id, src, dst, cfg.clone())),
            receiver: Box::new(AtspReceiver::new(id, dst, src, cfg)),
        };
        let app = App::Bulk {
            flow: id,
            size: None,
            stop,
        };
        let mut flow = Flow::new(id, FlowKind::Atsp, pair, (src, dst), ends);
        flow.entry = entry;
        self.add_flow(flow, app, start, stop);
    }

    /// Add `flow` to the flows, with its first hop from each end as the
    /// routing table holds it (every flow, whether the scenario's or one
    /// an application opens during the run).
    fn push_flow(&mut self, mut flow: Flow) {
        let routes = &self.routes;
        flow.hops = [
            routes.next_hop(flow.src, flow.dst),
            routes.next_hop(flow.dst, flow.src),
        ];
        self.flows.push(flow);
    }

    /// Add `flow` driven by its own application `app`, which starts at
    /// `start` and stops at `stop`.
    fn add_flow(&mut self, mut flow: Flow, app: App, start: SimTime, stop: Option<SimTime>) {
        let app_id = self.add_app(app, flow.entry);
        flow.app = Some(app_id);
        flow.start = start;
        flow.stop = stop;
        self.taps.seq.flow_added(self.end_to_end.len(), flow.id);
        self.end_to_end.push(flow.id);
        self.push_flow(flow);
        self.queue
            .schedule(start, Event::App(app_id, AppTimer::Start));
        if let Some(stop) = stop {
            self.queue
                .schedule(stop, Event::App(app_id, AppTimer::Stop));
        }
    }
}
